# gdpr_lakehouse — the two commands a new machine needs: `make run` and `make test`.
# Both set up whatever is missing first (venv, Python packages, Delta's jars) and are
# a fast no-op for what is already there.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON_BOOTSTRAP ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DBT := $(VENV)/bin/dbt
STAMP := $(VENV)/.installed

# dbt reads the project's own profiles.yml; all local state lives in $(LAKEHOUSE_DIR).
export DBT_PROFILES_DIR ?= $(CURDIR)
export LAKEHOUSE_DIR ?= $(CURDIR)/.lakehouse
export DBT_SEND_ANONYMOUS_USAGE_STATS ?= false
export SPARK_LOCAL_IP ?= 127.0.0.1
# Who is acting, for the commit tags (userMetadata) of every write.
export LAKEHOUSE_ACTOR ?= $(shell id -un 2>/dev/null || echo unknown)

.PHONY: help setup docs run audit up down test test-slow soak lint unit functional cluster-up cluster-down bench bench-warm bench-erasure bench-restore bench-audit bench-ingestion bench-build-cost bench-pruning clean

help:
	@echo "make run    set up what is missing, generate the sample landing data, dbt build (local), audit"
	@echo "make test   set up what is missing, then sqlfluff, ruff and the pytest suite"
	@echo "make test-slow  the end-to-end runs make test defers: loopback cluster, benchmarks, warm engine"
	@echo "make docs   rewrite docs/reference/ from the commands' --help, macros/_macros.yml and the vars block"
	@echo "make soak   random histories, every law checked after every step (SOAK_SEED=1 SOAK_MINUTES=30 SOAK_STEPS=30)"
	@echo "make audit  audit_stream --once (CDF -> audit.change_log), then the GDPR report"
	@echo "make up     start the warm local engine (one JVM for dbt --target warm and the jobs)"
	@echo "make down   stop it"
	@echo "make setup  only the set-up (venv, packages, Delta jars, the JVM's class archive, this machine's key-encryption key)"
	@echo "make bench          erasure at scale: 6.5M TPC-DS customers, strategies side by side (BENCH_ARGS=\"--rows 65000000 --runs 1\")"
	@echo "make bench-erasure  batched gdpr_erase vs one DELETE per subject per table (bench/)"
	@echo "make bench-pruning  a small batch's MERGE with its pseudonym prefixes vs every file, by layout and batch size (bench/)"
	@echo "make bench-restore  RESTORE alone vs restore_version (RESTORE + re-erasure), 1M and 10M rows (bench/)"
	@echo "make bench-audit    audit_stream --once catch-up (100 commits, 1M rows) and --follow lag (bench/)"
	@echo "make bench-ingestion  one new batch's bronze build by batches already landed (1, 10, 50), and events/s (bench/)"
	@echo "make bench-warm     trivial run-operation, gdpr_erase, restore_version, audit_stream: warm engine vs embedded (bench/)"
	@echo "make bench-build-cost  dbt build of this checkout and of an earlier revision, side by side (BENCH_ARGS=\"--base REV --patients 100000\")"
	@echo "make cluster-up    Spark master + worker, Thrift server, Derby metastore on loopback (then: python -m python_jobs.cluster env)"
	@echo "make cluster-down  stop them"
	@echo "make clean  drop local state (.lakehouse, target, logs)"

# Reinstalled only when pyproject.toml changes.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON_BOOTSTRAP) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $@

setup: $(STAMP)
	@command -v java >/dev/null || { echo "Java 17 is required (e.g. apt-get install openjdk-17-jdk-headless)"; exit 1; }
	@$(PY) -m python_jobs.jars
	@$(PY) -m python_jobs.class_archive
	@$(PY) -m python_jobs.kek init

# Sample size of the synthetic landing data (python -m demo.generate --help).
PATIENTS ?= 200
SEED ?= 42

# In one process (demo/run.py), so one JVM: generate, `dbt build` (in-process,
# --target warm while `make up` runs), then `audit_stream --once` on the build's session.
run: setup
	$(PY) -m demo.run --patients $(PATIENTS) --seed $(SEED)

# The warm local engine: one long-lived Spark JVM (Thrift server + job socket) on the
# local target's settings; dbt uses it with --target warm, the jobs by themselves.
up: setup
	$(PY) -m python_jobs.engine up

down:
	@test ! -x $(PY) || $(PY) -m python_jobs.engine down

# Catch the audit log up, then write the GDPR report (exit 1 when a request is overdue).
audit: setup
	$(PY) -m python_jobs.audit_stream --once
	$(PY) -m python_jobs.report

lint: setup
	$(VENV)/bin/ruff check python_jobs demo tests bench lint
	$(VENV)/bin/ruff format --check python_jobs demo tests bench lint
	$(VENV)/bin/sqlfluff lint --processes 0 models macros snapshots tests
	$(PY) -m lint.audit_deps

unit: setup
	$(VENV)/bin/pytest tests/unit

functional: setup
	$(VENV)/bin/pytest tests/functional

# pytest in two lanes at once (tests/lanes.py): the suites sharing one lakehouse and
# JVM, and beside them those with state of their own. `pytest` alone runs it all serially.
test: lint
	$(PY) tests/lanes.py

# The tests `make test` defers (tests/lanes.py DEFERRED): the loopback cluster, the
# benchmarks and the warm engine, each end to end as a user runs them (~35 min).
test-slow: setup
	$(PY) tests/lanes.py --slow

# Random histories of landings, builds, erasures (crashed ones too), restores and purges,
# every law checked against an oracle after every step (tests/simulation/soak.py); a
# history that breaks one is shrunk and saved in tests/simulation/regressions/, which
# `make test` replays. The report: target/soak-report.txt.
SOAK_SEED ?= 1
SOAK_MINUTES ?= 30
SOAK_STEPS ?= 30
soak: setup
	@mkdir -p target
	$(PY) -m tests.simulation.soak --seed $(SOAK_SEED) --minutes $(SOAK_MINUTES) --steps $(SOAK_STEPS) --report target/soak-report.txt

# A real Spark cluster on loopback (python_jobs/cluster.py); dbt reaches it with
# --target thrift, the jobs with the variables `python -m python_jobs.cluster env` prints.
cluster-up: setup
	$(PY) -m python_jobs.cluster up

cluster-down:
	$(PY) -m python_jobs.cluster down

# Benchmarks print their figures; they are never part of `make test`.
BENCH_ARGS ?=
bench: setup
	$(PY) bench/run.py $(BENCH_ARGS)

bench-erasure: setup
	$(PY) bench/erasure.py $(BENCH_ARGS)

bench-pruning: setup
	$(PY) bench/pruning.py $(BENCH_ARGS)

bench-restore: setup
	$(PY) bench/restore.py $(BENCH_ARGS)

bench-audit: setup
	$(PY) bench/audit.py $(BENCH_ARGS)

bench-ingestion: setup
	$(PY) bench/ingestion.py $(BENCH_ARGS)

bench-warm: setup
	$(PY) bench/warm.py $(BENCH_ARGS)

bench-build-cost: setup
	$(PY) bench/build_cost.py $(BENCH_ARGS)

docs: setup
	$(PY) -m lint.reference

clean: down
	rm -rf $(LAKEHOUSE_DIR) target logs
