#!/usr/bin/env bash
# Build Leon Bottou's sgd 2.0 programs (svmsgd, svmasgd, and SGD-QN from its old/ folder) with
# the hinge loss, for the oracle tests of linsvm.solvers.sgd_bottou (tests/test_sgd_bottou.py)
# and benchmarks/originals_bottou.py.
#
#   scripts/oracles/bottou_sgd.sh SRC
#
# SRC is the sgd-2.0 source tree (a folder holding lib/ and svm/), an sgd-2.0.tar.gz of it, or
# a bare git directory of a repository holding that tree, e.g. a public copy of the release:
#   git clone https://github.com/npinto/bottou-sgd /tmp/bottou-sgd   ("sgd-2.0" as released)
#   scripts/oracles/bottou_sgd.sh /tmp/bottou-sgd
#
# The programs go to ${LINSVM_ORACLES:-<repo>/.oracles}/bottou_sgd/ (.oracles/ is gitignored):
#   svmsgd, svmasgd                 -DLOSS=HingeLoss -DBIAS=1 -DREGULARIZED_BIAS=0 (sgd 2.0's
#                                   bias: unregularised, own step 0.01 eta; linsvm -B 1 -R)
#   svmsgd-nobias, svmasgd-nobias   -DLOSS=HingeLoss -DBIAS=0 (no bias; linsvm without -B)
#   svmsgdqn                        old/svmsgdqn.cpp, -DLOSS=HINGELOSS (it has no bias)
# (-DREGULARIZED_BIAS=1 does not compile in sgd 2.0: a semicolon is missing in wnorm.)
# SGD_DEFINES adds defines to every program: SGD_DEFINES=-DVFLOAT=double builds them with
# double-precision vectors (sgd 2.0 keeps w and the rows in float: lib/vectors.h's VFloat),
# e.g. into LINSVM_ORACLES=/tmp/sgd-double, to time the original at linsvm's precision.
# old/Makefile links its svmsgdqn from svmsgd2.o, so the programs are compiled here directly.
#
# Licence: sgd is LGPL 2.1; build it locally, never commit its source or binaries.
set -euo pipefail

src=${1:?usage: bottou_sgd.sh SRC (folder, .tar.gz or bare git dir of the sgd-2.0 source)}
repo=$(cd "$(dirname "$0")/../.." && pwd)
dest=${LINSVM_ORACLES:-$repo/.oracles}/bottou_sgd
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -d "$src" ] && git --git-dir="$src" rev-parse --git-dir >/dev/null 2>&1 && [ ! -d "$src/svm" ]; then
    git --git-dir="$src" archive HEAD | tar -x -C "$work"
elif [ -f "$src" ]; then
    tar -xzf "$src" -C "$work"
else
    cp -r "$src"/. "$work"/
fi
# the tree's top folder: the one holding svm/svmsgd.cpp and lib/vectors.cpp
top=$(find "$work" -path '*/svm/svmsgd.cpp' -printf '%h\n' | while read -r d; do
        [ -f "$d/../lib/vectors.cpp" ] && (cd "$d/.." && pwd); done | head -n 1)
[ -n "$top" ] || { echo "bottou_sgd.sh: no sgd source tree (svm/svmsgd.cpp, lib/) in $src" >&2; exit 1; }
[ -f "$top/svm/old/svmsgdqn.cpp" ] || echo "bottou_sgd.sh: no svm/old/svmsgdqn.cpp: SGD-QN not built" >&2

cxx=${CXX:-g++}
flags="-O2 -w -I$top/lib ${SGD_DEFINES:-}"
obj=$work/obj
mkdir -p "$obj" "$dest"
log=$work/build.log
build() {  # build OUTPUT SOURCE DEFINES...: one program with the library objects
    local out=$1 source=$2
    shift 2
    "$cxx" $flags "$@" -o "$dest/$out" "$source" "${libs[@]}" -lz -lm >>"$log" 2>&1 \
        || { tail -n 30 "$log" >&2; exit 1; }
}
libs=()
for f in lib/vectors.cpp lib/gzstream.cpp lib/timer.cpp svm/data.cpp; do
    o=$obj/$(basename "$f" .cpp).o
    "$cxx" $flags -c -o "$o" "$top/$f" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; exit 1; }
    libs+=("$o")
done
build svmsgd "$top/svm/svmsgd.cpp" -DLOSS=HingeLoss -DBIAS=1 -DREGULARIZED_BIAS=0
build svmsgd-nobias "$top/svm/svmsgd.cpp" -DLOSS=HingeLoss -DBIAS=0
build svmasgd "$top/svm/svmasgd.cpp" -DLOSS=HingeLoss -DBIAS=1 -DREGULARIZED_BIAS=0
build svmasgd-nobias "$top/svm/svmasgd.cpp" -DLOSS=HingeLoss -DBIAS=0
if [ -f "$top/svm/old/svmsgdqn.cpp" ]; then
    libs=("${libs[@]:0:3}")  # svmsgdqn reads its own files: no data.o
    build svmsgdqn "$top/svm/old/svmsgdqn.cpp" -DLOSS=HINGELOSS
fi
echo "$dest"
