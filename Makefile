# fieldgo: `make demo` and `make test` work on a fresh clone (Go 1.26, a C compiler, python3).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BRIDGE := python/fieldgo/_bridge/.stamp
GO_SOURCES := $(shell find core errs internal kernels pybind -name '*.go' -o -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.tmpl' 2>/dev/null) go.mod go.sum

.PHONY: setup test test-go test-python test-gpu demo bench docs lint wheel wheel-test clean

setup: $(VENV)/.installed $(BRIDGE)

# The venv with fieldgo installed in editable mode; the bridge is the next rule's stage
# (FIELDGO_SKIP_BRIDGE: inside pip its two silent minutes would look like a hang).
$(VENV)/.installed: pyproject.toml setup.py
	@echo "setup: [1/3] the venv $(VENV) and its build tools"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --progress-bar off --upgrade "setuptools>=70" wheel "pybindgen>=0.22"
	@echo "setup: [2/3] fieldgo in editable mode and its Python dependencies (the test extra)"
	@t=$$(date +%s); FIELDGO_SKIP_BRIDGE=1 $(PY) -m pip install --progress-bar off --no-build-isolation -e ".[test]" \
		&& echo "setup: [2/3] done in $$(( $$(date +%s) - t )) s"
	touch $@

# Rebuild the bridge only when Go or C sources change (a line per stage, with its time).
$(BRIDGE): $(GO_SOURCES) | $(VENV)/.installed
	@echo "setup: [3/3] the Go bridge (tools/build_bridge.py)"
	$(PY) tools/build_bridge.py

test: setup test-go test-python

test-go:
	go test -count=1 ./...

test-python: setup
	$(PY) -m pytest -q

# Every GPU test (tests/gpu_tests.txt lists them; bench/device/gpu_tests.sh runs the same
# list from prebuilt binaries on a GPU machine without Go). Without a GPU it says so, and
# the tests skip, each saying why.
test-gpu: setup
	bash tools/test_gpu.sh $(PY)

demo: setup
	$(PY) examples/demo.py

bench: setup
	$(PY) bench/bridge_bench.py

# The documentation site (docs/conf.py): the guide, the API reference and the notebooks,
# executed on the CPU, into docs/_build/html; any warning fails the build.
# Its packages are the `docs` extra of pyproject.toml, read from the installed metadata:
# reinstalling fieldgo with the extra would rebuild the bridge for nothing.
$(VENV)/.docs: $(VENV)/.installed
	$(PY) -c 'import importlib.metadata as m; print("\n".join(r.split(";")[0] for r in m.requires("fieldgo") if "extra == \"docs\"" in r))' > $(VENV)/docs-requirements.txt
	$(PY) -m pip install -q -r $(VENV)/docs-requirements.txt
	touch $@

docs: setup $(VENV)/.docs
	$(PY) -m sphinx -b html -W --keep-going -q docs docs/_build/html

# Quality gates, the checks of .pre-commit-config.yaml: gofmt, go vet, staticcheck (a Go
# tool in go.mod), ruff check and ruff format (pyproject.toml), clang-format on the C and
# CUDA sources (.clang-format, .clang-format-ignore), mypy on the package. Files git
# ignores (the generated bridge, build outputs) are not checked. The tools are the `lint`
# extra, installed like the docs extra, from the installed metadata.
LINT_GO := git ls-files -co --exclude-standard '*.go'
LINT_C  := git ls-files -co --exclude-standard '*.c' '*.h' '*.cu' '*.cuh' '*.c.tmpl'

$(VENV)/.lint: $(VENV)/.installed
	$(PY) -c 'import importlib.metadata as m; print("\n".join(r.split(";")[0] for r in m.requires("fieldgo") if "extra == \"lint\"" in r))' > $(VENV)/lint-requirements.txt
	$(PY) -m pip install -q -r $(VENV)/lint-requirements.txt
	touch $@

lint: $(VENV)/.lint
	@out=$$(gofmt -l $$($(LINT_GO))); if [ -n "$$out" ]; then echo "gofmt -l: not formatted (gofmt -w them):"; echo "$$out"; exit 1; fi
	go vet ./...
	go tool staticcheck ./...
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/clang-format --dry-run --Werror $$($(LINT_C))
	$(VENV)/bin/mypy

# Wheels for `pip install fieldgo` without Go: the sdist and manylinux_2_28 x86_64 wheels
# for CPython 3.10-3.13 (those this machine has, in PATH or pyenv) into dist/, each with
# its compiled bridge, repaired and checked by auditwheel (tools/build_wheels.py).
wheel:
	$(PYTHON) tools/build_wheels.py

# The running Python's wheel (rebuilt when a source changed) installed into a fresh venv
# whose PATH has no Go: a small skyrmion relaxation on the CPU and the tests that need no
# source build (tools/wheel_test.py). WHEEL_PYTHONS="3.10 3.11 3.12 3.13" tests those.
PYV := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
WHEEL_PYTHONS ?= $(PYV)
WHEEL_INPUTS := $(GO_SOURCES) $(shell find python/fieldgo -name '*.py' -not -path '*/_bridge/*' 2>/dev/null) \
	pyproject.toml setup.py MANIFEST.in README.md tools/build_bridge.py tools/build_wheels.py

build/.wheel-%: $(WHEEL_INPUTS)
	$(PYTHON) tools/build_wheels.py --python $*

wheel-test: $(foreach v,$(WHEEL_PYTHONS),build/.wheel-$(v))
	$(PYTHON) tools/wheel_test.py $(foreach v,$(WHEEL_PYTHONS),--python $(v))

clean:
	rm -rf $(VENV) .tools python/fieldgo/_bridge build *.egg-info python/*.egg-info docs/_build
