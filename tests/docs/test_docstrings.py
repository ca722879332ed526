"""Every public function and class has a numpydoc docstring (issue 22 item 4), checked by
``numpydoc.validate``, and every example in those docstrings is true (run as a doctest).

The public API is derived, not listed by hand: the names in ``groupcf.__all__`` (a module
there stands for the names in its own ``__all__``) and the ``__all__`` of the public
submodules in :data:`PUBLIC_MODULES`. Functions and classes are validated against
:data:`CODES`; the public methods they define against :data:`METHOD_CODES`; exception
classes (``groupcf.exceptions`` and those exported) need a docstring with a summary (their
constructor is the exception's message). Constants (``DATA_DIR``, ``BACKENDS``, ...) are
documented by a ``#:`` comment, which numpydoc cannot read.

An example is run unless it is marked ``# doctest: +SKIP``, which is kept for examples that
train a real model, solve a MIP for seconds or need an optional extra (Gurobi, Pyomo);
the examples of the options classes, the feature space, datasets and metrics must run."""
from __future__ import annotations

import doctest
import enum
import importlib
import inspect
import types

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

import groupcf as gcf  # noqa: E402
from groupcf.options import Options  # noqa: E402

#: public submodules whose ``__all__`` is public API (besides the modules in ``groupcf.__all__``)
PUBLIC_MODULES = ("groupcf.datasets", "groupcf.metrics", "groupcf.metrics_hd", "groupcf.plaf",
                  "groupcf.features", "groupcf.embeddings", "groupcf.testing", "groupcf.results",
                  "groupcf.options", "groupcf.solvers")

#: numpydoc codes that fail the test: no docstring, no summary, a parameter missing or
#: unknown, no Returns for a function that returns, no Examples
CODES = {"GL08": "no docstring", "SS01": "no summary", "PR01": "parameter not documented",
         "PR02": "unknown parameter documented", "RT01": "no Returns section", "EX01": "no Examples section"}


def _module_names(module: types.ModuleType) -> list[str]:
    return [f"{module.__name__}.{n}" for n in getattr(module, "__all__", ())]


def public_names() -> list[str]:
    """Dotted paths of the public functions and classes (exceptions and constants left out)."""
    paths = [f"groupcf.{n}" for n in gcf.__all__ if not n.startswith("__")]
    for mod_name in PUBLIC_MODULES:
        paths += _module_names(importlib.import_module(mod_name))
    out, seen = [], set()
    for path in paths:
        obj = _resolve(path)
        if isinstance(obj, types.ModuleType):
            out += [p for p in _module_names(obj) if p not in out]
            continue
        out.append(path)
    keep = []
    for path in out:
        obj = _resolve(path)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue            # constants (documented by a #: comment), modules
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            continue            # exceptions: a class docstring, no constructor to document
        if id(obj) in seen:     # the same object exported twice: checked once
            continue
        seen.add(id(obj))
        keep.append(path)
    return keep


