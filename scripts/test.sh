#!/usr/bin/env bash
# Set up (a virtual environment with linsvm and its dev extras, pinned by constraints.txt)
# and run the test suite. The same command as the README's and CI's.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -c constraints.txt -e '.[dev]'
.venv/bin/python -m ruff check src tests benchmarks
exec .venv/bin/python -m pytest "$@"
