"""The user guide is generated from README.md (tools/readme_to_docs.py): every in-page anchor of
the README must point to the page that holds its heading once the README is split into pages."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("readme_to_docs", ROOT / "tools" / "readme_to_docs.py")
r2d = importlib.util.module_from_spec(spec)
spec.loader.exec_module(r2d)


def test_slug_is_python_markdowns():
    assert r2d.slug("Your own scikit-learn preprocessing") == "your-own-scikit-learn-preprocessing"
    assert r2d.slug("One vocabulary, one result family") == "one-vocabulary-one-result-family"


def test_every_readme_anchor_reaches_its_page():
    _, secs = r2d.sections((ROOT / "README.md").read_text())
    where = r2d.anchors(secs)
    assert where["your-own-scikit-learn-preprocessing"] == "guide/getting-started.md"
    out = r2d.links("([see](#your-own-scikit-learn-preprocessing))", 1, where, "guide/new-model-type.md")
    assert out == "([see](../guide/getting-started.md#your-own-scikit-learn-preprocessing))"
    same = r2d.links("[x](#your-own-scikit-learn-preprocessing)", 1, where, "guide/getting-started.md")
    assert same == "[x](#your-own-scikit-learn-preprocessing)"
    for page, prefixes in r2d.PAGES.items():      # no README anchor is left dangling
        for prefix in prefixes:
            r2d.links(r2d.find(secs, prefix), page.count("/"), where, page)


def test_an_anchor_to_no_heading_is_an_error():
    with pytest.raises(KeyError, match="#nope"):
        r2d.links("[x](#nope)", 1, {}, "guide/group.md")
