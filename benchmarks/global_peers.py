"""GLOBE-CE on groupcf's datasets and models, from a local checkout of its repository.

GLOBE-CE (github.com/danwley/GLOBE-CE, Ley et al. 2023) has no licence: nothing of it is
copied here. :func:`run_globece` imports its ``GLOBE_CE`` class from the checkout given by
``--globece PATH`` and feeds it what it expects: a one-hot numpy frame (``"feature = value"``
columns, numeric features raw), a dataset object with its attribute names, and a model
whose ``predict`` takes that frame (here: decoded to raw rows and passed to the real
pipeline). Its translations are turned into :mod:`global_scorer` specs (``map``/``shift``,
after its own rounding of categorical features), so the one scorer judges them.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd


class OneHot:
    """Raw frame <-> GLOBE-CE's one-hot frame (categories seen in training)."""

    def __init__(self, X_train: pd.DataFrame, numeric: list):
        self.numeric = list(numeric)
        self.tree, self.columns = {}, []
        self.cats = {}
        for f in X_train.columns:
            if f in self.numeric:
                self.tree[f] = []
                self.columns.append(f)
            else:
                cats = list(X_train[f].cat.categories) if isinstance(X_train[f].dtype, pd.CategoricalDtype) \
                    else sorted(pd.unique(X_train[f]))
                self.cats[f] = cats
                self.tree[f] = [f"{f} = {c}" for c in cats]
                self.columns += self.tree[f]
        self.dtypes = X_train.dtypes
        self.raw_columns = list(X_train.columns)

    def encode(self, X: pd.DataFrame) -> pd.DataFrame:
        parts = {}
        for f in self.raw_columns:
            if f in self.numeric:
                parts[f] = X[f].to_numpy(dtype=float)
            else:
                vals = X[f].astype(object).to_numpy()
                for c, col in zip(self.cats[f], self.tree[f], strict=True):
                    parts[col] = (vals == c).astype(float)
        return pd.DataFrame(parts, index=X.index)[self.columns]

    def decode(self, A: np.ndarray) -> pd.DataFrame:
        out, i = {}, 0
        for f in self.raw_columns:
            if f in self.numeric:
                out[f] = A[:, i]
                i += 1
            else:
                n = len(self.cats[f])
                codes = A[:, i:i + n].argmax(axis=1)
                out[f] = pd.Categorical(np.asarray(self.cats[f], dtype=object)[codes], dtype=self.dtypes[f]) \
                    if isinstance(self.dtypes[f], pd.CategoricalDtype) else np.asarray(self.cats[f])[codes]
                i += n
        X = pd.DataFrame(out)
        for f in self.numeric:
            if pd.api.types.is_integer_dtype(self.dtypes[f]) and np.allclose(X[f], np.round(X[f])):
                X[f] = np.round(X[f]).astype(self.dtypes[f])
        return X

    def delta_spec(self, delta: np.ndarray) -> list:
        """A translation after GLOBE-CE's rounding (argmax of ``onehot + delta`` per
        categorical feature, its ``round_categorical``) as scorer changes."""
        changes, i = [], 0
        for f in self.raw_columns:
            if f in self.numeric:
                if delta[i] != 0:
                    changes.append({"feature": f, "op": "shift", "value": float(delta[i])})
                i += 1
                continue
            n = len(self.cats[f])
            d = delta[i:i + n]
            mapping = {}
            for j, c in enumerate(self.cats[f]):
                e = np.zeros(n)
                e[j] = 1.0
                t = int(np.argmax(e + d))
                if t != j:
                    mapping[c] = self.cats[f][t]
            if mapping:
                changes.append({"feature": f, "op": "map", "value": mapping})
            i += n
        return changes


@dataclass
class _Dataset:
    """The attributes GLOBE_CE reads from its dataset object."""

    name: str
    features: list
    features_tree: dict
    categorical_features: dict
    continuous_features: dict


class _Model:
    """What the peers call: ``predict`` over their one-hot rows. ``fast`` (from
    :func:`onehot_predict`) skips decoding to raw rows; otherwise rows are decoded and
    passed to ``predict`` (the real pipeline)."""

    def __init__(self, onehot: OneHot, predict, fast=None):
        self.onehot, self._predict, self._fast = onehot, predict, fast

    def predict(self, A):
        A = np.asarray(A, dtype=float)
        if self._fast is not None:
            return self._fast(A)
        return np.asarray(self._predict(self.onehot.decode(A))).astype(int)


