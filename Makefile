# Corral: `make run` (demo on this machine), `make test` (the whole suite, what CI runs) and
# `make test-fast` (the inner loop: no QEMU, no browser). docs/testing.md says what runs where.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install hooks run test test-fast lint format typecheck migrate bench-oob bench-boot \
        bench-boot-bad bench-boot-tools bench-gates bench-import bench-chaos bench-webhooks bench-drift bench-dash bench-day2 bench-attest bench-metrics bench-fleetfile bench-console bench-stateless bench-bulk clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/python -m devtools.run

# pytest runs on PYTEST_WORKERS processes (pytest-xdist); PYTEST_WORKERS=0 runs it in this
# one, for debugging. Three on two cores: the third fills the time the others wait on peers
# (docs/testing.md: Parallel runs).
PYTEST_WORKERS ?= 3
# Python keeps compiled modules, and pytest its assert-rewritten test modules, only where
# bytecode may be written: with PYTHONDONTWRITEBYTECODE set (as on the reference machine),
# every xdist process rewrote all 650 test modules on every run, 7 s each.
unexport PYTHONDONTWRITEBYTECODE
PYTEST_PARALLEL = -n $(PYTEST_WORKERS) --dist worksteal

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/pytest $(PYTEST_PARALLEL) --durations=25

# Minutes, not tens of minutes: everything but the tests marked slow (QEMU, DHCP servers in
# network namespaces, full end-to-end flows) or browser (Chromium).
test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest $(PYTEST_PARALLEL) -m "not slow and not browser and not service"

# Benchmarks print figures; they are not tests. They need PostgreSQL on 127.0.0.1:5432.
bench-oob: $(STAMP)
	$(BIN)/python -m devtools.bench_oob --n 1000 --delay 2

# A GB200 site: 25 NVL72 racks by default; BENCH_SITE="--racks 250" for the whole one.
BENCH_SITE ?=
bench-site: $(STAMP)
	$(BIN)/python -m devtools.bench_site $(BENCH_SITE)

# 500 deploys' consoles recorded at once (ipmi_sim SOL, a real worker) and a key's round
# trip in Chromium meanwhile (docs/console.md); BENCH_CONSOLE="--streams 50" is quick.
bench-console: $(STAMP)
	$(BIN)/python -m devtools.bench_console $(BENCH_CONSOLE)

# policy-rc.d keeps Debian from starting nginx on install: the bench starts its own.
bench-boot-tools:
	@command -v wrk >/dev/null && test -x /usr/sbin/nginx || \
	  (apt-get update -q && { test -e /usr/sbin/policy-rc.d || \
	   { printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; }; } && \
	   DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends wrk nginx-light)

bench-boot: $(STAMP) bench-boot-tools
	$(BIN)/python -m devtools.bench_boot

# The storm on a bad day: 20 % unknown MACs, one web process killed and respawned mid-run.
bench-boot-bad: $(STAMP) bench-boot-tools
	$(BIN)/python -m devtools.bench_boot --bad-day

bench-gates: $(STAMP)
	$(BIN)/python -m devtools.bench_gates

bench-import: $(STAMP)
	$(BIN)/python -m devtools.bench_import --rows 10000

bench-chaos: $(STAMP)
	$(BIN)/python -m devtools.bench_chaos

# 10,000 events to 3 verifying receivers (one refusing for 20 s) through worker and Redis.
bench-webhooks: $(STAMP)
	$(BIN)/python -m devtools.bench_webhooks --events 10000 --rate 150

bench-drift: $(STAMP)
	$(BIN)/python -m devtools.bench_drift --nodes 12500

# The managers' reports and dashboards on 12,500 nodes with a year of seeded history.
bench-dash: $(STAMP)
	$(BIN)/python -m devtools.bench_dash --nodes 12500 --days 365

# A Prometheus scrape of /metrics at 12,500 nodes (docs/metrics.md).
bench-metrics: $(STAMP)
	$(BIN)/python -m devtools.bench_metrics --nodes 12500

# Plan and apply the fleet files of a 12,500-node site (docs/fleet-as-code.md).
bench-fleetfile: $(STAMP)
	$(BIN)/python -m devtools.bench_fleetfile --nodes 12500

# The day-2 loop with every real peer (Slurm, Redfish emulator, QEMU + iPXE, sshd): XID 79
# to Slurm resuming the node, split into Corral's overhead and the waits outside it.
bench-day2: $(STAMP)
	$(BIN)/python -m devtools.bench_day2 --runs 3

# Converge: a campaign updating the BMC firmware of 1,000 nodes in service on updating test
# BMCs, at 10 % of a rack at a time, against what the pacing alone would take.
# A hall of stateless nodes fetching kernel, initrd and root image at once from Corral's
# own server (the image store on granian's static files), next to nginx (docs/boot-modes.md).
bench-stateless: $(STAMP) bench-boot-tools
	$(BIN)/python -m devtools.bench_stateless

# What a bulk action's child costs as it ends, at a GB200 site's 13,500 machines.
bench-bulk: $(STAMP)
	$(BIN)/python -m devtools.bench_bulk

# At the production poll (5 s: a 20 s update, still far shorter than a real one);
# --poll-seconds 0.5 measures the worker's own limit instead (docs/converge.md).
bench-converge: $(STAMP)
	$(BIN)/python -m devtools.bench_converge --n 1000 --poll-seconds 5

# Trust at join: what TPM attestation adds to a deploy (QEMU + OVMF + swtpm booting the UKI
# with and without a TPM, the web server, a worker), and the server-side verify alone.
bench-attest: $(STAMP)
	$(BIN)/python -m devtools.bench_attest --runs 3

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The pure core (lifecycle table, drivers, parsers, verdicts); scope in pyproject.toml.
typecheck: $(STAMP)
	$(BIN)/mypy

# pre-commit runs ruff and mypy from this venv before each commit (.pre-commit-config.yaml).
hooks: $(STAMP)
	$(BIN)/pip install -q -c constraints.txt -e '.[test,dev]'
	$(BIN)/pre-commit install

migrate: $(STAMP)
	$(BIN)/python manage.py migrate

clean:
	rm -rf $(VENV) .demo .broker .mypy_cache .ruff_cache staticfiles corral.sqlite3* .test-db.sqlite3* test-artifacts
