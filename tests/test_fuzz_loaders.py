"""The loaders under mutated input, in a small slice (``benchmarks/bench_fuzz.py`` runs
20,000 inputs a loader): every input ends in a one-line linsvm error or a result that meets
the loader's contract, with no allocation beyond 64 x the file's size + 16 MiB (tracemalloc).
The mutators are the benchmark's, so neither can rot. Then the inputs that found bugs, kept as
regression tests (built here from a valid file by the same edit)."""

from __future__ import annotations

import io
import json
import struct
import sys
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import linsvm  # noqa: E402
from benchmarks import bench_fuzz  # noqa: E402
from linsvm import CacheFormatError, InvalidInputError, ModelFormatError  # noqa: E402
from linsvm.cli import main  # noqa: E402
from linsvm.io import cache as cache_format  # noqa: E402

# inputs a loader: a few seconds each (the checkpoint loader trains on every input)
SLICE = {"text": 300, "cache": 300, "model": 300, "checkpoint": 120}


@pytest.mark.parametrize("kind", bench_fuzz.KINDS)
def test_mutated_inputs_end_in_one_line_errors_or_correct_results(kind, tmp_path):
    # seed 1: other inputs than the benchmark's (seed 0)
    tally = bench_fuzz.run_slice(kind, SLICE[kind], tmp_path, seed=1)
    failures = [f"#{i} ({what}): {outcome}" for i, what, outcome, _, _ in tally.failures]
    assert not failures, "\n".join(failures[:10])
    # the mutators reach both ends: some inputs load, most are refused
    assert tally.outcomes["ok"] > 0
    assert sum(tally.outcomes.values()) - tally.outcomes["ok"] > SLICE[kind] // 2


# ----------------------------------------------------------------------------- regressions


def _cache(tmp_path, text=b"1 1:0.5 3:2\n-1 2:1\n1 4:3\n") -> bytearray:
    source = tmp_path / "data.txt"
    source.write_bytes(text)
    linsvm.write_cache(source, tmp_path / "data.lsvc", block_bytes=40, n_jobs=1)
    return bytearray((tmp_path / "data.lsvc").read_bytes())


def _block_arrays_at(data: bytearray, k: int):
    fields = cache_format._HEADER.unpack_from(data)
    table_offset = fields[11]
    offset, n_rows, nnz, _ = struct.unpack_from("<4q", data, table_offset + 40 * k)
    return offset, cache_format._layout(n_rows, nnz, 4, 8)


