"""Write the user guide pages of the documentation site from README.md (run by `make docs`).

The README is the one place the guide is written; each page is one or more of its sections,
so the site and the README cannot drift apart. The pages are build products (git-ignored).
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOTE = "\n\n*This page is generated from the repository's README.md; edit it there.*\n"

#: page -> README sections (by the start of their title), the first one is the page title
PAGES = {
    "guide/getting-started.md": ["Set-up", "Feature space", "Datasets"],
    "guide/vocabulary.md": ["One vocabulary"],
    "guide/group.md": ["Group counterfactuals"],
    "guide/global.md": ["Global counterfactual actions"],
    "guide/single.md": ["Single-instance example"],
    "guide/sequential.md": ["Sequential counterfactuals"],
    "guide/population.md": ["Explaining a population"],
    "guide/new-model-type.md": ["Supported models", "Architecture"],
}


def sections(readme: str) -> tuple[str, dict[str, str]]:
    """The introduction and ``{title: section text}`` (``## `` headings)."""
    parts = re.split(r"(?m)^## ", readme)
    return parts[0], {p.split("\n", 1)[0]: p for p in parts[1:]}


def find(secs: dict[str, str], prefix: str) -> str:
    for title, text in secs.items():
        if title.startswith(prefix):
            return text
    raise KeyError(f"README.md has no section starting with {prefix!r}")


def slug(title: str) -> str:
    """The anchor Python-Markdown's ``toc`` gives a heading (its default ``slugify``)."""
    value = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def anchors(secs: dict[str, str]) -> dict[str, str]:
    """``{anchor: page}`` for every heading of every generated page."""
    out: dict[str, str] = {}
    for page, prefixes in PAGES.items():
        for prefix in prefixes:
            for title in re.findall(r"(?m)^#*\s*(.+)$", "## " + find(secs, prefix)):
                if title.strip():
                    out.setdefault(slug(title), page)
    return out


def links(text: str, depth: int, where: dict[str, str] | None = None, page: str = "") -> str:
    """Repository links made absolute; the README's in-page anchors point to the page that
    holds the heading (``where``: :func:`anchors`), an anchor on no page to the README."""
    up = "../" * depth
    text = re.sub(r"\]\((BENCHMARKS\.md|CHANGELOG\.md|notebooks/[^)]+)\)",
                  r"](https://example.invalid/groupcf/\1)", text)
    text = re.sub(r"\]\(#architecture\)", f"]({up}guide/new-model-type.md)", text)

    def anchor(m: re.Match[str]) -> str:
        target = (where or {}).get(m.group(1))
        if target is None:
            raise KeyError(f"README.md links to #{m.group(1)}, a heading on no generated page")
        return f"](#{m.group(1)})" if target == page else f"]({up}{target}#{m.group(1)})"

    return re.sub(r"\]\(#([\w-]+)\)", anchor, text)


def main() -> None:
    intro, secs = sections((ROOT / "README.md").read_text())
    where = anchors(secs)
    (DOCS / "guide").mkdir(parents=True, exist_ok=True)
    (DOCS / "index.md").write_text(
        links(intro, 0, where) + "\nStart with [Getting started](guide/getting-started.md), the "
        "[vocabulary](guide/vocabulary.md) and the [API reference](api/explain.md).\n" + NOTE)
    for page, prefixes in PAGES.items():
        body = []
        for i, prefix in enumerate(prefixes):
            text = find(secs, prefix)
            body.append(("# " if i == 0 else "## ") + links(text, page.count("/"), where, page))
        (DOCS / page).write_text("\n".join(body) + NOTE)


if __name__ == "__main__":
    main()
