#!/usr/bin/env bash
# Set up linsvm in a virtual environment, then train on the bundled a9a data and predict a9a.t,
# printing the solver's summary, the accuracy and the time each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -c constraints.txt -e .
mkdir -p out
echo "== linsvm train data/a9a out/a9a.model   (L2-loss SVM, dual coordinate descent, C = 1)"
.venv/bin/linsvm train data/a9a out/a9a.model
echo "== linsvm predict data/a9a.t out/a9a.model out/a9a.predictions"
.venv/bin/linsvm predict data/a9a.t out/a9a.model out/a9a.predictions
