"""Checkpoints: the state of a training run, saved atomically, to resume to the same model.

A checkpoint holds, for each sub-problem of the run (one per weight vector of one-vs-rest, or
the single problem of the other solvers), either its finished ``Solution`` or the complete
state of its solver at the end of some outer iteration (``Progress.state()``), with which
solver was running (a fallback may have taken over) and the iterations done before it. A run
resumed from it gives the model the uninterrupted run would have given (same seed): finished
sub-problems are taken as they are and the others continue from their states exactly.

The file is a NumPy ``.npz`` archive of plain arrays (read with ``allow_pickle=False``: loading
it never runs code), written to a temporary file and renamed over the target, so a crash or a
second signal never leaves a half-written checkpoint. Its ``meta`` entry (JSON) records the
problem's fingerprint (shape, non-zeros, a checksum of the data, labels, weights) and the
options that decide the result; a checkpoint of another problem is refused with a one-line
error naming what differs. One option may grow: a larger ``max_iter`` resumes a run none of
whose sub-problems reached the old cap (LIBLINEAR's solvers, whose ``max_iter`` is only a cap:
the run then goes as an uninterrupted one with the larger cap).

One format serves every place a run trains in: ``meta["place"]`` says which ("memory": the
sub-problems' solver states above; "blocks": training in blocks from disk, whose arrays are
the run's W, alpha and outer iteration, ``runner.train_blocks``), and a checkpoint resumed
in another place is refused in one line. ``write_checkpoint`` and ``read_checkpoint`` are the
file's two ends for every place.
"""

from __future__ import annotations

import io
import json
import math
import os
import threading
import time
import zipfile
import zlib
from typing import Any

import numpy as np

from .data import is_integer
from .errors import InvalidInputError
from .io._atomic import atomic_write_bytes, check_writable
from .solvers._base import Hook, Progress, Solution, check_number

FORMAT = "linsvm-checkpoint"
VERSION = 1
# Where a run trains, as its checkpoint records it, and how a message names it.
PLACES = {"memory": "in memory", "blocks": "in blocks (--memory)"}
# Block checkpoints written before the one format (same arrays, their own format name).
_OLD_BLOCKS_FORMAT = ("linsvm-blocks-checkpoint", 2)
# Entries of a run's meta recorded only where they apply (a GPU's state; the threads of a
# threaded solve), so that other runs' checkpoints stay as they were: a resume compares them
# where either run has one.
OPTIONAL_META = ("device", "threads", "newton_threads")
# Periodic checkpoints of `linsvm train --checkpoint FILE` are this many seconds apart unless
# `--every` says otherwise.
DEFAULT_EVERY_SECONDS = 60.0


def fingerprint(X, y, sample_weight) -> dict[str, Any]:
    """What identifies a training set cheaply but surely: shape, non-zeros and checksums."""
    crc = 0
    for part in (X.indptr, X.indices, X.data):
        crc = zlib.crc32(np.ascontiguousarray(part).view(np.uint8), crc)
    labels = np.asarray(y)
    if labels.dtype.kind in "biuf":
        label_crc = zlib.crc32(np.ascontiguousarray(labels, dtype=np.float64))
    else:  # strings, objects: by their text
        label_crc = zlib.crc32(repr(labels.tolist()).encode())
    weight_crc = (
        0 if sample_weight is None else zlib.crc32(np.ascontiguousarray(sample_weight, float))
    )
    return {
        "shape": list(X.shape),
        "nnz": int(X.nnz),
        "data_crc32": crc,
        "labels_crc32": label_crc,
        "sample_weight_crc32": weight_crc,
    }


def _scalar(value: Any) -> Any:
    """A figure as JSON can hold it (None for what it cannot)."""
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float | np.floating):
        value = float(value)
        return value if math.isfinite(value) else repr(value)  # "nan", "inf": float() reads them
    if isinstance(value, np.integer | np.bool_):
        return value.item()
    return None


