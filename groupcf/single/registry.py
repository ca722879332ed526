"""Registry of single-instance methods for :func:`groupcf.explain`.

Each method declares its options as a dataclass; :func:`check_options` rejects an option
the method does not take, naming it and the accepted ones. A new method adds itself with
one :func:`register_method` call.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..exceptions import InvalidInputError
from ..options import nearest_names

if TYPE_CHECKING:  # pragma: no cover
    from ..results.explanation import Explanation

#: options every method takes (model resolution)
COMMON_OPTIONS = ("space", "threshold")


@dataclass(frozen=True)
class MethodSpec:
    """One registered method: ``function(x, model, **options)`` returns an
    :class:`~groupcf.results.explanation.Explanation`; ``options_cls`` is the dataclass
    declaring its options; ``extra`` lists further keyword arguments it takes."""

    name: str
    function: Callable[..., Explanation]
    options_cls: type
    needs_data: bool = False
    extra: tuple[str, ...] = field(default_factory=tuple)

    @property
    def accepted(self) -> list[str]:
        names = [f.name for f in dataclasses.fields(self.options_cls)]
        return list(dict.fromkeys([*names, *self.extra, *COMMON_OPTIONS]))


_METHODS: dict[str, MethodSpec] = {}


def register_method(name: str, function, options_cls: type, needs_data: bool = False,
                    extra: tuple[str, ...] = ()) -> MethodSpec:
    """Register (or replace) a method for ``gcf.explain(..., method=name)``."""
    if not dataclasses.is_dataclass(options_cls):
        raise TypeError(f"options_cls of method {name!r} must be a dataclass")
    spec = MethodSpec(name, function, options_cls, needs_data, tuple(extra))
    _METHODS[name] = spec
    return spec


def methods() -> list[str]:
    """Names of the registered methods."""
    return list(_METHODS)


def get_method(name: str) -> MethodSpec:
    """The registered method ``name`` (``InvalidInputError`` naming the available ones)."""
    try:
        return _METHODS[name]
    except KeyError:
        raise InvalidInputError(f"unknown method {name!r}; available: {methods()}") from None


def check_options(name: str, options: dict) -> MethodSpec:
    """The method's spec, after checking that it takes every key of ``options``;
    raises :class:`InvalidInputError` naming the others and listing the accepted ones."""
    spec = get_method(name)
    accepted = spec.accepted
    renamed = getattr(spec.options_cls, "_renamed", {})
    bad = [k for k in options if k not in accepted and k not in renamed and k != "options"]
    if bad:
        other = [m for m, s in _METHODS.items() if m != name and all(k in s.accepted for k in bad)]
        hint = f" (they apply to method={other[0]!r})" if other else ""
        named = ", ".join(f"{k!r}{nearest_names(k, accepted)}" for k in bad)
        raise InvalidInputError(
            f"method={name!r} does not take option(s) {named}{hint}; its options are: {sorted(accepted)}")
    obj = options.get("options")
    if obj is not None and not isinstance(obj, spec.options_cls):
        raise InvalidInputError(f"method={name!r} takes options={spec.options_cls.__name__}(...), "
                                f"got {type(obj).__name__}")
    return spec
