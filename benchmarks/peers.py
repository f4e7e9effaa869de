"""The tools compared by the training harness, behind one small interface.

Each tool solves the same problem on the same data: the L2-regularised L1-loss or L2-loss linear
SVM without bias, ``P(w) = 1/2 w'w + C sum_i loss(y_i w'x_i)``, C = 1. A tool returns its ``w``
oriented so that a positive ``w'x`` means label +1; the harness scores every ``w`` with the one
definition ``linsvm.objective.primal_value``.

- ``LinsvmTool``: ``linsvm.train`` (solver 1 / 3).
- ``LiblinearTool``: liblinear-official's ``train`` on a ``problem`` built before timing
  (``-s 1`` / ``-s 3``). LIBLINEAR 2.50 caps its dual solvers at 300 outer iterations; for
  ``-s 1`` it then switches to the primal solver ``-s 2`` (that time is part of its run).
- ``SnapMLTool``: ``snapml.SupportVectorMachine`` with ``n_jobs=1`` (or more threads, or a GPU,
  by its parameters), ``fit_intercept=False`` and ``regularizer = 1 / C``: its objective is
  ``regularizer/2 w'w + sum_i loss_i``, i.e. P(w)/C, so the same minimiser (checked by the
  primal values the harness computes). Its ``fit`` converts the CSR arrays to float32 / uint32
  / uint64 on every call; that is part of its time.
"""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from linsvm.objective import LOSS_HINGE, LOSS_SQUARED_HINGE

LOSS_NAMES = {LOSS_SQUARED_HINGE: "L2-loss (squared hinge), -s 1",
              LOSS_HINGE: "L1-loss (hinge), -s 3"}
LIBLINEAR_SOLVER = {LOSS_SQUARED_HINGE: 1, LOSS_HINGE: 3}

EPS_GRID = (1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4)
SNAP_TOL_GRID = (0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4, 3e-5, 1e-5, 1e-6)
LINSVM_SWEEP_MAX_ITER = 1000
SNAP_SWEEP_MAX_ITER = 10000


@dataclass(frozen=True)
class Setting:
    """One way to run a tool: a label for the tables and the keyword parameters.

    ``same_as_default``: "always" when this is exactly the default run; "if_converged" when it
    differs from the default only by a larger iteration cap (so a default run that converged is
    this run too); "never" otherwise.
    """

    label: str
    params: tuple[tuple[str, float], ...]
    same_as_default: str = "never"

    def get(self, key: str, default=None):
        return dict(self.params).get(key, default)


@dataclass
class FitResult:
    """One timed training run."""

    seconds: float
    w: np.ndarray  # float64 (n_features,), positive side is label +1
    n_iter: int | None = None
    converged: bool | None = None
    notes: list[str] = field(default_factory=list)


class Tool:
    """A peer: prepare once per dataset (untimed), then timed fits at several settings."""

    name = "tool"
    # The random seed of the next fit: a harness runs repeat k of a setting with seed k, so
    # that repeats draw other orders, as LIBLINEAR's do (its rand() is never reseeded); a
    # target is reached when every repeat reaches it.
    seed = 1

    def supports(self, loss: int) -> bool:
        return loss in (LOSS_HINGE, LOSS_SQUARED_HINGE)

    def prepare(self, X: sp.csr_matrix, y: np.ndarray) -> None:
        self.X = X
        self.y = y

    def release(self) -> None:
        """Drop per-dataset state."""
        self.X = self.y = None

    def warm_up(self) -> None:
        """Load libraries / compile kernels on a tiny problem (untimed)."""
        rng = np.random.default_rng(0)
        X = sp.random(200, 30, density=0.2, format="csr", random_state=1)
        y = np.where(rng.random(200) < 0.5, 1.0, -1.0)
        y[:2] = (1.0, -1.0)
        self.prepare(X, y)
        for loss in (LOSS_SQUARED_HINGE, LOSS_HINGE):
            if self.supports(loss):
                self.fit(loss, self.default_setting(loss))
        self.release()

    def default_setting(self, loss: int) -> Setting:
        raise NotImplementedError

    def sweep(self, loss: int) -> list[Setting]:
        """Settings from loose to tight."""
        raise NotImplementedError

    def fit(self, loss: int, setting: Setting) -> FitResult:
        raise NotImplementedError

    def version(self) -> str:
        return ""


