"""`make demo`: nearest counterfactuals of five people COMPAS rejects (bundled data, HiGHS).

Run with ``python -m groupcf.demo``.
"""
from __future__ import annotations

import logging
import time

from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline

import groupcf as gcf

log = logging.getLogger("groupcf.demo")


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    ds = gcf.datasets.load("compas", variant="paper")
    X_tr, X_te, y_tr, y_te = ds.split(test_size=0.5, random_state=0)
    log.info("%r", ds)
    models = {
        "logistic regression (C=10)": LogisticRegression(C=10),
        "ReLU network 10x10": MLPClassifier((10, 10), max_iter=1000, random_state=0),
    }
    for name, clf in models.items():
        pipe = make_pipeline(gcf.FeatureSpace(immutable=["Race", "Sex"]), clf).fit(X_tr, y_tr)
        log.info("\n=== %s: test accuracy %.3f (Race and Sex immutable) ===", name, pipe.score(X_te, y_te))
        rejected = X_te[pipe.predict(X_te) == 0].head(5)
        for idx, x in rejected.iterrows():
            t = time.perf_counter()
            try:
                exp = gcf.explain(x, pipe, method="mace", distance="l0", solver="highs")
            except gcf.exceptions.NoCounterfactualError as err:
                log.info("person %s: %s", idx, err)
                continue
            cf = exp.counterfactuals.iloc[0]
            changes = "; ".join(f"{c} {x[c]} -> {cf[c]}" for c in exp.changed_features)
            log.info("person %s (%s): change %d feature(s): %s  [p=%.2f, %s, %.0f ms]",
                     idx, ", ".join(f"{k}={v}" for k, v in x.items()), len(exp.changed_features),
                     changes, exp.probabilities[0], "optimal" if exp.is_optimal else exp.status.value,
                     1000 * (time.perf_counter() - t))


if __name__ == "__main__":
    main()
