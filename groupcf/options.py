"""One validator for every method's options.

Each method declares its options once, as a frozen dataclass subclassing :class:`Options`,
with the rules of each field in ``_constraints`` (in the style of scikit-learn's
``validate_params``: types, intervals, choices). :meth:`Options.from_kwargs` builds one from
keywords or from an options object plus keyword overrides, and it is the single place that

* rejects an unknown option, naming the nearest valid one (``"n_particle"`` → did you mean
  ``"n_particles"``?);
* accepts a renamed option for one release with a :class:`FutureWarning` (``k`` → ``n``,
  ``seed`` → ``random_state``, ...);
* checks every value against its rules, naming the option, the value and what is accepted.

scikit-learn's own validator lives in a private module (``sklearn.utils._param_validation``)
whose interface changes between releases, hence this small one.
"""
from __future__ import annotations

import dataclasses
import difflib
import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from .exceptions import InvalidInputError

__all__ = ["Interval", "Options", "Choice", "check_value", "nearest_names", "rename_deprecated"]

O = TypeVar("O", bound="Options")  # noqa: E741


@dataclass(frozen=True)
class Interval:
    """A number of ``kind`` (``numbers.Integral`` or ``numbers.Real``) in an interval.

    A rule of :attr:`Options._constraints` (see :func:`check_value`).

    Parameters
    ----------
    kind : type
        ``numbers.Integral`` (an integral float such as ``5.0`` is accepted too) or
        ``numbers.Real``; ``bool`` is never accepted.
    low, high : float or None, default None
        The bounds (``None``: unbounded).
    closed : {"both", "left", "right", "neither"}, default "both"
        Which bounds belong to the interval.

    Examples
    --------
    >>> import numbers
    >>> from groupcf.options import Interval
    >>> rule = Interval(numbers.Real, 0, 1, closed="neither")
    >>> str(rule), rule.accepts(0.5), rule.accepts(1), rule.accepts(True)
    ('a number in (0, 1)', True, False, False)
    >>> Interval(numbers.Integral, 1).accepts(5.0)
    True
    """

    kind: type
    low: float | None = None
    high: float | None = None
    closed: str = "both"

    def accepts(self, v: Any) -> bool:
        """Whether ``v`` satisfies the rule.

        Parameters
        ----------
        v : object
            The value.

        Returns
        -------
        bool
            True when accepted.
        """
        # an integral float (e.g. 5.0) is accepted where an int is asked for
        integral_float = (self.kind is numbers.Integral and isinstance(v, numbers.Real)
                          and not isinstance(v, bool) and float(v).is_integer())
        if (isinstance(v, bool) or not isinstance(v, self.kind)) and not integral_float:
            return False
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and (v < self.low or (v == self.low and not left)):
            return False
        return not (self.high is not None and (v > self.high or v == self.high and not right))

    def __str__(self) -> str:
        what = "an integer" if self.kind is numbers.Integral else "a number"
        if self.low is None and self.high is None:
            return what
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        lb = "[" if self.closed in ("both", "left") and self.low is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        return f"{what} in {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class Choice:
    """One of a fixed set of values (strings, usually).

    A rule of :attr:`Options._constraints` (see :func:`check_value`).

    Parameters
    ----------
    values : tuple
        The accepted values.

    Examples
    --------
    >>> from groupcf.options import Choice
    >>> rule = Choice(("seed", "mip"))
    >>> str(rule), rule.accepts("mip"), rule.accepts("lp")
    ("one of 'seed', 'mip'", True, False)
    """

    values: tuple[Any, ...]

    def accepts(self, v: Any) -> bool:
        """Whether ``v`` satisfies the rule.

        Parameters
        ----------
        v : object
            The value.

        Returns
        -------
        bool
            True when accepted.
        """
        try:
            return v in self.values
        except TypeError:
            return False

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


def _describe(rule: Any) -> str:
    if rule is None:
        return "None"
    if isinstance(rule, type):
        return {bool: "True or False", str: "a string", dict: "a dict"}.get(rule, rule.__name__)
    if callable(rule) and not isinstance(rule, (Interval, Choice)):
        return str(getattr(rule, "__doc__", None) or getattr(rule, "__name__", "valid"))
    return str(rule)


def _accepts(rule: Any, v: Any) -> bool:
    if rule is None:
        return v is None
    if isinstance(rule, (Interval, Choice)):
        return rule.accepts(v)
    if isinstance(rule, type):
        if rule is bool:
            return isinstance(v, (bool,)) or type(v).__name__ == "bool_"
        return isinstance(v, rule)
    if callable(rule):
        return bool(rule(v))
    raise TypeError(f"unknown rule {rule!r}")


