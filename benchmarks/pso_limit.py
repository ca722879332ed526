r"""The limits beside MD-PSO in ``benchmarks/pso.py evaluate``: the exact nearest counterfactual
under the paper's MAD-scaled l1 (``mace-mad``) and DiCE (``dice-random``, ``dice-genetic``).

**mace-mad.** MACE's l1 is the mean over all features of :math:`|\Delta_l| / R_l` (``R_l``
the range the FeatureSpace scales by); the paper's proximity (eq. 8) is the mean over the
continuous features of :math:`|\Delta_l| / \mathrm{MAD}_l`. Per query, every continuous
feature gets the range :math:`R'_l = 2r\,\mathrm{MAD}_l` centred on the query (:math:`x_l
\pm r` MADs), which makes MACE's l1 equal to the paper's proximity times :math:`|C| / (2r
|T|)`. The radius is :math:`r = 1.01\,U |C|` with :math:`U` the proximity of a valid
counterfactual (the best of ``method="pso"``'s five on the same query, re-checked): a point
changing one feature by more than :math:`U|C|` MADs already has proximity above :math:`U`,
so the box holds the optimum and the limit is exact. (A box from the data's ranges,
:math:`R'_l = K\,\mathrm{MAD}_l` with :math:`K = \max_l R_l/\mathrm{MAD}_l`, as before
2026-11-26 afternoon, made :math:`K` up to 9e5 on LSVT and 700 on Hill-Valley: the optimum's
moves shrank to the solver's feasibility tolerance, the MIP reported objective and bound 0
as "optimal", and split levels 1e-7 of a range apart merged.) The random forest is the
*same*: its embedding (the float32 split tests as exact float64 ones,
:func:`groupcf.embeddings.embedding_for`) with every threshold re-expressed on the new scale
in float64, given to MACE as its own model (:func:`mad_model`; its probabilities are checked
equal to the original's on the training rows, the test rows and the query). (A scikit-learn
copy with re-expressed float32 thresholds, as before, cannot match the original: the new
scale's float32 codes merge distinct data values far from the box.) An MLP (``--models
mlp``): its ReLU embedding with the re-scaling folded into the first layer. Categorical
features (Arrhythmia only) keep MACE's 0/1 per change, i.e. one category change costs
:math:`2r` MADs, proximity above :math:`U`: the limit is the nearest counterfactual that
changes only continuous features (eq. 8 does not count categorical changes). Two-valued
numeric features (COMPAS's 0/1 flags) are treated as continuous, as the metric does.
``lower_bound`` (the MIP's dual bound, converted to eq. 8) is the limit when the time limit
stops the solver before the proof. MACE's answer is re-checked by the *original* forest
after :func:`align` (a value within one float32 step of a split can be coded on its other
side by the original's scaling).
"""
from __future__ import annotations

import copy

import numpy as np
import pandas as pd

import groupcf as gcf
from groupcf.embeddings import embedding_for
from groupcf.embeddings.trees import TreeEnsemble


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


def mad_model(case, x: pd.Series, radius: float):
    """``(forest, space, c)``: the case's random forest as a float64
    :class:`~groupcf.embeddings.trees.TreeEnsemble` behind a FeatureSpace whose continuous
    features span ``x +- radius`` MADs (range ``c = 2 radius`` MADs; module docstring)."""
    space = case.pipe[0]
    cont = [f.name for f in space if f.name not in set(case.cat) and f.encoding in ("continuous", "binary")]
    kinds = dict(space.kinds or {})
    kinds.update({c: "numeric" for c in cont})
    new_space = gcf.FeatureSpace(immutable=space.immutable, increase_only=space.increase_only, kinds=kinds,
                                 numeric="passthrough").fit(case.X_tr)
    for f in new_space:
        if f.name in cont:
            r = radius * float(case.mad[f.name])
            f.low, f.high = float(x[f.name]) - r, float(x[f.name]) + r
    if new_space.n_features_out_ != space.n_features_out_:
        raise RuntimeError("the re-scaled space does not have the same columns")
    a0, b0 = _linear(space)
    a1, b1 = _linear(new_space)
    emb = embedding_for(case.pipe[-1])      # trees: the float32 tests as exact float64 ones
    trees = emb.capabilities.leaf_cells
    if trees:
        split = emb.feature >= 0
        j = emb.feature[split]
        thr = emb.threshold.copy()
        thr[split] = (a0[j] + b0[j] * thr[split] - a1[j]) / b1[j]
        forest = TreeEnsemble(emb.n_inputs, emb.feature, thr, emb.left, emb.right, emb.value, emb.roots,
                              scale=emb.scale, base=emb.base, averaging=emb.averaging, name="re-scaled forest")
    else:                                   # an MLP: z_old = (a1 - a0 + b1 z_new) / b0 folded into layer 1
        mlp = copy.deepcopy(case.pipe[-1])
        W = mlp.coefs_[0]
        mlp.intercepts_[0] = mlp.intercepts_[0] + ((a1 - a0) / b0) @ W
        mlp.coefs_[0] = W * (b1 / b0)[:, None]
        forest = embedding_for(mlp)
    check = pd.concat([case.X_tr, case.X_te, x.to_frame().T])
    diff = np.abs(forest.proba(new_space.transform(check)) - case.pipe.predict_proba(check)[:, 1]).max()
    if diff > (1e-12 if trees else 1e-9):
        raise RuntimeError(f"the re-scaled forest differs from the original (max |dp| = {diff:g})")
    return forest, new_space, 2 * radius


