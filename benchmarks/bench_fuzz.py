"""Fuzzed loaders: every file a user may be handed, mutated, ends in a one-line error or a
correct result.

Run from the repository root::

    python -m benchmarks.bench_fuzz [--inputs 20000] [--kinds text,cache,model,checkpoint]
        [--seed 0] [--timeout 30] [--failures DIR] [--out benchmarks/RESULTS-fuzz.md]

and, coverage-guided, one loader at a time with atheris installed in a separate environment
(not a dependency; e.g. ``python -m venv .venv-fuzz && .venv-fuzz/bin/pip install atheris``
with linsvm's dependencies visible to it)::

    .venv-fuzz/bin/python -m benchmarks.bench_fuzz --atheris KIND SECONDS CORPUS_DIR

Four loaders, each fed ``--inputs`` files made from valid seed files (built here, small) by
one to three mutations:

- ``text``: LIBSVM text, read by ``read_libsvm`` (plain, float32, 0-based "auto", with
  ``check_width``, with ``query_id``): byte flips, truncations, splices, lines duplicated or
  dropped, tokens replaced by edge values (NaN, 1e309, 2^63, 10^12, "0x10", "1_0", ...).
- ``cache``: the binary cache, opened with ``open_cache``, every block served (``block``, which
  verifies it), ``labels()``, then read whole by ``read_libsvm``: bytes damaged as above, and
  edits that recompute every CRC so the deeper checks are reached: header fields, block-table
  entries, a value of a block's labels / indptr / indices / data, sizes that claim 10^12 rows.
- ``model``: model files with and without a ``feature_map`` line (-s 1, 3, 4, 5, 7, 12, 21;
  bias or not; degree-2 and hashed maps), read by ``load_model`` and then used to predict a
  few rows: bytes damaged, tokens and lines edited as for text.
- ``checkpoint``: ``train(..., resume=FILE)`` on the data and options the checkpoint was
  written for (a finished or interrupted run of -s 0-7, 11-13, 21, 30-34, one-vs-rest with
  slots finished and running, a fallback's state): bytes damaged (mostly caught by the zip
  CRCs), the archive rewritten with one array's values, shape or dtype changed or one entry
  removed / added, the JSON meta edited or broken, a ``.npy`` header that claims 10^12
  elements, a compressed member 1000x its size, and the right file resumed on other data or
  other options.

Each input runs in a worker process (restarted after a failure), under an address-space limit
(RLIMIT_AS: its size after warming up + 1 GiB) and with tracemalloc counting what NumPy and
Python allocate. An outcome is ``ok`` (a result that meets the loader's contract, checked
below) or the class of the error raised. A **failure** is any other exception, an error whose
message is not one line, a result that breaks the contract, a traced peak above
64 x the file's size + 16 MiB, a worker killed (a signal, the memory limit) or an input still
running after ``--timeout`` seconds. Failing inputs are written to ``--failures``.

The tests (``tests/test_fuzz_loaders.py``) run a few hundred inputs per loader through the same
mutators in-process (``run_slice``), so that neither can rot.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import select
import struct
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

KINDS = ("text", "cache", "model", "checkpoint")
# A traced peak above this many times the file's size (plus the constant) is a failure.
ALLOC_FACTOR = 64
ALLOC_SLACK = 16 << 20
# The worker's address-space limit above its size once warmed up.
ADDRESS_SPACE_HEADROOM = 1 << 30


class ContractError(AssertionError):
    """A loader returned a result that breaks its contract (a failure, not an outcome)."""


# ----------------------------------------------------------------------------- data sets


def dataset(name: str) -> tuple[sp.csr_matrix, np.ndarray]:
    """The small problems checkpoints are written for, rebuilt the same in every process."""
    rng = np.random.default_rng({"binary": 1, "multi": 2, "regression": 3}[name.split("+")[0]])
    n_rows, n_features = 40, 12
    X = sp.random(n_rows, n_features, density=0.4, random_state=rng, format="csr")
    X.data = np.round(X.data * 4 - 2, 3)
    if name.startswith("binary"):
        y = np.where(X @ np.arange(-6.0, 6.0) + rng.normal(size=n_rows) > 0, 1.0, -1.0)
        y[:2] = [1.0, -1.0]
    elif name.startswith("multi"):
        y = rng.integers(0, 3, size=n_rows).astype(np.float64) * 2 + 1
    else:
        y = np.asarray(X @ rng.normal(size=n_features)).ravel() + 0.1 * rng.normal(size=n_rows)
    if name.endswith("+other"):  # the same shape, one value changed: another problem
        X = X.copy()
        X.data[0] += 1.0
    X.sort_indices()
    return X, y


# ----------------------------------------------------------------------------- seeds


@dataclass
class Seed:
    kind: str
    name: str
    data: bytes
    context: dict = field(default_factory=dict)


TEXT_SEEDS = {
    "plain": b"1 1:0.5 3:-2\n-1 2:1e-3 4:7\n+1 1:1 5:2.5e10\n-1\n1 2:3 3:1e-300 6:-0.25\n",
    "qid_comments": b"# head\n2 qid:3 1:1 2:2 # tail\n\n3 qid:3 4:0.5\r\n1 qid:4 2:-1\n",
    "regression": b"0.5 1:1\n-1.25e2 2:1 7:3\n3 3:-1\n",
    "zero_based": b"1 0:1 2:2\n-1 1:3\n",
    "wide": b"1 1:1 3000000000:2\n-1 5:1\n",
    "many_rows": b"".join(
        f"{(-1) ** i} {i % 5 + 1}:{i / 7:.4g} {i % 5 + 7}:{i}\n".encode() for i in range(30)
    ),
}
TEXT_OPTIONS = (
    {},
    {"dtype": "float32"},
    {"zero_based": "auto"},
    {"check_width": True},
    {"query_id": True},
    {"n_features": 20},
)

MODEL_RUNS = (
    ("s1_bias", "binary", {"solver": 1, "bias": 1.0}),
    ("s3_nobias", "binary", {"solver": 3}),
    ("s3_ovr", "multi", {"solver": 3, "bias": 1.0}),
    ("s4_cs", "multi", {"solver": 4}),
    ("s5_l1", "binary", {"solver": 5, "bias": 1.0}),
    ("s7_lr", "binary", {"solver": 7}),
    ("s12_svr", "regression", {"solver": 12, "bias": 1.0}),
    ("s21_oneclass", "binary", {"solver": 21}),
    ("poly2", "binary", {"solver": 1, "feature_map": ("poly2", None)}),
    ("poly2_kernel", "binary", {"solver": 2, "feature_map": ("poly2", 0.5)}),
    ("hashed", "multi", {"solver": 1, "bias": 1.0, "feature_map": ("hash", 5)}),
)

# (name, data set, options, which sub-problem the hook stops and after how many iterations;
# None: the run finishes)
CHECKPOINT_RUNS = (
    ("s0_stopped", "binary", {"solver": 0}, (0, 1)),
    ("s1_stopped", "binary", {"solver": 1, "bias": 1.0}, (0, 2)),
    ("s1_fallback", "binary", {"solver": 1, "max_iter": 1, "C": 100.0}, (0, "fallback")),
    ("s1_ovr", "multi", {"solver": 1}, (1, 1)),
    ("s2_done", "binary", {"solver": 2}, None),
    ("s3_ovr", "multi", {"solver": 3, "bias": 1.0}, (1, 2)),
    ("s3_done", "binary", {"solver": 3}, None),
    ("s4_stopped", "multi", {"solver": 4}, (0, 2)),
    ("s5_stopped", "binary", {"solver": 5}, (0, 2)),
    ("s6_stopped", "binary", {"solver": 6, "bias": 1.0}, (0, 1)),
    ("s7_stopped", "binary", {"solver": 7}, (0, 1)),
    ("s11_stopped", "regression", {"solver": 11}, (0, 1)),
    ("s12_stopped", "regression", {"solver": 12}, (0, 1)),
    ("s13_stopped", "regression", {"solver": 13, "bias": 1.0}, (0, 2)),
    ("s21_stopped", "binary", {"solver": 21}, (0, 2)),
    ("pegasos", "binary", {"solver": 30, "max_iter": 5}, (0, 2)),
    ("sgd_r", "binary", {"solver": 31, "max_iter": 5}, (0, 2)),
    ("sgd_s", "binary", {"solver": 32}, (0, 2)),
    ("sgd_m", "binary", {"solver": 33}, (0, 2)),
    ("pcd", "binary", {"solver": 34}, (0, 2)),
)


def _train_options(options: dict) -> dict:
    """Options as `linsvm.train` takes them (a feature map given by a small tuple here)."""
    import linsvm

    options = dict(options)
    fmap = options.pop("feature_map", None)
    if fmap is not None:
        what, arg = fmap
        options["feature_map"] = (
            linsvm.FeatureMap(degree=2, gamma=arg) if what == "poly2"
            else linsvm.FeatureMap(degree=1, hash_bits=arg)
        )  # fmt: skip
    return {"n_jobs": 1, "seed": 1, **options}


def build_seeds(folder: Path, kinds=KINDS) -> dict[str, list[Seed]]:
    """Valid files of each kind, written under ``folder`` (which they need not outlive)."""
    import linsvm
    from linsvm.io.cache import write_cache

    seeds: dict[str, list[Seed]] = {kind: [] for kind in kinds}
    folder.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "text" in seeds or "cache" in seeds:
            for name, text in TEXT_SEEDS.items():
                if "text" in seeds:
                    context = {"zero_based": "auto"} if name == "zero_based" else {}
                    seeds["text"].append(Seed("text", name, text, context))
                if "cache" in seeds and name not in ("qid_comments",):
                    source = folder / f"{name}.txt"
                    source.write_bytes(text)
                    for dtype, block_bytes in (("float64", 64), ("float32", 1 << 20)):
                        target = folder / f"{name}-{dtype}.lsvc"
                        write_cache(source, target, dtype=dtype, block_bytes=block_bytes,
                                    n_jobs=1, zero_based="auto")
                        seeds["cache"].append(Seed("cache", f"{name}-{dtype}",
                                                   target.read_bytes(), {"dtype": dtype}))
        if "model" in seeds:
            for name, data, options in MODEL_RUNS:
                X, y = dataset(data)
                model = linsvm.train(X, y, **_train_options(options))
                path = folder / f"{name}.model"
                model.save(path)
                seeds["model"].append(Seed("model", name, path.read_bytes()))
        if "checkpoint" in seeds:
            for name, data, options, stop in CHECKPOINT_RUNS:
                path = folder / f"{name}.ckpt"
                X, y = dataset(data)
                linsvm.train(X, y, checkpoint=path, checkpoint_every=1e-9,
                             hook=_stopper(stop), **_train_options(options))
                context = {"dataset": data, "options": options}
                seeds["checkpoint"].append(Seed("checkpoint", name, path.read_bytes(), context))
    return seeds


def _stopper(stop) -> Callable | None:
    """A hook stopping sub-problem ``stop[0]`` after ``stop[1]`` outer iterations (or once its
    fallback has run one)."""
    if stop is None:
        return None
    slot, after = stop

    def hook(progress) -> bool:
        if progress.index != slot and not (progress.index is None and slot == 0):
            return True
        if after == "fallback":
            return progress.solver == 1
        return progress.iteration < after

    return hook


# ----------------------------------------------------------------------------- mutators

INTERESTING_TEXT = (
    "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e309", "-1e309", "1e-400", "4.9e-324",
    "3.4028235e38", "3.5e38", "1.7976931348623157e308", "0", "-0", "+0", "-1", "1", "2", "3",
    "2147483647", "2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
    "18446744073709551616", "1000000000000", "1e12", "0x10", "1_000", "\u0661\u0662", "",
    ":", "::", "1:", ":1", "qid:", "qid:1", "#", "\x00", "\t", "\r", "\r\n", "\x0b", "\x0c",
    "1:1:1", "-", "+", ".", "e5", "1e", "99999999999999999999999999", "   ", "1.5",
    "3:4 2:1", "label", "w", "solver_type", "nr_class", "nr_feature", "bias", "rho",
    "feature_map", "degree", "n_input", "hash_bits", "gamma", "coef0", "L2R_L2LOSS_SVC_DUAL",
    "MCSVM_CS", "ONECLASS_SVM", "L2R_L2LOSS_SVR", "L2R_LR", "\u00e9", "\xff",
)  # fmt: skip
INTERESTING_INTS = (
    0, 1, -1, 2, 7, 63, 64, 65, 127, 128, 255, 256, 4096, 2**31 - 1, 2**31, 2**32 - 1, 2**32,
    2**53, 10**12, 2**62, 2**63 - 1, -(2**31), -(2**63), -(10**12),
)  # fmt: skip
INTERESTING_FLOATS = (
    float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e308, -1e308, 3.5e38, 5e-324, 1.0,
    -1.0, 1e-300, 2.0**63,
)  # fmt: skip
INTERESTING_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x20, 0x0A, 0x0D, 0x3A, 0x30, 0x39, 0x2D)


# -- bytes, any format


def flip_bit(data: bytearray, rnd: random.Random, others) -> None:
    if data:
        data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)


def set_byte(data: bytearray, rnd: random.Random, others) -> None:
    if data:
        data[rnd.randrange(len(data))] = rnd.choice(INTERESTING_BYTES + (rnd.randrange(256),))


def delete_range(data: bytearray, rnd: random.Random, others) -> None:
    if data:
        at = rnd.randrange(len(data))
        del data[at : at + rnd.choice((1, 2, 4, 8, rnd.randrange(1, len(data) + 1)))]


def insert_bytes(data: bytearray, rnd: random.Random, others) -> None:
    at = rnd.randrange(len(data) + 1)
    if rnd.random() < 0.5:
        new = rnd.choice(INTERESTING_TEXT).encode("utf-8")
    else:
        new = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 9)))
    data[at:at] = new


def duplicate_range(data: bytearray, rnd: random.Random, others) -> None:
    if data:
        a = rnd.randrange(len(data))
        b = min(len(data), a + rnd.randrange(1, 65))
        at = rnd.randrange(len(data) + 1)
        data[at:at] = data[a:b]


def truncate(data: bytearray, rnd: random.Random, others) -> None:
    if data:
        del data[rnd.randrange(len(data)) :]


def splice(data: bytearray, rnd: random.Random, others) -> None:
    other = rnd.choice(others)
    at = rnd.randrange(len(data) + 1)
    data[at:] = other[rnd.randrange(len(other) + 1) :]


def overwrite_int(data: bytearray, rnd: random.Random, others) -> None:
    """A little-endian integer of 1, 2, 4 or 8 bytes written over the data (binary formats)."""
    size = rnd.choice((1, 2, 4, 8))
    if len(data) < size:
        return
    value = rnd.choice(INTERESTING_INTS) % (1 << (8 * size))
    at = rnd.randrange(len(data) - size + 1)
    data[at : at + size] = value.to_bytes(size, "little")


BYTE_MUTATORS = (flip_bit, set_byte, delete_range, insert_bytes, duplicate_range, truncate,
                 splice, overwrite_int)  # fmt: skip


# -- text: lines and tokens


def _lines(data: bytearray) -> list[bytes]:
    return bytes(data).splitlines(keepends=True)


def replace_token(data: bytearray, rnd: random.Random, others) -> None:
    """A run of characters between spaces, colons and line ends replaced by an edge value."""
    text = bytes(data)
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    if not spans:
        return
    a, b = rnd.choice(spans)
    data[a:b] = rnd.choice(INTERESTING_TEXT).encode("utf-8")


def edit_lines(data: bytearray, rnd: random.Random, others) -> None:
    lines = _lines(data)
    if not lines:
        return
    k = rnd.randrange(len(lines))
    what = rnd.randrange(5)
    if what == 0:
        lines.insert(rnd.randrange(len(lines) + 1), lines[k])
    elif what == 1:
        del lines[k]
    elif what == 2:
        j = rnd.randrange(len(lines))
        lines[k], lines[j] = lines[j], lines[k]
    elif what == 3:
        other = _lines(bytearray(rnd.choice(others))) or [b"\n"]
        lines.insert(k, rnd.choice(other))
    else:
        lines[k] = lines[k].rstrip(b"\r\n")  # two lines made one
    data[:] = b"".join(lines)


TEXT_MUTATORS = BYTE_MUTATORS + (replace_token, replace_token, replace_token, edit_lines,
                                 edit_lines)  # fmt: skip


def _token_pattern():
    import re

    return re.compile(rb"[^\s:]+")


_TOKEN = _token_pattern()


# -- model files: the header's fields and the feature map besides


def edit_model_header(data: bytearray, rnd: random.Random, others) -> None:
    """A header line's value replaced, a header line removed or doubled, or a feature_map line
    added, removed or edited."""
    lines = _lines(data)
    w_at = next((i for i, line in enumerate(lines) if line.strip() == b"w"), len(lines))
    header = lines[:w_at]
    what = rnd.randrange(4)
    if what == 0 and header:
        k = rnd.randrange(len(header))
        words = header[k].split()
        if len(words) > 1:
            words[rnd.randrange(1, len(words))] = rnd.choice(INTERESTING_TEXT).encode("utf-8")
            header[k] = b" ".join(words) + b"\n"
    elif what == 1 and header:
        k = rnd.randrange(len(header))
        if rnd.random() < 0.5:
            del header[k]
        else:
            header.insert(k, header[k])
    elif what == 2:
        if header and header[0].startswith(b"feature_map"):
            del header[0]
        else:
            pairs = [(b"degree", rnd.choice((b"1", b"2", b"3", b"0"))),
                     (b"n_input", rnd.choice((b"12", b"0", b"-1", b"1000000000000", b"5")))]
            if rnd.random() < 0.5:
                pairs.append((b"hash_bits", rnd.choice((b"5", b"0", b"62", b"64", b"x"))))
            if rnd.random() < 0.3:
                pairs.append((b"gamma", rnd.choice((b"0.5", b"nan", b"-1", b"inf"))))
            header.insert(0, b"feature_map " + b" ".join(b"%s %s" % p for p in pairs) + b"\n")
    else:
        if header and header[0].startswith(b"feature_map"):
            words = header[0].split()
            words[rnd.randrange(len(words))] = rnd.choice(INTERESTING_TEXT).encode("utf-8")
            header[0] = b" ".join(words) + b"\n"
    data[:] = b"".join(header + lines[w_at:])


MODEL_MUTATORS = TEXT_MUTATORS + (edit_model_header,) * 4


# -- the cache: edits that keep every CRC valid, so the checks behind them are reached


def _cache_layout():
    from linsvm.io import cache

    return cache


def _fix_cache_crcs(data: bytearray, blocks: list[int]) -> None:
    """Recompute the CRC-32 of ``blocks`` (as their table entries place them), of the block
    table and of the header, from the bytes as they now are (deepest first)."""
    c = _cache_layout()
    if len(data) < c.HEADER_SIZE:
        return
    fields = list(c._HEADER.unpack_from(data))
    n_blocks, table_offset = fields[10], fields[11]
    table_end = table_offset + 40 * n_blocks
    if 0 <= table_offset and table_end <= len(data):
        for k in blocks:
            if 0 <= k < n_blocks:
                at = table_offset + 40 * k
                offset, _, _, length = struct.unpack_from("<4q", data, at)
                if 0 <= offset and length >= 0 and offset + length <= len(data):
                    crc = zlib.crc32(data[offset : offset + length])
                    struct.pack_into("<I", data, at + 32, crc)
    if 0 <= table_offset:
        fields[14] = zlib.crc32(bytes(data[table_offset:table_end]))
    header = c._HEADER.pack(*fields)
    data[: c.HEADER_SIZE] = header + c._HEADER_CRC.pack(zlib.crc32(header))


def _cache_fields(data: bytearray):
    c = _cache_layout()
    if len(data) < c.HEADER_SIZE:
        return None
    return list(c._HEADER.unpack_from(data))


def edit_cache_header(data: bytearray, rnd: random.Random, others) -> None:
    c = _cache_layout()
    fields = _cache_fields(data)
    if fields is None:
        return
    k = rnd.randrange(3, 16)
    if k in (3, 4, 5):
        fields[k] = rnd.choice((b"<f4\0", b"<f8\0", b"<i4\0", b"<i8\0", b"|u1\0", b">f8\0",
                                b"<f2\0", b"<c8\0", b"\0\0\0\0"))
    else:
        width = 4 if k in (6, 14, 15) else 8
        signed = width == 8
        old = fields[k]
        value = rnd.choice(INTERESTING_INTS + (old + 1, old - 1, old * 2, old // 2))
        lo, hi = (-(2**63), 2**63 - 1) if signed else (0, 2**32 - 1)
        fields[k] = min(max(value, lo), hi)
    header = c._HEADER.pack(*fields)
    data[: c.HEADER_SIZE] = header + c._HEADER_CRC.pack(zlib.crc32(header))
    if k != 14 and rnd.random() < 0.5:
        _fix_cache_crcs(data, [])  # the table's CRC over the range the edited header names


def _table(data: bytearray):
    fields = _cache_fields(data)
    if fields is None:
        return None
    n_blocks, table_offset = fields[10], fields[11]
    if not (0 < n_blocks < 10**6 and 0 <= table_offset
            and table_offset + 40 * n_blocks <= len(data)):
        return None
    return n_blocks, table_offset


def edit_cache_table(data: bytearray, rnd: random.Random, others) -> None:
    table = _table(data)
    if table is None:
        return
    n_blocks, table_offset = table
    k = rnd.randrange(n_blocks)
    column = rnd.randrange(5)  # offset, n_rows, nnz, length, reserved
    at = table_offset + 40 * k + (8 * column if column < 4 else 36)
    fmt = "<q" if column < 4 else "<I"
    (old,) = struct.unpack_from(fmt, data, at)
    value = rnd.choice(INTERESTING_INTS + (old + 1, old - 1, old + 64, old - 64, old * 2))
    lo, hi = (-(2**63), 2**63 - 1) if column < 4 else (0, 2**32 - 1)
    struct.pack_into(fmt, data, at, min(max(value, lo), hi))
    _fix_cache_crcs(data, [])


def claim_many_rows(data: bytearray, rnd: random.Random, others) -> None:
    """Header and block table agree on 10^12 rows (or nnz), every CRC valid."""
    table = _table(data)
    fields = _cache_fields(data)
    if table is None:
        return
    n_blocks, table_offset = table
    k = rnd.randrange(n_blocks)
    column, total = (1, 7) if rnd.random() < 0.6 else (2, 9)
    extra = rnd.choice((10**12, 2**40, 2**31, 2**62))
    at = table_offset + 40 * k + 8 * column
    (old,) = struct.unpack_from("<q", data, at)
    struct.pack_into("<q", data, at, min(old + extra, 2**63 - 1))
    if rnd.random() < 0.5:  # the block's length as the claimed counts would make it
        c = _cache_layout()
        isz = 4 if fields[4] == b"<i4\0" else 8
        vsz = 4 if fields[3] == b"<f4\0" else 8
        _, n_rows, nnz, _ = struct.unpack_from("<4q", data, table_offset + 40 * k)
        struct.pack_into("<q", data, table_offset + 40 * k + 24,
                         min(c._layout(n_rows, nnz, isz, vsz)[4], 2**63 - 1))
    fields[total] = min(fields[total] + extra, 2**63 - 1)
    c = _cache_layout()
    header = c._HEADER.pack(*fields)
    data[: c.HEADER_SIZE] = header + c._HEADER_CRC.pack(zlib.crc32(header))
    _fix_cache_crcs(data, [])


def edit_cache_block(data: bytearray, rnd: random.Random, others) -> None:
    """One value of a block's labels, indptr, indices or data set to an edge value (or two
    neighbours swapped), the block's, table's and header's CRCs recomputed."""
    c = _cache_layout()
    table = _table(data)
    fields = _cache_fields(data)
    if table is None:
        return
    n_blocks, table_offset = table
    k = rnd.randrange(n_blocks)
    offset, n_rows, nnz, length = struct.unpack_from("<4q", data, table_offset + 40 * k)
    isz = 4 if fields[4] == b"<i4\0" else 8
    value_dtype = "<f4" if fields[3] == b"<f4\0" else "<f8"
    if not (0 <= n_rows < 10**6 and 0 <= nnz < 10**7):
        return
    at = c._layout(n_rows, nnz, isz, int(value_dtype[2]))
    arrays = [("<f8", at[0], n_rows), (f"<i{isz}", at[1], n_rows + 1), (f"<i{isz}", at[2], nnz),
              (value_dtype, at[3], nnz)]
    dtype, start, count = rnd.choice([a for a in arrays if a[2] > 0] or arrays)
    if count == 0 or offset + start + count * int(dtype[2]) > len(data):
        return
    view = np.frombuffer(data, dtype=dtype, count=count, offset=offset + start)
    view = view.copy()
    i = rnd.randrange(count)
    if rnd.random() < 0.2 and count > 1:
        j = min(i + 1, count - 1)
        view[[i, j]] = view[[j, i]]
    elif dtype[1] == "f":
        view[i] = rnd.choice(INTERESTING_FLOATS + (float(view[i]) * 2,))
    else:
        info = np.iinfo(dtype)
        value = rnd.choice(INTERESTING_INTS + (int(view[i]) + 1, int(view[i]) - 1, fields[8],
                                               fields[8] - 1, nnz, nnz + 1))
        view[i] = min(max(value, info.min), info.max)
    data[offset + start : offset + start + view.nbytes] = view.tobytes()
    _fix_cache_crcs(data, [k])


