"""Model files in LIBLINEAR's text format, read and written both ways, as plain fields.

The format (LIBLINEAR's ``save_model``)::

    solver_type L2R_L2LOSS_SVC_DUAL
    nr_class 2
    label 1 -1          (classification only)
    nr_feature 123
    bias -1             (%.17g)
    rho 0.5             (one-class only)
    w
    <w_size lines of nr_w values, each "%.17g ">

w_size = nr_feature (+1 with a bias); nr_w = 1 for two classes (except Crammer-Singer) and for
regression / one-class, else nr_class. Line j holds feature j's weight for every class.
Reading never runs code; writing goes to a temporary file renamed over the target, the weights
formatted by compiled kernels (`linsvm.io._format`) a buffer at a time, so that writing a model
takes a few megabytes beyond the model itself.

linsvm's one extension: a model trained on a feature map (``linsvm.features``) starts with
one more line, before ``solver_type``::

    feature_map degree 2 n_input 123 [gamma 0.5 coef0 1] [hash_bits 20]

A file without it is exactly LIBLINEAR's. LIBLINEAR's own reader stops at the unknown first
word ("unknown text in model file"), so a program that cannot map rows refuses the model
instead of applying its weights to unmapped features.

This module knows the text and nothing of ``linsvm.Model``: it reads and writes
`ModelFields`, and ``linsvm.model`` builds its ``Model`` (``load_model``, ``Model.save``) on
top of it, so the dependency runs one way only.
"""

from __future__ import annotations

import collections
import io
import math
import os
import re
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from ..errors import ModelFormatError
from ..parallel import effective_n_jobs
from ..solvers import (
    CLASSIFICATION,
    ONECLASS,
    REGRESSION,
    SOLVER_BY_NAME,
    SOLVERS,
    model_file_solver,
)
from . import _format, _parse
from ._atomic import atomic_writer

# Bytes of text formatted at a time when a model is written: memory beyond the model's own.
WRITE_BUFFER_BYTES = 4 * 2**20
# Models of at most this many weights are formatted by Python (about 50 ms at most): the
# compiled kernel's one-time compilation (about 3 s) would be most of a small model's first
# save; the text is the same byte for byte.
PYTHON_FORMAT_MAX_WEIGHTS = 1 << 16


@dataclass(frozen=True)
class ModelFields:
    """What a model file holds.

    solver : LIBLINEAR solver number (linsvm's own solvers are written as their problem's)
    labels : (n_classes,) int64 class labels in file order (empty for regression / one-class)
    coef : (n_weight_vectors, n_features) float64
    bias : LIBLINEAR's ``B`` (-1 for none)
    bias_weights : (n_weight_vectors,) the bias feature's weights, None when ``bias < 0``
    rho : one-class offset (0 for the others)
    feature_map : the ``feature_map`` line's key/value pairs, or None for a plain model
    """

    solver: int
    labels: np.ndarray
    coef: np.ndarray
    bias: float
    bias_weights: np.ndarray | None
    rho: float = 0.0
    feature_map: dict[str, str] | None = None


def labels_as_ints(labels) -> list[int]:
    """Class labels as Python ints for the file; ModelFormatError for any other label."""
    out = []
    for lab in np.asarray(labels).tolist():
        if isinstance(lab, bool | int):
            out.append(int(lab))
        elif isinstance(lab, float) and lab.is_integer():
            out.append(int(lab))
        else:
            raise ModelFormatError(
                f"class label {lab!r} is not an integer: LIBLINEAR model files hold integer "
                "labels (fit on integer labels to save the model)"
            )
        if not -(2**31) <= out[-1] < 2**31:
            raise ModelFormatError(f"class label {out[-1]} does not fit LIBLINEAR's int labels")
    return out


def format_model_text(
    solver: int,
    labels,
    coef: np.ndarray,
    bias: float,
    bias_weights: np.ndarray | None,
    rho: float = 0.0,
    feature_map: dict[str, str] | None = None,
) -> str:
    """LIBLINEAR model-file text for these fields (shapes as in `ModelFields`)."""
    sink = io.BytesIO()
    header = _header_text(solver, labels, coef, bias, rho, feature_map)
    sink.write(header.encode("ascii"))
    _write_weight_lines(sink, np.asarray(coef, dtype=np.float64), bias, bias_weights)
    return sink.getvalue().decode("ascii")


