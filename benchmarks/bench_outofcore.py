"""Data larger than memory: block minimisation from a cache vs the in-memory solver and VW.

Run from the repository root::

    python -m benchmarks.bench_outofcore [--size small|large] [--memory 512M,1G]
        [--solvers 1,3] [--max-outer 30] [--vw-passes 1,5] [--out benchmarks/RESULTS-outofcore.md]

The question: can linsvm train -s 1 / -s 3 on data several times larger than its memory budget,
how fast, in how much memory, against the in-memory solver and Vowpal Wabbit?

Data: the generated text file of ``bench_reader`` (``make_text_classification(rows,
nnz_per_row=32)``, printed as LIBSVM text; ``--size small``: 3,000,000 rows, 1.45 GB, reused
from the scratch folder if present; ``--size large``: 20,000,000 rows, about 9.7 GB, written
once, which needs about 10 GB of memory while it is generated and about 35 GB of disk for the
text, its split, its cache and the VW copies). The last 10% of its lines are the test rows,
the first 90% the training rows, split with ``head``/``tail`` into a work folder beside it;
both are converted once to a linsvm cache (``write_cache``, timed in a child process), and to
VW's text format by ``sed`` (a label then " |", timed).

Every timed run is a fresh child process; its peak RSS is the child's ``ru_maxrss`` from
``os.wait4`` (the whole process: interpreter, NumPy, Numba's compiled code, data). Each linsvm
child first trains a tiny problem (Numba's cached kernels loaded, not timed).

- **in memory**: ``read_libsvm(train cache)`` (timed apart), then ``linsvm.train`` at eps 1,
  0.3 and 0.1 (the default), the sweep stopping at the first eps whose model reaches 1e-3.
- **P\\***: ``linsvm.train`` at eps 1e-4 on the same data in a child, cached in a json beside
  the cache; P* is the lowest primal value of any run (every P(w) is an upper bound), the
  reference run's dual value a certified lower bound.
- **blocks**: ``train_cache(cache, memory=M, solver=s)`` at its defaults (eps 0.1; for -s 1 and -s
  3 epochs of one pass a training block, drawn afresh each epoch) for each budget M, plus one run
  of the classic block minimisation (``selective=True, inner_iter=5``, the former default; the
  largest budget), with ``max_outer`` capped by ``--max-outer``. Each in-memory sweep and block
  run is repeated ``--repeats`` times (3), in memory and blocks alternating so that the machine's
  load falls on both; the run of median total time stands for each. ``on_outer`` records, for each
  outer iteration, the seconds since the call started at the iteration's end and
  ``OuterProgress.primal`` (P(w) at the iteration's start). The time to a relative accuracy (P -
  P*)/P* is the end of the first iteration whose start-primal is within it (conservative: that w
  existed an iteration earlier), or the end of the run by the final model's primal. Peak RSS is
  set against the budget and against budget + w + alpha + ``FIXED_OVERHEAD_BYTES`` (what
  ``train_blocks`` plans for).
- **test accuracy**: ``linsvm predict`` (streaming) on the test cache for each model kept.
- **Vowpal Wabbit** (``python -m vowpalwabbit``, the pip package's command line):
  ``--loss_function hinge -b 24 --holdout_off --passes N -c --cache_file F`` (a fresh cache
  file: the first pass parses the text) for each N of ``--vw-passes``; then ``-t`` on the test
  rows with ``-p``, accuracy by the sign of the prediction. VW adds a constant feature and
  uses its own (unregularised, adaptive SGD) objective: only time, memory and test accuracy
  compare.

The cache file stays in the OS page cache between runs (the machine has more memory than the
data), so block reads are memory copies, not disk reads: the times are those of a warm page
cache, and the peak RSS is the process's own (the page cache is not counted in it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .bench_reader import lscpu_head, synthetic_file, two_thread_capacity, warm_page_cache
from .common import (
    BENCH_DIR,
    REPO_ROOT,
    fmt_ratio,
    fmt_sci,
    fmt_seconds,
    git_description,
    markdown_table,
    report_header,
    write_report,
)

SIZES = {"small": 3_000_000, "large": 20_000_000}
DEFAULT_MEMORY = {"small": "512M,1G", "large": "1G"}
TEST_FRACTION = 0.1
IN_MEMORY_EPS = (1.0, 0.3, 0.1)
PSTAR_EPS = 1e-4
TARGETS = (1e-2, 1e-3)
VW_BITS = 24
MB = 1e6
MIB = 2**20


# ---- children: one measurement each, in a fresh process ---------------------------------------


def _warm_up() -> None:
    """Numba's cached kernels loaded (training, block minimisation) on a tiny problem."""
    import warnings

    import numpy as np
    import scipy.sparse as sp

    import linsvm
    from linsvm.outofcore import ArrayBlocks, train_blocks

    X = sp.random(200, 30, density=0.2, format="csr", random_state=0)
    y = np.where(np.arange(200) % 2 == 0, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in (1, 3):
            linsvm.train(X, y, solver=s)
            train_blocks(ArrayBlocks(X, y, 2), solver=s, memory="2G", max_outer=2)


def child(kind: str, spec: dict) -> dict:
    """One measurement in this process; ``spec`` holds its paths and options."""
    import warnings

    warnings.simplefilter("ignore")
    if kind == "convert":
        from linsvm.io import write_cache

        t0 = time.perf_counter()
        summary = write_cache(spec["text"], spec["cache"])
        return {"seconds": time.perf_counter() - t0, "rows": summary.n_rows,
                "features": summary.n_features, "nnz": summary.nnz,
                "blocks": summary.n_blocks, "cache_bytes": summary.cache_bytes,
                "text_bytes": summary.text_bytes}
    _warm_up()
    if kind == "memory":
        import linsvm

        t0 = time.perf_counter()
        X, y = linsvm.read_libsvm(spec["cache"])
        read = time.perf_counter() - t0
        t0 = time.perf_counter()
        model = linsvm.train(X, y, solver=spec["solver"], eps=spec["eps"],
                             max_iter=spec.get("max_iter"))
        train = time.perf_counter() - t0
        if spec.get("model"):
            model.save(spec["model"])
        r = model.results_[0]
        return {"read_seconds": read, "seconds": train, "primal": r.primal, "dual": r.dual,
                "n_iter": r.n_iter, "converged": bool(r.converged),
                "csr_bytes": int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)}
    if kind == "blocks":
        from linsvm.outofcore import train_cache

        trace: list[dict] = []
        t0 = time.perf_counter()

        def on_outer(p) -> None:
            trace.append({"t": time.perf_counter() - t0, "primal": sum(p.primal),
                          "measure": p.measure, "seconds": p.seconds, "mb": p.mb_read,
                          "blocks": p.blocks})

        model = train_cache(spec["cache"], memory=spec["memory"], solver=spec["solver"],
                            max_outer=spec["max_outer"], selective=spec["selective"],
                            inner_iter=5 if spec["selective"] else None,
                            max_block_bytes=spec.get("max_block_bytes"), on_outer=on_outer)
        seconds = time.perf_counter() - t0
        if spec.get("model"):
            model.save(spec["model"])
        r = model.results_[0]
        return {"seconds": seconds, "primal": r.primal, "dual": r.dual, "n_iter": r.n_iter,
                "converged": bool(r.converged), "trace": trace,
                "w_bytes": int(r.w.nbytes), "alpha_bytes": int(r.alpha.nbytes)}
    raise ValueError(f"unknown child kind {kind!r}")


