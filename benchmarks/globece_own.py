"""GLOBE-CE and AReS on GLOBE-CE's own setting, run from a local checkout of their repository.

Runs in the peers' venv (their code needs ``pandas < 2.2`` and ``numpy < 2``), NOT in
groupcf's: ``/work/venvs/globece/bin/python benchmarks/globece_own.py --globece PATH
--out FILE.json``. GLOBE-CE's repository (github.com/danwley/GLOBE-CE) has no licence: it
is imported from ``PATH`` (``sys.path``), never copied. This script follows their
``evaluation_tutorial_german_credit.ipynb`` step by step (German credit, their pickled
logistic regression, the 180 training rows it rejects, AReS with ``apriori_threshold=0.16``
and ``lams=[1, 1000]``, GLOBE-CE with 2000 random directions of sparsity power 5 over the
categorical features and 5 cost bins) and writes, for :mod:`global_actions` to score:

* their own reported numbers (coverage and mean cost of each cumulative GLOBE-CE action,
  AReS's accuracy and average cost) and wall times;
* every action as a spec of :mod:`global_scorer` over their raw features (GLOBE-CE: each
  scaled translation, rounded as their ``round_categorical`` does, becomes ``map``/``shift``
  changes; AReS: each triple becomes ``when`` (outer and inner ifs) + ``set``/``shift``);
* the people (raw values), the training frame, and the model's coefficients over their
  one-hot columns (so the same model can be rebuilt in groupcf's venv).
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time

import numpy as np
import pandas as pd


def _raw(X: pd.DataFrame, tree: dict) -> pd.DataFrame:
    """Their one-hot frame back to raw values (category = the text after ' = ')."""
    out = {}
    for f, cols in tree.items():
        if not cols:
            out[f] = X[f].astype(float)
        else:
            codes = X[cols].to_numpy().argmax(axis=1)
            out[f] = [cols[c].split(" = ", 1)[1] for c in codes]
    return pd.DataFrame(out, index=X.index)


def _delta_spec(delta: np.ndarray, columns: list, tree: dict) -> list:
    """A translation ``delta`` (their one-hot space) as the changes it makes after their
    rounding: continuous -> shift; categorical -> per current category, the argmax of
    ``onehot + delta`` (their ``round_categorical``), listed where it differs."""
    pos = {c: i for i, c in enumerate(columns)}
    changes = []
    for f, cols in tree.items():
        if not cols:
            d = float(delta[pos[f]])
            if d != 0.0:
                changes.append({"feature": f, "op": "shift", "value": d})
            continue
        d = np.array([delta[pos[c]] for c in cols])
        mapping = {}
        for j, c in enumerate(cols):
            e = np.zeros(len(cols))
            e[j] = 1.0
            t = int(np.argmax(e + d))
            if t != j:
                mapping[c.split(" = ", 1)[1]] = cols[t].split(" = ", 1)[1]
        if mapping:
            changes.append({"feature": f, "op": "map", "value": mapping})
    return changes


def _interval(label: str):
    lo, hi = label.strip("([])").split(",")
    return [float(lo), float(hi)]


def _triple_spec(triple, ares, tree: dict) -> dict:
    """An AReS triple (outer ifs, inner ifs, thens) as ``when`` + changes (their
    ``triple_cost``: a categorical then is set, a binned numeric then shifts by the
    difference of the bins' mids)."""
    when, changes = {}, []
    for term in list(triple[0]) + list(triple[1]):
        f, v = term.split(" = ", 1)
        when[f] = {"interval": _interval(v)} if not tree[f] else v
    inner = {t.split(" = ", 1)[0]: t for t in triple[1]}
    for then in triple[2]:
        if then in triple[1]:
            continue
        f, v = then.split(" = ", 1)
        if not tree[f]:
            changes.append({"feature": f, "op": "shift", "value": float(ares.bin_mids[then] - ares.bin_mids[inner[f]])})
        else:
            changes.append({"feature": f, "op": "set", "value": v})
    return {"when": when, "changes": changes}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--globece", required=True, help="local checkout of github.com/danwley/GLOBE-CE")
    ap.add_argument("--out", required=True)
    ap.add_argument("--skip-ares", action="store_true")
    ap.add_argument("--ares-r", type=int, default=5000, help="their r and s (ground set kept), default 5000")
    args = ap.parse_args(argv)
    path = os.path.abspath(args.globece)
    sys.path.insert(0, path)
    import matplotlib
    matplotlib.use("Agg")
    from datasets import dataset_loader  # their code, from the checkout
    from globe_ce import GLOBE_CE

    name = "german_credit"
    dataset = dataset_loader(name, data_path=os.path.join(path, "datasets") + "/", dropped_features=[], n_bins=None)
    x_train, y_train, x_test, y_test, x_means, x_std = dataset.get_split(normalise=False, shuffle=False,
                                                                         return_mean_std=True)
    X = pd.DataFrame(x_train, columns=dataset.features[:-1])
    with open(os.path.join(path, "models", f"{name}_lr.pkl"), "rb") as fh:
        B = pickle.load(fh)
    tree = {f: list(v) for f, v in dataset.features_tree.items()}
    out = {"dataset": name, "model": "lr", "columns": list(X.columns), "tree": tree,
           "coef": np.asarray(B.coef_).ravel().tolist(), "intercept": float(np.asarray(B.intercept_).ravel()[0]),
           "train_raw": _raw(X, tree).to_dict(orient="list")}
    rejected = B.predict(X.values) == 0
    out["people_raw"] = _raw(X[rejected], tree).to_dict(orient="list")
    out["n_people"] = int(rejected.sum())
    n_bins = 10

    if not args.skip_ares:
        from ares import AReS
        t0 = time.perf_counter()
        ares = AReS(model=B, dataset=dataset, X=X, dropped_features=[], n_bins=n_bins, ordinal_features=[],
                    normalise=False, constraints=[20, 7, 10])
        ares.generate_itemsets(apriori_threshold=0.16, max_width=None, affected_subgroup=None, save_copy=True)
        ares.generate_groundset(max_width=None, RL_reduction=True, then_generation=None, save_copy=False)
        ares.evaluate_groundset(lams=[1, 1000], r=args.ares_r, save_mode=1, disable_tqdm=True, plot_accuracy=False)
        ares.select_groundset(s=args.ares_r)
        ares.optimise_groundset(lams=[1, 1000], factor=1, print_updates=False, print_terms=False)
        t_ares = time.perf_counter() - t0
        out["ares"] = {"accuracy": float(ares.R.accuracy), "average_cost": float(ares.R.average_cost),
                       "n_triples": int(ares.R.length), "time_s": t_ares,
                       "actions": [_triple_spec(t, ares, tree) for t in ares.R.triples]}

    from ares import AReS
    t0 = time.perf_counter()
    bin_widths = AReS(model=B, dataset=dataset, X=X, n_bins=n_bins, normalise=None).bin_widths
    g = GLOBE_CE(model=B, dataset=dataset, X=X, affected_subgroup=None, dropped_features=[], delta_init="zeros",
                 ordinal_features=[], normalise=None, bin_widths=bin_widths, monotonicity=None, p=1)
    g.sample(n_sample=2000, magnitude=1, sparsity_power=5, idxs=None, n_features=5, disable_tqdm=True,
             plot=False, seed=0, scheme="random", dropped_features=g.continuous_features)
    delta = g.best_delta
    corrects, costs, scalars = g.scale(delta=delta, vector=True, plot=False, disable_tqdm=True)
    t_globe = time.perf_counter() - t0
    clusters = {}
    for kb in range(1, 11):
        idxs = g.cluster_by_costs(costs, n_bins=kb)
        idxs = [int(i) for i in idxs if np.isfinite(i)]
        cs, cr = g.evaluate_clustering(delta, scalars, np.array(idxs, dtype=float), costs=costs, vector=True,
                                       print_outputs=(kb == 5))
        clusters[kb] = {"scalars": [float(scalars[i]) for i in idxs],
                        "actions": [_delta_spec(delta * scalars[i], list(X.columns), tree) for i in idxs],
                        "coverage": [float(c) for c in np.atleast_1d(cr)], "mean_cost": [float(c) for c in
                                                                                         np.atleast_1d(cs)]}
    out["globece"] = {"time_s": t_globe, "bin_widths": {k: float(v) for k, v in bin_widths.items()},
                      "clusters": clusters, "delta": delta.tolist()}
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1, default=float)
    print(f"wrote {args.out}: {out['n_people']} rejected")


if __name__ == "__main__":
    main()
