"""FACTS (aif360, Kavouras et al. 2023) on one population, run in its own venv.

``/work/venvs/facts/bin/python benchmarks/facts_runner.py --input IN.pkl --out OUT.json``
(the venv holds ``aif360[FACTS]`` and groupcf's own dependencies; groupcf is imported from
this checkout, so the pickled pipeline loads). ``IN.pkl`` (written by
``global_actions.py``): ``{"pipe", "X" (accepted and rejected rows), "prot_attr",
"immutable", "numeric", "widths", "min_supp"}``. FACTS mines frequent itemsets of the
rejected ("if" subgroups) and of the accepted ("then" values) and keeps the if-then pairs
that flip someone; each pair becomes one scorer action ``{"when": if, "changes": set
then}``. Its cost weights are the scorer's (1 per categorical change, 1/bin width per
numeric unit). FACTS prices numeric changes between bins only (``pd.Interval`` values) while
the models take raw numbers: numeric features are frozen for FACTS (they may still describe
its subgroups), so its actions set categorical features. Writes the actions, FACTS's own effectiveness per group and the time.
"""
from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _plain(v):
    return v.item() if hasattr(v, "item") else v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    with open(args.input, "rb") as fh:
        d = pickle.load(fh)
    import functools

    import aif360.sklearn.detectors.facts as facts_mod
    from aif360.sklearn.detectors import FACTS

    # FACTS.fit calls valid_ifthens(..., drop_above=True), which drops if-then pairs moving
    # a column literally named "age" by more than two pd.Interval bins and fails on raw
    # numbers ("'numpy.int64' object has no attribute 'left'"). Numeric features are frozen
    # here (below), so that filter can never drop anything: it is switched off.
    facts_mod.valid_ifthens = functools.partial(facts_mod.misc.valid_ifthens, drop_above=False)

    X = d["X"]
    weights = defaultdict(lambda: 1.0)
    for f in d["numeric"]:
        weights[f] = 1.0 / d["widths"][f] if d["widths"][f] else 1.0
    # FACTS prices a numeric change only between bins (pd.Interval values); the models here
    # take raw numbers, so numeric features are handed over as items (they can describe a
    # subgroup) but frozen: FACTS's actions set categorical features only.
    t0 = time.perf_counter()
    facts = FACTS(clf=d["pipe"], prot_attr=d["prot_attr"], categorical_features=list(X.columns),
                  freq_itemset_min_supp=d["min_supp"], feature_weights=weights,
                  feats_not_allowed_to_change=sorted(set(d["immutable"]) | set(d["numeric"])))
    facts.fit(X, verbose=False)
    dt = time.perf_counter() - t0
    actions, seen = [], set()
    for ifc, by_group in facts.rules_by_if.items():
        when = {f: _plain(v) for f, v in zip(ifc.features, ifc.values, strict=True)}
        for _sg, (_cov, thens) in by_group.items():
            for then, _cor, _cost in thens:
                ch = [{"feature": f, "op": "set", "value": _plain(v)}
                      for f, v in zip(then.features, then.values, strict=True) if when.get(f) != _plain(v)]
                key = repr((sorted(when.items()), [(c["feature"], c["value"]) for c in ch]))
                if ch and key not in seen:
                    seen.add(key)
                    actions.append({"when": when, "changes": ch})
    with open(args.out, "w") as fh:
        json.dump({"time_s": dt, "n_if": len(facts.rules_by_if), "actions": actions}, fh, default=str)
    print(f"FACTS: {len(facts.rules_by_if)} subgroups, {len(actions)} if-then actions, {dt:.1f} s")


if __name__ == "__main__":
    main()
