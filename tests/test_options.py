"""The one options validator (groupcf/options.py) and the shared vocabulary it serves:
types, intervals and choices checked in one place, the nearest valid name suggested for an
unknown option, old names accepted for one release with a FutureWarning."""
from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import ClassVar

import pytest

import groupcf as gcf
from groupcf.exceptions import InvalidInputError
from groupcf.options import Choice, Interval, Options, nearest_names


@dataclass(frozen=True)
class ToyOptions(Options):
    n: int = 5
    rate: float = 0.5
    mode: str = "fast"
    limit: float | None = None

    _constraints: ClassVar[dict] = {
        "n": [Interval(numbers.Integral, 1, None)],
        "rate": [Interval(numbers.Real, 0, 1, closed="right")],
        "mode": [Choice(("fast", "exact"))],
        "limit": [None, Interval(numbers.Real, 0, None, closed="neither")],
    }
    _renamed: ClassVar[dict] = {"k": "n"}


@pytest.mark.parametrize("bad, words", [
    ({"n": 0}, ["'n'", "an integer in [1, inf)", "0"]),
    ({"n": 2.5}, ["'n'", "2.5"]),
    ({"n": True}, ["'n'"]),
    ({"rate": 0.0}, ["'rate'", "(0, 1]"]),
    ({"mode": "slow"}, ["'mode'", "'fast'", "'exact'", "'slow'"]),
    ({"limit": -1}, ["'limit'", "None or a number in (0, inf)"]),
])
def test_values_are_checked_with_what_is_accepted(bad, words):
    with pytest.raises(InvalidInputError) as e:
        ToyOptions(**bad)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_valid_values_pass_including_integral_floats():
    o = ToyOptions(n=3.0, rate=1, mode="exact", limit=2)
    assert o.n == 3.0 and o.rate == 1


def test_unknown_option_names_the_nearest_valid_one():
    with pytest.raises(InvalidInputError) as e:
        ToyOptions.from_kwargs(mdoe="fast", zzz=1)
    msg = str(e.value)
    assert "'mdoe' (did you mean 'mode'?)" in msg and "'zzz'" in msg and "did you mean 'zzz'" not in msg
    assert nearest_names("n_particle", ["n_particles", "inertia"]) == " (did you mean 'n_particles'?)"


def test_old_names_warn_and_work_once_not_twice():
    with pytest.warns(FutureWarning, match="'k' is renamed 'n'"):
        assert ToyOptions.from_kwargs(k=7).n == 7
    with pytest.raises(InvalidInputError, match="both 'k' and its new name 'n'"):
        ToyOptions.from_kwargs(k=7, n=7)


def test_an_options_object_and_keyword_overrides():
    base = ToyOptions(n=2, mode="exact")
    o = ToyOptions.from_kwargs(base, rate=0.25)
    assert (o.n, o.mode, o.rate) == (2, "exact", 0.25) and base.rate == 0.5   # frozen, copied
    with pytest.raises(InvalidInputError, match="must be a ToyOptions"):
        ToyOptions.from_kwargs({"n": 2})


def test_method_options_are_options_and_frozen():
    from groupcf.group import ColgenOptions, CompactOptions
    from groupcf.single import MaceOptions
    from groupcf.single.geco import GeCoOptions
    from groupcf.single.pso import PSOOptions

    for cls in (MaceOptions, GeCoOptions, PSOOptions, ColgenOptions, CompactOptions):
        assert issubclass(cls, Options) and cls.__name__.endswith("Options")
        o = cls()
        with pytest.raises(AttributeError):
            o.__setattr__(cls.field_names()[0] if cls.field_names() else "x", 1)


def test_renamed_classes_and_options_of_the_methods():
    with pytest.warns(FutureWarning, match="GeCoParams is renamed GeCoOptions"):
        from groupcf.single.geco import GeCoParams
    with pytest.warns(FutureWarning, match="'k' is renamed 'n'"):
        assert GeCoParams(k=3).n == 3
    with pytest.warns(FutureWarning, match="PSOParams is renamed PSOOptions"):
        from groupcf.single.pso import PSOParams  # noqa: F401
    with pytest.raises(InvalidInputError, match="did you mean 'n_particles'"):
        from groupcf.single.pso import PSOOptions
        PSOOptions.from_kwargs(n_particle=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gcf.single.MaceOptions(Tmax=None, n=2)


def test_explain_and_explain_group_name_the_nearest_option():
    X = gcf.datasets.load("german").X.head(60)
    with pytest.raises(InvalidInputError, match="did you mean 'time_limit'"):
        gcf.explain(X.iloc[0], None, method="mace", time_limt=3)
    with pytest.raises(InvalidInputError, match="did you mean 'max_iterations'"):
        gcf.explain_group(X, None, Tmax=2, max_iteration=3)