class LinsvmTool(Tool):
    name = "linsvm"

    def default_setting(self, loss: int) -> Setting:
        return Setting("default (eps=0.1, max_iter=300)", ())

    def sweep(self, loss: int) -> list[Setting]:
        return [Setting(f"eps={eps:g}", (("eps", eps), ("max_iter", LINSVM_SWEEP_MAX_ITER)),
                        "if_converged" if eps == 0.1 else "never") for eps in EPS_GRID]

    # what every fit passes to linsvm.train besides the solver, C = 1 and the setting
    train_options: dict = {}

    def fit(self, loss: int, setting: Setting) -> FitResult:
        import linsvm

        solver = LIBLINEAR_SOLVER[loss]
        kwargs = dict(setting.params)
        if "max_iter" in kwargs:
            kwargs["max_iter"] = int(kwargs["max_iter"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", linsvm.ConvergenceWarning)
            t0 = time.perf_counter()
            model = linsvm.train(self.X, self.y, solver=solver, C=1.0, seed=self.seed,
                                 **self.train_options, **kwargs)  # fmt: skip
            seconds = time.perf_counter() - t0
        sign = 1.0 if model.labels_[0] == 1.0 else -1.0
        result = model.results_[0]
        notes = [f"hit max_iter={kwargs.get('max_iter', 300)}"] if caught else []
        if result.solver != solver:
            notes.append(f"fell back to -s {result.solver}")
        return FitResult(seconds, self.weights(loss, setting, model, sign), result.n_iter,
                         result.converged, notes)  # fmt: skip

    def weights(self, loss: int, setting: Setting, model, sign: float) -> np.ndarray:
        """The fitted w as the harness scores it (the positive class +1)."""
        return sign * model.coef_[0]

    def version(self) -> str:
        import linsvm

        return linsvm.__version__


_LIBLINEAR_ITER = re.compile(r"#iter\s*=\s*(\d+)")


def train_liblinear_logged(prob, param) -> tuple[float, object, str]:
    """liblinear-official's ``train`` on a prepared problem, its messages collected instead of
    printed (the few lines that tell an iteration count or the cap): (seconds of ``train``,
    the model, the messages)."""
    from liblinear import liblinear as ll
    from liblinear.liblinearutil import train

    messages: list[bytes] = []
    param.print_func = ll.PRINT_STRING_FUN(lambda s: messages.append(s))
    t0 = time.perf_counter()
    model = train(prob, param)
    seconds = time.perf_counter() - t0
    return seconds, model, b"".join(messages).decode(errors="replace")


class LiblinearTool(Tool):
    name = "LIBLINEAR"

    def prepare(self, X: sp.csr_matrix, y: np.ndarray) -> None:
        from liblinear.liblinearutil import problem

        self.n_features = X.shape[1]
        self.problem = problem(np.ascontiguousarray(y, dtype=np.float64),
                               sp.csr_matrix(X, dtype=np.float64))

    def release(self) -> None:
        self.problem = None

    def default_setting(self, loss: int) -> Setting:
        return Setting("default (-e 0.1)", (("eps", 0.1),))

    def sweep(self, loss: int) -> list[Setting]:
        return [Setting(f"-e {eps:g}", (("eps", eps),),
                        "always" if eps == 0.1 else "never") for eps in EPS_GRID]

    def fit(self, loss: int, setting: Setting) -> FitResult:
        from liblinear.liblinearutil import parameter

        solver = LIBLINEAR_SOLVER[loss]
        param = parameter(f"-s {solver} -c 1 -e {setting.get('eps'):.17g}")
        # LIBLINEAR's few progress lines (iteration count, cap warning) through its print
        # hook instead of -q: a handful of calls per run.
        seconds, model, text = train_liblinear_logged(self.problem, param)
        iters = [int(v) for v in _LIBLINEAR_ITER.findall(text)]
        notes = []
        capped = "reaching max number of iterations" in text
        if capped:
            notes.append("hit the 300-iteration cap" +
                         (", switched to -s 2" if solver == 1 else ""))
        nr_feature = model.get_nr_feature()
        w = np.ctypeslib.as_array(model.w, shape=(nr_feature,)).astype(np.float64, copy=True)
        if nr_feature < self.n_features:
            w = np.concatenate([w, np.zeros(self.n_features - nr_feature)])
        if model.get_labels()[0] != 1:
            w = -w
        return FitResult(seconds, w, iters[0] if iters else None, not capped, notes)

    def version(self) -> str:
        from .common import package_version

        return package_version("liblinear-official")


class SnapMLTool(Tool):
    """Snap ML's SupportVectorMachine on ``n_jobs`` CPU threads, or on the first GPU."""

    name = "Snap ML"

    def __init__(self, n_jobs: int = 1, use_gpu: bool = False, name: str | None = None) -> None:
        self.n_jobs = n_jobs
        self.use_gpu = use_gpu
        if name is not None:
            self.name = name

    def default_setting(self, loss: int) -> Setting:
        return Setting("default (tol=1e-3, max_iter=1000)", ())

    def sweep(self, loss: int) -> list[Setting]:
        return [Setting(f"tol={tol:g}", (("tol", tol), ("max_iter", SNAP_SWEEP_MAX_ITER)),
                        "if_converged" if tol == 1e-3 else "never") for tol in SNAP_TOL_GRID]

    def fit(self, loss: int, setting: Setting) -> FitResult:
        from snapml import SupportVectorMachine

        kwargs = dict(setting.params)
        if "max_iter" in kwargs:
            kwargs["max_iter"] = int(kwargs["max_iter"])
        max_iter = kwargs.get("max_iter", 1000)
        model = SupportVectorMachine(
            loss="hinge" if loss == LOSS_HINGE else "squared_hinge",
            regularizer=1.0,  # = 1 / C with C = 1
            n_jobs=self.n_jobs, fit_intercept=False, random_state=self.seed,
            **({"use_gpu": True, "device_ids": [0]} if self.use_gpu else {}), **kwargs,
        )
        t0 = time.perf_counter()
        model.fit(self.X, self.y)
        seconds = time.perf_counter() - t0
        w = np.asarray(model.coef_, dtype=np.float64).ravel().copy()
        # scikit-learn's convention: coef_ is positive for classes_[1]
        if list(model.classes_) != [-1.0, 1.0]:
            raise RuntimeError(f"unexpected Snap ML classes {model.classes_}")
        n_iter = int(getattr(model, "n_iter_", -1))
        converged = n_iter < max_iter if n_iter >= 0 else None
        notes = [] if converged in (True, None) else [f"hit max_iter={max_iter}"]
        return FitResult(seconds, w, n_iter if n_iter >= 0 else None, converged, notes)

    def version(self) -> str:
        from .common import package_version

        return package_version("snapml")


def available_tools() -> tuple[list[Tool], list[str]]:
    """(tools that import, notes about those that do not), LIBLINEAR, Snap ML, linsvm order."""
    tools: list[Tool] = []
    notes: list[str] = []
    try:
        import liblinear.liblinearutil  # noqa: F401

        tools.append(LiblinearTool())
    except ImportError as exc:
        notes.append(f"LIBLINEAR skipped: {exc}")
    try:
        import snapml  # noqa: F401

        tools.append(SnapMLTool())
    except ImportError as exc:
        notes.append(f"Snap ML skipped: {exc}")
    tools.append(LinsvmTool())
    return tools, notes