@pytest.mark.parametrize("where", ["label", "value"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_cache_with_valid_crcs_and_a_nan_is_refused_naming_the_row(tmp_path, where, bad):
    """A block whose label or value is NaN/inf, every CRC recomputed: the text reader refuses
    those, so the cache reader does too (they reached training before)."""
    data = _cache(tmp_path)
    offset, layout = _block_arrays_at(data, 1)  # block 1 holds row 1 (0-based)
    at = offset + (layout[0] if where == "label" else layout[3])
    struct.pack_into("<d", data, at, bad)
    bench_fuzz._fix_cache_crcs(data, [1])
    path = tmp_path / "bad.lsvc"
    path.write_bytes(bytes(data))
    with pytest.raises(CacheFormatError, match=r"block 1 is invalid \(row 1: NaN or infinity\)"):
        linsvm.read_libsvm(path)


def test_cache_claiming_1e12_rows_is_refused_before_allocating(tmp_path):
    data = _cache(tmp_path)
    fields = list(cache_format._HEADER.unpack_from(data))
    fields[7] += 10**12  # n_rows, and block 0's count with it
    struct.pack_into("<q", data, fields[11] + 8, struct.unpack_from("<q", data,
                                                                     fields[11] + 8)[0] + 10**12)
    header = cache_format._HEADER.pack(*fields)
    data[:128] = header + cache_format._HEADER_CRC.pack(zlib.crc32(header))
    bench_fuzz._fix_cache_crcs(data, [])
    path = tmp_path / "huge.lsvc"
    path.write_bytes(bytes(data))
    with pytest.raises(CacheFormatError, match="inconsistent block table"):
        linsvm.open_cache(path)


@pytest.mark.parametrize(
    "edit, expected",
    [
        (("label 1 -1", "label 9223372036854775808 -1"), "bad label"),
        (("nr_feature 3", "nr_feature 1_000"), "bad nr_feature"),
        (("bias 1", "bias nan"), "bad bias"),
    ],
)
def test_model_header_numbers_must_be_what_liblinear_reads(tmp_path, edit, expected):
    X = sp.csr_matrix(np.array([[1.0, 0, 2], [0, 1, 0], [1, 1, 0], [0, 0, 1]]))
    model = linsvm.train(X, np.array([1, -1, 1, -1]), bias=1.0)
    path = tmp_path / "m"
    model.save(path)
    text = path.read_text()
    assert edit[0] in text
    path.write_text(text.replace(edit[0], edit[1], 1), encoding="utf-8")
    with pytest.raises(ModelFormatError, match=expected) as info:
        linsvm.load_model(path)
    assert "\n" not in str(info.value)


def _checkpoint(tmp_path, solver=1, stop_after=2, data="binary", **options):
    """A checkpoint of a run stopped after ``stop_after`` iterations (finished if None)."""
    X, y = bench_fuzz.dataset(data)
    path = tmp_path / "run.ckpt"
    hook = None if stop_after is None else (lambda p: p.iteration < stop_after)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        linsvm.train(X, y, solver=solver, checkpoint=path, checkpoint_every=1e-9, hook=hook,
                     n_jobs=1, **options)
    entries, meta = bench_fuzz._open_npz(path.read_bytes())
    return X, y, path, entries, meta


def _resume(X, y, path, solver=1, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return linsvm.train(X, y, solver=solver, resume=path, n_jobs=1, **options)


def _rewrite(path, entries, meta):
    path.write_bytes(bench_fuzz._save_npz(entries, meta))


@pytest.mark.parametrize(
    "name, value",
    [
        ("0/state/active", lambda a: np.where(np.arange(a.size) == 3, 10**6, a)),  # segfault
        ("0/state/active", lambda a: np.where(np.arange(a.size) == 0, -1, a)),
        ("0/state/istate", lambda a: np.array([a[0], -(2**62), 0])),  # ran almost forever
        ("0/state/istate", lambda a: np.array([10**6, a[1], 0])),
        ("0/state/w", lambda a: np.where(np.arange(a.size) == 0, np.nan, a)),
        ("0/state/rec", lambda a: a.reshape(-1)[:-1]),
        ("0/state/bucket_size", lambda a: np.array(0)),
    ],
)
def test_damaged_dual_state_is_refused(tmp_path, name, value):
    X, y, path, entries, meta = _checkpoint(tmp_path)
    entries[name] = value(entries[name])
    _rewrite(path, entries, meta)
    with pytest.raises(InvalidInputError, match="state to resume from") as info:
        _resume(X, y, path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("solver, name, value", [
    (4, "0/state/alpha_index", 7),  # -s 4: a class position beyond the classes
    (4, "0/state/y_index", -1),
    (5, "0/state/index", 99),  # -s 5: a feature position beyond the features
    (32, "0/state/order", 40),  # SGD-S: a row position beyond the rows
])
def test_positions_outside_their_arrays_are_refused(tmp_path, solver, name, value):
    X, y, path, entries, meta = _checkpoint(
        tmp_path, solver=solver, data="multi" if solver == 4 else "binary")
    entries[name] = entries[name].copy()
    entries[name].reshape(-1)[0] = value
    _rewrite(path, entries, meta)
    with pytest.raises(InvalidInputError, match="is damaged"):
        _resume(X, y, path, solver=solver)


@pytest.mark.parametrize("name, value", [("0/state/stop", 256), ("0/state/n_iter", -5),
                                         ("0/state/f", np.array([1.0]))])
def test_damaged_newton_state_is_refused(tmp_path, name, value):
    X, y, path, entries, meta = _checkpoint(tmp_path, solver=2, stop_after=1)
    entries[name] = np.asarray(value)
    _rewrite(path, entries, meta)
    with pytest.raises(InvalidInputError, match="state to resume from"):
        _resume(X, y, path, solver=2)


def test_state_that_overflows_is_an_error_not_a_nan_model(tmp_path):
    """-s 5's margin of row 24 set to 1e308 (finite, so the state check lets it through): the
    weights turn infinite, and train says so instead of returning them."""
    X, y, path, entries, meta = _checkpoint(tmp_path, solver=5)
    entries["0/state/b"] = entries["0/state/b"].copy()
    entries["0/state/b"][24] = 1e308  # the value the fuzzer found
    _rewrite(path, entries, meta)
    with pytest.raises(InvalidInputError, match="became NaN or infinite .resumed from"):
        _resume(X, y, path, solver=5)


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(slots=7),
        lambda m: m["slots"].update({"0": {"finished": True}}),
        lambda m: m["slots"]["0"].update(solver=None),
        lambda m: m["slots"]["0"].update(iterations_before=-1),
        lambda m: m["slots"].update({"5": m["slots"]["0"]}),  # a sub-problem the run lacks
        lambda m: m["slots"]["0"].update(solver=3),  # neither -s 1 nor its fallback
        lambda m: m.pop("slots"),
    ],
)
def test_damaged_meta_is_refused(tmp_path, edit):
    X, y, path, entries, meta = _checkpoint(tmp_path)
    edit(meta)
    _rewrite(path, entries, meta)
    with pytest.raises(InvalidInputError, match="damaged|written for another") as info:
        _resume(X, y, path)
    assert "\n" not in str(info.value)


def test_finished_solution_of_another_shape_is_refused(tmp_path):
    X, y, path, entries, meta = _checkpoint(tmp_path, stop_after=None)
    entries["0/w"] = entries["0/w"][:-1]
    _rewrite(path, entries, meta)
    with pytest.raises(InvalidInputError, match="the solution of sub-problem 0"):
        _resume(X, y, path)


def test_deeply_nested_meta_is_refused(tmp_path):
    X, y, path, entries, _ = _checkpoint(tmp_path)
    _rewrite(path, entries, b"[" * 100000 + b"]" * 100000)
    with pytest.raises(InvalidInputError, match="not a linsvm checkpoint or damaged"):
        _resume(X, y, path)


def test_array_header_claiming_1e12_elements_is_refused_before_allocating(tmp_path):
    X, y, path, _, _ = _checkpoint(tmp_path)
    data = bytearray(path.read_bytes())
    bench_fuzz.claim_huge_array(data, _Choice("0/state/w.npy", (10**12,)), [])
    path.write_bytes(bytes(data))
    with pytest.raises(InvalidInputError, match="a header of float64.1000000000000."):
        _resume(X, y, path)


def test_deflated_member_is_refused_before_inflating(tmp_path):
    """np.load inflated an 80 MB member of an 80 KB file before anything was checked."""
    X, y, path, entries, meta = _checkpoint(tmp_path)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **{**entries, "0/state/w": np.zeros(10**7)},
                        meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    path.write_bytes(buffer.getvalue())
    with pytest.raises(InvalidInputError, match="is not a stored .npy array"):
        _resume(X, y, path)
    with zipfile.ZipFile(path) as archive:  # what was refused: deflated, 80 MB inflated
        assert max(info.file_size for info in archive.infolist()) > 500 * path.stat().st_size


def test_checkpoint_of_other_data_is_refused(tmp_path):
    _, y, path, _, _ = _checkpoint(tmp_path)
    X_other, _ = bench_fuzz.dataset("binary+other")
    with pytest.raises(InvalidInputError, match=r"differs in: the data"):
        _resume(X_other, y, path)


def test_cli_resume_with_a_damaged_checkpoint_is_one_line(tmp_path, capsys):
    X, y, path, entries, meta = _checkpoint(tmp_path)
    entries["0/state/active"] = entries["0/state/active"] * 0 + 10**6
    _rewrite(path, entries, meta)
    data = tmp_path / "train.txt"
    linsvm.write_libsvm(X, y, data)
    code = main(["train", "-q", "--resume", str(path), str(data),
                            str(tmp_path / "model")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "error:" in err
    assert not (tmp_path / "model").exists()


class _Choice:
    """A stand-in for random.Random that makes ``claim_huge_array`` pick ``member`` and
    ``claim``."""

    def __init__(self, member: str, claim: tuple[int, ...]) -> None:
        self.member, self.claim = member, claim

    def choice(self, options):
        options = list(options)
        return self.member if self.member in options else self.claim


REGRESSIONS = sorted((REPO / "tests" / "fuzz_regressions").glob("*.json"))


@pytest.mark.parametrize("found", REGRESSIONS, ids=lambda p: p.stem)
def test_inputs_that_found_bugs_end_in_one_line_errors(found):
    """Files the benchmark's mutators made that failed before the fix (the JSON beside each
    says how it was made, what it did and what it is resumed on): an encrypted, patched or
    newer-version zip member (NotImplementedError / RuntimeError from zipfile), a state whose
    values made a kernel divide by zero (ZeroDivisionError)."""
    info = json.loads(found.read_text())
    kind = found.name.split("-")[0]
    path = found.with_suffix(bench_fuzz.SUFFIX[kind])
    with pytest.raises(linsvm.LinsvmError) as error:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bench_fuzz.LOADERS[kind](str(path), info["context"])
    assert "\n" not in str(error.value)


def test_newton_history_longer_than_max_iter_is_refused(tmp_path):
    """An 80 MB history (10^7 values) in a valid archive: the Newton solver built a Python
    list of it before anything was checked (MemoryError under the address-space limit)."""
    X, y, path, entries, meta = _checkpoint(tmp_path, solver=0, stop_after=1)
    entries["0/state/history"] = np.zeros(5 * 1001)  # a row per iteration, cap 1000
    _rewrite(path, entries, meta)
    with pytest.raises(InvalidInputError, match="state to resume from is damaged"):
        _resume(X, y, path, solver=0)