# nr_feature and the labels are C ints in LIBLINEAR's files (and in its reader here)
MAX_NR_FEATURE = 2**31


def _header_text(
    solver: int,
    labels,
    coef: np.ndarray,
    bias: float,
    rho: float,
    feature_map: dict[str, str] | None,
) -> str:
    """The lines before the weights, up to and including ``w``; ModelFormatError for labels
    the format cannot hold."""
    spec = model_file_solver(solver)  # linsvm's own solvers: their LIBLINEAR problem
    lines = []
    if feature_map is not None:
        lines.append(" ".join(["feature_map", *(f"{k} {v}" for k, v in feature_map.items())]))
    lines.append(f"solver_type {spec.name}")
    if spec.kind == CLASSIFICATION:
        ints = labels_as_ints(labels)
        lines.append(f"nr_class {len(ints)}")
        lines.append("label " + " ".join(str(v) for v in ints))
    else:
        lines.append("nr_class 2")
    nr_feature = np.shape(coef)[1]
    if nr_feature >= MAX_NR_FEATURE:
        raise ModelFormatError(f"{nr_feature} features: LIBLINEAR's model files hold at most "
                               f"{MAX_NR_FEATURE - 1} (nr_feature is a C int)")  # fmt: skip
    lines.append(f"nr_feature {nr_feature}")
    lines.append(f"bias {bias:.17g}")
    if spec.kind == ONECLASS:
        lines.append(f"rho {rho:.17g}")
    lines.append("w")
    return "\n".join(lines) + "\n"