def check_checkpoint_path(path: str | os.PathLike) -> None:
    """Refuse, before any training, a checkpoint path that cannot be written (its folder
    missing or read-only, a folder): the first write would fail after the work."""
    try:
        check_writable(path)
    except OSError as exc:
        raise InvalidInputError(f"checkpoint {os.fsdecode(os.fspath(path))}: "
                                f"{exc.strerror or exc}") from None  # fmt: skip


_BLOCKS = "--memory (or the cache file's blocks)"

# What a user changed, for each entry of a checkpoint's meta that can differ between runs
# (the command line's option / the API's parameter).
_WHAT_DIFFERS = {
    "solver": "-s (solver)", "C": "-c (C)", "eps": "-e (eps)", "bias": "-B (bias)",
    "max_iter": "--max-iter (max_iter)", "max_outer": "--max-iter (max_outer)",
    "regularize_bias": "-R (regularize_bias)", "seed": "--seed (seed)",
    "options": "the solver's options (-p, --no-shrinking, --bucket-size, ...)",
    "feature_map": "the feature map (--poly2, --gamma, --coef0, --hash-bits)",
    "implicit_map": "--map-mode (map_mode)", "class_weight": "-wi (class_weight)",
    "warm_start": "the warm start (warm_start, init_sol)",
    "data": "the data (or the instance weights, -W)",
    "threads": "-m (n_jobs)", "newton_threads": "-m (n_jobs)", "device": "the device",
    "inner_iter": "inner_iter", "selective": "selective", "epochs": "the epoch mode",
    # (the blocks of a run in blocks follow --memory, and the stored blocks of its cache)
    "groups": _BLOCKS, "units": _BLOCKS, "support_capacity": _BLOCKS, "overhead": _BLOCKS,
}


# The solvers whose max_iter only caps their outer iterations (LIBLINEAR's), so that a run
# resumed with a larger one goes as an uninterrupted run with it; linsvm's own (30-40) are
# left out: the SGD programs' epochs also set their step budget and t0's calibration.
_CAP_ONLY_SOLVERS = (0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21)


def what_differs(names) -> str:
    """The options a user changed, for the meta entries ``names`` that differ (each once)."""
    return ", ".join(dict.fromkeys(_WHAT_DIFFERS.get(name, name) for name in names))


class Checkpointer:
    """Collects the sub-problems' states and writes them to ``path`` every ``every`` seconds
    (at a sub-problem's end too, when that long has passed), at the run's end and when it is
    stopped. Each write holds every finished sub-problem: one at each end made a run of 105
    classes write 2.8 GB for a file of 52 MB."""

    def __init__(self, path: str | os.PathLike, every: float, meta: dict[str, Any]) -> None:
        self.every = check_number(
            every, 0.0, "checkpoint interval must be a number of seconds, got {value!r}",
            "checkpoint interval must be > 0 seconds, got {value}", strict=True,
        )  # fmt: skip
        check_checkpoint_path(path)
        self.path = os.fspath(path)
        self.meta = meta
        self.lock = threading.Lock()
        self.running: dict[int, tuple[int, int, dict[str, np.ndarray]]] = {}
        self.finished: dict[int, Solution] = {}
        self.last_write = time.monotonic()

    def hook(self, slot: int, solver: int, iterations_before: int, stopping) -> Hook:
        """The hook of sub-problem ``slot``: captures its state when a checkpoint is due or a
        stop was requested (``stopping()``), before the stop takes effect."""

        def capture(progress: Progress) -> None:
            if not (stopping() or time.monotonic() - self.last_write >= self.every):
                return
            state = progress.state()
            with self.lock:
                self.running[slot] = (solver, iterations_before, state)
                self._write()

        capture.every_iteration = False
        return capture

    def resume_from(self, resumed: Resume) -> None:
        """Start from a loaded checkpoint's sub-problems: those it had finished stay in every
        write, and those it had running until they are captured again (else a resumed run's
        checkpoint lost what the run before had done)."""
        with self.lock:
            self.finished.update(resumed.finished)
            self.running.update(resumed.running)

    def finish(self, slot: int, solution: Solution) -> None:
        with self.lock:
            self.running.pop(slot, None)
            self.finished[slot] = solution
            if time.monotonic() - self.last_write >= self.every:
                self._write()

    def write(self) -> None:
        with self.lock:
            self._write()

    def _write(self) -> None:
        arrays: dict[str, np.ndarray] = {}
        slots: dict[str, Any] = {}
        for slot, sol in self.finished.items():
            arrays[f"{slot}/w"] = sol.w
            if sol.alpha is not None:
                arrays[f"{slot}/alpha"] = sol.alpha
            figures = {}
            for name, value in sol.figures.items():
                if isinstance(value, np.ndarray):
                    arrays[f"{slot}/figure/{name}"] = value
                elif _scalar(value) is not None:
                    figures[name] = _scalar(value)
            slots[str(slot)] = {
                "finished": True,
                "n_iter": sol.n_iter,
                "converged": sol.converged,
                "stop_reason": sol.stop_reason,
                "primal": _scalar(sol.primal),
                "dual": _scalar(sol.dual),
                "gap": _scalar(sol.gap),
                "solver": sol.solver,
                "figures": figures,
            }
        for slot, (solver, before, state) in self.running.items():
            for name, value in state.items():
                arrays[f"{slot}/state/{name}"] = value
            slots[str(slot)] = {"finished": False, "solver": solver, "iterations_before": before}
        write_checkpoint(self.path, "memory", dict(self.meta, slots=slots), arrays)
        self.last_write = time.monotonic()


