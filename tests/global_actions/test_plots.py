"""GlobalExplanation's three plots and the actions × features table they draw."""
from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")


def test_action_feature_table(german_global):
    from groupcf.results.global_plots import action_feature_table

    res = german_global
    text, share = action_feature_table(res)
    assert list(text.index) == list(res.actions.index)
    for j, spec in enumerate(res.specs):
        mine = res.S.loc[(res.assignment == j).fillna(False).to_numpy(dtype=bool)]
        for s in spec:
            cell = text.loc[j, s["feature"]]
            assert str(s["value"]).lstrip("-") in cell.replace("−", "")
            if s["op"] == "set":       # share of its people whose value really changes
                expect = (mine[s["feature"]].astype(object) != s["value"]).mean()
                assert share.loc[j, s["feature"]] == pytest.approx(expect)
        untouched = set(text.columns) - {s["feature"] for s in spec}
        assert all(text.loc[j, f] == "" for f in untouched)


def test_plot_actions_draws_every_cell(german_global):
    res = german_global
    ax = res.plot("actions")
    n_cells = sum(len(spec) for spec in res.specs)
    assert sum(bool(t.get_text()) for t in ax.texts) == n_cells
    assert len(ax.get_yticklabels()) == res.n_actions


def test_plot_groups_bars_are_coverage(german_global):
    res = german_global
    ax = res.plot("groups", groups="personal_status_sex")
    gaps = res.by_group("personal_status_sex", random_state=0)
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(heights, 100 * gaps["coverage"].to_numpy())


def test_plot_kind_errors(german_global):
    with pytest.raises(ValueError, match="groups="):
        german_global.plot("groups")
    with pytest.raises(ValueError, match="unknown plot kind"):
        german_global.plot("pie")
