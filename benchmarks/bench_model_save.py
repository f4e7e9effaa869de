"""Writing a large model file: the compiled, streamed writer against Python's formatting.

Run from the repository root::

    python -m benchmarks.bench_model_save [--classes 43] [--hash-bits 20] [--zeros 0.1]
        [--folder /tmp] [--writer new,python]

The weights stand in for a hashed degree-2 model (``linsvm train --poly2 --hash-bits 20`` on a
43-class set writes about 928 MB): ``classes x 2**hash_bits`` float64 weights, normal values
scaled by 10**U(-6, 0), a fraction ``--zeros`` of them 0 (columns no row hashed to). Each
writer runs in a fresh process (its kernels compiled beforehand on a tiny model), timed
around ``Model.save``, with the peak resident memory the save added (VmHWM, reset just before
the save, less the resident size then). ``python`` is the writer as it was: the whole text as
one Python string per weight, ``f"{v:.17g}"``, joined and written at once. Both files are
compared byte for byte.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
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
    coef = rng.standard_normal((n_classes, n)) * 10.0 ** rng.uniform(-6, 0, (n_classes, n))
    coef[:, rng.random(n) < zeros] = 0.0
    model = Model(1, np.arange(1, n_classes + 1), coef, -1.0)
    def status_kb(key):
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

    rss_before = status_kb("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak resident size (VmHWM) restarts from now
    start = time.perf_counter()
    if writer == "new":
        model.save(path)
    else:
        atomic_write_bytes(path, python_text(_fields(model)).encode("ascii"))
    seconds = time.perf_counter() - start
    peak = status_kb("VmHWM")
    print(seconds, max(0, peak - rss_before), os.path.getsize(path))
    """
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--classes", type=int, default=43)
    parser.add_argument("--hash-bits", type=int, default=20)
    parser.add_argument("--zeros", type=float, default=0.1)
    parser.add_argument("--folder", default="/tmp")
    parser.add_argument("--writer", default="new,python")
    args = parser.parse_args(argv)
    paths = {}
    print(f"{args.classes} classes x 2**{args.hash_bits} weights, {args.zeros:.0%} zeros")
    for writer in args.writer.split(","):
        path = os.path.join(args.folder, f"bench-model-save-{writer}.model")
        out = subprocess.run(
            [sys.executable, "-c", CHILD, writer, path, str(args.classes), str(args.hash_bits),
             str(args.zeros)], capture_output=True, text=True, check=True,
        )  # fmt: skip
        seconds, peak, size = out.stdout.split()
        print(f"{writer:>6}: save {float(seconds):7.2f} s, peak memory added "
              f"{int(peak) / 2**20:7.0f} MiB, file {int(size) / 1e6:7.1f} MB")
        paths[writer] = path
    if len(paths) == 2:
        a, b = paths.values()
        print("files identical:", filecmp.cmp(a, b, shallow=False))
    for path in paths.values():
        os.remove(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
