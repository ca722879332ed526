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
    def __init__(self, onehot: OneHot, predict):
        self.onehot, self._predict = onehot, predict

    def predict(self, A):
        return np.asarray(self._predict(self.onehot.decode(np.asarray(A, dtype=float)))).astype(int)


def run_globece(path: str, X_train: pd.DataFrame, S: pd.DataFrame, predict, rules, ks, Tmax=None,
                n_sample: int = 2000, seed: int = 0) -> dict:
    """GLOBE-CE's recipe (their German-credit notebook: random directions of sparsity power
    5, the best one scaled, ``cluster_by_costs`` into ``k`` cost bins) on ``S``.

    ``Tmax`` is GLOBE-CE's ``n_features`` (features per sampled direction; ``None``: 5,
    as in their notebook). Immutable
    features are its ``dropped_features``. Returns ``{k: (specs, seconds)}``; the seconds
    of a ``k`` are the shared sampling + scaling time plus that ``k``'s clustering.
    """
    if path not in sys.path:
        sys.path.insert(0, path)
    import matplotlib
    matplotlib.use("Agg")
    from globe_ce import GLOBE_CE

    oh = OneHot(X_train, rules.numeric)
    name = "groupcf"
    cats = [f for f in oh.raw_columns if f not in oh.numeric]
    ds = _Dataset(name=name, features=oh.columns + ["label"], features_tree=oh.tree,
                  categorical_features={name: cats}, continuous_features={name: list(oh.numeric)})
    model = _Model(oh, predict)
    t0 = time.perf_counter()
    immutable_cat = [f for f in rules.immutable if f in cats]
    immutable_num = [f for f in rules.immutable if f in oh.numeric]
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
    base = time.perf_counter() - t0
    out = {}
    for k in ks:
        t1 = time.perf_counter()
        idxs = [int(i) for i in g.cluster_by_costs(costs, n_bins=k) if np.isfinite(i)]
        specs = []
        for i in dict.fromkeys(idxs):
            sp = oh.delta_spec(delta * scalars[i])
            if sp and sp not in specs:
                specs.append(sp)
        out[k] = (specs, base + time.perf_counter() - t1)
    return out