def bytes_then_fix(data: bytearray, rnd: random.Random, others) -> None:
    """A byte-level mutation past the header, then every CRC made valid again."""
    c = _cache_layout()
    head = bytes(data[: c.HEADER_SIZE])
    body = bytearray(data[c.HEADER_SIZE :])
    rnd.choice((flip_bit, set_byte, overwrite_int, overwrite_int))(body, rnd, others)
    data[:] = head + body
    table = _table(data)
    _fix_cache_crcs(data, list(range(table[0])) if table else [])


CACHE_MUTATORS = BYTE_MUTATORS + (edit_cache_header,) * 3 + (edit_cache_table,) * 3 + (
    claim_many_rows, claim_many_rows, bytes_then_fix, bytes_then_fix) + (edit_cache_block,) * 6


# -- checkpoints: the archive rewritten whole, so the zip's CRCs hold


def _open_npz(data: bytes):
    """The archive's entries (name -> array) and its meta (a dict), or None."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            entries = {name: archive[name] for name in archive.files}
        meta = json.loads(entries.pop("meta").tobytes().decode())
        return entries, meta
    except Exception:
        return None


def _save_npz(entries: dict, meta) -> bytes:
    buffer = io.BytesIO()
    meta_bytes = meta if isinstance(meta, bytes) else json.dumps(meta).encode()
    np.savez(buffer, **entries, meta=np.frombuffer(meta_bytes, dtype=np.uint8))
    return buffer.getvalue()


def _edit_value(array: np.ndarray, rnd: random.Random) -> np.ndarray:
    array = np.array(array, copy=True)
    if array.size == 0:
        return np.zeros(rnd.choice((1, 3)), dtype=array.dtype)
    flat = array.reshape(-1)
    i = rnd.randrange(flat.size)
    if array.dtype.kind == "f":
        flat[i] = rnd.choice(INTERESTING_FLOATS + (float(flat[i]) + 1, -float(flat[i])))
    elif array.dtype.kind in "iu":
        info = np.iinfo(array.dtype)
        value = rnd.choice(INTERESTING_INTS + (int(flat[i]) + 1, int(flat[i]) - 1, flat.size,
                                               flat.size - 1, 40, 39, 41))
        flat[i] = min(max(value, info.min), info.max)
    elif array.dtype.kind == "b":
        flat[i] = not flat[i]
    return array


def _edit_shape(array: np.ndarray, rnd: random.Random) -> np.ndarray:
    what = rnd.randrange(5)
    if what == 0 and array.size:
        return array.reshape(-1)[:-1]
    if what == 1:
        return np.concatenate([array.reshape(-1), array.reshape(-1)[:1]])
    if what == 2:
        return array.reshape(1, -1)
    if what == 3:
        return array.reshape(-1)[:0]
    return np.array(array.reshape(-1)[0] if array.size else 0)


def _edit_dtype(array: np.ndarray, rnd: random.Random) -> np.ndarray:
    target = rnd.choice(("<i4", "<i8", "<f4", "<f8", ">f8", "<u8", "|b1", "<c16", "<U3", "|i1"))
    try:
        return array.astype(target)
    except (TypeError, ValueError):
        return array


def edit_checkpoint_array(data: bytearray, rnd: random.Random, others) -> None:
    opened = _open_npz(bytes(data))
    if opened is None:
        return
    entries, meta = opened
    what = rnd.randrange(10)
    if what < 6 and entries:
        name = rnd.choice(sorted(entries))
        edit = (_edit_value, _edit_value, _edit_value, _edit_value, _edit_shape, _edit_dtype)[what]
        entries[name] = edit(entries[name], rnd)
    elif what < 8 and entries:
        del entries[rnd.choice(sorted(entries))]
    else:
        slot = rnd.choice(list(meta.get("slots", {"0": 0})) or ["0"])
        name = rnd.choice(("w", "alpha", "state/w", "state/rng", "state/istate", "figure/x"))
        entries[f"{slot}/{name}"] = np.zeros(rnd.choice((0, 1, 13)))
    data[:] = _save_npz(entries, meta)


def _json_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _json_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _json_paths(v, path + (i,))


INTERESTING_JSON = (None, True, False, 0, 1, -1, 2**63, 10**12, -(10**12), 1.5, float("nan"),
                    float("inf"), "", "x", "nan", [], {}, [1, 2], {"a": 1}, "0", 300)


def edit_checkpoint_meta(data: bytearray, rnd: random.Random, others) -> None:
    """One value anywhere in the JSON meta replaced or removed, a key added, or the JSON text
    itself damaged."""
    opened = _open_npz(bytes(data))
    if opened is None:
        return
    entries, meta = opened
    if rnd.random() < 0.2:
        text = bytearray(json.dumps(meta).encode())
        rnd.choice(BYTE_MUTATORS[:-2] + (replace_token,))(text, rnd, [b"{}"])
        if rnd.random() < 0.1:
            text = bytearray(b"[" * 100000 + b"]" * 100000)
        data[:] = _save_npz(entries, bytes(text))
        return
    paths = list(_json_paths(meta))[1:]
    if not paths:
        return
    path = rnd.choice(paths)
    parent = meta
    for key in path[:-1]:
        parent = parent[key]
    what = rnd.randrange(4)
    if what == 0 and isinstance(parent, dict):
        del parent[path[-1]]
    elif what == 1 and isinstance(parent, dict):
        parent[rnd.choice(("extra", "7", "-1", "1000000000000", "slots"))] = rnd.choice(
            INTERESTING_JSON)
    else:
        parent[path[-1]] = rnd.choice(INTERESTING_JSON)
    data[:] = _save_npz(entries, meta)


def claim_huge_array(data: bytearray, rnd: random.Random, others) -> None:
    """An entry's .npy header rewritten to claim 10^12 (or 2^40) elements, its data as it
    was; the zip stored and its CRCs valid."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(bytes(data)))
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    except Exception:
        return
    if not members:
        return
    name = rnd.choice(sorted(members))
    raw = members[name]
    try:
        stream = io.BytesIO(raw)
        version = np.lib.format.read_magic(stream)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read_header(stream)
    except Exception:
        return
    body = raw[stream.tell() :]
    claim = rnd.choice(((10**12,), (2**40,), (10**6, 10**6), (2**62,)))
    header = io.BytesIO()
    write_header = (np.lib.format.write_array_header_1_0 if version == (1, 0)
                    else np.lib.format.write_array_header_2_0)
    write_header(header, {"descr": np.lib.format.dtype_to_descr(dtype),
                          "fortran_order": fortran, "shape": claim})
    members[name] = header.getvalue() + body
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for member, content in members.items():
            z.writestr(member, content)
    data[:] = out.getvalue()


