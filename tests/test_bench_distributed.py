"""The pieces of ``benchmarks/bench_distributed.py`` on tiny generated data.

- rounds and times to a relative accuracy from a round trace (the first round within it);
- the written model's arithmetic on made-up measurements;
- one traced distributed run on a LocalCluster of 2 worker processes, and the whole --quick
  run writing its report;
- dask-ml's LogisticRegression on sparse chunks scored with linsvm's logistic primal (where
  dask-ml and sparse are installed).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

# the benchmarks package at the repository root (``python -m pytest`` puts it on sys.path)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bench_distributed as bd  # noqa: E402


def _trace(primals: list[float]) -> list[dict]:
    return [{"round": k, "t": 1.0 + k, "primal": p, "relative_gap": 2 * (p - 10.0) / p + 1e-9,
             "seconds": 0.5, "compute": 0.25, "sent": 100, "received": 300, "events": []}
            for k, p in enumerate(primals)]


def test_rounds_to_a_target():
    trace = _trace([20.0, 11.0, 10.05, 10.005])
    assert bd.rounds_to(trace, 10.0, 1e-1)["rounds"] == 1
    hit = bd.rounds_to(trace, 10.0, 1e-2)
    assert hit["rounds"] == 2 and hit["t"] == 3.0 and hit["rel"] == pytest.approx(5e-3)
    assert bd.rounds_to(trace, 10.0, 1e-3)["rounds"] == 3
    assert bd.rounds_to(trace, 10.0, 1e-4) is None
    assert bd.rel(10.5, 10.0) == pytest.approx(0.05)


def test_projection_arithmetic():
    def run(k, rounds):
        trace = _trace([20.0] + [10.5] * (rounds - 1) + [10.01])
        return {"n_partitions": k, "to": [bd.rounds_to(trace, 10.0, t) for t in bd.TARGETS],
                "compute_seconds": 0.1 / k, "nnz_per_partition": 1e6 / k}

    res = {"shape": [1000, 50_000], "nnz": 1e6, "bytes": 1e7,
           "by_k": [run(1, 5), run(4, 8), run(16, 12)],
           "distributed": [{"workers": 1, "setup": 0.5, "compute_seconds": 0.1,
                            "nnz_per_partition": 1e6}],
           "single_to": [{"seconds": 2.0}, None]}
    proj = bd.projection(res, bandwidth=1e9, latency=1e-3, task_overhead=1e-3, scale=100,
                         workers=(16, 64))
    assert proj["c"] == pytest.approx(1e-7)
    r16, r64 = proj["rows"]
    assert (r16["rounds"], r16["rounds_from_k"]) == (12, 16)
    assert (r64["rounds"], r64["rounds_from_k"]) == (12, 16)  # the largest K measured
    assert r16["compute"] == pytest.approx(1e-7 * 100 * 1e6 / 16)
    assert r16["comm"] == pytest.approx(16 * 2 * 8 * 50_000 / 1e9 + 2e-3 + 16e-3)
    assert r16["setup"] == pytest.approx(100 * 1e7 / 16 / (1e7 / 0.5))
    assert r16["total"] == pytest.approx(r16["setup"] + 12 * (r16["compute"] + r16["comm"]))
    assert proj["single_1e2"] == pytest.approx(200.0)
    res["by_k"] = [run(1, 5)]
    res["by_k"][0]["to"] = [None, None]
    assert bd.projection(res) is None


def test_a_traced_run_and_the_quick_report(tmp_path, monkeypatch):
    monkeypatch.setenv("LINSVM_BENCH_SCRATCH", str(tmp_path / "scratch"))
    import linsvm

    path = bd.tiny_file(tmp_path, rows=3000, seed=2)
    X, y = linsvm.read_libsvm(path)
    ref = bd.reference(path, X, y, bd.SOLVER, fresh=False)
    assert ref["primal"] >= ref["dual"] and ref == bd.reference(path, X, y, bd.SOLVER, False)
    with bd.local_cluster(2, bd.tiny_file(tmp_path, rows=500)) as client:
        r = bd.distributed_run(client, str(path), bd.SOLVER, 2, ref["primal"], max_rounds=80)
    trace = r["trace"]
    assert [p["round"] for p in trace] == list(range(len(trace)))
    assert r["to"][1] is not None and r["to"][0]["rounds"] <= r["to"][1]["rounds"]
    assert r["setup"] > 0 and r["round_bytes"] > 0
    for p in trace:  # the gap each round reports bounds its distance to the optimum
        assert p["relative_gap"] * p["primal"] >= p["primal"] - ref["primal"] * (1 + 1e-9)
    assert not bd.gap_violations(r, ref["primal"])

    out = tmp_path / "report.md"
    bd.main(["--quick", "--workers", "1,2", "--partitions", "1,2", "--max-rounds", "40",
             "--out", str(out), "--note", "a note"])
    body = out.read_text()
    for heading in ("## tiny", "## Rounds against the number of partitions K",
                    "## Model: time to 1e-2", "## Published figures", "a note"):
        assert heading in body
    assert "CoCoA+, 2 worker(s)" in body and "single process, eps 0.1" in body
    again = tmp_path / "again.md"
    bd.main(["--report-only", str(tmp_path / "scratch" / "bench-distributed-quick.json"),
             "--out", str(again), "--note", "a note", "--note", "another"])
    text = again.read_text()
    assert text.split("## What is measured")[1].replace("- another\n", "") \
        == body.split("## What is measured")[1]
    assert "--quick" in text.split("\n")[2]  # the command of the run, not of this call


def test_dask_ml_on_sparse_chunks():
    pytest.importorskip("dask_ml")
    pytest.importorskip("sparse")
    import scipy.sparse as sp

    import linsvm

    rng = np.random.default_rng(0)
    X = sp.random(600, 40, density=0.2, format="csr", random_state=rng)
    y = np.where(rng.random(600) < 0.5, 1.0, -1.0)
    with bd.local_cluster(1) as client:
        out = bd.dask_ml_runs(client, X, y, iters=(200,), n_chunks=3)
    model = linsvm.train(X, y, solver=0, eps=1e-8)
    pstar = model.results_[0].primal
    (run,) = out["runs"]
    assert out["load"] > 0 and run["seconds"] > 0
    assert run["primal"] >= pstar * (1 - 1e-9) and bd.rel(run["primal"], pstar) < 1e-4


@pytest.mark.parametrize("solver", [1, 3, 7])
def test_the_bias_benchmarks_ones_column_is_liblinears_bias(solver):
    """``bench_distributed_bias`` writes -B 1 as a column of ones (bias=-1) to run the bias in
    the dual: the same problem, the same optimum."""
    import linsvm
    from benchmarks import bench_distributed_bias as bb

    X, y = bb.text_rows(300)
    with_bias = linsvm.train(X, y, solver=solver, bias=1.0, eps=1e-10, max_iter=100_000)
    as_column = linsvm.train(bb.with_ones_column(X), y, solver=solver, bias=-1.0, eps=1e-10,
                             max_iter=100_000)  # fmt: skip
    (r,), (r_col,) = with_bias.results_, as_column.results_
    assert abs(r.primal - r_col.primal) <= 1e-8 * r.primal
    np.testing.assert_allclose(as_column.coef_.ravel(), np.append(with_bias.coef_.ravel(),
                               with_bias.intercept_), atol=1e-5)  # fmt: skip
