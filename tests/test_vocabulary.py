"""One vocabulary across every public call (README, "One vocabulary"): the same concept has
the same name and the same default everywhere, and every method's options are one frozen
``*Options`` dataclass built on :class:`groupcf.options.Options`."""
from __future__ import annotations

import dataclasses
import inspect

import pytest

import groupcf as gcf
from groupcf.options import Options

#: names that must not appear: the vocabulary's word for each is on the right
BANNED = {"k": "n", "seed": "random_state", "rng": "random_state", "target": "threshold",
          "timeout": "time_limit", "n_counterfactuals": "n", "num_cfs": "n", "time_budget": "time_limit",
          "n_workers": "n_jobs", "verbose_progress": "progress", "params": "options"}

#: deliberate exceptions: (call, name) -> why
ALLOWED = {("explain_global", "k"): "the number of shared actions: the global-recourse literature's (and issue's) k"}

#: the default of each vocabulary word, wherever it appears
DEFAULTS = {"Tmax": (None,), "time_limit": (None,), "progress": (True,), "threshold": (0.5,),
            "random_state": (None,), "space": (None,), "n_jobs": (1,), "solver": ("highs", None),
            "backend": ("loky",)}

#: public calls that can honour a sparsity limit: Tmax must be a keyword there
TMAX_CALLS = ["explain", "explain_group", "explain_groups", "explain_many", "explain_global"]

# calls whose vocabulary is knowingly pending (strict xfail: once one passes, its entry must go)
PENDING: dict[str, str] = {}


def public_calls():
    names = [n for n in gcf.__all__ if n.startswith("explain")]
    return [pytest.param(n, marks=pytest.mark.xfail(reason=PENDING[n], strict=True)) if n in PENDING else n
            for n in names]


def _check_signature(name, sig):
    problems = []
    for p in sig.parameters.values():
        if p.name in BANNED and (name, p.name) not in ALLOWED:
            problems.append(f"{name}: parameter {p.name!r} should be {BANNED[p.name]!r}")
        if p.name in DEFAULTS and p.default is not inspect.Parameter.empty and p.default not in DEFAULTS[p.name]:
            problems.append(f"{name}: {p.name}={p.default!r}, the vocabulary's default is {DEFAULTS[p.name][0]!r}")
        if p.name in DEFAULTS and p.default is inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD:
            problems.append(f"{name}: {p.name} is required; it should default to {DEFAULTS[p.name][0]!r}")
    return problems


@pytest.mark.parametrize("name", public_calls())
def test_public_signatures_use_the_vocabulary(name):
    fn = getattr(gcf, name)
    sig = inspect.signature(fn)
    problems = _check_signature(name, sig)
    if name in TMAX_CALLS:
        p = sig.parameters.get("Tmax")
        if p is None or p.kind is not p.KEYWORD_ONLY or p.default is not None:
            problems.append(f"{name}: Tmax must be a keyword-only argument defaulting to None")
    assert not problems, problems


def test_every_explain_entry_point_is_checked():
    assert {"explain", "explain_group", "explain_groups", "explain_many", "explain_sequence"} <= set(gcf.__all__)


def _options_classes():
    seen, todo = [], list(Options.__subclasses__())
    while todo:
        c = todo.pop()
        if c.__module__.startswith("groupcf.") and c not in seen:
            seen.append(c)
        todo += c.__subclasses__()
    return sorted(seen, key=lambda c: c.__name__)


def test_every_method_has_one_options_class():
    names = {c.__name__ for c in _options_classes()}
    assert {"MaceOptions", "GeCoOptions", "PSOOptions", "ColgenOptions", "CompactOptions"} <= names


@pytest.mark.parametrize("cls", _options_classes(), ids=lambda c: c.__name__)
def test_options_classes_use_the_vocabulary(cls):
    assert cls.__name__.endswith("Options") and dataclasses.is_dataclass(cls)
    assert cls.__dataclass_params__.frozen, f"{cls.__name__} must be frozen"
    fields = {f.name: f for f in dataclasses.fields(cls)}
    problems = [f"{cls.__name__}.{n} should be {BANNED[n]!r}" for n in fields if n in BANNED]
    for n, f in fields.items():
        if n in DEFAULTS and f.default is not dataclasses.MISSING and f.default not in DEFAULTS[n]:
            problems.append(f"{cls.__name__}.{n}={f.default!r}, the vocabulary's default is {DEFAULTS[n][0]!r}")
    assert not problems, problems
    cls()   # the defaults themselves are valid


def test_old_sequence_names_still_work_with_a_warning():
    from groupcf.sequential import SequenceOptions

    with pytest.warns(FutureWarning, match="'target' is renamed 'positive_class'"):
        assert SequenceOptions.from_kwargs(target=0).positive_class == 0


def test_no_params_classes_remain():
    import groupcf.single.geco as geco
    import groupcf.single.pso as pso

    for mod in (geco, pso):
        assert not [n for n in mod.__all__ if n.endswith("Params")]


# ---------------------------------------------------------------- issue 22 item 6: names that leak
def test_dir_shows_no_leaked_helpers():
    public = [n for n in dir(gcf) if not n.startswith("_")]
    assert "annotations" not in public and "logging" not in public
    assert set(gcf.__all__) - {"__version__"} <= set(public)


def test_unknown_solver_is_an_invalid_input():
    import pandas as pd
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from groupcf.exceptions import InvalidInputError

    X = pd.DataFrame({"a": [0, 1, 2, 3, 4, 5], "b": ["u", "v", "u", "v", "u", "v"]})
    pipe = make_pipeline(gcf.FeatureSpace(numeric="passthrough"), LogisticRegression()).fit(X, [0, 0, 0, 1, 1, 1])
    for call in (lambda: gcf.solvers.make_backend("nope"),
                 lambda: gcf.explain(X.iloc[0], pipe, solver="nope"),
                 lambda: gcf.explain_group(X.iloc[:2], pipe, solver="nope")):
        with pytest.raises(InvalidInputError, match="unknown solver 'nope'"):
            call()


def test_audit_and_cli_call_the_bootstrap_n_boot():
    from groupcf.audit import audit
    from groupcf.cli import _parser

    assert "n_boot" in inspect.signature(audit).parameters
    args = _parser().parse_args(["audit", "run.parquet", "--by", "race", "--n-boot", "10"])
    assert args.n_boot == 10


def test_explain_shows_the_options_objects_in_its_signature():
    import typing

    from groupcf.single import explain

    hints = typing.get_type_hints(explain)
    shown = set(typing.get_args(hints["options"]))
    assert {gcf.MaceOptions, gcf.GeCoOptions, gcf.PSOOptions, type(None)} <= shown
