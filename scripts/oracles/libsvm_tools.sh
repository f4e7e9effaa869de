#!/usr/bin/env bash
# Install LIBSVM's command-line programs from Debian's libsvm-tools: svm-scale is the oracle of
# `linsvm scale` (tests/test_scaling.py and benchmarks/bench_scale.py find it on PATH).
#
#   scripts/oracles/libsvm_tools.sh
set -euo pipefail

if command -v svm-scale >/dev/null 2>&1; then
    command -v svm-scale
    exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
$sudo apt-get update -qq
$sudo apt-get install -y -qq libsvm-tools >/dev/null
command -v svm-scale
