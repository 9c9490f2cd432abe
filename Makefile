# One entry point for a fresh machine: `make demo`, `make test`, `make bench`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev

.PHONY: demo test bench lint clean venv

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/inferwatch demo --duration $${DURATION:-90}

# two workers: most of the suite waits on real processes and sockets, not on a core
test: $(STAMP)
	$(PY) -m pytest -q -n $${WORKERS:-2}

bench: $(STAMP)
	$(PY) -m pip install -q -e '.[dev,bench]'
	$(PY) benchmarks/run.py --results $(BENCH)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
