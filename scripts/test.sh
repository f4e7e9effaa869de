#!/usr/bin/env bash
# Set up (.venv with linsvm and its dev extras) and run ruff and the test suite.
# The same command as the README's and CI's; extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/venv.sh "[dev]"
.venv/bin/python -m ruff check src tests benchmarks
exec .venv/bin/python -m pytest "$@"
