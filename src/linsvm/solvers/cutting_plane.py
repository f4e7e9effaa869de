"""Cutting-plane solvers of the L1-loss SVM: SVMperf's 1-slack algorithm and OCAS.

The problem is LIBLINEAR's -s 3 primal, one cost C for every row::

    P(w) = 1/2 w'w + C H(w),     H(w) = sum_i max(0, 1 - y_i w'x_i)

with the bias as LIBLINEAR's: when ``bias >= 0`` every row gets one more feature of value
``bias`` and w one more (last) weight, regularised like the others.

Cuts. H is convex and piecewise linear; at any point v, with S = {i: y_i v'x_i < 1} (OCAS:
<= 1, as libocas), the subgradient inequality gives a cut valid for every w::

    H(w) >= b_S - a_S'w,     a_S = sum_{i in S} y_i x_i,   b_S = |S|

(the "most violated constraint" of Joachims' 1-slack formulation; here in sums over the rows,
not averages). With the working set {(a_j, b_j)}, j < m, the model
H_m(w) = max(0, max_j b_j - a_j'w) <= H(w) gives the reduced problem

    min_w  F_m(w) = 1/2 w'w + C H_m(w)        (F_m <= P everywhere)

whose dual, with the cuts' Gram matrix G_jk = a_j'a_k, is the simplex QP::

    max_alpha  D(alpha) = b'alpha - 1/2 alpha'G alpha,   alpha >= 0,  sum_j alpha_j <= C,
    w(alpha) = sum_j alpha_j a_j.

Any feasible alpha gives D(alpha) <= min F_m <= P*: a certified lower bound on the optimum,
reported as ``dual``. (It is LIBLINEAR's dual too: beta_i = sum_{j: i in S_j} alpha_j lies in
[0, C] and D(alpha) = e'beta - 1/2 ||sum_i beta_i y_i x_i||^2.)

The reduced dual is solved exactly by an active-set method (``_active_set_dual``; Wolfe's
minimum-norm-point algorithm with D's linear term: the support is kept affinely independent
and moved to the maximiser of D on its affine hull, a Cholesky factor updated as points enter
and leave), warm-started from the previous alpha (a new cut enters at 0). SMO on the simplex
with a slack variable alpha_0 = C - sum_j alpha_j (``_smo_reduced_dual``: each step moves mass
from the variable with positive mass and the best second-order gain to the one of largest
gradient g_j = b_j - a_j'w(alpha), the slack of cut j at w(alpha)) crawls at large C, where
the cuts, sums of nearly the same rows, are nearly parallel: a million steps a solve, an hour
for -s 35 on heart_scale at C = 1e5, where the active set takes a few dozen. SMO still opens
each solve of svm_perf's rule (``SVMPERF_SMO_SWEEPS``, why there) and finishes one the active
set's rounding stalls. The optimality measures, from g alone: the KKT violation
max_j g_j - min_{alpha_j > 0} g_j (g_0 = 0 for the slack), and the reduced duality gap
F_m(w(alpha)) - D(alpha) = sum_j alpha_j (g_max - g_j) (j = 0 included, g_max >= 0). At most
``QP_MAX_STEPS`` steps (option ``qp_max_steps``) a solve; a step is an SMO step (O(m) for m
cuts), or a minor cycle or an entry of the active set (O(m |S| + |S|^2), |S| <= min(m, n_w) + 1).

SVMperf (Joachims, "Training linear SVMs in linear time", KDD 2006; Joachims, Finley, Yu,
"Cutting-plane training of structural SVMs", MLJ 2009; = BMRM for the hinge loss): from w = 0,
each iteration adds the cut at the current w (built during the pass that computes the
margins) and solves the reduced dual to the KKT precision svm_perf sets, half the smallest
violation seen so far (svm_light's epsilon_crit, from 100 % at the start); w = w(alpha). It
stops when the cut at w exceeds the working set's slack xi = max(0, max_j g_j) by at most eps,
in svm_perf's units::

    100/l (H(w) - xi) <= eps            (default eps 0.1, svm_perf's -e)

and then P(w) - F_m(w) = C (H(w) - xi) <= C l eps / 100. The reduced dual's own gap
F_m(w) - D <= C kkt_tol adds to that: svm_perf's precision, half the smallest violation
before this iteration, can be far above eps when the violation drops at once (separable data
at large C: -e 0.001 stopped at P = 2250 against P* = 435, at C = 1e4). So the rule stops
only after a solve to kkt_tol <= eps l / 200 (the iteration after a large drop solves to it:
one more, where needed), and then P(w) - D <= 1.5 C l eps / 100. svm_perf
(``svm_perf_learn -c C_p -l 2 -w 3 --b 0``: error-rate loss under margin rescaling, the 1-slack
dual algorithm, no bias) gives its labels the values +-50/l and measures the loss in percent,
so its problem is 1/2 w'w + C_p xi with xi = 100/l H(w) at the optimum: LIBLINEAR's problem
when C_p = C l / 100, and its -e is the eps above, in percent of the average hinge loss
(checked: P of its model's w equals its "pval"). Cuts with alpha_j = 0 in the last
``inactive_limit`` (50) QP solutions are dropped, as svm_perf does. Two differences: svm_perf
takes xi as the slack of the first cut whose alpha exceeds the mean alpha (equal to the max at
an exact QP solution), and returns its last w; here xi is the max and w the iterate of least P
seen. svm_perf solves its QP with svm_light's HIDEO; it needs about a quarter more iterations
(a9a at -e 0.1: 613 against 486 + 1).

Option ``tol_rel`` of -s svmperf (default 0: off) adds svmocas -m 0's rule, stop when
P(w) - bound <= tol_rel P(w) at the last iterate, and then solves the reduced dual as libocas
does, to a relative gap tol_rel / 2: with eps = 0 this is ``svmocas -m 0 -r tol_rel``
(svmocas's "standard cutting plane (equivalent to BMRM, SVM^perf)"). svm_perf's rule with its
adaptive QP precision is the faster of the two at tight tolerances (a9a to a certified 5e-7:
1931 iterations and 14 s with tol_rel, about 1100 and 4 s with eps, svmocas -m 0 was still at
a 0.2 % gap after 1000 iterations and 88 s).

OCAS (Franc & Sonnenburg, "Optimized cutting plane algorithm for support vector machines",
ICML 2008, and JMLR 2009; libocas's ``svm_ocas_solver``, Method 1): besides the reduced
problem's solution w_c it keeps the best point w_b (start 0). Each iteration: add the pending
cut, solve the reduced dual to a relative gap TolRel/2 (as libocas), compute the margins at
w_c (a pass), minimise P exactly on the segment w_b + t (w_c - w_b), t >= 0
(``_line_search``: P is a convex piecewise quadratic in t, its kinks
t_i = (1 - y_i w_b'x_i) / (y_i (w_c - w_b)'x_i) visited in increasing order from a heap,
O(l + r log l) for r kinks passed), move w_b to the optimum t*, and take the next cut at
(1 - mu) w_b(t*) + mu w_c (mu = 0.1), i.e. at t* + mu (1 - t*) on the segment, from margins
interpolated on it (a second pass, adding the rows in the cut only). It stops when::

    Q_P - Q_D <= TolRel |Q_P|   or   Q_P - Q_D <= TolAbs     (Q_P = P(w_b), Q_D the bound)

(default TolRel = eps = 0.01, TolAbs 0: svmocas's -r and -a; Q_D here is the best bound so
far, libocas's the last, which is nearly always the same). svmocas's C is LIBLINEAR's C (its
loss is C sum_i hinge_i) and ``-b 0`` is no bias, ``-b B`` LIBLINEAR's -B B. Margins at w_b are
interpolated along the segments as libocas does; the primal reported at the end is computed
afresh. libocas keeps every cut (its buffer of 2000 full is an error); here the working set's
upkeep is SVMperf's.

Iterations. An outer iteration is one QP solve and the pass(es) after it (one Progress, one
hook call); the first cut, at w = 0 (all rows), is built before the first. This is svmocas's
nIter; svm_perf prints one iteration more (its first, at w = 0, solves no QP).

The reduced dual's own options: ``qp_tol_rel`` (default: the rules above) solves it to that
relative gap instead, for either method.

Storage. Cuts are dense vectors of n_w = n (+1) float64 in one (capacity, n_w) buffer, with
G in a (capacity, capacity) one; capacity = min(``max_cuts`` (option, default 2000, libocas's
buffer), ``cut_memory`` (option, bytes, default 1 GiB) / (8 n_w)), at least 2 (pypi-recent:
321,130 features, 2.6 MB a cut, 417 cuts in 1 GiB; its working set stays far below). Only the
rows in use are touched. Dense cuts make the cut's G row and w_c cost O(m n_w) an iteration,
against O(nnz) for the pass; sums of thousands of sparse rows are nearly dense anyway. When the
buffer is full, the cut inactive longest is dropped; if every cut is active, they are
aggregated into one, sum_j alpha_j a_j / s with offset sum_j alpha_j b_j / s (s = sum_j
alpha_j; a convex combination of cuts is a cut), which keeps alpha's value and w (BMRM's
aggregation).

Each iteration is compiled calls sequenced by Python: ``_add_cut`` (the cut's row of G),
the reduced dual's solvers (``_solve_reduced_dual``), ``_take_solution`` (w_c, the bound, the
working set's upkeep), then the pass(es) over the rows at w_c. (A compiled caller re-optimises
its callees: one kernel for the whole loop took 17 s to compile.) All state lives in arrays
(cuts, G, b, alpha, g, the margins at w_b, counters), so batching iterations between hook
calls does not change the result, and a checkpoint (``Progress.state()``; its cut buffer and
G cut to the rows in use) resumes exactly. The hook's ``measure``: SVMperf's
100/l (H(w) - xi); OCAS's (Q_P - Q_D) / |Q_P|; ``figures``: n_cuts, qp_iterations (the
reduced dual's steps so far), qp_capped (solves stopped at the step cap), lower_bound, primal
(this iteration's point), best_primal, dual (this iteration's D), slack (xi), removed_cuts,
aggregations, step (OCAS's t*).

Measured against the originals (C = 1, no bias; P* from OCAS at a certified gap; times of a
noisy 2-core machine, ours and theirs in the same session). Iterations follow the originals':
to a 1 % gap OCAS takes 50 iterations on a9a (svmocas -m 1: 49), 26 on reuters (26), 52 on
pypi-recent (52); the plain cutting plane with svmocas's rule 467 on a9a (svmocas -m 0: 458).
Per iteration, a9a: OCAS 2.5 ms (svmocas 3.6: it sorts every kink), the -m 0 rule 2.3 ms
(4.0), svm_perf's rule 1.5 ms (svm_perf 8.7-11 ms, its QP solver); pypi-recent: OCAS 115-150
ms (svmocas 136), -m 0 131 ms (190), svm_perf's rule at -e 0.1 128 ms and 264 iterations
(svm_perf 256 ms and 310). Time to a 0.1 % relative primal accuracy, OCAS: a9a 0.10 s
(0.14), reuters 0.17 s (0.18), pypi-recent 10-13 s (11.4). The reduced dual: a9a, OCAS to a
1e-6 gap, 216 iterations, 2,235 active-set steps, 0.21 s (SMO alone: 713,000 steps, 0.33 s);
svm_perf's rule there takes 486 iterations (SMO alone 460, each solve exact 901); at large C
``benchmarks/RESULTS-cutting-plane-c.md`` (heart_scale at C = 1e6: 0.003 s and 36 iterations,
svmocas 31 s and 41). The dense cuts cost O(m n_w) an iteration, memory-bound: on
pypi-recent, ~75 cuts of 321,130 weights, the G row and w_c each read every cut (~200 MB),
40-60 ms of an iteration (libocas's sparse cuts, nearly dense there, cost the same). Where
C max ||x_i||^2 nears 1e20 the reduced dual's gradients are all rounding (|G| |alpha| eps
exceeds the slacks): OCAS can stall short of its tolerance there, the same cut returning every
iteration; after ``STALL_ITERATIONS`` iterations without a gain it stops (``STALLED``) with
its certified bound rather than run on to max_iter.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..data import UsedColumns
from ..errors import InvalidInputError
from ..objective import LOSS_HINGE, primal_value
from ..sparse_rows import row_axpy, row_dot, sq_norm
from ._base import Hook, Solution, Subproblem, copy_state, restore_state
from ._columns import run_primal
from .sgd import _check_int, _real_scalar, check_one_cost_problem

# Defaults (the originals' own).
DEFAULT_SVMPERF_EPS = 0.1  # svm_perf's -e: 100/l (H(w) - xi) at the stop
DEFAULT_OCAS_TOL_REL = 0.01  # svmocas's -r
DEFAULT_MU = 0.1  # OCAS: the next cut at (1 - mu) w_b + mu w_c
DEFAULT_INACTIVE_LIMIT = 50  # svm_perf drops cuts inactive in this many QP solutions
DEFAULT_MAX_CUTS = 2000  # libocas's cut buffer (svmocas -s)
DEFAULT_CUT_MEMORY = 2**30  # bytes for the dense cut buffer
QP_MAX_STEPS = 1_000_000  # steps per reduced-dual solve, a safeguard (option qp_max_steps)
# svm_perf's rule stops at a loose QP precision, and its iterations were counted with an
# inexact solver: SMO from the previous alpha moves w little each iteration, which damps the
# cutting plane's zigzag (a9a at C = 1: 460 iterations; each QP solved exactly: 901). So SMO
# first, for up to this many times (m + 1) steps, and the active-set method where SMO crawls
# (large C). OCAS's line search does the damping: its QPs go to the active set at once (the
# same iterations, a fraction of the steps).
SVMPERF_SMO_SWEEPS = 20
# Each cut is the previous one updated by the rows that enter or leave it; every this many
# iterations it is summed afresh.
CUT_REFRESH = 25
# w_c is summed over the cuts this many columns at a time (32 KiB of float64).
_BLOCK = 4096
# The reduced dual stops at least at this relative gap (its rounding floor).
QP_GAP_FLOOR = 1.0e-13
# A run whose lower bound and best primal value have not improved at all in this many
# iterations has stalled at the reduced dual's rounding (C max ||x_i||^2 near 1e20: the same
# cut comes back every iteration, a fixed point) and stops there. Converging runs improve one
# or the other nearly every iteration: at most 14 iterations without either on heart_scale,
# australian, dna, a9a and generated sets at C = 1 to 1e6.
STALL_ITERATIONS = 100

SVMPERF, OCAS = 0, 1

# Integer state of the kernel.
_I_ITER, _I_CUTS, _I_STARTED, _I_CONVERGED, _I_QP_SOLVES, _I_QP_STEPS = 0, 1, 2, 3, 4, 5
_I_REMOVED, _I_AGGREGATED, _I_PENDING_SIZE, _I_QP_CAPPED = 6, 7, 8, 9
_N_ISTATE = 10
# Float state.
_F_MEASURE, _F_PRIMAL, _F_BEST_PRIMAL, _F_BOUND, _F_DUAL, _F_MIN_VIOLATION = 0, 1, 2, 3, 4, 5
_F_SLACK, _F_PENDING_B, _F_XI, _F_STEP, _F_WW, _F_WC_WC = 6, 7, 8, 9, 10, 11
_N_FSTATE = 12


# ----------------------------------------------------------------------------- reduced dual


@njit(cache=True, nogil=True)
def _smo_reduced_dual(gram, offsets, alpha, grad, m, slack, kkt_tol, gap_rel, max_steps):
    """SMO on max b'alpha - 1/2 alpha'G alpha, alpha >= 0, sum alpha <= C (the module
    docstring), from the given feasible alpha.

    gram: (capacity, capacity), the first m x m in use; offsets, alpha, grad: (capacity,);
    slack = C - sum_j alpha_j. Stops when the KKT violation <= kkt_tol (< 0: not used) or the
    reduced gap <= gap_rel |D| (< 0: not used), at the rounding floor, or after max_steps.
    grad is recomputed exactly first and kept up to date. Returns (steps, slack, dual value D,
    capped: 1 when max_steps stopped it). Each step is two sweeps over the m cuts: the
    gradient update that also finds the largest gradient, then the measures and the choice of
    the variable to shrink.
    """
    up = -1  # the variable to grow: the largest gradient (the slack's is 0)
    g_up = 0.0
    for j in range(m):
        s = 0.0
        for k in range(m):
            if alpha[k] != 0.0:
                s += gram[j, k] * alpha[k]
        grad[j] = offsets[j] - s
        if grad[j] > g_up:
            g_up = grad[j]
            up = j
    steps = 0
    capped = 0
    dual = 0.0
    while True:
        # the measures, and the variable to shrink: positive mass, best gain (g_up - g_j)^2 / q
        gap = slack * g_up
        g_down = g_up if slack <= 0.0 else 0.0
        ab = 0.0
        ag = 0.0
        g_uu = gram[up, up] if up >= 0 else 0.0
        down = -2
        best_gain = -1.0
        best_step = 0.0
        if slack > 0.0 and up >= 0:
            q = max(g_uu, 1e-300)
            best_gain = g_up * g_up / q
            best_step = min(g_up / q, slack)
            down = -1
        for j in range(m):
            a = alpha[j]
            if a > 0.0:
                gj = grad[j]
                diff = g_up - gj
                gap += a * diff
                ab += a * offsets[j]
                ag += a * gj
                if gj < g_down:
                    g_down = gj
                if diff > 0.0:
                    q = g_uu + gram[j, j] - 2.0 * (gram[up, j] if up >= 0 else 0.0)
                    q = max(q, 1e-300)
                    gain = diff * diff / q
                    if gain > best_gain:
                        best_gain = gain
                        best_step = min(diff / q, a)
                        down = j
        dual = 0.5 * (ab + ag)  # alpha'b - 1/2 alpha'G alpha, as alpha'g = alpha'b - alpha'G alpha
        if kkt_tol >= 0.0 and g_up - g_down <= kkt_tol:
            break
        if gap_rel >= 0.0 and gap <= gap_rel * abs(dual):
            break
        if gap <= QP_GAP_FLOOR * ab or g_up - g_down <= 0.0:
            break
        if steps >= max_steps:
            capped = 1
            break
        if down == -2 or best_step <= 0.0:
            break
        delta = best_step
        if up >= 0:
            alpha[up] += delta
        else:
            slack += delta
        if down >= 0:
            alpha[down] -= delta
            if alpha[down] < 0.0:
                alpha[down] = 0.0
        else:
            slack -= delta
            if slack < 0.0:
                slack = 0.0
        # the gradient update, finding the next variable to grow on the way
        new_up = -1
        g_up = 0.0
        if up >= 0 and down >= 0:
            for k in range(m):
                gk = grad[k] - delta * (gram[k, up] - gram[k, down])
                grad[k] = gk
                if gk > g_up:
                    g_up = gk
                    new_up = k
        elif up >= 0:
            for k in range(m):
                gk = grad[k] - delta * gram[k, up]
                grad[k] = gk
                if gk > g_up:
                    g_up = gk
                    new_up = k
        else:
            for k in range(m):
                gk = grad[k] + delta * gram[k, down]
                grad[k] = gk
                if gk > g_up:
                    g_up = gk
                    new_up = k
        up = new_up
        steps += 1
    return steps, slack, dual, capped


# The reduced dual as a problem over m + 1 points on the simplex {x >= 0, sum_j x_j = C}: the
# cuts p_j = a_j with offsets b_j (j < m) and the origin p_m = 0, b_m = 0, whose weight x_m is
# the slack. D(x) = b'x - 1/2 ||sum_j x_j p_j||^2, its gradient g_j = b_j - p_j'w(x).
#
# The active-set solver keeps a corral: points S, affinely independent, with x_j > 0 exactly
# on S (Wolfe's minimum-norm-point algorithm, with D's linear term). Relative to a reference
# point r = S[0], the other points' differences d_q = p_q - p_r have the Gram matrix
# M_qs = d_q'd_s, positive definite for a corral, kept as its Cholesky factor L (an append,
# a delete by a rank-one update: O(|S|^2) each). The maximiser of D on the affine hull of S
# with sum x = C is x_r = C - sum theta, x_q = theta_q, with M theta = h,
# h_q = b_q - b_r - C d_q'p_r; all its weights positive: that is x; else x moves towards it
# until a weight reaches 0, that point leaves S, and again (a minor cycle). Then the point of
# largest gradient enters S (a major cycle), until the measures of the SMO solver are met.
# A point in S's affine hull (|S| is at most n_w + 1) enters along the direction d of zero
# curvature (sum d_i p_i = 0, sum d_i = 0): D changes by t b'd only, and the first weight
# to reach 0 leaves.

# A point whose squared distance from the corral's affine hull is at most this, relative to
# its and the reference's squared norms, lies in it (rounding of the Gram entries: ~1e-16).
SINGULAR_TOL = 1.0e-12


@njit(cache=True, nogil=True)
def _append(gram, member, size, chol, j) -> bool:
    """Append point j to the corral member[:size] when it lies outside the affine hull: its
    row of L (row size - 1, solved into place). Returns False, with the row holding
    l = L^-1 M_{.j}, when it lies in the hull (distance below ``SINGULAR_TOL``)."""
    r = member[0]
    n = size - 1
    g_jr = gram[j, r] - gram[r, r]  # M_qj = (p_q - p_r)'(p_j - p_r) = g_qj - g_qr - g_jr + g_rr
    for q in range(n):
        k = member[q + 1]
        s = gram[k, j] - gram[k, r] - g_jr
        for t in range(q):
            s -= chol[q, t] * chol[n, t]
        chol[n, q] = s / chol[q, q]
    distance = gram[j, j] - gram[j, r] - g_jr
    for t in range(n):
        distance -= chol[n, t] * chol[n, t]
    scale = gram[j, j] + gram[r, r]
    if not distance > SINGULAR_TOL * scale:
        return False
    chol[n, n] = math.sqrt(distance)
    member[size] = j
    return True


@njit(cache=True, nogil=True)
def _drop_zeros(gram, x, member, size, chol, in_corral, work) -> int:
    """Remove the corral's points of weight <= 0 (set to 0). Returns the new size (0 when the
    reference was the only point), or -1 when the reference left and the rest, factored
    afresh, are (numerically) affinely dependent.

    A point other than the reference: its row and column of L go, the rows below move up,
    and the trailing block absorbs the removed column l by a rank-one update,
    L33 L33' + l l' (Givens rotations, O(|S|^2)). The reference: L afresh, the point of
    largest weight the new reference."""
    reference_left = x[member[0]] <= 0.0
    for p in range(size - 1, 0, -1):
        j = member[p]
        if x[j] > 0.0:
            continue
        x[j] = 0.0
        in_corral[j] = False
        n = size - 1
        q = p - 1
        if not reference_left:
            for i in range(q, n - 1):
                work[i] = chol[i + 1, q]
                for c in range(q):
                    chol[i, c] = chol[i + 1, c]
                for c in range(q, i + 1):
                    chol[i, c] = chol[i + 1, c + 1]
            for t in range(q, n - 1):
                a = chol[t, t]
                r = math.sqrt(a * a + work[t] * work[t])
                cos = r / a
                sin = work[t] / a
                chol[t, t] = r
                for i in range(t + 1, n - 1):
                    chol[i, t] = (chol[i, t] + sin * work[i]) / cos
                    work[i] = cos * work[i] - sin * chol[i, t]
        for t in range(p, size - 1):
            member[t] = member[t + 1]
        size -= 1
    if not reference_left:
        return size
    in_corral[member[0]] = False
    x[member[0]] = 0.0
    if size == 1:
        return 0
    best = 1
    for p in range(1, size):
        if x[member[p]] > x[member[best]]:
            best = p
    member[0] = member[best]
    member[best] = member[size - 1]
    size -= 1
    for p in range(1, size):
        if not _append(gram, member, p, chol, member[p]):
            return -1
    return size


@njit(cache=True, nogil=True)
def _enter(gram, offsets, x, member, size, chol, in_corral, work, j) -> int:
    """Add point j to the corral. When p_j lies in its affine hull, x moves along the
    zero-curvature direction d (d_j = 1; the sign that does not lower D; a point that leaves
    S instead of entering it if d would lower x_j from 0) until a weight reaches 0, which
    leaves, and j tries again. Returns the new size (unchanged when j could not enter), or -1
    on a numerical failure."""
    for _ in range(size + 2):
        if _append(gram, member, size, chol, j):
            in_corral[j] = True
            return size + 1
        # theta = L'^-1 l: p_j - p_r = sum_q theta_q (p_q - p_r); d = e_j - sum_q theta_q e_q
        # - (1 - sum theta) e_r
        n = size - 1
        for q in range(n - 1, -1, -1):
            s = chol[n, q]
            for t in range(q + 1, n):
                s -= chol[t, q] * work[t]
            work[q] = s / chol[q, q]
        total = 0.0
        bd = offsets[j]
        for q in range(n):
            total += work[q]
            bd -= work[q] * offsets[member[q + 1]]
        d_ref = -(1.0 - total)
        bd += d_ref * offsets[member[0]]
        sign = 1.0 if bd >= 0.0 else -1.0
        if sign < 0.0 and x[j] <= 0.0:
            return size
        # the step: the first weight along sign * d to reach 0 (position -1: j itself)
        step = math.inf
        leaving = -2
        if sign < 0.0:
            step = x[j]
            leaving = -1
        dr = sign * d_ref
        if dr < 0.0 and x[member[0]] / -dr < step:
            step = x[member[0]] / -dr
            leaving = 0
        for q in range(n):
            dq = -sign * work[q]
            if dq < 0.0 and x[member[q + 1]] / -dq < step:
                step = x[member[q + 1]] / -dq
                leaving = q + 1
        if leaving == -2:
            return -1
        x[j] += sign * step
        x[member[0]] += step * dr
        for q in range(n):
            x[member[q + 1]] -= step * sign * work[q]
        if leaving == -1:
            x[j] = 0.0
            return size
        x[member[leaving]] = 0.0
        if x[j] < 0.0:
            x[j] = 0.0
        size = _drop_zeros(gram, x, member, size, chol, in_corral, work)
        if size < 0:
            return -1
        if size == 0:  # j took the mass of the one point it duplicates
            member[0] = j
            in_corral[j] = True
            return 1
    return -1


@njit(cache=True, nogil=True)
def _affine_maximiser(gram, offsets, cost, member, size, chol, y) -> None:
    """y[:size]: the weights of D's maximiser on the corral's affine hull with sum C."""
    r = member[0]
    n = size - 1
    b_r = offsets[r]
    g_rr = gram[r, r]
    for q in range(n):
        j = member[q + 1]
        s = offsets[j] - b_r - cost * (gram[j, r] - g_rr)
        for t in range(q):
            s -= chol[q, t] * y[t + 1]
        y[q + 1] = s / chol[q, q]
    total = 0.0
    for q in range(n - 1, -1, -1):
        s = y[q + 1]
        for t in range(q + 1, n):
            s -= chol[t, q] * y[t + 1]
        y[q + 1] = s / chol[q, q]
        total += y[q + 1]
    y[0] = cost - total


@njit(cache=True, nogil=True)
def _active_set_dual(gram, offsets, x, grad, cost, kkt_tol, gap_rel, max_steps):
    """The reduced dual by the corral active-set method (the comment above) over the points'
    Gram matrix ``gram`` (n, n) and offsets (n,), the origin among them (the slack), from x
    (n,), feasible: x >= 0, sum x = ``cost``. Returns (steps, status): status 1 when the
    measures are met or no entry raises D any more (the rounding floor: at large C the
    gradients' rounding, |G| |x| eps, can exceed the KKT tolerance asked, 0 for svm_perf's
    rule once a cut has no violation), 2 when max_steps stopped it, 0 on a numerical failure
    (x is then feasible and no worse, for SMO to finish). ``grad`` (n,) holds x's gradient
    when status > 0. A step is a minor cycle or an entry."""
    n_points = x.shape[0]
    member = np.zeros(n_points, dtype=np.int64)
    in_corral = np.zeros(n_points, dtype=np.bool_)
    chol = np.empty((n_points, n_points))
    work = np.empty(n_points)
    y = np.empty(n_points)
    member[0] = np.argmax(x)
    in_corral[member[0]] = True
    size = 1
    steps = 0
    last_dual = -math.inf
    next_support = 0  # first x's support enters, a point at a time (D does not decrease)
    while True:
        major = next_support >= n_points
        if not major:
            j = next_support
            next_support += 1
            if x[j] <= 0.0 or in_corral[j]:
                continue
        else:
            # minor cycles: x to the maximiser on the corral's affine hull, or towards it until
            # the first weight reaches 0, which leaves
            while True:
                steps += 1
                _affine_maximiser(gram, offsets, cost, member, size, chol, y)
                step = 1.0
                leaving = -1
                for p in range(size):
                    if y[p] <= 0.0:
                        # (a point that entered at 0 and stays at 0, by rounding: step 0)
                        xp = x[member[p]]
                        ratio = xp / (xp - y[p]) if xp - y[p] > 0.0 else 0.0
                        if leaving < 0 or ratio < step:
                            step = ratio
                            leaving = p
                for p in range(size):
                    j = member[p]
                    x[j] += step * (y[p] - x[j])
                if leaving < 0:
                    break
                x[member[leaving]] = 0.0
                size = _drop_zeros(gram, x, member, size, chol, in_corral, work)
                if size <= 0:
                    return steps, 0
            # the measures of the SMO solver, from the exact gradient (the origin's is 0)
            up = 0
            for j in range(n_points):
                s = offsets[j]
                for p in range(size):
                    s -= gram[j, member[p]] * x[member[p]]
                grad[j] = s
                if s > grad[up]:
                    up = j
            g_up = grad[up]
            g_down = g_up
            gap = 0.0
            ab = 0.0
            ag = 0.0
            for p in range(size):
                j = member[p]
                g_down = min(g_down, grad[j])
                gap += x[j] * (g_up - grad[j])
                ab += x[j] * offsets[j]
                ag += x[j] * grad[j]
            dual = 0.5 * (ab + ag)
            if kkt_tol >= 0.0 and g_up - g_down <= kkt_tol:
                return steps, 1
            if gap_rel >= 0.0 and gap <= gap_rel * abs(dual):
                return steps, 1
            if gap <= QP_GAP_FLOOR * ab or g_up - g_down <= 0.0:
                return steps, 1
            if steps >= max_steps:
                return steps, 2
            if in_corral[up] or not dual > last_dual:
                return steps, 1  # the rounding floor: no entry raises D
            last_dual = dual
            # the point of largest gradient enters (a major cycle)
            steps += 1
            j = up
        size = _enter(gram, offsets, x, member, size, chol, in_corral, work, j)
        if size < 0:
            return steps, 0
        # (a j that could not enter, by rounding, is the largest again: D unchanged, it stops)


def _solve_reduced_dual(gram: np.ndarray, offsets: np.ndarray, alpha: np.ndarray,
                        grad: np.ndarray, m: int, slack: float, kkt_tol: float, gap_rel: float,
                        max_steps: int, smo_steps: int) -> tuple[int, float, int]:  # fmt: skip
    """The reduced dual, to the measures of ``_smo_reduced_dual`` (same arguments): first up
    to ``smo_steps`` SMO steps, then the active-set method from there, exact in a few dozen
    steps where SMO's crawl (large C: nearly parallel cuts), and SMO again should rounding
    stall it. Returns (steps, slack, capped: 1 when max_steps stopped it). Sequenced here, not
    in compiled code: a compiled caller re-optimises its callees, seconds of compilation."""
    steps = 0
    if smo_steps > 0:
        steps, slack, _, capped = _smo_reduced_dual(
            gram, offsets, alpha, grad, m, slack, kkt_tol, gap_rel, min(smo_steps, max_steps)
        )
        if not capped or steps >= max_steps:
            return steps, slack, capped
    # the points: the m cuts and the origin, whose weight is the slack
    points_gram = np.zeros((m + 1, m + 1))
    points_gram[:m, :m] = gram[:m, :m]
    points_offsets = np.zeros(m + 1)
    points_offsets[:m] = offsets[:m]
    x = np.empty(m + 1)
    x[:m] = alpha[:m]
    x[m] = slack
    np.maximum(x, 0.0, out=x)  # (a slack of -1e-11 left by rounding)
    points_grad = np.empty(m + 1)
    more, status = _active_set_dual(points_gram, points_offsets, x, points_grad, float(x.sum()),
                                    kkt_tol, gap_rel, max_steps - steps)  # fmt: skip
    steps += more
    alpha[:m] = x[:m]
    if status > 0:
        grad[:m] = points_grad[:m]
        return steps, float(x[m]), 1 if status == 2 else 0
    more, slack, _, capped = _smo_reduced_dual(gram, offsets, alpha, grad, m, x[m], kkt_tol,
                                               gap_rel, max_steps - steps)  # fmt: skip
    return steps + more, slack, capped

# ----------------------------------------------------------------------------- passes


@njit(cache=True, nogil=True)
def _rebuild_cut(indptr, indices, data, bias, y, member, cut) -> int:
    """cut = sum_{i: member[i]} y_i x_i afresh (cut: (n_w,), member: (l,) bool); returns |S|."""
    for j in range(cut.shape[0]):
        cut[j] = 0.0
    size = 0
    for i in range(y.shape[0]):
        if member[i]:
            size += 1
            row_axpy(indptr, indices, data, bias, i, y[i], cut)
    return size


@njit(cache=True, nogil=True)
def _margin_pass_with_cut(indptr, indices, data, bias, y, w, member, cut):
    """One pass at w: H(w) = sum_i max(0, 1 - z_i), z_i = y_i w'x_i, and the cut at w,
    cut = sum_{i in S} y_i x_i with S = {i: z_i < 1}, updated from the previous cut: only the
    rows that enter or leave S are added or subtracted (member: (l,) bool, S, updated; cut:
    (n_w,)). Returns (H(w), |S|)."""
    hinge = 0.0
    size = 0
    for i in range(y.shape[0]):
        yi = y[i]
        z = yi * row_dot(indptr, indices, data, bias, i, w)
        inside = z < 1.0
        if inside:
            hinge += 1.0 - z
            size += 1
        if inside != member[i]:
            member[i] = inside
            row_axpy(indptr, indices, data, bias, i, yi if inside else -yi, cut)
    return hinge, size


@njit(cache=True, nogil=True)
def _margins(indptr, indices, data, bias, y, w, z) -> None:
    """z_i = y_i w'x_i for every row (z: (l,))."""
    for i in range(y.shape[0]):
        z[i] = y[i] * row_dot(indptr, indices, data, bias, i, w)


