"""The dual coordinate descent on a GPU (``device="cuda"``, ``solvers.dcd_cuda``).

Without an NVIDIA GPU the kernels run under numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1,
set by conftest.py before anything imports numba, only when the machine shows no GPU): the same
kernels, blocks run one after another in Python threads, so the data stay tiny. With a GPU the
same tests run on it. The error paths (no numba-cuda, no GPU, data larger than the GPU's
memory) are simulated by monkeypatching.
"""

from __future__ import annotations

import os
import signal
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm import cli
from linsvm.errors import InvalidInputError
from linsvm.objective import primal_from_dual
from linsvm.solvers import SOLVERS, Subproblem, dcd_cuda

try:  # (the simulator's when conftest.py chose it; kernels here must see it as a global)
    from numba import cuda
except ImportError:
    cuda = None
needs_numba_cuda = pytest.mark.skipif(
    not dcd_cuda.importlib.util.find_spec("numba_cuda"), reason="numba-cuda not installed"
)
# the optimum within this of the CPU solver's (relative), at eps = TIGHT
OPTIMUM_RTOL = 1e-6
TIGHT = 1e-6


@pytest.fixture(autouse=True)
def _simulator(gpu_simulator):
    """Every test here runs under the faster simulator (conftest.py's ``gpu_simulator``)."""


