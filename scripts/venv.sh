#!/usr/bin/env bash
# Create .venv (if missing) and install linsvm into it, editable, pinned by constraints.txt.
# Usage: bash scripts/venv.sh [EXTRAS]   e.g. "" for the package alone, "[dev]" for tests.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -c constraints.txt -e ".${1:-}"
