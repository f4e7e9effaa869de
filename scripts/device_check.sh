#!/usr/bin/env bash
# The measurements a lent machine (16 cores, one NVIDIA GPU) is for, in one run of at most 9.5
# minutes (the steps' time limits): the GPU solver (plain, and with the hot block for -s 1; the hot views are left out:
# the lockstep simulator says they cannot raise the rows in flight) against Snap ML's GPU
# solver (benchmarks/bench_gpu.py), then threads within one solve at 1, 4, 8 and 16 threads, the
# default scheme (the shared w's async one above 2 threads) and the replicas, against Snap ML
# (benchmarks/bench_dcd_threads.py --big-machine), then where an outer iteration's time goes
# at 8 and 16 threads (benchmarks/bench_async_costs.py), and the same at 16 threads with a
# bias (-B 1: in the lockstep simulator the async scheme's guard then flushes the bias after
# every row and halves the threads to 4 or 2; bench_async_costs adds the damped steps and the
# bias flushed every row from the start, and says where the guard left each solve), and last
# one-vs-rest's sub-problems on 16 threads on sector.scale (105 classes: bench_n_jobs.py).
# Reports go to $OUT.
#
# Prepare here (see benchmarks/README.md, bench_gpu): the Snap ML wheel for the machine's
# Python (3.12, tagged manylinux_2_28) in .whl/, pypi-recent.xz and sector.scale.xz in .data/
# (both ignored by git, so carry them: carry=[".whl", ".data"]). The tracked tree (12 MB), the
# wheel (7.9 MB) and .data must stay under 64 MiB: the two sets are 41 + 3.7 MB, so
# pypi-recent.t.xz (10 MB) does not fit and the reports have no test accuracy. On the machine: bash scripts/device_check.sh
# A dry run here (no GPU: bench_gpu says so and the exit status is 1; the threads' report is
# written): PATH="$PWD/.venv/bin:$PATH" OUT=/tmp/linsvm-device bash scripts/device_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/linsvm-device}"
mkdir -p "$OUT"
SITE=/tmp/linsvm-site
for wheel in .whl/*.whl; do
    [ -e "$wheel" ] || continue
    # (a wheel is a zip of its files: unpacked as they are where the image's Python has no pip)
    python3 -m pip install -q --no-index --no-deps --target "$SITE" "$wheel" \
        || python3 -m zipfile -e "$wheel" "$SITE"
done
export PYTHONPATH="$SITE:src:." LINSVM_SHARED_DATA=.data PYTHONUNBUFFERED=1
export LINSVM_BENCH_SCRATCH=/tmp/linsvm-bench-data
{ nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; nproc; } > "$OUT/machine.txt" 2>&1
status=0
timeout 240 python3 -m benchmarks.bench_gpu --repeats 2 --no-cpu --no-views --max-run-seconds 15 \
    --out "$OUT/RESULTS-gpu.md" > "$OUT/bench_gpu.log" 2>&1 || status=$?
timeout 195 python3 -m benchmarks.bench_dcd_threads --big-machine --max-minutes 3.0 \
    --out "$OUT/RESULTS-dcd-threads-16core.md" > "$OUT/bench_dcd_threads.log" 2>&1 || status=$?
timeout 45 python3 -m benchmarks.bench_async_costs --threads 8,16 --solvers 1 --repeats 2 \
    --out "$OUT/RESULTS-async-costs-16core.md" > "$OUT/bench_async_costs.log" 2>&1 || status=$?
timeout 60 python3 -m benchmarks.bench_async_costs --threads 16 --solvers 1,3 --repeats 1 \
    --bias 1 --out "$OUT/RESULTS-async-costs-16core-bias.md" \
    > "$OUT/bench_async_costs_bias.log" 2>&1 || status=$?
timeout 30 python3 -m benchmarks.bench_n_jobs --datasets sector.scale --configs svc --n-jobs 16 \
    --repeats 2 --out "$OUT/RESULTS-n-jobs-16core.md" > "$OUT/bench_n_jobs.log" 2>&1 || status=$?
tail -n 3 "$OUT"/*.log
exit "$status"