@njit(cache=True, nogil=True, inline="always")
def _sift_down(kinks, jumps, root, size) -> None:
    """Restore the min-heap order of kinks[:size] (jumps moved alike) below ``root``."""
    while True:
        child = 2 * root + 1
        if child >= size:
            return
        if child + 1 < size and kinks[child + 1] < kinks[child]:
            child += 1
        if kinks[root] <= kinks[child]:
            return
        kinks[root], kinks[child] = kinks[child], kinks[root]
        jumps[root], jumps[child] = jumps[child], jumps[root]
        root = child


@njit(cache=True, nogil=True)
def _line_search(z_b, z_c, aa, ab, cost, kinks, jumps):
    """argmin_{t >= 0} f(t) = 1/2 ||w_b + t d||^2 + C sum_i max(0, 1 - z_b_i - t v_i), with
    d = w_c - w_b, v_i = z_c_i - z_b_i, aa = d'd, ab = w_b'd; z_b, z_c: (l,) margins at w_b
    and w_c; kinks, jumps: (l,) scratch.

    f'(t) = aa t + ab - C sum_{active at t} v_i grows by C |v_i| at each kink
    t_i = (1 - z_b_i) / v_i > 0. The kinks are visited in increasing order, popped from a
    min-heap (O(l) to build, O(log l) a kink passed), until f' changes sign.
    """
    slope = ab
    n_kinks = 0
    for i in range(z_b.shape[0]):
        u = 1.0 - z_b[i]
        v = z_c[i] - z_b[i]
        if u > 0.0 or (u == 0.0 and v < 0.0):
            slope -= cost * v  # active just right of t = 0
        if v != 0.0:
            t_i = u / v
            if t_i > 0.0:
                kinks[n_kinks] = t_i
                jumps[n_kinks] = cost * abs(v)
                n_kinks += 1
    if slope >= 0.0:
        return 0.0
    for root in range(n_kinks // 2 - 1, -1, -1):
        _sift_down(kinks, jumps, root, n_kinks)
    t = 0.0
    size = n_kinks
    while size > 0:
        t_next = kinks[0]
        slope_next = slope + aa * (t_next - t)
        if slope_next >= 0.0:
            return t - slope / aa
        slope = slope_next + jumps[0]
        t = t_next
        if slope >= 0.0:
            return t
        size -= 1
        kinks[0] = kinks[size]
        jumps[0] = jumps[size]
        _sift_down(kinks, jumps, 0, size)
    if aa > 0.0:
        return t - slope / aa
    return t


@njit(cache=True, nogil=True)
def _ocas_cut_pass(indptr, indices, data, bias, y, z_b, z_c, step, cut_at, member, cut):
    """After the line search: z_b <- z_b + step (z_c - z_b) (margins at the new w_b) and the
    cut at the point t = cut_at of the segment, from margins interpolated on it; rows with
    margin <= 1 (libocas). The cut is updated from the previous one as in
    ``_margin_pass_with_cut`` (member: (l,) bool; cut: (n_w,)). Returns (H(w_b), |S|)."""
    hinge = 0.0
    size = 0
    for i in range(y.shape[0]):
        zb = z_b[i]
        zc = z_c[i]
        inside = zb + cut_at * (zc - zb) <= 1.0
        if inside:
            size += 1
        if inside != member[i]:
            member[i] = inside
            row_axpy(indptr, indices, data, bias, i, y[i] if inside else -y[i], cut)
        z = zb + step * (zc - zb)
        z_b[i] = z
        if z < 1.0:
            hinge += 1.0 - z
    return hinge, size


# ----------------------------------------------------------------------------- working set


@njit(cache=True, nogil=True)
def _compact(cuts, gram, offsets, alpha, grad, last_active, keep, n_keep) -> None:
    """Keep the cuts keep[:n_keep] (ascending) in the first n_keep slots, in place."""
    for a in range(n_keep):
        j = keep[a]
        if j != a:
            for c in range(cuts.shape[1]):
                cuts[a, c] = cuts[j, c]
            offsets[a] = offsets[j]
            alpha[a] = alpha[j]
            grad[a] = grad[j]
            last_active[a] = last_active[j]
        for b in range(n_keep):
            gram[a, b] = gram[j, keep[b]]


@njit(cache=True, nogil=True)
def _drop_inactive(cuts, gram, offsets, alpha, grad, last_active, m, now, limit, keep):
    """Drop the cuts with alpha_j = 0 in the last ``limit`` QP solutions (limit 0: none).
    Returns the new number of cuts."""
    if limit <= 0:
        return m
    n_keep = 0
    for j in range(m):
        if now - last_active[j] < limit:
            keep[n_keep] = j
            n_keep += 1
    if n_keep < m:
        _compact(cuts, gram, offsets, alpha, grad, last_active, keep, n_keep)
    return n_keep


@njit(cache=True, nogil=True)
def _make_room(cuts, gram, offsets, alpha, grad, last_active, m, w_c, now, keep):
    """With the buffer full (m = capacity): drop the cut inactive longest, or aggregate all
    into w_c / s (s = sum alpha, w_c = sum_j alpha_j a_j), offset alpha'b / s, which keeps w
    and the dual value. Returns (cuts left, 1 if aggregated)."""
    oldest = -1
    for j in range(m):
        if alpha[j] == 0.0 and (oldest < 0 or last_active[j] < last_active[oldest]):
            oldest = j
    if oldest >= 0:
        n_keep = 0
        for j in range(m):
            if j != oldest:
                keep[n_keep] = j
                n_keep += 1
        _compact(cuts, gram, offsets, alpha, grad, last_active, keep, n_keep)
        return n_keep, 0
    total = 0.0
    ab = 0.0
    for j in range(m):
        total += alpha[j]
        ab += alpha[j] * offsets[j]
    if total <= 0.0:
        return 0, 1
    for c in range(cuts.shape[1]):
        cuts[0, c] = w_c[c] / total
    offsets[0] = ab / total
    alpha[0] = total
    last_active[0] = now
    gram[0, 0] = sq_norm(cuts[0])
    return 1, 1


# ----------------------------------------------------------------------------- an iteration


@njit(cache=True, nogil=True)
def _dot(a, b) -> float:
    """a'b of two dense vectors by a plain loop (no BLAS threads), in four partial sums: one
    chain of additions waits on each other's latency, four keep the multiplies flowing."""
    n = a.shape[0]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    k = 0
    while k + 4 <= n:
        s0 += a[k] * b[k]
        s1 += a[k + 1] * b[k + 1]
        s2 += a[k + 2] * b[k + 2]
        s3 += a[k + 3] * b[k + 3]
        k += 4
    while k < n:
        s0 += a[k] * b[k]
        k += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True, nogil=True)
