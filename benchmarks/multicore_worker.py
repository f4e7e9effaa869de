"""LIBLINEAR's ``train`` timed on a problem built once: in process, or as a worker subprocess.

``liblinear_fit`` serves both LIBLINEARs of ``bench_multicore.py``: liblinear-official in the
project's venv (imported directly) and multi-core LIBLINEAR (PyPI's liblinear-multicore), which
installs the same module name ``liblinear`` and so lives in its own venv
(``scripts/bench_multicore_env.sh``). For the latter this file is run by that venv's python::

    .venv-multicore/bin/python benchmarks/multicore_worker.py DATA.npz BIAS

``DATA.npz`` holds a CSR matrix (``data``, ``indices``, ``indptr``, ``shape``) and labels ``y``
in {-1, +1}. The worker builds LIBLINEAR's ``problem`` once (untimed), answers ``{"ready": ...}``
on stdout, then reads one JSON request a line on stdin::

    {"solver": 1, "eps": 0.1, "threads": 2, "w_out": "/tmp/.../w.npy"}

trains (``-s solver -c 1 -e eps -B BIAS -m threads``; no ``-m`` when threads is null), writes
``w`` (float64, the features then the bias weight, positive side = label +1) to ``w_out`` and
answers one JSON line ``{"seconds", "n_iter", "capped"}``; ``seconds`` is
``time.perf_counter`` around ``train`` only. An empty line or end of input ends it. Only
numpy, scipy and liblinear are imported here: this file must run in either venv.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

import numpy as np

_ITER = re.compile(r"#iter\s*=\s*(\d+)")
CAP_MESSAGE = "reaching max number of iterations"


def liblinear_fit(prob, solver: int, eps: float, bias: float, n_features: int,
                  threads: int | None = None) -> dict:
    """Train once on a prepared ``problem`` (built with ``bias``); time ``train`` only.

    Returns ``seconds``, ``w`` (float64, shape (n_features + 1,) with the bias weight last when
    bias >= 0, else (n_features,); positive side = label +1), ``n_iter`` (LIBLINEAR's first
    "#iter", None if it printed none) and ``capped`` (it reported its iteration cap; for -s 1
    it then switched to -s 2, inside the timed call).
    """
    from liblinear import liblinear as ll
    from liblinear.liblinearutil import parameter, train

    options = f"-s {solver} -c 1 -e {eps:.17g} -B {bias:.17g}"
    if threads is not None:
        options += f" -m {int(threads)}"
    param = parameter(options)
    # LIBLINEAR's few progress lines through its print hook rather than -q: the iteration
    # count and the cap warning, a handful of calls per run
    messages: list[bytes] = []
    hook = ll.PRINT_STRING_FUN(lambda s: messages.append(s))
    param.print_func = hook
    t0 = time.perf_counter()
    model = train(prob, param)
    seconds = time.perf_counter() - t0
    text = b"".join(messages).decode(errors="replace")
    iters = [int(v) for v in _ITER.findall(text)]
    nr_feature = model.get_nr_feature()
    has_bias = bias >= 0
    raw = np.ctypeslib.as_array(model.w, shape=(nr_feature + has_bias,))
    w = np.zeros(n_features + has_bias)
    w[:nr_feature] = raw[:nr_feature]  # LIBLINEAR drops trailing empty columns
    if has_bias:
        w[-1] = raw[-1]
    if model.get_labels()[0] != 1:
        w = -w
    return {"seconds": seconds, "w": w, "n_iter": iters[0] if iters else None,
            "capped": CAP_MESSAGE in text}


def load_problem(path: str, bias: float):
    """(LIBLINEAR problem, number of features) from a CSR .npz with labels ``y``."""
    import scipy.sparse as sp
    from liblinear.liblinearutil import problem

    with np.load(path) as z:
        X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
        y = np.ascontiguousarray(z["y"], dtype=np.float64)
    return problem(y, X, bias), X.shape[1]


def main(argv: list[str]) -> None:
    path, bias = argv[0], float(argv[1])
    # Answers go to the real stdout; anything LIBLINEAR's Python side prints goes to stderr.
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    t0 = time.perf_counter()
    prob, n_features = load_problem(path, bias)
    from importlib import metadata

    try:
        version = metadata.version("liblinear-multicore")
    except metadata.PackageNotFoundError:
        version = "liblinear-official " + metadata.version("liblinear-official")
    answers.write(json.dumps({"ready": True, "version": version, "n_features": n_features,
                              "load_seconds": time.perf_counter() - t0}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            break
        req = json.loads(line)
        out = liblinear_fit(prob, int(req["solver"]), float(req["eps"]), bias, n_features,
                            req.get("threads"))
        np.save(req["w_out"], out.pop("w"))
        answers.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