def onehot_predict(pipe, onehot: OneHot, X_check: pd.DataFrame, tol: float = 1e-8):
    """``pipe.predict`` over GLOBE-CE's one-hot rows without decoding them, or ``None``.

    ``pipe[0]`` (a ``FeatureSpace``) is linear in the one-hot encoding (one-hot blocks,
    binary codes, passthrough numbers scaled to [0, 1]); the linear map ``Z = A M + c`` is
    solved by least squares on ``X_check`` and accepted only if it reproduces
    ``pipe[0].transform`` to ``tol`` and ``pipe.predict`` exactly on every row of
    ``X_check``. Then each peer's model call is one matrix product and the classifier's
    ``predict`` (no pandas decoding: the adapter's cost in BENCHMARKS.md).
    """
    space, clf = pipe[0], pipe[-1]
    A = onehot.encode(X_check).to_numpy()
    Z = np.asarray(space.transform(X_check), dtype=float)
    sol = np.linalg.lstsq(np.column_stack([A, np.ones(len(A))]), Z, rcond=None)[0]
    M, c = sol[:-1], sol[-1]
    if np.abs(A @ M + c - Z).max() > tol:
        return None

    def predict(B):
        return np.asarray(clf.predict(np.asarray(B, dtype=float) @ M + c)).astype(int)
    if (predict(A) != np.asarray(pipe.predict(X_check)).astype(int)).any():
        return None
    return predict


def _peer_dataset(oh: OneHot, name: str = "groupcf") -> _Dataset:
    cats = [f for f in oh.raw_columns if f not in oh.numeric]
    return _Dataset(name=name, features=oh.columns + ["label"], features_tree={f: list(v) for f, v in oh.tree.items()},
                    categorical_features={name: cats}, continuous_features={name: list(oh.numeric)})


def run_globece(path: str, X_train: pd.DataFrame, S: pd.DataFrame, predict, rules, ks, Tmax=None,
                n_sample: int = 2000, seed: int = 0, pipe=None, freeze=()) -> dict:
    """GLOBE-CE's recipe (their German-credit notebook: random directions of sparsity power
    5, the best one scaled, ``cluster_by_costs`` into ``k`` cost bins) on ``S``.

    ``Tmax`` is GLOBE-CE's ``n_features`` (features per sampled direction; ``None``: 5,
    as in their notebook). Immutable
    features are its ``dropped_features``. With ``pipe`` (the pipeline behind ``predict``)
    its model calls take :func:`onehot_predict`'s fast path when that checks out. Returns
    ``{k: (specs, wall seconds, CPU seconds)}``; the seconds of a ``k`` are the shared
    sampling + scaling time plus that ``k``'s clustering. ``freeze``: more features kept
    fixed like the immutable ones (GLOBE-CE's random directions pick each numeric feature's
    sign at random, so it cannot keep an increase-only feature from decreasing: freezing
    them is the nearest it comes to the rule).
    """
    if path not in sys.path:
        sys.path.insert(0, path)
    import matplotlib
    matplotlib.use("Agg")
    from globe_ce import GLOBE_CE

    oh = OneHot(X_train, rules.numeric)
    ds = _peer_dataset(oh)
    cats = ds.categorical_features[ds.name]
    t0, c0 = time.perf_counter(), time.process_time()
    fast = None if pipe is None else onehot_predict(pipe, oh, pd.concat([X_train, S]))
    model = _Model(oh, predict, fast)
    fixed = list(dict.fromkeys(list(rules.immutable) + list(freeze)))
    immutable_cat = [f for f in fixed if f in cats]
    immutable_num = [f for f in fixed if f in oh.numeric]
    g = GLOBE_CE(model=model, dataset=ds, X=oh.encode(S), affected_subgroup=None, dropped_features=immutable_cat,
                 delta_init="zeros", ordinal_features=[], normalise=None,
                 bin_widths={f: rules.width[f] or 1.0 for f in oh.numeric}, monotonicity=None, p=1)
    n_active = int(g.active_f_idx.sum()) - len(immutable_num)
    # no Tmax: their notebook's n_features=5 (all features at magnitude 1 flips nobody here)
    nf = min(5 if Tmax is None else int(Tmax), n_active)
    g.sample(n_sample=n_sample, magnitude=1, sparsity_power=5, idxs=None, n_features=nf, disable_tqdm=True,
             plot=False, seed=seed, scheme="random", dropped_features=immutable_num)
    delta = g.best_delta
    _, costs, scalars = g.scale(delta=delta, vector=True, plot=False, disable_tqdm=True)
    base, base_cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {}
    for k in ks:
        t1, c1 = time.perf_counter(), time.process_time()
        idxs = [int(i) for i in g.cluster_by_costs(costs, n_bins=k) if np.isfinite(i)]
        specs = []
        for i in dict.fromkeys(idxs):
            sp = oh.delta_spec(delta * scalars[i])
            if sp and sp not in specs:
                specs.append(sp)
        out[k] = (specs, base + time.perf_counter() - t1, base_cpu + time.process_time() - c1)
    return out


