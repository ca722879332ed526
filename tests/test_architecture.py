"""The package's structural rules (README "Architecture"), checked on every test run.

The import-layer contract itself is checked by import-linter (``make lint``); these are the
rules it cannot express.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "groupcf"
MAX_LINES = 450


def _sources(*folders):
    for folder in folders:
        yield from sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", list(_sources("groupcf")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_the_size_limit(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(ROOT)} has {n} lines (limit {MAX_LINES}): split it"


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
