# groupcf — set-up, demo and tests. `make demo` and `make test` each create/refresh .venv.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
TORCH_PIN := torch==2.13.0
STAMP  := $(VENV)/.installed

.PHONY: venv demo test clean solvers

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

test: $(STAMP)
	$(PY) -m pytest -q tests

# Optional open-source MIP solvers for the pyomo:cbc / pyomo:glpk routes (needs root, Debian).
solvers:
	command -v cbc >/dev/null && command -v glpsol >/dev/null || \
	  (apt-get update -qq && apt-get install -y -qq coinor-cbc glpk-utils)

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
