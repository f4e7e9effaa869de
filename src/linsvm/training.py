"""``train``: from (X, y) and LIBLINEAR's parameters to a Model, for every solver number.

Classification (-s 0-3, 5-7) is one binary sub-problem per weight vector, one-vs-rest with
LIBLINEAR's class order and costs: for two classes the sub-problem's positive class is
``labels_[0]`` with C_p = C * weight[labels_[0]] and C_n = C * weight[labels_[1]]; for k > 2
classes, sub-problem j has C_p = C * weight[labels_[j]] and the rest keeps plain C. Sample
weights multiply each row's C. Crammer-Singer (-s 4) is one problem over all classes,
regression (-s 11-13) one problem on real targets, the one-class SVM (-s 21) one problem that
ignores y. Each solver is its own routine in ``solvers/``; this module only dispatches, applies
LIBLINEAR 2.50's fallbacks (1 -> 2, 7 -> 0, 12 -> 11 at the dual's iteration cap) and
reports primal, dual and gap through ``objective``.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .data import as_csr, check_labels, check_sample_weight, group_labels
from .errors import InvalidInputError
from .model import Model, SubproblemResult
from .objective import (
    LOSS_HINGE,
    LOSS_LOGISTIC,
    LOSS_SQUARED_HINGE,
    l1_primal_value,
    lr_dual_point,
    lr_objectives,
    squared_hinge_dual_point,
    svm_objectives,
)
from .solvers import (
    CS_MAX_ITER,
    DUAL_SOLVER_MAX_ITER,
    NEWTON_MAX_ITER,
    SOLVERS,
    available_solvers,
    solver_number,
)
from .solvers.crammer_singer import solve_crammer_singer
from .solvers.dcd import solve_svm_dual
from .solvers.dual_lr import solve_lr_dual
from .solvers.l1 import LR_MAX_NEWTON_ITER, solve_l1r_l2_svc, solve_l1r_lr
from .solvers.newton import primal_tolerance, solve_primal_newton
from .solvers.oneclass import check_nu, check_oneclass_bias, solve_oneclass
from .solvers.pcd import solve_pcd
from .solvers.sgd import (
    DEFAULT_MAX_EPOCHS,
    DEFAULT_PEGASOS_EPOCHS,
    DEFAULT_RANDOM_EPOCHS,
    solve_pegasos,
    solve_sgd,
)
from .solvers.svr import solve_svr, solve_svr_primal


class ConvergenceWarning(UserWarning):
    """A solver stopped at its iteration cap before meeting its tolerance."""


_SVM_DUAL_LOSS = {1: LOSS_SQUARED_HINGE, 3: LOSS_HINGE}
# linsvm's own solvers (solvers/__init__.py): the primal SGD family and primal CD
PEGASOS, SGD_R, SGD_S, SGD_M, PCD = 30, 31, 32, 33, 34
_SGD_VARIANT = {PEGASOS: "pegasos", SGD_R: "r", SGD_S: "s", SGD_M: "m"}


def _check_params(
    solver: int, C: float, eps: float | None, bias: float, max_iter: int | None
) -> tuple[float, float, float, int]:
    """Validated (C, eps, bias, max_iter), with LIBLINEAR's defaults filled in."""
    spec = SOLVERS[solver]
    try:
        C = float(C)
        eps = None if eps is None else float(eps)
        bias = float(bias)
    except (TypeError, ValueError):
        raise InvalidInputError(
            f"C, eps and bias must be numbers, got C={C!r}, eps={eps!r}, bias={bias!r}"
        ) from None
    if not spec.available:
        raise InvalidInputError(
            f"solver -s {solver} ({spec.description}) is not implemented yet; available: "
            + available_solvers()
        )
    if not (np.isfinite(C) and C > 0):
        raise InvalidInputError(f"C must be > 0, got {C}")
    eps = spec.default_eps if eps is None else eps
    if not (np.isfinite(eps) and eps > 0):
        raise InvalidInputError(f"eps must be > 0, got {eps}")
    if not np.isfinite(bias):
        raise InvalidInputError(f"bias must be finite, got {bias}")
    if max_iter is None:
        max_iter = {
            1: DUAL_SOLVER_MAX_ITER,
            3: DUAL_SOLVER_MAX_ITER,
            7: DUAL_SOLVER_MAX_ITER,
            4: CS_MAX_ITER,
            6: LR_MAX_NEWTON_ITER,
            PEGASOS: DEFAULT_PEGASOS_EPOCHS,
            SGD_R: DEFAULT_RANDOM_EPOCHS,
            SGD_S: DEFAULT_MAX_EPOCHS,
            SGD_M: DEFAULT_MAX_EPOCHS,
        }.get(solver, NEWTON_MAX_ITER)
    if max_iter < 1:
        raise InvalidInputError(f"max_iter must be >= 1, got {max_iter}")
    return C, eps, bias, max_iter


