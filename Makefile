# Two commands matter: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo install inspect bench clean goldens docs

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml ghsim/pyproject.toml
	$(PY) -m pip install -q --upgrade pip >/dev/null 2>&1 || true
	$(PY) -m pip install -q -e '.[test]'
	@# The GitHub emulator (demo, sandbox, tests) is its own distribution, not part of the product.
	$(PY) -m pip install -q --no-deps -e ./ghsim
	touch $(STAMP)

install: $(STAMP)

# Two workers: the suite is CPU-bound and the CI machine has two cores (101 s instead of 150-173 s).
test: $(STAMP)
	$(PY) -m pytest -n 2

# Rewrites every file under tests/golden from the current code (after an intended wording change).
goldens: $(STAMP)
	UPDATE_GOLDEN=1 $(PY) -m pytest -q -p no:cacheprovider -m golden

# Regenerates docs/checks/check_NN.md from each check module's docstring (a test fails when stale).
docs: $(STAMP)
	$(PY) -m checks.docs

demo: $(STAMP)
	$(PY) -m bot demo
	@# REJECTED (exit 1) is this scenario's verdict: the check run and the suggestion are the point.
	$(PY) -m bot demo --scenario suggestion || test $$? -eq 1

inspect: $(STAMP)
	$(PY) -m bot inspect $(or $(REPO),../shared/inferencex)

bench: $(STAMP)
	$(PY) bench/core.py
	$(PY) bench/pareto.py
	$(PY) bench/startup.py
	$(PY) bench/verdict.py
	$(PY) bench/faults.py --runs 100

clean:
	rm -rf $(VENV) build *.egg-info