def _resolve(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


NAMES = public_names()


def test_the_public_api_is_not_empty():
    assert len(NAMES) > 60
    assert "groupcf.FeatureSpace.inverse_transform" in METHODS and "groupcf.Explanation.summary" in METHODS
    assert "groupcf.explain" in NAMES and "groupcf.datasets.load" in NAMES


def _codes(path: str) -> set[str]:
    obj = _resolve(path)
    if inspect.isclass(obj) and (issubclass(obj, enum.Enum) or getattr(obj, "_is_protocol", False)):
        # an enum's "constructor" is Enum's functional API (value, names, module, ...) and a
        # Protocol has none: their members are documented instead of parameters
        return set(CODES) - {"PR01", "PR02"}
    return set(CODES)


@pytest.mark.parametrize("path", NAMES)
def test_numpydoc(path):
    codes = _codes(path)
    errors = [(c, m) for c, m in numpydoc_validate.validate(path)["errors"] if c in codes]
    assert not errors, f"{path}: " + "; ".join(f"{c} {m}" for c, m in errors)


#: codes checked on public methods (the class's Examples cover them)
METHOD_CODES = {c: CODES[c] for c in ("GL08", "SS01", "PR01", "PR02", "RT01")}


def public_methods() -> list[str]:
    """Public methods the public classes define themselves; an override without a docstring
    of its own is documented by the groupcf base method it overrides (a backend's ``solve``
    by ``Backend.solve``)."""
    out = []
    for path in NAMES:
        cls = _resolve(path)
        if not inspect.isclass(cls) or issubclass(cls, enum.Enum):
            continue
        for name, member in vars(cls).items():
            func = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
            if name.startswith("_") or not inspect.isfunction(func) or not func.__module__.startswith("groupcf"):
                continue
            overrides = any(name in vars(base) for base in cls.__mro__[1:] if base.__module__.startswith("groupcf"))
            if overrides and not func.__doc__:
                continue            # inherits the documented base method's docstring
            out.append(f"{path}.{name}")
    return out


METHODS = public_methods()


@pytest.mark.parametrize("path", METHODS)
def test_numpydoc_methods(path):
    errors = [(c, m) for c, m in numpydoc_validate.validate(path)["errors"] if c in METHOD_CODES]
    assert not errors, f"{path}: " + "; ".join(f"{c} {m}" for c, m in errors)


def _examples(path: str) -> list[doctest.DocTest]:
    obj = _resolve(path)
    finder = doctest.DocTestFinder(recurse=inspect.isclass(obj))   # a class: its methods too
    globs = {"gcf": gcf, "np": importlib.import_module("numpy"), "pd": importlib.import_module("pandas")}
    return [t for t in finder.find(obj, path, globs=globs) if t.examples]


@pytest.mark.parametrize("path", NAMES)
def test_examples_are_true(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)           # an example that writes a file writes it here
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in _examples(path):
        result = runner.run(test)
        assert not result.failed, f"{path}: {result.failed} example(s) failed (see the output above)"


def _cheap(path: str) -> bool:
    """Options classes, the feature space, datasets and metrics: their examples must run."""
    obj = _resolve(path)
    if inspect.isclass(obj) and issubclass(obj, Options):
        return True
    return (path in ("groupcf.Feature", "groupcf.FeatureSpace", "groupcf.InputDomain")
            or path.startswith(("groupcf.datasets.", "groupcf.metrics.", "groupcf.metrics_hd.")))


@pytest.mark.parametrize("path", [n for n in NAMES if _cheap(n)])
def test_cheap_examples_are_run_not_skipped(path):
    ran = [e for t in _examples(path) for e in t.examples if not e.options.get(doctest.SKIP)]
    assert ran, f"{path}: every example is skipped; a cheap example should run"


def _public_modules() -> list[str]:
    mods = ["groupcf", *PUBLIC_MODULES]
    return mods + [f"groupcf.{n}" for n in gcf.__all__ if isinstance(getattr(gcf, n), types.ModuleType)
                   and f"groupcf.{n}" not in mods]


@pytest.mark.parametrize("module", _public_modules())
def test_module_examples_are_true(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mod = importlib.import_module(module)
    globs = {"gcf": gcf, "np": importlib.import_module("numpy"), "pd": importlib.import_module("pandas")}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(recurse=False).find(mod, module, globs=globs):
        assert not runner.run(test).failed, f"{module}: an example of the module docstring failed (see above)"


def _exceptions() -> list[str]:
    import groupcf.exceptions as exc

    paths = [f"groupcf.exceptions.{n}" for n, obj in vars(exc).items()
             if inspect.isclass(obj) and issubclass(obj, (BaseException, Warning)) and obj.__module__ == exc.__name__]
    for mod_name in PUBLIC_MODULES:
        mod = importlib.import_module(mod_name)
        paths += [f"{mod_name}.{n}" for n in getattr(mod, "__all__", ())
                  if inspect.isclass(getattr(mod, n)) and issubclass(getattr(mod, n), BaseException)]
    return sorted(set(paths))


@pytest.mark.parametrize("path", _exceptions())
def test_exceptions_say_when_they_are_raised(path):
    errors = [(c, m) for c, m in numpydoc_validate.validate(path)["errors"] if c in ("GL08", "SS01")]
    assert not errors, f"{path}: " + "; ".join(f"{c} {m}" for c, m in errors)