def effective_n_jobs(n_jobs: int | None) -> int:
    """Threads for ``n_jobs`` by joblib's convention: None -> 1, -1 -> all cores, -2 -> all
    but one, ...; 0 and non-integers are errors."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise InvalidInputError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    if n_jobs > 0:
        return int(n_jobs)
    return max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))


def class_costs(labels: np.ndarray, C: float, class_weight: Mapping | None) -> np.ndarray:
    """C * weight per class, in ``labels`` order (LIBLINEAR's ``weighted_C``)."""
    weighted = np.full(labels.shape[0], float(C))
    for label, weight in (class_weight or {}).items():
        weight = float(weight)
        if not (np.isfinite(weight) and weight >= 0):
            raise InvalidInputError(f"class weight for {label!r} must be >= 0, got {weight}")
        hits = np.flatnonzero(labels == label)
        if hits.size == 0:
            print(f"WARNING: class label {label} specified in weight is not found", file=sys.stderr)
            continue
        weighted[hits[0]] *= weight
    return weighted


def train(
    X,
    y,
    solver: int | str = 1,
    C: float = 1.0,
    eps: float | None = None,
    bias: float = -1.0,
    class_weight: Mapping | None = None,
    sample_weight=None,
    max_iter: int | None = None,
    regularize_bias: bool = True,
    init_sol=None,
    warm_start: Model | None = None,
    p: float = 0.1,
    nu: float = 0.5,
    shrinking: bool = True,
    bucket_size: int | None = None,
    buckets_per_group: int | None = None,
    seed: int = 1,
    verbose: bool = False,
    on_iteration: Callable | None = None,
    n_jobs: int | None = None,
) -> Model:
    """Train a linear model with one of LIBLINEAR's solvers (numbers and defaults as its ``-s``).

    Parameters
    ----------
    X : sparse matrix or array of shape (n_samples, n_features), float32 or float64
        CSR with sorted indices is used without a copy.
    y : array of shape (n_samples,)
        Class labels (any integers, reals or strings; at least two classes).
    solver : int
        0: L2-regularized logistic regression (primal Newton), 1: L2-regularized L2-loss SVM
        (dual; falls back to 2 at its iteration cap, as LIBLINEAR 2.50), 2: L2-regularized
        L2-loss SVM (primal Newton), 3: L2-regularized L1-loss SVM (dual), 4: Crammer-Singer
        multi-class SVM (dual), 5: L1-regularized L2-loss SVM (primal CD), 6: L1-regularized
        logistic regression (newGLMNET), 7: L2-regularized logistic regression (dual; falls
        back to 0 at its cap); regression: 11: L2-loss SVR (primal Newton), 12: L2-loss SVR
        (dual; falls back to 11 at its cap), 13: L1-loss SVR (dual); 21: one-class SVM
        (y is ignored; no bias). linsvm's own, by number or name: 30 "pegasos", 31 "sgd-r",
        32 "sgd-s", 33 "sgd-m" (the L1-loss SVM by primal SGD: eps is SGD-S/M's relative
        accuracy delta, max_iter the epochs; one C for all rows, so no class or sample
        weights), 34 "pcd" (the L2-loss SVM by primal coordinate descent; eps as -s 2).
    C : float
        Cost of errors (> 0).
    eps : float or None
        Stopping tolerance; None takes LIBLINEAR's default for the solver (0.1 for 1, 3, 7,
        0.01 for 0 and 2, where it bounds the gradient norm relative to its value at w = 0,
        scaled as LIBLINEAR does by min(#pos, #neg) / l).
    bias : float
        LIBLINEAR's ``-B``: if >= 0, each row gets an implicit extra feature of this value.
    class_weight : mapping label -> weight, optional
        LIBLINEAR's ``-wi``: that class's C is multiplied by the weight.
    sample_weight : array of shape (n_samples,), optional
        Per-row weights multiplying C (LIBLINEAR's instance-weight variant's ``-W``).
    max_iter : int or None
        Cap on outer iterations (None: LIBLINEAR's: 300 for the dual solvers, 1000 Newton
        iterations for the primal ones).
    p : float
        The width of the epsilon-insensitive tube of the regression solvers (LIBLINEAR's -p).
    nu : float
        The one-class SVM's nu in (0, 1] (LIBLINEAR's -n): about the fraction of outliers.
    init_sol : array of shape (n_weight_vectors, n_features [+1]), optional
        Starting weights for the primal solvers 0 and 2 (LIBLINEAR's ``init_sol``), e.g. the
        ``coef_`` (with the bias weight appended when ``bias >= 0``) of a model at a smaller C.
    warm_start : Model, optional
        A model trained before on the same rows (same labels, same number of features), e.g.
        at a smaller C: the dual solvers (1, 3, 4, 7, 12, 13) restart from its dual variables
        (``results_[k].alpha``, projected into the new problem's bounds), the primal ones
        (0, 2, 5, 6, 11) from its weights. A part it cannot supply starts cold (dual
        variables from a primal-only solver such as 5 or 6; weights of another shape). The
        stopping rules keep their cold-start reference, so the result is as accurate as a
        cold start's. Not with ``init_sol``; not for -s 21.
    regularize_bias : bool
        False is LIBLINEAR's ``-R``: the bias weight is left out of the regulariser (primal
        solvers 0 and 2 only; needs ``bias == 1`` as LIBLINEAR requires).
    shrinking : bool
        LIBLINEAR's shrinking of coordinates stuck at a bound.
    bucket_size, buckets_per_group : int or None
        The coordinate order: rows are cut into buckets of ``bucket_size`` neighbours, and each
        outer iteration visits random groups of ``buckets_per_group`` buckets, rows shuffled
        within a group. 1 and 1 give a plain random permutation (LIBLINEAR's order). None
        (default): 16 and 16, unless neighbouring rows are markedly more alike than random
        pairs (a sampled check), where buckets would slow convergence: then 1 and 1.
    seed : int
        Seed of the solver's own random generator: equal seeds give equal models.
    verbose : bool
        Print one line per outer iteration (dual: iteration, active set, PG gap, primal, dual;
        primal: LIBLINEAR's Newton lines).
    on_iteration : callable, optional
        ``on_iteration(k, iteration, n_active, pg_max, pg_min, w, alpha)`` after each outer
        iteration of sub-problem k (slows training: the solver returns to Python each time).
    n_jobs : int or None
        Threads solving the one-vs-rest sub-problems of a multi-class problem side by side
        (the kernels release the GIL): None or 1 one at a time, -1 all cores, -2 all but one,
        and so on (joblib's convention). The model is the same whatever the number. No effect
        on binary problems, regression, -s 4 and -s 21 (one problem each), nor with
        ``verbose`` or ``on_iteration`` (which report sub-problems in order).

    Returns
    -------
    Model
    """
    number = solver_number(solver)
    if number < 0:
        raise InvalidInputError(f"unknown solver type {solver!r}; available: {available_solvers()}")
    solver = number
    C, eps, bias, max_iter = _check_params(solver, C, eps, bias, max_iter)
    n_threads = effective_n_jobs(n_jobs)
    X = as_csr(X)
    n_rows, n_features = X.shape
    if n_rows == 0:
        raise InvalidInputError("no training data: X has 0 rows")
    if warm_start is not None:
        if init_sol is not None:
            raise InvalidInputError("give init_sol or warm_start, not both")
        if not isinstance(warm_start, Model):
            raise InvalidInputError(
                f"warm_start must be a linsvm.Model, got {type(warm_start).__name__}"
            )
        if solver == 21:
            raise InvalidInputError("warm_start is not supported by the one-class SVM (-s 21)")
    if solver == 21:
        return _train_oneclass(X, nu, eps, bias, max_iter, class_weight, sample_weight)
    y = check_labels(y, n_rows)
    sw = check_sample_weight(sample_weight, n_rows)
    if SOLVERS[solver].kind == "regression":
        return _train_regression(
            X,
            y,
            solver,
            C,
            eps,
            p,
            bias,
            sw,
            class_weight,
            max_iter,
            regularize_bias,
            init_sol,
            warm_start,
            shrinking,
            bucket_size,
            buckets_per_group,
            seed,
            verbose,
        )
    labels, class_index = group_labels(y)
    if labels.shape[0] < 2:
        raise InvalidInputError(
            f"training data has only one class ({labels[0]!r}); at least two are needed"
        )
    weighted_C = class_costs(labels, C, class_weight)
    n_classes = labels.shape[0]
    targets = [0] if n_classes == 2 else list(range(n_classes))
    if not regularize_bias and (solver not in (0, 2, 5, 6) or bias != 1.0):
        raise InvalidInputError(
            "regularize_bias=False (-R) needs bias=1 (-B 1) and solver -s 0, 2, 5 or 6"
        )
    if solver in _SGD_VARIANT:
        if sample_weight is not None or any(float(v) != 1.0 for v in (class_weight or {}).values()):
            raise InvalidInputError(
                f"{SOLVERS[solver].alias} takes one C for all rows: class and sample weights "
                "are not supported (use -s 3 for a weighted L1-loss SVM)"
            )
        if warm_start is not None:
            raise InvalidInputError(f"warm_start is not supported by {SOLVERS[solver].alias}")
    if init_sol is not None:
        if solver not in (0, 2):
            raise InvalidInputError("init_sol is supported only for solvers 0 and 2")
        n_w = 1 if n_classes == 2 else n_classes
        init_sol = np.asarray(init_sol, dtype=np.float64)
        expected = (n_w, n_features + (1 if bias >= 0 else 0))
        if init_sol.shape != expected:
            raise InvalidInputError(f"init_sol must have shape {expected}, got {init_sol.shape}")
    if solver == 4:
        ((alpha0, _),) = _warm_starts(warm_start, 4, X.shape, bias, labels, 1)
        return _train_crammer_singer(
            X, labels, class_index, weighted_C, sw, bias, eps, max_iter, shrinking, seed, alpha0
        )

    starts = _warm_starts(warm_start, solver, X.shape, bias, labels, len(targets))

    def solve(slot: int):
        """Sub-problem ``slot``: class targets[slot] against the rest."""
        k = targets[slot]
        alpha0, w0 = starts[slot]
        y_sign = np.where(class_index == k, 1.0, -1.0)
        if n_classes == 2:
            cost = np.where(y_sign > 0, weighted_C[0], weighted_C[1])
        else:
            cost = np.where(y_sign > 0, weighted_C[k], float(C))
        if sw is not None:
            cost = cost * sw
        problem = _Subproblem(X, y_sign, cost, bias, k, labels[k])
        if solver == 7:
            return _train_lr_dual(
                problem, eps, max_iter, bucket_size, buckets_per_group, seed + k, alpha0
            )
        if solver in _SVM_DUAL_LOSS:
            return _train_dual(
                problem,
                solver,
                eps,
                max_iter,
                shrinking,
                bucket_size,
                buckets_per_group,
                seed + k,
                verbose,
                on_iteration,
                alpha0,
            )
        if solver in (5, 6):
            return _train_l1(problem, solver, eps, max_iter, regularize_bias, seed + k, w0)
        if solver in _SGD_VARIANT:
            return _train_sgd(problem, solver, float(C), eps, max_iter, seed + k)
        if solver == PCD:
            return _train_pcd(problem, eps, max_iter, seed + k, w0)
        if init_sol is not None:
            w0 = init_sol[slot]
        return _train_primal(problem, solver, eps, max_iter, regularize_bias, verbose, w0)

    # Each sub-problem has its own seed and generator, so threads give the same model as one.
    n_threads = min(n_threads, len(targets))
    if verbose or on_iteration is not None:
        n_threads = 1  # progress lines and callbacks in sub-problem order
    if n_threads == 1:
        solved = [solve(slot) for slot in range(len(targets))]
    else:
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            solved = list(pool.map(solve, range(len(targets))))
    coefs = [w[:n_features] for w, _ in solved]
    bias_weights = [w[n_features] if bias >= 0 else 0.0 for w, _ in solved]
    results = [result for _, result in solved]
    return Model(solver, labels, np.vstack(coefs), bias, np.array(bias_weights), results=results)


_DUAL_SOLVERS = frozenset({1, 3, 4, 7, 12, 13})


def _warm_starts(model, solver, shape, bias, labels, n_problems):
    """``(alpha0, w0)`` for each sub-problem from a previous model (None where it starts cold).

    Dual solvers take the model's dual variables (one vector per sub-problem, or the (l, K)
    block of -s 4), primal solvers its weight vectors with the bias weight appended.
    ``labels``: the data's labels in LIBLINEAR's order (None for regression).
    """
    if model is None:
        return [(None, None)] * n_problems
    n_rows, n_features = shape
    if (labels is None) != (model.kind == "regression") or model.kind == "oneclass":
        raise InvalidInputError(
            f"warm_start: the model is a {model.kind} model, this is a "
            f"{'regression' if labels is None else 'classification'} problem"
        )
    if labels is not None and (
        model.labels_.shape != labels.shape or np.any(model.labels_ != labels)
    ):
        raise InvalidInputError(
            f"warm_start: the model's labels {list(model.labels_)} are not the data's "
            f"{list(labels)} (in order of first appearance)"
        )
    if model.n_features != n_features:
        raise InvalidInputError(
            f"warm_start: the model has {model.n_features} features, X has {n_features}"
        )
    results = model.results_
    starts = []
    for k in range(n_problems):
        alpha0 = w0 = None
        if solver in _DUAL_SOLVERS:
            alpha = results[k].alpha if len(results) == n_problems else None
            if alpha is not None and alpha.shape[0] != n_rows:
                raise InvalidInputError(
                    f"warm_start: the model's dual variables are for {alpha.shape[0]} rows, "
                    f"X has {n_rows}"
                )
            if alpha is not None and (alpha.ndim == 2) == (solver == 4):
                alpha0 = alpha
        elif model.coef_.shape[0] == n_problems and (model.bias >= 0) == (bias >= 0):
            w0 = model.coef_[k]
            if bias >= 0:
                w0 = np.append(w0, model.bias_weights_[k])
        starts.append((alpha0, w0))
    return starts


@dataclass
class _Subproblem:
    """One binary sub-problem: X, y in {+1, -1}, per-row C, and which class is positive."""

    X: object
    y: np.ndarray
    C: np.ndarray
    bias: float
    index: int
    label: object


def _train_dual(
    problem,
    solver,
    eps,
    max_iter,
    shrinking,
    bucket_size,
    buckets_per_group,
    seed,
    verbose,
    on_iteration,
    alpha0=None,
):
    """-s 1 / -s 3 by DCD (from ``alpha0`` when given); -s 1 continues with the primal Newton
    solver at the cap (2.50)."""
    p = problem
    loss = _SVM_DUAL_LOSS[solver]
    callback = None
    if verbose or on_iteration is not None:
        callback = _make_callback(p.X, p.bias, p.y, p.C, loss, p.index, verbose, on_iteration)
    sol = solve_svm_dual(
        p.X,
        p.y,
        p.C,
        loss,
        p.bias,
        eps,
        max_iter,
        shrinking=shrinking,
        bucket_size=bucket_size,
        buckets_per_group=buckets_per_group,
        seed=seed,
        alpha0=alpha0,
        on_iteration=callback,
    )
    if sol.converged or solver != 1:
        if not sol.converged:
            warnings.warn(
                f"reaching max number of iterations ({max_iter}) in sub-problem {p.index} "
                f"(class {p.label}); dual coordinate descent is slow when C is large and "
                "features are few: -s 2 (primal Newton) may be faster",
                ConvergenceWarning,
                stacklevel=3,
            )
        primal, dual, gap = svm_objectives(p.X, p.bias, p.y, p.C, sol.w, sol.alpha, loss)
        return sol.w, SubproblemResult(
            n_iter=sol.n_iter,
            converged=sol.converged,
            primal=primal,
            dual=dual,
            gap=gap,
            n_sv=int(np.count_nonzero(sol.alpha)),
            alpha=sol.alpha,
            solver=solver,
        )
    # LIBLINEAR 2.50: switch to -s 2 from the dual's w, with a tenfold tighter tolerance
    # because the one derived from the dual's eps may be too loose.
    warnings.warn(
        f"reaching max number of iterations ({max_iter}) in sub-problem {p.index} "
        f"(class {p.label}); switching to -s 2 (primal Newton)",
        ConvergenceWarning,
        stacklevel=3,
    )
    newton = solve_primal_newton(
        p.X,
        p.y,
        p.C,
        LOSS_SQUARED_HINGE,
        p.bias,
        0.1 * primal_tolerance(eps, p.y),
        w0=sol.w,
        verbose=verbose,
    )
    return newton.w, _primal_result(p, newton, 2, sol.n_iter)


def _train_lr_dual(problem, eps, max_iter, bucket_size, buckets_per_group, seed, alpha0=None):
    """-s 7 by dual CD (from ``alpha0`` when given); continues with -s 0 (primal Newton) at
    the cap, as LIBLINEAR 2.50."""
    p = problem
    sol = solve_lr_dual(
        p.X,
        p.y,
        p.C,
        p.bias,
        eps,
        max_iter,
        bucket_size=bucket_size,
        buckets_per_group=buckets_per_group,
        seed=seed,
        alpha0=alpha0,
    )
    if sol.converged:
        primal, dual, gap = lr_objectives(
            p.X, p.bias, p.y, p.C, sol.w, sol.alpha, sol.alpha_complement
        )
        return sol.w, SubproblemResult(
            n_iter=sol.n_iter,
            converged=True,
            primal=primal,
            dual=dual,
            gap=gap,
            n_sv=int(np.count_nonzero(sol.alpha)),
            alpha=sol.alpha,
            solver=7,
        )
    warnings.warn(
        f"reaching max number of iterations ({max_iter}) in sub-problem {p.index} "
        f"(class {p.label}); switching to -s 0 (primal Newton)",
        ConvergenceWarning,
        stacklevel=3,
    )
    newton = solve_primal_newton(
        p.X, p.y, p.C, LOSS_LOGISTIC, p.bias, 0.1 * primal_tolerance(eps, p.y), w0=sol.w
    )
    return newton.w, _primal_result(p, newton, 0, sol.n_iter)


def _train_primal(problem, solver, eps, max_iter, regularize_bias, verbose, w0=None):
    """-s 0 / -s 2 by LIBLINEAR's line-search Newton method (from ``w0`` when given)."""
    p = problem
    loss = LOSS_LOGISTIC if solver == 0 else LOSS_SQUARED_HINGE
    newton = solve_primal_newton(
        p.X,
        p.y,
        p.C,
        loss,
        p.bias,
        primal_tolerance(eps, p.y),
        max_iter,
        w0=w0,
        regularize_bias=regularize_bias,
        verbose=verbose,
    )
    if not newton.converged:
        warnings.warn(
            f"Newton solver stopped ({newton.stop_reason}) in sub-problem {p.index} "
            f"(class {p.label}) before reaching the tolerance",
            ConvergenceWarning,
            stacklevel=3,
        )
    return newton.w, _primal_result(p, newton, solver, 0, regularize_bias)


def _primal_result(p, newton, solver, dual_iterations, regularize_bias=True):
    """A SubproblemResult for a primal solve, with a dual bound from the w found.

    The dual points alpha_i = 2 C_i max(0, 1 - y_i w'x_i) (L2-loss SVM) and
    alpha_i = C_i sigma(-y_i w'x_i) (logistic) are feasible for any w and dual at the optimum,
    so -f(alpha) is an honest lower bound on P* (not computed with -R, whose dual differs).
    """
    loss = LOSS_LOGISTIC if solver == 0 else LOSS_SQUARED_HINGE
    w = newton.w
    alpha = None
    dual = gap = float("nan")
    primal = newton.objective
    if loss == LOSS_SQUARED_HINGE and regularize_bias:
        alpha = squared_hinge_dual_point(p.X, p.bias, p.y, p.C, w)
        primal, dual, gap = svm_objectives(p.X, p.bias, p.y, p.C, w, alpha, loss)
    elif regularize_bias:
        alpha, alpha_c = lr_dual_point(p.X, p.bias, p.y, p.C, w, with_complement=True)
        primal, dual, gap = lr_objectives(p.X, p.bias, p.y, p.C, w, alpha, alpha_c)
    return SubproblemResult(
        n_iter=dual_iterations + newton.n_iter,
        converged=newton.converged,
        primal=primal,
        dual=dual,
        gap=gap,
        n_sv=int(np.count_nonzero(alpha)) if alpha is not None else -1,
        alpha=alpha,
        solver=solver,
        stop_ratio=newton.grad_norm / newton.grad_norm0 if newton.grad_norm0 > 0 else 0.0,
    )


def _train_l1(problem, solver, eps, max_iter, regularize_bias, seed, w0=None):
    """-s 5 (L1-regularised L2-loss SVM, primal CD) / -s 6 (L1-regularised LR, newGLMNET),
    from ``w0`` when given."""
    p = problem
    solve = solve_l1r_l2_svc if solver == 5 else solve_l1r_lr
    loss = LOSS_SQUARED_HINGE if solver == 5 else LOSS_LOGISTIC
    sol = solve(
        p.X,
        p.y,
        p.C,
        p.bias,
        primal_tolerance(eps, p.y),
        max_iter,
        regularize_bias=regularize_bias,
        seed=seed,
        w0=w0,
    )
    if not sol.converged:
        warnings.warn(
            f"reaching max number of iterations ({max_iter}) in sub-problem {p.index} "
            f"(class {p.label})",
            ConvergenceWarning,
            stacklevel=3,
        )
    primal = l1_primal_value(
        p.X.indptr, p.X.indices, p.X.data, p.bias, p.y, p.C, sol.w, loss, regularize_bias
    )
    return sol.w, SubproblemResult(
        n_iter=sol.n_iter,
        converged=sol.converged,
        primal=float(primal),
        dual=float("nan"),
        gap=float("nan"),
        n_sv=-1,
        alpha=None,
        solver=solver,
        stop_ratio=sol.stop_measure / sol.stop_measure0 if sol.stop_measure0 > 0 else 0.0,
        nnz_w=sol.nnz_w,
    )


def _train_sgd(problem, solver, C, eps, max_iter, seed):
    """linsvm's primal stochastic solvers for the L1-loss SVM (Pegasos, SGD-R, SGD-S, SGD-M)."""
    p = problem
    if solver == PEGASOS:
        sol = solve_pegasos(p.X, p.y, C, p.bias, max_epochs=max_iter, seed=seed)
    else:
        sol = solve_sgd(
            p.X, p.y, C, p.bias, variant=_SGD_VARIANT[solver], delta=eps, max_epochs=max_iter,
            seed=seed,
        )  # fmt: skip
        if not sol.converged and solver != SGD_R:
            warnings.warn(
                f"{SOLVERS[solver].alias} stopped after {max_iter} epochs in sub-problem "
                f"{p.index} (class {p.label}) with relative accuracy bound "
                f"{sol.stop_measure:.3g} > {eps:g}",
                ConvergenceWarning,
                stacklevel=3,
            )
    return sol.w, SubproblemResult(
        n_iter=sol.n_epochs,
        converged=sol.converged,
        primal=sol.primal,
        dual=sol.dual,
        gap=sol.gap,
        n_sv=int(np.count_nonzero(sol.alpha)) if sol.alpha is not None else -1,
        alpha=sol.alpha,
        solver=solver,
        stop_ratio=sol.stop_measure,
    )


def _train_pcd(problem, eps, max_iter, seed, w0=None):
    """linsvm's primal coordinate descent for the L2-loss SVM (eps as -s 2's -e)."""
    p = problem
    sol = solve_pcd(p.X, p.y, p.C, p.bias, primal_tolerance(eps, p.y), max_iter, seed=seed, w0=w0)
    if not sol.converged:
        warnings.warn(
            f"reaching max number of iterations ({max_iter}) in sub-problem {p.index} "
            f"(class {p.label})",
            ConvergenceWarning,
            stacklevel=3,
        )
    alpha = squared_hinge_dual_point(p.X, p.bias, p.y, p.C, sol.w)
    return sol.w, SubproblemResult(
        n_iter=sol.n_iter,
        converged=sol.converged,
        primal=sol.primal,
        dual=sol.dual,
        gap=sol.gap,
        n_sv=int(np.count_nonzero(alpha)),
        alpha=alpha,
        solver=PCD,
        stop_ratio=sol.grad_norm / sol.stop_measure0 if sol.stop_measure0 > 0 else 0.0,
    )


def _train_crammer_singer(
    X, labels, class_index, weighted_C, sw, bias, eps, max_iter, shrinking, seed, alpha0=None
):
    """-s 4: one Crammer-Singer problem over all classes; one weight vector per class (from
    the dual point ``alpha0`` when given)."""
    sol = solve_crammer_singer(
        X,
        class_index,
        labels.shape[0],
        weighted_C,
        bias,
        eps,
        max_iter,
        sample_weight=sw,
        seed=seed,
        shrinking=shrinking,
        alpha0=alpha0,
    )
    if not sol.converged:
        warnings.warn(
            f"reaching max number of iterations ({max_iter}) in the Crammer-Singer solver; "
            "it is slow when C is large and features are few: a smaller C or scaled features "
            "help",
            ConvergenceWarning,
            stacklevel=3,
        )
    n_features = X.shape[1]
    result = SubproblemResult(
        n_iter=sol.n_iter,
        converged=sol.converged,
        primal=sol.primal,
        dual=sol.dual,
        gap=sol.primal - sol.dual,
        n_sv=int(np.count_nonzero(np.any(sol.alpha != 0, axis=1))),
        alpha=sol.alpha,
        solver=4,
    )
    bias_weights = sol.W[:, n_features] if bias >= 0 else None
    return Model(4, labels, sol.W[:, :n_features], bias, bias_weights, results=[result])


def _train_regression(
    X,
    y,
    solver,
    C,
    eps,
    p,
    bias,
    sw,
    class_weight,
    max_iter,
    regularize_bias,
    init_sol,
    warm_start,
    shrinking,
    bucket_size,
    buckets_per_group,
    seed,
    verbose,
):
    """-s 11 / 12 / 13: support vector regression on real targets (one weight vector)."""
    if class_weight:
        raise InvalidInputError("class weights (-wi) apply to classification, not regression")
    if y.dtype.kind not in "iuf":
        raise InvalidInputError(f"regression targets must be numbers, got dtype {y.dtype}")
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise InvalidInputError(f"p must be a number, got {p!r}") from None
    if not (np.isfinite(p) and p >= 0):
        raise InvalidInputError(f"p must be >= 0, got {p}")
    if not regularize_bias and (solver != 11 or bias != 1.0):
        raise InvalidInputError("regularize_bias=False (-R) needs bias=1 (-B 1) and -s 11")
    n_features = X.shape[1]
    targets = np.asarray(y, dtype=np.float64)
    cost = np.full(X.shape[0], C) if sw is None else C * sw
    ((beta0, w0),) = _warm_starts(warm_start, solver, X.shape, bias, None, 1)
    if init_sol is not None:
        if solver != 11:
            raise InvalidInputError("init_sol is supported only for solvers 0, 2 and 11")
        w0 = np.asarray(init_sol, dtype=np.float64).reshape(-1)
        if w0.shape[0] != n_features + (1 if bias >= 0 else 0):
            raise InvalidInputError("init_sol has the wrong number of weights")
    if solver == 11:
        sol = solve_svr_primal(
            X,
            targets,
            cost,
            p,
            bias,
            eps,
            max_iter,
            w0=w0,
            regularize_bias=regularize_bias,
            verbose=verbose,
        )
    else:
        sol = solve_svr(
            solver,
            X,
            targets,
            cost,
            p,
            bias,
            eps,
            shrinking=shrinking,
            seed=seed,
            bucket_size=bucket_size,
            buckets_per_group=buckets_per_group,
            dual_max_iter=max_iter,
            verbose=verbose,
            beta0=beta0,
        )
    fell_back = solver == 12 and not hasattr(sol, "beta")
    if fell_back:
        warnings.warn(
            f"reaching max number of iterations ({max_iter}); switching to -s 11 (primal Newton)",
            ConvergenceWarning,
            stacklevel=3,
        )
    elif not sol.converged:
        warnings.warn(
            f"-s {solver} stopped at its iteration cap ({max_iter}) before reaching "
            "the tolerance" + ("; -s 11 may be faster" if solver == 13 else ""),
            ConvergenceWarning,
            stacklevel=3,
        )
    beta = getattr(sol, "beta", None)
    result = SubproblemResult(
        n_iter=sol.n_iter,
        converged=sol.converged,
        primal=float(sol.primal),
        dual=float(sol.dual),
        gap=float(sol.gap),
        n_sv=int(np.count_nonzero(beta)) if beta is not None else -1,
        alpha=beta,
        solver=11 if fell_back else solver,
        stop_ratio=(
            sol.grad_norm / sol.grad_norm0 if getattr(sol, "grad_norm0", 0) > 0 else float("nan")
        ),
    )
    w = sol.w
    bias_weights = np.array([w[n_features]]) if bias >= 0 else None
    return Model(
        solver, np.array([]), w[None, :n_features], bias, bias_weights, p=p, results=[result]
    )


def _train_oneclass(X, nu, eps, bias, max_iter, class_weight, sample_weight):
    """-s 21: one-class SVM on the rows of X (labels play no part, as in LIBLINEAR)."""
    check_oneclass_bias(bias)
    nu = check_nu(nu)
    if class_weight or sample_weight is not None:
        raise InvalidInputError("the one-class SVM (-s 21) takes no class or sample weights")
    sol = solve_oneclass(X, nu, eps, max_iter)
    if not sol.converged:
        warnings.warn(
            f"reaching max number of iterations ({max_iter}) in the one-class SVM",
            ConvergenceWarning,
            stacklevel=3,
        )
    result = SubproblemResult(
        n_iter=sol.n_iter,
        converged=sol.converged,
        primal=sol.primal,
        dual=sol.dual,
        gap=sol.gap,
        n_sv=sol.n_sv,
        alpha=sol.alpha,
        solver=21,
    )
    return Model(21, np.array([]), sol.w[None, :], -1.0, rho=sol.rho, results=[result])


def _make_callback(X, bias, y_sign, cost, loss, k, verbose, on_iteration):
    def callback(iteration, n_active, pg_max, pg_min, w, alpha):
        if verbose:
            primal, dual, _ = svm_objectives(X, bias, y_sign, cost, w, alpha, loss)
            print(
                f"iter {iteration:4d}  active {n_active:9d}  PG max-min {pg_max - pg_min:.3e}"
                f"  primal {primal:.10e}  dual {dual:.10e}",
                file=sys.stderr,
            )
        if on_iteration is not None:
            on_iteration(k, iteration, n_active, pg_max, pg_min, w, alpha)

    return callback


def cv_folds(n_rows: int, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """LIBLINEAR's cross-validation folds: (training rows, held-out rows) for each fold.

    Rows are shuffled with ``seed`` and cut into ``n_folds`` consecutive parts; with more
    folds than rows it is leave-one-out, with LIBLINEAR's warning.
    """
    if n_folds < 2:
        raise InvalidInputError(f"n-fold cross validation: n must be >= 2, got {n_folds}")
    if n_rows == 0:
        raise InvalidInputError("no training data: X has 0 rows")
    if n_folds > n_rows:
        print(
            "WARNING: # folds > # data. Will use # folds = # data instead "
            "(i.e., leave-one-out cross validation)",
            file=sys.stderr,
        )
        n_folds = n_rows
    perm = np.random.default_rng(seed).permutation(n_rows)
    bounds = [i * n_rows // n_folds for i in range(n_folds + 1)]
    return [
        (
            np.concatenate([perm[: bounds[f]], perm[bounds[f + 1] :]]),
            perm[bounds[f] : bounds[f + 1]],
        )
        for f in range(n_folds)
    ]


def cross_validation(X, y, n_folds: int, seed: int = 1, **params) -> np.ndarray:
    """Predicted label (or value) of each row by a model trained on the other folds (``-v``)."""
    X = as_csr(X)
    n_rows = X.shape[0]
    y = check_labels(y, n_rows)
    sw = check_sample_weight(params.pop("sample_weight", None), n_rows)
    predicted = np.empty(n_rows, dtype=y.dtype)
    for fit, test in cv_folds(n_rows, n_folds, seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = train(
                X[fit], y[fit], sample_weight=None if sw is None else sw[fit], seed=seed, **params
            )
        predicted[test] = model.predict(X[test])
    return predicted
