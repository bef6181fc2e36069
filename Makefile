# Two entry points for a fresh machine (Python >= 3.10 and a C compiler):
#   make demo   set up .venv, build the Cython extension, run the HIL demo
#   make test   set up .venv, build the Cython extension, run the test suite (and examples/user_package's)
#               and build the docs site
#   make docs   the docs site (mkdocs.yml) into site/, a warning or a broken link failing the build
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test docs build bench regress clean placo-env installed

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "setuptools>=68" wheel "Cython>=3.0" "numpy>=1.26"
	$(PY) -m pip install -q --no-build-isolation -e '.[test,docs,mip,identify]'
	@# Independent implementations used for cross-checks; the tests that need them skip without.
	$(PY) -m pip install -q drake pin cmeel-eigen example-robot-data toppra proxsuite osqp clarabel \
	  dynamixel-sdk feetech-servo-sdk ray pyarrow mujoco \
	  || echo "note: cross-check packages unavailable; the tests that need them will skip"
	touch $(STAMP)

# PlaCo (the whole-body QP cross-check) pins Pinocchio 3.8, .venv has 4.1: it gets its own environment,
# which tests/wbc runs as a subprocess (the test skips without it).
placo-env: .venv-placo/.installed

.venv-placo/.installed:
	$(PYTHON) -m venv .venv-placo
	.venv-placo/bin/python -m pip install -q placo example-robot-data \
	  || echo "note: PlaCo unavailable; the PlaCo cross-check will skip"
	touch .venv-placo/.installed

build: $(STAMP)
	$(PY) setup.py -q build_ext --inplace

demo: build
	$(VENV)/bin/hil demo

test: build placo-env
	$(PY) -m ruff check .
	$(PY) -m pytest -q
	@# The product as a user installs it: the wheel in a fresh environment, run from another directory.
	.ci/installed
	@# A user's own project of laws (examples/user_package): installed, and its tests run from its
	@# directory with the fixtures of the stack's installed pytest plugin.
	$(PY) -m pip install -q --no-build-isolation --no-deps examples/user_package
	cd examples/user_package && ../../$(PY) -m pytest -q
	$(MAKE) docs

# The docs site: mkdocs build --strict (a warning, a broken link or anchor fails it), the CLI and config
# references generated from the code (docs/gen), the API reference from the docstrings. Material for
# MkDocs and a plugin print a notice about MkDocs 2 on every build (mkdocs.yml's header says why we stay
# on MkDocs 1.6); the variables silence it.
docs: build
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(PY) -m mkdocs build --strict --site-dir site

installed: $(STAMP)
	.ci/installed

regress: build
	$(VENV)/bin/hil regress -j 2

# Every benchmark with its default options, each writing its tables and the machine's facts to
# benchmarks/results/<script>.json, then docs/benchmarks.md made from those files. The soak runs
# SOAK_MINUTES (60 for the full soak: make bench SOAK_MINUTES=60).
SOAK_MINUTES ?= 10
bench: build placo-env
	$(PY) benchmarks/bench_dynamics.py
	$(PY) benchmarks/bench_mass_matrix.py
	$(PY) benchmarks/bench_regressor.py
	$(PY) benchmarks/bench_identify.py
	$(PY) benchmarks/bench_messages.py
	$(PY) benchmarks/bench_serial_codec.py
	$(PY) benchmarks/bench_loop.py --duration 60
	$(PY) benchmarks/bench_sim.py
	$(PY) benchmarks/bench_viz.py
	$(PY) benchmarks/bench_serial.py
	$(PY) benchmarks/bench_servo.py
	$(PY) benchmarks/bench_planning.py
	$(PY) benchmarks/bench_wbc.py
	$(PY) benchmarks/bench_wbc_solvers.py
	$(PY) benchmarks/bench_campaign.py
	$(PY) benchmarks/soak.py --minutes $(SOAK_MINUTES)
	$(PY) benchmarks/report.py

clean:
	rm -rf build site $(VENV) .venv-placo */*.so */*.c drivers/sim/*.so drivers/sim/*.c regress-report.json campaign-out
