"""The solver family, by LIBLINEAR's ``-s`` numbers, and linsvm's own solvers beyond them.

Each solver is one self-contained routine in its own module; this registry says which numbers
exist in LIBLINEAR, what they are called in model files, their default tolerance (LIBLINEAR
2.50's), and which of them linsvm can train with today. linsvm's own solvers (the primal
stochastic solvers of the seeds and primal coordinate descent) are numbered from 30 on and also
go by a name (``-s sgd-s``); their models solve one of LIBLINEAR's problems and are written in
model files as that problem's solver (``model_type``), so LIBLINEAR can read them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SolverSpec:
    number: int
    name: str  # as written in LIBLINEAR model files
    description: str
    default_eps: float
    kind: str  # "classification", "regression" or "oneclass"
    available: bool  # trainable in linsvm
    alias: str = ""  # linsvm's own solvers: the name -s also takes
    model_type: int | None = None  # linsvm's own solvers: the LIBLINEAR solver of the problem


SOLVERS: dict[int, SolverSpec] = {
    s.number: s
    for s in [
        SolverSpec(
            0,
            "L2R_LR",
            "L2-regularized logistic regression (primal)",
            0.01,
            "classification",
            True,
        ),
        SolverSpec(
            1,
            "L2R_L2LOSS_SVC_DUAL",
            "L2-regularized L2-loss SVC (dual)",
            0.1,
            "classification",
            True,
        ),
        SolverSpec(
            2,
            "L2R_L2LOSS_SVC",
            "L2-regularized L2-loss SVC (primal)",
            0.01,
            "classification",
            True,
        ),
        SolverSpec(
            3,
            "L2R_L1LOSS_SVC_DUAL",
            "L2-regularized L1-loss SVC (dual)",
            0.1,
            "classification",
            True,
        ),
        SolverSpec(
            4, "MCSVM_CS", "multi-class SVM by Crammer and Singer", 0.1, "classification", True
        ),
        SolverSpec(5, "L1R_L2LOSS_SVC", "L1-regularized L2-loss SVC", 0.01, "classification", True),
        SolverSpec(6, "L1R_LR", "L1-regularized logistic regression", 0.01, "classification", True),
        SolverSpec(
            7,
            "L2R_LR_DUAL",
            "L2-regularized logistic regression (dual)",
            0.1,
            "classification",
            True,
        ),
        SolverSpec(
            11, "L2R_L2LOSS_SVR", "L2-regularized L2-loss SVR (primal)", 0.0001, "regression", True
        ),
        SolverSpec(
            12, "L2R_L2LOSS_SVR_DUAL", "L2-regularized L2-loss SVR (dual)", 0.1, "regression", True
        ),
        SolverSpec(
            13, "L2R_L1LOSS_SVR_DUAL", "L2-regularized L1-loss SVR (dual)", 0.1, "regression", True
        ),
        SolverSpec(21, "ONECLASS_SVM", "one-class SVM (dual)", 0.01, "oneclass", True),
        # linsvm's own: eps is the relative accuracy delta of SGD-S/M, unused by Pegasos and
        # SGD-R (they stop after max_iter epochs), -s 2's meaning for PCD
        SolverSpec(
            30, "PEGASOS", "Pegasos, L1-loss SVM (primal SGD)", 0.01, "classification", True,
            alias="pegasos", model_type=3,
        ),
        SolverSpec(
            31, "SGD_R", "SGD-R, L1-loss SVM (primal SGD, random patterns)", 0.01,
            "classification", True, alias="sgd-r", model_type=3,
        ),
        SolverSpec(
            32, "SGD_S", "SGD-S, L1-loss SVM (primal SGD, epochs, dual bound)", 0.01,
            "classification", True, alias="sgd-s", model_type=3,
        ),
        SolverSpec(
            33, "SGD_M", "SGD-M, L1-loss SVM (primal SGD, multiple updates, dual bound)", 0.01,
            "classification", True, alias="sgd-m", model_type=3,
        ),
        SolverSpec(
            34, "PCD", "L2-regularized L2-loss SVC (primal coordinate descent)", 0.01,
            "classification", True, alias="pcd", model_type=2,
        ),
    ]
}  # fmt: skip

# model files name LIBLINEAR's solvers only
SOLVER_BY_NAME: dict[str, SolverSpec] = {
    s.name: s for s in SOLVERS.values() if s.model_type is None
}
SOLVER_BY_ALIAS: dict[str, SolverSpec] = {s.alias: s for s in SOLVERS.values() if s.alias}


def model_file_solver(number: int) -> SolverSpec:
    """The LIBLINEAR solver a model of solver ``number`` is written as."""
    spec = SOLVERS[number]
    return spec if spec.model_type is None else SOLVERS[spec.model_type]


def solver_number(solver: int | str) -> int:
    """A solver's number from its number or its name (``"sgd-s"``, ``"32"``); -1 if unknown."""
    if isinstance(solver, str):
        key = solver.strip().lower()
        if key in SOLVER_BY_ALIAS:
            return SOLVER_BY_ALIAS[key].number
        try:
            solver = int(key)
        except ValueError:
            return -1
    if isinstance(solver, bool) or not isinstance(solver, int | np.integer):
        return -1
    return int(solver) if int(solver) in SOLVERS else -1


# LIBLINEAR 2.50 caps its dual coordinate descent solvers at this many outer iterations,
# and its Newton solver at this many Newton iterations.
DUAL_SOLVER_MAX_ITER = 300
NEWTON_MAX_ITER = 1000
# ... and its Crammer-Singer solver (-s 4) at this many.
CS_MAX_ITER = 100000


def available_solvers() -> str:
    """The trainable solvers, as "-s 0, -s 1, ..., -s 30 (pegasos), ..." for messages."""
    return ", ".join(
        f"-s {n}" + (f" ({spec.alias})" if spec.alias else "")
        for n, spec in sorted(SOLVERS.items())
        if spec.available
    )