def check_value(owner: str, name: str, value: Any, rules: list[Any]) -> None:
    """Raise :class:`InvalidInputError` unless ``value`` satisfies one of ``rules``.

    Parameters
    ----------
    owner : str
        Who checks (the options class or the call), for the message.
    name : str
        The option's name, for the message.
    value : object
        The value to check.
    rules : list
        Accepted rules: ``None`` (the value ``None``), a type, an :class:`Interval`, a
        :class:`Choice` or a predicate (its docstring or name describes it).

    Raises
    ------
    InvalidInputError
        No rule accepts ``value``; the message names the option, the value and what is
        accepted.

    Examples
    --------
    >>> import numbers
    >>> from groupcf.options import Interval, check_value
    >>> check_value("MyOptions", "n", 3, [Interval(numbers.Integral, 1)])
    >>> check_value("MyOptions", "n", 0, [None, Interval(numbers.Integral, 1)])
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: MyOptions: option 'n' must be None or an integer in [1, inf); got 0
    """
    if any(_accepts(r, value) for r in rules):
        return
    accepted = " or ".join(_describe(r) for r in rules)
    raise InvalidInputError(f"{owner}: option {name!r} must be {accepted}; got {value!r}")


def nearest_names(name: str, valid: Any) -> str:
    """`` (did you mean 'x'?)`` for the closest valid name, or an empty string.

    Parameters
    ----------
    name : str
        The unknown name.
    valid : iterable of str
        The valid names.

    Returns
    -------
    str
        The hint, to append to an error message.

    Examples
    --------
    >>> from groupcf.options import nearest_names
    >>> nearest_names("n_particle", ["n_particles", "inertia"])
    " (did you mean 'n_particles'?)"
    >>> nearest_names("xyz", ["n_particles"])
    ''
    """
    close = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def rename_deprecated(owner: str, kwargs: dict[str, Any], renamed: dict[str, str], stacklevel: int = 3) -> dict[str, Any]:
    """``kwargs`` with old names mapped to new ones, with a :class:`FutureWarning` each.

    Parameters
    ----------
    owner : str
        Who renames (the options class or the call), for the messages.
    kwargs : dict
        The keywords as given.
    renamed : dict
        Old name -> new name.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn` (the user's line).

    Returns
    -------
    dict
        A copy of ``kwargs`` with the new names.

    Raises
    ------
    InvalidInputError
        Both an old name and its new name were given.

    Examples
    --------
    >>> import warnings
    >>> from groupcf.options import rename_deprecated
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     rename_deprecated("explain", {"k": 3, "Tmax": 2}, {"k": "n"})
    {'Tmax': 2, 'n': 3}
    >>> caught[0].category.__name__
    'FutureWarning'
    """
    out = dict(kwargs)
    for old, new in renamed.items():
        if old in out:
            if new in out:
                raise InvalidInputError(f"{owner}: got both {old!r} and its new name {new!r}; pass only {new!r}")
            warnings.warn(f"{owner}: option {old!r} is renamed {new!r}; the old name will stop working "
                          "in the next release", FutureWarning, stacklevel=stacklevel)
            out[new] = out.pop(old)
    return out


