"""Dual coordinate descent on an NVIDIA GPU (``device="cuda"``): the L1- and L2-loss SVM
(-s 3, -s 1) and the L1- and L2-loss SVR (-s 13, -s 12).

The same problems, coordinate steps, stopping rules and results as ``dcd.py`` and ``svr.py``
(the SVM dual of docs/architecture.md with LIBLINEAR's projected-gradient rule on all of alpha;
the SVR dual with LIBLINEAR's rule on the violations' 1-norm against the first epoch's; w =
sum_i y_i alpha_i x_i, or sum_i beta_i x_i, recomputed in float64 at the end and the duality
gap from it, ``linsvm.objective``), with the coordinate steps run by the GPU in the manner
of Snap ML's TPA-SCD (Parnell, Dünner, Atasu, Sifalakis, Pozidis, 2017): many rows in flight
at once, a group of threads per row reading its non-zeros side by side, and w updated with
atomic adds. Unlike Snap ML, w and the dual variables stay float64 (the
GPU's float64 atomic add), so accuracy is not capped near 3e-5 by float32 sums; the rows are
copied to the GPU once per training run (one-vs-rest's sub-problems share them), their values
as float32 (``DEVICE_DATA_DTYPE``).

One epoch is one kernel launch (``_dcd_cuda_kernels.dcd_epoch``) over a permutation of the
rows drawn for that epoch from the seed (computed on the fly, never stored), then one small
launch reducing the blocks' figures (the rule's measures and counts), and one copy of them to
the host: one host synchronisation per epoch. The kernel's step is the CPU solver's own
(``dcd.svm_coordinate``, ``svr.svr_coordinate``); what differs between the problems on the
host (records, rule, thresholds, values) is a small object, ``_SvmDual`` or ``_SvrDual``.
Between epochs the host applies the CPU solver's rule: for the SVM as ``dcd.end_iteration``
(shrinking thresholds from the previous epoch's PG extremes; when max PG - min PG <= eps with
both within eps of zero on the active rows, the shrunk rows are made active again and the rule
must hold once more on every row), for the SVR as ``svr.dcd_svr_kernel`` (the largest
violation as the threshold, the 1-norm <= eps times the first epoch's, the same re-check; a
warm start runs the cold start's first epoch for that reference and discards it). Shrinking
marks rows in a per-row flag instead of compacting a list: a shrunk row costs one read of its
flag. Ctrl-C, hooks and checkpoints act between epochs (``_base.drive``); a hook's ``w`` and
``alpha`` are copied from the GPU only if it reads them; a checkpoint holds the records
(alpha among them), the running w, the flags and the rule's state, so a resumed run continues
from them.

Convergence with rows in flight. A row's step reads w while the rows processed at the same
time have not yet added their changes: the read misses at most R - 1 updates, R = the rows in
flight (``gridDim.x * rows per block``; a GPU runs at most as many blocks at once as fit its
multiprocessors, so fewer when R is large). This is asynchronous coordinate descent with
bounded delay (Liu and Wright, 2015), and no fixed R is safe for all data: rows share their
frequent words, and each of R rows that misses the others' changes pushes those weights as if
alone. Measured by ``benchmarks/bench_staleness.py`` (the same arithmetic on one thread, C = 1):
on pypi-recent reads missing 256 updates keep the serial epochs while missing 1024 -s 1
diverges and -s 3 stalls; on reuters (denser) -s 3 already stalls at 64.

The safeguard. After every epoch a small launch sums the dual objective f(alpha) = 1/2 w'w -
sum_i alpha_i + 1/2 sum_i D_ii alpha_i^2 (D_ii = 1/(2 C_i) for -s 1, 0 for -s 3; the form DCD
decreases), for the SVR f(beta) = 1/2 w'w - sum_i y_i beta_i + p sum_i |beta_i| + 1/2 sum_i
lambda_i beta_i^2 (lambda_i = 1/(2 C_i) for -s 12, 0 for -s 13), from the running w and the
dual variables on the GPU, returned with the epoch's four figures in
the one copy to the host. The state of the last accepted epoch (alpha, the shrink flags, w) is
kept on the GPU; an epoch that raised f by more than rounding (``F_RISE_RTOL`` |f|) is undone
from that copy (device to device) and run again, same order, with R halved: fewer blocks, down
to one, then fewer rows per block, down to one row. Each accepted epoch decreases f; R can be
halved only log2(R) times; at R = 1 the epoch is serial coordinate descent, which cannot
increase f (so it is always accepted, and the iterations of LIBLINEAR's DCD follow). So a run
either keeps an R whose epochs all decrease f or ends at serial CD, on any data (a decrease
each epoch alone does not prove that f reaches its minimum at R > 1, but f never rises, so no
run diverges); the stopping rule is unchanged (a rejected epoch is not an iteration: its
projected gradients are discarded), and the final w and duality gap are computed afresh from
alpha on the host, so whatever the staleness did, the reported gap is the honest distance to
the optimum. The default R, ``DEFAULT_ROWS_IN_FLIGHT``, is large (about one block per
multiprocessor of a large GPU) because the data halve it when they need to; ``rows_in_flight``
sets the start and ``monotone=False`` turns the safeguard off (then nothing is kept and an
epoch is never undone). Every update is exact (atomic adds lose nothing), so the running w
stays sum_i y_i alpha_i x_i up to the rounding of the adds.

Hot views (option ``hot_views``; off by default until measured on a GPU). What limits the
rows in flight is the hot features' staleness: a weight that most rows share (the bias, a
frequent word) gets a push from every row in flight, each computed as if alone. With
``hot_views`` each block keeps the hot weights (``dcd_async.hot_features``: in at least 1% of
the rows, 64 at most, and the bias) in shared memory; the block's first thread steps the
block's rows of a round one after another, each row's w'x_i corrected by the hot changes of
the rows before it, and adds the hot changes to the view, while the row's threads add the
rest to w as before; every ``flush_rounds`` rounds (``DEFAULT_FLUSH_ROUNDS``) the block adds
its view's changes to w atomically and reads it back, as the CPU's async threads do with
theirs. A block's rows then meet the hot weights as serial coordinate descent does, and fewer
readers (the blocks in flight, not the rows) push them as if alone; the safeguard stays. Yet a
view misses the other blocks' changes of up to (blocks in flight - 1) x rows a block x
``flush_rounds`` rows, no fewer than a row without views misses, and in the CPU's lockstep
simulator (``dcd_async``) the rows missed decide, not the readers: on pypi-recent -s 1, reads
of the hot weights missing about 1000 rows undid outer iterations whether 16 threads flushed
every 64 rows, 64 every 16 or 128 every 8, and missing 112-127 rows kept the serial ones
with 8 readers or 128. So the views may not let more rows be in flight than the plain
kernel; only a GPU can say (``benchmarks/bench_gpu.py`` reports both). The rows' feature
numbers are copied to the GPU a second time with the hot ones renumbered past the weights (4
bytes a non-zero).

The hot block (option ``hot_block``, the L2 losses -s 1 and -s 12, whose primals are smooth;
off by default, ``HOT_BLOCK``, until measured on a GPU). The features most rows share leave
the dual: their weights u (and the bias's) are a primal block that stays fixed while the rows
step, so no read of them is stale, and the rows change only the other weights. ``hot_steps``
times an epoch (after that share of its order) the block is set by one Newton step on the
primal with the other weights fixed, 1/2 u'u + sum_i C_i max(0, 1 - y_i (c_i + u'x_iB))^2
(c_i: the row's margin on the other weights; the SVR: max(0, |c_i + u'x_iB - y_i| - p)^2):
conjugate gradients on (I + X_B' D X_B) s = -g, D_ii = 2 C_i where the row's loss is
positive, at most ``HOT_BLOCK_CG`` products (each a sweep of the block's rows, then
of its columns: X_B is copied by rows and by columns), and a backtracking line search whose
trial steps are summed in one launch. A row's step is the exact one of the dual with the
block fixed (its curvature over its other features: with the whole |x_i|^2 the rows lag a
block that holds most of a row, such as a bias). The fixed point of the alternation is the
optimum (there u = sum_i y_i alpha_i x_iB). Chosen by the rows in flight R (``hot_block=True``:
the features in at least ``HOT_BLOCK_ROWS_SHARED`` / R of a sample of the rows, so that a
read of any other weight misses only a few changes of it; R starts at
``HOT_BLOCK_ROWS_IN_FLIGHT``) or by number (``hot_block=k``). What it is for, modelled on one
thread by ``benchmarks/bench_staleness.py`` (reads of w missing tau steps): on pypi-recent
-s 1 the plain kernel's reads diverge at tau 1024, while with the features in 3/tau of the
rows in the block (2048 at tau 4096, 8192 at tau 16384) they take the serial epochs or fewer
to 1e-2 and 1e-3 (5 / 7 and 4 / 8 against 6 / 8), at 28 sweeps of the block's non-zeros an
epoch (four Newton steps of at most five products). The safeguard stays, on the dual of the
problem with the block fixed (``dual_objective_partials`` with the block's margins), part by
part. The stopping rule is the CPU solver's on alpha (the block fixed) and, for the block,
its gradient within ``eps`` times its gradient at w = 0 (TRON's rule). The result's w is
sum_i y_i alpha_i x_i (SVR: sum_i beta_i x_i) off the block and u on it; the gap P(w) +
f(alpha) is >= 0 by weak duality. A warm start of the SVR (which first runs the cold start's
first epoch for its rule's reference) moves the warm w's block part to u again.

Not here: -s 7 (dual logistic regression). Its coordinate step is an inner Newton solve (up
to 101 steps, each with logarithms) run by one thread while the rest of its row's threads
wait, on a pair of variables per row (alpha_i and C_i - alpha_i, a five-column record the
kept copy would have to carry), and its inner tolerance shrinks by the count of those Newton
steps across an epoch (another figure and state): a kernel of its own, not a step in this one.

Reproducibility: the order of a run is fixed by the seed, but the order in which atomic adds
land on w is not, so two runs differ in the last bits and, through them, slightly in the path;
both stop by the same rule, and their optima agree to the tolerance, not bit for bit. Under
numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``: the tests without a GPU) blocks run one
after another, so only the rows of one block are in flight together: as on a GPU, they read w
before the block's adds, and the reads of a block's next rows may see part of those adds (no
barrier waits for them), so runs under the simulator differ too, not only in the last bits.
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
from numba import njit

from ..data import is_integer
from ..errors import InvalidInputError
from ..features._rows import row_scratch
from ..objective import (
    LOSS_HINGE,
    LOSS_SQUARED_HINGE,
    SVR_LOSS_L1,
    SVR_LOSS_L2,
    svm_objectives_maintained,
    svr_objectives_maintained,
    weights_from_dual,
)
from ..parallel import cast_rows, for_chunks, usable_cores, work_chunks
from ..partitioned import stopping_measure
from . import _base, _dual, svr
from ._base import Hook, Progress, Solution, Subproblem, check_eps
from ._cuda_compat import prepare_numba_cuda, prepare_simulator
from ._dual import I_ACTIVE, I_CONVERGED, I_ITER
from .dcd import _F_PGMAX_NEW, _F_PGMAX_OLD, _F_PGMIN_NEW, _F_PGMIN_OLD, prepare_records
from .svr import _F_GMAX_NEW, _F_GMAX_OLD, _F_GNORM1_INIT, _F_GNORM1_NEW

# The integer state: _dual's (I_ACTIVE, I_ITER, I_CONVERGED), then the rows shrunk now; the
# SVR dual's, then whether its stopping rule's reference was given by a warm start's cold run.
I_SHRUNK = 3
I_REF_GIVEN = 4

# The rows' values on the GPU; w, alpha and every sum are float64 whatever this is.
DEVICE_DATA_DTYPE = np.float32
# Threads a block runs (rows per block x threads per row), and the rows in flight at the
# start by default: about one block per multiprocessor of a large GPU (an H100 has 132, at 32
# rows a block), halved by the safeguard as the data require (the module's docstring).
BLOCK_THREADS = 128
DEFAULT_ROWS_IN_FLIGHT = 4096
# An epoch that raises the dual objective by more than this times |f| is undone (rounding:
# f is summed in float64 from the running w, whose atomic adds round in no fixed order).
F_RISE_RTOL = 1e-12
# Blocks of the launches over all rows and weights (the objective, the kept copy): at most.
STATE_BLOCKS = 1024
# The launch's state in a checkpoint: blocks, rows per block, halvings so far.
L_BLOCKS, L_ROWS_PER_BLOCK, L_HALVINGS = 0, 1, 2
# Under the simulator blocks are Python threads run one block after another: a small launch.
SIMULATOR_PLAN = (2, 2, 2)  # threads per row, rows per block, blocks
# Hot views (option ``hot_views``; the module's docstring): the hot features at most (as the
# CPU's async scheme picks them: ``dcd_async.hot_features``), and the rounds of a block
# between two flushes of its view by default.
GPU_MAX_HOT = 64
DEFAULT_FLUSH_ROUNDS = 2
# The default of option ``hot_views`` (off until measured on a GPU against the plain kernel:
# ``benchmarks/bench_gpu.py`` runs both).
HOT_VIEWS = False
# The hot block (option ``hot_block``, -s 1 and -s 12; the module's docstring): its default
# (off until measured on a GPU: ``benchmarks/bench_gpu.py`` runs it), the rows in flight it
# starts from unless ``rows_in_flight`` says, its features when chosen by the rows in flight
# (those in at least HOT_BLOCK_ROWS_SHARED / R of the rows, at most HOT_BLOCK_MAX), its
# Newton steps an epoch by default (option ``hot_steps``), each step's conjugate-gradient
# iterations at most and their relative tolerance (TRON's), and the line search's trial
# steps (halving from 1).
HOT_BLOCK = False
HOT_BLOCK_ROWS_IN_FLIGHT = 16384
HOT_BLOCK_ROWS_SHARED = 3.0
HOT_BLOCK_MAX = 16384
DEFAULT_HOT_STEPS = 4
HOT_BLOCK_CG = 5
HOT_BLOCK_CG_RTOL = 0.1
HOT_BLOCK_TRIALS = 8

INSTALL_HINT = "pip install 'linsvm[cuda]'"


def cuda_module():
    """``numba.cuda`` from numba-cuda, checked to see a GPU (or to be numba-cuda's simulator);
    a one-line error naming what is missing otherwise."""
    if importlib.util.find_spec("numba_cuda") is None:
        raise InvalidInputError(f"device='cuda' needs the numba-cuda package: {INSTALL_HINT}")
    prepare_numba_cuda()
    try:
        from numba import cuda
    except ImportError as error:  # e.g. its CUDA bindings
        first = _first_line(error) or type(error).__name__
        raise InvalidInputError(
            f"device='cuda': numba-cuda cannot be imported ({first}): {INSTALL_HINT}"
        ) from None
    if not _is_numba_cuda(cuda):
        # numba-cuda takes over the name numba.cuda from a .pth file, which Python reads
        # only in site-packages (not on PYTHONPATH, nor from pip install --target)
        raise InvalidInputError(
            "device='cuda': numba.cuda is numba's own CUDA target, not numba-cuda's (numba-cuda "
            "must be installed in site-packages, where its .pth file redirects numba.cuda): "
            f"{INSTALL_HINT}"
        )
    try:
        available = cuda.is_available()
    except Exception:  # a broken driver install reports itself in many ways
        available = False
    if not available:
        why = driver_problem()
        raise InvalidInputError(
            "device='cuda' needs an NVIDIA GPU and its driver: numba-cuda finds none "
            f"({why + '; ' if why else ''}nvidia-smi should list the GPU)"
        )
    if simulated(cuda):
        prepare_simulator()
    else:
        missing = compiler_missing()
        if missing is not None:
            raise InvalidInputError(
                f"device='cuda': numba-cuda cannot compile for the GPU ({missing}): install "
                f"the CUDA compiler libraries matching the driver, {COMPILER_HINT}"
            )
    return cuda


def driver_problem() -> str | None:
    """Why numba-cuda's driver did not start, in one line (no driver library, one too old
    for its CUDA bindings, no device), or None when it gives no reason."""
    try:
        from numba.cuda.cudadrv.driver import driver
    except ImportError:
        return None
    reason = _first_line(getattr(driver, "initialization_error", None) or "")
    return reason.rstrip(".")[:200] or None


COMPILER_HINT = "pip install 'numba-cuda[cu13]' (or [cu12]), or a CUDA toolkit"


def compiler_missing() -> str | None:
    """What keeps numba-cuda from compiling a kernel (its NVRTC or NVVM library not found),
    in one line, or None. Asked before the first launch, where numba-cuda would otherwise
    raise from deep inside; skipped (None) if numba-cuda's modules have moved."""
    try:
        from numba.cuda.cudadrv import nvrtc, nvvm
    except ImportError:
        return None
    for name, load in (("NVRTC", getattr(nvrtc, "get_supported_ccs", None)),
                       ("NVVM", getattr(nvvm, "NVVM", None))):  # fmt: skip
        if load is None:
            continue
        try:
            load()
        except Exception as error:  # (DynamicLibNotFoundError, NvvmSupportError, ...)
            return f"{name}: {_first_line(error) or type(error).__name__}"[:300]
    return None


