#!/usr/bin/env bash
# Install libocas's command-line programs (svmocas, msvmocas, linclassif) from Debian's
# libocas-tools, the oracle of the OCAS and cutting-plane solvers (-s ocas, -s svmperf):
# tests/test_cutting_plane.py and benchmarks/originals_cutting_plane.py find svmocas on PATH
# (or at $LINSVM_SVMOCAS).
#
#   scripts/oracles/libocas.sh
#
# Run (the L1-loss SVM of LIBLINEAR's -s 3 at cost C, no bias; svmocas's C is LIBLINEAR's):
#   svmocas -c C -b 0 -m 1 -r 0.01 train.svm model     (OCAS; -m 0: the plain cutting plane)
set -euo pipefail

if command -v svmocas >/dev/null 2>&1; then
    command -v svmocas
    exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
$sudo apt-get update -qq
$sudo apt-get install -y -qq libocas-tools >/dev/null
command -v svmocas