def _write_weight_lines(
    sink: BinaryIO, coef: np.ndarray, bias: float, bias_weights: np.ndarray | None
) -> None:
    """LIBLINEAR's weight lines into ``sink``: line j holds coef[:, j], then (bias >= 0) a
    line of the bias weights; each weight "%.17g" and a space.

    A small model's lines are formatted by Python (`PYTHON_FORMAT_MAX_WEIGHTS`). Others are
    cut into spans of about `WRITE_BUFFER_BYTES` of text, formatted by the compiled kernel
    (`linsvm.io._format`, which releases the GIL) in a thread per core and written in order
    as they come: memory is a few buffers a thread, whatever the model.
    """
    n_w = coef.shape[0]
    blocks = [coef]
    if bias >= 0:
        bw = np.zeros(n_w) if bias_weights is None else np.asarray(bias_weights, np.float64)
        blocks.append(bw.reshape(n_w, 1))
    if sum(block.size for block in blocks) <= PYTHON_FORMAT_MAX_WEIGHTS:
        lines = ["".join(f"{v:.17g} " for v in column) or " "
                 for block in blocks for column in block.T.tolist()]  # fmt: skip
        if lines:
            sink.write(("\n".join(lines) + "\n").encode("ascii"))
        return
    line_bytes = n_w * (_format.MAX_VALUE_BYTES + 1) + 2  # the longest a line can be
    per_span = max(1, WRITE_BUFFER_BYTES // line_bytes)
    spans = [
        (block, a, min(a + per_span, block.shape[1]))
        for block in blocks
        for a in range(0, block.shape[1], per_span)
    ]
    n_threads = min(effective_n_jobs(-1), len(spans))
    if n_threads <= 1:
        for span in spans:
            for chunk in _format_span(*span, per_span * line_bytes):
                sink.write(chunk)
        return
    # at most two spans a thread in flight: formatted while the earlier ones are written
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        pending: collections.deque = collections.deque()
        for span in spans:
            pending.append(pool.submit(_format_span, *span, per_span * line_bytes))
            if len(pending) >= 2 * n_threads:
                for chunk in pending.popleft().result():
                    sink.write(chunk)
        while pending:
            for chunk in pending.popleft().result():
                sink.write(chunk)


def _format_span(block: np.ndarray, start: int, stop: int, size: int) -> list:
    """The text of weight lines ``start`` to ``stop`` - 1 of ``block`` (n_w, n_lines), as
    a list of bytes-like chunks (one, in a buffer of ``size`` bytes sized for them)."""
    buffer = np.empty(max(size, _format.MAX_VALUE_BYTES + 2), dtype=np.uint8)
    bits = block.view(np.uint64)
    n_w = block.shape[0]
    chunks = []
    row, col, pos = start, 0, 0
    while True:
        row, col, pos, status = _format.format_weight_rows(bits, row, col, stop, buffer, pos)
        if status == _format.DONE:
            chunks.append(buffer[:pos].data)
            return chunks
        if status == _format.FULL:  # not with the buffer sized for the span; kept general
            chunks.append(bytes(buffer[:pos]))
            pos = 0
        elif status == _format.FALLBACK:
            # a weight the kernel leaves to Python (see linsvm.io._format); no longer than
            # the kernel's longest, so it fits where the kernel stopped
            text = f"{float(block[col, row]):.17g} "
            col += 1
            if col == n_w:
                text += "\n"
                row, col = row + 1, 0
            encoded = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
            buffer[pos : pos + encoded.shape[0]] = encoded
            pos += encoded.shape[0]


def _weight_vectors(spec, nr_class: int) -> int:
    """LIBLINEAR's nr_w, the weights a line of the file: one for two classes (but
    Crammer-Singer's) and for regression / one-class (nr_class 2), else one a class."""
    return 1 if nr_class == 2 and not spec.multiclass else nr_class


def _check_weight_vectors(fields: ModelFields) -> None:
    """Refuse weights of more or fewer vectors than the header implies (nr_w a line): the file
    would be written and then not load, here or in LIBLINEAR."""
    spec = model_file_solver(fields.solver)
    nr_class = len(fields.labels) if spec.kind == CLASSIFICATION else 2
    nr_w = _weight_vectors(spec, nr_class)
    if np.shape(fields.coef)[0] != nr_w:
        raise ModelFormatError(f"{np.shape(fields.coef)[0]} weight vectors: a {spec.name} model "
                               f"of {nr_class} classes has {nr_w}")  # fmt: skip


def write_model_file(path: str | os.PathLike, fields: ModelFields) -> None:
    """Write ``fields`` to ``path`` in LIBLINEAR's format, atomically, streamed (memory stays
    a buffer above the model's); a model the format cannot hold (non-integer labels) is a
    ModelFormatError naming ``path``, nothing written."""
    try:
        header = _header_text(
            fields.solver, fields.labels, fields.coef, fields.bias, fields.rho,
            fields.feature_map,
        )  # fmt: skip
        _check_weight_vectors(fields)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{os.fsdecode(os.fspath(path))}: cannot save: {exc}") from None
    coef = np.asarray(fields.coef, dtype=np.float64)
    with atomic_writer(path) as f:
        f.write(header.encode("ascii"))
        _write_weight_lines(f, coef, fields.bias, fields.bias_weights)


class _EndOfHeaderText(ModelFormatError):
    """The header's text ran out before its ``w``: more of the file may hold the rest."""


@dataclass(frozen=True)
class _Header:
    """A model file's header, read up to its ``w``."""

    solver: int
    nr_class: int
    nr_feature: int
    bias: float
    labels: list[int]
    rho: float
    feature_map: dict[str, str] | None
    end: int  # where the weights' text starts (just past ``w``)
    end_line: int  # the line (from 1) it is on

    @property
    def weight_shape(self) -> tuple[int, int]:
        """(w_size, nr_w): the rows of weights (a feature's, then the bias's) and their
        length (one a class, or one)."""
        nr_w = _weight_vectors(SOLVERS[self.solver], self.nr_class)
        return self.nr_feature + (1 if self.bias >= 0 else 0), nr_w


# LIBLINEAR's words: what C's isspace does not separate.
_WORD = re.compile(r"[^ \t\n\r\v\f]+")


def _parse_header(text: str, name: str) -> _Header:
    """The header at the start of ``text``, read a word at a time up to ``w`` (as LIBLINEAR's
    ``load_model`` reads it). _EndOfHeaderText where the text ends first."""
    words = _WORD.finditer(text)
    pos = 0  # (where the header's last word ends)
    at = 0  # (where it starts: errors about it name its line)
    header: dict[str, object] = {}
    feature_map = None

    def here(position: int | None = None) -> str:
        """"name:line" of the header's last word (or of the word at ``position``)."""
        return f"{name}:{_line_of(text, at if position is None else position)}"

    def take(what: str) -> str:
        nonlocal pos, at
        word = next(words, None)
        if word is None:
            raise _EndOfHeaderText(f"{name}: unexpected end of file while reading {what}")
        pos, at = word.end(), word.start()
        return word.group()

    def take_number(what: str, kind=int, infinite: bool = False):
        tok = take(what)
        try:
            value = kind(tok)
        except ValueError:
            value = None
        # LIBLINEAR's fields are C ints (decimal digits; not Python's "1_000" or "١") and
        # finite doubles; ``infinite``: also +-inf (not NaN)
        if value is None or (kind is int and not (tok.lstrip("+-").isascii()
                                                  and tok.lstrip("+-").isdigit()
                                                  and -(2**31) <= value < 2**31)) or (
                kind is float and not (_is_number(tok)
                                       and (math.isfinite(value)
                                            or (infinite and math.isinf(value))))):  # fmt: skip
            raise ModelFormatError(f"{here()}: bad {what} {tok!r}")
        return value

    seen: set[str] = set()
    value_at: dict[str, int] = {}  # (where the values checked after the header start)
    key = take("the header")
    if key == "feature_map":
        # linsvm's extension: key/value pairs up to solver_type (checked by the Model)
        line_start, pairs = at, []
        while (key := take("the feature_map line")) != "solver_type":
            pairs.append(key)
        if len(pairs) % 2:
            raise ModelFormatError(f"{here(line_start)}: the feature_map line must hold "
                                   "key/value pairs")  # fmt: skip
        keys = pairs[::2]
        if len(set(keys)) < len(keys):
            twice = next(k for k in keys if keys.count(k) > 1)
            raise ModelFormatError(f"{here(line_start)}: {twice!r} given twice in the "
                                   "feature_map line")  # fmt: skip
        feature_map = dict(zip(keys, pairs[1::2], strict=True))

    while True:
        if key in seen:
            # (a later nr_class would leave the labels read for the earlier one)
            raise ModelFormatError(f"{here()}: {key!r} given twice in the header")
        seen.add(key)
        if key == "solver_type":
            sname = take("solver_type")
            if sname not in SOLVER_BY_NAME:
                raise ModelFormatError(f"{here()}: unknown solver type {sname!r}")
            header["solver"] = SOLVER_BY_NAME[sname].number
        elif key == "nr_class":
            header["nr_class"] = take_number("nr_class")
            value_at["nr_class"] = at
            if header["nr_class"] < 1:  # (before a label line reads that many labels)
                raise ModelFormatError(f"{here(at)}: bad nr_class {header['nr_class']}")
        elif key == "nr_feature":
            header["nr_feature"] = take_number("nr_feature")
            value_at["nr_feature"] = at
        elif key == "bias":
            header["bias"] = take_number("bias", float)
        elif key == "rho":
            # (inf: -s 21 with nu = 1, every row at its bound, as LIBLINEAR writes and reads it;
            # every decision value is then -inf)
            header["rho"] = take_number("rho", float, infinite=True)
        elif key == "label":
            if "nr_class" not in header:
                raise ModelFormatError(f"{here()}: 'label' before 'nr_class'")
            header["label"] = [take_number("label") for _ in range(int(header["nr_class"]))]
        elif key == "w":
            break
        else:
            raise ModelFormatError(f"{here()}: unknown text in model file: {key!r}")
        key = take("the header")

    for required, key in (
        ("solver", "solver_type"),
        ("nr_class", "nr_class"),
        ("nr_feature", "nr_feature"),
        ("bias", "bias"),
    ):
        if required not in header:
            raise ModelFormatError(f"{name}: missing '{key}' in the header")
    solver = int(header["solver"])
    nr_class = int(header["nr_class"])
    nr_feature = int(header["nr_feature"])
    kind = SOLVERS[solver].kind
    if nr_feature < 0:
        raise ModelFormatError(f"{here(value_at['nr_feature'])}: bad nr_feature {nr_feature}")
    if kind == CLASSIFICATION and "label" not in header:
        raise ModelFormatError(f"{name}: a classification model needs a 'label' line")
    if kind != CLASSIFICATION and nr_class != 2:
        # (LIBLINEAR writes 2 and uses the first weight vector; more would be ignored)
        what = "regression" if kind == REGRESSION else "one-class"
        raise ModelFormatError(f"{here(value_at['nr_class'])}: a {what} model has nr_class 2, "
                               f"not {nr_class}")  # fmt: skip
    return _Header(
        solver=solver,
        nr_class=nr_class,
        nr_feature=nr_feature,
        bias=float(header["bias"]),
        labels=list(header.get("label", [])),
        # (LIBLINEAR reads a rho line in any model but uses it for one-class models only)
        rho=float(header.get("rho", 0.0)) if kind == ONECLASS else 0.0,
        feature_map=feature_map,
        end=pos,
        end_line=_line_of(text, pos),
    )


def _fields(header: _Header, coef: np.ndarray, bias_weights: np.ndarray) -> ModelFields:
    """The fields of a model of this header and its weights."""
    return ModelFields(
        solver=header.solver,
        labels=np.array(header.labels, dtype=np.int64),
        coef=coef,
        bias=header.bias,
        bias_weights=bias_weights if header.bias >= 0 else None,
        rho=header.rho,
        feature_map=header.feature_map,
    )


def parse_model_text(text: str, name: str = "<model>") -> ModelFields:
    """The fields of LIBLINEAR model-file text (as LIBLINEAR's ``load_model`` reads it)."""
    header = _parse_header(text, name)
    weights = text[header.end :].encode("utf-8", "surrogateescape")
    return _fields(header, *_read_weights(io.BytesIO(weights), len(weights), header, name))


def read_model_file(path: str | os.PathLike) -> ModelFields:
    """The fields of a LIBLINEAR-format model file (one written here or by LIBLINEAR), read a
    piece at a time: loading takes little memory beyond the weights."""
    name = os.fsdecode(os.fspath(path))
    with open(path, "rb") as file:
        source: BinaryIO = file
        status = os.fstat(file.fileno())
        size = status.st_size
        if not stat.S_ISREG(status.st_mode):
            # (a pipe: its length, which bounds the weights it can hold, is known once read)
            data = file.read()
            source, size = io.BytesIO(data), len(data)
        head = b""
        while True:
            more = source.read(max(len(head), HEADER_PIECE_BYTES))
            head += more
            # (the header's whole words: up to the last blank, or to the end of the file)
            text = head[: _after_last_blank(head) if more else len(head)].decode(
                "ascii", "surrogateescape"
            )
            try:
                header = _parse_header(text, name)
            except ModelFormatError as exc:
                if isinstance(exc, _EndOfHeaderText) and more:
                    continue
                if not text.isascii():
                    raise ModelFormatError(f"{name}: not a LIBLINEAR model file (not ASCII "
                                           "text)") from None  # fmt: skip
                raise
            if not text[: header.end].isascii():  # (a header of other bytes that parsed)
                raise ModelFormatError(f"{name}: not a LIBLINEAR model file (not ASCII text)")
            break
        source.seek(header.end)  # (one character of the text a byte of the file)
        return _fields(header, *_read_weights(source, size - header.end, header, name))


def _after_last_blank(data: bytes) -> int:
    """Where the last of C's blanks in ``data`` ends (0 if there is none)."""
    return max(data.rfind(blank) for blank in _BLANKS) + 1


NEWLINE = b"\n"
_BLANKS = (b" ", NEWLINE, b"\t", b"\r", b"\v", b"\f")
# Bytes of the file read at a time: the header's first piece (doubled until it holds the
# header) and the weights' (a compiled kernel reads each in turn).
HEADER_PIECE_BYTES = 1 << 16
WEIGHT_PIECE_BYTES = 1 << 22
# Models of at most this many weights are read by Python (some 30 ms at most): the compiled
# kernel's one-time compilation would be most of a small model's first load. Both read the
# same numbers the same way.
PYTHON_PARSE_MAX_WEIGHTS = 1 << 16


def _read_weights(source: BinaryIO, size: int, header: _Header, name: str):
    """The header's weights, (n_w, nr_feature) and the bias's (n_w,), read from ``source``
    (``size`` bytes from its position to its end) a piece at a time, each into its place.

    A header asking for more weights than the bytes can hold (each takes a digit and a blank
    at least) is refused without making their array, which could be any size: the words are
    counted, and the error says how many there are.
    """
    w_size, nr_w = header.weight_shape
    expected = w_size * nr_w
    plausible = expected <= (size + 1) // 2
    coef = np.empty((nr_w, header.nr_feature) if plausible else (nr_w, 0))
    bias_weights = np.empty(nr_w if plausible and header.bias >= 0 else 0)
    read_words = _python_words if expected <= PYTHON_PARSE_MAX_WEIGHTS else _compiled_words
    found, line, carry, last = 0, header.end_line, b"", b""
    while True:
        # (a word longer than a piece is read in pieces twice as long each time)
        more = source.read(max(WEIGHT_PIECE_BYTES, len(carry)))
        piece = carry + more if carry else more
        if not piece:
            break
        last = piece[-1:]
        stop = len(piece) if not more else _after_last_blank(piece)
        found, newlines, bad = read_words(piece, stop, coef, bias_weights, found)
        line += newlines
        if bad is not None:
            word_start, what = bad
            word = piece[word_start:].split(maxsplit=1)[0].decode("utf-8", "surrogateescape")
            if what == "nonfinite":
                raise ModelFormatError(f"{name}:{line}: weights contain NaN or infinity "
                                       f"({word!r})")  # fmt: skip
            raise ModelFormatError(f"{name}:{line}: bad weight {word!r}")
        carry = piece[stop:]
    if found != expected:
        raise ModelFormatError(
            f"{name}: expected {expected} weights ({w_size} rows of {nr_w}), found {found}"
        )
    if expected and not last.isspace():
        # (LIBLINEAR ends each line of weights with a newline: a file cut in the middle of
        # its last weight would otherwise load with a shorter number)
        raise ModelFormatError(f"{name}: the file ends inside a weight, with no newline "
                               "after its last one (cut short?)")  # fmt: skip
    return coef, bias_weights


def _compiled_words(piece: bytes, stop: int, coef, bias_weights, found: int):
    """Read the words of piece[:stop] into their places (`_parse.parse_number_words`) with
    the compiled reader: (found, newlines, None), or (found, newlines, (start, "bad" or
    "nonfinite")) of the word that stopped it, newlines those before it."""
    buf = np.frombuffer(piece, dtype=np.uint8)
    at, lines = 0, 0
    while True:
        found, status, word_start, word_end, newlines = _parse.parse_number_words(
            buf, at, stop, coef, bias_weights, found
        )
        lines += newlines
        if status == _parse.WORDS_DONE:
            return found, lines, None
        if status != _parse.WORDS_FALLBACK:
            return found, lines, (word_start, "bad" if status == _parse.WORDS_BAD else "nonfinite")
        # (a number whose rounding the kernel leaves to float(): rare; 1e400 overflows)
        value = float(piece[word_start:word_end])
        if not math.isfinite(value):
            return found, lines, (word_start, "nonfinite")
        _place(coef, bias_weights, found, np.array([value]))
        found, at = found + 1, word_end


def _python_words(piece: bytes, stop: int, coef, bias_weights, found: int):
    """`_compiled_words` in Python, for small models."""
    words = piece[:stop].split()
    taken = max(0, min(len(words), coef.size + bias_weights.shape[0] - found))
    values = np.empty(taken)
    for k, word in enumerate(words[:taken]):
        value = float(word) if _is_number(word.decode("latin-1")) else None
        if value is None or not math.isfinite(value):
            where = [m.start() for m in re.finditer(rb"\S+", piece[:stop])][k]
            _place(coef, bias_weights, found, values[:k])
            what = "bad" if value is None else "nonfinite"
            return found + k, piece.count(NEWLINE, 0, where), (where, what)
        values[k] = value
    _place(coef, bias_weights, found, values)
    return found + len(words), piece.count(NEWLINE, 0, stop), None


def _place(coef: np.ndarray, bias_weights: np.ndarray, found: int, values: np.ndarray) -> None:
    """Put the file's words found, found + 1, ... (``values``) in their places: word n is
    weight vector n % n_w's weight of feature n // n_w (or of the bias, past the features)."""
    n_w, n_features = coef.shape
    feature, vector = np.divmod(np.arange(found, found + values.shape[0]), n_w)
    of_feature = feature < n_features
    coef[vector[of_feature], feature[of_feature]] = values[of_feature]
    bias_weights[vector[~of_feature]] = values[~of_feature]


def _line_of(text: str, position: int) -> int:
    """The line (from 1) of ``text`` holding ``position``."""
    return text.count("\n", 0, position) + 1


def _is_number(word: str) -> bool:
    """Whether the word is a number as LIBLINEAR writes them (decimal, inf, nan)."""
    if "_" in word or not word.isascii():
        return False
    try:
        float(word)
    except ValueError:
        return False
    return True
