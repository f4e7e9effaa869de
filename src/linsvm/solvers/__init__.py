"""The solver family, by LIBLINEAR's ``-s`` numbers, and linsvm's own solvers beyond them.

This is the one place that says what each solver is and can do: its name in model files, its
default tolerance and iteration cap (LIBLINEAR 2.50's), how ``-e`` becomes its own tolerance,
whether it is dual (and so warm-starts from dual variables), whether it gives probabilities,
takes ``-R``, class and sample weights or ``init_sol``, which solver continues from its ``w``
when it reaches its cap, and the function that solves it (``solve(sub, hook) -> Solution``,
``_base.py``). ``check_parameter`` checks a combination of them once, as LIBLINEAR's
``check_parameter``. Nothing outside this module and the solver's own module asks
``solver == k``: a new solver is one module plus one entry here.

linsvm's own solvers (the primal stochastic solvers of the seeds, primal coordinate descent and
the other methods the seeds race: cutting planes, Bottou's SGD programs, TRON) are
numbered from 30 on and also go by a name (``-s sgd-s``); their models solve one of
LIBLINEAR's problems and are written in model files as that problem's solver (``model_type``),
so LIBLINEAR can read them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..data import check_bias, is_integer
from ..errors import InvalidInputError
from ._base import (
    CONVERGED,
    INTERRUPTED,
    LINE_SEARCH_FAILED,
    MAX_ITER,
    SMALL_REDUCTION,
    STALLED,
    Hook,
    Progress,
    Solution,
    Subproblem,
)

# LIBLINEAR 2.50 caps its dual coordinate descent solvers at this many outer iterations,
# its Newton solver at this many Newton iterations, its Crammer-Singer solver (-s 4) at
# this many, its L1-regularised LR (-s 6) at this many Newton iterations and the one-class
# SVM at this many outer iterations.
DUAL_SOLVER_MAX_ITER = 300
NEWTON_MAX_ITER = 1000
CS_MAX_ITER = 100000
L1R_LR_MAX_ITER = 100
ONECLASS_MAX_ITER = 1000
# linsvm's SGD solvers: epochs (SGD-S/M normally stop on their criterion first)
SGD_MAX_EPOCHS = 2000
SGD_FIXED_EPOCHS = 100  # Pegasos and SGD-R, which have no stopping criterion
CUTTING_PLANE_MAX_ITER = 10000  # SVMperf and OCAS: cutting-plane iterations
BOTTOU_EPOCHS = 5  # svmsgd, ASGD and SGD-QN: sgd 2.0's default number of epochs

# Kinds of problem.
CLASSIFICATION, REGRESSION, ONECLASS = "classification", "regression", "oneclass"
# How -e becomes the solver's tolerance: as given, or scaled by the class balance
# min(#pos, #neg) / l as LIBLINEAR's train_one does for its primal classifiers.
TOL_AS_GIVEN, TOL_CLASS_BALANCE = "as_given", "class_balance"


@dataclass(frozen=True)
class SolverSpec:
    number: int
    name: str  # as written in LIBLINEAR model files
    description: str
    kind: str  # CLASSIFICATION, REGRESSION or ONECLASS
    default_eps: float
    max_iter: int  # default cap on outer iterations (epochs for the SGD solvers)
    solve_path: str  # "module:function" of solve(sub, hook) -> Solution, imported on first use
    dual: bool = False  # keeps dual variables: warm starts and results carry alpha
    tolerance: str = TOL_AS_GIVEN
    fallback: int | None = None  # continues from w at the cap (LIBLINEAR 2.50: 1->2, 7->0, 12->11)
    # ... with its tolerance (derived from the user's -e) times this: LIBLINEAR 2.50 tightens
    # it, since the one derived from the dual's eps may be too loose
    fallback_tol_factor: float = 0.1
    multiclass: bool = False  # one problem over all classes (Crammer-Singer), not one-vs-rest
    probability: bool = False  # logistic models: probability estimates
    unregularized_bias: bool = False  # -R allowed
    weights: bool = True  # class and sample weights allowed
    warm_start: bool = True
    init_sol: bool = False  # LIBLINEAR's init_sol (weights to start from)
    # -C, the warm-started C search: the loss its starting C is computed for (LIBLINEAR's
    # calc_start_C), or "" where the search is not offered
    c_search: str = ""
    # (rows, features the solver sees) -> what to try, appended to the warning when the cap
    # is reached: advice that keeps the loss, data-dependent parts only where they hold
    cap_advice: Callable[[int, int], str] | None = None
    stops_on_tolerance: bool = True  # False: runs its epochs (Pegasos, SGD-R): no cap warning
    alias: str = ""  # linsvm's own solvers: the name -s also takes
    model_type: int | None = None  # linsvm's own solvers: the LIBLINEAR solver of the problem
    threads: bool = False  # uses Subproblem.n_threads > 1 within one problem
    implicit_map: bool = False  # runs on Subproblem.feature_map without materialising it
    cuda_solve_path: str = ""  # "module:function" of its GPU solver (device="cuda"), if any
    # solve() takes max_iter=0 and returns its start point (warm starts included); False:
    # train returns w = 0 for 0 iterations without calling it (classifiers without warm
    # starts or init_sol only, whose start point w = 0 is)
    runs_zero_iterations: bool = True

    @property
    def solve(self) -> Callable[[Subproblem, Hook | None], Solution]:
        module, function = self.solve_path.split(":")
        return getattr(importlib.import_module(module), function)

    def solve_on(self, device: str) -> Callable[[Subproblem, Hook | None], Solution]:
        """The solve function for ``device`` ("cpu" or "cuda", checked by ``check_device``)."""
        if device != "cuda":
            return self.solve
        module, function = self.cuda_solve_path.split(":")
        return getattr(importlib.import_module(module), function)

    def advice_at_cap(self, n_rows: int, n_features: int) -> str:
        """What to try when this solver reaches its cap on ``n_rows`` x ``n_features`` ("":
        nothing to say; a solver with a fallback says where it switches instead)."""
        return "" if self.cap_advice is None else self.cap_advice(n_rows, n_features)

    @property
    def label(self) -> str:
        """"-s 3" or "-s 32 (sgd-s)", for messages."""
        return f"-s {self.number}" + (f" ({self.alias})" if self.alias else "")

    @property
    def named(self) -> str:
        """"-s 3 (L2-regularized L1-loss SVM (dual))" or "-s 30 (pegasos: Pegasos, ...)", for
        messages that say what the solver is."""
        alias = f"{self.alias}: " if self.alias else ""
        return f"-s {self.number} ({alias}{self.description})"


# How a feature map reaches a solver (``train(map_mode=)``): "implicit" where the registry's
# ``implicit_map`` allows, phi(X) "materialise"d once otherwise; "auto" chooses.
MAP_MODES = ("auto", "implicit", "materialise")


def _fewer_features(n_rows: int, n_features: int) -> str:
    """" and features are fewer than rows (20 < 5000)", or "" when they are not."""
    if n_features < n_rows:
        return f" and features are fewer than rows ({n_features} < {n_rows})"
    return ""


def _no_newton_advice(loss: str, squared: int) -> Callable[[int, int], str]:
    """The cap advice of a dual solver whose loss (the hinge, the epsilon-insensitive) has no
    primal Newton solver: what keeps the loss. The Newton solver of the squared loss is named
    as such, since it solves another problem."""

    def advice(n_rows: int, n_features: int) -> str:
        slow = ""
        if n_features < n_rows:
            # LIBLINEAR's rule of thumb: dual CD is slow at a large C when n < l
            fewer = _fewer_features(n_rows, n_features)
            slow = f"dual coordinate descent is slow when C is large{fewer}; "
        return (
            f"{slow}the {loss} loss has no primal Newton solver (-s {squared} minimises the "
            f"squared {loss} loss): a smaller C or a looser -e needs fewer iterations, or "
            "raise the cap (--max-iter)"
        )

    return advice


def _crammer_singer_advice(n_rows: int, n_features: int) -> str:
    return (
        f"it is slow when C is large{_fewer_features(n_rows, n_features)}: a smaller C or "
        "scaled features help"
    )


def _pcd_advice(n_rows: int, n_features: int) -> str:
    return "-s 2 (primal Newton) minimises the same loss, usually in fewer passes"


def _own_l1_svc(
    number: int, name: str, description: str, default_eps: float, max_iter: int,
    solve_path: str, alias: str, **options,
) -> SolverSpec:
    """The entry of one of linsvm's own primal solvers of the L1-loss SVC, -s 3's problem, as
    which its models are written: it takes one C for every row (no class or sample weights)
    and no warm start, so that its start point is w = 0, which train returns for 0 iterations
    without calling it."""
    return SolverSpec(
        number, name, description, CLASSIFICATION, default_eps, max_iter, solve_path,
        weights=False, warm_start=False, alias=alias, model_type=3, runs_zero_iterations=False,
        **options,
    )  # fmt: skip


SOLVERS: dict[int, SolverSpec] = {
    s.number: s
    for s in [
        SolverSpec(
            0, "L2R_LR", "L2-regularized logistic regression (primal)", CLASSIFICATION,
            0.01, NEWTON_MAX_ITER, "linsvm.solvers.newton:solve_lr_primal",
            tolerance=TOL_CLASS_BALANCE, probability=True, unregularized_bias=True,
            init_sol=True, c_search="logistic", threads=True,
        ),
        SolverSpec(
            1, "L2R_L2LOSS_SVC_DUAL", "L2-regularized L2-loss SVC (dual)", CLASSIFICATION,
            0.1, DUAL_SOLVER_MAX_ITER, "linsvm.solvers.dcd:solve_l2svc_dual",
            dual=True, fallback=2, implicit_map=True, threads=True,
            cuda_solve_path="linsvm.solvers.dcd_cuda:solve_l2svc_dual_cuda",
        ),
        SolverSpec(
            2, "L2R_L2LOSS_SVC", "L2-regularized L2-loss SVC (primal)", CLASSIFICATION,
            0.01, NEWTON_MAX_ITER, "linsvm.solvers.newton:solve_l2svc_primal",
            tolerance=TOL_CLASS_BALANCE, unregularized_bias=True, init_sol=True,
            c_search="squared_hinge", threads=True,
        ),
        SolverSpec(
            3, "L2R_L1LOSS_SVC_DUAL", "L2-regularized L1-loss SVC (dual)", CLASSIFICATION,
            0.1, DUAL_SOLVER_MAX_ITER, "linsvm.solvers.dcd:solve_l1svc_dual",
            dual=True, cap_advice=_no_newton_advice("hinge", 2), implicit_map=True,
            threads=True, cuda_solve_path="linsvm.solvers.dcd_cuda:solve_l1svc_dual_cuda",
        ),
        SolverSpec(
            4, "MCSVM_CS", "multi-class SVM by Crammer and Singer", CLASSIFICATION,
            0.1, CS_MAX_ITER, "linsvm.solvers.crammer_singer:solve_crammer_singer",
            dual=True, multiclass=True, cap_advice=_crammer_singer_advice,
        ),
        SolverSpec(
            5, "L1R_L2LOSS_SVC", "L1-regularized L2-loss SVC", CLASSIFICATION,
            0.01, NEWTON_MAX_ITER, "linsvm.solvers.l1:solve_l1r_l2svc",
            tolerance=TOL_CLASS_BALANCE, unregularized_bias=True,
        ),
        SolverSpec(
            6, "L1R_LR", "L1-regularized logistic regression", CLASSIFICATION,
            0.01, L1R_LR_MAX_ITER, "linsvm.solvers.l1:solve_l1r_lr",
            tolerance=TOL_CLASS_BALANCE, probability=True, unregularized_bias=True,
        ),
        SolverSpec(
            7, "L2R_LR_DUAL", "L2-regularized logistic regression (dual)", CLASSIFICATION,
            0.1, DUAL_SOLVER_MAX_ITER, "linsvm.solvers.dual_lr:solve_lr_dual",
            dual=True, fallback=0, probability=True,
        ),
        SolverSpec(
            11, "L2R_L2LOSS_SVR", "L2-regularized L2-loss SVR (primal)", REGRESSION,
            0.0001, NEWTON_MAX_ITER, "linsvm.solvers.svr:solve_svr_primal",
            unregularized_bias=True, init_sol=True, c_search="svr", threads=True,
        ),
        SolverSpec(
            12, "L2R_L2LOSS_SVR_DUAL", "L2-regularized L2-loss SVR (dual)", REGRESSION,
            0.1, DUAL_SOLVER_MAX_ITER, "linsvm.solvers.svr:solve_l2svr_dual",
            dual=True, fallback=11, fallback_tol_factor=0.001, threads=True,
            cuda_solve_path="linsvm.solvers.dcd_cuda:solve_l2svr_dual_cuda",
        ),
        SolverSpec(
            13, "L2R_L1LOSS_SVR_DUAL", "L2-regularized L1-loss SVR (dual)", REGRESSION,
            0.1, DUAL_SOLVER_MAX_ITER, "linsvm.solvers.svr:solve_l1svr_dual",
            dual=True, cap_advice=_no_newton_advice("epsilon-insensitive", 11), threads=True,
            cuda_solve_path="linsvm.solvers.dcd_cuda:solve_l1svr_dual_cuda",
        ),
        SolverSpec(
            21, "ONECLASS_SVM", "one-class SVM (dual)", ONECLASS,
            0.01, ONECLASS_MAX_ITER, "linsvm.solvers.oneclass:solve_oneclass",
            dual=True, weights=False, warm_start=False,
        ),
        # linsvm's own: eps is the relative accuracy delta of SGD-S/M, unused by Pegasos and
        # SGD-R (they stop after max_iter epochs), -s 2's meaning for PCD
        _own_l1_svc(
            30, "PEGASOS", "Pegasos, L1-loss SVM (primal SGD)", 0.01, SGD_FIXED_EPOCHS,
            "linsvm.solvers.sgd:solve_pegasos", "pegasos", stops_on_tolerance=False,
        ),
        _own_l1_svc(
            31, "SGD_R", "SGD-R, L1-loss SVM (primal SGD, random patterns)", 0.01,
            SGD_FIXED_EPOCHS, "linsvm.solvers.sgd:solve_sgd_r", "sgd-r", stops_on_tolerance=False,
        ),
        _own_l1_svc(
            32, "SGD_S", "SGD-S, L1-loss SVM (primal SGD, epochs, dual bound)", 0.01,
            SGD_MAX_EPOCHS, "linsvm.solvers.sgd:solve_sgd_s", "sgd-s",
        ),
        _own_l1_svc(
            33, "SGD_M", "SGD-M, L1-loss SVM (primal SGD, multiple updates, dual bound)", 0.01,
            SGD_MAX_EPOCHS, "linsvm.solvers.sgd:solve_sgd_m", "sgd-m",
        ),
        SolverSpec(
            34, "PCD", "L2-regularized L2-loss SVC (primal coordinate descent)",
            CLASSIFICATION, 0.01, NEWTON_MAX_ITER, "linsvm.solvers.pcd:solve_pcd",
            tolerance=TOL_CLASS_BALANCE, alias="pcd", model_type=2, cap_advice=_pcd_advice,
        ),
        # the seeds' lineup: the cutting-plane methods (eps: SVMperf's slack tolerance, OCAS's
        # relative gap TolRel), Bottou's SGD programs (epochs, no stopping rule) and TRON (the
        # trust-region Newton of LIBLINEAR 1.x); MPU is not here: see compare.lineup
        _own_l1_svc(
            35, "SVMPERF", "SVMperf, L1-loss SVM (1-slack cutting plane)", 0.1,
            CUTTING_PLANE_MAX_ITER, "linsvm.solvers.cutting_plane:solve_svmperf", "svmperf",
        ),
        _own_l1_svc(
            36, "OCAS", "OCAS, L1-loss SVM (optimized cutting plane)", 0.01,
            CUTTING_PLANE_MAX_ITER, "linsvm.solvers.cutting_plane:solve_ocas", "ocas",
        ),
        _own_l1_svc(
            37, "SVMSGD", "svmsgd, L1-loss SVM (Bottou's primal SGD)", 0.01, BOTTOU_EPOCHS,
            "linsvm.solvers.sgd_bottou:solve_svmsgd", "svmsgd", stops_on_tolerance=False,
            unregularized_bias=True,
        ),
        _own_l1_svc(
            38, "ASGD", "svmasgd, L1-loss SVM (Bottou's averaged SGD)", 0.01, BOTTOU_EPOCHS,
            "linsvm.solvers.sgd_bottou:solve_asgd", "asgd", stops_on_tolerance=False,
            unregularized_bias=True,
        ),
        _own_l1_svc(
            39, "SGD_QN", "SGD-QN, L1-loss SVM (quasi-Newton diagonal SGD)", 0.01, BOTTOU_EPOCHS,
            "linsvm.solvers.sgd_bottou:solve_sgdqn", "sgd-qn", stops_on_tolerance=False,
        ),
        SolverSpec(
            40, "TRON", "L2-regularized L2-loss SVC (trust-region Newton, LIBLINEAR 1.x)",
            CLASSIFICATION, 0.01, NEWTON_MAX_ITER, "linsvm.solvers.tron:solve_tron",
            tolerance=TOL_CLASS_BALANCE, alias="tron", model_type=2, unregularized_bias=True,
            init_sol=True,
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
    """A solver's number from its number or its name (``"sgd-s"``, ``"32"``, or the name model
    files give it, ``"L2R_LR"``); -1 if unknown."""
    if isinstance(solver, str):
        key = solver.strip().lower()
        if key in SOLVER_BY_ALIAS:
            return SOLVER_BY_ALIAS[key].number
        if key.upper() in SOLVER_BY_NAME:
            return SOLVER_BY_NAME[key.upper()].number
        try:
            solver = int(key)
        except ValueError:
            return -1
    if not is_integer(solver):
        return -1
    return int(solver) if int(solver) in SOLVERS else -1


def available_solvers() -> str:
    """Every solver, as "-s 0, -s 1, ..., -s 30 (pegasos), ..." for messages."""
    return ", ".join(spec.label for _, spec in sorted(SOLVERS.items()))


def list_where(test: Callable[[SolverSpec], bool], flags: bool = False) -> str:
    """The solvers passing ``test`` for messages: "solvers 0, 2 and 11", or with ``flags``
    as LIBLINEAR writes them, "-s 0, -s 2 and -s 11"."""
    numbers = [n for n, spec in sorted(SOLVERS.items()) if test(spec)]
    names = [f"-s {n}" if flags else str(n) for n in numbers]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return listed if flags else ("solver " if len(names) == 1 else "solvers ") + listed


def get_solver(solver: int | str) -> SolverSpec:
    """The spec of a solver given by number or name; a one-line error if there is none."""
    number = solver_number(solver)
    if number < 0 and isinstance(solver, str) and solver.strip().startswith("-"):
        # (LIBLINEAR's Python interface takes an option string: train(y, x, '-s 0 -c 4'))
        raise InvalidInputError(
            f"solver {solver!r} looks like a LIBLINEAR option string; linsvm takes the options "
            "as arguments: train(X, y, solver=0, C=4, eps=0.01, bias=1)"
        )
    if number < 0:
        raise InvalidInputError(f"unknown solver type {solver!r}; available: {available_solvers()}")
    return SOLVERS[number]


@dataclass(frozen=True)
class Parameters:
    """A checked set of training parameters, LIBLINEAR's defaults filled in."""

    spec: SolverSpec
    C: float
    eps: float  # the user's -e (the solver's own tolerance: solver_tolerance)
    bias: float
    max_iter: int
    regularize_bias: bool