def _add_cut(cuts, gram, offsets, alpha, last_active, istate, fstate) -> int:
    """The pending cut (row m = istate[_I_CUTS] of ``cuts``, offset fstate[_F_PENDING_B]) joins
    the working set at alpha 0, with its row and column of G. Returns m + 1, the cuts of this
    iteration's reduced dual."""
    m = istate[_I_CUTS]
    offsets[m] = fstate[_F_PENDING_B]
    alpha[m] = 0.0
    last_active[m] = istate[_I_QP_SOLVES]
    for j in range(m + 1):
        s = _dot(cuts[m], cuts[j])
        gram[m, j] = s
        gram[j, m] = s
    return m + 1


@njit(cache=True, nogil=True)
def _take_solution(cuts, gram, offsets, alpha, grad, last_active, keep, w_c, istate, fstate, m,
                   inactive_limit) -> None:  # fmt: skip
    """After the reduced dual over the first m cuts is solved: w_c = sum_j alpha_j a_j and the
    bound D = alpha'b - 1/2 ||w_c||^2; cuts inactive for ``inactive_limit`` QP solutions are
    dropped, and room is made for the next pending cut.

    Shapes: cuts (capacity, n_w); gram (capacity, capacity); offsets, alpha, grad, last_active,
    keep (capacity,); w_c (n_w,). Updates istate and fstate (``_I_*``, ``_F_*``).
    """
    now = istate[_I_QP_SOLVES] + 1
    istate[_I_QP_SOLVES] = now
    ab = 0.0
    xi = 0.0
    for j in range(m):
        if alpha[j] > 0.0:
            last_active[j] = now
            ab += alpha[j] * offsets[j]
        xi = max(xi, grad[j])
    # w_c a block of columns at a time, the block staying in cache across the cuts
    n_w = w_c.shape[0]
    for lo in range(0, n_w, _BLOCK):
        hi = min(lo + _BLOCK, n_w)
        for c in range(lo, hi):
            w_c[c] = 0.0
        for j in range(m):
            a = alpha[j]
            if a > 0.0:
                for c in range(lo, hi):
                    w_c[c] += a * cuts[j, c]
    ww = sq_norm(w_c)
    fstate[_F_WC_WC] = ww
    fstate[_F_DUAL] = ab - 0.5 * ww
    fstate[_F_BOUND] = max(fstate[_F_BOUND], ab - 0.5 * ww)
    fstate[_F_XI] = xi
    kept = _drop_inactive(cuts, gram, offsets, alpha, grad, last_active, m, now,
                          inactive_limit, keep)  # fmt: skip
    istate[_I_REMOVED] += m - kept
    m = kept
    if m >= cuts.shape[0]:
        m, aggregated = _make_room(cuts, gram, offsets, alpha, grad, last_active, m, w_c, now,
                                   keep)  # fmt: skip
        istate[_I_AGGREGATED] += aggregated
    istate[_I_CUTS] = m


