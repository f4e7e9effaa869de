"""Assemble benchmarks/RESULTS.md: the hand-written SUMMARY.md, then each script's report.

    python -m benchmarks.assemble_results

Each report keeps its own header (command, date, machine, commit); headings are demoted so they
nest under the section that names the report. Missing reports are listed as such.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

SECTIONS = [
    ("Training time, -s 1 / -s 3 against LIBLINEAR and Snap ML: full run", "RESULTS-train.md"),
    ("Training time: the small sets again, 11 repeats", "RESULTS-train-small.md"),
    ("The whole solver family against LIBLINEAR", "RESULTS-solvers.md"),
    ("The scikit-learn estimators against scikit-learn", "RESULTS-estimators.md"),
    ("The scikit-learn estimators: pypi-recent, L1 penalties", "RESULTS-estimators-pypi.md"),
    ("The scikit-learn estimators: L1-regularised LR after the -s 6 change",
     "RESULTS-estimators-lr-l1.md"),
    ("Iteration-capped runs against LIBLINEAR 2.50", "RESULTS-capped.md"),
    ("The scikit-learn estimators: one-vs-rest in threads (n_jobs)", "RESULTS-n-jobs.md"),
    ("The scikit-learn estimators: session 2's full run", "RESULTS-estimators-previous.md"),
    ("The seed's solver comparison: DCD vs Pegasos, SGD, PCD, Newton", "RESULTS-compare.md"),
    ("SGD solvers: the measured defaults", "RESULTS-sgd-defaults.md"),
    ("Line-search Newton vs TRON", "RESULTS-newton-vs-tron.md"),
    ("Line-search Newton vs TRON (small sets)", "RESULTS-newton-vs-tron-small.md"),
    ("Reader", "RESULTS-reader.md"),
    ("Memory", "RESULTS-memory.md"),
    ("Start-up and compilation", "RESULTS-startup.md"),
]


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
    (HERE / "RESULTS.md").write_text("\n\n".join(parts) + "\n")
    print(f"wrote {HERE / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
