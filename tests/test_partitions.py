"""The solver interface serves partitions of a problem: blocks of rows solved one after another
against one shared w (block minimisation, the frame of data larger than memory).

Each block is a ``Subproblem`` over its rows with its own dual variables (``alpha0``) and the
shared ``w0`` = sum over all rows of y_i alpha_i x_i; the solver updates only its block's alpha
and returns the new shared w. Visiting the blocks in turn reaches the optimum of the whole
problem: the same primal value as one solve over all rows, and a w that is still exactly
sum_i y_i alpha_i x_i.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from linsvm.errors import InvalidInputError
from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE, primal_from_dual, svm_objectives
from linsvm.solvers import SOLVERS, Subproblem


@pytest.mark.parametrize("solver, loss", [(3, LOSS_HINGE), (1, LOSS_SQUARED_HINGE)])
@pytest.mark.parametrize("n_blocks", [2, 5])
def test_block_minimisation_reaches_the_whole_optimum(solver, loss, n_blocks):
    rng = np.random.default_rng(4)
    X = sp.random(400, 30, density=0.3, format="csr", random_state=rng)
    y = np.where(X @ rng.standard_normal(30) + 0.3 * rng.standard_normal(400) > 0, 1.0, -1.0)
    C = np.full(400, 0.05)
    bias = 1.0
    solve = SOLVERS[solver].solve
    whole = solve(Subproblem(X, y, C, 1e-10, 100_000, bias=bias))

    blocks = np.array_split(np.arange(400), n_blocks)
    alpha = np.zeros(400)
    w = np.zeros(31)
    for sweep in range(300):
        for k, rows in enumerate(blocks):
            sub = Subproblem(
                X[rows], y[rows], C[rows], 1e-10, 10, bias=bias, seed=sweep * n_blocks + k,
                alpha0=alpha[rows], w0=w,
            )  # fmt: skip
            sol = solve(sub)
            alpha[rows] = sol.alpha
            w = sol.w
        primal, dual, gap = svm_objectives(X, bias, y, C, w, alpha, loss)
        if gap <= 1e-9 * abs(primal):
            break
    # the shared w is the whole problem's w(alpha), and both runs reach its optimum
    np.testing.assert_allclose(
        w, primal_from_dual(X.indptr, X.indices, X.data, bias, y, alpha, 31), rtol=1e-10,
        atol=1e-12,
    )  # fmt: skip
    assert gap >= -1e-9 * abs(primal)
    assert abs(primal - whole.primal) <= 1e-6 * abs(whole.primal)


def test_a_block_does_not_recount_its_own_rows():
    """With w0 given, alpha0's rows are already in w0: a block whose alpha is optimal for the
    shared w stops at once and leaves w as it was."""
    rng = np.random.default_rng(2)
    X = sp.random(200, 20, density=0.3, format="csr", random_state=rng)
    y = np.where(rng.standard_normal(200) > 0, 1.0, -1.0)
    C = np.ones(200)
    whole = SOLVERS[3].solve(Subproblem(X, y, C, 1e-12, 100_000))
    rows = np.arange(50, 120)
    sub = Subproblem(X[rows], y[rows], C[rows], 1e-3, 10, alpha0=whole.alpha[rows], w0=whole.w)
    sol = SOLVERS[3].solve(sub)
    assert sol.converged and sol.n_iter == 1
    np.testing.assert_allclose(sol.w, whole.w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("solver", [1, 3, 7])
@pytest.mark.parametrize("offset", [0.8, -0.35])
def test_a_margin_offset_solves_the_dual_with_the_bias_weight_fixed(solver, offset):
    """``margin_offset`` c on rows without a bias feature: the optimum of the dual whose
    margins are y_i (w'x_i + c), i.e. of the primal with a bias weight held at c (the bias
    feature's value 1): each alpha_i is its own optimum given w = sum_j y_j alpha_j x_j."""
    rng = np.random.default_rng(7)
    X = sp.random(300, 20, density=0.3, format="csr", random_state=rng)
    y = np.where(X @ rng.standard_normal(20) + 0.5 * rng.standard_normal(300) > 0, 1.0, -1.0)
    C = np.full(300, 0.5)
    sub = Subproblem(X, y, C, 1e-9, 100_000, bias=-1.0,
                     options={"margin_offset": offset, "objectives": False})  # fmt: skip
    sol = SOLVERS[solver].solve(sub)
    assert sol.converged
    alpha = sol.alpha
    w = primal_from_dual(X.indptr, X.indices, X.data, -1.0, y, alpha, 20)
    np.testing.assert_allclose(sol.w, w, atol=1e-10)
    z = y * (X @ w + offset)
    if solver == 1:  # alpha_i = max(0, 2 C_i (1 - z_i)): G = z - 1 + alpha / (2C) = 0 or > 0 at 0
        np.testing.assert_allclose(alpha, np.maximum(0.0, 2 * C * (1 - z)), atol=1e-7)
    elif solver == 3:  # z < 1 at C, z > 1 at 0, z = 1 between
        inside = (alpha > 1e-9) & (alpha < C - 1e-9)
        assert np.all(z[alpha <= 1e-9] >= 1 - 1e-7) and np.all(z[alpha >= C - 1e-9] <= 1 + 1e-7)
        np.testing.assert_allclose(z[inside], 1.0, atol=1e-7)
    else:  # alpha_i = C_i sigma(-z_i)
        np.testing.assert_allclose(alpha, C / (1 + np.exp(z)), atol=1e-7)


def test_a_margin_offset_is_for_rows_without_a_bias_and_unscored_solves():
    X = sp.random(50, 5, density=0.5, format="csr", random_state=np.random.default_rng(1))
    y = np.where(np.arange(50) % 2 == 0, 1.0, -1.0)
    C = np.ones(50)
    for solver in (1, 7):
        solve = SOLVERS[solver].solve
        for bias, objectives, offset in ((1.0, False, 0.5), (-1.0, True, 0.5),
                                         (-1.0, False, np.inf), (-1.0, False, "x")):  # fmt: skip
            options = {"margin_offset": offset, "objectives": objectives}
            sub = Subproblem(X, y, C, 0.1, 100, bias=bias, options=options)
            with pytest.raises(InvalidInputError, match="margin_offset"):
                solve(sub)
