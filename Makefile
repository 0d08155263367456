# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test install system-deps fidelity lint clean bench

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## run: install into .venv; simulate the example cluster (where pods land, why one is Pending), then the same on `kubesched serve` with kubectl; in a terminal its web UI stays up until Ctrl-C
run: $(STAMP)
	$(BIN)/kubesched simulate -f examples/mixed-cluster.yaml --tie-break name
	$(BIN)/kubesched explain -f examples/mixed-cluster.yaml ml/train-big --tie-break name
	BIN=$(BIN) bash scripts/serve-demo.sh

## system-deps: the Debian packages the suite drives (kubectl, chromium), installed when missing
system-deps:
	bash scripts/install-system-deps.sh

## test: install everything (Python packages into .venv, kubectl and chromium from Debian) and run the whole test suite
test: $(STAMP) system-deps
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(BIN)/python -m pytest
	$(BIN)/lint-imports
	$(BIN)/mypy

## bench: micro-benchmarks of the hot paths (pytest-benchmark); `kubesched bench --suite` runs whole workloads
bench: $(STAMP)
	$(BIN)/python -m pytest benchmarks --benchmark-only

clean:
	rm -rf $(VENV) build *.egg-info