def run_child(cmd: list[str], stdout_path: Path | None = None) -> tuple[str, float, int]:
    """(stdout, wall seconds, peak RSS in bytes) of one child process; fails loudly."""
    with tempfile.TemporaryFile("w+") as err:
        out_file = open(stdout_path, "w+") if stdout_path else tempfile.TemporaryFile("w+")
        with out_file as out:
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=out, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            seconds = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            text = out.read() if stdout_path is None else ""
            err.seek(0)
            if proc.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                                   f"{err.read()[-3000:]}")
    return text, seconds, usage.ru_maxrss * 1024


def measure(kind: str, spec: dict) -> dict:
    """A child of this script: its json result, wall seconds and peak RSS."""
    print(f"  {kind} {json.dumps({k: v for k, v in spec.items() if 'path' not in k})}",
          file=sys.stderr, flush=True)
    cmd = [sys.executable, "-m", "benchmarks.bench_outofcore", "--child", kind,
           json.dumps(spec)]
    text, wall, rss = run_child(cmd)
    res = json.loads(text.strip().splitlines()[-1])
    res.update(wall=wall, rss=rss)
    return res


# ---- data ------------------------------------------------------------------------------------


def count_lines(path: Path) -> int:
    out = subprocess.run(["wc", "-l", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def split_text(text: Path, folder: Path, test_fraction: float = TEST_FRACTION) -> dict:
    """``train.svm`` (the first lines) and ``test.svm`` (the last ``test_fraction``) in
    ``folder``, written once; their row counts."""
    folder.mkdir(parents=True, exist_ok=True)
    train, test = folder / "train.svm", folder / "test.svm"
    meta = folder / "split.json"
    if meta.is_file() and train.is_file() and test.is_file():
        return json.loads(meta.read_text())
    n = count_lines(text)
    n_test = max(1, int(round(n * test_fraction)))
    for target, cmd in ((train, ["head", "-n", str(n - n_test), str(text)]),
                        (test, ["tail", "-n", str(n_test), str(text)])):
        tmp = target.with_name(f".{target.name}.tmp")
        with open(tmp, "wb") as f:
            subprocess.run(cmd, stdout=f, check=True)
        os.replace(tmp, target)
    info = {"rows": n, "train_rows": n - n_test, "test_rows": n_test}
    meta.write_text(json.dumps(info))
    return info


def convert_cache(text: Path, cache: Path, fresh: bool) -> dict:
    """``write_cache(text, cache)`` in a child (timed, peak RSS), once; the figures of the
    conversion are kept beside the cache and reused when it already exists."""
    meta = cache.with_name(cache.name + ".convert.json")
    if not fresh and cache.is_file() and meta.is_file():
        res = json.loads(meta.read_text())
        res["reused"] = True
        return res
    warm_page_cache(text)
    res = measure("convert", {"text": str(text), "cache": str(cache)})
    meta.write_text(json.dumps(res))
    res["reused"] = False
    return res


def to_vw(text: Path, target: Path) -> float:
    """The LIBSVM file in VW's text format (``label | i:v ...``) by sed; seconds."""
    tmp = target.with_name(f".{target.name}.tmp")
    t0 = time.perf_counter()
    with open(tmp, "wb") as f:
        subprocess.run(["sed", "-e", r"s/^\([^ ]*\)/\1 |/", str(text)], stdout=f, check=True)
    seconds = time.perf_counter() - t0
    os.replace(tmp, target)
    return seconds


def rel(primal: float, pstar: float) -> float:
    return (primal - pstar) / pstar


def time_to(points: list[tuple[float, float]], pstar: float, target: float) -> float | None:
    """The first time whose primal is within ``target`` relative accuracy of ``pstar``."""
    for t, primal in points:
        if rel(primal, pstar) <= target:
            return t
    return None


def block_points(res: dict) -> list[tuple[float, float]]:
    """(seconds since the start, primal known by then): each outer iteration's end with the
    primal at its start, then the end of the run with the final model's primal."""
    return [(p["t"], p["primal"]) for p in res["trace"]] + [(res["seconds"], res["primal"])]


# ---- peers: linsvm predict and VW --------------------------------------------------------------


def linsvm_predict(test: Path, model: Path, folder: Path) -> tuple[float, float, int]:
    """(test accuracy %, wall seconds, peak RSS) of ``linsvm predict`` in a child."""
    exe = Path(sys.executable).with_name("linsvm")
    cmd = [str(exe)] if exe.is_file() else [sys.executable, "-c",
                                             "import sys; from linsvm.cli import main; "
                                             "sys.exit(main())"]
    out, wall, rss = run_child([*cmd, "predict", str(test), str(model),
                                str(folder / "predictions.txt")])
    m = re.search(r"Accuracy = ([0-9.]+)%", out)
    return (float(m.group(1)) if m else float("nan")), wall, rss


def vw_available() -> bool:
    try:
        import vowpalwabbit  # noqa: F401
    except ImportError:
        return False
    return True


def vw_train(train_vw: Path, model: Path, passes: int, bits: int = VW_BITS) -> dict:
    """VW's hinge loss over ``passes`` passes (a fresh cache file), in a child."""
    cache = model.with_name(model.name + ".cache")
    cache.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "vowpalwabbit", "-d", str(train_vw), "--loss_function",
           "hinge", "-b", str(bits), "--holdout_off", "--passes", str(passes), "-c",
           "--cache_file", str(cache), "-f", str(model), "--quiet"]
    _, wall, rss = run_child(cmd)
    cache.unlink(missing_ok=True)
    return {"seconds": wall, "rss": rss, "passes": passes}


def vw_test(test_vw: Path, model: Path) -> tuple[float, float]:
    """(test accuracy %, seconds): VW's predictions' signs against the labels."""
    import numpy as np

    preds = model.with_name(model.name + ".pred")
    _, wall, _ = run_child([sys.executable, "-m", "vowpalwabbit", "-t", "-i", str(model), "-d",
                            str(test_vw), "-p", str(preds), "--quiet"])
    p = np.loadtxt(preds, usecols=0, ndmin=1)
    labels = []
    with open(test_vw, "rb") as f:
        for line in f:
            labels.append(float(line.split(b" ", 1)[0]))
    y = np.asarray(labels)
    preds.unlink(missing_ok=True)
    return 100.0 * float(np.mean(np.where(p > 0, 1.0, -1.0) == np.sign(y))), wall


# ---- the benchmark ---------------------------------------------------------------------------


def reference_pstar(cache: Path, solver: int, fresh: bool) -> dict:
    """The tight in-memory run (eps ``PSTAR_EPS``), cached in a json beside the cache."""
    path = cache.with_name(cache.name + ".pstar.json")
    known = json.loads(path.read_text()) if path.is_file() else {}
    key = f"s{solver}-eps{PSTAR_EPS:g}"
    if fresh or key not in known:
        r = measure("memory", {"cache": str(cache), "solver": solver, "eps": PSTAR_EPS,
                               "max_iter": 1000})
        known[key] = {"primal": r["primal"], "dual": r["dual"], "seconds": r["seconds"],
                      "n_iter": r["n_iter"], "converged": r["converged"]}
        path.write_text(json.dumps(known, indent=1))
    return known[key]


def run(args) -> dict:
    from linsvm.outofcore import FIXED_OVERHEAD_BYTES

    n_rows = args.rows or SIZES[args.size]
    text = Path(args.text) if args.text else synthetic_file(n_rows)
    folder = text.with_name(text.stem + "-outofcore")
    split = split_text(text, folder)
    train_txt, test_txt = folder / "train.svm", folder / "test.svm"
    train_cache_path, test_cache_path = folder / "train.lsvc", folder / "test.lsvc"
    res: dict = {"text": str(text), "text_bytes": text.stat().st_size, "split": split,
                 "fixed_overhead": FIXED_OVERHEAD_BYTES, "notes": []}
    res["convert"] = convert_cache(train_txt, train_cache_path, args.fresh)
    convert_cache(test_txt, test_cache_path, args.fresh)
    res["cache_bytes"] = train_cache_path.stat().st_size
    warm_page_cache(train_cache_path)
    models = folder / "models"
    models.mkdir(exist_ok=True)

    solvers = [int(s) for s in args.solvers.split(",")]
    budgets = [m.strip() for m in args.memory.split(",") if m.strip()]
    res["solvers"] = {}
    for s in solvers:
        out: dict = {"pstar_run": reference_pstar(train_cache_path, s, args.fresh)}
        # the default (epochs) at each budget; the classic block minimisation (selective, 5
        # passes a visit: the former default) at the largest, for comparison
        runs = [(b, None) for b in budgets]
        if s != 7 and not args.no_nonselective:
            runs.append((budgets[-1], True))
        memory_reps: list[list[dict]] = []
        block_reps: list[list[dict]] = [[] for _ in runs]
        for _ in range(args.repeats):  # in memory, then blocks: alternating under one load
            memory_reps.append(_memory_sweep(s, train_cache_path, test_cache_path, models,
                                             folder, out["pstar_run"]))
            for i, (budget, selective) in enumerate(runs):
                block_reps[i].append(_blocks_run(s, budget, selective, args.max_outer,
                                                 train_cache_path, test_cache_path, models,
                                                 folder))
        # the run of median total time stands for each (its trace gives the times to targets)
        out["memory"] = [_median_run(list(reps)) for reps in zip(*memory_reps, strict=True)]
        out["blocks"] = [_median_run(reps) for reps in block_reps]
        out["repeats"] = args.repeats
        res["solvers"][s] = out

    if vw_available():
        train_vw, test_vw = folder / "train.vw", folder / "test.vw"
        res["vw_convert"] = to_vw(train_txt, train_vw)
        to_vw(test_txt, test_vw)
        res["vw"] = []
        for passes in [int(p) for p in args.vw_passes.split(",") if p.strip()]:
            model = models / f"vw-{passes}.model"
            print(f"  vw --passes {passes}", file=sys.stderr, flush=True)
            r = vw_train(train_vw, model, passes)
            r["test_acc"], r["test_seconds"] = vw_test(test_vw, model)
            res["vw"].append(r)
        if not args.keep_vw:
            train_vw.unlink(missing_ok=True)
            test_vw.unlink(missing_ok=True)
    else:
        res["notes"].append("vowpalwabbit is not installed (pip install vowpalwabbit): "
                            "no VW rows")
    return res


def _memory_sweep(s: int, train_cache_path, test_cache_path, models, folder, pstar_run) -> list:
    """The in-memory runs at eps 1, 0.3 and 0.1, from the first eps that reaches 1e-3 on
    only the default (0.1) still runs."""
    runs: list[dict] = []
    reached = False
    for eps in IN_MEMORY_EPS:
        if reached and eps != IN_MEMORY_EPS[-1]:
            continue  # a looser eps reached 1e-3; the default still runs (a user's run)
        model = models / f"memory-s{s}-eps{eps:g}.model"
        r = measure("memory", {"cache": str(train_cache_path), "solver": s, "eps": eps,
                               "model": str(model)})
        r["eps"] = eps
        r["test_acc"] = linsvm_predict(test_cache_path, model, folder)[0]
        runs.append(r)
        pstar = min([pstar_run["primal"]] + [m["primal"] for m in runs])
        reached = rel(r["primal"], pstar) <= TARGETS[-1]
    return runs


def _blocks_run(s: int, budget: str, selective: bool | None, max_outer: int, train_cache_path,
                test_cache_path, models, folder) -> dict:
    from linsvm.outofcore import parse_memory

    model = models / f"blocks-s{s}-{budget}-{'classic' if selective else 'default'}.model"
    r = measure("blocks", {"cache": str(train_cache_path), "solver": s, "memory": budget,
                           "selective": selective, "max_outer": max_outer,
                           "model": str(model)})
    r.update(budget=budget, budget_bytes=parse_memory(budget), selective=selective)
    r["test_acc"], r["predict_seconds"], r["predict_rss"] = linsvm_predict(
        test_cache_path, model, folder)
    return r


def _median_run(runs: list[dict]) -> dict:
    """The run of median wall time (of the read and training for in-memory runs)."""
    def key(r: dict) -> float:
        return r.get("read_seconds", 0.0) + r["seconds"]

    ordered = sorted(runs, key=key)
    chosen = dict(ordered[(len(ordered) - 1) // 2])
    chosen["all_seconds"] = [key(r) for r in runs]
    return chosen


def _run_name(budget: str, selective, s) -> str:
    return f"blocks {budget}" + (", classic (selective, 5 passes a visit)" if selective else "")


def summarise(res: dict) -> dict:
    """P* per solver and, for each run, its relative accuracy and times to the targets."""
    for out in res["solvers"].values():
        primals = [out["pstar_run"]["primal"]] + [m["primal"] for m in out["memory"]]
        primals += [b["primal"] for b in out["blocks"]]
        primals += [pt["primal"] for b in out["blocks"] for pt in b["trace"]]
        out["pstar"] = pstar = min(primals)
        out["pstar_gap"] = (pstar - out["pstar_run"]["dual"]) / abs(out["pstar_run"]["dual"])
        for m in out["memory"]:
            m["rel"] = rel(m["primal"], pstar)
        for b in out["blocks"]:
            b["rel"] = rel(b["primal"], pstar)
            b["to"] = [time_to(block_points(b), pstar, t) for t in TARGETS]
            b["bound"] = b["budget_bytes"] + b["w_bytes"] + b["alpha_bytes"]
        # in memory: the fastest eps reaching each target, read time added for end to end
        out["memory_to"] = []
        for t in TARGETS:
            ok = [m for m in out["memory"] if m["rel"] <= t]
            best = min(ok, key=lambda m: m["seconds"]) if ok else None
            out["memory_to"].append(best)
    return res


def report(res: dict, args, capacity: list[float]) -> list[str]:
    split, conv = res["split"], res["convert"]
    lines = report_header("Out-of-core training: block minimisation vs in memory vs VW",
                          "bench_outofcore", [
        f"data: {res['text']} ({res['text_bytes'] / MB:.0f} MB of text, {split['rows']} rows"
        + ("" if args.text else "; generated by make_text_classification(rows, "
           "nnz_per_row=32), bench_reader's file") + "); "
        f"training rows: the first {split['train_rows']}, test rows: the last "
        f"{split['test_rows']}",
        f"training cache: {res['cache_bytes'] / MB:.0f} MB, {conv['blocks']} stored blocks, "
        f"{conv['features']} features, {conv['nnz']} non-zeros",
        "MB = 10^6 bytes, MiB = 2^20; every run a fresh child process; peak RSS = the child's "
        "ru_maxrss (whole process); the cache in the OS page cache (block reads are memory "
        "copies)",
    ])
    lines += [
        "## Targets", "",
        "- Peak RSS of block minimisation within budget + w + alpha + a fixed overhead. "
        "`train_blocks` plans its fixed overhead (`FIXED_OVERHEAD_BYTES` = "
        f"{res['fixed_overhead'] / MIB:.0f} MiB: interpreter, libraries, compiled code) "
        "inside the budget, with w and alpha on top, so the bound checked here is the "
        "stricter budget + w + alpha.",
        "- Time to 1e-2 and 1e-3 relative primal accuracy (P - P*)/P* against the in-memory "
        "solver on the same rows.",
        "- Time and test accuracy against Vowpal Wabbit on the same rows.", "",
        "## Conversion (once)", "",
    ]
    reused = " (figures from the run that wrote it)" if conv.get("reused") else ""
    lines += markdown_table(
        ["step", "seconds", "MB/s of text", "peak RSS MB"],
        [["`write_cache` train rows -> cache" + reused, fmt_seconds(conv["seconds"]),
          f"{conv['text_bytes'] / MB / conv['seconds']:.0f}", f"{conv['rss'] / MB:.0f}"]]
        + ([["sed: train rows -> VW text", fmt_seconds(res["vw_convert"]),
             f"{conv['text_bytes'] / MB / res['vw_convert']:.0f}", "-"]]
           if "vw_convert" in res else []))
    lines += ["", "Reading a cache against parsing the text: see "
              "[RESULTS-cache.md](RESULTS-cache.md).", ""]

    for s, out in res["solvers"].items():
        pr = out["pstar_run"]
        lines += [f"## -s {s}", "",
                  f"P* = {out['pstar']:.10g} (lowest primal seen; the in-memory eps "
                  f"{PSTAR_EPS:g} run: {pr['seconds']:.1f} s, {pr['n_iter']} iterations, "
                  f"(P* - D)/|D| = {fmt_sci(out['pstar_gap'])}).", ""]
        rows = []
        mem_default = out["memory"][-1]
        for m in out["memory"]:
            rows.append([f"in memory, eps {m['eps']:g}", "-",
                         fmt_seconds(m["read_seconds"]), fmt_seconds(m["seconds"]),
                         fmt_seconds(m["read_seconds"] + m["seconds"]), m["n_iter"],
                         fmt_sci(m["rel"]), "", "", f"{m['rss'] / MB:.0f}", "-",
                         f"{m['test_acc']:.2f}"])
        for b in out["blocks"]:
            within = "yes" if b["rss"] <= b["budget_bytes"] else (
                "bound only" if b["rss"] <= b["bound"] else "NO")
            name = _run_name(b["budget"], b["selective"], s)
            n_blocks = b["trace"][0]["blocks"] if b["trace"] else "?"
            rows.append([name, n_blocks, "-", "-", fmt_seconds(b["seconds"]),
                         f"{b['n_iter']}{'' if b['converged'] else ' (cap)'}",
                         fmt_sci(b["rel"]), fmt_seconds(b["to"][0]),
                         fmt_seconds(b["to"][1]), f"{b['rss'] / MB:.0f}",
                         f"{b['bound'] / MB:.0f} ({within})", f"{b['test_acc']:.2f}"])
        lines += markdown_table(
            ["run", "blocks", "read s", "train s", "total s", "iterations", "rel. acc.",
             "to 1e-2 s", "to 1e-3 s", "peak RSS MB", "bound MB (within?)", "test acc %"],
            rows)
        lines += [
            "",
            "In memory: total = reading the cache + training; each eps a separate run (eps 0.1 "
            "is the default); the time to a target is the fastest run reaching it: "
            + ", ".join(f"{t:g}: " + (f"{fmt_seconds(m['read_seconds'] + m['seconds'])} s "
                                      f"(eps {m['eps']:g})" if m else "not reached")
                        for t, m in zip(TARGETS, out["memory_to"], strict=True)) + ".",
            "Blocks: total from the call to the model (labels read, every outer iteration, "
            "the final check pass); iterations = outer iterations ('cap' = --max-outer "
            "reached); bound = budget + w + alpha; 'yes' = within the budget itself.", ""]
        ratio_rows = []
        for b in out["blocks"]:
            name = _run_name(b["budget"], b["selective"], s)
            cells = [name]
            for m, bt in zip(out["memory_to"], b["to"], strict=True):
                mt = m["read_seconds"] + m["seconds"] if m else None
                cells.append(fmt_ratio(bt, mt))
            cells.append(fmt_ratio(b["seconds"], mem_default["read_seconds"]
                                   + mem_default["seconds"]))
            ratio_rows.append(cells)
        lines += markdown_table(["run", "to 1e-2: blocks / in memory", "to 1e-3: blocks / "
                                 "in memory", "default run: blocks / in memory"], ratio_rows)
        lines += ["", f"Outer iterations (-s {s}): seconds since the start at each iteration's "
                      "end; relative accuracy of P(w) at its start; the stopping measure.", ""]
        for b in out["blocks"]:
            name = _run_name(b["budget"], b["selective"], s)
            cells = [f"{i + 1}: {fmt_seconds(p['t'])} s {fmt_sci(rel(p['primal'], out['pstar']))} "
                     f"({p['measure']:.2g})" for i, p in enumerate(b["trace"])]
            lines.append(f"- {name}: " + "; ".join(cells))
        lines.append("")

    if res.get("vw"):
        lines += ["## Vowpal Wabbit", "",
                  f"`python -m vowpalwabbit -d train.vw --loss_function hinge -b {VW_BITS} "
                  "--holdout_off --passes N -c --cache_file F` (a fresh cache: the first pass "
                  "parses the text), then `-t -i model -d test.vw -p preds`; accuracy by the "
                  f"sign of the prediction. vowpalwabbit "
                  f"{_version('vowpalwabbit')}.", ""]
        rows = []
        for v in res["vw"]:
            cells = [f"VW hinge, {v['passes']} pass(es)", fmt_seconds(v["seconds"]),
                     f"{v['rss'] / MB:.0f}", f"{v['test_acc']:.2f}"]
            for out in res["solvers"].values():
                best = min(out["blocks"], key=lambda b: b["seconds"])
                m = out["memory"][-1]
                cells.append(f"{fmt_ratio(best['seconds'], v['seconds'])} / "
                             f"{fmt_ratio(m['read_seconds'] + m['seconds'], v['seconds'])}")
            rows.append(cells)
        lines += markdown_table(
            ["run", "train s", "peak RSS MB", "test acc %"]
            + [f"-s {s}: fastest blocks / in memory (default), time ratio to VW"
               for s in res["solvers"]], rows)
        lines += ["", "VW's times include its parse of the text on the first pass (linsvm's "
                  "runs read the cache written once beforehand: add the conversion above for a "
                  "first run); VW trains its own objective (an unregularised hinge by adaptive "
                  "SGD, with a constant feature), so only time, memory and test accuracy "
                  "compare.", ""]

    lines += ["## Machine (`lscpu | head`)", "", "```", *lscpu_head(), "```", "",
              "Two-thread capacity (a compute kernel on 2 threads vs 1; 2.00 on an idle 2-core "
              "machine, 1.00 when one core is taken by others): "
              f"{capacity[0]:.2f} at the start, {capacity[1]:.2f} at the end."]
    notes = res["notes"] + args.note
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return lines


def _src_state() -> tuple[str, str]:
    """(HEAD's description, a digest of src/ as it is in the working tree): whether the code
    measured changed during the run (HEAD alone moves with commits of other files)."""
    try:
        tree = subprocess.run(["git", "-C", str(REPO_ROOT), "diff", "HEAD", "--", "src"],
                              capture_output=True, text=True, check=True).stdout
        head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD:src"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return git_description(), ""
    return git_description(), head + str(hash(tree))


def _version(name: str) -> str:
    from .common import package_version

    return package_version(name)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", choices=sorted(SIZES), default="small",
                   help="small: 3M generated rows (1.45 GB of text); large: 20M (about 9.7 GB)")
    p.add_argument("--rows", type=int, default=None, help="generated rows (overrides --size)")
    p.add_argument("--text", default=None, help="a LIBSVM file to use instead (binary labels)")
    p.add_argument("--memory", default=None,
                   help="comma-separated budgets (small: 512M,1G; large: 1G)")
    p.add_argument("--solvers", default="1,3")
    p.add_argument("--max-outer", type=int, default=30, help="cap on outer iterations (30)")
    p.add_argument("--vw-passes", default="1,5")
    p.add_argument("--no-nonselective", action="store_true",
                   help="skip the classic block minimisation's run (selective, 5 passes)")
    p.add_argument("--repeats", type=int, default=3,
                   help="runs of each, in memory and in blocks alternating; medians (3)")
    p.add_argument("--fresh", action="store_true",
                   help="convert again and recompute P* (else reuse what the scratch holds)")
    p.add_argument("--keep-vw", action="store_true", help="keep the VW text files")
    p.add_argument("--child", nargs=2, metavar=("KIND", "SPEC"), help=argparse.SUPPRESS)
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--out", default=str(BENCH_DIR / "RESULTS-outofcore.md"))
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], json.loads(args.child[1]))))
        return
    args.memory = args.memory or DEFAULT_MEMORY[args.size]
    if shutil.which("sed") is None or shutil.which("head") is None:
        raise SystemExit("needs sed, head, tail and wc")
    capacity = [two_thread_capacity()]
    code_at_start = _src_state()
    res = summarise(run(args))
    capacity.append(two_thread_capacity())
    if _src_state() != code_at_start:
        res["notes"].append(f"src/ changed during the run (it started at commit "
                            f"{code_at_start[0]}): the figures may mix versions")
    folder = Path(res["text"]).with_name(Path(res["text"]).stem + "-outofcore")
    (folder / "results.json").write_text(json.dumps(res, indent=1, default=str))
    write_report(report(res, args, capacity), args.out)


if __name__ == "__main__":
    main()
