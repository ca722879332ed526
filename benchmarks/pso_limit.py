"""The limits beside MD-PSO in ``benchmarks/pso.py evaluate``: the exact nearest
counterfactual under the paper's MAD-scaled l1 (``mace-mad``) and DiCE (``dice-random``,
``dice-genetic``).

**mace-mad.** MACE's l1 is the mean over all features of :math:`|\\Delta_l| / R_l` (``R_l`` the
range the FeatureSpace scales by); the paper's proximity (eq. 8) is the mean over the
continuous features of :math:`|\\Delta_l| / \\mathrm{MAD}_l`. Giving every continuous feature
the range :math:`R'_l = K\\,\\mathrm{MAD}_l` (from its training minimum; :math:`K = \\max_l
R_l / \\mathrm{MAD}_l`, so :math:`R'_l \\ge R_l` and the plausibility box contains the data's)
makes MACE's l1 equal to the paper's proximity times :math:`|C| / (K |T|)`. The random forest
is the *same*: a copy whose split thresholds are re-expressed on the new scale
(:func:`mad_pipeline`; its probabilities are checked equal to the original's on the training
rows and the queries). A forest is constant beyond its outermost thresholds, which lie within
the data, so the wider box never helps the optimum. Categorical features (Arrhythmia only)
keep MACE's 0/1 per change, i.e. one category change costs as much as K MADs of one
continuous feature, and are not part of eq. 8. Two-valued numeric features (COMPAS's 0/1
flags) are treated as continuous, as the metric does. ``lower_bound`` (the MIP's dual bound,
converted to eq. 8) is the limit when the time limit stops the solver before the proof.
"""
from __future__ import annotations

import copy

import numpy as np
import pandas as pd
from sklearn.pipeline import make_pipeline

import groupcf as gcf


def _linear(space, cols_of_feature=None):
    """Per encoded column ``(a, b)``: raw value = ``a + b z`` (continuous: low, range;
    binary: its two categories; one-hot columns: identity)."""
    a, b = np.zeros(space.n_features_out_), np.ones(space.n_features_out_)
    for f in space:
        j = f.columns[0]
        if f.encoding == "continuous":
            a[j], b[j] = f.low, f.high - f.low
        elif f.encoding == "binary":
            c0, c1 = (float(c) for c in f.categories)
            a[j], b[j] = c0, c1 - c0
    return a, b


def _threshold(zo: np.ndarray, zn: np.ndarray, t: float, mapped: float) -> float:
    """The split ``t`` on the old float32 codes ``zo`` (sorted, distinct) re-expressed on the
    new codes ``zn`` of the same values: ``mapped`` unless it would send a data value the
    other way (trees compare float32 inputs; sklearn may place a threshold on a value's
    float32 code), then the midpoint of the new codes around the split."""
    k = int(np.searchsorted(zo, t, side="right"))          # values going left
    lo = float(zn[k - 1]) if k > 0 else -np.inf
    hi = float(zn[k]) if k < len(zn) else np.inf
    if lo <= mapped < hi:
        return float(mapped)
    if np.isfinite(lo) and np.isfinite(hi):
        return (lo + hi) / 2
    return lo if np.isfinite(lo) else hi - abs(hi) * 1e-6 - 1e-9


def mad_pipeline(case):
    """``(pipeline, K)``: the case's random forest behind a FeatureSpace whose continuous
    ranges are ``K`` x the metric's MAD (module docstring)."""
    space = case.pipe[0]
    rf = case.pipe[-1]
    cont = [f.name for f in space if f.name not in set(case.cat) and f.encoding in ("continuous", "binary")]
    s = case.mad[cont]
    R = pd.Series({f.name: (f.high - f.low) if f.encoding == "continuous"
                   else abs(float(f.categories[1]) - float(f.categories[0])) for f in space if f.name in cont})
    K = float((R / s).max())
    lows = {f.name: (f.low if f.encoding == "continuous" else float(min(f.categories))) for f in space if f.name in cont}
    top = case.X_tr.iloc[[0]].copy()
    for c in cont:
        top[c] = lows[c] + K * float(s[c])
    kinds = dict(space.kinds or {})
    kinds.update({c: "numeric" for c in cont})
    new_space = gcf.FeatureSpace(immutable=space.immutable, increase_only=space.increase_only, kinds=kinds,
                                 numeric="passthrough").fit(pd.concat([case.X_tr, top]))
    if new_space.n_features_out_ != space.n_features_out_:
        raise RuntimeError("the re-scaled space does not have the same columns")
    a0, b0 = _linear(space)
    a1, b1 = _linear(new_space)
    check = pd.concat([case.X_tr, case.X_te])
    Zo, Zn = space.transform(check).astype(np.float32), new_space.transform(check).astype(np.float32)
    codes = {}
    for j in range(Zo.shape[1]):
        _, first = np.unique(Zo[:, j], return_index=True)      # sorted distinct old codes
        codes[j] = (Zo[first, j], Zn[first, j])
    forest = copy.deepcopy(rf)
    for est in forest.estimators_:
        t = est.tree_
        node = np.flatnonzero(t.feature >= 0)
        t.threshold[node] = [_threshold(*codes[j], th, (a0[j] + b0[j] * th - a1[j]) / b1[j])
                             for j, th in zip(t.feature[node], t.threshold[node])]
    pipe = make_pipeline(new_space, forest)
    diff = np.abs(pipe.predict_proba(check) - case.pipe.predict_proba(check)).max()
    if diff > 1e-12:
        raise RuntimeError(f"the re-scaled forest differs from the original (max |dp| = {diff:g})")
    n_cont = len([c for c in case.X_tr.columns if c not in set(case.cat)])
    return pipe, K * len(space) / n_cont