def compressed_member(data: bytearray, rnd: random.Random, others) -> None:
    """An entry replaced by 10^7 zeros in a deflated member (80 MB from about 80 KB)."""
    opened = _open_npz(bytes(data))
    if opened is None or not opened[0]:
        return
    entries, meta = opened
    entries[rnd.choice(sorted(entries))] = np.zeros(10**7)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **entries,
                        meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    data[:] = buffer.getvalue()


CHECKPOINT_MUTATORS = BYTE_MUTATORS + (edit_checkpoint_array,) * 10 + (
    edit_checkpoint_meta,) * 5 + (claim_huge_array, compressed_member)


MUTATORS = {"text": TEXT_MUTATORS, "cache": CACHE_MUTATORS, "model": MODEL_MUTATORS,
            "checkpoint": CHECKPOINT_MUTATORS}  # fmt: skip


def make_input(kind: str, seeds: list[Seed], seed: int, i: int) -> tuple[bytes, dict, str]:
    """Input ``i`` of ``kind``: (bytes, context, a description), the same for the same seeds,
    ``seed`` and ``i``."""
    with np.errstate(all="ignore"):  # edge values cast on purpose
        return _make_input(kind, seeds, seed, i)


def _make_input(kind: str, seeds: list[Seed], seed: int, i: int) -> tuple[bytes, dict, str]:
    rnd = random.Random(f"{seed}/{kind}/{i}")
    base = rnd.choice(seeds)
    data = bytearray(base.data)
    context = dict(base.context)
    others = [s.data for s in seeds]
    steps = []
    for _ in range(rnd.choice((1, 1, 1, 2, 3))):
        mutator = rnd.choice(MUTATORS[kind])
        before = bytes(data)
        try:
            mutator(data, rnd, others)
        except (ValueError, OverflowError, struct.error, IndexError, TypeError, KeyError,
                AttributeError):
            # the file no longer has what this mutation edits (an earlier one damaged it)
            data[:] = before
            continue
        steps.append(mutator.__name__)
    if kind == "text":
        context = dict(rnd.choice(TEXT_OPTIONS))
    elif kind == "checkpoint" and rnd.random() < 0.05:
        # the file as it was, resumed on other data or with other options: refused
        data = bytearray(base.data)
        if rnd.random() < 0.5:
            context["dataset"] = base.context["dataset"] + "+other"
            steps = ["other data"]
        else:
            context["options"] = {**base.context["options"], "C": 0.5}
            steps = ["other options"]
    return bytes(data), context, f"{base.name}: {', '.join(steps)}"


