"""``linsvm compare``: the solvers of the linear SVM raced, in the seeds' tables.

    linsvm compare [options] training_set_file test_set_file
    linsvm compare [options] -d train[,test] [-d train[,test] ...]

Each racer of ``LINEUP`` (dual coordinate descent with and without shrinking for both losses;
for the L1 loss Pegasos, SGD-R/S/M, the cutting planes of SVMperf and OCAS, Bottou's svmsgd,
ASGD and SGD-QN, MPU; for the L2 loss primal coordinate descent, the primal Newton method and
TRON) is a registered solver of ``linsvm.solvers.SOLVERS`` with a tolerance and options; all
solve one ``Subproblem`` per data set (one C, the bias as given) through the solver interface,
with a recording hook. ``LINEUPS`` names the seeds' racers: ``dcd2008`` (Hsieh et al., ICML
2008, the default), ``sgd2013`` (Panagiotakopoulos and Tsampouka 2013) and ``linsvm``. The
outcome:

- per loss, a table: the time each racer needs to bring the relative primal accuracy
  (P(w) - P*)/P* to 1e-2 and to 1e-3, where it ends (relative and test accuracy), its
  iterations, and what recording cost;
- figures: relative primal difference (log scale) and test accuracy against training time, one
  curve per racer, for each loss (``plot`` extra: matplotlib);
- the raw curves as JSON, so that the figures can be redrawn (``ComparisonResult.from_json``,
  ``plot_figures``);
- the seeds' table (``table``): one row a data set, one column a racer, seconds and iterations
  to 1% and 0.1%, as ``lineup.md`` and ``lineup.csv``.

Measuring without distorting the measured (docs/architecture.md, "compare"):

- the hook (``recording.Recorder``) stops the clock while it runs and only copies ``w``
  (log-spaced snapshots); every snapshot is evaluated after the run, P(w) by
  ``linsvm.objective.primal_value``, and the test accuracy;
- the overhead is reported: the time in the hook, and the same racer run again without a hook
  for the same number of iterations;
- every racer first runs on a few rows so that Numba's compilation is not timed; a racer stops
  at its own tight tolerance, once it is certainly past the table's last accuracy line
  ((P(w) - D)/D <= 1e-3, scored in the hook at each snapshot, off the clock), or when its time
  budget is spent (the hook returns False): ``max_time``, or once a racer of its loss has
  passed that line, ``RACE_FACTOR`` x the fastest time to it so far;
- P* per loss is the lowest primal value seen, certified by the dual value of a tight
  reference DCD run: the optimum lies in [D, P*], reported as (P* - D)/D, run until that is
  1e-6 (a thousandth of the last line).

Modules: ``lineup`` (the racers), ``recording`` (the hook), ``runners`` (the race),
``report`` (results, tables, JSON), ``table`` (the seeds' table over data sets), ``figures``,
``command`` (the command line).

Labels: two classes, LIBLINEAR's order (the first label seen is +1, except that -1/+1 data
keeps +1 positive: ``linsvm.data.group_labels``).
"""

from .command import USAGE, VALUE_OPTIONS, CompareOptions, parse_compare_args, run_compare
from .figures import plot_figures
from .lineup import DEFAULT_LINEUP, LINEUP, LINEUPS, Racer, check_lineup, check_racer_names
from .recording import CLOCKS, Recorder
from .report import ComparisonResult, Reference, SolverRun, write_outputs
from .runners import (
    DEFAULT_MAX_TIME,
    RACE_FACTOR,
    STOP_ACCURACY,
    STOP_PAST_LINE,
    binary_pm1,
    compare,
    run_racer,
)
from .table import lineup_csv, lineup_tables

__all__ = [
    "CLOCKS",
    "ComparisonResult",
    "CompareOptions",
    "DEFAULT_LINEUP",
    "DEFAULT_MAX_TIME",
    "LINEUP",
    "LINEUPS",
    "RACE_FACTOR",
    "Racer",
    "Recorder",
    "Reference",
    "STOP_ACCURACY",
    "STOP_PAST_LINE",
    "SolverRun",
    "USAGE",
    "VALUE_OPTIONS",
    "binary_pm1",
    "check_lineup",
    "check_racer_names",
    "lineup_csv",
    "lineup_tables",
    "compare",
    "parse_compare_args",
    "plot_figures",
    "run_compare",
    "run_racer",
    "write_outputs",
]