def write_checkpoint(path: str, place: str, meta: dict[str, Any],
                     arrays: dict[str, np.ndarray]) -> None:  # fmt: skip
    """Write a checkpoint atomically: ``arrays`` and ``meta`` (JSON) with the format, its
    version and the run's ``place`` (``PLACES``)."""
    meta = dict(meta, format=FORMAT, version=VERSION, place=place)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    atomic_write_bytes(path, buffer.getvalue())


def read_checkpoint(
    path: str, place: str, meta_only: bool = False
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(meta, arrays) of the checkpoint at ``path`` written by a run in ``place``, each array
    checked before it is read (``_read_arrays``); a file that is not one, is damaged or is of
    a run in another place is refused in one line (InvalidInputError). ``meta_only``: the
    other arrays are not read (empty dict)."""
    try:
        arrays = _read_arrays(path, ("meta",) if meta_only else None)
        meta = json.loads(arrays.pop("meta").tobytes().decode())
    except FileNotFoundError:
        raise InvalidInputError(f"checkpoint {path}: no such file") from None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, RecursionError,
            NotImplementedError) as error:  # fmt: skip  (zipfile: features it lacks)
        what = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InvalidInputError(
            f"checkpoint {path}: not a linsvm checkpoint or damaged ({what})"
        ) from None
    if not isinstance(meta, dict):
        raise InvalidInputError(f"checkpoint {path}: not a linsvm checkpoint")
    if (meta.get("format"), meta.get("version")) == _OLD_BLOCKS_FORMAT:
        meta = dict(meta, format=FORMAT, version=VERSION, place="blocks")
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise InvalidInputError(f"checkpoint {path}: not a linsvm checkpoint")
    written = meta.setdefault("place", "memory")  # (written before places were recorded)
    if written != place:
        where = PLACES.get(written, repr(written))
        raise InvalidInputError(
            f"checkpoint {path}: written by training {where}; resume it there "
            f"(this run trains {PLACES[place]})"
        )
    return meta, arrays


# What a checkpoint's arrays may be: numbers and flags (no objects, strings or records).
_ARRAY_KINDS = "biuf"


def _read_arrays(path: str, names=None) -> dict[str, np.ndarray]:
    """The archive's arrays by name (``names``: only those), each checked before it is read:
    a stored member (as ``np.savez`` writes them) whose ``.npy`` header describes exactly the
    bytes that follow, so that no header can make the reader allocate more than the file
    holds."""
    arrays = {}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if names is not None and info.filename[: -len(".npy")] not in names:
                continue
            # stored, unencrypted, no patch data (flag bits 0, 5, 6), a version zipfile reads
            if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy") \
                    or info.flag_bits & 0x61 or info.extract_version > zipfile.MAX_EXTRACT_VERSION:
                raise ValueError(f"member {info.filename!r} is not a stored .npy array")
            with archive.open(info) as member:
                try:
                    version = np.lib.format.read_magic(member)
                    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                                   else np.lib.format.read_array_header_2_0)
                    shape, fortran, dtype = read_header(member)
                except Exception as error:
                    # NumPy parses the header's text with Python's tokenizer, whose errors
                    # (tokenize.TokenError, SyntaxError, ...) are not all ValueErrors
                    raise ValueError(f"member {info.filename!r}: bad .npy header "
                                     f"({type(error).__name__})") from None
                n_bytes = math.prod(shape) * dtype.itemsize
                if dtype.kind not in _ARRAY_KINDS or dtype.fields is not None \
                        or n_bytes != info.file_size - member.tell():
                    raise ValueError(f"member {info.filename!r}: a header of {dtype}"
                                     f"{list(shape)} over {info.file_size} bytes")
                # read to the end, so that the zip's CRC-32 of the member is checked
                data = member.read()
            array = np.frombuffer(data, dtype=dtype, count=math.prod(shape)).copy()
            arrays[info.filename[: -len(".npy")]] = array.reshape(
                shape, order="F" if fortran else "C")
    return arrays


def _integer(value: Any, low: int = 0) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def _figure(value: Any) -> bool:
    """A number as `_scalar` writes it: a JSON number, or the text of a non-finite one."""
    if isinstance(value, str):
        return value in ("nan", "inf", "-inf")
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_slots(meta: Any) -> str | None:
    """What is wrong with the checkpoint's meta beyond its fingerprint (None: nothing)."""
    if not isinstance(meta, dict) or not isinstance(meta.get("slots"), dict):
        return "no slots"
    for key, info in meta["slots"].items():
        if not (key.isascii() and key.isdigit()) or len(key) > 9 or not isinstance(info, dict):
            return f"slot {key!r}"
        if info.get("finished") is True:
            ok = (_integer(info.get("n_iter")) and isinstance(info.get("converged"), bool)
                  and isinstance(info.get("stop_reason"), str) and _integer(info.get("solver"))
                  and all(_figure(info.get(name)) for name in ("primal", "dual", "gap"))
                  and isinstance(info.get("figures"), dict))  # fmt: skip
        else:
            ok = (info.get("finished") is False and _integer(info.get("solver"))
                  and _integer(info.get("iterations_before")))  # fmt: skip
        if not ok:
            return f"slot {key}"
    return None


class Resume:
    """A loaded checkpoint: per sub-problem, its finished Solution or its solver state.

    What is loaded is checked for what could make the run misbehave rather than fail with a
    one-line error: every array a plain number array whose header matches its bytes (read
    without trusting its claimed size), the meta's fields of the expected types; `check`
    then ties it to the run (fingerprint, options, sub-problems and solvers), and each
    solver checks the state it resumes from (`solvers._base.restore_state`).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        meta, entries = read_checkpoint(self.path, "memory")
        problem = _check_slots(meta)
        if problem is not None:
            raise InvalidInputError(f"checkpoint {self.path}: damaged ({problem})")
        self.meta = meta
        self.finished: dict[int, Solution] = {}
        self.running: dict[int, tuple[int, int, dict[str, np.ndarray]]] = {}
        for key, info in meta["slots"].items():
            slot = int(key)
            mine = {
                name[len(key) + 1 :]: value
                for name, value in entries.items()
                if name.startswith(f"{key}/")
            }
            if info["finished"]:
                if "w" not in mine:
                    raise InvalidInputError(f"checkpoint {self.path}: damaged (slot {key} "
                                            "has no weights)")
                figures: dict[str, Any] = dict(info["figures"])
                for name, value in mine.items():
                    if name.startswith("figure/"):
                        figures[name[len("figure/") :]] = value
                self.finished[slot] = Solution(
                    w=mine["w"],
                    n_iter=info["n_iter"],
                    converged=info["converged"],
                    stop_reason=info["stop_reason"],
                    primal=float(info["primal"]),
                    dual=float(info["dual"]),
                    gap=float(info["gap"]),
                    alpha=mine.get("alpha"),
                    solver=info["solver"],
                    figures=figures,
                )
            else:
                state = {
                    name[len("state/") :]: value
                    for name, value in mine.items()
                    if name.startswith("state/")
                }
                self.running[slot] = (info["solver"], info["iterations_before"], state)

    def _larger_cap(self, meta: dict[str, Any]) -> bool:
        """Whether the run's ``max_iter`` (an explicit number, larger than the checkpoint's
        explicit one) can resume it: only if no sub-problem reached the old cap, since the
        cap is the only thing it changes before it is reached. A sub-problem finished without
        converging (at its cap), or one whose dual solver handed over to its primal fallback
        at the cap, would have gone on under the new one: refused, saying so."""
        old, new = self.meta.get("max_iter"), meta.get("max_iter")
        if not (is_integer(old) and is_integer(new) and new > old
                and meta.get("solver") in _CAP_ONLY_SOLVERS):
            return False
        at_cap = [slot for slot, sol in self.finished.items()
                  if not sol.converged or "dual_n_iter" in sol.figures]  # fmt: skip
        at_cap += [slot for slot, (solver, _, _) in self.running.items()
                   if solver != meta.get("solver")]  # fmt: skip
        if at_cap:
            raise InvalidInputError(
                f"checkpoint {self.path}: sub-problem {min(at_cap)} reached the checkpoint's "
                f"--max-iter {old}; a larger one resumes only a run whose sub-problems are "
                "all below their cap (train again with the larger --max-iter)"
            )
        return True

    def check_slots(self, n_slots: int, solvers: tuple[int, ...], shape_of_w: tuple[int, ...],
                    figures: tuple[str, ...] = ()) -> None:
        """Refuse sub-problems the run does not have, solvers it would not run (``solvers``:
        its own and its fallback), finished weights of another shape than ``shape_of_w`` or
        not finite, and finished solutions without the finite ``figures`` the model takes
        from them (one-class: rho), naming the first."""
        for slot in sorted({*self.finished, *self.running}):
            if slot >= n_slots:
                raise InvalidInputError(f"checkpoint {self.path}: damaged (sub-problem {slot} "
                                        f"of a run of {n_slots})")
        for slot, (solver, _, _) in self.running.items():
            if solver not in solvers:
                raise InvalidInputError(f"checkpoint {self.path}: damaged (sub-problem {slot} "
                                        f"ran solver {solver})")
        for slot, sol in self.finished.items():
            alpha_ok = sol.alpha is None or (sol.alpha.dtype == np.float64
                                             and bool(np.isfinite(sol.alpha).all()))
            figures_ok = all(
                isinstance(sol.figures.get(name), int | float) and math.isfinite(sol.figures[name])
                for name in figures
            )
            if sol.solver not in solvers or sol.w.shape != shape_of_w or not figures_ok \
                    or sol.w.dtype != np.float64 or not np.isfinite(sol.w).all() or not alpha_ok:
                raise InvalidInputError(f"checkpoint {self.path}: damaged (the solution of "
                                        f"sub-problem {slot})")

    def check(self, meta: dict[str, Any]) -> None:
        """Refuse a checkpoint of another problem or of other options, naming what differs
        (the entries a run records only when they apply count where either run has them).
        A larger ``max_iter`` than the checkpoint's is taken where the run it gives is the
        one an uninterrupted run with that cap gives (``_larger_cap``)."""
        names = list(meta) + [name for name in OPTIONAL_META
                              if name in self.meta and name not in meta]  # fmt: skip
        differ = [
            name
            for name in names
            if json.loads(json.dumps(meta.get(name))) != self.meta.get(name)
        ]
        if "max_iter" in differ and self._larger_cap(meta):
            differ.remove("max_iter")
        if differ:
            raise InvalidInputError(
                f"checkpoint {self.path} was written for another problem or other options "
                f"(differs in: {what_differs(differ)})"
            )