# ----------------------------------------------------------------------------- loaders


def _check_csr(X, y, n_features: int | None = None, finite_labels: bool = True) -> None:
    """What every reader promises of its arrays: canonical CSR within its width, finite
    values, one label per row."""
    if not isinstance(X, sp.csr_matrix) or X.dtype not in (np.float32, np.float64):
        raise ContractError(f"X is {type(X).__name__} of {X.dtype}")
    n_rows, width = X.shape
    if n_features is not None and width != n_features:
        raise ContractError(f"{width} columns, expected {n_features}")
    indptr, indices = X.indptr, X.indices
    if indptr.shape != (n_rows + 1,) or indptr[0] != 0 or indptr[-1] != len(indices) \
            or len(X.data) != len(indices) or (np.diff(indptr) < 0).any():
        raise ContractError("indptr is not a valid row pointer")
    if len(indices) and (indices.min() < 0 or indices.max() >= width):
        raise ContractError("a column index outside the matrix")
    ascending = np.diff(indices) > 0
    ends = indptr[1:-1]
    ascending[ends[(ends > 0) & (ends < len(indices))] - 1] = True
    if not ascending.all():
        raise ContractError("columns not strictly ascending within a row")
    if not np.isfinite(X.data).all():
        raise ContractError("a value is NaN or infinite")
    if y.shape != (n_rows,) or (finite_labels and not np.isfinite(y).all()):
        raise ContractError("labels do not match the rows or are not finite")


