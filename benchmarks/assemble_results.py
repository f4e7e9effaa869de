"""Assemble benchmarks/RESULTS.md: the hand-written SUMMARY.md, then each script's report.

    python -m benchmarks.assemble_results

Each report keeps its own header (command, date, machine, commit); headings are demoted so they
nest under the section that names the report. A missing report is named in a line of its own.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

# (title, report): one report per benchmark script, in the order of SUMMARY.md.
SECTIONS = [
    ("Training time, -s 1 / -s 3 against LIBLINEAR and Snap ML (harness.py)", "RESULTS-train.md"),
    ("Training time on pypi-recent, a seed a repeat (harness.py --datasets pypi-recent)",
     "RESULTS-train-pypi-seeds.md"),
    ("The whole solver family against LIBLINEAR (bench_solvers.py)", "RESULTS-solvers.md"),
    ("The scikit-learn estimators against scikit-learn (bench_estimators.py)",
     "RESULTS-estimators.md"),
    ("Iteration-capped runs against LIBLINEAR 2.50 (bench_capped.py)", "RESULTS-capped.md"),
    ("The scikit-learn estimators: one-vs-rest in threads (bench_n_jobs.py)", "RESULTS-n-jobs.md"),
    ("The seed's solver comparison: DCD vs Pegasos, SGD, PCD, Newton (bench_compare.py)",
     "RESULTS-compare.md"),
    ("SGD solvers: the measured defaults (bench_sgd_defaults.py)", "RESULTS-sgd-defaults.md"),
    ("The seeds' lineup: their tables reproduced, ours against the original programs "
     "(bench_lineup.py)", "RESULTS-lineup.md"),
    ("The seeds' lineup on pypi-recent, every racer its full budget (bench_lineup.py "
     "--full-budget)", "RESULTS-lineup-pypi.md"),
    ("The seeds' lineup on 3M generated rows, ours only (bench_lineup.py --datasets "
     "synthetic-text --no-originals)", "RESULTS-lineup-3m.md"),
    ("The seeds' lineup on 3M generated rows against the original programs (bench_lineup.py "
     "--datasets synthetic-text)", "RESULTS-lineup-3m-originals.md"),
    ("Bottou's three on 3M generated rows against sgd 2.0, every racer its full budget "
     "(bench_lineup.py --datasets synthetic-text --full-budget)", "RESULTS-lineup-3m-bottou.md"),
    ("One epoch of svmsgd, ASGD and SGD-QN against Bottou's sgd 2.0, single and double "
     "precision (bench_bottou_epochs.py)", "RESULTS-bottou-epochs.md"),
    ("The cutting-plane solvers across C against svmocas and LIBLINEAR "
     "(bench_cutting_plane_c.py)", "RESULTS-cutting-plane-c.md"),
    ("Training over a wide, mostly unused feature space (bench_wide.py)", "RESULTS-wide.md"),
    ("Line-search Newton vs TRON (bench_newton_vs_tron.py)", "RESULTS-newton-vs-tron.md"),
    ("The fixed cost of a call (bench_fixed_cost.py)", "RESULTS-fixed-cost.md"),
    ("Cross-validation on every core (bench_cv.py)", "RESULTS-cv.md"),
    ("Prediction on every core (bench_predict.py)", "RESULTS-predict.md"),
    ("Reader (bench_reader.py)", "RESULTS-reader.md"),
    ("Multi-core peers: -s 1 / -s 3 on 1 and 2 threads (bench_multicore.py)",
     "RESULTS-multicore.md"),
    ("Threads within one DCD solve: linsvm's threaded -s 1 / -s 3 (async and rounds) vs one "
     "thread, Snap ML and multi-core LIBLINEAR, 3M generated rows; simulated epochs on "
     "pypi-recent (bench_dcd_threads.py)", "RESULTS-dcd-threads.md"),
    ("Threads within one DCD solve, pypi-recent (bench_dcd_threads.py --datasets pypi-recent)",
     "RESULTS-dcd-threads-pypi.md"),
    ("Threads within one SVR dual solve: -s 12 / -s 13 vs one thread and LIBLINEAR "
     "(bench_svr_threads.py)", "RESULTS-svr-threads.md"),
    ("Where a threaded outer iteration's time goes: the shared w's parts taken away "
     "(bench_async_costs.py)", "RESULTS-async-costs.md"),
    ("The Newton solvers on 1 and 2 threads (bench_threads_primal.py)",
     "RESULTS-threads-primal.md"),
    ("Degree-2 maps and hashing vs kernel SVMs and scikit-learn (bench_poly2.py)",
     "RESULTS-poly2.md"),
    ("The binary cache vs text (bench_cache.py)", "RESULTS-cache.md"),
    ("Data larger than memory: block minimisation vs in-memory and Vowpal Wabbit "
     "(bench_outofcore.py)", "RESULTS-outofcore.md"),
    ("Data larger than memory: pypi-recent, -s 3 (bench_outofcore.py --text)",
     "RESULTS-outofcore-pypi.md"),
    ("Data larger than memory: pypi-recent, -s 7 (bench_outofcore.py --text --solvers 7)",
     "RESULTS-outofcore-lr-pypi.md"),
    ("Data larger than memory, 18M rows under a 1G budget (bench_outofcore.py --size large)",
     "RESULTS-outofcore-large.md"),
    ("Data larger than the machine's RAM: block minimisation in a memory cgroup "
     "(bench_outofcore_ram.py)", "RESULTS-outofcore-ram.md"),
    ("Data read from disk every pass: pypi-recent in a memory cgroup, against the disk's rate "
     "(bench_outofcore_ram.py --folder)", "RESULTS-outofcore-ram-pypi.md"),
    ("Distributed training on Dask by CoCoA+ (bench_distributed.py)", "RESULTS-distributed.md"),
    ("CoCoA+ with a bias held by the client (bench_distributed_bias.py)",
     "RESULTS-distributed-bias.md"),
    ("Saving and loading a large model (bench_model_save.py)", "RESULTS-model-save.md"),
    ("Scaling features: linsvm scale vs svm-scale (bench_scale.py)", "RESULTS-scale.md"),
    ("Scaling the whole of pypi-recent (bench_scale.py --datasets pypi-recent)",
     "RESULTS-scale-pypi.md"),
    ("Memory (bench_memory.py)", "RESULTS-memory.md"),
    ("Start-up and compilation (bench_startup.py)", "RESULTS-startup.md"),
    ("Long runs in one process: memory, files, threads (bench_soak.py)", "RESULTS-soak.md"),
    ("Fuzzed loaders: mutated inputs per loader (bench_fuzz.py)", "RESULTS-fuzz.md"),
    ("Stale reads of w: epochs to accuracy when rows are in flight (bench_staleness.py)",
     "RESULTS-staleness.md"),
]  # fmt: skip


def demote(text: str, levels: int = 2) -> str:
    """Every markdown heading ``levels`` deeper."""
    lines = []
    for line in text.splitlines():
        if line.startswith("#"):
            line = "#" * levels + line
        lines.append(line)
    return "\n".join(lines)


def main() -> None:
    parts = [(HERE / "SUMMARY.md").read_text().rstrip("\n")]
    for title, name in SECTIONS:
        path = HERE / name
        if path.exists():
            parts.append(f"## {title}\n\n(from `benchmarks/{name}`)\n\n{demote(path.read_text())}")
        else:
            parts.append(f"## {title}\n\n(no report yet: `benchmarks/{name}` is missing)")
    (HERE / "RESULTS.md").write_text("\n\n".join(parts) + "\n")
    print(f"wrote {HERE / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