def mace_runner(case, limit: float):
    if not case.model.startswith("rf"):
        raise ImportError("mace-mad: random forests only")
    pipe, to_eq8 = mad_pipeline(case)

    def run(x, i):
        e = gcf.explain(x, pipe, method="mace", distance="l1", time_limit=max(1.0, limit / 2), progress=False)
        run.proven = bool(e.is_optimal)
        run.lower_bound = None if e.lower_bound is None else float(e.lower_bound) * to_eq8
        cfs, run.note = off_band(case, x, e.counterfactuals)
        return cfs
    run.proven, run.lower_bound, run.note = None, None, ""
    return run


#: steps (in units of a feature's training range) tried to move a changed feature further
#: from the query when the original forest rejects the MIP's answer
BAND_STEPS = (1e-7, 1e-6, 1e-5, 1e-4)


def off_band(case, x: pd.Series, cfs: pd.DataFrame | None) -> tuple[pd.DataFrame | None, str]:
    """The MIP's counterfactuals as the *original* forest sees them: MACE's answer sits
    just past a split threshold of the re-scaled forest, and a value within float32
    rounding of a threshold can fall on the other side of the original's (trees compare
    float32 inputs; the two scalings round differently). A row the original rejects has
    each changed non-integer feature moved further from the query by the first of
    :data:`BAND_STEPS` x its training range that the original accepts (proximity grows by
    at most that much per feature); a row no step fixes is left as it is (the
    re-check then drops it). Returns the rows and a note of how many were moved."""
    if cfs is None or not len(cfs):
        return cfs, ""
    cols = list(case.X_tr.columns)
    cfs = cfs[cols].astype(float).reset_index(drop=True)
    ok = case.pipe.predict(cfs) == 1
    moved = 0
    R = (case.X_tr.max() - case.X_tr.min()).replace(0, 1.0)
    frac = case.X_tr.apply(lambda c: bool((c % 1 != 0).any()))
    for r in np.flatnonzero(~ok):
        d = cfs.iloc[r].to_numpy() - x[cols].to_numpy(float)
        free = (np.abs(d) > 1e-12) & frac.to_numpy() & ~np.isin(cols, case.imm)
        for step in BAND_STEPS:
            cand = cfs.iloc[[r]].copy()
            cand.iloc[0, free] = cfs.iloc[r].to_numpy()[free] + np.sign(d[free]) * step * R.to_numpy()[free]
            if case.pipe.predict(cand)[0] == 1:
                cfs.iloc[r] = cand.iloc[0]
                moved += 1
                break
    return cfs, (f"{moved} of {int((~ok).sum())} rejected by the original forest moved off the split band"
                 if (~ok).any() else "")


class _FloatModel:
    """The pipeline for DiCE: DiCE hands categorical columns over as strings."""

    def __init__(self, pipe, columns):
        self.pipe, self.columns = pipe, list(columns)

    def predict_proba(self, X):
        return self.pipe.predict_proba(X[self.columns].astype(float))

    def predict(self, X):
        return self.pipe.predict(X[self.columns].astype(float))


def dice_runner(case, kind: str, k: int):
    import dice_ml

    dice_cat = [c for c in case.X_tr.columns if c in case.cat or case.X_tr[c].nunique() <= 2]
    frame = case.X_tr.copy()
    for c in dice_cat:
        frame[c] = frame[c].astype(str)
    frame["_y"] = case.y_tr.to_numpy()
    cont = [c for c in case.X_tr.columns if c not in dice_cat]
    data = dice_ml.Data(dataframe=frame, continuous_features=cont, outcome_name="_y")
    model = dice_ml.Model(model=_FloatModel(case.pipe, case.X_tr.columns), backend="sklearn")
    dice = dice_ml.Dice(data, model, method=kind)
    vary = [c for c in case.X_tr.columns if c not in case.imm]

    def run(x, i):
        q = x.to_frame().T.copy()
        for c in dice_cat:
            q[c] = q[c].astype(str)
        rng = {c: [float(x[c]), float(max(case.X_tr[c].max(), x[c]))] for c in case.inc}
        kw = {"random_seed": i} if kind == "random" else {}
        np.random.seed(i)   # noqa: NPY002 - DiCE draws from numpy's global generator
        res = dice.generate_counterfactuals(q, total_CFs=k, desired_class="opposite", features_to_vary=vary,
                                            permitted_range=rng or None, verbose=False, **kw)
        cfs = res.cf_examples_list[0].final_cfs_df
        if cfs is None or not len(cfs):
            return None
        return cfs[list(case.X_tr.columns)].astype(float).reset_index(drop=True)
    return run


def runner(method: str, case, k: int, limit: float):
    if method == "mace-mad":
        return mace_runner(case, limit)
    if method in ("dice-random", "dice-genetic"):
        return dice_runner(case, method.split("-", 1)[1], k)
    raise SystemExit(f"unknown method {method!r}")
