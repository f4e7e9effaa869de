#!/usr/bin/env bash
# Set up linsvm in .venv (once: later runs skip pip), then train on the bundled a9a data and
# predict a9a.t, printing the solver's summary, the test accuracy and the time each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/venv.sh
mkdir -p out
if [ -z "$(find src/linsvm -name '*.nbi' -print -quit)" ]; then
    echo "(first run: the times below include Numba's one-time compilation of the kernels,"
    echo " about 9 s in all, cached in __pycache__ afterwards; run the demo again for warm times)"
else
    echo "(a kernel compiled for the first time adds its one-time Numba compilation to the times)"
fi
echo "== linsvm train data/a9a out/a9a.model   (L2-loss SVM, dual coordinate descent, C = 1)"
.venv/bin/linsvm train data/a9a out/a9a.model
echo "== linsvm predict data/a9a.t out/a9a.model out/a9a.predictions"
.venv/bin/linsvm predict data/a9a.t out/a9a.model out/a9a.predictions
