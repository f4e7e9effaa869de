"""``linsvm scale`` against LIBSVM's ``svm-scale``: the whole command, file to file.

Run from the repository root::

    python -m benchmarks.bench_scale [--datasets a9a,w8a,ijcnn1,pypi-recent-50k]
        [--lower -1,0] [--repeats 3] [--svm-scale-limit 900] [--out RESULTS-scale.md]

Each run is the command as a user runs it, in a fresh process (Python's start, the import and
the compiled kernels' cache load included for linsvm), its standard output written to a file,
timed by the wall clock; medians of ``--repeats`` alternating runs. Both outputs are compared
byte for byte. ``pypi-recent-50k`` is the first 50,000 rows of pypi-recent (svm-scale takes
about 10 minutes on the whole file: it visits every feature of every row, 321k features x
663k rows); ``pypi-recent`` is the whole file, its svm-scale run ended after
``--svm-scale-limit`` seconds; both run with -l 0 only (``SPARSE_ONLY``). svm-scale is
Debian's libsvm-tools (``scripts/oracles/libsvm_tools.sh``).
"""

from __future__ import annotations

import argparse
import filecmp
import itertools
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .common import (
    find_data_file,
    fmt_ratio,
    fmt_seconds,
    markdown_table,
    median,
    report_header,
    scratch_dir,
    write_report,
)

BENCH_DIR = Path(__file__).resolve().parent
FILES = {"a9a": "a9a", "w8a": "w8a", "ijcnn1": "ijcnn1", "pypi-recent": "pypi-recent"}
HEAD_ROWS = {"pypi-recent-50k": ("pypi-recent", 50_000)}
# The -l values a set is run with: -l -1 makes pypi-recent's rows dense (every row an entry for
# each of its 321k features whose minimum is 0: 61 GB of text for 50,000 rows), which no one
# asks of sparse text; -l 0 keeps them as sparse as they are.
SPARSE_ONLY = {"pypi-recent-50k", "pypi-recent"}


def data_file(name: str) -> Path | None:
    """The plain text of a data set (the first rows of one for the ``-50k`` sets)."""
    if name in HEAD_ROWS:
        source_name, n_rows = HEAD_ROWS[name]
        source = find_data_file(source_name)
        if source is None:
            return None
        target = scratch_dir() / name
        if not target.is_file() or target.stat().st_mtime < source.stat().st_mtime:
            with open(source, "rb") as src, open(target, "wb") as dst:
                dst.writelines(itertools.islice(src, n_rows))
        return target
    return find_data_file(FILES[name])


def run(command: list[str], out: Path, limit: float | None = None) -> float | None:
    """Wall seconds of one run with stdout to ``out``; None past ``limit`` (killed)."""
    start = time.perf_counter()
    with open(out, "wb") as f:
        try:
            subprocess.run(command, stdout=f, stderr=subprocess.DEVNULL, check=True,
                           timeout=limit)  # fmt: skip
        except subprocess.TimeoutExpired:
            return None
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="a9a,w8a,ijcnn1,pypi-recent-50k")
    parser.add_argument("--lower", default="-1,0", help="the -l values to run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--svm-scale-limit", type=float, default=900.0,
                        help="seconds after which an svm-scale run is ended")  # fmt: skip
    parser.add_argument("--out", default=str(BENCH_DIR / "RESULTS-scale.md"))
    args = parser.parse_args()
    svm_scale = shutil.which("svm-scale")
    if svm_scale is None:
        print("svm-scale not found: run scripts/oracles/libsvm_tools.sh", file=sys.stderr)
        return 1
    linsvm = [sys.executable, "-m", "linsvm", "scale"]
    scratch = scratch_dir()
    # (the kernels compiled and cached before any timing)
    tiny = scratch / "scale-warm.txt"
    tiny.write_text("1 1:0.5 3:2\n-1 2:1\n")
    run([*linsvm, str(tiny)], scratch / "scale-warm.out")

    rows = []
    for name in args.datasets.split(","):
        path = data_file(name)
        if path is None:
            print(f"{name}: not found, skipped", file=sys.stderr)
            continue
        for lower in args.lower.split(","):
            if name in SPARSE_ONLY and float(lower) != 0.0:
                print(f"{name} -l {lower}: skipped (dense output)", file=sys.stderr)
                continue
            options = ["-l", lower]
            ours, theirs = [], []
            ours_out, theirs_out = scratch / "scale-linsvm.out", scratch / "scale-svm-scale.out"
            for _ in range(args.repeats):
                theirs.append(run([svm_scale, *options, str(path)], theirs_out,
                                  args.svm_scale_limit))  # fmt: skip
                ours.append(run([*linsvm, *options, str(path)], ours_out))
                if theirs[-1] is None:
                    break  # (one run past the limit says enough)
            finished = [t for t in theirs if t is not None]
            same = filecmp.cmp(ours_out, theirs_out, shallow=False) if finished else None
            t_ours = median([t for t in ours if t is not None])
            t_theirs = median(finished) if finished else None
            size = ours_out.stat().st_size / 2**20
            print(f"{name} -l {lower}: linsvm {t_ours:.3f} s, svm-scale "
                  f"{fmt_seconds(t_theirs)} s, same bytes {same}", flush=True)  # fmt: skip
            theirs_cell = (fmt_seconds(t_theirs) if t_theirs is not None
                           else f"> {args.svm_scale_limit:.0f} (ended)")  # fmt: skip
            rows.append([name, lower, f"{size:.1f}", fmt_seconds(t_ours), theirs_cell,
                         fmt_ratio(t_ours, t_theirs),
                         {True: "yes", False: "NO", None: "n/a"}[same]])  # fmt: skip
    lines = report_header(
        "Scaling features: linsvm scale against svm-scale", "bench_scale",
        [f"repeats: {args.repeats} (median), alternating; svm-scale: {svm_scale} (Debian "
         "libsvm-tools)", "each run a fresh process, file to file (stdout to a file), wall "
         "clock; linsvm's includes Python's start, the import and the kernels' cache load",
         "pypi-recent sets with -l 0 only: -l -1 would make their rows dense (61 GB of text "
         "for the first 50,000 rows)"],
    )  # fmt: skip
    lines += markdown_table(
        ["data set", "-l", "output MB", "linsvm s", "svm-scale s", "linsvm / svm-scale",
         "same bytes"], rows)  # fmt: skip
    write_report(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