#: the threshold MACE gets: the smallest float above 0.5 (the original rejects p = 0.5)
TIE = float(np.nextafter(0.5, 1.0))

#: the box's half-width is this times the PSO upper bound's total MAD change (> 1: slack)
BOX_SLACK = 1.01


def mace_runner(case, limit: float):
    if not case.model.startswith(("rf", "mlp")):
        raise ImportError("mace-mad: random forests and MLPs only")
    from pso_protocol import per_cf_proximity, valid_rows

    n_cont = len([c for c in case.X_tr.columns if c not in set(case.cat)])

    def run(x, i):
        pso = gcf.explain(x, case.pipe, method="pso", data=case.X_tr, n=5, random_state=i, progress=False)
        good = valid_rows(case, x, pso.counterfactuals)
        run.upper = float(per_cf_proximity(x, good, case.mad, case.cat).min())
        radius = BOX_SLACK * run.upper * n_cont
        forest, space, c = mad_model(case, x, radius)
        to_eq8 = c * len(case.pipe[0]) / n_cont
        # threshold just above 0.5: scikit-learn rejects a tie (p = 0.5), an embedding accepts it
        e = gcf.explain(x, forest, space=space, method="mace", distance="l1", time_limit=max(1.0, limit / 2),
                        threshold=TIE, progress=False)
        run.proven = bool(e.is_optimal)
        run.lower_bound = None if e.lower_bound is None else float(e.lower_bound) * to_eq8
        cfs, run.note = (align(case, forest, space, e.counterfactuals) if forest.capabilities.leaf_cells
                         else (e.counterfactuals, ""))
        return cfs
    run.proven, run.lower_bound, run.note, run.upper = None, None, "", None
    return run


def _diverging(old, forest, root: int, zo: np.ndarray, zn: np.ndarray) -> tuple[int, bool] | None:
    """The first node where the scikit-learn tree ``old`` on float32 codes ``zo`` and its
    re-scaled copy in ``forest`` (nodes from ``root`` on, in the same order) on ``zn`` part
    ways: ``(node, the copy goes right)``, or ``None``."""
    to, k = old.tree_, 0
    while to.feature[k] >= 0:
        j = to.feature[k]
        ro, rn = zo[j] > to.threshold[k], zn[j] > forest.threshold[root + k]
        if ro != rn:
            return k, bool(rn)
        k = to.children_right[k] if ro else to.children_left[k]
    return None


def align(case, forest, space, cfs: pd.DataFrame | None, passes: int = 5) -> tuple[pd.DataFrame | None, str]:
    """The MIP's counterfactuals moved onto the *original* forest's side of every split.

    MACE's answer (for the re-scaled float64 ``forest`` behind ``space``) sits just past
    a split; the original codes the raw value as a float32, and a value within float
    rounding of the split can land on its other side there. For each tree where the two
    reach different leaves, at the first node where they part, the value is set to the
    original's nearest float32 code on the re-scaled forest's side (a move of at most one
    float32 step of the original's scaling, ``6e-8`` of the feature's training range).
    Repeated until the trees agree (at most ``passes`` rounds). Returns the rows and a
    note of how many were moved."""
    if cfs is None or not len(cfs):
        return cfs, ""
    old_space = case.pipe[0]
    by_col = {int(f.columns[0]): f for f in old_space if f.encoding == "continuous"}
    cols = list(case.X_tr.columns)
    cfs = cfs[cols].astype(float).reset_index(drop=True)
    moved = 0
    for r in range(len(cfs)):
        row = cfs.iloc[[r]].copy()
        changed = False
        for _ in range(passes):
            zo = old_space.transform(row).astype(np.float32)[0]
            zn = space.transform(row)[0]
            fixes: dict[str, float] = {}
            for old, root in zip(case.pipe[-1].estimators_, forest.roots):
                hit = _diverging(old, forest, int(root), zo, zn)
                if hit is None:
                    continue
                k, right = hit
                f = by_col.get(int(old.tree_.feature[k]))
                if f is None:           # a one-hot or 0/1 column: coded alike in both spaces
                    continue
                t64 = old.tree_.threshold[k]
                t = np.float32(t64)
                if right:                                   # smallest code > t
                    c = t if float(t) > t64 else np.nextafter(t, np.float32(np.inf))
                else:                                       # largest code <= t
                    c = t if float(t) <= t64 else np.nextafter(t, np.float32(-np.inf))
                fixes[f.name] = f.low + (f.high - f.low) * float(c)
            if not fixes:
                break
            for name, v in fixes.items():
                row[name] = v
            changed = True
        if changed:
            cfs.iloc[r] = row.iloc[0]
            moved += 1
    return cfs, (f"{moved} of {len(cfs)} moved onto the original forest's side of a split" if moved else "")


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
