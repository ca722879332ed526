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
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import GroupCFWarning, InvalidInputError, NoCounterfactualError

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
    #: what was audited: method, model, rows, failures, date, groupcf version
    metadata: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"Audit(by={self.by!r}, groups={list(self.groups.index)}, reference={self.reference!r})"

    def plot(self) -> tuple[Any, Any]:
        """Two matplotlib figures: burden by group and perturbed-feature frequencies."""
        import matplotlib.pyplot as plt
        n = len(self.groups)
        f1, ax = plt.subplots(1, 2, figsize=(max(8.0, 1.6 * n + 4), 3.6), layout="constrained")
        self.groups["share_found"].plot.bar(ax=ax[0], title="share with a counterfactual", rot=0)
        self.groups["mean_changed"].plot.bar(ax=ax[1], title="features changed (mean)", rot=0)
        f2, ax2 = plt.subplots(figsize=(max(8.0, 0.5 * len(self.features) * max(n, 1) + 3), 4.2),
                               layout="constrained")
        self.features.plot.bar(ax=ax2, title=f"share changing each feature, by {self.by}", rot=30)
        ax2.legend(title=self.by, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
        return f1, f2

    def save_report(self, path: str | Path, title: str = "Recourse audit") -> None:
        """One self-contained HTML file (no external resources): run metadata, tables with
        readable headers and one number format, plots, a warning for small groups."""
        imgs = []
        try:
            import matplotlib.pyplot as plt
            for fig in self.plot():
                buf = io.BytesIO()
                fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
                plt.close(fig)
                imgs.append(base64.b64encode(buf.getvalue()).decode())
        except ImportError:
            pass
        t = html.escape(title)
        meta = pd.DataFrame({"": [html.escape(str(v)) for v in self.metadata.values()]},
                            index=list(self.metadata))
        small = self.groups.index[self.groups["n"] < SMALL_GROUP].tolist()
        fmt = "{:.3f}".format
        parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{t}</title>",
                 ("<style>body{font-family:sans-serif;margin:2em;max-width:75em}table{border-collapse:collapse}"
                 "td,th{border:1px solid #999;padding:2px 6px;text-align:right}.warn{color:#a40}</style>"
                  "</head><body>"),
                 f"<h1>{t}</h1>", "<h2>Run</h2>", meta.to_html(header=False, table_id="metadata", escape=False),
                 (f"<p>Groups by <b>{html.escape(self.by)}</b>; differences to "
                 f"<b>{html.escape(str(self.reference))}</b> with {self.level:.0%} bootstrap "
                 "intervals.</p>")]
        if small:
            parts.append(f"<p class='warn'><b>Warning:</b> group(s) {html.escape(str(small))} have fewer than "
                         f"{SMALL_GROUP} people: their figures and intervals are unreliable.</p>")
        parts += ["<h2>Burden by group</h2>",
                  self.groups.rename(columns=HEADERS).to_html(float_format=fmt, table_id="groups"),
                  "<h2>Differences</h2>",
                  self.differences.rename(columns=HEADERS).to_html(float_format=fmt, table_id="differences"),
                  "<h2>Perturbed features</h2>",
                  "<p>Share of each group's counterfactuals that change each feature.</p>",
                  self.features.to_html(float_format=fmt, table_id="features")]
        parts += [f"<img alt='plot' src='data:image/png;base64,{b}'>" for b in imgs]
        if self.global_actions is not None:
            from .global_section import global_section

            parts.append(global_section(self.global_actions, self.global_groups, level=self.level))
        parts.append("</body></html>")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(parts))


#: readable column headers of the report's tables
HEADERS = {"n": "people", "share_found": "share with a counterfactual", "mean_distance": "mean distance",
           "median_distance": "median distance", "mean_changed": "features changed (mean)",
           "top_features": "most changed features", "diff_share_found": "difference in share found",
           "share_lo": "(low)", "share_hi": "(high)", "diff_mean_distance": "difference in mean distance",
           "distance_lo": "(low) ", "distance_hi": "(high) "}
#: groups smaller than this get a warning (bootstrap intervals of a handful of people mislead)
SMALL_GROUP = 10


def _feature_shares(changed: pd.Series) -> pd.Series:
    lists = changed[changed != ""].str.split(";")
    if lists.empty:
        return pd.Series(dtype=float)
    return lists.explode().value_counts() / len(changed)


def audit(result: Any, X: pd.DataFrame | pd.Series | None, by: str | pd.Series, *, n_boot: int = 1000,
          level: float = 0.95, random_state: int | np.random.Generator | None = 0, reference: object = None,
          global_actions: Any = None) -> Audit:
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
    # a person the method proves (or finds) has no counterfactual has *no recourse*: counted as not
    # found, never dropped; other errors (an accepted row, a time limit) leave the audit
    ok = (table["error"].fillna("") == "") | (table["status"] == NoCounterfactualError.__name__)
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

    def boot(f: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
            assert X is not None  # checked above: by names a column of X
            missing = people.difference(X.index)
            if len(missing):
                raise InvalidInputError(f"global_actions explains rows {list(missing[:10])} that are not rows of X")
            glob_groups = X.loc[people, by].rename(name)
        else:
            glob_groups = pd.Series(by).loc[people].rename(name)
    small = groups.index[groups["n"] < SMALL_GROUP].tolist()
    if small:
        warnings.warn(f"audit by {name!r}: group(s) {small} have fewer than {SMALL_GROUP} people; their "
                      "bootstrap intervals are unreliable", GroupCFWarning, stacklevel=2)
    return Audit(name, _denoise(groups), _denoise(differences), features, ref, level, global_actions, glob_groups,
                 metadata=_metadata(result, table, n_boot))


def _metadata(result: Any, table: pd.DataFrame, n_boot: int) -> dict[str, Any]:
    from datetime import datetime, timezone
    from importlib.metadata import PackageNotFoundError, version

    try:
        __version__ = version("groupcf")
    except PackageNotFoundError:  # pragma: no cover - a source checkout without metadata
        __version__ = "0+unknown"

    model = getattr(result, "model", None)
    steps = getattr(model, "steps", None)
    model_text = " → ".join(type(s).__name__ for _, s in steps) if steps else type(model).__name__
    errors = (table["error"].fillna("") != "").sum() if "error" in table else 0
    return {"method": getattr(result, "method", "?"), "model": model_text if model is not None else "?",
            "people": len(table), "explained": int(table["found"].astype(bool).sum()),
            "failed rows": int(errors), "bootstrap resamples": n_boot,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "groupcf": __version__}


def _denoise(df: pd.DataFrame, tol: float = 1e-12) -> pd.DataFrame:
    """Floating-point noise (``-8.3e-17``) shown as the zero it is."""
    num = df.select_dtypes("number").columns
    df[num] = df[num].mask(df[num].abs() < tol, 0.0)
    return df
