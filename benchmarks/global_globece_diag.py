"""Why GLOBE-CE covers few people on groupcf's German credit: its actions scored under
relaxed rules (untimed diagnosis, BENCHMARKS.md "Global actions").

``python benchmarks/global_globece_diag.py --globece PATH [--tmax N] [--k 3]``: GLOBE-CE on
the ``--dataset`` / LR setting of ``global_actions.py`` (default German), its actions scored with all rules, with
none, with the domain rule only and with the immutable / increase-only rules only.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import global_actions as ga  # noqa: E402
import global_scorer as gs  # noqa: E402
from global_peers import run_globece  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--globece", required=True)
    ap.add_argument("--tmax", type=ga._tmax, default=None)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--dataset", default="german")
    ap.add_argument("--max-people", type=int, default=500)
    args = ap.parse_args(argv)
    X_tr, S, pipe, rules, _ = ga.setup(args.dataset, "lr", args.max_people)
    specs = run_globece(args.globece, X_tr, S, pipe.predict, rules, [args.k], Tmax=args.tmax, seed=0)[args.k][0]
    print(json.dumps(specs, default=str))
    wide = {f: -1e18 for f in rules.numeric}, {f: 1e18 for f in rules.numeric}
    base = {"numeric": rules.numeric, "categorical": rules.categorical, "width": rules.width,
            "categories": rules.categories}
    variants = {"all rules": rules,
                "no rules": gs.Rules(**base, low=wide[0], high=wide[1]),
                "domain only": gs.Rules(**base, low=rules.low, high=rules.high),
                "immutable + increase-only only": gs.Rules(**base, immutable=rules.immutable,
                                                           increase_only=rules.increase_only, low=wide[0], high=wide[1])}
    for name, r in variants.items():
        sc = gs.score(S, specs, pipe.predict, r)
        print(f"{name:32s} coverage {100 * sc.coverage:5.1f} %  mean cost {sc.mean_cost:.3f}")


if __name__ == "__main__":
    main()