def check_parameter(
    solver: int | str,
    C: float,
    eps: float | None,
    bias: float,
    max_iter: int | None,
    regularize_bias: bool = True,
) -> Parameters:
    """Check one combination of parameters, as LIBLINEAR's ``check_parameter``: one-line
    errors for what no solver accepts and for what this solver does not."""
    spec = get_solver(solver)
    try:
        C = float(C)
        eps = None if eps is None else float(eps)
        bias = float(bias)
    except (TypeError, ValueError):
        raise InvalidInputError(
            f"C, eps and bias must be numbers, got C={C!r}, eps={eps!r}, bias={bias!r}"
        ) from None
    if not (np.isfinite(C) and C > 0):
        raise InvalidInputError(f"C must be > 0, got {C}")
    eps = spec.default_eps if eps is None else eps
    if not (np.isfinite(eps) and eps >= 0):
        # 0: no stopping rule, max_iter outer iterations exactly
        raise InvalidInputError(f"eps must be >= 0, got {eps}")
    check_bias(bias)
    if max_iter is None:
        max_iter = spec.max_iter
    if not is_integer(max_iter):
        raise InvalidInputError(f"max_iter must be an integer, got {max_iter!r}")
    if max_iter < 0:
        # 0: no iteration, the solver's start point (w = 0 unless warm started)
        raise InvalidInputError(f"max_iter must be >= 0, got {max_iter}")
    if not regularize_bias and (not spec.unregularized_bias or bias != 1.0):
        raise InvalidInputError(
            "regularize_bias=False (-R) needs bias=1 (-B 1) and one of the "
            + list_where(lambda s: s.unregularized_bias)
        )
    return Parameters(spec, C, eps, bias, int(max_iter), bool(regularize_bias))