def load_text(path: str, context: dict) -> None:
    from linsvm import read_libsvm

    options = dict(context)
    if "dtype" in options:
        options["dtype"] = np.dtype(options["dtype"])
    out = read_libsvm(path, n_jobs=1, **options)
    _check_csr(out[0], out[1], options.get("n_features"))
    if len(out) == 3 and out[2].shape != out[1].shape:
        raise ContractError("one qid per row")


def load_cache(path: str, context: dict) -> None:
    from linsvm import open_cache, read_libsvm

    with open_cache(path) as cache:
        for k in range(cache.n_blocks):
            X, y = cache.block(k)
            _check_csr(X, y, cache.n_features)
        if cache.labels().shape != (cache.n_rows,):
            raise ContractError("labels() does not give one label per row")
    X, y = read_libsvm(path, dtype=np.dtype(context.get("dtype", "float64")), n_jobs=1)
    _check_csr(X, y)


def load_model_file(path: str, context: dict) -> None:
    from linsvm import load_model

    model = load_model(path)
    n_w = model.coef_.shape[0]
    if not np.isfinite(model.coef_).all() or model.bias_weights_.shape != (n_w,):
        raise ContractError("weights not finite or of the wrong shape")
    width = model.n_input_features
    rng = np.random.default_rng(0)
    X = sp.random(3, width, density=min(1.0, 4 / max(width, 1)), random_state=rng,
                  format="csr") if width <= 10**6 else sp.csr_matrix(
        (np.ones(2), np.array([0, width - 1]), np.array([0, 1, 2, 2])), shape=(3, width))
    predicted = model.predict(X, n_jobs=1)
    if predicted.shape != (3,):
        raise ContractError("predict did not give one value per row")


