#!/usr/bin/env bash
# The peers of benchmarks/bench_multicore.py, installed once:
# - Snap ML (the bench extra's snapml) into .venv, through scripts/venv.sh "[bench]" when
#   .venv cannot import it yet;
# - multi-core LIBLINEAR (PyPI's liblinear-multicore, built from its source with the system's
#   C++ compiler and OpenMP) into its own venv, .venv-multicore by default: it installs the
#   same Python module name, `liblinear`, as liblinear-official in .venv, so the benchmark
#   drives it in a subprocess (benchmarks/multicore_worker.py) run by this venv's python.
# Usage: bash scripts/bench_multicore_env.sh    (PYTHON=python3.11 to choose the interpreter;
#        LINSVM_MULTICORE_VENV=/path for another venv folder, which the benchmark then needs
#        in the same variable)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV="${LINSVM_MULTICORE_VENV:-.venv-multicore}"
MULTICORE_VERSION=2.50.0

if ! { [ -x .venv/bin/python ] && .venv/bin/python -c "import snapml, liblinear" 2>/dev/null; }
then
    bash scripts/venv.sh "[bench]"
fi

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
have=$("$VENV/bin/python" -c 'from importlib import metadata
try:
    print(metadata.version("liblinear-multicore"))
except metadata.PackageNotFoundError:
    pass' || true)
if [ "$have" != "$MULTICORE_VERSION" ]; then
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    # numpy and scipy at the versions of .venv (constraints.txt): the worker hands LIBLINEAR
    # scipy CSR matrices loaded from .npz files
    "$VENV/bin/python" -m pip install --quiet -c constraints.txt numpy scipy \
        "liblinear-multicore==$MULTICORE_VERSION"
fi
"$VENV/bin/python" -c "import liblinear.liblinearutil as u; u.parameter('-s 3 -m 2 -q')"
echo "multi-core LIBLINEAR $MULTICORE_VERSION ready in $VENV"