def _ares_value(oh: OneHot, f: str, text: str):
    """AReS's ``"f = v"`` value text back to the raw category (or a numeric bin)."""
    if f in oh.numeric:
        lo, hi = text.strip("([])").split(",")
        return {"interval": [float(lo), float(hi)]}
    for c in oh.cats[f]:
        if str(c) == text:
            return c
    raise KeyError(f"{f} = {text}: not a category seen in training")


def ares_spec(triple, ares, oh: OneHot) -> dict:
    """An AReS triple (outer ifs, inner ifs, thens) as a scorer action: the ifs become
    ``when``; a categorical then is set, a binned numeric then shifts by the difference of
    the bins' mids (AReS's own ``triple_cost``)."""
    when, changes = {}, []
    for term in list(triple[0]) + list(triple[1]):
        f, v = term.split(" = ", 1)
        when[f] = _ares_value(oh, f, v)
    inner = {t.split(" = ", 1)[0]: t for t in triple[1]}
    for then in triple[2]:
        if then in triple[1]:
            continue
        f, v = then.split(" = ", 1)
        if f in oh.numeric:
            changes.append({"feature": f, "op": "shift", "value": float(ares.bin_mids[then] - ares.bin_mids[inner[f]])})
        else:
            changes.append({"feature": f, "op": "set", "value": _ares_value(oh, f, v)})
    return {"when": when, "changes": changes}


def run_ares(path: str, X_train: pd.DataFrame, population: pd.DataFrame, predict, rules, pipe=None,
             apriori_threshold: float = 0.16, r: int = 5000, max_width=None, freeze=()) -> tuple:
    """AReS (the ``AReS`` class of GLOBE-CE's repository, their notebook's settings:
    ``constraints=[20, 7, 10]``, ``lams=[1, 1000]``, 10 bins) on ``population`` (the
    rejected people first, then accepted rows: AReS mines its itemsets over both and
    explains the rejected). Immutable features, and ``freeze``, are its
    ``dropped_features`` (AReS has no increase-only rule: a "then" may pick a lower bin).

    Returns ``(specs, wall seconds, CPU seconds, n_rejected_seen, own)`` with ``own``
    AReS's own accuracy (share) and average cost.
    """
    if path not in sys.path:
        sys.path.insert(0, path)
    import contextlib
    import io

    import matplotlib
    matplotlib.use("Agg")
    from ares import AReS

    oh = OneHot(X_train, rules.numeric)
    ds = _peer_dataset(oh)
    t0, c0 = time.perf_counter(), time.process_time()
    fast = None if pipe is None else onehot_predict(pipe, oh, pd.concat([X_train, population]))
    model = _Model(oh, predict, fast)
    X = oh.encode(population).reset_index(drop=True)
    with contextlib.redirect_stdout(io.StringIO()):
        ares = AReS(model=model, dataset=ds, X=X, dropped_features=list(dict.fromkeys([*rules.immutable, *freeze])),
                    n_bins=10,
                    ordinal_features=[], normalise=False, constraints=[20, 7, 10])
        ares.generate_itemsets(apriori_threshold=apriori_threshold, max_width=max_width, affected_subgroup=None,
                               save_copy=False)
        ares.generate_groundset(max_width=None, RL_reduction=True, then_generation=None, save_copy=False)
        n_v = ares.V.length
        rr = min(r, n_v)
        ares.evaluate_groundset(lams=[1, 1000], r=rr, save_mode=1, disable_tqdm=True, plot_accuracy=False)
        ares.select_groundset(s=rr)
        ares.optimise_groundset(lams=[1, 1000], factor=1, print_updates=False, print_terms=False)
    specs = [ares_spec(t, ares, oh) for t in ares.R.triples]
    own = {"own_coverage": float(ares.R.accuracy) / 100, "own_mean_cost": float(ares.R.average_cost)}
    return specs, time.perf_counter() - t0, time.process_time() - c0, int(len(ares.X_aff_original)), own
