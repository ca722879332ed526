"""The package's structural rules (README "Architecture"), checked on every test run.

The import-layer contract itself is checked by import-linter (``make lint``); these are the
rules it cannot express.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "groupcf"
MAX_LINES = 400   # the charter's "~400 lines", counted without docstrings


def _sources(*folders):
    for folder in folders:
        yield from sorted((ROOT / folder).rglob("*.py"))


def _docstring_lines(tree: ast.AST) -> set[int]:
    """Line numbers of the module's, classes' and functions' docstrings."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def code_lines(text: str) -> int:
    """A module's size: its lines without the docstrings (which the numpydoc rule asks to be
    complete: parameters, returns, raises, examples), comments and blank lines included."""
    return len(text.splitlines()) - len(_docstring_lines(ast.parse(text)))


@pytest.mark.parametrize("path", list(_sources("groupcf")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_the_size_limit(path):
    n = code_lines(path.read_text())
    assert n <= MAX_LINES, f"{path.relative_to(ROOT)} has {n} lines besides docstrings (limit {MAX_LINES}): split it"


def test_docstrings_do_not_count_towards_the_size_limit():
    text = 'def f(x):\n    """Summary.\n\n    More.\n    """\n    return x  # a comment\n'
    assert code_lines(text) == 2


def test_only_the_embeddings_read_a_models_internals():
    """Algorithms ask models through the Embedding interface only (score, partial,
    additive, score_bounds, delta_evaluator, add_to): no `.layers` / `is_linear` outside
    groupcf/embeddings/."""
    pattern = re.compile(r"\.layers\b|\bis_linear\b")
    offenders = [f"{p.relative_to(ROOT)}:{i}" for p in _sources("groupcf", "tests", "benchmarks")
                 if PACKAGE / "embeddings" not in p.parents and p.name != Path(__file__).name
                 for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not offenders, f"model internals read outside groupcf/embeddings: {offenders}"


def test_docstrings_cite_papers_not_documents_outside_the_repository():
    offenders = [f"{p.relative_to(ROOT)}:{i}" for p in _sources("groupcf", "benchmarks")
                 for i, line in enumerate(p.read_text().splitlines(), 1) if "design §" in line]
    assert not offenders, offenders


# ------------------------------------------------------------------ model access through the protocol
ALGORITHM_LAYERS = ("group", "single", "sequential", "global_actions", "colgen", "formulations", "results",
                    "batch", "audit", "metrics.py", "metrics_hd.py", "plaf", "cli.py", "demo.py")
#: the protocol itself (and its generic pieces) may be named anywhere
PROTOCOL = {"Embedding", "EmbeddingConstr", "EmbeddingCapabilities", "AdditiveForm", "DeltaEvaluator",
            "SearchProblem", "Incumbent", "SearchStrategy", "Radius"}
#: model classes of the frameworks groupcf embeds
FRAMEWORK_MODELS = {"LogisticRegression", "MLPClassifier", "LinearSVC", "SGDClassifier", "RidgeClassifier",
                    "Perceptron", "DecisionTreeClassifier", "RandomForestClassifier", "ExtraTreesClassifier",
                    "GradientBoostingClassifier", "HistGradientBoostingClassifier", "XGBClassifier",
                    "LGBMClassifier", "Booster", "Module", "Sequential", "Linear"}


def _embedding_names():
    """Classes defined in groupcf/embeddings (model types) and the attributes only some
    embeddings or their constraints have (methods not in the Embedding base class)."""
    import ast

    classes, attrs, base_attrs = set(), set(), set()
    for p in sorted((PACKAGE / "embeddings").rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ClassDef):
                classes.add(node.name)
                names = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
                (base_attrs if node.name == "Embedding" else attrs).update(names)
    return classes - PROTOCOL, attrs - base_attrs - {"__init__", "__repr__"} | {"layers", "trees", "coef_",
                                                                                "estimators_", "input_cells"}


def _algorithm_sources():
    for name in ALGORITHM_LAYERS:
        p = PACKAGE / name
        yield from ([p] if p.suffix == ".py" else sorted(p.rglob("*.py")))


def test_algorithms_reach_models_only_through_the_embedding_protocol():
    """No isinstance on a model type (an embedding class or a framework's model class) and no
    hasattr on a model-specific attribute outside groupcf/embeddings: algorithms read the
    protocol (score, partial, additive, score_bounds, first_crossing, capabilities, ...)."""
    import ast

    classes, attrs = _embedding_names()
    model_names = classes | FRAMEWORK_MODELS
    offenders = []
    for p in _algorithm_sources():
        for node in ast.walk(ast.parse(p.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 2):
                continue
            arg = node.args[1]
            if node.func.id == "isinstance":
                named = {n.id for n in ast.walk(arg) if isinstance(n, ast.Name)} | \
                        {n.attr for n in ast.walk(arg) if isinstance(n, ast.Attribute)}
                if named & model_names:
                    offenders.append(f"{p.relative_to(ROOT)}:{node.lineno} isinstance on {sorted(named & model_names)}")
            elif node.func.id == "hasattr" and isinstance(arg, ast.Constant) and arg.value in attrs:
                offenders.append(f"{p.relative_to(ROOT)}:{node.lineno} hasattr(..., {arg.value!r})")
    assert not offenders, "model-type branches outside groupcf/embeddings: " + "; ".join(offenders)


def test_the_protocol_check_sees_a_branch():
    """The scan above is not vacuous: it knows the embeddings' classes and their extra methods."""
    classes, attrs = _embedding_names()
    assert {"ReLUNetwork", "TreeEnsemble", "LinearModel"} <= classes
    assert {"fix_levels", "input_cells"} <= attrs


#: the searches behind Embedding.incumbent / start_mip / radius (registered by capability)
SEARCH_MODULES = {"net_bound", "tree_bound", "searches"}
SEARCH_FUNCTIONS = {"radius_box", "start_and_radius", "tightened_embedding", "apply_radius", "strategy_for",
                    "registered_searches"}


def _search_offenders(path):
    """Imports of the search modules / functions and reads of the capability that selects a
    search (``line_search``) in one algorithm module."""
    import ast

    out, name = [], path.relative_to(ROOT) if ROOT in path.parents else path.name
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            parts = set((node.module or "").split("."))
            names = {a.name for a in node.names}
            if parts & SEARCH_MODULES or names & (SEARCH_MODULES | SEARCH_FUNCTIONS):
                out.append(f"{name}:{node.lineno} imports {node.module} {sorted(names)}")
        elif isinstance(node, ast.Attribute) and node.attr == "line_search":
            out.append(f"{name}:{node.lineno} reads .line_search")
    return out


def test_algorithms_reach_the_incumbent_search_and_radius_only_through_the_protocol():
    """MACE (and every other algorithm) asks the model for its numpy incumbent, MIP start and
    radius through Embedding.incumbent / start_mip / radius; only the searches themselves
    (groupcf/single/{net_bound,tree_bound,radius,searches}.py, registered by capability) and
    the package's registration import them."""
    allowed = {PACKAGE / "single" / f"{m}.py" for m in SEARCH_MODULES | {"radius"}} | {PACKAGE / "single" / "__init__.py"}
    offenders = [o for p in _algorithm_sources() if p not in allowed for o in _search_offenders(p)]
    assert not offenders, "search reached around the embedding protocol: " + "; ".join(offenders)
    mace = (PACKAGE / "single" / "mace.py").read_text()
    assert ".incumbent(" in mace and ".start_mip(" in mace


def test_the_search_check_sees_a_bypass(tmp_path):
    """The scan above is not vacuous: MACE's former direct calls are flagged."""
    p = tmp_path / "bypass.py"
    p.write_text("from . import net_bound\nfrom .tree_bound import start_and_radius\n"
                 "def f(emb):\n    return emb.capabilities.line_search\n")
    assert len(_search_offenders(p)) == 3


def test_the_protocol_searches_are_registered_by_capability():
    import groupcf.single  # noqa: F401
    from groupcf.embeddings.base import EmbeddingCapabilities
    from groupcf.embeddings.search import registered_searches
    found = registered_searches()
    assert set(found) == {"line_search", "leaf_cells"} <= set(EmbeddingCapabilities.__dataclass_fields__)
