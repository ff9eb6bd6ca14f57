# Mercury: `make serve` installs and serves the game; `make test` runs the whole suite (lint and types included).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: serve install test lint types pytest bench clean

serve: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_scenario scenarios/mercury
	$(BIN)/python manage.py runserver 127.0.0.1:8000

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

test: install lint types pytest

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

types:
	$(BIN)/mypy mercury simulations bench

pytest:
	MERCURY_OFFLINE_TOKEN_DELAY=0 $(BIN)/pytest

bench: install
	MERCURY_OFFLINE_TOKEN_DELAY=0 $(BIN)/python bench/games.py

clean:
	rm -rf $(VENV) db.sqlite3* test-db.sqlite3* .mypy_cache .ruff_cache .hypothesis
