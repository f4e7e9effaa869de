"""The pieces of ``benchmarks/bench_outofcore.py`` on tiny generated data.

- the split of a LIBSVM file into training and test lines, and its VW copy;
- the time to a relative accuracy from an outer-iteration trace (conservative: an iteration's
  end with the primal at its start, then the final model);
- a child's peak RSS and output through ``os.wait4``;
- the in-memory and block children in this process (trace, primal, w and alpha bytes);
- the whole run and its report on a tiny file (VW's rows only where vowpalwabbit is installed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

# the benchmarks package at the repository root (``python -m pytest`` puts it on sys.path)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bench_outofcore as bo  # noqa: E402
from linsvm.datasets import make_text_classification  # noqa: E402
from linsvm.io import write_cache  # noqa: E402


def _write_text(path: Path, rows: int = 600, seed: int = 0) -> Path:
    X, y = make_text_classification(rows, n_features=200, nnz_per_row=6, random_state=seed)
    with open(path, "w") as f:
        for i in range(rows):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in zip(X.indices[lo:hi], X.data[lo:hi],
                                                                strict=True))
            f.write(f"{int(y[i])} {feats}\n")
    return path


def test_split_and_vw_copy(tmp_path):
    text = _write_text(tmp_path / "data.svm", rows=100)
    info = bo.split_text(text, tmp_path / "work", test_fraction=0.1)
    assert info == {"rows": 100, "train_rows": 90, "test_rows": 10}
    lines = text.read_text().splitlines()
    train = (tmp_path / "work" / "train.svm").read_text().splitlines()
    test = (tmp_path / "work" / "test.svm").read_text().splitlines()
    assert train == lines[:90] and test == lines[90:]
    assert bo.split_text(text, tmp_path / "work") == info  # written once
    vw = tmp_path / "train.vw"
    assert bo.to_vw(tmp_path / "work" / "train.svm", vw) >= 0
    for src, out in zip(train, vw.read_text().splitlines(), strict=True):
        label, rest = src.split(" ", 1)
        assert out == f"{label} | {rest}"


def test_time_to_target_is_conservative():
    res = {"trace": [{"t": 1.0, "primal": 20.0}, {"t": 2.0, "primal": 10.5},
                     {"t": 3.0, "primal": 10.05}],
           "seconds": 3.5, "primal": 10.001}
    points = bo.block_points(res)
    assert points[-1] == (3.5, 10.001)
    assert bo.time_to(points, 10.0, 1e-1) == 2.0
    assert bo.time_to(points, 10.0, 1e-2) == 3.0
    assert bo.time_to(points, 10.0, 1e-3) == 3.5
    assert bo.time_to(points, 10.0, 1e-5) is None


def test_run_child_reports_output_and_peak_rss():
    code = "import numpy as np; a = np.ones(40_000_000 // 8); a += 1; print('done', a.sum())"
    out, seconds, rss = bo.run_child([sys.executable, "-c", code])
    assert out.startswith("done") and seconds > 0
    assert rss >= 40_000_000
    with pytest.raises(RuntimeError, match="failed"):
        bo.run_child([sys.executable, "-c", "raise SystemExit(3)"])


def test_children_in_process(tmp_path):
    text = _write_text(tmp_path / "data.svm")
    cache = tmp_path / "data.lsvc"
    write_cache(text, cache, block_bytes=2000)
    mem = bo.child("memory", {"cache": str(cache), "solver": 1, "eps": 1e-4,
                              "model": str(tmp_path / "m.model")})
    assert mem["primal"] >= mem["dual"] - 1e-9 * abs(mem["dual"])
    assert (tmp_path / "m.model").is_file()
    blk = bo.child("blocks", {"cache": str(cache), "solver": 1, "memory": "400M",
                              "selective": True, "max_outer": 50, "max_block_bytes": 4000,
                              "model": str(tmp_path / "b.model")})
    assert blk["trace"] and blk["w_bytes"] == 8 * 200 and blk["alpha_bytes"] == 8 * 600
    times = [p["t"] for p in blk["trace"]]
    assert times == sorted(times) and times[-1] <= blk["seconds"]
    # P(w) at each iteration's start is no lower than the optimum
    assert min(p["primal"] for p in blk["trace"]) >= mem["primal"] * (1 - 1e-6)
    assert bo.rel(blk["primal"], mem["primal"]) < 1e-2


def test_whole_run_and_report(tmp_path, monkeypatch):
    monkeypatch.setenv("LINSVM_BENCH_SCRATCH", str(tmp_path / "scratch"))
    text = _write_text(tmp_path / "data.svm", rows=800)
    args = argparse.Namespace(rows=None, size="small", text=str(text), memory="400M",
                              solvers="1", max_outer=20, vw_passes="1", no_nonselective=False,
                              fresh=False, keep_vw=False, note=["a note"], repeats=1)
    res = bo.summarise(bo.run(args))
    out = res["solvers"][1]
    assert out["pstar"] <= out["pstar_run"]["primal"]
    assert [m["eps"] for m in out["memory"]][-1] == 0.1
    assert [(b["budget"], b["selective"]) for b in out["blocks"]] == [("400M", None),
                                                                      ("400M", True)]
    assert all(len(b["all_seconds"]) == 1 for b in out["blocks"] + out["memory"])
    for b in out["blocks"]:
        assert b["rss"] > 0 and 50 <= b["test_acc"] <= 100
        assert b["bound"] == b["budget_bytes"] + b["w_bytes"] + b["alpha_bytes"]
    if bo.vw_available():
        assert res["vw"] and 50 <= res["vw"][0]["test_acc"] <= 100
    else:
        assert any("vowpalwabbit" in n for n in res["notes"])
    lines = bo.report(res, args, [2.0, 2.0])
    body = "\n".join(lines)
    assert "## -s 1" in body and "a note" in body and "to 1e-3 s" in body

    # the same folder under a memory cgroup (where this machine lets us make one)
    from benchmarks import bench_outofcore_ram as ram

    group_root = ram.CGROUP_ROOT
    if not (group_root / "memory.limit_in_bytes").is_file() or not os.access(group_root, os.W_OK):
        return
    folder = Path(res["text"]).with_name(Path(res["text"]).stem + "-outofcore")
    (folder / "results.json").write_text(json.dumps(res, default=str))
    out_md = tmp_path / "ram.md"
    ram.main(["--folder", str(folder), "--ram", "1G", "--memory", "400M", "--max-outer", "20",
              "--out", str(out_md)])
    body = out_md.read_text()
    assert "| blocks --memory 400M (cgroup 1G) | finished |" in body
    assert "in memory, eps 0.1 (cgroup 1G) | finished |" in body  # tiny data: it fits
    assert "warm page cache" in body
    assert "- disk: the cache read cold from start to end in" in body
    assert "## Against the disk" in body and "| the whole run |" in body


def test_vw_train_and_test(tmp_path):
    pytest.importorskip("vowpalwabbit")
    text = _write_text(tmp_path / "data.svm", rows=400)
    vw = tmp_path / "data.vw"
    bo.to_vw(text, vw)
    r = bo.vw_train(vw, tmp_path / "vw.model", passes=2, bits=16)
    assert r["seconds"] > 0 and r["rss"] > 0 and r["passes"] == 2
    acc, seconds = bo.vw_test(vw, tmp_path / "vw.model")
    assert 50 <= acc <= 100 and seconds > 0
    labels = np.array([float(line.split()[0]) for line in vw.read_text().splitlines()])
    assert set(np.unique(labels)) <= {-1.0, 1.0}


def test_the_run_of_median_time_stands_for_the_repeats():
    runs = [{"seconds": 3.0}, {"seconds": 1.0, "read_seconds": 0.5}, {"seconds": 2.0}]
    chosen = bo._median_run(runs)
    assert chosen["seconds"] == 2.0 and chosen["all_seconds"] == [3.0, 1.5, 2.0]
    assert bo._median_run(runs[:2])["seconds"] == 1.0  # of two, the faster