@njit(cache=True, nogil=True)
def _move(w_b, w_c, step) -> float:
    """w_b <- w_b + step (w_c - w_b); returns ||w_b||^2."""
    for j in range(w_b.shape[0]):
        w_b[j] += step * (w_c[j] - w_b[j])
    return sq_norm(w_b)


# ----------------------------------------------------------------------------- validation


def _check_real(name: str, value, minimum: float, *, strict: bool) -> float:
    value = _real_scalar(name, value)
    v = float(value)
    if not math.isfinite(v):
        raise InvalidInputError(f"{name} must be finite, got {value!r}")
    if v < minimum or (strict and v == minimum):
        relation = ">" if strict else ">="
        raise InvalidInputError(f"{name} must be {relation} {minimum}, got {value!r}")
    return v


class _Problem:
    """A sub-problem checked for the cutting-plane solvers: X CSR, y (l,) +1/-1, one cost C,
    the bias, the tolerances, the iteration cap and the working-set options."""

    def __init__(self, sub: Subproblem, hook: Hook | None, method: int):
        X, y, C = check_one_cost_problem(sub, "the cutting-plane solvers")
        n_rows = X.shape[0]
        if not sub.regularize_bias:
            raise InvalidInputError("the cutting-plane solvers regularise the bias (no -R)")
        if sub.feature_map is not None:
            raise InvalidInputError("the cutting-plane solvers take materialised features")
        if hook is not None and not callable(hook):
            raise InvalidInputError("the hook must be callable or None")
        # The cuts are dense over the weights: columns no row uses (hashed features, a wide
        # declared width) are left out of the solve, which sees X with its used columns only,
        # and come back as zero weights (``full_w``). Dense over 2^24 hashed columns, a9a's
        # iterations took 66 s and 1.8 GB where its 123 columns take 0.2 s. (``train`` hands
        # over X so already; this is for the solver called directly.)
        self.n_features = X.shape[1]
        self.used = UsedColumns.of(X)
        if self.used is not None:
            X = self.used.take(X)
        self.X = X
        self.y = y
        self.cost = _check_real("C", C[0], 0.0, strict=True)
        self.bias = _check_real("bias", sub.bias, -math.inf, strict=False)
        self.max_iter = _check_int("max_iter", sub.max_iter, 1)
        name = "eps (svm_perf's -e)" if method == SVMPERF else "eps (TolRel)"
        self.eps = _check_real(name, sub.eps, 0.0, strict=False)
        self.n_rows = n_rows
        self.n_weights = X.shape[1] + (1 if self.bias >= 0 else 0)
        self.c_rows = np.full(n_rows, self.cost)
        self.mu = _check_real("mu", sub.option("mu", DEFAULT_MU), 0.0, strict=True)
        if self.mu > 1.0:
            raise InvalidInputError(f"mu must be <= 1, got {self.mu!r}")
        self.tol_abs = _check_real("tol_abs", sub.option("tol_abs", 0.0), 0.0, strict=False)
        self.tol_rel = _check_real("tol_rel", sub.option("tol_rel", 0.0), 0.0, strict=False)
        if method == SVMPERF and sub.option("tol_abs") is not None:
            raise InvalidInputError("tol_abs applies to -s 36 (ocas) only")
        if method == OCAS and sub.option("tol_rel") is not None:
            raise InvalidInputError("tol_rel applies to -s 35 (svmperf) only (-s ocas: eps)")
        if method == SVMPERF and sub.option("mu") is not None:
            raise InvalidInputError("mu applies to -s 36 (ocas) only")
        self.inactive_limit = _check_int(
            "inactive_limit", sub.option("inactive_limit", DEFAULT_INACTIVE_LIMIT), 0
        )
        qp_tol_rel = sub.option("qp_tol_rel")
        if qp_tol_rel is not None:
            self.qp_tol_rel = _check_real("qp_tol_rel", qp_tol_rel, 0.0, strict=False)
        elif method == SVMPERF and self.tol_rel > 0.0:
            self.qp_tol_rel = 0.5 * self.tol_rel  # with svmocas -m 0's rule, its QP precision
        else:
            self.qp_tol_rel = -1.0  # the original's own rule (module docstring)
        qp_max_steps = _check_int("qp_max_steps", sub.option("qp_max_steps", QP_MAX_STEPS), 1)
        self.qp_max_steps = min(qp_max_steps, 2**62)  # a compiled int64 counter
        max_cuts = _check_int("max_cuts", sub.option("max_cuts", DEFAULT_MAX_CUTS), 2)
        memory = _check_int("cut_memory", sub.option("cut_memory", DEFAULT_CUT_MEMORY), 1)
        self.capacity = max(2, min(max_cuts, memory // (8 * max(self.n_weights, 1))))

    def primal(self, w: np.ndarray) -> float:
        """P(w) of the solve's weights (the used columns, and the bias)."""
        X = self.X
        return float(
            primal_value(X.indptr, X.indices, X.data, self.bias, self.y, self.c_rows, w, LOSS_HINGE)
        )

    def full_w(self, w: np.ndarray) -> np.ndarray:
        """The weights over every feature (and the bias) of the solve's ``w``."""
        return w.copy() if self.used is None else self.used.expand_w(w)

    def own_state(self, saved: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """A checkpoint's state over the solve's weights: one saved over every feature (by a
        run that kept the unused columns) has them taken out."""
        cuts = np.asarray(saved.get("cuts", np.zeros(0)))
        width = self.n_features + (1 if self.bias >= 0 else 0)
        if self.used is None or cuts.ndim != 2 or cuts.shape[1] != width:
            return saved
        own = dict(saved)
        own["cuts"] = self.used.take_w(cuts)
        for name in ("w_c", "w_b", "last_cut"):
            value = np.asarray(saved.get(name, np.zeros(0)))
            if value.shape == (width,):
                own[name] = self.used.take_w(value)
        return own

    def full_primal(self, w: np.ndarray) -> float:
        """P(w) of weights ``w`` over every feature (and the bias): the unused columns'
        weights add only their squares."""
        if self.used is None:
            return self.primal(w)
        own = self.used.take_w(w)
        return self.primal(own) + 0.5 * (float(w @ w) - float(own @ own))


def _restore(arrays: dict[str, np.ndarray], saved: dict[str, np.ndarray], n_weights: int,
             cost: float) -> None:  # fmt: skip
    """Restore a checkpoint: ``cuts`` and ``gram`` come cut to the rows in use (the working
    set and the pending cut), the rest at full size (``restore_state`` checks those); the
    reduced dual's alpha within its simplex, sum alpha + slack = C (``cost``)."""
    istate = np.asarray(saved.get("istate", np.zeros(0)))
    if istate.shape != (_N_ISTATE,) or istate.dtype != np.int64:
        raise InvalidInputError("the state to resume from does not fit this problem: 'istate'")
    capacity = arrays["cuts"].shape[0]
    used = int(istate[_I_CUTS]) + 1
    if not (1 <= used <= capacity):
        raise InvalidInputError("the state to resume from is damaged: 'istate' counts "
                                f"{used - 1} cuts for a buffer of {capacity}")  # fmt: skip
    for name, shape in (("cuts", (used, n_weights)), ("gram", (used, used))):
        value = np.asarray(saved.get(name, np.zeros(0)))
        if value.shape != shape or value.dtype != np.float64:
            raise InvalidInputError(
                f"the state to resume from does not fit this problem: {name!r} is "
                f"{value.dtype}{list(value.shape)}, expected float64{list(shape)}"
            )
        if not np.isfinite(value).all():
            raise InvalidInputError(f"the state to resume from is damaged: {name!r} holds "
                                    "values no solver leaves there")  # fmt: skip
    fixed = {k: v for k, v in arrays.items() if k not in ("cuts", "gram")}
    restore_state(fixed, {k: v for k, v in saved.items() if k not in ("cuts", "gram")})
    arrays["cuts"][:used] = saved["cuts"]
    arrays["gram"][:used, :used] = saved["gram"]
    if np.any(arrays["alpha"] < 0) or arrays["fstate"][_F_SLACK] < 0:
        raise InvalidInputError("the state to resume from is damaged: negative dual variables")
    # (a crafted alpha far outside it made every reduced-dual solve run to its step cap)
    # (the working set's cuts; the slots past them keep stale values)
    mass = float(arrays["alpha"][: used - 1].sum()) + float(arrays["fstate"][_F_SLACK])
    if not abs(mass - cost) <= 1e-6 * cost:
        raise InvalidInputError(f"the state to resume from is damaged: its dual variables sum "
                                f"to {mass:g}, not C = {cost:g}")  # fmt: skip


# ----------------------------------------------------------------------------- solvers


class _CuttingPlaneRun:
    """One cutting-plane run: the checked problem, the working set (the cut buffer, its Gram
    matrix and reduced dual) and the iterates, as the kernels update them in place."""

    def __init__(self, pb: _Problem, method: int, resume: dict[str, np.ndarray] | None) -> None:
        self.pb, self.method = pb, method
        n_rows, n_w, capacity = pb.n_rows, pb.n_weights, pb.capacity
        self.cuts = np.empty((capacity, n_w))  # rows touched as cuts arrive
        self.cuts[0] = 0.0
        self.gram = np.zeros((capacity, capacity))
        self.offsets = np.zeros(capacity)
        self.alpha = np.zeros(capacity)
        self.grad = np.zeros(capacity)
        self.last_active = np.zeros(capacity, dtype=np.int64)
        self.keep = np.zeros(capacity, dtype=np.int64)
        self.w_c = np.zeros(n_w)
        self.w_b = np.zeros(n_w)
        self.z_b = np.zeros(n_rows if method == OCAS else 0)
        self.member = np.ones(n_rows, dtype=np.bool_)  # the rows of the last cut (the first: all)
        self.last_cut = np.zeros(n_w)  # the last cut, kept to update the next one
        self.z_c = np.zeros(n_rows if method == OCAS else 0)
        self.kinks = np.zeros(n_rows if method == OCAS else 0)
        self.jumps = np.zeros(n_rows if method == OCAS else 0)
        self.istate = np.zeros(_N_ISTATE, dtype=np.int64)
        self.fstate = np.full(_N_FSTATE, np.nan)
        self.arrays = {
            "cuts": self.cuts, "gram": self.gram, "offsets": self.offsets, "alpha": self.alpha,
            "grad": self.grad, "last_active": self.last_active, "w_c": self.w_c,
            "w_b": self.w_b, "z_b": self.z_b, "member": self.member, "last_cut": self.last_cut,
            "istate": self.istate, "fstate": self.fstate,
        }  # fmt: skip
        if resume is not None:
            _restore(self.arrays, pb.own_state(resume), n_w, pb.cost)
        # the stall watch (not part of a checkpoint: a resumed run watches afresh)
        self.progress_at = (-math.inf, math.inf)  # (bound, best primal) at the last gain
        self.flat_iterations = 0
        self.stalled = False

    def start(self) -> None:
        """The first cut, at w = 0, where every margin is 0: all rows."""
        pb, X, istate, fstate = self.pb, self.pb.X, self.istate, self.fstate
        size = _rebuild_cut(X.indptr, X.indices, X.data, pb.bias, pb.y, self.member,
                            self.last_cut)  # fmt: skip
        self.cuts[0] = self.last_cut
        istate[_I_STARTED] = 1
        istate[_I_PENDING_SIZE] = size
        fstate[[_F_PENDING_B, _F_MIN_VIOLATION]] = size  # svm_perf starts at 100 %, i.e. l
        fstate[[_F_PRIMAL, _F_BEST_PRIMAL]] = pb.cost * size
        fstate[[_F_BOUND, _F_XI, _F_WW]] = 0.0
        fstate[_F_SLACK] = pb.cost

    def qp_tolerances(self) -> tuple[float, float]:
        """(KKT tolerance, relative gap) of the reduced dual's solve (-1: not that rule)."""
        if self.pb.qp_tol_rel >= 0.0:
            return -1.0, self.pb.qp_tol_rel
        if self.method == SVMPERF:
            return 0.5 * self.fstate[_F_MIN_VIOLATION], -1.0
        return -1.0, 0.5 * self.pb.eps

    def smo_steps(self, m: int) -> int:
        """SMO steps before the active-set method takes over a solve over m cuts."""
        return 0 if self.method == OCAS else SVMPERF_SMO_SWEEPS * (m + 1)

    def iterate(self) -> None:
        """One iteration: add the pending cut and solve, then the pass(es) at w_c."""
        pb, X, istate, fstate = self.pb, self.pb.X, self.istate, self.fstate
        kkt_tol, gap_rel = self.qp_tolerances()
        m = _add_cut(self.cuts, self.gram, self.offsets, self.alpha, self.last_active, istate,
                     fstate)  # fmt: skip
        steps, slack, capped = _solve_reduced_dual(
            self.gram, self.offsets, self.alpha, self.grad, m, float(fstate[_F_SLACK]), kkt_tol,
            gap_rel, pb.qp_max_steps, self.smo_steps(m)
        )
        fstate[_F_SLACK] = slack
        istate[_I_QP_STEPS] += steps
        istate[_I_QP_CAPPED] += capped
        _take_solution(self.cuts, self.gram, self.offsets, self.alpha, self.grad,
                       self.last_active, self.keep, self.w_c, istate, fstate, m,
                       pb.inactive_limit)  # fmt: skip
        istate[_I_ITER] += 1
        m = int(istate[_I_CUTS])
        if self.method == SVMPERF:
            primal, measure, done, size = self.svmperf_pass(not capped, kkt_tol)
        else:
            primal, measure, done, size = self.ocas_pass()
        if istate[_I_ITER] % CUT_REFRESH == 0:
            # rounding in the updates stays bounded: the cut afresh now and then
            _rebuild_cut(X.indptr, X.indices, X.data, pb.bias, pb.y, self.member, self.last_cut)
        self.cuts[m] = self.last_cut
        fstate[_F_PRIMAL] = primal
        fstate[_F_PENDING_B] = float(size)
        istate[_I_PENDING_SIZE] = size
        fstate[_F_MEASURE] = measure
        if done:
            istate[_I_CONVERGED] = 1
        else:
            self.watch_for_stall()

    def watch_for_stall(self) -> None:
        """Count the iterations in a row that improved neither the lower bound nor the best
        primal value; ``STALL_ITERATIONS`` of them: stalled."""
        now = (float(self.fstate[_F_BOUND]), float(self.fstate[_F_BEST_PRIMAL]))
        if now[0] > self.progress_at[0] or now[1] < self.progress_at[1]:
            self.progress_at, self.flat_iterations = now, 0
            return
        self.flat_iterations += 1
        self.stalled = self.flat_iterations >= STALL_ITERATIONS

    def svmperf_pass(self, qp_solved: bool = True,
                     kkt_tol: float = -1.0) -> tuple[float, float, bool, int]:  # fmt: skip
        """H(w_c), P(w_c) and the next cut in one pass; w_b kept as the point of least P.
        Returns (P(w_c), the slack violation in svm_perf's units, whether to stop, the next
        cut's rows). The violation's rule bounds P - P* only at a reduced dual solved to
        the rule's own precision: not after a solve stopped at ``QP_MAX_STEPS`` (large C),
        where only the certified gap may stop, nor after one solved to a KKT tolerance
        ``kkt_tol`` above half the rule's eps (module docstring)."""
        pb, X, fstate = self.pb, self.pb.X, self.fstate
        ww, bound = float(fstate[_F_WC_WC]), float(fstate[_F_BOUND])
        hinge, size = _margin_pass_with_cut(X.indptr, X.indices, X.data, pb.bias, pb.y, self.w_c,
                                            self.member, self.last_cut)  # fmt: skip
        primal = 0.5 * ww + pb.cost * hinge
        if primal < fstate[_F_BEST_PRIMAL]:
            fstate[_F_BEST_PRIMAL] = primal
            self.w_b[:] = self.w_c
        violation = max(0.0, hinge - float(fstate[_F_XI]))  # svm_perf's ceps, in sums
        fstate[_F_MIN_VIOLATION] = min(fstate[_F_MIN_VIOLATION], violation)
        measure = 100.0 * violation / pb.n_rows
        precise = kkt_tol <= 0.5 * pb.eps * pb.n_rows / 100.0  # (< 0: qp_tol_rel's rule)
        # What the rule promises, checked: a reduced dual that rounding corrupted (features
        # of 1e6 or more, squared past 1e12 in the Gram matrix) gave an xi above every cut's
        # offset, no violation, and a stop at P = C l with the bound near 0
        certified = primal - bound <= 1.5 * pb.cost * pb.n_rows * pb.eps / 100.0
        done = (qp_solved and precise and certified and pb.eps > 0.0 and measure <= pb.eps) or (
            pb.tol_rel > 0.0 and primal - bound <= pb.tol_rel * abs(primal)
        )
        return primal, measure, done, size

    def ocas_pass(self) -> tuple[float, float, bool, int]:
        """The margins at w_c, the exact line search from w_b towards w_c (w_b moves there),
        then the next cut. Returns (P(w_b), its relative gap, whether to stop, the next cut's
        rows)."""
        pb, X, fstate = self.pb, self.pb.X, self.fstate
        w_b, w_c, z_b, z_c = self.w_b, self.w_c, self.z_b, self.z_c
        ww, bound = float(fstate[_F_WC_WC]), float(fstate[_F_BOUND])
        _margins(X.indptr, X.indices, X.data, pb.bias, pb.y, w_c, z_c)
        wb_wc, wb_wb = _dot(w_b, w_c), float(fstate[_F_WW])
        step = max(0.0, _line_search(z_b, z_c, ww - 2.0 * wb_wc + wb_wb, wb_wc - wb_wb,
                                     pb.cost, self.kinks, self.jumps))  # fmt: skip
        hinge, size = _ocas_cut_pass(X.indptr, X.indices, X.data, pb.bias, pb.y, z_b, z_c, step,
                                     step + pb.mu * (1.0 - step), self.member,
                                     self.last_cut)  # fmt: skip
        wb_wb = _move(w_b, w_c, step)
        fstate[_F_WW] = wb_wb
        fstate[_F_STEP] = step
        primal = 0.5 * wb_wb + pb.cost * hinge
        fstate[_F_BEST_PRIMAL] = primal
        measure = (primal - bound) / abs(primal) if primal != 0.0 else 0.0
        done = primal - bound <= pb.eps * abs(primal) or primal - bound <= pb.tol_abs
        return primal, measure, done, size

    def advance(self, n_iterations: int) -> None:
        # the kernels run in compiled code between these calls; Python only sequences them
        # (tens of microseconds an iteration, against the passes over the data)
        if not self.istate[_I_STARTED]:
            self.start()
        for _ in range(n_iterations):
            if self.istate[_I_CONVERGED] or self.stalled:
                return
            self.iterate()

    def status(self) -> tuple[int, bool]:
        return int(self.istate[_I_ITER]), bool(self.istate[_I_CONVERGED]) or self.stalled

    def state(self) -> dict[str, np.ndarray]:
        used = int(self.istate[_I_CUTS]) + 1
        live = {k: v for k, v in self.arrays.items() if k not in ("cuts", "gram")}
        return copy_state(cuts=self.cuts[:used], gram=self.gram[:used, :used], **live)

    def figures(self) -> dict:
        istate, fstate = self.istate, self.fstate
        return {
            "n_cuts": int(istate[_I_CUTS]),
            "qp_iterations": int(istate[_I_QP_STEPS]),
            "qp_capped": int(istate[_I_QP_CAPPED]),
            "lower_bound": float(fstate[_F_BOUND]),
            "primal": float(fstate[_F_PRIMAL]),  # P at this iteration's point (OCAS: w_b)
            "best_primal": float(fstate[_F_BEST_PRIMAL]),
            "dual": float(fstate[_F_DUAL]),  # this iteration's reduced dual value
            "slack": float(fstate[_F_XI]),  # the working set's xi, sum over rows
            "removed_cuts": int(istate[_I_REMOVED]),
            "aggregations": int(istate[_I_AGGREGATED]),
            **({"step": float(fstate[_F_STEP])} if self.method == OCAS else {}),
        }

    def live(self) -> tuple[np.ndarray, float, dict]:
        # a copy: w_b is the kernel's state, which a hook must not change
        return self.pb.full_w(self.w_b), float(self.fstate[_F_MEASURE]), self.figures()

    def objectives(self, at: np.ndarray) -> tuple[float, float]:
        return self.pb.full_primal(at), float(self.fstate[_F_BOUND])

    def result(self) -> dict:
        w = self.pb.full_w(self.w_b)
        primal = self.pb.primal(self.w_b)
        started = self.istate[_I_ITER] > 0
        bound = float(self.fstate[_F_BOUND]) if started else 0.0
        fig = self.figures()
        fig["stop_measure"] = float(self.fstate[_F_MEASURE]) if started else math.nan
        # (the relative gap; >= 0, rounding aside, where the bound certifies P(w) itself)
        fig["stop_ratio"] = max(primal - bound, 0.0) / primal if primal > 0 else 0.0
        return {"w": w, "primal": primal, "dual": bound, "gap": primal - bound, "figures": fig}


def _solve(sub: Subproblem, hook: Hook | None, method: int, solver: int) -> Solution:
    pb = _Problem(sub, hook, method)
    run = _CuttingPlaneRun(pb, method, sub.resume)
    return run_primal(
        sub, hook, solver, pb.max_iter, run.advance, status=run.status, live=run.live,
        state=run.state, objectives=run.objectives, result=run.result,
        stalled=lambda: run.stalled,
    )  # fmt: skip


def solve_svmperf(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Minimise the L1-loss SVM primal by SVMperf's 1-slack cutting plane (-s 35).

    ``sub``: X CSR (l, n); y (l,) of +1/-1; C (l,), one cost for every row; bias >= 0 adds
    that feature (w then has n + 1 entries); eps: svm_perf's -e, stop when
    100/l (H(w) - xi) <= eps (default 0.1); max_iter: QP solves. Options: ``tol_rel`` (also
    stop when P(w) - bound <= tol_rel P(w), at the last iterate: svmocas -m 0's rule; default
    0, off), ``inactive_limit``, ``max_cuts``, ``cut_memory`` (module docstring). No warm
    start, no weights.

    Returns a Solution with w the iterate of least P, primal P(w), dual the certified lower
    bound, gap = primal - dual; figures n_cuts, qp_iterations, lower_bound, stop_measure.
    Raises InvalidInputError on bad input.
    """
    return _solve(sub, hook, SVMPERF, 35)


def solve_ocas(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """Minimise the L1-loss SVM primal by OCAS (-s 36).

    ``sub`` as for ``solve_svmperf``, but eps is TolRel: stop when P(w_b) - bound <= eps
    |P(w_b)| (default 0.01); options ``tol_abs`` (TolAbs, default 0), ``mu`` (the cut's
    position, default 0.1), ``inactive_limit``, ``max_cuts``, ``cut_memory``. Returns w = w_b,
    the best point, with the figures of ``solve_svmperf`` and ``step`` (the last line search's
    t*).
    """
    return _solve(sub, hook, OCAS, 36)


__all__ = [
    "solve_svmperf",
    "solve_ocas",
    "DEFAULT_SVMPERF_EPS",
    "DEFAULT_OCAS_TOL_REL",
    "DEFAULT_MU",
    "DEFAULT_INACTIVE_LIMIT",
    "DEFAULT_MAX_CUTS",
    "DEFAULT_CUT_MEMORY",
]
