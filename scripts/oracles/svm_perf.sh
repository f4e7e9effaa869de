#!/usr/bin/env bash
# Build Thorsten Joachims' SVM-perf (svm_perf_learn, svm_perf_classify) from its source, for
# the oracle tests of the cutting-plane solvers (tests/test_cutting_plane.py) and
# benchmarks/originals_cutting_plane.py.
#
#   scripts/oracles/svm_perf.sh SRC
#
# SRC is a folder holding the SVM-perf distribution (Makefile, svm_struct_api.c,
# svm_light/, svm_struct/), a svm_perf.tar.gz of it, or a bare git directory of a repository
# with such a folder somewhere in it. The programs go to ${LINSVM_ORACLES:-<repo>/.oracles}/svm_perf/
# (.oracles/ is gitignored).
#
# Licence: SVM-perf is free for non-commercial use only and may not be redistributed: build
# it locally, never commit its source or binaries. Get the source from its home page,
# https://www.cs.cornell.edu/people/tj/svm_light/svm_perf.html (svm_perf.tar.gz, V3.00 of
# 15.07.2009 on SVM-struct V3.10), or from a public copy of that archive, e.g. the svm_perf/
# folder of github.com/baojian/auc-opt (commit 95b4c0ab; its svm_perf.tar.gz is the original
# archive, sha256 5ba7354f6727efa4abd1564fdcfd12509bf4c720b27ece5bc8f5f3d43f8b09af, which is
# used rather than the unpacked copy beside it):
#   git clone --depth 1 https://github.com/baojian/auc-opt /tmp/auc-opt
#   scripts/oracles/svm_perf.sh /tmp/auc-opt/svm_perf
#
# Run (the L1-loss SVM of LIBLINEAR's -s 3 at cost C on n rows, no bias):
#   svm_perf_learn -c <C*n/100> -l 2 -w 3 --b 0 -e <eps> train.svm model
# (see benchmarks/originals_cutting_plane.py for the correspondence).
set -euo pipefail

src=${1:?usage: svm_perf.sh SRC (folder, svm_perf.tar.gz or bare git dir of the SVM-perf source)}
repo=$(cd "$(dirname "$0")/../.." && pwd)
dest=${LINSVM_ORACLES:-$repo/.oracles}/svm_perf
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -d "$src" ] && git --git-dir="$src" rev-parse --git-dir >/dev/null 2>&1 && [ ! -f "$src/Makefile" ]; then
    git --git-dir="$src" archive HEAD | tar -x -C "$work"
elif [ -f "$src" ]; then
    tar -xzf "$src" -C "$work"
else
    cp -r "$src"/. "$work"/
fi
# the pristine archive first (some repositories keep svm_perf.tar.gz next to an unpacked copy
# they edited, e.g. baojian/auc-opt silences the progress output the wrappers read), else the
# folder holding svm_struct_api.c, svm_struct/ and svm_light/
archive=$(find "$work" -name 'svm_perf*.tar.gz' | head -n 1)
if [ -n "$archive" ]; then
    mkdir "$work/unpacked" && tar -xzf "$archive" -C "$work/unpacked"
    search="$work/unpacked"
else
    search="$work"
fi
top=$(find "$search" -name svm_struct_api.c -printf '%h\n' | while read -r d; do
        [ -d "$d/svm_struct" ] && [ -d "$d/svm_light" ] && echo "$d"; done | head -n 1)
[ -n "$top" ] || { echo "svm_perf.sh: no SVM-perf source in $src" >&2; exit 1; }
cd "$top"
make clean >/dev/null 2>&1 || true
find . -name '*.o' -delete
rm -f svm_perf_learn svm_perf_classify
# -fcommon: the 2008 sources define their globals in headers (an error by default since gcc 10)
make CC="gcc -fcommon" LD="gcc -fcommon" svm_perf_learn svm_perf_classify >"$work/build.log" 2>&1 \
    || { tail -n 30 "$work/build.log" >&2; exit 1; }
mkdir -p "$dest"
cp svm_perf_learn svm_perf_classify "$dest"/
echo "$dest/svm_perf_learn"
