"""The racers: each name of ``linsvm compare`` is a registered solver with some options.

A racer is not an adapter: it says which solver of ``linsvm.solvers.SOLVERS`` runs, with which
tolerance and options, and how it is drawn. The runner builds one ``Subproblem`` per problem
and hands each racer ``sub.but(eps=..., options=...)`` and the recording hook.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInputError
from ..objective import LOSS_HINGE, LOSS_SQUARED_HINGE

# The racers' tolerances: tight, so that the curves go well below 1e-3 (the time budget ends
# those that would take too long). Each is the solver's own tolerance (``Subproblem.eps``).
DCD_EPS = 1e-5
NEWTON_EPS = 1e-10
PCD_EPS = 1e-8
SGD_DELTA = 1e-6  # SGD-S/M and MPU: the relative accuracy bound; the SGD solvers without a
# stopping rule (Pegasos, SGD-R, svmsgd, ASGD, SGD-QN) ignore it: the time budget stops them
CUTTING_PLANE_EPS = 1e-6  # SVMperf's slack tolerance, OCAS's relative gap

LOSS_KEYS = {LOSS_HINGE: "l1", LOSS_SQUARED_HINGE: "l2"}
LOSS_TITLES = {"l1": "L1-loss SVM (hinge)", "l2": "L2-loss SVM (squared hinge)"}
# The dual coordinate descent solver of each loss: the reference run for P* and its dual bound.
DUAL_SOLVER = {LOSS_HINGE: 3, LOSS_SQUARED_HINGE: 1}


@dataclass(frozen=True)
class Racer:
    """One name of the race: registered solver ``solver`` at tolerance ``eps`` with ``options``.

    ``measure`` names what the solver's ``Progress.measure`` is (the quantity its stopping rule
    compares with eps), for the progress line and ``curves.json``.
    """

    name: str
    solver: int  # key of linsvm.solvers.SOLVERS (-1 for a racer that is not available)
    loss: int  # the primal the racer minimises (LOSS_HINGE or LOSS_SQUARED_HINGE)
    eps: float
    label: str
    measure: str
    color: str
    marker: str
    linestyle: str = "-"
    options: dict[str, Any] = field(default_factory=dict)
    unavailable: str = ""  # why a racer of a seed's table cannot run (it is listed, not raced)


NO_SHRINKING = {"shrinking": False}
IN_ORDER = {"shuffle": False}
# SGD-QN searches its t0 with as many epochs as it runs: a race has no epoch count, so the
# search gets sgd 2.0's default run of 5
T0_EPOCHS = {"t0_epochs": 5}
# The second seed races the margin perceptron with unlearning (Panagiotakopoulos and Tsampouka,
# ICML 2010); its paper's abstract is public, its update and stopping rules and its code (once at
# users.auth.gr/costapan) are not, and no other public source states them: not guessed at.
MPU_MISSING = (
    "not available: MPU's update and stopping rules are in no public source reachable here "
    "(the ICML 2010 paper's abstract only)"
)

# The table: adding a racer is one line.
LINEUP: dict[str, Racer] = {
    r.name: r
    for r in [
        Racer("dcd-l1", 3, LOSS_HINGE, DCD_EPS, "DCD-L1 (shrinking)", "PG measure", "tab:blue", "o"),  # noqa: E501
        Racer("dcd-l1-noshrink", 3, LOSS_HINGE, DCD_EPS, "DCD-L1 (no shrinking)", "PG measure", "tab:cyan", "s", "--", NO_SHRINKING),  # noqa: E501
        Racer("pegasos", 30, LOSS_HINGE, SGD_DELTA, "Pegasos", "(no measure)", "tab:red", "^"),
        Racer("sgd-s", 32, LOSS_HINGE, SGD_DELTA, "SGD-S", "rel. acc. bound", "tab:orange", "v"),
        Racer("sgd-m", 33, LOSS_HINGE, SGD_DELTA, "SGD-M", "rel. acc. bound", "tab:brown", "D"),
        Racer("sgd-r", 31, LOSS_HINGE, SGD_DELTA, "SGD-R", "(no measure)", "tab:pink", "P"),
        Racer("svmperf", 35, LOSS_HINGE, CUTTING_PLANE_EPS, "SVMperf (cutting plane)", "slack violation", "tab:olive", "X"),  # noqa: E501
        Racer("ocas", 36, LOSS_HINGE, CUTTING_PLANE_EPS, "OCAS", "(Q_P - Q_D)/|Q_P|", "tab:gray", "*"),  # noqa: E501
        Racer("svmsgd", 37, LOSS_HINGE, SGD_DELTA, "svmsgd", "(no measure)", "tab:purple", "<"),
        Racer("asgd", 38, LOSS_HINGE, SGD_DELTA, "ASGD", "(no measure)", "tab:green", ">", "--"),
        Racer("sgd-qn", 39, LOSS_HINGE, SGD_DELTA, "SGD-QN", "(no measure)", "k", "h", "-", T0_EPOCHS),  # noqa: E501
        # Bottou's programs visit the file in its order (they assume a shuffled file)
        Racer("svmsgd-in-order", 37, LOSS_HINGE, SGD_DELTA, "svmsgd (file order)", "(no measure)", "tab:purple", "<", ":", IN_ORDER),  # noqa: E501
        Racer("asgd-in-order", 38, LOSS_HINGE, SGD_DELTA, "ASGD (file order)", "(no measure)", "tab:green", ">", ":", IN_ORDER),  # noqa: E501
        Racer("sgd-qn-in-order", 39, LOSS_HINGE, SGD_DELTA, "SGD-QN (file order)", "(no measure)", "k", "h", ":", {**IN_ORDER, **T0_EPOCHS}),  # noqa: E501
        Racer("mpu", -1, LOSS_HINGE, SGD_DELTA, "MPU", "", "gold", "d", unavailable=MPU_MISSING),
        Racer("dcd-l2", 1, LOSS_SQUARED_HINGE, DCD_EPS, "DCD-L2 (shrinking)", "PG measure", "tab:blue", "o"),  # noqa: E501
        Racer("dcd-l2-noshrink", 1, LOSS_SQUARED_HINGE, DCD_EPS, "DCD-L2 (no shrinking)", "PG measure", "tab:cyan", "s", "--", NO_SHRINKING),  # noqa: E501
        Racer("pcd", 34, LOSS_SQUARED_HINGE, PCD_EPS, "PCD (primal CD)", "sweep |g|/|g0|", "tab:green", "^"),  # noqa: E501
        Racer("newton-l2", 2, LOSS_SQUARED_HINGE, NEWTON_EPS, "Newton (primal)", "|g|/|g0|", "tab:purple", "D"),  # noqa: E501
        Racer("tron", 40, LOSS_SQUARED_HINGE, NEWTON_EPS, "TRON (trust region)", "|g|/|g0|", "tab:red", "v"),  # noqa: E501
    ]
}  # fmt: skip

# The named lineups: the racers of the seeds' tables, in their columns' order.
LINEUPS: dict[str, tuple[str, ...]] = {
    # Hsieh et al., ICML 2008, the time to 1% table: DCDL1, Pegasos, SVMperf | DCDL2, PCD, TRON
    "dcd2008": ("dcd-l1", "pegasos", "svmperf", "dcd-l2", "pcd", "tron"),
    # Panagiotakopoulos and Tsampouka 2013: the cutting planes, DCD, MPU, Pegasos, Bottou's
    # programs and their own SGD-R/S/M
    "sgd2013": (
        "svmperf", "ocas", "dcd-l1", "mpu", "pegasos", "svmsgd", "sgd-qn", "sgd-r", "sgd-s",
        "sgd-m",
    ),
    # linsvm's own solvers of both losses, with and without shrinking
    "linsvm": (
        "dcd-l1", "dcd-l1-noshrink", "pegasos", "sgd-s", "sgd-m",
        "dcd-l2", "dcd-l2-noshrink", "pcd", "newton-l2",
    ),
}  # fmt: skip
DEFAULT_LINEUP_NAME = "dcd2008"
# The racers of a comparison by default: the first seed's table.
DEFAULT_LINEUP = LINEUPS[DEFAULT_LINEUP_NAME]


def check_lineup(name: str) -> list[str]:
    """The racers of the named lineup (``LINEUPS``); a one-line error for an unknown name."""
    if name not in LINEUPS:
        raise InvalidInputError(f"unknown lineup {name!r}; valid: {', '.join(LINEUPS)}")
    return list(LINEUPS[name])


def check_racer_names(names: Sequence[str] | None) -> list[str]:
    """The racers to run, validated (default: ``DEFAULT_LINEUP``)."""
    if names is None:
        return list(DEFAULT_LINEUP)
    names = list(names)
    if not names:
        raise InvalidInputError("no solver given")
    unknown = [s for s in names if s not in LINEUP]
    if unknown:
        raise InvalidInputError(f"unknown solver {unknown[0]!r}; valid: {', '.join(LINEUP)}")
    if len(set(names)) != len(names):
        raise InvalidInputError(f"a solver is listed twice: {', '.join(names)}")
    return names