def load_checkpoint(path: str, context: dict) -> None:
    import linsvm

    X, y = dataset(context["dataset"])
    options = _train_options(context["options"])
    model = linsvm.train(X, y, resume=path, **options)
    if not np.isfinite(model.coef_).all():
        raise ContractError("the resumed model's weights are not finite")
    width = X.shape[1] if "feature_map" not in options else options["feature_map"].bind(
        X.shape[1]).n_output
    if model.coef_.shape[1] != width:
        raise ContractError(f"the resumed model has {model.coef_.shape[1]} features")


LOADERS = {"text": load_text, "cache": load_cache, "model": load_model_file,
           "checkpoint": load_checkpoint}  # fmt: skip
SUFFIX = {"text": ".txt", "cache": ".lsvc", "model": ".model", "checkpoint": ".ckpt"}


def run_input(kind: str, path: str, context: dict, size: int) -> tuple[str, int]:
    """(outcome, traced peak in bytes) of one input: ``ok``, an error class's name, or
    ``FAIL ...`` (tracemalloc must be running)."""
    from linsvm import LinsvmError

    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            LOADERS[kind](path, context)
        outcome = "ok"
    except LinsvmError as exc:
        message = str(exc)
        outcome = type(exc).__name__
        if not message or "\n" in message:
            outcome = f"FAIL {outcome} with a message of {message.count(chr(10)) + 1} lines"
    except ContractError as exc:
        outcome = f"FAIL contract: {exc}"
    except MemoryError:
        outcome = "FAIL MemoryError"
    except Exception as exc:
        outcome = f"FAIL {type(exc).__name__}: {str(exc)[:200]}"
    peak = tracemalloc.get_traced_memory()[1] - base
    if peak > ALLOC_FACTOR * size + ALLOC_SLACK and not outcome.startswith("FAIL"):
        outcome = f"FAIL allocated {peak} bytes for a file of {size}"
    return outcome, peak


