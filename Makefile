# Fabric Advisor. `make run` serves the app; `make test` runs everything CI runs.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
LOCK := requirements-dev.lock
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml $(LOCK) | cksum | cut -d' ' -f1)

.PHONY: help venv compile run worker test check fmt bench bench-sweep bench-whatif load validate audit audit-deps lock clean

help:
	@echo "make run        serve the app at http://127.0.0.1:8000 (embedded, or services when DATABASE_URL and REDIS_URL are set)"
	@echo "make compile    build the engine's hot modules as C extensions (mypyc; every target below does it first; the source runs without it)"
	@echo "make test       lint, types, import contracts and the whole suite on real PostgreSQL, Redis, Celery and Chromium"
	@echo "make bench      engine figures -> bench/results.json; largest adversarial uploads -> bench/parse.json"
	@echo "make bench-sweep sweep throughput with 1 vs 2 worker processes -> bench/sweep.json"
	@echo "make bench-whatif the result page's what-if in Chromium, change to new figures -> bench/whatif.json"
	@echo "make load       60 s load test on loopback -> bench/load.json"
	@echo "make validate   the engine's predictions against published measurements; fails when a fitted or development row leaves its tolerance or the held-out MAE rises >1 point above the committed baseline"
	@echo "make audit      every model x GPU x size through the engine, checked for its properties -> bench/audit.json"
	@echo "make audit-deps pip-audit over the locked dependencies (says so when no vulnerability database is reachable)"
	@echo "make lock       re-resolve requirements*.lock (hashed) from pyproject.toml"

venv: $(STAMP)

# Every dependency comes from the hashed lock (pip refuses a file whose hash differs); the
# project itself is then installed without dependencies. `make lock` re-resolves the locks.
$(STAMP): pyproject.toml $(LOCK)
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) not found; set PYTHON=/path/to/python3.11"; exit 1; }
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes -r $(LOCK)
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

# The engine's hot modules (advisor/engine/compiled.txt) as C extensions, rebuilt when any
# engine source changes (mypyc writes other modules' Final constants into the compiled ones, so
# the build is fresh only for the source it was built from: advisor/engine/build_id.py); a failed
# build leaves the engine on its source, which runs the same answers
# (advisor/engine/_compiled.py decides per process, docs/ARCHITECTURE.md).
ENGINE_BUILD := advisor/engine/compiled.json
ENGINE_SOURCES := $(shell find advisor/engine -name '*.py' -not -path '*/__pycache__/*')

compile: $(ENGINE_BUILD)

$(ENGINE_BUILD): $(STAMP) advisor/engine/compiled.txt scripts/compile_engine.py $(ENGINE_SOURCES)
	@$(PY) scripts/compile_engine.py || echo "make compile: not built, the engine runs from its source"

# Extras stay in the locks (--no-strip-extras): pip's hash-checking mode takes a dependency's
# "cachecontrol[filecache]>=0.13" as a requirement of its own, and a stripped lock could not be
# installed once cachecontrol 0.15.0 was published (fresh-clone CI, 2026-12-07).
lock:  # uses the venv's uv (a dev dependency); the first lock was made the same way
	$(VENV)/bin/uv pip compile pyproject.toml --extra dev --generate-hashes --universal \
	  --python-version 3.11 --index-url https://pypi.org/simple --quiet --no-strip-extras \
	  -o requirements-dev.lock
	$(VENV)/bin/uv pip compile pyproject.toml --generate-hashes --universal \
	  --python-version 3.11 --index-url https://pypi.org/simple --quiet --no-strip-extras \
	  --constraint requirements-dev.lock -o requirements.lock

audit-deps: venv
	$(PY) scripts/audit_deps.py

run: venv compile
	@bash scripts/run.sh

worker: venv compile
	$(VENV)/bin/celery -A advisor.celery worker --loglevel=INFO --concurrency=2

check: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy advisor api frontend
	$(VENV)/bin/lint-imports

test: venv check compile
	@bash scripts/with_services.sh bash scripts/test.sh

fmt: venv
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: venv compile
	$(PY) bench/engine_bench.py
	$(PY) bench/parse_bench.py

bench-sweep: venv compile
	@bash scripts/with_services.sh $(PY) bench/sweep_bench.py

bench-whatif: venv compile
	@bash scripts/with_services.sh $(PY) bench/whatif_bench.py

validate: venv compile
	$(PY) -m advisor.engine validate

audit: venv compile
	$(PY) bench/audit.py

load: venv compile
	@bash scripts/with_services.sh bash scripts/load.sh

clean:
	@[ ! -x $(PY) ] || $(PY) scripts/compile_engine.py --clean
	rm -rf $(VENV) staticfiles .mypy_cache .ruff_cache .pytest_cache test-output
