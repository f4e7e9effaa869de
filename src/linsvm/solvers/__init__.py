"""The solver family, by LIBLINEAR's ``-s`` numbers.

Each solver is one self-contained routine in its own module; this registry says which numbers
exist in LIBLINEAR, what they are called in model files, their default tolerance (LIBLINEAR
2.50's), and which of them linsvm can train with today.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SolverSpec:
    number: int
    name: str  # as written in LIBLINEAR model files
    description: str
    default_eps: float
    kind: str  # "classification", "regression" or "oneclass"
    available: bool  # trainable in linsvm


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
    ]
}

SOLVER_BY_NAME: dict[str, SolverSpec] = {s.name: s for s in SOLVERS.values()}

# LIBLINEAR 2.50 caps its dual coordinate descent solvers at this many outer iterations,
# and its Newton solver at this many Newton iterations.
DUAL_SOLVER_MAX_ITER = 300
NEWTON_MAX_ITER = 1000
# ... and its Crammer-Singer solver (-s 4) at this many.
CS_MAX_ITER = 100000


def available_solvers() -> str:
    """The trainable solver numbers, as "-s 0, -s 1, ..." for messages."""
    return ", ".join(f"-s {n}" for n, spec in sorted(SOLVERS.items()) if spec.available)
