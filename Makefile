# Corral: `make run` (demo on this machine) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test lint check-deploy migrate bench-oob bench-boot bench-gates clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/python -m devtools.run

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/pytest

# Benchmarks print figures; they are not tests. They need PostgreSQL on 127.0.0.1:5432.
bench-oob: $(STAMP)
	$(BIN)/python -m devtools.bench_oob --n 500 --delay 2

bench-boot: $(STAMP)
	@command -v wrk >/dev/null && test -x /usr/sbin/nginx || \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	   --no-install-recommends wrk nginx-light && (pkill -x nginx || true))
	$(BIN)/python -m devtools.bench_boot

bench-gates: $(STAMP)
	$(BIN)/python -m devtools.bench_gates

lint: $(STAMP)
	$(BIN)/ruff check .

migrate: $(STAMP)
	$(BIN)/python manage.py migrate

clean:
	rm -rf $(VENV) .demo .broker staticfiles corral.sqlite3* .test-db.sqlite3* test-artifacts
