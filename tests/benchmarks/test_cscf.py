"""The authors' sequential experiment (benchmarks/cscf.py): their networks reproduce their
logits, and explain_sequence through the model adapter gives replayable, accepted sequences."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import groupcf as gcf
from groupcf.models import TrainedModel

_ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("cscf", _ROOT / "benchmarks" / "cscf.py")
cscf = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("cscf", cscf)
_spec.loader.exec_module(cscf)

DATA = Path(os.environ.get("GROUPCF_CSCF_DATA", _ROOT / ".." / "shared" / "data" / "cscf"))
needs_data = pytest.mark.skipif(not (DATA / "adult" / "model.npz").exists(),
                                reason=f"cscf data not found in {DATA} (set GROUPCF_CSCF_DATA)")
FAST = {"population": 60, "offspring": 48, "mutants": 12, "generations": 25}


def test_loader_is_not_in_the_package():
    assert importlib.util.find_spec("groupcf.sequential.cscf") is None


@needs_data
@pytest.mark.parametrize("name", ["adult", "german"])
def test_cscf_networks_reproduce_the_authors_logits(name):
    D = cscf.load_cscf(name, DATA)
    s = D.network.score(D.encoding(D.starts.to_numpy()))
    t = cscf.TARGET[name]
    np.testing.assert_allclose(s, D.logits[:, t] - D.logits[:, 1 - t], atol=1e-5)
    assert (s < 0).all()
    tm = D.model()          # the adapter scores what the network scores
    assert isinstance(tm, TrainedModel) and tm.embedding is D.network
    np.testing.assert_allclose(tm.margin(D.starts.to_numpy()), s, atol=1e-12)


@needs_data
def test_cscf_adult_pareto_replays_and_bound_holds():
    D = cscf.load_cscf("adult", DATA)
    e = gcf.explain_sequence(D.starts.iloc[2], D.model(), D.actions, D.dependencies,
                             **D.explain_kwargs(), random_state=1, bound_time_limit=2.0, **FAST)
    assert e.validate()
    for state in e.pareto["final_state"]:
        x = np.array([state[f] for f in D.features])
        assert D.network.score(D.encoding(x))[0] >= 0
        assert 0 < state["Hours/Week"] < 90 and state["Age"] >= D.starts.iloc[2]["Age"]
    assert e.lower_bound is None or e.lower_bound <= e.pareto["cost"].min() + 1e-6


def test_sequential_benchmark_reads_the_data_folder_from_the_environment(monkeypatch, tmp_path):
    """``benchmarks/sequential.py`` defaults ``--data-dir`` to ``$GROUPCF_CSCF_DATA`` (as
    benchmarks/cscf.py documents); it used to ignore it and look beside the repository."""
    spec = importlib.util.spec_from_file_location("sequential_bench", _ROOT / "benchmarks" / "sequential.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setenv("GROUPCF_CSCF_DATA", str(tmp_path))
    assert mod.parser().parse_args([]).data_dir == str(tmp_path)
    monkeypatch.delenv("GROUPCF_CSCF_DATA")
    assert Path(mod.parser().parse_args([]).data_dir) == _ROOT / ".." / "shared" / "data" / "cscf"


def test_sequential_benchmark_finds_the_authors_medians_beside_the_data(tmp_path):
    """The table's "(authors)" medians come from ``cscf_summary.csv``: found two levels above
    the data folder when the repository has no ``../shared`` beside it (it printed n/a)."""
    spec = importlib.util.spec_from_file_location("sequential_bench2", _ROOT / "benchmarks" / "sequential.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    data = tmp_path / "data" / "cscf"
    data.mkdir(parents=True)
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "cscf_summary.csv").write_text("dataset,method,metric,subset,median\n")
    args = mod.parser().parse_args(["--data-dir", str(data)])
    if not (_ROOT / ".." / "shared" / "reference" / "cscf_summary.csv").exists():
        assert mod.reference_path(args) == tmp_path / "reference" / "cscf_summary.csv"
    assert mod.reference_path(mod.parser().parse_args(["--reference", "x.csv"])) == Path("x.csv")
