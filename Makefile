# The two commands: `make run` and `make test` (see README.md); `make bench` compares
# this service with the reference server (bench/run.sh, docs/performance.md).
SHELL := /bin/bash
# Python 3.11 or newer (pyproject.toml): python3.11, the version the suite is run
# on, when there is one; else the first of python3, python3.13, python3.12 that is new enough.
PYTHON ?= $(shell for p in python3.11 python3 python3.13 python3.12; do \
	command -v $$p >/dev/null && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	2>/dev/null && command -v $$p && break; done)
VENV := .venv
REF_VENV := .venv-ref
REF_SERVER_VENV := .venv-bench-ref
REF_TESTS_VENV := .venv-ref-tests
PG_URL := $(or $(DATABASE_URL),postgres://postgres@127.0.0.1:5432/postgres)
SQLITE_TEST_URL := sqlite:///$(CURDIR)/var/test.sqlite3
PYTEST_WORKERS ?= 2

.PHONY: run test lint test-postgres test-sqlite test-typescript test-browser test-long bench clean \
	test-consistency \
	host-test host-browser host-typescript

# What the tests need on this machine (Debian packages, Redis): installed and started
# by tests/host_setup.sh, loudly, when running as root; otherwise it stops at once
# and prints the one command to run.
host-test:
	@PYTHON=$(PYTHON) bash tests/host_setup.sh test
host-browser:
	@CHROMIUM=$(CHROMIUM) bash tests/host_setup.sh browser

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $@

# The reference client lives in its own environment: its package is also
# called `powercontext` and must never shadow ours.
$(REF_VENV)/.installed:
	$(PYTHON) -m venv $(REF_VENV)
	$(REF_VENV)/bin/pip install --quiet --upgrade pip
	$(REF_VENV)/bin/pip install --quiet 'powercontext[client]==1.4.1'
	touch $@

# The reference server, for the import test (tests/compat/test_import_reference.py),
# tests/mcp/test_reference_tools.py (its tools/list) and `make bench` (which
# installs the same environment itself when it is missing).
$(REF_SERVER_VENV)/.installed:
	$(PYTHON) -m venv $(REF_SERVER_VENV)
	$(REF_SERVER_VENV)/bin/pip install --quiet --upgrade pip
	$(REF_SERVER_VENV)/bin/pip install --quiet 'powercontext[server,cli]==1.4.1'
	touch $@

# The reference's own test suite (tests/compat/test_reference_suite.py) runs from its
# sdist (pinned by version and SHA-256, cached and unpacked under var/reference-sdist
# by tests/compat/reference_tests/sdist.py) in an environment of its own: the tests
# import the reference package, which must never meet ours (decision 0034).
$(REF_TESTS_VENV)/.installed:
	$(PYTHON) -m venv $(REF_TESTS_VENV)
	$(REF_TESTS_VENV)/bin/pip install --quiet --upgrade pip
	$(REF_TESTS_VENV)/bin/pip install --quiet 'powercontext[server,cli]==1.4.1' \
		'pytest==9.2.0' 'time-machine==3.5.0'
	$(REF_TESTS_VENV)/bin/python tests/compat/reference_tests/sdist.py
	touch $@

# The env file (.env, or POWERCONTEXT_ENV_FILE) is read by every step; the local
# settings are forced. localsetup prints URLs for POWERCONTEXT_BIND, as the server binds.
run: $(VENV)/.installed
	@mkdir -p var
	@export DJANGO_SETTINGS_MODULE=powercontext.settings.local; \
	$(VENV)/bin/python manage.py migrate --noinput -v 0 && \
	$(VENV)/bin/python manage.py collectstatic --noinput -v 0 && \
	$(VENV)/bin/python manage.py localsetup && \
	exec $(VENV)/bin/python -m powercontext.serve

lint: $(VENV)/.installed
	@mkdir -p var
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	DJANGO_SETTINGS_MODULE=powercontext.settings.test DATABASE_URL=$(SQLITE_TEST_URL) \
		$(VENV)/bin/python manage.py makemigrations --check --dry-run

test: host-test $(VENV)/.installed $(REF_VENV)/.installed $(REF_SERVER_VENV)/.installed \
		$(REF_TESTS_VENV)/.installed
	@$(VENV)/bin/python tests/check_postgres.py "$(PG_URL)"
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory test-postgres
	$(MAKE) --no-print-directory test-sqlite
	$(MAKE) --no-print-directory test-typescript

test-postgres: $(VENV)/.installed $(REF_VENV)/.installed $(REF_SERVER_VENV)/.installed \
		$(REF_TESTS_VENV)/.installed
	DATABASE_URL=$(PG_URL) $(VENV)/bin/pytest -n $(PYTEST_WORKERS) -p no:cacheprovider \
		-m "not console and not alone"
	DATABASE_URL=$(PG_URL) $(VENV)/bin/pytest -p no:cacheprovider -m "alone and not console"

test-sqlite: $(VENV)/.installed $(REF_SERVER_VENV)/.installed
	@mkdir -p var
	DATABASE_URL=$(SQLITE_TEST_URL) $(VENV)/bin/pytest -n $(PYTEST_WORKERS) -p no:cacheprovider \
		-m "not postgres and not console"

# The TypeScript client (clients/typescript, docs/hosts.md): Node's test runner against
# a live server that the tests start (tests/live_server.py), on PostgreSQL and on
# SQLite. Needs node >= 18.19 and npm: tests/host_setup.sh installs Debian's nodejs
# and npm when missing as root (announced); otherwise it stops with the command to run.
TS_CLIENT := clients/typescript
host-typescript:
	@bash tests/host_setup.sh typescript
test-typescript: host-typescript $(VENV)/.installed
	cd $(TS_CLIENT) && npm ci --no-audit --no-fund --loglevel=error
	cd $(TS_CLIENT) && npm run --silent typecheck
	cd $(TS_CLIENT) && POWERCONTEXT_TEST_DATABASE_URL=$(PG_URL) npm test --silent
	cd $(TS_CLIENT) && POWERCONTEXT_TEST_DATABASE_URL=$(SQLITE_TEST_URL) npm test --silent

# The admin audit console (tests/console): Playwright drives Debian's chromium
# (CHROMIUM, default /usr/bin/chromium; make installs Debian's chromium when root)
# against a live server, screenshots land in var/screenshots/; then every console
# page is timed at a million Sources on PostgreSQL (seeding takes one to two
# minutes; the figures land in var/console-timings.txt).
CHROMIUM ?= /usr/bin/chromium
test-browser: host-browser $(VENV)/.installed
	@$(VENV)/bin/python tests/check_postgres.py "$(PG_URL)"
	$(VENV)/bin/python -c 'import playwright' 2>/dev/null || $(VENV)/bin/pip install --quiet -e '.[browser]'
	@mkdir -p var/screenshots
	POWERCONTEXT_CHROMIUM=$(CHROMIUM) DATABASE_URL=$(PG_URL) $(VENV)/bin/pytest -p no:cacheprovider \
		-m console tests/console

# The long reliability campaigns (docs/reliability.md), on PostgreSQL: the stateful
# model, the stateful fuzz walk and the fault tests, for hours with the defaults.
# Each knob may be set on the command line: make test-long PC_MODEL_EXAMPLES=100.
PC_MODEL_EXAMPLES ?= 5000
PC_MODEL_STEPS ?= 60
PC_FUZZ_STATEFUL_CALLS ?= 100000
PC_FUZZ_STATEFUL_STEPS ?= 20
test-long: $(VENV)/.installed
	@mkdir -p var
	PC_MODEL_EXAMPLES=$(PC_MODEL_EXAMPLES) PC_MODEL_STEPS=$(PC_MODEL_STEPS) \
	PC_FUZZ_STATEFUL_CALLS=$(PC_FUZZ_STATEFUL_CALLS) \
	PC_FUZZ_STATEFUL_STEPS=$(PC_FUZZ_STATEFUL_STEPS) \
	PC_FUZZ_REPORT=$(CURDIR)/var/fuzz-campaign.json DATABASE_URL=$(PG_URL) \
		$(VENV)/bin/pytest -p no:cacheprovider -o timeout=0 -rP \
		tests/reliability tests/robustness/test_fuzz_stateful.py \
		tests/robustness/test_envelope_faults.py tests/robustness/test_handoff_faults.py

# A long consistency campaign (docs/reliability.md, "Linearizable under faults"): a
# private PostgreSQL cluster, 16 clients, faults every 8-16 s for DURATION seconds;
# prints one line and writes the history (and any anomaly's window) to var/consistency/.
DURATION ?= 1800
test-consistency: $(VENV)/.installed
	@mkdir -p var/consistency
	$(VENV)/bin/python -m tests.consistency.campaign --duration $(DURATION) \
		--out $(CURDIR)/var/consistency

# Needs PostgreSQL (BENCH_PG), Redis (BENCH_REDIS_URL) and, if wrk is missing, root for
# apt-get; takes about half an hour (BENCH_PHASES=compare: about fourteen minutes).
# Knobs are listed at the top of bench/run.sh.
bench: $(VENV)/.installed
	bash bench/run.sh

clean:
	rm -rf $(VENV) $(REF_VENV) $(REF_SERVER_VENV) $(REF_TESTS_VENV) .venv-bench-ref var/static .pytest_cache .mypy_cache .ruff_cache \
		$(TS_CLIENT)/node_modules $(TS_CLIENT)/dist