# ----------------------------------------------------------------------------- in-process slice


@dataclass
class Tally:
    outcomes: Counter = field(default_factory=Counter)
    failures: list = field(default_factory=list)  # (i, description, outcome, bytes, context)
    max_peak: int = 0  # the largest traced peak of an input, bytes
    seconds: float = 0.0


def run_slice(kind: str, n_inputs: int, folder: Path, seed: int = 0, start: int = 0,
              seeds: list[Seed] | None = None) -> Tally:
    """``n_inputs`` mutated inputs of ``kind`` run in this process (for the tests)."""
    seeds = seeds if seeds is not None else build_seeds(folder / "seeds", (kind,))[kind]
    tally = Tally()
    path = str(folder / f"input{SUFFIX[kind]}")
    started = time.perf_counter()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        _warm_up(kind, seeds, folder)
        started = time.perf_counter()
        for i in range(start, start + n_inputs):
            data, context, what = make_input(kind, seeds, seed, i)
            Path(path).write_bytes(data)
            outcome, peak = run_input(kind, path, context, len(data))
            _count(tally, i, what, outcome, peak, data, context)
    finally:
        if not was_tracing:
            tracemalloc.stop()
    tally.seconds = time.perf_counter() - started
    return tally


def _warm_up(kind: str, seeds: list[Seed], folder: Path) -> None:
    """Each seed loaded once: the kernels compiled (compilation allocates) and checked."""
    path = str(folder / f"warm{SUFFIX[kind]}")
    for s in seeds:
        Path(path).write_bytes(s.data)
        run_input(kind, path, s.context, len(s.data))  # the first call compiles
        outcome, _ = run_input(kind, path, s.context, len(s.data))
        if outcome != "ok":
            raise RuntimeError(f"seed {s.name} of {kind}: {outcome}")


def _count(tally: Tally, i, what, outcome, peak, data, context) -> None:
    tally.outcomes["FAIL" if outcome.startswith("FAIL") else outcome] += 1
    tally.max_peak = max(tally.max_peak, peak)
    if outcome.startswith("FAIL"):
        tally.failures.append((i, what, outcome, data, context))


# ----------------------------------------------------------------------------- worker processes


def _worker_main() -> int:
    """Read tasks (JSON lines: kind, path, context, size) from stdin, answer outcomes."""
    import resource

    kinds = sys.argv[sys.argv.index("--worker") + 1].split(",")
    with tempfile.TemporaryDirectory(prefix="bench-fuzz-warm-") as warm:
        # compile every kernel the loaders reach before the address space is limited
        seeds = build_seeds(Path(warm), kinds)
        tracemalloc.start()
        for kind in kinds:
            _warm_up(kind, seeds[kind], Path(warm))
    with open("/proc/self/statm") as f:
        size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = size + ADDRESS_SPACE_HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        task = json.loads(line)
        outcome, peak = run_input(task["kind"], task["path"], task["context"], task["size"])
        print(json.dumps({"outcome": outcome, "peak": peak}), flush=True)
    return 0


class Worker:
    """A worker process: started warm, restarted after a failure that killed it."""

    def __init__(self, kinds: list[str], timeout: float) -> None:
        self.kinds, self.timeout, self.process = kinds, timeout, None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.bench_fuzz", "--worker", ",".join(self.kinds)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
            cwd=Path(__file__).resolve().parents[1],
        )  # fmt: skip
        reply = self._read(600.0)
        if reply is None or not reply.get("ready"):
            raise RuntimeError("the fuzz worker did not start")

    def _read(self, timeout: float) -> dict | None:
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.process.stdout.readline()
        return json.loads(line) if line else None

    def run(self, kind: str, path: str, context: dict, size: int) -> tuple[str, int]:
        if self.process is None or self.process.poll() is not None:
            self.start()
        task = {"kind": kind, "path": path, "context": context, "size": size}
        self.process.stdin.write(json.dumps(task) + "\n")
        self.process.stdin.flush()
        reply = self._read(self.timeout)
        if reply is not None:
            return reply["outcome"], reply["peak"]
        if self.process.poll() is None:
            self.stop()
            return f"FAIL hang (still running after {self.timeout:g} s)", 0
        code = self.process.returncode
        self.process = None
        return f"FAIL worker died (exit status {code})", 0

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


