# Similia: `make run` starts the platform with demo data; `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum requirements.txt | cut -d' ' -f1)

.PHONY: run test venv migrate demo worker perf docs clean

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

venv: $(STAMP)

migrate: venv
	$(PY) manage.py migrate --noinput

# The default corpus's build is queued before the demo's benchmark runs (one bulk lane, first come first served);
# its owner, the demo lead, is created first (load_demo prints the users).
demo: migrate
	$(PY) manage.py load_demo_users > /dev/null
	$(PY) manage.py build_corpus_index --default
	$(PY) manage.py load_demo

run: demo
	./scripts/run_local.sh

test: venv
	./scripts/ensure_system_deps.sh
	$(PY) -m pytest $(PYTEST_ARGS)

docs: venv
	$(PY) scripts/results_pages.py
	$(PY) scripts/reference_pages.py
	$(PY) -m mkdocs build --strict

perf: venv
	$(PY) -m perf check

clean:
	rm -rf var .pytest_cache
