# Two entry points for a fresh machine (Python >= 3.10 and a C compiler):
#   make demo   set up .venv, build the Cython extension, run the HIL demo
#   make test   set up .venv, build the Cython extension, run the test suite
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test build bench clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "setuptools>=68" wheel "Cython>=3.0" "numpy>=1.26"
	$(PY) -m pip install -q --no-build-isolation -e '.[test]'
	@# Independent implementations used for cross-checks; the tests that need them skip without.
	$(PY) -m pip install -q drake pin example-robot-data toppra \
	  || echo "note: cross-check packages unavailable; the tests that need them will skip"
	touch $(STAMP)

build: $(STAMP)
	$(PY) setup.py -q build_ext --inplace

demo: build
	$(VENV)/bin/hil demo

test: build
	$(PY) -m pytest -q

bench: build
	$(PY) benchmarks/bench_dynamics.py
	$(PY) benchmarks/bench_messages.py
	$(PY) benchmarks/bench_serial_codec.py

clean:
	rm -rf build $(VENV) dynamics_cy/*.so dynamics_cy/*.c messages/*.so messages/*.c