def tiny_problem(n_rows=64, n_features=400, n_classes=2, seed=0):
    """Sparse text-like rows (about 7 non-zeros each, float32 values, one feature common to
    all, more features than rows as in text: DCD needs few epochs) and labels correlated with
    a hidden w (classes: thirds of its scores)."""
    rng = np.random.default_rng(seed)
    words = sp.random(n_rows, n_features - 1, density=0.015, random_state=rng, dtype=np.float32)
    common = sp.csr_matrix(np.full((n_rows, 1), 0.5, dtype=np.float32))
    X = sp.hstack([common, words], format="csr")
    X.sort_indices()
    scores = X @ rng.normal(size=(n_features, 1)) + 0.3 * rng.normal(size=(n_rows, 1))
    cuts = np.quantile(scores[:, 0], np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.digitize(scores[:, 0], cuts)
    return X, (np.where(y == 1, 1, -1) if n_classes == 2 else y)


def check_exact_w(X, y_sign, result, bias):
    """w is sum_i y_i alpha_i x_i computed afresh, and the gap is >= 0 up to rounding."""
    w = primal_from_dual(X.indptr, X.indices, X.data, bias, y_sign, result.alpha, result.w.size)
    np.testing.assert_array_equal(result.w, w)
    assert result.gap >= -1e-12 * abs(result.primal)
    assert result.figures["device_w_error"] < 1e-5


@needs_numba_cuda
@pytest.mark.parametrize("solver", [1, 3])
def test_optimum_as_the_cpu_solver(solver):
    X, y = tiny_problem()
    bias = -1.0
    gpu = linsvm.train(X, y, solver=solver, eps=TIGHT, bias=bias, device="cuda")
    cpu = linsvm.train(X, y, solver=solver, eps=TIGHT, bias=bias)
    g, c = gpu.results_[0], cpu.results_[0]
    assert g.converged and g.solver == solver
    assert abs(g.primal - c.primal) <= OPTIMUM_RTOL * c.primal
    y_sign = np.where(y == gpu.labels_[0], 1.0, -1.0)
    check_exact_w(X, y_sign, g, bias)
    # the model holds the same weights as the Solution (LIBLINEAR's layout, unchanged writer)
    np.testing.assert_array_equal(gpu.coef_[0], g.w[: X.shape[1]])


@needs_numba_cuda
def test_one_vs_rest():
    X, y = tiny_problem(n_rows=60, n_classes=3, seed=1)
    gpu = linsvm.train(X, y, solver=1, eps=1e-3, device="cuda")
    cpu = linsvm.train(X, y, solver=1, eps=1e-3)
    assert len(gpu.results_) == 3
    for k, (g, c) in enumerate(zip(gpu.results_, cpu.results_, strict=True)):
        assert g.converged and abs(g.primal - c.primal) <= 1e-3 * c.primal
        check_exact_w(X, np.where(y == gpu.labels_[k], 1.0, -1.0), g, -1.0)


@needs_numba_cuda
def test_estimator():
    from linsvm.estimators import LinearSVC

    X, y = tiny_problem(n_rows=60, seed=5)
    # dual="auto" takes the dual on the GPU (here n_samples > n_features: the CPU takes -s 2)
    est = LinearSVC(tol=1e-3, fit_intercept=False, device="cuda").fit(X, y)
    assert est.model_.solver == 1 and est.model_.results_[0].figures["device"]
    cpu = LinearSVC(dual=True, tol=1e-3, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(est.objective_, cpu.objective_, rtol=1e-3)


@needs_numba_cuda
def test_order_is_a_permutation():
    from linsvm.solvers import _dcd_cuda_kernels as kernels

    @cuda.jit
    def positions(out, n_rows, half_bits, k0, k1, k2, k3):
        for s in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
            out[s] = kernels.device_order_position(s, n_rows, half_bits, k0, k1, k2, k3)

    for n_rows in (1, 2, 7, 100, 1000):
        half_bits = dcd_cuda.order_half_bits(n_rows)
        orders = []
        for epoch in (0, 1):
            out = cuda.to_device(np.full(n_rows, -1, dtype=np.int64))
            positions[2, 8](out, n_rows, half_bits, *dcd_cuda.order_keys(7, epoch, half_bits))
            order = out.copy_to_host()
            np.testing.assert_array_equal(np.sort(order), np.arange(n_rows))
            orders.append(order)
        if n_rows >= 100:  # a fresh order each epoch, far from the identity
            assert np.mean(orders[0] != orders[1]) > 0.9
            assert np.mean(orders[0] != np.arange(n_rows)) > 0.9


def _subproblem(X, y, **changes):
    y_sign = np.where(y == y[0], 1.0, -1.0)
    fields = dict(eps=TIGHT, max_iter=300, bias=-1.0)
    fields.update(changes)
    return Subproblem(X, y_sign, np.ones(X.shape[0]), **fields)


@needs_numba_cuda
def test_hook_stops_between_epochs_and_checkpoint_resumes():
    X, y = tiny_problem(seed=2)
    sub = _subproblem(X, y)
    states = {}

    def stop_after_three(progress):
        assert progress.alpha.shape == (X.shape[0],) and progress.w.shape == (X.shape[1],)
        if progress.iteration == 3:
            states["at 3"] = progress.state()
            return False
        return True

    stopped = dcd_cuda.solve_l2svc_dual_cuda(sub, stop_after_three)
    assert stopped.stop_reason == "interrupted" and stopped.n_iter == 3
    check_exact_w(X, sub.y, stopped, -1.0)
    # the checkpoint holds alpha (the records' first column) and continues from there
    np.testing.assert_array_equal(states["at 3"]["rec"][:, 0], stopped.alpha)
    resumed = dcd_cuda.solve_l2svc_dual_cuda(sub.but(resume=states["at 3"]))
    cpu = SOLVERS[1].solve(sub)
    assert resumed.converged and resumed.n_iter > 3
    assert abs(resumed.primal - cpu.primal) <= OPTIMUM_RTOL * cpu.primal


@needs_numba_cuda
def test_ctrl_c_between_epochs():
    X, y = tiny_problem(seed=3)

    def interrupt(progress):
        if progress.iteration == 2:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.warns(linsvm.training.TrainingInterrupted):
        model = linsvm.train(X, y, solver=1, eps=TIGHT, device="cuda", hook=interrupt)
    result = model.results_[0]
    assert model.interrupted and result.stop_reason == "interrupted" and result.n_iter == 2
    check_exact_w(X, np.where(y == model.labels_[0], 1.0, -1.0), result, -1.0)


@needs_numba_cuda
def test_data_larger_than_the_gpu_is_refused_before_any_copy(monkeypatch):
    X, y = tiny_problem()
    monkeypatch.setattr(dcd_cuda, "free_memory", lambda cuda: (1000.0, 2000.0))

    def no_copy(*args, **kwargs):
        raise AssertionError("copied to the GPU")

    monkeypatch.setattr(cuda, "to_device", no_copy)
    fit = r"do not fit the GPU's free memory: .* MiB needed \(CSR rows .* MiB"
    with pytest.raises(InvalidInputError, match=fit) as info:
        linsvm.train(X, y, solver=3, device="cuda")
    assert "\n" not in str(info.value) and "in blocks" in str(info.value)
    # block training takes the classification duals only: not suggested for the SVR
    with pytest.raises(InvalidInputError, match=fit) as info:
        linsvm.train(X, y * 0.5, solver=12, device="cuda")
    assert "in blocks" not in str(info.value)


def test_free_memory_counts_arrays_released_but_not_yet_freed():
    # numba-cuda frees released arrays in batches: the check frees them first
    calls = []

    class Pending:
        def clear(self):
            calls.append("clear")

    class Context:
        deallocations = Pending()

        def get_memory_info(self):
            calls.append("info")
            return (10.0, 20.0)

    class Cuda:
        def current_context(self):
            return Context()

    assert dcd_cuda.free_memory(Cuda()) == (10.0, 20.0) and calls == ["clear", "info"]


@needs_numba_cuda
def test_no_gpu(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    X, y = tiny_problem()
    with pytest.raises(InvalidInputError, match="needs an NVIDIA GPU"):
        linsvm.train(X, y, solver=1, device="cuda")
    data = tmp_path / "tiny.svm"
    linsvm.write_libsvm(X, y, data)
    assert cli.main(["train", "--gpu", str(data), str(tmp_path / "m")]) != 0
    err = capsys.readouterr().err.strip()
    assert "needs an NVIDIA GPU" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "m").exists()


def test_no_numba_cuda(monkeypatch, tmp_path, capsys):
    real_find_spec = dcd_cuda.importlib.util.find_spec
    monkeypatch.setattr(
        dcd_cuda.importlib.util, "find_spec",
        lambda name, *a: None if name == "numba_cuda" else real_find_spec(name, *a),
    )  # fmt: skip
    X, y = tiny_problem()
    with pytest.raises(InvalidInputError, match=r"numba-cuda.*linsvm\[cuda\]"):
        linsvm.train(X, y, solver=3, device="cuda")
    data = tmp_path / "tiny.svm"
    linsvm.write_libsvm(X, y, data)
    assert cli.main(["train", "--gpu", "-s", "3", str(data), str(tmp_path / "m")]) != 0
    err = capsys.readouterr().err.strip()
    assert "numba-cuda" in err and len(err.splitlines()) == 1


# NumPy 2.5 removed np.row_stack, which numba-cuda 0.30 registers unconditionally; where NumPy
# still has it, removing it (name and export) stands for NumPy 2.5.
_WITHOUT_ROW_STACK = """
import numpy as np
if "row_stack" in np.__dict__:
    del np.row_stack
    np.__all__ = [name for name in np.__all__ if name != "row_stack"]
from linsvm.errors import InvalidInputError
from linsvm.solvers import dcd_cuda
try:
    dcd_cuda.cuda_module()
except InvalidInputError:
    pass  # (no GPU here: what matters is that the CUDA target loads below)
import numba.cuda.cudaimpl
import numba.cuda.np.arrayobj
from linsvm.solvers import _dcd_cuda_kernels
print("loaded")
"""


@needs_numba_cuda
def test_cuda_target_loads_on_numpy_without_row_stack():
    # The CUDA target's own registries, not the simulator (which never loads them): run
    # without NUMBA_ENABLE_CUDASIM, so that a numba-cuda / NumPy pair that cannot compile a
    # kernel fails here rather than on a user's GPU.
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    run = subprocess.run(
        [sys.executable, "-c", _WITHOUT_ROW_STACK], env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().endswith("loaded")


# Every launch recorded by the test below, compiled by the CUDA target itself (NVVM, to PTX)
# for the GPUs users have, on a NumPy without row_stack (as above); no GPU needed: where none
# is, numba-cuda asks the current device only for its compute capability, given it here.
# Exit status 3: no NVVM/NVRTC libraries here (the dev extras install them on Linux x86-64).
_COMPILE_LAUNCHES = """
import pickle, sys
import numpy as np
if "row_stack" in np.__dict__:
    del np.row_stack
    np.__all__ = [name for name in np.__all__ if name != "row_stack"]
from linsvm.solvers import _dcd_cuda_kernels as kernels
from linsvm.solvers.dcd_cuda import compiler_missing
from numba import cuda
missing = compiler_missing()
if missing is not None:
    print(f"no CUDA compiler libraries here: {missing}")
    sys.exit(3)
if not cuda.is_available():
    import numba.cuda.dispatcher as dispatcher
    class TargetDevice:
        compute_capability = None
    dispatcher.get_current_device = lambda: TargetDevice
with open(sys.argv[1], "rb") as f:
    launches = pickle.load(f)
for cc in ((8, 0), (9, 0)):
    TargetDevice.compute_capability = cc
    for name, signature in launches:
        ptx, _ = cuda.compile_ptx(getattr(kernels, name).py_func, signature, cc=cc)
        assert ".entry" in ptx, name
        print(name, cc, len(ptx))
"""


@needs_numba_cuda
def test_every_launch_compiles_for_the_gpu(monkeypatch, tmp_path):
    # The simulator runs the kernels as Python: code it accepts may not compile for a GPU (a
    # NumPy call the CUDA target lacks, a type it cannot unify, in the kernels or in the CPU
    # solvers' coordinate steps they share). So the solves below record the argument types of
    # every launch, and the CUDA target compiles each in a process of its own.
    import pickle
    import subprocess

    import numba

    from linsvm.solvers import _dcd_cuda_kernels as kernels

    names = ("dcd_epoch", "dual_objective_partials", "reduce_partials", "keep_state",
             "clear_shrunk", "rows_times", "block_slacks", "block_line_values")  # fmt: skip
    launches = set()

    class Recorded:
        def __init__(self, name, kernel):
            self.name, self.kernel = name, kernel

        def __getitem__(self, config):
            launch = self.kernel[config]

            def call(*args):  # (the simulator's device arrays hold a NumPy array)
                types = tuple(numba.typeof(getattr(a, "_ary", a)) for a in args)
                launches.add((self.name, types))
                return launch(*args)

            return call

    for name in names:
        monkeypatch.setattr(kernels, name, Recorded(name, getattr(kernels, name)))
    X, y = tiny_problem(n_rows=24, n_features=40)
    X_regression, y_regression = tiny_regression(n_rows=24, n_features=40)
    for solver in (1, 3, 12, 13):
        regression = solver in (12, 13)
        # (plain, hot views, and for -s 1 and -s 12 the hot block; the schemes with a bias)
        for hot_views, hot_block in ((False, False), (True, False), (False, True)):
            if hot_block and solver not in (1, 12):
                continue
            options = {"hot_views": hot_views, **({"p": 0.1} if regression else {}),
                       **({"hot_block": 3} if hot_block else {})}  # fmt: skip
            bias = 1.0 if hot_views or hot_block else -1.0
            sub = Subproblem(X_regression if regression else X,
                             y_regression if regression else np.where(y > 0, 1.0, -1.0),
                             np.ones(24), eps=0.5, max_iter=20, bias=bias,
                             options=options)  # fmt: skip
            SOLVERS[solver].solve_on("cuda")(sub, None)
    assert {name for name, _ in launches} == set(names)
    recorded = tmp_path / "launches.pkl"
    recorded.write_bytes(pickle.dumps(sorted(launches, key=repr)))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    run = subprocess.run(
        [sys.executable, "-c", _COMPILE_LAUNCHES, str(recorded)], env=env,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if run.returncode == 3:
        pytest.skip(run.stdout.strip())
    assert run.returncode == 0, run.stderr[-3000:]
    assert len(run.stdout.splitlines()) == 2 * len(launches)


@needs_numba_cuda
def test_simulator_threads_of_a_block_share_one_shared_array(monkeypatch):
    # numba-cuda's simulator makes a shared array on the first thread that asks, unlocked: a
    # slow allocation (numpy.empty made to sleep) lets every thread of a block make its own
    # unless linsvm's lock is in place (it was: the GPU solver's w drifted in 1 run in 10)
    import threading
    import time

    from linsvm.solvers._cuda_compat import prepare_simulator

    try:
        from numba.cuda.simulator.kernelapi import FakeCUDAShared
    except ImportError:
        pytest.skip("numba-cuda's simulator is not importable here")
    prepare_simulator()
    shared = FakeCUDAShared(0)
    real_empty = np.empty

    def slow_empty(*args, **kwargs):
        time.sleep(0.02)
        return real_empty(*args, **kwargs)

    monkeypatch.setattr(np, "empty", slow_empty)
    made = []

    def ask():
        made.append(shared.array(4, np.float64))  # (one line: one shared array)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 8 and all(a is made[0] for a in made)


def test_devices_and_solvers_are_checked():
    X, y = tiny_problem()
    with pytest.raises(InvalidInputError, match="runs on the CPU only"):
        linsvm.train(X, y, solver=2, device="cuda")
    with pytest.raises(InvalidInputError, match=r"-s 30 \(pegasos: Pegasos, .*\) runs on the"):
        linsvm.train(X, y, solver=30, device="cuda")
    with pytest.raises(InvalidInputError, match="device must be one of"):
        linsvm.train(X, y, solver=1, device="tpu")
    assert [n for n, s in SOLVERS.items() if s.cuda_solve_path] == [1, 3, 12, 13]


@needs_numba_cuda
def test_cli_gpu_writes_liblinears_model(tmp_path):
    X, y = tiny_problem(seed=4)
    data = tmp_path / "tiny.svm"
    linsvm.write_libsvm(X, y, data)
    # with the bias feature: -B 1
    assert cli.main(["train", "--gpu", "-q", "-B", "1", "-e", "1e-3", str(data),
                     str(tmp_path / "gpu.model")]) == 0  # fmt: skip
    assert cli.main(["train", "-q", "-B", "1", "-e", "1e-3", str(data),
                     str(tmp_path / "cpu.model")]) == 0  # fmt: skip
    gpu, cpu = linsvm.load_model(tmp_path / "gpu.model"), linsvm.load_model(tmp_path / "cpu.model")
    assert (tmp_path / "gpu.model").read_text().startswith("solver_type L2R_L2LOSS_SVC_DUAL\n")
    scale = np.abs(cpu.coef_).max()
    np.testing.assert_allclose(gpu.coef_, cpu.coef_, atol=1e-3 * scale)
    np.testing.assert_allclose(gpu.bias_weights_, cpu.bias_weights_, atol=1e-3 * scale)


def overshoot_problem(n_rows=32, n_features=20, seed=0):
    """Rows sharing one heavy feature (value 1 in every row, 4 in 5 labels +1) and a few
    light ones: rows stepped together, each reading w before the others' steps, push the
    heavy weight as many times too far as there are of them."""
    rng = np.random.default_rng(seed)
    words = sp.random(n_rows, n_features - 1, density=0.1, random_state=rng, dtype=np.float32)
    heavy = sp.csr_matrix(np.ones((n_rows, 1), dtype=np.float32))
    X = sp.hstack([heavy, words], format="csr")
    X.sort_indices()
    return X, np.where(rng.random(n_rows) < 0.8, 1.0, -1.0)


@needs_numba_cuda
def test_epochs_that_raise_the_dual_objective_are_undone_with_fewer_rows_in_flight():
    X, y = overshoot_problem()
    # one block of 16 rows: under the simulator (blocks one after another) and on a GPU alike,
    # the rows of a block read w before the block's adds
    launch = {"threads_per_row": 1, "rows_per_block": 16, "rows_in_flight": 16}
    sub = Subproblem(X, y, np.ones(X.shape[0]), eps=TIGHT, max_iter=300, bias=-1.0,
                     options=launch)  # fmt: skip

    def recorder(duals, stop_at=None, states=None):
        def hook(progress):
            duals.append(progress.objectives()[1])  # D = -f, from alpha afresh on the host
            if progress.iteration == stop_at:
                states["checkpoint"] = progress.state()
                return False
            return True

        return hook

    # without the safeguard f rises (D falls) from its start, 0 at alpha = 0
    duals = [0.0]
    unguarded = dcd_cuda.solve_l2svc_dual_cuda(
        sub.but(max_iter=4, options={**launch, "monotone": False}), recorder(duals)
    )
    assert unguarded.figures["rows_in_flight"] == 16
    assert unguarded.figures["rows_in_flight_halvings"] == 0
    assert np.min(np.diff(duals)) < -1.0

    # with it: every accepted epoch raises D, R halves, and the optimum is the CPU solver's;
    # a checkpoint carries the rows in flight, and the resumed run continues with them
    duals, states = [0.0], {}
    stopped = dcd_cuda.solve_l2svc_dual_cuda(sub, recorder(duals, stop_at=4, states=states))
    kept_launch = states["checkpoint"]["launch"]
    assert stopped.stop_reason == "interrupted" and kept_launch[2] >= 1
    in_flight_at_stop = stopped.figures["rows_in_flight"]
    assert in_flight_at_stop == kept_launch[0] * kept_launch[1] < 16
    seen_in_flight = []

    def resumed_hook(progress):
        seen_in_flight.append(progress.figures["rows_in_flight"])
        duals.append(progress.objectives()[1])

    resumed = dcd_cuda.solve_l2svc_dual_cuda(sub.but(resume=states["checkpoint"]), resumed_hook)
    assert seen_in_flight[0] <= in_flight_at_stop
    assert resumed.figures["rows_in_flight_halvings"] >= kept_launch[2]
    assert np.min(np.diff(duals)) >= -1e-10 * np.max(np.abs(duals))
    cpu = SOLVERS[1].solve(sub)
    assert resumed.converged
    assert abs(resumed.primal - cpu.primal) <= OPTIMUM_RTOL * cpu.primal
    check_exact_w(X, y, resumed, -1.0)


@needs_numba_cuda
def test_hot_views_step_a_blocks_rows_in_sequence():
    # The overshoot problem's one block of 16 rows, with hot views: the heavy column (and the
    # light ones, each in a tenth of the rows: every feature is hot here) is stepped by the
    # block's rows one after another, so even without the safeguard no epoch raises f, where
    # without views the same launch raises it by more than 1 (the test above).
    X, y = overshoot_problem()
    launch = {"threads_per_row": 1, "rows_per_block": 16, "rows_in_flight": 16,
              "hot_views": True, "flush_rounds": 1}  # fmt: skip
    sub = Subproblem(X, y, np.ones(X.shape[0]), eps=TIGHT, max_iter=300, bias=-1.0,
                     options={**launch, "monotone": False})  # fmt: skip
    duals = [0.0]

    def record(progress):
        duals.append(progress.objectives()[1])

    viewed = dcd_cuda.solve_l2svc_dual_cuda(sub, record)
    # (every feature a row has, in a tenth of the rows or more: all hot)
    assert viewed.figures["hot_views"] == np.count_nonzero(np.bincount(X.indices))
    assert np.min(np.diff(duals)) >= -1e-10 * np.max(np.abs(duals))
    cpu = SOLVERS[1].solve(sub)
    assert viewed.converged and abs(viewed.primal - cpu.primal) <= OPTIMUM_RTOL * cpu.primal
    check_exact_w(X, y, viewed, -1.0)


@needs_numba_cuda
@pytest.mark.parametrize("solver", [3, 12])  # (an SVM and an SVR dual, each loss once)
def test_hot_views_reach_the_cpu_optimum(solver):
    regression = solver in (12, 13)
    X, y = tiny_regression() if regression else tiny_problem(seed=6)
    y = y if regression else np.where(y == y[0], 1.0, -1.0)
    options = {"hot_views": True, "flush_rounds": 3, **({"p": 0.1} if regression else {})}
    sub = Subproblem(X, y, np.ones(X.shape[0]), eps=TIGHT, max_iter=1000, bias=1.0,
                     options=options)  # fmt: skip
    gpu = SOLVERS[solver].solve_on("cuda")(sub, None)
    cpu = SOLVERS[solver].solve(sub)
    assert gpu.converged and gpu.figures["hot_views"] >= 2  # the common column and the bias
    assert gpu.figures["flush_rounds"] == 3
    assert abs(gpu.dual - cpu.dual) <= OPTIMUM_RTOL * abs(cpu.dual)
    if regression:
        check_exact_svr_w(X, gpu, 1.0)
    else:
        check_exact_w(X, y, gpu, 1.0)
    with pytest.raises(InvalidInputError, match="flush_rounds"):
        SOLVERS[solver].solve_on("cuda")(sub.but(options={**options, "flush_rounds": 0}), None)


def block_of(X, n_hot, bias):
    """The hot block's weights (positions in w) of option hot_block=n_hot: the n_hot features
    in most rows and the bias's weight."""
    counts = np.bincount(X.indices, minlength=X.shape[1])
    block = list(np.argsort(-counts, kind="stable")[:n_hot])
    return block + ([X.shape[1]] if bias >= 0 else [])


def check_block_w(X, y_sign, result, bias, block):
    """w is sum_i y_i alpha_i x_i off the block (the block's own weights there), and the gap
    P(w) + f(alpha) is >= 0 up to rounding."""
    w = primal_from_dual(X.indptr, X.indices, X.data, bias, y_sign, result.alpha, result.w.size)
    off = np.ones(w.size, dtype=bool)
    off[block] = False
    np.testing.assert_array_equal(result.w[off], w[off])
    assert result.gap >= -1e-12 * abs(result.primal)
    assert result.figures["device_w_error"] < 1e-5


@needs_numba_cuda
def test_hot_block_reaches_the_cpu_optimum():
    # The block (the common column, three frequent words, the bias) is a primal block set by
    # Newton steps; the rest of w is the dual's. Both meet at the optimum. (Without a bias:
    # the next test.)
    X, y = tiny_problem(seed=6)
    bias = 1.0
    sub = _subproblem(X, y, eps=1e-3, bias=bias, options={"hot_block": 4, "hot_steps": 2})
    gpu = dcd_cuda.solve_l2svc_dual_cuda(sub)
    cpu = SOLVERS[1].solve(sub.but(eps=TIGHT))
    assert gpu.converged and gpu.figures["hot_steps"] == 2
    assert gpu.figures["hot_block"] == 4 + (bias >= 0)
    assert abs(gpu.primal - cpu.primal) <= OPTIMUM_RTOL * cpu.primal
    check_block_w(X, sub.y, gpu, bias, block_of(X, 4, bias))


@needs_numba_cuda
def test_hot_block_of_the_svr_reaches_the_cpu_optimum_and_warm_starts():
    # -s 12: the block's primal is the squared epsilon-insensitive loss's; a warm start runs
    # the cold start's first epoch for the rule's reference, then moves its block to u again
    X, y = tiny_regression(n_rows=40, n_features=200, seed=3)
    bias = 1.0
    options = {"p": 0.1, "hot_block": 4, "hot_steps": 2}
    sub = Subproblem(X, y, np.ones(X.shape[0]), eps=1e-3, max_iter=300, bias=bias,
                     options=options)  # fmt: skip
    gpu = dcd_cuda.solve_l2svr_dual_cuda(sub)
    cpu = SOLVERS[12].solve(sub.but(eps=1e-9))
    assert gpu.converged and gpu.figures["hot_block"] == 5
    assert abs(gpu.primal - cpu.primal) <= OPTIMUM_RTOL * cpu.primal
    from linsvm.objective import svr_weights_from_dual

    w = svr_weights_from_dual(X, bias, gpu.alpha)
    off = np.ones(w.size, dtype=bool)
    off[block_of(X, 4, bias)] = False
    np.testing.assert_array_equal(gpu.w[off], w[off])
    assert gpu.gap >= -1e-12 * abs(gpu.primal)
    warm = dcd_cuda.solve_l2svr_dual_cuda(sub.but(alpha0=gpu.alpha))
    assert warm.converged and warm.figures["gnorm1_init"] > 0
    assert abs(warm.primal - cpu.primal) <= OPTIMUM_RTOL * cpu.primal
    # started at the optimum, it stops at once: the block's rule keeps its cold reference
    at_optimum = dcd_cuda.solve_l2svr_dual_cuda(sub.but(alpha0=cpu.alpha))
    assert at_optimum.converged and at_optimum.n_iter <= 2


@needs_numba_cuda
def test_hot_block_warm_started_at_the_optimum_stops_at_once():
    # the block's rule asks its gradient within eps of the one at w = 0 (TRON's rule), not
    # of the warm start's own (near 0 there: met only by rounding, run to the cap)
    X, y = tiny_problem(n_rows=40, n_features=30, seed=1)
    sub = _subproblem(X, y, eps=1e-2, max_iter=40, bias=1.0,
                      options={"hot_block": 3, "hot_steps": 2})  # fmt: skip
    optimum = SOLVERS[1].solve(sub.but(options={}, eps=1e-9, max_iter=10000))
    cold = dcd_cuda.solve_l2svc_dual_cuda(sub)
    warm = dcd_cuda.solve_l2svc_dual_cuda(sub.but(alpha0=optimum.alpha))
    assert cold.converged and warm.converged
    assert warm.n_iter <= 2 < cold.n_iter


@needs_numba_cuda
def test_hot_block_keeps_the_rows_in_flight_that_a_heavy_feature_undoes():
    # The overshoot problem's launch of 16 rows raises f without the safeguard and is halved
    # with it (the test above); with its heavy column in the block (chosen by the rows in
    # flight: the features in more than 3 of 16 rows' share) no epoch needs undoing.
    X, y = overshoot_problem()
    launch = {"threads_per_row": 1, "rows_per_block": 16, "rows_in_flight": 16}
    sub = Subproblem(X, y, np.ones(X.shape[0]), eps=1e-3, max_iter=300, bias=-1.0,
                     options={**launch, "hot_block": True})  # fmt: skip
    states = {}

    def stop_at_two(progress):
        if progress.iteration == 2:
            states["at 2"] = progress.state()
            return False
        return True

    stopped = dcd_cuda.solve_l2svc_dual_cuda(sub, stop_at_two)
    assert stopped.stop_reason == "interrupted"
    resumed = dcd_cuda.solve_l2svc_dual_cuda(sub.but(resume=states["at 2"]))
    cpu = SOLVERS[1].solve(sub.but(eps=TIGHT))
    assert resumed.converged and resumed.n_iter > 2
    assert resumed.figures["rows_in_flight_halvings"] == 0
    assert resumed.figures["rows_in_flight"] == 16
    counts = np.bincount(X.indices, minlength=X.shape[1])
    block = list(np.flatnonzero(counts > 3 * X.shape[0] / 16))
    assert resumed.figures["hot_block"] == len(block) >= 1
    assert abs(resumed.primal - cpu.primal) <= OPTIMUM_RTOL * cpu.primal
    check_block_w(X, y, resumed, -1.0, block)


@pytest.mark.parametrize("bias", [-1.0, 2.0])
def test_hot_block_rows_and_columns_are_x_on_the_block(monkeypatch, bias):
    # built by row chunks on 3 threads (each chunk's entries of a column after the earlier
    # chunks'): the same as scipy's column selection and transpose, in float32
    from linsvm.parallel import row_chunks

    monkeypatch.setattr(dcd_cuda, "work_chunks", lambda indptr, n: row_chunks(indptr, 3))
    X, _ = tiny_problem(n_rows=300, n_features=200)
    features = np.array([0, 3, 17, 40, 199])
    rows, columns, squares = dcd_cuda.block_rows(X, features, bias, 3)
    expected = X[:, features].astype(np.float64)
    if bias >= 0:
        expected = sp.hstack([expected, np.full((X.shape[0], 1), bias)], format="csr")
    np.testing.assert_array_equal(rows.toarray(), expected.toarray().astype(np.float32))
    np.testing.assert_array_equal(columns.toarray(), rows.toarray().T)
    assert np.all(np.diff(columns.indices[columns.indptr[0]:columns.indptr[1]]) > 0)
    np.testing.assert_allclose(squares, expected.multiply(expected).sum(axis=1).A1, rtol=1e-12)
    # a holder builds them once for the solves that share it (one-vs-rest's)
    holder = dcd_cuda.DeviceRows(X)
    first = holder.block_rows(features, bias)
    assert holder.block_rows(features, bias) is first
    assert holder.block_rows(features[:2], bias) is not first


@needs_numba_cuda
def test_hot_block_options_are_checked():
    X, y = tiny_problem()
    sub = _subproblem(X, y, options={"hot_block": 3})
    for solver in (3, 13):
        options = {"hot_block": 3, **({"p": 0.1} if solver > 3 else {})}
        with pytest.raises(InvalidInputError, match="the L2 losses only"):
            SOLVERS[solver].solve_on("cuda")(sub.but(options=options), None)
    for options, match in (({"hot_block": 3, "hot_views": True}, "choose one"),
                           ({"hot_block": -1}, "hot_block must be"),
                           ({"hot_block": 2.5}, "hot_block must be"),
                           ({"hot_block": 3, "hot_steps": 0}, "hot_steps must be"),
                           # (checked whether or not the block picks a feature)
                           ({"hot_block": True, "hot_steps": 0}, "hot_steps must be"),
                           ({"threads_per_row": 0}, "threads_per_row must be an integer"),
                           ({"rows_per_block": 0}, "rows_per_block must be an integer"),
                           ({"rows_in_flight": 0}, "rows_in_flight must be an integer"),
                           ({"flush_rounds": 0}, "flush_rounds must be an integer"),
                           # (a text read as a truth value would turn a switch on)
                           ({"hot_views": "no"}, "hot_views must be True or False"),
                           ({"monotone": "false"}, "monotone must be True or False"),
                           ({"threads_per_row": 16, "rows_per_block": 32},
                            r"got 16 x 32")):  # fmt: skip
        with pytest.raises(InvalidInputError, match=match):
            dcd_cuda.solve_l2svc_dual_cuda(sub.but(options=options))
    # NumPy's booleans are booleans
    options = {"hot_block": np.True_, "hot_views": np.False_, "monotone": np.True_}
    assert dcd_cuda.solve_l2svc_dual_cuda(sub.but(options=options, max_iter=1)).n_iter == 1


@needs_numba_cuda
def test_a_hot_block_state_resumes_only_with_the_hot_block():
    X, y = tiny_problem(seed=2)
    sub = _subproblem(X, y, options={"hot_block": 3})
    states = {}

    def stop_after_two(progress):
        if progress.iteration == 2:
            states["at 2"] = progress.state()
            return False
        return True

    dcd_cuda.solve_l2svc_dual_cuda(sub, stop_after_two)
    plain = sub.but(options={}, resume=states["at 2"])
    with pytest.raises(InvalidInputError, match="a solve with the hot block"):
        dcd_cuda.solve_l2svc_dual_cuda(plain)


@needs_numba_cuda
def test_values_beyond_float32_are_refused_on_the_gpu(tmp_path, capsys):
    X, y = tiny_problem()
    X = X.astype(np.float64)
    X.data[5] = 3.4028236e38  # (infinite as float32: the GPU's copy of the rows)
    with pytest.raises(InvalidInputError, match=r"X holds 3.4028236e\+38 \(row \d+, column \d+\): "
                       "values of magnitude 3.40282357e\\+38 or more overflow the GPU's float32"):
        linsvm.train(X, y, solver=3, device="cuda")
    with pytest.raises(InvalidInputError, match=r"phi\(X\), the mapped rows, holds"):
        linsvm.train(X, y, solver=3, device="cuda", feature_map=linsvm.features.FeatureMap())
    data = tmp_path / "huge.svm"
    linsvm.write_libsvm(X, y, data)
    assert cli.main(["train", "--gpu", "-s", "3", str(data), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err.strip()
    assert "float32" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "m").exists()


@needs_numba_cuda
def test_cross_validation_on_the_gpu_trains_its_folds_in_turn(tmp_path, capsys):
    # folds side by side would share one GPU (the simulator's threads crashed on it)
    X, y = tiny_problem(n_rows=30, n_features=40)
    one = linsvm.cross_validation(X, y, 3, solver=3, eps=0.1, device="cuda", n_jobs=1)
    three = linsvm.cross_validation(X, y, 3, solver=3, eps=0.1, device="cuda", n_jobs=3)
    np.testing.assert_array_equal(one, three)
    data = tmp_path / "tiny.svm"
    linsvm.write_libsvm(X, y, data)
    assert cli.main(["train", "--gpu", "-q", "-v", "3", "-m", "3", "-s", "3", "-e", "0.1",
                     str(data)]) == 0  # fmt: skip
    assert capsys.readouterr().out.startswith("Cross Validation Accuracy = ")


@needs_numba_cuda
def test_objectives_false_skips_the_objectives_pass_on_the_gpu():
    # as on the CPU: w alone, from the dual variables, the objectives NaN (the caller asked
    # not to pay for them)
    X, y = tiny_problem(n_rows=30, n_features=40)
    for solver, targets in ((1, y), (12, y * 0.5)):
        kept = linsvm.train(X, targets, solver=solver, eps=0.1, device="cuda")
        assert np.isfinite(kept.results_[0].primal)
        skipped = linsvm.train(X, targets, solver=solver, eps=0.1, device="cuda",
                               objectives=False)  # fmt: skip
        result = skipped.results_[0]
        assert np.isnan(result.primal) and np.isnan(result.dual) and np.isnan(result.gap)
        if solver == 12:  # (w = sum_i beta_i x_i)
            coefficients = result.alpha
        else:  # (w = sum_i y_i alpha_i x_i, +1 the first label)
            coefficients = np.where(targets == skipped.labels_[0], 1.0, -1.0) * result.alpha
        np.testing.assert_allclose(result.w, X.T @ coefficients, rtol=1e-12, atol=1e-12)


@needs_numba_cuda
def test_values_within_float32_train_on_the_gpu():
    # float32's largest values and those a cast rounds to it are not refused: w, the rows'
    # norms and the sums are float64 on the GPU too
    X, y = tiny_problem()
    for value in (np.float32(2.5e38), 3.4028235e38):
        X_big = X.astype(type(value))
        X_big.data[5] = value
        model = linsvm.train(X_big, y, solver=3, device="cuda", eps=0.1)
        assert np.all(np.isfinite(model.coef_))


def test_options_of_the_cpu_threads_are_refused_on_the_gpu(tmp_path, capsys):
    # the GPU's order is its own, and no CPU threads share its solve: these would be ignored
    X, y = tiny_problem()
    for option in ({"thread_scheme": "rounds"}, {"bucket_size": 1}, {"buckets_per_group": 2}):
        with pytest.raises(InvalidInputError, match="device='cuda' does not take"):
            linsvm.train(X, y, solver=1, device="cuda", **option)
    data = tmp_path / "tiny.svm"
    linsvm.write_libsvm(X, y, data)
    for flags in (["--thread-scheme", "rounds"], ["--bucket-size", "8"]):
        assert cli.main(["train", "--gpu", *flags, str(data), str(tmp_path / "m")]) == 1
        assert f"--gpu does not go with {flags[0]}" in capsys.readouterr().err
    # the GPU trains phi(X)'s rows: refused before the data are read (none here)
    flags = ["--poly2", "--map-mode", "implicit", "-s", "3"]
    assert cli.main(["train", "--gpu", *flags, str(tmp_path / "none.svm")]) == 1
    assert "--gpu does not go with --map-mode implicit" in capsys.readouterr().err


@needs_numba_cuda
def test_numbas_own_cuda_target_is_a_one_line_error(tmp_path):
    # numba-cuda redirects numba.cuda from a .pth file, which Python reads only in
    # site-packages: here (python -S) numba.cuda is numba's own old target
    import subprocess
    import sysconfig

    script = (
        "import sys; sys.path.append(sys.argv[1]); sys.path.insert(0, sys.argv[2])\n"
        "from linsvm.errors import InvalidInputError\n"
        "from linsvm.solvers import dcd_cuda\n"
        "try:\n    dcd_cuda.cuda_module()\nexcept InvalidInputError as error:\n"
        "    print(error)\n"
    )
    source = os.path.dirname(os.path.dirname(linsvm.__file__))
    run = subprocess.run([sys.executable, "-S", "-c", script, sysconfig.get_paths()["purelib"],
                          source], capture_output=True, text=True, timeout=120)  # fmt: skip
    if "numba.cuda is numba's own" not in run.stdout:
        # (a numba without its old CUDA target: numba.cuda then does not import at all)
        assert "cannot be imported" in run.stdout, run.stdout + run.stderr
    assert run.returncode == 0 and len(run.stdout.strip().splitlines()) == 1


def test_halving_and_acceptance_rules():
    launch = np.array([3, 16, 0])
    seen = []
    while launch[0] * launch[1] > 1:
        dcd_cuda.halve_launch(launch)
        seen.append(int(launch[0] * launch[1]))
    assert seen == [16, 8, 4, 2, 1] and launch[2] == 5  # the blocks first, then the rows
    assert dcd_cuda.objective_kept(-10.0, -10.0 + 1e-13)  # rounding is no rise
    assert not dcd_cuda.objective_kept(-10.0 + 1e-9, -10.0)
    for diverged in (np.inf, np.nan):
        assert not dcd_cuda.objective_kept(diverged, -10.0)


# ------------------------------------------------------------------ the SVR dual (-s 12, -s 13)


def tiny_regression(n_rows=64, n_features=400, seed=0):
    """tiny_problem's rows with real targets: a hidden w's scores plus noise, so that some rows
    fall inside the tube (|residual| <= p) and some outside."""
    X, _ = tiny_problem(n_rows, n_features, seed=seed)
    rng = np.random.default_rng(seed + 100)
    y = X @ rng.normal(size=n_features) + 0.3 * rng.normal(size=n_rows)
    return X, y


def check_exact_svr_w(X, result, bias):
    """w is sum_i beta_i x_i computed afresh; the gap is >= 0 up to rounding; the GPU's f
    (summed on the GPU from its running w) is -dual."""
    from linsvm.objective import svr_weights_from_dual

    np.testing.assert_array_equal(result.w, svr_weights_from_dual(X, bias, result.alpha))
    assert result.gap >= -1e-12 * abs(result.primal)
    assert result.figures["device_w_error"] < 1e-5
    assert abs(result.figures["dual_objective"] + result.dual) <= 1e-6 * abs(result.dual)


@needs_numba_cuda
@pytest.mark.parametrize("solver", [12, 13])
def test_svr_optimum_as_the_cpu_solver(solver):
    X, y = tiny_regression()
    bias = 1.0
    gpu = linsvm.train(X, y, solver=solver, eps=TIGHT, bias=bias, p=0.1, device="cuda")
    cpu = linsvm.train(X, y, solver=solver, eps=TIGHT, bias=bias, p=0.1)
    g, c = gpu.results_[0], cpu.results_[0]
    assert g.converged and g.solver == solver and c.solver == solver
    # the dual optimum; the primal of the dual's w is as close under the L2 loss, while under
    # the L1 loss it trails the dual (measured: relative gaps 5e-7 to 7e-6 at eps = 1e-6, the
    # CPU solver's own 5e-7) and moves with the simulator's interleaving of the rows in flight,
    # which is not the same from run to run (once 5.4e-4 from the CPU's, the duals within 1e-6)
    assert abs(g.dual - c.dual) <= OPTIMUM_RTOL * c.dual
    primal_rtol = OPTIMUM_RTOL if solver == 12 else 2e-3
    assert abs(g.primal - c.primal) <= primal_rtol * c.primal
    check_exact_svr_w(X, g, bias)
    assert 0 < g.figures["n_sv"] < X.shape[0]  # some rows inside the tube
    if solver == 13:  # |beta_i| <= C_i, some at the bound
        assert np.max(np.abs(g.alpha)) <= 1.0 and np.any(np.abs(g.alpha) == 1.0)
    np.testing.assert_array_equal(gpu.coef_[0], g.w[: X.shape[1]])


@needs_numba_cuda
def test_svr_warm_start_hook_and_checkpoint():
    X, y = tiny_regression(seed=6)
    sub = Subproblem(X, y, np.ones(X.shape[0]), eps=1e-4, max_iter=300, bias=1.0)
    states = {}

    def stop_after_two(progress):
        assert progress.alpha.shape == (X.shape[0],) and progress.measure > 0
        if progress.iteration == 2:
            states["at 2"] = progress.state()
            return False
        return True

    stopped = dcd_cuda.solve_l1svr_dual_cuda(sub, stop_after_two)
    assert stopped.stop_reason == "interrupted" and stopped.n_iter == 2
    check_exact_svr_w(X, stopped, 1.0)
    # the checkpoint continues to the optimum, with the stopping rule's reference
    resumed = dcd_cuda.solve_l1svr_dual_cuda(sub.but(resume=states["at 2"]))
    assert resumed.converged and resumed.n_iter > 2
    assert resumed.figures["gnorm1_init"] == stopped.figures["gnorm1_init"]
    assert resumed.figures["gnorm1"] <= 1e-4 * resumed.figures["gnorm1_init"]
    check_exact_svr_w(X, resumed, 1.0)
    # a warm start at the optimum keeps a cold start's reference (its own first epoch's
    # 1-norm would be about eps times smaller) and stops at once; the first epoch's rows read
    # w while others add to it, so the reference is a cold start's in distribution, not bit
    # for bit
    warm = dcd_cuda.solve_l1svr_dual_cuda(sub.but(alpha0=resumed.alpha))
    assert warm.converged and warm.n_iter <= 2
    assert warm.figures["gnorm1_init"] == pytest.approx(stopped.figures["gnorm1_init"], rel=0.05)
    assert warm.dual >= resumed.dual - 1e-12 * abs(resumed.dual)  # started where it ended
    check_exact_svr_w(X, warm, 1.0)


@needs_numba_cuda
def test_svr_estimator():
    from linsvm.estimators import LinearSVR

    X, y = tiny_regression(n_rows=60, n_features=40, seed=7)
    # dual="auto" takes the dual on the GPU (here n_samples > n_features: the CPU takes -s 11)
    est = LinearSVR(loss="squared_epsilon_insensitive", epsilon=0.1, tol=1e-3, device="cuda")
    est.fit(X, y)
    assert est.model_.solver == 12 and est.model_.results_[0].figures["device"]
    cpu = LinearSVR(loss="squared_epsilon_insensitive", epsilon=0.1, tol=1e-3, dual=True)
    np.testing.assert_allclose(est.objective_, cpu.fit(X, y).objective_, rtol=1e-3)
    l1 = LinearSVR(epsilon=0.1, tol=0.1, device="cuda").fit(X, y)
    assert l1.model_.solver == 13 and l1.model_.results_[0].converged


@needs_numba_cuda
def test_cli_gpu_svr_writes_liblinears_model(tmp_path):
    X, y = tiny_regression(seed=8)
    data = tmp_path / "tiny.svm"
    linsvm.write_libsvm(X, y, data)
    args = ["-s", "12", "-q", "-B", "1", "-p", "0.1", "-e", "1e-4", str(data)]
    assert cli.main(["train", "--gpu", *args, str(tmp_path / "gpu.model")]) == 0
    assert cli.main(["train", *args, str(tmp_path / "cpu.model")]) == 0
    text = (tmp_path / "gpu.model").read_text()
    assert text.startswith("solver_type L2R_L2LOSS_SVR_DUAL\n")
    gpu, cpu = linsvm.load_model(tmp_path / "gpu.model"), linsvm.load_model(tmp_path / "cpu.model")
    scale = np.abs(cpu.coef_).max()
    np.testing.assert_allclose(gpu.coef_, cpu.coef_, atol=1e-3 * scale)
    np.testing.assert_allclose(gpu.bias_weights_, cpu.bias_weights_, atol=1e-3 * scale)


_WITHOUT_NVRTC = """
import numpy as np
from numba.cuda.cudadrv import nvrtc
from linsvm.errors import InvalidInputError
from linsvm.solvers import dcd_cuda
# (the dev extras install NVRTC and NVVM; Python 3.11 prints no source line for -c code: a
# marker in the message tells the test to skip)
assert dcd_cuda.compiler_missing() is None, "NO_CUDA_COMPILER"
def not_found():
    raise OSError('Failure finding "libnvrtc.so.13"\\nsearched: ...')
nvrtc.get_supported_ccs = not_found
assert dcd_cuda.compiler_missing() == 'NVRTC: Failure finding "libnvrtc.so.13"'
from numba import cuda
if not cuda.is_available() and dcd_cuda.driver_problem():  # (its reason in the one line)
    try:
        dcd_cuda.cuda_module()
    except InvalidInputError as error:
        assert f"finds none ({dcd_cuda.driver_problem()}; nvidia-smi" in str(error), error
cuda.is_available = lambda: True  # (a GPU, as far as the check before is concerned)
try:
    dcd_cuda.cuda_module()
except InvalidInputError as error:
    print(error)
"""


@needs_numba_cuda
def test_a_gpu_without_the_cuda_compiler_is_a_one_line_error():
    # numba-cuda compiles the kernels at their first launch with NVRTC and NVVM, shared
    # libraries it looks for apart from the driver: missing, they are named before anything
    # is copied to the GPU, not raised from inside numba-cuda's compiler.
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    run = subprocess.run([sys.executable, "-c", _WITHOUT_NVRTC], env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    if run.returncode != 0 and "NO_CUDA_COMPILER" in run.stderr:
        pytest.skip("no CUDA compiler libraries here (the dev extras install them on Linux)")
    assert run.returncode == 0, run.stderr[-2000:]
    message = run.stdout.strip()
    assert len(message.splitlines()) == 1
    assert "cannot compile for the GPU (NVRTC: Failure finding" in message
    assert dcd_cuda.COMPILER_HINT in message