def _first_line(message) -> str:
    """The first non-blank line of an error or message, stripped ("" if none)."""
    return next((line.strip() for line in str(message).splitlines() if line.strip()), "")


def _is_numba_cuda(cuda) -> bool:
    """Whether the module ``cuda`` (numba.cuda) lies in the numba_cuda package."""
    spec = importlib.util.find_spec("numba_cuda")
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    where = os.path.realpath(getattr(cuda, "__file__", None) or "")
    return any(where.startswith(os.path.realpath(place) + os.sep) for place in places)


def check_available() -> None:
    """Raise the one-line error of ``cuda_module`` when no GPU solve is possible."""
    cuda_module()


def simulated(cuda) -> bool:
    """Whether ``cuda`` is numba-cuda's simulator rather than a GPU."""
    from numba.cuda.core import config

    return bool(config.ENABLE_CUDASIM)


# ------------------------------------------------------------------------ the rows on the GPU


def _index_dtype(n: int) -> type:
    return np.int32 if n < 2**31 else np.int64


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.1f} MiB"


def rows_nbytes(X) -> int:
    """Bytes of X's rows on the GPU: offsets, int32 feature indices, float32 values."""
    nnz = int(X.indptr[-1])
    offsets = (X.shape[0] + 1) * np.dtype(_index_dtype(nnz)).itemsize
    return offsets + nnz * (np.dtype(np.int32).itemsize + np.dtype(DEVICE_DATA_DTYPE).itemsize)


def state_nbytes(n_rows: int, n_weights: int, n_partials: int, monotone: bool = True) -> int:
    """Bytes of one solve's state on the GPU: records (alpha among them), flags, w, figures;
    with the safeguard (``monotone``) the kept copies of alpha, the flags and w."""
    kept = n_rows * (8 + 1) + n_weights * 8 if monotone else 0
    return n_rows * (4 * 8 + 1) + n_weights * 8 + (n_partials + 1) * 5 * 8 + kept