def run_kind(kind: str, n_inputs: int, seeds: list[Seed], seed: int, timeout: float,
             folder: Path, failures: Path | None, progress: bool = True) -> Tally:
    tally = Tally()
    worker = Worker([kind], timeout)
    worker.start()
    path = str(folder / f"input{SUFFIX[kind]}")
    started = time.perf_counter()
    try:
        for i in range(n_inputs):
            data, context, what = make_input(kind, seeds, seed, i)
            Path(path).write_bytes(data)
            outcome, peak = worker.run(kind, path, context, len(data))
            _count(tally, i, what, outcome, peak, data, context)
            if outcome.startswith("FAIL"):
                print(f"{kind} #{i} ({what}): {outcome}", file=sys.stderr)
                if failures is not None:
                    failures.mkdir(parents=True, exist_ok=True)
                    stem = failures / f"{kind}-{seed}-{i}"
                    stem.with_suffix(SUFFIX[kind]).write_bytes(data)
                    stem.with_suffix(".json").write_text(json.dumps(
                        {"what": what, "outcome": outcome, "context": context}))
            if progress and (i + 1) % 2000 == 0:
                print(f"{kind}: {i + 1} inputs, {time.perf_counter() - started:.0f} s, "
                      f"{dict(tally.outcomes)}", file=sys.stderr)
    finally:
        worker.stop()
    tally.seconds = time.perf_counter() - started
    return tally


# ----------------------------------------------------------------------------- report


def report(tallies: dict[str, Tally], args, seed_counts: dict[str, int]) -> list[str]:
    from .common import markdown_table, report_header

    total_fail = sum(t.outcomes["FAIL"] for t in tallies.values())
    lines = report_header(
        "Fuzzed loaders", "bench_fuzz",
        [f"inputs per loader: {args.inputs}, mutation seed {args.seed}, timeout "
         f"{args.timeout:g} s an input, one worker process a loader (n_jobs=1) under "
         f"RLIMIT_AS = its warmed-up size + {ADDRESS_SPACE_HEADROOM >> 20} MiB, traced "
         f"peak allowed {ALLOC_FACTOR} x the file + {ALLOC_SLACK >> 20} MiB",
         f"failures: {total_fail}"],
    )
    classes = sorted({c for t in tallies.values() for c in t.outcomes} - {"FAIL"})
    header = ["loader", "seed files", "inputs", *classes, "failures", "largest traced peak",
              "seconds"]
    rows = []
    for kind, t in tallies.items():
        rows.append([kind, seed_counts[kind], sum(t.outcomes.values()),
                     *(t.outcomes.get(c, 0) for c in classes), t.outcomes.get("FAIL", 0),
                     f"{t.max_peak / 2**20:.1f} MiB", f"{t.seconds:.0f}"])
    lines += ["## Outcomes by loader", "", *markdown_table(header, rows), ""]
    lines += [
        "`ok`: the loader returned a result that meets its contract (canonical CSR inside its "
        "width, finite values, one label per row; a model with finite weights that predicts; "
        "a resumed model with finite weights of the problem's width). The other columns are "
        "the one-line errors raised (linsvm's error classes). A failure is any other "
        "exception, a message of more than one line, a broken contract, a traced allocation "
        "above the bound, a worker killed, or an input still running at the timeout.",
        "",
    ]
    failed = [(kind, f) for kind, t in tallies.items() for f in t.failures]
    if failed:
        lines += ["## Failures", ""]
        lines += [f"- {kind} #{i} ({what}): {outcome}" for kind, (i, what, outcome, _, _)
                  in failed[:50]]
        lines.append("")
    return lines


def _atheris_main(kind: str, seconds: int, corpus: Path) -> int:
    """Coverage-guided fuzzing of one loader with atheris (libFuzzer), from the seed files:
    the Python code is instrumented once the seeds have compiled the kernels. Any
    exception but a linsvm error, or a broken contract, stops it with the input saved by
    libFuzzer (crash-*). Needs ``pip install atheris`` (not a dependency of linsvm)."""
    import atheris

    from linsvm import LinsvmError

    corpus.mkdir(parents=True, exist_ok=True)
    seeds = build_seeds(corpus.parent / "seeds", (kind,))[kind]
    for s in seeds:
        (corpus / f"seed-{s.name}").write_bytes(s.data)
    context = seeds[0].context
    path = str(corpus.parent / f"atheris-input{SUFFIX[kind]}")
    tracemalloc.start()
    _warm_up(kind, seeds, corpus.parent)  # kernels compiled before their bytecode is touched
    tracemalloc.stop()
    atheris.instrument_all()  # the Python code loaded (a kernel compiled already keeps its code)

    def one_input(data: bytes) -> None:
        Path(path).write_bytes(data)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                LOADERS[kind](path, context)
        except LinsvmError as exc:
            if "\n" in str(exc):
                raise AssertionError(f"a message of several lines: {exc!r}") from None

    atheris.Setup([sys.argv[0], f"-max_total_time={seconds}", "-rss_limit_mb=4096",
                   "-max_len=200000", str(corpus)], one_input)
    atheris.Fuzz()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv
    if "--worker" in args:
        return _worker_main()
    if "--atheris" in args:
        at = args.index("--atheris")
        kind, seconds, corpus = args[at + 1], int(args[at + 2]), Path(args[at + 3])
        return _atheris_main(kind, seconds, corpus)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=20000)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--failures", type=Path, default=None)
    parser.add_argument("--out", default=str(Path(__file__).parent / "RESULTS-fuzz.md"))
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    with tempfile.TemporaryDirectory(prefix="bench-fuzz-") as tmp:
        folder = Path(tmp)
        seeds = build_seeds(folder / "seeds", kinds)
        tallies = {}
        for kind in kinds:
            tallies[kind] = run_kind(kind, args.inputs, seeds[kind], args.seed, args.timeout,
                                     folder, args.failures)
    from .common import write_report

    write_report(report(tallies, args, {k: len(seeds[k]) for k in kinds}), args.out)
    return 1 if any(t.outcomes["FAIL"] for t in tallies.values()) else 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
