#!/usr/bin/env bash
# Set up (.venv with linsvm and its dev extras) and run ruff and the test suite.
# The same command as the README's and CI's; extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/venv.sh "[dev]"
.venv/bin/python -m ruff check src tests benchmarks
# Two pytest-xdist workers (CI has 2 cores; LINSVM_TEST_WORKERS chooses another number, 0 runs
# the tests in this process: needed for -s or --pdb), the Dask tests in one group (conftest.py)
exec .venv/bin/python -m pytest -n "${LINSVM_TEST_WORKERS:-2}" --dist loadgroup "$@"
