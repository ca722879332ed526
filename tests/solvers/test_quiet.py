"""The HiGHS copyright banner never reaches a user's stdout (pipes, the CLI, workers)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_highs_banner_on_stdout():
    code = ("from groupcf.solvers import make_backend\n"
            "b = make_backend('highs'); x = b.add_vars(1, 0, 1); b.set_objective(x, [1.0], 'max');"
            " print(b.solve().status.value)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert "HiGHS" not in out.stdout, out.stdout
    assert out.stdout.strip() == "optimal"
