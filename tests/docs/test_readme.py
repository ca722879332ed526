"""Every ```python block of README.md runs, in order, in one namespace, in a fresh interpreter
(``tools/run_readme.py``: the bundled datasets, a temporary folder, matplotlib's Agg backend).

A block may be left out only with an explicit ``<!-- skip-test: reason -->`` marker above it;
the markers are counted here, so a skipped block is never silent."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("run_readme", ROOT / "tools" / "run_readme.py")
run_readme = sys.modules.setdefault("run_readme", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(run_readme)

#: blocks run by `make test` (the group and the single-instance examples); the rest run under `slow`
FIRST = 2
#: README blocks allowed to carry a skip-test marker (none today); raise it only with a reason in the README
MAX_SKIPPED = 0


def _run(tmp_path, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")      # two cores shared by the test workers: no BLAS oversubscription
    return subprocess.run([sys.executable, str(ROOT / "tools" / "run_readme.py"), str(ROOT / "README.md"), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)


def _check(proc: subprocess.CompletedProcess, n_expected: int) -> None:
    assert proc.returncode == 0, f"README block failed:\n{proc.stderr[-6000:]}"
    ran = [line for line in proc.stderr.splitlines() if line.startswith("block ") and line.endswith(" s")]
    skipped = [line for line in proc.stderr.splitlines() if line.startswith("block ") and ": skipped (" in line]
    assert len(ran) + len(skipped) == n_expected, proc.stderr[-3000:]


def test_readme_has_python_blocks_and_few_skips():
    blocks = run_readme.readme_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 8
    skipped = [(b.line, b.skip) for b in blocks if b.skip]
    assert len(skipped) <= MAX_SKIPPED, f"README blocks marked skip-test: {skipped}"
    assert not any(b.skip for b in blocks[:FIRST])
    for b in blocks:
        compile(b.code, f"README.md:{b.line}", "exec")     # every block is valid Python


def test_block_parser_honours_skip_markers():
    text = ("intro\n```python\na = 1\n```\n\n<!-- skip-test: needs a cluster -->\n\n```python\nb = a\n```\n"
            "```bash\nmake test\n```\n```python\nc = a + 1\n```\n")
    blocks = run_readme.readme_blocks(text)
    assert [(b.line, b.code, b.skip) for b in blocks] == [
        (2, "a = 1\n", None), (8, "b = a\n", "needs a cluster"), (14, "c = a + 1\n", None)]
    with pytest.raises(ValueError, match="skip-test marker not followed"):
        run_readme.readme_blocks("<!-- skip-test: x -->\ntext\n```python\na = 1\n```\n")
    with pytest.raises(ValueError, match="before a bash block"):
        run_readme.readme_blocks("<!-- skip-test: x -->\n```bash\nls\n```\n")
    with pytest.raises(ValueError, match="never closed"):
        run_readme.readme_blocks("```python\na = 1\n")


def test_runner_names_the_failing_block(tmp_path):
    md = tmp_path / "DOC.md"
    md.write_text("```python\nx = 1\n```\n<!-- skip-test: demo -->\n```python\nraise SystemExit(3)\n```\n"
                  "```python\ny = x + undefined_name\n```\n")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "run_readme.py"), str(md)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "block 1 (DOC.md:5): skipped (demo)" in proc.stderr
    assert "NameError" in proc.stderr and "FAILED: block 2 (DOC.md:8)" in proc.stderr


def test_readme_first_blocks_run(tmp_path):
    """The group and single-instance examples (the first two blocks), as a newcomer pastes them."""
    _check(_run(tmp_path, "--upto", str(FIRST)), FIRST)


@pytest.mark.slow
def test_readme_every_block_runs(tmp_path):
    """Every block, in order, in one namespace (a few minutes on a loaded 2-core machine)."""
    n = len(run_readme.readme_blocks((ROOT / "README.md").read_text(encoding="utf-8")))
    _check(_run(tmp_path), n)
