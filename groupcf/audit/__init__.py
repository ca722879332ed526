"""Audit of recourse burden by group on an :class:`~groupcf.batch.ExplanationSet`.

Per group (e.g. ``by="sex"``): number of people, share with a counterfactual within the
rules (``found``), mean and median distance and features changed among those found, the
most perturbed features; and for each group its difference to the reference group (the
largest) in share found and mean distance, with percentile bootstrap confidence
intervals (resampling people within each group). ``save_report`` writes one
self-contained HTML file (tables, plots as embedded PNG when matplotlib is installed).
"""
from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..exceptions import InvalidInputError

__all__ = ["Audit", "audit"]


@dataclass
class Audit:
    """``groups``: one row per group; ``differences``: each group minus ``reference``
    with bootstrap CIs; ``features``: share of found counterfactuals changing each feature,
    per group."""

    by: str
    groups: pd.DataFrame
    differences: pd.DataFrame
    features: pd.DataFrame
    reference: object
    level: float
    #: optional :class:`~groupcf.results.global_actions.GlobalExplanation` of the same people,
    #: shown as the report's "shared actions" section, by the same groups
    global_actions: object = None
    global_groups: pd.Series | None = None

    def __repr__(self) -> str:
        return f"Audit(by={self.by!r}, groups={list(self.groups.index)}, reference={self.reference!r})"

    def plot(self):
        """Two matplotlib figures: burden by group and perturbed-feature frequencies."""
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        f1, ax = plt.subplots(1, 2, figsize=(8, 3))
        self.groups["share_found"].plot.bar(ax=ax[0], title="share with a counterfactual")
        self.groups["mean_changed"].plot.bar(ax=ax[1], title="features changed (mean)")
        f1.tight_layout()
        f2, ax2 = plt.subplots(figsize=(8, 3))
        self.features.plot.bar(ax=ax2, title=f"share changing each feature, by {self.by}")
        f2.tight_layout()
        return f1, f2

    def save_report(self, path, title: str = "Recourse audit") -> None:
        """One self-contained HTML file (no external resources)."""
        imgs = []
        try:
            import matplotlib.pyplot as plt
            for fig in self.plot():
                buf = io.BytesIO()
                fig.savefig(buf, format="png", dpi=80)
                plt.close(fig)
                imgs.append(base64.b64encode(buf.getvalue()).decode())
        except ImportError:
            pass
        t = html.escape(title)
        parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{t}</title>",
                 ("<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
                 "td,th{border:1px solid #999;padding:2px 6px}</style></head><body>"),
                 (f"<h1>{t}</h1><p>Groups by <b>{html.escape(self.by)}</b>; differences to "
                 f"<b>{html.escape(str(self.reference))}</b> with {self.level:.0%} bootstrap "
                 "intervals.</p>"),
                 "<h2>Burden by group</h2>", self.groups.to_html(float_format="%.4g", table_id="groups"),
                 "<h2>Differences</h2>", self.differences.to_html(float_format="%.4g", table_id="differences"),
                 "<h2>Perturbed features</h2>", self.features.to_html(float_format="%.4g", table_id="features")]
        parts += [f"<img alt='plot' src='data:image/png;base64,{b}'>" for b in imgs]
        if self.global_actions is not None:
            from .global_section import global_section

            parts.append(global_section(self.global_actions, self.global_groups, level=self.level))
        parts.append("</body></html>")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(parts))


def _feature_shares(changed: pd.Series) -> pd.Series:
    lists = changed[changed != ""].str.split(";")
    if lists.empty:
        return pd.Series(dtype=float)
    return lists.explode().value_counts() / len(changed)


