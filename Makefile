# groupcf — set-up, demo and tests. `make demo` and `make test` each create/refresh .venv.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
TORCH_PIN := torch==2.13.0
STAMP  := $(VENV)/.installed

.PHONY: venv demo test test-all lint clean solvers

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# torch pinned first: an unpinned torch would pull several GB of CUDA packages
	$(PIP) install -q "$(TORCH_PIN)"
	$(PIP) install -q -e ".[all]"
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) -m groupcf.demo

# the linter and the layer contract (pyproject.toml [tool.ruff], [tool.importlinter]) run first
lint: $(STAMP)
	$(VENV)/bin/ruff check groupcf tests benchmarks tools
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

.PHONY: typecheck
typecheck: $(STAMP)
	$(VENV)/bin/mypy

# make test: everything but the long sweeps marked slow (< 5 min on 2 cores), on two pytest-xdist
# workers, whole files per worker (module fixtures are built once); make test-all: make test, then the
# slow sweeps (CI runs it)
test: lint
	$(PY) -m pytest -q -m "not slow" -n 2 --dist loadfile --durations=25 tests

# API reference + user guide (mkdocs + mkdocstrings, the notebooks with their stored outputs);
# warnings are errors (strict). The guide pages are generated from README.md.
.PHONY: docs
docs: $(STAMP)
	$(PIP) install -q -e ".[docs]"
	$(PY) tools/readme_to_docs.py
	$(VENV)/bin/mkdocs build --strict

.PHONY: test-all
test-all: test
	$(PY) -m pytest -q -m slow -n 2 tests    # CPU-bound sweeps: two workers (pytest-xdist)

# Single-instance benchmark: MACE, GeCo, DiCE (extra `bench`); quick run: make bench-single BENCH_ARGS="--n 20"
.PHONY: bench-single
bench-single: $(STAMP)
	$(PIP) install -q -e ".[bench]"
	$(PY) benchmarks/single.py $(BENCH_ARGS)

# The one-for-many paper's 64 configurations (Tables 4-9); the authors' data files are read
# from $$GROUPCF_DATA (default ../shared/data/paper). Quick run: make bench-paper PAPER_ARGS="--datasets compas"
PAPER_DATA ?= $(abspath ../shared/data/paper)
.PHONY: bench-paper
bench-paper: $(STAMP)
	$(PIP) install -q -e ".[bench]"
	GROUPCF_DATA=$${GROUPCF_DATA:-$(PAPER_DATA)} $(PY) benchmarks/paper.py --methods colgen compact --time-limit 300 --out benchmarks/results/paper.csv $(PAPER_ARGS)

# Independent check of the logistic-regression y* in benchmarks/results/paper.csv (plain enumeration + scipy milp)
.PHONY: verify-paper-lr
verify-paper-lr: $(STAMP)
	GROUPCF_DATA=$${GROUPCF_DATA:-$(PAPER_DATA)} $(PY) benchmarks/verify_lr.py --results benchmarks/results/paper.csv

# Optional open-source MIP solvers for the pyomo:cbc / pyomo:glpk routes (needs root, Debian).
solvers:
	command -v cbc >/dev/null && command -v glpsol >/dev/null || \
	  (apt-get update -qq && apt-get install -y -qq coinor-cbc glpk-utils)

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info

# MD-PSO (method="pso") on the four datasets of Shekhar et al. 2023, read from $$MDPSO_DATA (default
# ../shared/data/mdpso): the tuning protocol (grid on tuning queries -> benchmarks/results/pso_tuning*.csv),
# then the defaults on evaluation queries. Quick run: make bench-pso PSO_ARGS="--splits 1 --model-seeds 1"
MDPSO_DATA ?= $(abspath ../shared/data/mdpso)
.PHONY: bench-pso
bench-pso: $(STAMP)
	$(PIP) install -q -e ".[bench]"
	$(PY) benchmarks/pso.py tune --data-dir $(MDPSO_DATA) $(PSO_ARGS)
	$(PY) benchmarks/pso.py evaluate --data-dir $(MDPSO_DATA) --methods pso mace-mad $(PSO_ARGS)

# Sequential counterfactuals (Naumann & Ntoutsi 2021) on the authors' models and start instances,
# read from $$GROUPCF_CSCF_DATA (default ../shared/data/cscf). Quick run: make bench-sequential SEQ_ARGS="--n 5"
CSCF_DATA ?= $(abspath ../shared/data/cscf)
.PHONY: bench-sequential
bench-sequential: $(STAMP)
	$(PY) benchmarks/sequential.py --dataset adult --methods scf cscf --data-dir $${GROUPCF_CSCF_DATA:-$(CSCF_DATA)} $(SEQ_ARGS)
	$(PY) benchmarks/sequential.py --dataset german --methods scf --data-dir $${GROUPCF_CSCF_DATA:-$(CSCF_DATA)} $(SEQ_ARGS)

# Population-scale explain_many benchmark (issue 13); quick run: make bench-scale SCALE_ARGS="--n 200"
.PHONY: bench-scale
bench-scale: $(STAMP)
	$(PY) benchmarks/scale.py $(SCALE_ARGS)

# Group counterfactuals at population scale (issue 14): datasets x LR/MLP x |S| x Tmax, 300 s each.
# Quick run: make bench-group-scale SCALE_ARGS="--datasets credit --models lr --sizes 500 --tmax 3"
.PHONY: bench-group-scale
bench-group-scale: $(STAMP)
	GROUPCF_DATA=$${GROUPCF_DATA:-$(PAPER_DATA)} $(PY) benchmarks/scale_group.py --time-limit 300 $(SCALE_ARGS)

# Tree ensembles' acceptance check (issue 11): MACE (l1) on Adult, RandomForest 100x8, 20 rejected
# rows, against GeCo and the best single-feature change. Quick run: make bench-trees TREES_ARGS="--n 5"
.PHONY: bench-trees
bench-trees: $(STAMP)
	$(PY) benchmarks/trees_adult.py --out benchmarks/results/trees_adult.csv $(TREES_ARGS)

# Global counterfactual actions (issue 23): groupcf's explain_global beside GLOBE-CE (and AReS), one
# scorer (benchmarks/global_scorer.py). GLOBE-CE runs from a local checkout (no licence: never copied):
# GLOBECE_PATH=/path/to/GLOBE-CE. Quick run: make bench-global GLOBAL_ARGS="--tmax 2 --k 1 2 3"
.PHONY: bench-global
bench-global: $(STAMP)
	$(PY) benchmarks/global_actions.py --datasets german --models lr $(if $(GLOBECE_PATH),--globece $(GLOBECE_PATH)) $(GLOBAL_ARGS)

# Global actions at scale (issue 23 targets): Adult, the curve k = 1..10 in one call, timed (wall and CPU).
# Quick run: make bench-global-scale GLOBAL_SCALE_ARGS="--runs lr:200"
.PHONY: bench-global-scale
bench-global-scale: $(STAMP)
	$(PY) benchmarks/global_scale.py $(GLOBAL_SCALE_ARGS)