class DeviceRows:
    """X's CSR rows on the GPU (offsets, int32 indices, float32 values), copied on first use
    after a check that they and a solve's state fit the GPU's free memory; with hot views, a
    second copy of the indices with the hot features renumbered (``hot_indices``)."""

    def __init__(self, X) -> None:
        self.X = X
        self.arrays: tuple | None = None
        self.hot: tuple[bytes, object] | None = None  # (the hot features' key, indices)
        # the hot block's rows and columns: (its key, the host's, the GPU's or None)
        self.block: tuple[bytes, tuple, tuple | None] | None = None

    def block_rows(self, features: np.ndarray, bias: float) -> tuple:
        """``block_rows``' (rows, columns, squares) of X for this block, built once for the
        solves that share this holder (one-vs-rest's sub-problems)."""
        key = features.tobytes() + np.float64(bias).tobytes()
        if self.block is None or self.block[0] != key:
            self.block = (key, block_rows(self.X, features, bias, host_threads()), None)
        return self.block[1]

    def block_on_device(self, cuda) -> tuple[tuple, tuple]:
        """The block's (rows, columns) on the GPU, (indptr, indices, data) each, copied on
        first use (after ``block_rows``)."""
        key, host, device = self.block
        if device is None:
            device = tuple(tuple(cuda.to_device(a) for a in (
                m.indptr.astype(np.int64), m.indices.astype(np.int32), m.data))
                for m in host[:2])  # fmt: skip
            self.block = (key, host, device)
        return device

    def get(self, cuda, state_bytes: int, state_sizes: str, hot: np.ndarray | None = None,
            in_blocks: bool = False):  # fmt: skip
        """(indptr, indices, data) on the GPU; a one-line error, before any copy, when the
        rows (if not there yet) and ``state_bytes`` more do not fit its free memory (which
        suggests block training if ``in_blocks``: the solver has it). With ``hot`` (feature
        numbers, ascending), the indices are ``hot_indices``'."""
        X = self.X
        need = state_bytes + (0 if self.arrays is not None else rows_nbytes(X))
        key = None if hot is None else hot.tobytes()
        if key is not None and (self.hot is None or self.hot[0] != key):
            need += int(X.indptr[-1]) * np.dtype(np.int32).itemsize
        free, total = free_memory(cuda)
        if need > free:
            rows = "" if self.arrays is not None else f"CSR rows {_mib(rows_nbytes(X))}, "
            blocks = ", in blocks if need be (memory=..., --memory)" if in_blocks else ""
            raise InvalidInputError(
                f"the data do not fit the GPU's free memory: {_mib(need)} needed ({rows}"
                f"{state_sizes}), {_mib(free)} free of {_mib(total)}; train on the CPU "
                f"(device='cpu', no --gpu){blocks}"
            )
        if self.arrays is None:
            nnz = int(X.indptr[-1])
            if X.shape[1] >= 2**31:
                raise InvalidInputError(
                    f"device='cuda' takes at most 2**31 - 1 features, X has {X.shape[1]}"
                )
            n_threads = host_threads()
            self.arrays = (
                cuda.to_device(np.ascontiguousarray(X.indptr, dtype=_index_dtype(nnz))),
                cuda.to_device(cast_rows(X.indptr, X.indices, np.int32, n_threads)),
                cuda.to_device(cast_rows(X.indptr, X.data, DEVICE_DATA_DTYPE, n_threads)),
            )
        if key is None:
            return self.arrays
        if self.hot is None or self.hot[0] != key:
            self.hot = (key, cuda.to_device(hot_indices(X, hot)))
        return self.arrays[0], self.hot[1], self.arrays[2]

    def release(self) -> None:
        self.arrays = None  # numba-cuda frees device arrays once unreferenced
        self.hot = None
        self.block = None


def hot_base(X) -> int:
    """Where the hot views' numbering starts: past every weight (the bias's included)."""
    return X.shape[1] + 1


def hot_indices(X, hot: np.ndarray) -> np.ndarray:
    """X's feature numbers (int32) with hot feature ``hot[s]`` numbered ``hot_base(X) + s``."""
    from .dcd_async import remapped_indices

    return remapped_indices(X, hot, hot_base(X), np.int32, host_threads())


def free_memory(cuda) -> tuple[float, float]:
    """(free, total) bytes of the current GPU's memory, once the arrays released and not yet
    freed are: numba-cuda frees them in batches (10 arrays, or a fifth of the memory), so
    the previous sub-problem's state could still count as used and refuse the next one."""
    context = cuda.current_context()
    pending = getattr(context, "deallocations", None)  # (the simulator has none)
    if pending is not None:
        pending.clear()
    info = context.get_memory_info()
    return float(info[0]), float(info[1])


_held: dict[int, DeviceRows] = {}
_held_lock = threading.Lock()


@contextmanager
def rows_kept_on_device(X) -> Iterator[None]:
    """Within the block, GPU solves on this X share one copy of its rows (one-vs-rest's
    sub-problems of one training run); the copy is freed on leaving."""
    holder = DeviceRows(X)
    with _held_lock:
        _held[id(X)] = holder
    try:
        yield
    finally:
        with _held_lock:
            _held.pop(id(X), None)
        holder.release()


def _rows_holder(X) -> tuple[DeviceRows, bool]:
    """The held copy of X's rows, or a new one owned by this solve (True)."""
    with _held_lock:
        holder = _held.get(id(X))
    if holder is not None and holder.X is X:
        return holder, False
    return DeviceRows(X), True


# ------------------------------------------------------------------------------- the launch


def _power_of_two_at_least(n: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1.0))))


def _check_count(name: str, value) -> None:
    """A one-line error unless the option's ``value`` is an integer >= 1."""
    if not is_integer(value) or value < 1:
        raise InvalidInputError(f"{name} must be an integer >= 1, got {value!r}")