def audit(result, X: pd.DataFrame | pd.Series | None, by, *, n_boot: int = 1000,
          level: float = 0.95, random_state=0, reference=None, global_actions=None) -> Audit:
    """Recourse burden of ``result`` (an ExplanationSet or its table) grouped by ``by``:
    a column of ``X`` (indexed like the table) or a Series of group labels.

    ``global_actions``: a :class:`~groupcf.results.global_actions.GlobalExplanation` of
    (some of) the same people (``gcf.explain_global``); the report then has a "shared
    actions" section with coverage and cost by the same groups."""
    table = getattr(result, "table", result)
    if isinstance(by, str):
        if X is None or by not in X.columns:
            cols = [] if X is None else list(X.columns)
            raise InvalidInputError(f"unknown column {by!r}: choose one of {cols}")
        g, name = X.loc[table.index, by], by
    else:
        g, name = pd.Series(by).loc[table.index], getattr(by, "name", "group")
    g = g.astype(str)
    ok = table["error"].fillna("") == ""
    t, g = table[ok], g[ok]
    found = t["found"].astype(bool)
    rows, feats = {}, {}
    for k, idx in g.groupby(g).groups.items():
        tk = t.loc[idx]
        fk = tk[tk["found"].astype(bool)]
        fs = _feature_shares(fk["changed"]) if len(fk) else pd.Series(dtype=float)
        rows[k] = {"n": len(tk), "share_found": float(tk["found"].astype(bool).mean()),
                       "mean_distance": fk["distance"].mean(), "median_distance": fk["distance"].median(),
                       "mean_changed": fk["n_changed"].mean(),
                       "top_features": ", ".join(fs.index[:3])}
        feats[k] = fs
    groups = pd.DataFrame.from_dict(rows, orient="index")
    groups.index.name = name
    features = pd.DataFrame(feats).fillna(0.0).sort_index()
    ref = reference if reference is not None else groups["n"].idxmax()
    if ref not in groups.index:
        raise InvalidInputError(f"reference group {ref!r} not among {list(groups.index)}")
    rng = np.random.default_rng(random_state)
    a = (1 - level) / 2
    vals = {k: (found[g == k].to_numpy(float), t.loc[(g == k) & found, "distance"].to_numpy(float))
            for k in groups.index}

    def boot(f, d):
        bf = rng.choice(f, (n_boot, len(f))).mean(1) if len(f) else np.full(n_boot, np.nan)
        bd = rng.choice(d, (n_boot, len(d))).mean(1) if len(d) else np.full(n_boot, np.nan)
        return bf, bd

    rf, rd = boot(*vals[ref])
    diffs = {}
    for k in groups.index:
        if k == ref:
            continue
        kf, kd = boot(*vals[k])
        df_, dd = kf - rf, kd - rd
        diffs[k] = {"diff_share_found": groups.loc[k, "share_found"] - groups.loc[ref, "share_found"],
                        "share_lo": np.nanquantile(df_, a), "share_hi": np.nanquantile(df_, 1 - a),
                        "diff_mean_distance": groups.loc[k, "mean_distance"] - groups.loc[ref, "mean_distance"],
                        "distance_lo": np.nanquantile(dd, a), "distance_hi": np.nanquantile(dd, 1 - a)}
    differences = pd.DataFrame.from_dict(diffs, orient="index")
    differences.index.name = name
    glob_groups = None
    if global_actions is not None:
        people = global_actions.S.index
        if isinstance(by, str):
            missing = people.difference(X.index)
            if len(missing):
                raise InvalidInputError(f"global_actions explains rows {list(missing[:10])} that are not rows of X")
            glob_groups = X.loc[people, by].rename(name)
        else:
            glob_groups = pd.Series(by).loc[people].rename(name)
    return Audit(name, _denoise(groups), _denoise(differences), features, ref, level, global_actions, glob_groups)


def _denoise(df: pd.DataFrame, tol: float = 1e-12) -> pd.DataFrame:
    """Floating-point noise (``-8.3e-17``) shown as the zero it is."""
    num = df.select_dtypes("number").columns
    df[num] = df[num].mask(df[num].abs() < tol, 0.0)
    return df