@dataclass(frozen=True)
class Options:
    """Base of every method's options dataclass.

    Subclasses are frozen dataclasses declaring

    * ``_constraints``: field name → list of accepted rules (``None``, a type, an
      :class:`Interval`, a :class:`Choice` or a predicate); a field without rules is not
      checked here (its method checks it);
    * ``_renamed``: old option name → new name, accepted with a :class:`FutureWarning`.

    Values are checked when the object is created, so an invalid options object cannot
    exist.

    See Also
    --------
    groupcf.MaceOptions, groupcf.GeCoOptions, groupcf.PSOOptions, groupcf.ColgenOptions :
        the methods' options.

    Examples
    --------
    >>> import numbers
    >>> from dataclasses import dataclass
    >>> from typing import ClassVar
    >>> from groupcf.options import Interval, Options
    >>> @dataclass(frozen=True)
    ... class MyOptions(Options):
    ...     n_rounds: int = 10
    ...     _constraints: ClassVar[dict] = {"n_rounds": [Interval(numbers.Integral, 1)]}
    ...     _renamed: ClassVar[dict] = {"rounds": "n_rounds"}
    >>> MyOptions.from_kwargs(n_rounds=3)
    MyOptions(n_rounds=3)
    >>> MyOptions.from_kwargs(n_round=3)
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: MyOptions does not take option(s) 'n_round' (did you mean 'n_rounds'?); ...
    >>> MyOptions(n_rounds=0)
    Traceback (most recent call last):
    ...
    groupcf.exceptions.InvalidInputError: MyOptions: option 'n_rounds' must be an integer in [1, inf); got 0
    """

    _constraints: ClassVar[dict[str, list[Any]]] = {}
    _renamed: ClassVar[dict[str, str]] = {}

    def __post_init__(self) -> None:
        owner = type(self).__name__
        for name, rules in self._constraints.items():
            check_value(owner, name, getattr(self, name), rules)

    @classmethod
    def field_names(cls) -> list[str]:
        """Names of the options."""
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def unknown_message(cls, unknown: list[str], owner: str | None = None, extra: tuple[str, ...] = ()) -> str:
        """The message naming unknown options and the nearest valid ones.

        Parameters
        ----------
        unknown : list of str
            The unknown names.
        owner : str or None, default None
            Who was given them (``None``: the class name).
        extra : tuple of str, default ()
            Valid names beyond the fields (the call's own arguments).

        Returns
        -------
        str
            The message.
        """
        valid = [*cls.field_names(), *extra]
        parts = [f"{u!r}{nearest_names(u, valid)}" for u in unknown]
        return (f"{owner or cls.__name__} does not take option(s) {', '.join(parts)}; "
                f"its options are: {sorted(valid)}")

    @classmethod
    def from_kwargs(cls: type[O], options: O | None = None, owner: str | None = None,
                    stacklevel: int = 4, **kwargs: Any) -> O:
        """Options from an ``options`` object (or the defaults) updated by ``kwargs``.

        Old names in ``kwargs`` are renamed with a :class:`FutureWarning`; every value is
        checked.

        Parameters
        ----------
        options : Options or None, default None
            An object of this class to start from (``None``: the defaults).
        owner : str or None, default None
            Who asks (the method or call), for the messages (``None``: the class name).
        stacklevel : int, default 4
            Of the :class:`FutureWarning` of a renamed option.
        **kwargs
            Option values by name.

        Returns
        -------
        Options
            An object of this class.

        Raises
        ------
        InvalidInputError
            ``options`` of another class, an unknown name (the nearest valid one is named), a
            renamed option given with its new name, or an invalid value.
        """
        owner = owner or cls.__name__
        if options is not None and not isinstance(options, cls):
            raise InvalidInputError(f"{owner}: options must be a {cls.__name__}, got {type(options).__name__}")
        kwargs = rename_deprecated(owner, kwargs, cls._renamed, stacklevel=stacklevel)
        unknown = [k for k in kwargs if k not in cls.field_names()]
        if unknown:
            raise InvalidInputError(cls.unknown_message(unknown, owner))
        if options is None:
            return cls(**kwargs)
        return dataclasses.replace(options, **kwargs) if kwargs else options

    def to_dict(self) -> dict[str, Any]:
        """The options as a plain dict.

        Returns
        -------
        dict
            Field name -> value.
        """
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


#: rules shared by the vocabulary
TMAX = [None, Interval(numbers.Integral, 1, None)]
TIME_LIMIT = [None, Interval(numbers.Real, 0, None, closed="neither")]
N = [Interval(numbers.Integral, 1, None)]
PROBABILITY = [Interval(numbers.Real, 0, 1, closed="neither")]


def deprecated_aliases(module: str, aliases: dict[str, type[Options]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving old class names for one release: accessing one warns
    (:class:`FutureWarning`) and gives a factory that builds the new options class from
    keywords (old option names included)."""

    def __getattr__(name: str) -> Any:
        if name not in aliases:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new = aliases[name]
        warnings.warn(f"{name} is renamed {new.__name__}; the old name will stop working in the next release",
                      FutureWarning, stacklevel=2)

        def factory(**kwargs: Any) -> Options:
            return new.from_kwargs(owner=new.__name__, **kwargs)

        factory.__name__ = name
        factory.__doc__ = f"Deprecated alias of :class:`{new.__name__}`."
        return factory

    return __getattr__


def positional_tmax(owner: str, args: tuple[Any, ...], Tmax: Any) -> Any:
    """``Tmax`` given positionally (the old signature) or as a keyword: positionally still
    works for one release, with a :class:`FutureWarning`."""
    if not args:
        return Tmax
    if len(args) > 1:
        raise TypeError(f"{owner}() takes Tmax as its only extra positional argument; got {len(args)}")
    if Tmax is not None:
        raise TypeError(f"{owner}() got Tmax both positionally and as a keyword")
    warnings.warn(f"{owner}: pass Tmax as a keyword (Tmax={args[0]!r}); positional Tmax will stop working "
                  "in the next release", FutureWarning, stacklevel=3)
    return args[0]
