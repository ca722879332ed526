"""Run the README's Python blocks, in order, in one namespace (as a reader pastes them).

Used by ``tests/docs/test_readme.py`` (in a fresh interpreter, in a temporary folder, with
matplotlib's Agg backend) and by hand::

    python tools/run_readme.py              # every block
    python tools/run_readme.py --upto 2     # the first two blocks only
    python tools/run_readme.py --list       # the blocks, their lines and skip markers

A block preceded (on the line just above its opening fence, blank lines allowed) by
``<!-- skip-test: reason -->`` is not run; it is listed with its reason. Each block prints one
line ``block i (README.md:line): s seconds`` to standard error; the first block that raises
stops the run with exit code 1 and names the block and its README line.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_FENCE = re.compile(r"^```(\w*)\s*$")
_SKIP = re.compile(r"^<!--\s*skip-test:\s*(.+?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced Python block: its 1-based opening line, its code, and a skip reason."""

    line: int
    code: str
    skip: str | None = None


def readme_blocks(text: str) -> list[Block]:
    """The ```` ```python ```` blocks of a Markdown text, in order, with their skip markers.

    Raises ``ValueError`` on a fence left open or a skip marker not followed by a Python block.
    """
    lines = text.splitlines()
    blocks: list[Block] = []
    pending: tuple[int, str] | None = None      # (line, reason) of a skip marker
    i = 0
    while i < len(lines):
        m = _SKIP.match(lines[i].strip())
        if m:
            pending = (i + 1, m.group(1))
            i += 1
            continue
        fence = _FENCE.match(lines[i])
        if fence:
            start, lang = i, fence.group(1)
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                i += 1
            if i == len(lines):
                raise ValueError(f"README line {start + 1}: a ``` fence is never closed")
            if lang == "python":
                reason = pending[1] if pending else None
                blocks.append(Block(start + 1, "\n".join(lines[start + 1:i]) + "\n", reason))
                pending = None
            elif pending:
                raise ValueError(f"README line {pending[0]}: skip-test marker before a {lang or 'plain'} block")
        elif pending and lines[i].strip():
            raise ValueError(f"README line {pending[0]}: skip-test marker not followed by a python block")
        i += 1
    if pending:
        raise ValueError(f"README line {pending[0]}: skip-test marker at the end of the file")
    return blocks


def run(blocks: list[Block], upto: int | None = None, path: str = "README.md") -> int:
    """Execute ``blocks[:upto]`` (skipping the marked ones) in one namespace; 0 or 1."""
    namespace: dict = {"__name__": "__main__"}
    for k, block in enumerate(blocks[:upto]):
        where = f"block {k} ({path}:{block.line})"
        if block.skip:
            print(f"{where}: skipped ({block.skip})", file=sys.stderr)
            continue
        t0 = time.perf_counter()
        try:
            exec(compile(block.code, f"{path}:block{k}@line{block.line}", "exec"), namespace)
        except BaseException:
            traceback.print_exc()
            print(f"FAILED: {where}", file=sys.stderr)
            return 1
        print(f"{where}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("readme", nargs="?", default=str(ROOT / "README.md"))
    ap.add_argument("--upto", type=int, default=None, help="run only the first UPTO blocks")
    ap.add_argument("--list", action="store_true", help="list the blocks and exit")
    args = ap.parse_args(argv)
    blocks = readme_blocks(Path(args.readme).read_text(encoding="utf-8"))
    if args.list:
        for k, b in enumerate(blocks):
            print(f"block {k}: line {b.line}, {b.code.count(chr(10))} lines" + (f", skip: {b.skip}" if b.skip else ""))
        return 0
    return run(blocks, args.upto, Path(args.readme).name)


if __name__ == "__main__":
    sys.exit(main())