def _switch(sub: Subproblem, name: str, default: bool) -> bool:
    """Option ``name``, True or False (a one-line error otherwise: read as a truth value, the
    text "no" would turn the switch on)."""
    value = sub.option(name, default)
    if not isinstance(value, bool | np.bool_):
        raise InvalidInputError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def launch_plan(sub: Subproblem, cuda,
                default_in_flight: int = DEFAULT_ROWS_IN_FLIGHT) -> tuple[int, int, int]:
    """(threads per row, rows per block, blocks) of the epoch kernel.

    Options ``threads_per_row`` (a power of two up to 32), ``rows_per_block`` (at most 32,
    their product at most 256) and ``rows_in_flight`` (default ``default_in_flight``; the
    start: the safeguard may halve it) override the choice: threads per row the power of two
    near half the mean row length (4 to 32: a row is read in about two rounds), rows per block
    filling ``BLOCK_THREADS`` (no more than the rows in flight), blocks enough for the rows in
    flight."""
    from ._dcd_cuda_kernels import MAX_BLOCK_THREADS, MAX_ROWS_PER_BLOCK, MAX_THREADS_PER_ROW

    X = sub.X
    n_rows = X.shape[0]
    if simulated(cuda) and not any(
        name in sub.options for name in ("threads_per_row", "rows_per_block", "rows_in_flight")
    ):
        per_row, per_block, blocks = SIMULATOR_PLAN
        return per_row, per_block, max(1, min(blocks, math.ceil(n_rows / per_block)))
    for name in ("threads_per_row", "rows_per_block", "rows_in_flight"):
        _check_count(name, sub.option(name, 1))
    mean_nnz = X.indptr[-1] / max(n_rows, 1)
    per_row = sub.option("threads_per_row")
    if per_row is None:
        per_row = min(MAX_THREADS_PER_ROW, max(4, _power_of_two_at_least(mean_nnz / 2)))
    per_block = sub.option("rows_per_block", max(1, BLOCK_THREADS // per_row))
    in_flight = sub.option("rows_in_flight", default_in_flight)
    if per_row > MAX_THREADS_PER_ROW or per_row & (per_row - 1):
        raise InvalidInputError(
            f"threads_per_row must be a power of two up to {MAX_THREADS_PER_ROW}, got {per_row}"
        )
    if per_block > MAX_ROWS_PER_BLOCK or per_row * per_block > MAX_BLOCK_THREADS:
        raise InvalidInputError(
            f"rows_per_block must be at most {MAX_ROWS_PER_BLOCK} with threads_per_row x "
            f"rows_per_block at most {MAX_BLOCK_THREADS}, got {per_row} x {per_block}"
        )
    per_block = min(per_block, int(in_flight))
    blocks = max(1, math.ceil(min(int(in_flight), max(n_rows, 1)) / per_block))
    return int(per_row), int(per_block), blocks


def hot_plan(sub: Subproblem, n_weights: int) -> tuple[np.ndarray | None, np.ndarray, int]:
    """(hot features or None, the weights of a block's view, rounds between its flushes) of
    option ``hot_views`` (default ``HOT_VIEWS``: every change added to w at once) and
    ``flush_rounds`` (default ``DEFAULT_FLUSH_ROUNDS``). The view's weights are the hot
    features' and, with a bias, the bias's (last)."""
    from ._dcd_cuda_kernels import MAX_HOT_SLOTS
    from .dcd_async import HOT_MIN_SHARE, hot_features

    flush_rounds = sub.option("flush_rounds", DEFAULT_FLUSH_ROUNDS)
    _check_count("flush_rounds", flush_rounds)
    if not _switch(sub, "hot_views", HOT_VIEWS):
        return None, np.zeros(0, dtype=np.int64), int(flush_rounds)
    hot = hot_features(sub.X, min(GPU_MAX_HOT, MAX_HOT_SLOTS - 1), HOT_MIN_SHARE, host_threads())
    weights = hot if sub.bias < 0 else np.append(hot, n_weights - 1)
    # (no hot feature: the rows' own numbers serve; the bias alone may still have a view)
    return (hot if hot.shape[0] else None), weights.astype(np.int64), int(flush_rounds)


def block_option(sub: Subproblem) -> bool | int | None:
    """Option ``hot_block`` (default ``HOT_BLOCK``) checked: None (no block: False, None or
    0), True (chosen by the rows in flight) or a number of features."""
    option = sub.option("hot_block", HOT_BLOCK)
    if isinstance(option, np.bool_):
        option = bool(option)
    if option is False or option is None or (not isinstance(option, bool) and option == 0):
        return None
    if not isinstance(option, bool) and (
        not isinstance(option, int | np.integer) or option < 0
    ):
        raise InvalidInputError(
            f"hot_block must be True, False or a number of features >= 0, got {option!r}"
        )
    if _switch(sub, "hot_views", HOT_VIEWS):
        raise InvalidInputError("hot_block and hot_views are two schemes: choose one")
    return True if option is True else int(option)


def block_features(X, option: bool | int, rows_in_flight: int) -> np.ndarray:
    """The hot block's features (ascending) for ``block_option``'s value: an integer k, the k
    in most rows; True, those in at least ``HOT_BLOCK_ROWS_SHARED`` / ``rows_in_flight`` of
    the rows (at most ``HOT_BLOCK_MAX``, the most shared first): a read of any other weight
    then misses few changes of it, as the staleness benchmark's hot-block runs keep the
    serial epochs with about 3. The bias, when there is one, joins the block in any case."""
    from .dcd_async import hot_features

    if option is True:
        share, most = HOT_BLOCK_ROWS_SHARED / max(rows_in_flight, 1), HOT_BLOCK_MAX
    else:
        share, most = 0.0, int(option)
    # (counted on a sample of the rows, as the CPU's async threads pick their hot features)
    return hot_features(X, most, share, host_threads()).astype(np.int64)


@njit(cache=True, nogil=True)
def _count_block(indptr, indices, slot_of, bias, r0, r1, row_count, column_count) -> None:
    """For rows [r0, r1): each row's entries in the block (row_count (l,)) and each slot's
    (column_count (n_slots,), zeroed; the bias's slot last when bias >= 0)."""
    bias_slot = column_count.shape[0] - 1
    for i in range(r0, r1):
        count = 0
        for k in range(indptr[i], indptr[i + 1]):
            s = slot_of[indices[k]]
            if s >= 0:
                count += 1
                column_count[s] += 1
        if bias >= 0.0:
            count += 1
            column_count[bias_slot] += 1
        row_count[i] = count


@njit(cache=True, nogil=True)
def _fill_block(indptr, indices, data, slot_of, bias, r0, r1, row_ptr, fill, row_slots,
                row_values, column_rows, column_values, squares) -> None:  # fmt: skip
    """For rows [r0, r1): their entries of X_B by rows and by columns (``fill``: where this
    range's entries of each column start), and each row's squared norm on the block."""
    bias_slot = fill.shape[0] - 1
    for i in range(r0, r1):
        p = row_ptr[i]
        total = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s = slot_of[indices[k]]
            if s >= 0:
                v = data[k]
                row_slots[p] = s
                row_values[p] = v
                column_rows[fill[s]] = i
                column_values[fill[s]] = v
                fill[s] += 1
                p += 1
                total += np.float64(v) * np.float64(v)
        if bias >= 0.0:
            row_slots[p] = bias_slot
            row_values[p] = bias
            column_rows[fill[bias_slot]] = i
            column_values[fill[bias_slot]] = bias
            fill[bias_slot] += 1
            total += bias * bias
        squares[i] = total


def block_rows(X, features: np.ndarray, bias: float, n_threads: int):
    """X_B, X's rows on the block (``features``' slots, then the bias's when bias >= 0), as
    CSR by rows and by columns (rows ascending: the transpose's CSR), float32 values, and
    each row's squared norm on it in float64. Two passes over X, each on ``n_threads``
    threads by row chunks (each chunk's entries of a column after the chunks before)."""
    import scipy.sparse as sp

    n_rows = X.shape[0]
    n_slots = features.shape[0] + (1 if bias >= 0.0 else 0)
    slot_of = np.full(X.shape[1], -1, dtype=np.int64)
    slot_of[features] = np.arange(features.shape[0])
    chunks = work_chunks(X.indptr, n_threads)
    row_count = np.zeros(n_rows, dtype=np.int64)
    column_counts = np.zeros((len(chunks), n_slots), dtype=np.int64)
    for_chunks(list(enumerate(chunks)), lambda c, _: _count_block(
        X.indptr, X.indices, slot_of, bias, *chunks[c], row_count, column_counts[c]))  # fmt: skip
    row_ptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(row_count, out=row_ptr[1:])
    column_ptr = np.zeros(n_slots + 1, dtype=np.int64)
    np.cumsum(column_counts.sum(axis=0), out=column_ptr[1:])
    # where each chunk's entries of each column start
    starts = column_ptr[:-1] + np.cumsum(column_counts, axis=0) - column_counts
    nnz = int(row_ptr[-1])
    row_slots, column_rows = np.empty(nnz, np.int32), np.empty(nnz, np.int32)
    row_values = np.empty(nnz, DEVICE_DATA_DTYPE)
    column_values = np.empty(nnz, DEVICE_DATA_DTYPE)
    squares = np.zeros(n_rows)
    for_chunks(list(enumerate(chunks)), lambda c, _: _fill_block(
        X.indptr, X.indices, X.data, slot_of, bias, *chunks[c], row_ptr, starts[c], row_slots,
        row_values, column_rows, column_values, squares))  # fmt: skip
    rows = sp.csr_matrix((row_values, row_slots, row_ptr), (n_rows, n_slots))
    columns = sp.csr_matrix((column_values, column_rows, column_ptr), (n_slots, n_rows))
    return rows, columns, squares


class _HotBlock:
    """The hot block of a GPU solve of the L2-loss SVM or SVR (option ``hot_block``; the module's
    docstring): its features, their rows as CSR over the block (X_B, the bias's column last)
    and transposed (X_B'), its weights u on the host (float64) and on the GPU, its Newton
    step, and the norms of the primal's gradient over the block at the cold start and at the
    last step (its part of the stopping rule)."""

    def __init__(self, holder: DeviceRows, features: np.ndarray, bias: float,
                 steps: int) -> None:  # fmt: skip
        self.features = features
        self.holder = holder
        # (squares: |x_iB|^2 in float64)
        self.rows, self.columns, self.squares = holder.block_rows(features, bias)
        self.n_slots = self.rows.shape[1]
        self.steps = steps
        self.u = np.zeros(self.n_slots)
        # |g| at the cold start (``start_rule``) and at the last Newton step, -1 before they
        # are known (in the state: a checkpoint resumes them)
        self.gradient_norms = np.full(2, -1.0)

    def take_weights(self, w: np.ndarray, bias_index: int, bias: float) -> None:
        """u from w's entries (the start's w = sum_i y_i alpha_i x_i); w keeps the others."""
        self.u[: self.features.shape[0]] = w[self.features]
        w[self.features] = 0.0
        if bias >= 0.0:
            self.u[-1] = w[bias_index]
            w[bias_index] = 0.0

    def start_rule(self, kind: _DualKind, y: np.ndarray, C: np.ndarray) -> None:
        """The block's rule from its reference: the primal's gradient over the block at the
        cold start (w = 0), whatever the start, as TRON's rule (LIBLINEAR's -s 2) takes it
        (a warm start's own would ask the gradient within eps of the one it starts at, met
        only by rounding near the optimum). At w = 0 the SVM's slacks are 1 and the SVR's
        residuals -y: g = -2 X_B' (C y), and -2 X_B' (C sign(y) max(0, |y| - p)). (A zero
        gradient there leaves the reference to the first Newton step.)"""
        if kind.regression:
            coef = C * np.sign(y) * np.maximum(0.0, np.abs(y) - kind.p)
        else:
            coef = C * y
        norm = float(np.linalg.norm(2.0 * (self.columns @ coef)))
        self.gradient_norms[:] = (norm if norm > 0.0 else -1.0), -1.0

    def restrict_curvature(self, rec: np.ndarray, kernels) -> None:
        """Each row's Q_ii over its features off the block (D_ii included): the exact step
        of the dual with the block fixed. (With the whole |x_i|^2 the rows lag the block
        where it holds most of a row, as a bias does: ``benchmarks/bench_staleness.py``.)"""
        qbar = rec[:, kernels.QBAR] - self.squares
        rec[:, kernels.QBAR] = np.maximum(qbar, rec[:, kernels.BOUND_OR_DIAG])

    def nbytes(self, n_rows: int) -> int:
        """Bytes on the GPU: X_B and X_B', seven vectors over the rows."""
        nnz = int(self.rows.nnz)
        return 2 * nnz * 8 + (n_rows + self.n_slots + 2) * 8 + n_rows * 7 * 8

    def copy_to_device(self, cuda, y: np.ndarray, simulated_launch: bool) -> None:
        n_rows = self.rows.shape[0]
        self.d_rows, self.d_columns = self.holder.block_on_device(cuda)
        self.d_u = cuda.to_device(self.u)
        self.d_vector = cuda.to_device(np.zeros(self.n_slots))
        self.d_slots_out = cuda.device_array(self.n_slots, dtype=np.float64)
        self.d_y = cuda.to_device(y)
        self.d_none = cuda.to_device(np.zeros(0))
        self.d_slack, self.d_weight, self.d_coef, self.d_products, self.d_slope, \
            self.d_offset = (cuda.device_array(n_rows, dtype=np.float64) for _ in range(6))
        self.trials = np.concatenate([[0.0], 0.5 ** np.arange(HOT_BLOCK_TRIALS)])
        self.d_trials = cuda.to_device(self.trials)
        # launches: the block's rows (short) and its columns (long), as the epoch's layout
        mean = self.rows.nnz / max(n_rows, 1)
        if simulated_launch:
            self.rows_launch = (2, 2, 2)
            self.columns_launch = (2, 2, 2)
            self.line_launch = (2, 4)
        else:
            per_row = min(32, max(1, _power_of_two_at_least(mean / 2)))
            per_block = BLOCK_THREADS // per_row
            self.rows_launch = (per_row, per_block,
                                max(1, min(65535, math.ceil(n_rows / per_block))))
            self.columns_launch = (32, 4, max(1, min(65535, math.ceil(self.n_slots / 4))))
            self.line_launch = (STATE_BLOCKS, 256)
        self.d_line = cuda.device_array((self.line_launch[0], self.trials.shape[0]),
                                        dtype=np.float64)  # fmt: skip

    def _times(self, kernels, rows: bool, d_vector, d_scale, d_out) -> None:
        per_row, per_block, blocks = self.rows_launch if rows else self.columns_launch
        indptr, indices, data = self.d_rows if rows else self.d_columns
        kernels.rows_times[blocks, (per_row, per_block)](indptr, indices, data, d_vector,
                                                         d_scale, d_out)  # fmt: skip

    def transposed_times(self, kernels, d_row_values) -> np.ndarray:
        """X_B' v for a vector over the rows on the GPU, to the host."""
        self._times(kernels, False, d_row_values, self.d_none, self.d_slots_out)
        return self.d_slots_out.copy_to_host()

    def refresh_offset(self, kernels) -> None:
        """Each row's margin on the block, X_B u (the dual objective's offsets)."""
        self.d_u.copy_to_device(self.u)
        self._times(kernels, True, self.d_u, self.d_none, self.d_offset)

    def newton_step(self, run) -> None:
        """One Newton step on u for the other weights as they are on the GPU: conjugate
        gradients on (I + X_B' D_w X_B) s = -g (at most ``HOT_BLOCK_CG``, relative tolerance
        ``HOT_BLOCK_CG_RTOL``), then the first of the trial steps 1, 1/2, ... that lowers the
        primal by at least 1% of its slope's promise (none: u stays)."""
        kernels = run.kernels
        per_row, per_block, blocks = self.rows_launch
        regression, p = run.kind.regression, run.kind.p
        kernels.block_slacks[blocks, (per_row, per_block)](
            run.d_indptr, run.d_indices, run.d_data, run.bias, run.bias_index, run.d_w,
            hot_base(run.X), self.d_u, run.d_rec, run.d_flags, regression, p, self.d_slack,
            self.d_weight, self.d_coef,
        )  # fmt: skip
        g = self.u - self.transposed_times(kernels, self.d_coef)
        norm = float(np.linalg.norm(g))
        if self.gradient_norms[0] < 0.0:
            self.gradient_norms[0] = norm
        self.gradient_norms[1] = norm
        s = np.zeros_like(g)
        r = -g
        d = r.copy()
        rr = float(r @ r)
        tolerance = HOT_BLOCK_CG_RTOL * math.sqrt(rr)
        for _ in range(HOT_BLOCK_CG):
            if math.sqrt(rr) <= tolerance:
                break
            self.d_vector.copy_to_device(d)
            self._times(kernels, True, self.d_vector, self.d_weight, self.d_products)
            hd = d + self.transposed_times(kernels, self.d_products)
            step = rr / float(d @ hd)
            s += step * d
            r -= step * hd
            rr, rr_old = float(r @ r), rr
            d = r + (rr / rr_old) * d
        self.d_vector.copy_to_device(s)
        # the margins' change along s: times y_i for the SVM's slacks, as it is for the SVR's
        self._times(kernels, True, self.d_vector, self.d_none if regression else self.d_y,
                    self.d_slope)  # fmt: skip
        blocks, threads = self.line_launch
        kernels.block_line_values[blocks, threads](
            self.d_slack, self.d_slope, run.d_rec, run.d_flags, regression, p, self.d_trials,
            self.d_line,
        )  # fmt: skip
        losses = self.d_line.copy_to_host().sum(axis=0)
        values = [0.5 * float((self.u + t * s) @ (self.u + t * s)) + loss
                  for t, loss in zip(self.trials, losses, strict=True)]  # fmt: skip
        slope = float(g @ s)
        for t, value in zip(self.trials[1:], values[1:], strict=True):
            if value <= values[0] + 0.01 * t * slope:
                self.u += t * s
                break
        self.refresh_offset(kernels)

    def rule_holds(self, eps: float) -> bool:
        """The block's part of the stopping rule: the primal's gradient over the block at the
        last Newton step within ``eps`` times the cold start's (TRON's rule, -s 2)."""
        first, last = self.gradient_norms
        return bool(first >= 0.0 and last <= eps * first)

    def place(self, w: np.ndarray, bias_index: int, bias: float) -> np.ndarray:
        """The whole w: the other weights ``w`` (a copy) with the block's put back."""
        w = w.copy()
        w[self.features] = self.u[: self.features.shape[0]]
        if bias >= 0.0:
            w[bias_index] = self.u[-1]
        return w


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


def order_half_bits(n_rows: int) -> int:
    """Half the bits of the Feistel permutation's domain [0, 4**h), the least covering
    n_rows."""
    return max(1, math.ceil(max(1, (n_rows - 1).bit_length()) / 2))


def order_keys(seed: int, epoch: int, half_bits: int) -> tuple[int, int, int, int]:
    """The four round keys of an epoch's order, from the seed and the epoch number."""
    mask = (1 << half_bits) - 1
    x = _splitmix64((seed & 0xFFFFFFFF) << 32 | (epoch & 0xFFFFFFFF))
    keys = []
    for _ in range(4):
        x = _splitmix64(x)
        keys.append(x & mask)
    return tuple(keys)


class _DeviceProgress(Progress):
    """A Progress whose ``w`` and ``alpha`` are copied from the GPU when first read (a hook
    that reads neither, such as the stop request's, costs no copy): copies, not live views."""

    def __init__(self, fetch: Callable[[], tuple[np.ndarray, np.ndarray]], **fields) -> None:
        self._fetch = fetch
        self._host: tuple[np.ndarray, np.ndarray] | None = None
        super().__init__(w=None, alpha=None, **fields)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._host is None:
            self._host = self._fetch()
        return self._host

    w = property(lambda self: self._arrays()[0], lambda self, value: None)
    alpha = property(lambda self: self._arrays()[1], lambda self, value: None)


# --------------------------------------------------------------------------------- the solve


class _DualKind:
    """What every dual brings to a GPU solve, set by its loss: the solver's number, whether
    the loss is squared, and ``p`` (the SVR's tube width, set by ``inputs``; 0 for the SVM)."""

    regression: bool
    istate_size: int
    solver_numbers: dict[int, int]  # loss -> the solver's number
    squared_loss: int

    def __init__(self, loss: int) -> None:
        self.loss = loss
        self.solver = self.solver_numbers[loss]
        self.squared = loss == self.squared_loss
        self.p = 0.0


class _SvmDual(_DualKind):
    """What the SVM dual (-s 1, -s 3) brings to a GPU solve: its records (``dcd._prepare``),
    LIBLINEAR's projected-gradient rule and shrinking thresholds, its values."""

    regression = False
    istate_size = 4
    solver_numbers = {LOSS_HINGE: 3, LOSS_SQUARED_HINGE: 1}
    squared_loss = LOSS_SQUARED_HINGE

    def inputs(self, sub: Subproblem) -> tuple[np.ndarray, np.ndarray, float]:
        """(y, C, eps) as float64."""
        y = np.ascontiguousarray(sub.y, dtype=np.float64)
        return y, np.ascontiguousarray(sub.C, dtype=np.float64), check_eps(sub.eps)

    def prepare(self, X, bias, y, C, start, w, rec) -> np.ndarray:
        """Fill rec (l, 4) from the start (None: alpha = 0), w += its sum_i y_i alpha_i x_i;
        return the trainable rows."""
        n_rows = X.shape[0]
        cols, vals = row_scratch(X.indptr, None)
        return prepare_records(
            X.indptr, X.indices, X.data, bias, y, C, self.loss,
            np.zeros(n_rows) if start is None else start, True, w, rec,
            _dual.row_index_dtype(n_rows), None, cols, vals, 1.0, host_threads(),
        )  # fmt: skip

    def thresholds(self, fstate: np.ndarray) -> tuple[float, float]:
        return float(fstate[_F_PGMAX_OLD]), float(fstate[_F_PGMIN_OLD])

    def record_epoch(self, figures, fstate, istate, eps) -> bool:
        """Keep the epoch's extremes; whether the rule holds on the rows that took part."""
        pgmax, pgmin = float(figures[_kernels().PG_MAX]), float(figures[_kernels().PG_MIN])
        fstate[_F_PGMAX_NEW] = pgmax
        fstate[_F_PGMIN_NEW] = pgmin
        return stopping_measure(pgmax, pgmin) <= eps

    def reset_thresholds(self, fstate: np.ndarray) -> None:
        fstate[_F_PGMAX_OLD] = np.inf
        fstate[_F_PGMIN_OLD] = -np.inf

    def next_thresholds(self, fstate: np.ndarray) -> None:
        pgmax, pgmin = fstate[_F_PGMAX_NEW], fstate[_F_PGMIN_NEW]
        fstate[_F_PGMAX_OLD] = pgmax if pgmax > 0.0 else np.inf
        fstate[_F_PGMIN_OLD] = pgmin if pgmin < 0.0 else -np.inf

    def measures(self, fstate: np.ndarray) -> tuple[float, dict]:
        """(the hook's measure, the rule's figures)."""
        pg = {"pg_max": float(fstate[_F_PGMAX_NEW]), "pg_min": float(fstate[_F_PGMIN_NEW])}
        return stopping_measure(pg["pg_max"], pg["pg_min"]), pg

    def weights(self, X, bias, y, alpha, n_weights) -> np.ndarray:
        """w = sum_i y_i alpha_i x_i computed afresh in float64 (on the host's threads)."""
        return weights_from_dual(X.indptr, X.indices, X.data, bias, y * alpha, n_weights,
                                 host_threads())  # fmt: skip

    def objectives(self, X, bias, y, C, w, alpha) -> tuple[float, float]:
        """(P(w), -f(alpha)) with w from alpha: one pass over the losses
        (``linsvm.objective``, on the host's threads)."""
        return svm_objectives_maintained(X, bias, y, C, w, alpha, self.loss, host_threads())[:2]


class _SvrDual(_DualKind):
    """What the SVR dual (-s 12, -s 13) brings to a GPU solve: its records
    (``svr.prepare_svr``), LIBLINEAR's rule on the violations' 1-norm relative to the first
    epoch's, the largest violation as the shrinking threshold, its values."""

    regression = True
    istate_size = 5
    solver_numbers = {SVR_LOSS_L2: 12, SVR_LOSS_L1: 13}
    squared_loss = SVR_LOSS_L2

    def inputs(self, sub: Subproblem) -> tuple[np.ndarray, np.ndarray, float]:
        """(y, C, eps) checked as the CPU solver checks them (``svr.dual_problem``)."""
        self.p, y, C, eps = svr.dual_problem(sub)
        return y, C, eps

    def prepare(self, X, bias, y, C, start, w, rec) -> np.ndarray:
        """Fill rec (l, 4) from the start (None: beta = 0), w += its sum_i beta_i x_i; return
        the trainable rows."""
        n_rows = X.shape[0]
        return svr.prepare_svr_records(
            X.indptr, X.indices, X.data, bias, y, C, self.loss, rec,
            _dual.row_index_dtype(n_rows), np.zeros(0) if start is None else start,
            start is not None, w, host_threads(),
        )  # fmt: skip

    def thresholds(self, fstate: np.ndarray) -> tuple[float, float]:
        return float(fstate[_F_GMAX_OLD]), -float(fstate[_F_GMAX_OLD])

    def record_epoch(self, figures, fstate, istate, eps) -> bool:
        """Keep the epoch's largest violation and 1-norm (the first epoch's is the rule's
        reference unless a warm start's cold run gave it); whether the rule holds."""
        gnorm1 = float(figures[_kernels().MEASURE_SUM])
        if istate[I_ITER] == 0 and not istate[I_REF_GIVEN]:
            fstate[_F_GNORM1_INIT] = gnorm1
        fstate[_F_GMAX_NEW] = max(0.0, float(figures[_kernels().PG_MAX]))
        fstate[_F_GNORM1_NEW] = gnorm1
        return gnorm1 <= eps * fstate[_F_GNORM1_INIT]

    def reset_thresholds(self, fstate: np.ndarray) -> None:
        fstate[_F_GMAX_OLD] = np.inf

    def next_thresholds(self, fstate: np.ndarray) -> None:
        fstate[_F_GMAX_OLD] = fstate[_F_GMAX_NEW]

    def measures(self, fstate: np.ndarray) -> tuple[float, dict]:
        """(the hook's measure: 1-norm / reference, the rule's figures)."""
        figures = {
            "gnorm1": float(fstate[_F_GNORM1_NEW]),
            "gnorm1_init": float(fstate[_F_GNORM1_INIT]),
            "gmax": float(fstate[_F_GMAX_NEW]),
        }
        init = figures["gnorm1_init"]
        return (figures["gnorm1"] / init if init > 0 else 0.0), figures

    def weights(self, X, bias, y, beta, n_weights) -> np.ndarray:
        """w = sum_i beta_i x_i computed afresh in float64 (on the host's threads)."""
        return weights_from_dual(X.indptr, X.indices, X.data, bias, beta, n_weights,
                                 host_threads())  # fmt: skip

    def objectives(self, X, bias, y, C, w, beta) -> tuple[float, float]:
        """(P(w), -f(beta)) with w from beta (on the host's threads)."""
        return svr_objectives_maintained(X, bias, y, C, w, beta, self.loss, self.p,
                                         host_threads())[:2]  # fmt: skip


def host_threads() -> int:
    """The host's threads for a GPU solve's sweeps of the rows on the CPU (the records at the
    start, w and the objectives at the end): every core this process may use, idle while the
    GPU works; results vary in their last bits with the count, as the GPU's own do run to
    run."""
    return usable_cores()


def _kernels():
    from . import _dcd_cuda_kernels

    return _dcd_cuda_kernels


def solve_l1svc_dual_cuda(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 3 on the GPU: the L1-loss SVM dual, 0 <= alpha_i <= C_i. See ``_solve``."""
    return _solve(sub, _SvmDual(LOSS_HINGE), hook)


def solve_l2svc_dual_cuda(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 1 on the GPU: the L2-loss SVM dual, alpha_i >= 0. See ``_solve``."""
    return _solve(sub, _SvmDual(LOSS_SQUARED_HINGE), hook)


def solve_l2svr_dual_cuda(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 12 on the GPU: the L2-loss SVR dual, beta unbounded. See ``_solve``."""
    return _solve(sub, _SvrDual(SVR_LOSS_L2), hook)


def solve_l1svr_dual_cuda(sub: Subproblem, hook: Hook | None = None) -> Solution:
    """-s 13 on the GPU: the L1-loss SVR dual, |beta_i| <= C_i. See ``_solve``."""
    return _solve(sub, _SvrDual(SVR_LOSS_L1), hook)


def _solve(sub: Subproblem, kind: _SvmDual | _SvrDual, hook: Hook | None) -> Solution:
    """Solve the SVM dual (-s 1, -s 3) or the SVR dual (-s 12, -s 13) by dual CD on the GPU.

    sub.X: CSR (l, n); sub.y: (l,) +1/-1 (SVM) or real targets (SVR); sub.C: (l,) per-row
    cost (0 drops the row); sub.eps: the tolerance of the CPU solver's rule (``dcd.py``'s on
    the projected gradients, ``svr.py``'s on the violations' 1-norm); sub.alpha0: (l,) a warm
    start, projected into the bounds (the SVR dual keeps the cold start's reference, as
    ``svr.solve_svr_dual``: this GPU's own first cold epoch, run and discarded). Options:
    ``p`` (SVR: the tube's half width, default 0.1), ``shrinking`` (True), ``threads_per_row``,
    ``rows_per_block``, ``rows_in_flight`` (``launch_plan``), ``monotone`` (True: the
    safeguard of the module's docstring; False: no epoch is undone), ``hot_views`` and
    ``flush_rounds`` (the hot views), ``hot_block`` and ``hot_steps`` (the hot block, -s 1 and
    -s 12).
    Not a partition's solver: no ``w0``, ``sigma`` or implicit feature map.

    Solution.w: sum_i y_i alpha_i x_i (SVR: sum_i beta_i x_i) computed afresh in float64 from
    the returned alpha and the data as given (not the GPU's running w), the hot block's own
    weights on it; primal, dual and gap from it. Figures: the rule's (``pg_max``, ``pg_min``;
    SVR: ``gnorm1``, ``gnorm1_init``, ``gmax``, ``n_sv``), ``device``, ``threads_per_row``,
    ``rows_per_block`` and ``rows_in_flight`` (at the end: after any halving),
    ``rows_in_flight_start`` (the launch plan's, before any halving),
    ``rows_in_flight_halvings`` (epochs undone by the safeguard, each halving R),
    ``dual_objective`` (f of the last epoch as the GPU summed it, the minimised form: the dual
    value is -f), ``device_w_error``, max |running w - w| / max |w|: what the float32 rows
    and the atomic adds' rounding left in the GPU's w, ``hot_views`` and ``flush_rounds``,
    ``hot_block`` (its weights, 0 without) and ``hot_steps``.
    """
    cuda = cuda_module()
    holder, owned = _rows_holder(sub.X)
    try:
        run = _DeviceRun(sub, kind, cuda, holder)
        run.copy_to_device(holder)
        run.accept_start()
        if run.reference_run:
            run.reference_epoch()
        converged, stop_reason = _dual.drive_dual(sub, hook, run.advance, run.istate,
                                                  run.progress)  # fmt: skip
        w_device, alpha = run.fetch()
        device_name = _device_name(cuda)
        final_launch = run.launch_figures()
    finally:
        if owned:
            holder.release()
    return run.solution(w_device, alpha, converged, stop_reason, device_name, final_launch)


class _DeviceRun:
    """One GPU solve: the checked problem, the launch plan, the host copies of the state
    (records, w, flags, the rule's figures, the counters, the launch now) and their device
    arrays once copied; its steps are the epochs, the safeguard and the hook's views."""

    def __init__(self, sub: Subproblem, kind: _SvmDual | _SvrDual, cuda,
                 holder: DeviceRows) -> None:  # fmt: skip
        """Check the problem, plan the launch, prepare the records from the start (or the
        checkpoint): everything before the first copy to the GPU."""
        kernels = _kernels()
        if sub.feature_map is not None:
            raise InvalidInputError(
                "device='cuda' trains on materialised rows: map_mode='materialise' (not implicit)"
            )
        if sub.w0 is not None or float(sub.option("sigma", 1.0)) != 1.0:
            raise InvalidInputError("device='cuda' solves whole problems: no w0 or sigma")
        X = sub.X
        n_rows = X.shape[0]
        if n_rows >= 2**32:
            raise InvalidInputError(f"device='cuda' takes fewer than 2**32 rows, X has {n_rows}")
        self.sub, self.kind, self.cuda, self.kernels, self.X = sub, kind, cuda, kernels, X
        self.y, self.C, self.eps = kind.inputs(sub)
        self.bias = float(sub.bias)
        self.shrinking = bool(sub.option("shrinking", True))
        self.n_weights = sub.n_weights
        self.monotone = _switch(sub, "monotone", True)
        option = block_option(sub)
        if option is not None and not kind.squared:
            raise InvalidInputError(
                "hot_block takes the L2 losses only (-s 1, -s 12): the block's Newton step "
                "needs a smooth primal"
            )
        self.per_row, self.plan_per_block, self.plan_blocks = launch_plan(
            sub, cuda, DEFAULT_ROWS_IN_FLIGHT if option is None else HOT_BLOCK_ROWS_IN_FLIGHT
        )
        self.hot, self.hot_weight, self.flush_rounds = hot_plan(sub, self.n_weights)
        self.block = None
        features = None if option is None else block_features(
            X, option, self.plan_blocks * self.plan_per_block)  # fmt: skip
        steps = sub.option("hot_steps", DEFAULT_HOT_STEPS)
        _check_count("hot_steps", steps)
        if features is not None and (features.shape[0] or self.bias >= 0.0):
            self.block = _HotBlock(holder, features, self.bias, int(steps))
            self.hot = features
        self._prepare_state()
        self._plan_state_launches()

    def _prepare_state(self) -> None:
        """The host state at the start (or the checkpoint's), and the trainable rows."""
        sub, kind, X, n_rows = self.sub, self.kind, self.X, self.X.shape[0]
        kernels = self.kernels
        self.alpha0 = _dual.warm_start(sub, (n_rows,))
        # the SVR dual's warm start first runs the cold start's first epoch for its reference
        self.reference_run = kind.regression and self.alpha0 is not None
        self.w = np.zeros(self.n_weights)
        self.rec = np.empty((n_rows, 4))
        start = None if self.reference_run else self.alpha0
        trainable = kind.prepare(X, self.bias, self.y, self.C, start, self.w, self.rec)
        self.first_flags = np.where(self.C > 0.0, kernels.ACTIVE, kernels.FIXED).astype(np.uint8)
        self.flags = self.first_flags.copy()
        self.fstate = np.array([np.inf, -np.inf, 0.0, 0.0])
        kind.reset_thresholds(self.fstate)
        self.istate = np.zeros(kind.istate_size, dtype=np.int64)
        self.istate[I_ACTIVE] = trainable.shape[0]
        # the launch now (the safeguard halves it): blocks, rows per block, halvings so far
        self.launch = np.array([self.plan_blocks, self.plan_per_block, 0], dtype=np.int64)
        state = {"rec": self.rec, "w": self.w, "flags": self.flags, "fstate": self.fstate,
                 "istate": self.istate}  # fmt: skip
        if self.block is not None:  # w keeps the other weights, the block's own u
            self.block.take_weights(self.w, self.n_weights - 1, self.bias)
            self.block.restrict_curvature(self.rec, kernels)
            self.block.start_rule(kind, self.y, self.C)
            state.update(block_weight=self.block.u, block_gradients=self.block.gradient_norms)
        if sub.resume is not None:
            if self.block is None and "block_weight" in sub.resume:
                # (its w lacks the block's weights and its curvatures are the block's)
                raise InvalidInputError(
                    "the state to resume from is of a solve with the hot block; resume it "
                    "with the same hot_block"
                )
            _base.restore_state(state, sub.resume)
            _restore_launch(self.launch, sub.resume)
        self.n_trainable = int(trainable.shape[0])
        if self.n_trainable == 0:
            self.istate[I_CONVERGED] = 1
        self.objective = 0.0  # f of the accepted state

    def _plan_state_launches(self) -> None:
        """The order's bits and the launches over all rows and weights (objective, kept copy):
        a power of two of threads, enough partial sums to fill the GPU."""
        n_rows, n_weights = self.X.shape[0], self.n_weights
        self.half_bits = order_half_bits(n_rows)
        self.bias_index = n_weights - 1
        self.state_threads = 1 << (self.per_row * self.plan_per_block).bit_length() - 1
        self.n_partials = self.plan_blocks
        if not simulated(self.cuda):
            self.n_partials = max(self.plan_blocks, min(STATE_BLOCKS, math.ceil(
                max(n_rows, n_weights) / self.state_threads)))  # fmt: skip
        self.reduce_threads = min(self.kernels.REDUCE_THREADS,
                                  _power_of_two_at_least(self.n_partials))  # fmt: skip

    def copy_to_device(self, holder: DeviceRows) -> None:
        """The rows (``holder``'s, refused when they and the state do not fit), the state and
        the work arrays on the GPU; with the safeguard, room for the last accepted state."""
        cuda, kernels = self.cuda, self.kernels
        n_rows, n_weights = self.X.shape[0], self.n_weights
        sizes = f"dual variables and records {_mib(n_rows * 33)}, w {_mib(n_weights * 8)}"
        state_bytes = state_nbytes(n_rows, n_weights, self.n_partials, self.monotone)
        if self.block is not None:
            state_bytes += self.block.nbytes(n_rows)
            sizes += f", hot block {_mib(self.block.nbytes(n_rows))}"
        # (block training takes the classification duals: -s 1 and 3 here)
        self.d_indptr, self.d_indices, self.d_data = holder.get(
            cuda, state_bytes, sizes, self.hot, in_blocks=not self.kind.regression
        )
        self.d_hot_weight = cuda.to_device(self.hot_weight)
        self.views = self.hot_weight.shape[0] > 0
        self.d_rec = cuda.to_device(self.rec)
        self.d_w = cuda.to_device(self.w)
        self.d_flags = cuda.to_device(self.flags)
        self.d_partial = cuda.to_device(np.zeros((self.n_partials, kernels.N_FIGURES)))
        self.d_figures = cuda.device_array(kernels.N_FIGURES, dtype=np.float64)
        self.d_no_offset = cuda.to_device(np.zeros(0))
        self.d_no_block = cuda.to_device(np.zeros(1))
        if self.block is not None:
            self.block.copy_to_device(cuda, self.y, simulated(cuda))
            self.block.refresh_offset(kernels)
        if self.monotone:  # the last accepted state
            self.d_alpha_kept = cuda.device_array(n_rows, dtype=np.float64)
            self.d_w_kept = cuda.device_array(n_weights, dtype=np.float64)
            self.d_flags_kept = cuda.device_array(n_rows, dtype=np.uint8)

    def keep(self, restore: bool) -> None:
        """Copy the state to its kept copy, or (``restore``) back from it."""
        self.kernels.keep_state[self.n_partials, self.state_threads](
            self.d_rec, self.d_w, self.d_flags, self.d_alpha_kept, self.d_w_kept,
            self.d_flags_kept, restore,
        )  # fmt: skip

    def figures_now(self, n_epoch_blocks: int) -> np.ndarray:
        """The epoch's figures with f(alpha) now: the epoch's one synchronisation."""
        kind, kernels = self.kind, self.kernels
        offset = self.d_no_offset if self.block is None else self.block.d_offset
        kernels.dual_objective_partials[self.n_partials, self.state_threads](
            self.d_rec, self.d_w, kind.regression, kind.squared, kind.p, offset, self.d_partial
        )
        kernels.reduce_partials[1, self.reduce_threads](
            self.d_partial, n_epoch_blocks, self.d_figures
        )
        return self.d_figures.copy_to_host()

    def accept_start(self) -> None:
        """The state on the GPU is the start: its f, and its kept copy."""
        self.objective = float(self.figures_now(0)[self.kernels.OBJECTIVE])
        self._keep_if_guarded()

    def advance(self, n_epochs: int) -> None:
        """Up to ``n_epochs`` more accepted epochs (fewer once converged); an epoch that the
        safeguard undoes runs again, same order, with the rows in flight halved."""
        istate = self.istate
        last = int(istate[I_ITER]) + n_epochs
        while int(istate[I_ITER]) < last and not istate[I_CONVERGED]:
            self._epoch()

    def _epoch(self) -> None:
        """One epoch: its kernel (with the hot block, ``hot_steps`` launches over parts of the
        order, each followed by the block's Newton step), each launch accepted by the
        safeguard, then its end on the host (the rule on the parts' figures together and,
        with the block, on the block's gradient: ``_HotBlock.rule_holds``)."""
        kind, kernels, istate, block = self.kind, self.kernels, self.istate, self.block
        keys = order_keys(self.sub.seed, int(istate[I_ITER]), self.half_bits)
        thresholds = kind.thresholds(self.fstate)
        n_rows = self.X.shape[0]
        parts = 1 if block is None else block.steps
        together = np.array([-np.inf, np.inf, 0.0, 0.0, 0.0, 0.0])
        for part in range(parts):
            figures = self._accepted_launch(keys, thresholds, n_rows * part // parts,
                                            n_rows * (part + 1) // parts)  # fmt: skip
            together[kernels.PG_MAX] = max(together[kernels.PG_MAX], figures[kernels.PG_MAX])
            together[kernels.PG_MIN] = min(together[kernels.PG_MIN], figures[kernels.PG_MIN])
            for k in (kernels.KEPT, kernels.SHRUNK_NOW, kernels.MEASURE_SUM):
                together[k] += figures[k]
            if block is not None:
                block.newton_step(self)
                self.objective = float(self.figures_now(0)[kernels.OBJECTIVE])  # (u moved)
            if part < parts - 1:
                self._keep_if_guarded()
        together[kernels.OBJECTIVE] = self.objective
        _end_epoch(kind, together, self.fstate, istate, self.eps, self.n_trainable,
                   self.d_flags)  # fmt: skip
        if block is not None and istate[I_CONVERGED] and not block.rule_holds(self.eps):
            istate[I_CONVERGED] = 0
        if not istate[I_CONVERGED]:  # (after _end_epoch: it may make shrunk rows active)
            self._keep_if_guarded()

    def _guarded(self) -> bool:
        """Whether the safeguard acts: on, and more than one row in flight."""
        return self.monotone and self.launch[L_BLOCKS] * self.launch[L_ROWS_PER_BLOCK] > 1

    def _keep_if_guarded(self) -> None:
        if self._guarded():
            self.keep(restore=False)

    def _accepted_launch(self, keys, thresholds, start: int, stop: int) -> np.ndarray:
        """The epoch kernel over positions [start, stop) of the order, run again with the rows
        in flight halved (from the kept state) while the safeguard refuses it; its figures."""
        kind, kernels, launch, block = self.kind, self.kernels, self.launch, self.block
        while True:
            blocks, per_block = int(launch[L_BLOCKS]), int(launch[L_ROWS_PER_BLOCK])
            kernels.dcd_epoch[blocks, (self.per_row, per_block)](
                self.d_indptr, self.d_indices, self.d_data, self.bias, self.bias_index,
                self.d_rec, self.d_w, self.d_flags, self.X.shape[0], self.half_bits, *keys,
                kind.regression, kind.squared, kind.p, self.shrinking, *thresholds,
                self.d_partial, self.views, hot_base(self.X), self.d_hot_weight,
                self.flush_rounds, block is not None,
                self.d_no_block if block is None else block.d_u, start, stop,
            )  # fmt: skip
            figures = self.figures_now(blocks)
            f_new = float(figures[kernels.OBJECTIVE])
            if self._guarded() and not objective_kept(f_new, self.objective):
                self.keep(restore=True)  # undo it; the same order again, R halved
                halve_launch(launch)
                continue
            self.objective = f_new
            return figures

    def reference_epoch(self) -> None:
        """The SVR dual's warm start: the cold start's first epoch, discarded but for its
        violations' 1-norm (the rule's reference), then the warm start on the GPU."""
        kind, fstate, istate = self.kind, self.fstate, self.istate
        self.advance(1)
        reference = float(fstate[_F_GNORM1_INIT])
        self.w[:] = 0.0
        start = self.alpha0 if reference > 0.0 else None
        kind.prepare(self.X, self.bias, self.y, self.C, start, self.w, self.rec)
        if self.block is not None:  # (the warm start's w: its block's part to u, as at the start)
            self.block.take_weights(self.w, self.bias_index, self.bias)
            self.block.restrict_curvature(self.rec, self.kernels)
            self.block.start_rule(kind, self.y, self.C)
            self.block.refresh_offset(self.kernels)
        self.flags[:] = self.first_flags
        kind.reset_thresholds(fstate)
        fstate[_F_GNORM1_INIT] = reference
        istate[:] = 0
        istate[I_ACTIVE] = self.n_trainable
        istate[I_REF_GIVEN] = 1
        istate[I_CONVERGED] = int(self.n_trainable == 0)
        self.d_rec.copy_to_device(self.rec)
        self.d_w.copy_to_device(self.w)
        self.d_flags.copy_to_device(self.flags)
        self.accept_start()

    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        """(the GPU's running w, alpha) copied to the host."""
        rec_now = self.d_rec.copy_to_host()
        w = self.d_w.copy_to_host()
        if self.block is not None:
            w = self.block.place(w, self.bias_index, self.bias)
        return w, np.ascontiguousarray(rec_now[:, 0])

    def snapshot(self) -> dict[str, np.ndarray]:
        block = {} if self.block is None else {
            "block_weight": self.block.u, "block_gradients": self.block.gradient_norms}
        return _base.copy_state(
            rec=self.d_rec.copy_to_host(), w=self.d_w.copy_to_host(),
            flags=self.d_flags.copy_to_host(), fstate=self.fstate, istate=self.istate,
            launch=self.launch, **block,
        )  # fmt: skip

    def launch_figures(self) -> dict:
        launch = self.launch
        return {
            "rows_per_block": int(launch[L_ROWS_PER_BLOCK]),
            "rows_in_flight": int(launch[L_BLOCKS] * launch[L_ROWS_PER_BLOCK]),
            "rows_in_flight_halvings": int(launch[L_HALVINGS]),
            "dual_objective": self.objective,
        }

    def progress(self) -> Progress:
        kind, istate = self.kind, self.istate
        measure, rule = kind.measures(self.fstate)
        return _DeviceProgress(
            self.fetch,
            solver=kind.solver,
            index=self.sub.index,
            iteration=int(istate[I_ITER]),
            measure=measure,
            figures={"n_active": int(istate[I_ACTIVE]), **rule, **self.launch_figures()},
            state=self.snapshot,
            objectives=lambda: self.values(self.fetch()[1])[1:3],
        )

    def values(self, alpha: np.ndarray, objectives: bool = True
               ) -> tuple[np.ndarray, float, float]:  # fmt: skip
        """(w, P(w), -f(alpha)) in float64 on the host: w = sum_i y_i alpha_i x_i (SVR: sum_i
        beta_i x_i) afresh; with the hot block, its weights then the block's own u (the
        primal's Newton block: at the optimum they are the same), P at that w and the gap
        P(w) + f(alpha) >= 0 by weak duality whatever the two are. Without ``objectives``
        (the solve's option: the caller needs w only), NaN for both."""
        X, bias, y, C, kind = self.X, self.bias, self.y, self.C, self.kind
        w = kind.weights(X, bias, y, alpha, self.n_weights)
        primal = dual = math.nan
        if objectives:
            primal, dual = kind.objectives(X, bias, y, C, w, alpha)
        if self.block is not None:
            w = self.block.place(w, self.bias_index, bias)
            if objectives:
                primal = kind.objectives(X, bias, y, C, w, alpha)[0]
        return w, primal, dual

    def solution(self, w_device: np.ndarray, alpha: np.ndarray, converged: bool,
                 stop_reason: str, device_name: str, final_launch: dict) -> Solution:  # fmt: skip
        """The Solution at the returned alpha: w and the objectives afresh in float64, the
        rule's figures, the device's and the launch's."""
        kind = self.kind
        w, primal, dual = self.values(alpha, self.sub.option("objectives", True))
        scale = float(np.max(np.abs(w))) if w.size else 0.0
        w_error = float(np.max(np.abs(w_device - w)) / scale) if scale > 0 else 0.0
        rule = kind.measures(self.fstate)[1]
        if kind.regression:
            rule["n_sv"] = int(np.count_nonzero(alpha))
        return Solution(
            w=w,
            n_iter=int(self.istate[I_ITER]),
            converged=converged,
            stop_reason=stop_reason,
            primal=primal,
            dual=dual,
            gap=primal - dual,
            alpha=alpha,
            solver=kind.solver,
            figures={
                **rule,
                "device": device_name,
                "threads_per_row": self.per_row,
                **final_launch,
                "rows_in_flight_start": self.plan_blocks * self.plan_per_block,
                "device_w_error": w_error,
                "hot_views": int(self.hot_weight.shape[0]),
                "flush_rounds": self.flush_rounds,
                "hot_block": 0 if self.block is None else self.block.n_slots,
                "hot_steps": 0 if self.block is None else self.block.steps,
            },
        )


def objective_kept(f_new: float, f_kept: float) -> bool:
    """Whether an epoch that took the dual objective from f_kept to f_new is accepted: it did
    not rise beyond rounding (a NaN or infinite f, a diverged epoch, is refused)."""
    if not math.isfinite(f_new):
        return False
    return f_new <= f_kept + F_RISE_RTOL * max(abs(f_kept), abs(f_new))


def halve_launch(launch: np.ndarray) -> None:
    """Halve the rows in flight of ``launch`` (blocks, rows per block, halvings): the blocks
    first, down to one, then the rows of the one block, down to one row."""
    if launch[L_BLOCKS] > 1:
        launch[L_BLOCKS] //= 2
    elif launch[L_ROWS_PER_BLOCK] > 1:
        launch[L_ROWS_PER_BLOCK] //= 2
    launch[L_HALVINGS] += 1


def _restore_launch(launch: np.ndarray, saved: dict[str, np.ndarray]) -> None:
    """Continue with a checkpoint's rows in flight (no more than this run's plan); a
    checkpoint without them (written before the safeguard) starts from the plan."""
    if "launch" not in saved:
        return
    value = np.asarray(saved["launch"])
    if value.shape != launch.shape or value.dtype.kind not in "iu" or value.min() < 0:
        raise InvalidInputError(
            f"the state to resume from does not fit this problem: 'launch' is "
            f"{value.dtype}{list(value.shape)}, expected int64{list(launch.shape)}"
        )
    launch[L_BLOCKS] = max(1, min(launch[L_BLOCKS], value[L_BLOCKS]))
    launch[L_ROWS_PER_BLOCK] = max(1, min(launch[L_ROWS_PER_BLOCK], value[L_ROWS_PER_BLOCK]))
    launch[L_HALVINGS] = value[L_HALVINGS]


def _end_epoch(kind, figures, fstate, istate, eps, n_trainable, d_flags) -> None:
    """Close an epoch on the host from its figures (the rule's measures, rows kept, rows shrunk
    now), as ``dcd.end_iteration`` and ``svr.dcd_svr_kernel`` do: the stopping rule
    (``kind``'s), the re-check of every row before stopping, the next epoch's shrinking
    thresholds."""
    kernels = _kernels()
    met = kind.record_epoch(figures, fstate, istate, eps)
    istate[I_ITER] += 1
    istate[I_SHRUNK] += int(figures[kernels.SHRUNK_NOW])
    n_active = int(figures[kernels.KEPT])
    if met or n_active == 0:
        if istate[I_SHRUNK] == 0:
            istate[I_ACTIVE] = n_active
            istate[I_CONVERGED] = 1
            return
        # met on the active rows: every row once more before stopping
        threads = 256
        blocks = max(1, min(1024, math.ceil(d_flags.shape[0] / threads)))
        kernels.clear_shrunk[blocks, threads](d_flags)
        istate[I_SHRUNK] = 0
        istate[I_ACTIVE] = n_trainable
        kind.reset_thresholds(fstate)
        return
    istate[I_ACTIVE] = n_active
    kind.next_thresholds(fstate)


def _device_name(cuda) -> str:
    try:
        name = cuda.get_current_device().name
    except Exception:
        return "GPU"
    return name.decode() if isinstance(name, bytes) else str(name)


__all__ = [
    "check_available",
    "rows_kept_on_device",
    "solve_l1svc_dual_cuda",
    "solve_l2svc_dual_cuda",
    "solve_l1svr_dual_cuda",
    "solve_l2svr_dual_cuda",
]