DEVICES = ("cpu", "cuda")


def check_device(spec: SolverSpec, device: str) -> str:
    """``device`` checked against the solver: "cpu", or "cuda" for a solver with a GPU form
    (whether a GPU is there is ``dcd_cuda.check_available``'s question)."""
    if device not in DEVICES:
        raise InvalidInputError(f"device must be one of {DEVICES}, got {device!r}")
    if device == "cuda" and not spec.cuda_solve_path:
        raise InvalidInputError(
            f"device='cuda' trains {list_where(lambda s: bool(s.cuda_solve_path), flags=True)}; "
            f"{spec.named} runs on the CPU only"
        )
    return device


def solver_tolerance(spec: SolverSpec, eps: float, y: np.ndarray) -> float:
    """The tolerance the solver's stopping rule reads, from the user's -e (LIBLINEAR's
    ``train_one``): as given, or eps * max(min(#pos, #neg), 1) / l for the +1/-1 targets
    ``y`` (LIBLINEAR counts y > 0 as positive)."""
    y = np.asarray(y)
    n_rows = y.shape[0]
    if spec.tolerance == TOL_AS_GIVEN or n_rows == 0:
        return float(eps)
    pos = int(np.count_nonzero(y > 0))
    return float(eps) * max(min(pos, n_rows - pos), 1) / n_rows


__all__ = [
    "CONVERGED",
    "INTERRUPTED",
    "LINE_SEARCH_FAILED",
    "MAX_ITER",
    "SMALL_REDUCTION",
    "STALLED",
    "SOLVERS",
    "SolverSpec",
    "Parameters",
    "Subproblem",
    "Solution",
    "Progress",
    "Hook",
    "check_parameter",
    "check_device",
    "get_solver",
    "solver_number",
    "solver_tolerance",
    "model_file_solver",
    "available_solvers",
]
