"""Writing and reading a large model file: the compiled, streamed writer against Python's
formatting, and loading against LIBLINEAR's.

Run from the repository root::

    python -m benchmarks.bench_model_save [--classes 43,105] [--hash-bits 20] [--zeros 0.1]
        [--folder /tmp] [--writer new,python] [--reader linsvm,liblinear] [--repeats 3]
        [--out RESULTS-model-save.md]

The weights stand in for a hashed degree-2 model (``linsvm train --poly2 --hash-bits 20`` on a
43-class set writes about 928 MB): ``classes x 2**hash_bits`` float64 weights, normal values
scaled by 10**U(-6, 0), a fraction ``--zeros`` of them 0 (columns no row hashed to). Each
writer runs in a fresh process (its kernels compiled beforehand on a tiny model), timed
around ``Model.save``, with the peak resident memory the save added (VmHWM, reset just before
the save, less the resident size then). ``python`` is the writer as it was: the whole text as
one Python string per weight, ``f"{v:.17g}"``, joined and written at once. Both files are
compared byte for byte.

The file the new writer wrote is then loaded, each reader in a fresh process as well:
``linsvm.load_model`` (its compiled reader of the weights compiled beforehand) and
liblinear-official's ``load_model`` (LIBLINEAR's C ``fscanf``), with the time, the peak
memory it added, and whether both hold the same weights to the bit.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from .common import fmt_ratio, fmt_seconds, markdown_table, median, report_header, write_report

# What both child scripts measure with: the peak resident size the timed step adds (VmHWM,
# restarted just before it, less the resident size then).
PEAK_MEMORY = textwrap.dedent(
    """
    def status_bytes(key):
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

    def restart_peak():
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # the peak resident size (VmHWM) restarts from now
        return status_bytes("VmRSS")
    """
)

CHILD = PEAK_MEMORY + textwrap.dedent(
    """
    import os, sys, time
    import numpy as np
    from linsvm import Model
    from linsvm.io._atomic import atomic_write_bytes
    from linsvm.model import _fields

    writer, path, n_classes, hash_bits, zeros = sys.argv[1:6]
    n_classes, hash_bits, zeros = int(n_classes), int(hash_bits), float(zeros)

    def python_text(f):
        # the writer before the compiled one, line for line
        coef = np.asarray(f.coef, dtype=np.float64)
        head = ("solver_type L2R_L2LOSS_SVC_DUAL\\nnr_class %d\\nlabel %s\\nnr_feature %d\\n"
                "bias %.17g\\nw" % (len(f.labels), " ".join(str(v) for v in f.labels.tolist()),
                                   coef.shape[1], f.bias))
        weights = coef.T
        body = "\\n".join(" ".join(f"{v:.17g}" for v in row) + " " for row in weights.tolist())
        return head + "\\n" + body + ("\\n" if body else "")

    Model(1, np.array([1, 2, 3]), np.ones((3, 4)), -1.0).save(path)  # kernels compiled
    rng = np.random.default_rng(0)
    n = 2**hash_bits
    n_w = 1 if n_classes == 2 else n_classes  # (two classes: one weight vector)
    coef = rng.standard_normal((n_w, n)) * 10.0 ** rng.uniform(-6, 0, (n_w, n))
    coef[:, rng.random(n) < zeros] = 0.0
    model = Model(1, np.arange(1, n_classes + 1), coef, -1.0)
    rss_before = restart_peak()
    start = time.perf_counter()
    if writer == "new":
        model.save(path)
    else:
        atomic_write_bytes(path, python_text(_fields(model)).encode("ascii"))
    seconds = time.perf_counter() - start
    peak = status_bytes("VmHWM")
    print(seconds, max(0, peak - rss_before), os.path.getsize(path))
    """
)


LOAD_CHILD = PEAK_MEMORY + textwrap.dedent(
    """
    import hashlib, os, sys, time
    import numpy as np

    reader, path, folder = sys.argv[1:4]
    if reader == "linsvm":
        import linsvm
        import linsvm.io.model_file as model_file
        tiny = os.path.join(folder, "bench-model-load-tiny.model")
        linsvm.Model(1, np.array([1, 2, 3]), np.ones((3, 4)), -1.0).save(tiny)
        model_file.PYTHON_PARSE_MAX_WEIGHTS, small = -1, model_file.PYTHON_PARSE_MAX_WEIGHTS
        linsvm.load_model(tiny)  # (the compiled reader compiled)
        model_file.PYTHON_PARSE_MAX_WEIGHTS = small
        os.remove(tiny)
    else:
        from liblinear.liblinearutil import load_model

    rss_before = restart_peak()
    start = time.perf_counter()
    if reader == "linsvm":
        model = linsvm.load_model(path)
    else:
        model = load_model(path)
    seconds = time.perf_counter() - start
    peak = status_bytes("VmHWM")
    if reader == "linsvm":
        weights = np.ascontiguousarray(model.coef_.T)  # (LIBLINEAR's order: feature-major)
    else:
        n_w = model.nr_class if model.nr_class > 2 or model.param.solver_type == 4 else 1
        weights = np.ctypeslib.as_array(model.w, shape=(model.nr_feature * n_w,))
    print(seconds, max(0, peak - rss_before), hashlib.sha256(weights.tobytes()).hexdigest())
    """
)


def _load_once(reader: str, path: str, folder: str):
    """(seconds, peak bytes added, digest of the weights) of one load in a fresh process."""
    out = subprocess.run([sys.executable, "-c", LOAD_CHILD, reader, path, folder],
                         capture_output=True, text=True)  # fmt: skip
    if out.returncode:
        raise SystemExit(f"{reader} could not load {path}:\n{out.stderr}")
    seconds, peak, digest = out.stdout.split()
    return float(seconds), int(peak), digest


def _save_once(writer: str, path: str, n_classes: int, hash_bits: int, zeros: float):
    """(seconds, peak bytes added, file bytes) of one save in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, writer, path, str(n_classes), str(hash_bits), str(zeros)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    seconds, peak, size = out.stdout.split()
    return float(seconds), int(peak), int(size)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--classes", default="43,105",
                        help="comma-separated class counts, a model each (43,105)")
    parser.add_argument("--hash-bits", type=int, default=20)
    parser.add_argument("--zeros", type=float, default=0.1)
    parser.add_argument("--folder", default="/tmp")
    parser.add_argument("--writer", default="new,python")
    parser.add_argument("--reader", default="linsvm,liblinear",
                        help="readers of the new writer's file (linsvm, liblinear; none: no "
                             "load)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="saves per writer and model, interleaved (median)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "RESULTS-model-save.md"))
    args = parser.parse_args(argv)
    writers = args.writer.split(",")
    readers = [r for r in args.reader.split(",") if r != "none"]
    rows, load_rows = [], []
    for n_classes in (int(c) for c in args.classes.split(",")):
        times: dict[str, list[float]] = {w: [] for w in writers}
        peaks: dict[str, list[int]] = {w: [] for w in writers}
        paths = {w: os.path.join(args.folder, f"bench-model-save-{w}.model") for w in writers}
        identical = True
        for _ in range(args.repeats):
            for writer in writers:
                seconds, peak, size = _save_once(writer, paths[writer], n_classes,
                                                 args.hash_bits, args.zeros)
                times[writer].append(seconds)
                peaks[writer].append(peak)
                print(f"{n_classes} classes, {writer}: {seconds:.2f} s, "
                      f"{peak / 2**20:.0f} MiB added", flush=True)
            if len(writers) == 2:
                identical &= filecmp.cmp(*paths.values(), shallow=False)
        if readers and "new" in writers:
            load_rows.append(_load_row(readers, paths["new"], args, f"{n_classes} x "
                                       f"2^{args.hash_bits}", size))  # fmt: skip
        for path in paths.values():
            os.remove(path)
        t = {w: median(times[w]) for w in writers}
        rows.append(
            [f"{n_classes} x 2^{args.hash_bits}", f"{size / 1e6:.0f} MB"]
            + [f"{fmt_seconds(t[w])} ({fmt_seconds(min(times[w]))}-{fmt_seconds(max(times[w]))})"
               for w in writers]
            + [f"{max(peaks[w]) / 2**20:.0f} MiB" for w in writers]
            + ([fmt_ratio(t[writers[1]], t[writers[0]]), "yes" if identical else "NO"]
               if len(writers) == 2 else [])
        )
    header = (["weights", "file"] + [f"{w} s (min-max)" for w in writers]
              + [f"{w} peak added" for w in writers]
              + ([f"{writers[1]} / {writers[0]}", "same bytes"] if len(writers) == 2 else []))
    lines = report_header(
        "Saving and loading a large model: the compiled, streamed writer vs Python's "
        "formatting; load_model vs LIBLINEAR's",
        "bench_model_save",
        [f"weights: normal values scaled by 10**U(-6, 0), {args.zeros:.0%} zeros; "
         f"median of {args.repeats} saves a writer, interleaved, each in a fresh process",
         "new: `Model.save` (Numba formatting, 4 MiB chunks on every core, streamed through "
         "the atomic writer); python: one `f\"{v:.17g}\"` string a weight, joined and "
         "written at once (the writer before it)"],
    )
    lines += markdown_table(header, rows)
    if load_rows:
        lines += ["", "## Loading the new writer's file", "",
                  f"median of {args.repeats} loads a reader, interleaved, each in a fresh process; "
                  "same weights: the same bits in both", ""]  # fmt: skip
        lines += markdown_table(
            ["weights", "file"] + [f"{r} s (min-max)" for r in readers]
            + [f"{r} peak added" for r in readers]
            + ([f"{readers[1]} / {readers[0]}", "same weights"] if len(readers) == 2 else []),
            load_rows,
        )
    write_report(lines, args.out)
    return 0


def _load_row(readers: list[str], path: str, args, weights: str, size: int) -> list[str]:
    """The loading table's row of one file: each reader's times and peak memory."""
    times: dict[str, list[float]] = {r: [] for r in readers}
    peaks: dict[str, list[int]] = {r: [] for r in readers}
    digests = set()
    for _ in range(args.repeats):
        for reader in readers:
            seconds, peak, digest = _load_once(reader, path, args.folder)
            times[reader].append(seconds)
            peaks[reader].append(peak)
            digests.add(digest)
            print(f"{weights}, {reader} load: {seconds:.2f} s, {peak / 2**20:.0f} MiB added",
                  flush=True)
    t = {r: median(times[r]) for r in readers}
    return (
        [weights, f"{size / 1e6:.0f} MB"]
        + [f"{fmt_seconds(t[r])} ({fmt_seconds(min(times[r]))}-{fmt_seconds(max(times[r]))})"
           for r in readers]
        + [f"{max(peaks[r]) / 2**20:.0f} MiB" for r in readers]
        + ([fmt_ratio(t[readers[1]], t[readers[0]]), "yes" if len(digests) == 1 else "NO"]
           if len(readers) == 2 else [])
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
