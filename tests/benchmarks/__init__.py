"""Tests of the benchmark helpers (benchmarks/*.py), fast and hand-computed."""
