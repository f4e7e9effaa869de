"""Model files in LIBLINEAR's text format, read and written both ways.

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
Reading never runs code; writing goes to a temporary file renamed over the target.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import ModelFormatError
from ..model import Model
from ..solvers import SOLVER_BY_NAME, SOLVERS, model_file_solver
from ._atomic import atomic_write_bytes

_MCSVM_CS = 4


def _labels_as_ints(labels: np.ndarray) -> list[int]:
    out = []
    for lab in labels.tolist():
        if isinstance(lab, bool | int):
            out.append(int(lab))
        elif isinstance(lab, float) and lab.is_integer():
            out.append(int(lab))
        else:
            raise ModelFormatError(
                f"class label {lab!r} is not an integer: LIBLINEAR model files hold integer labels"
            )
        if not -(2**31) <= out[-1] < 2**31:
            raise ModelFormatError(f"class label {out[-1]} does not fit LIBLINEAR's int labels")
    return out


def format_model(model: Model) -> str:
    """The model as LIBLINEAR model-file text."""
    spec = model_file_solver(model.solver)  # linsvm's own solvers: their LIBLINEAR problem
    lines = [f"solver_type {spec.name}"]
    if spec.kind == "classification":
        labels = _labels_as_ints(model.labels_)
        lines.append(f"nr_class {len(labels)}")
        lines.append("label " + " ".join(str(v) for v in labels))
    else:
        lines.append("nr_class 2")
    lines.append(f"nr_feature {model.n_features}")
    lines.append(f"bias {model.bias:.17g}")
    if spec.kind == "oneclass":
        lines.append(f"rho {model.rho:.17g}")
    lines.append("w")
    weights = model.coef_.T  # (n_features, n_w): LIBLINEAR's row-per-feature layout
    if model.bias >= 0:
        weights = np.vstack([weights, model.bias_weights_[None, :]])
    body = "\n".join(" ".join(f"{v:.17g}" for v in row) + " " for row in weights.tolist())
    return "\n".join(lines) + "\n" + body + ("\n" if body else "")


def save_model(model: Model, path: str | os.PathLike) -> None:
    """Write ``model`` to ``path`` in LIBLINEAR's format, atomically."""
    atomic_write_bytes(path, format_model(model).encode("ascii"))


def parse_model(text: str, name: str = "<model>") -> Model:
    """A Model from LIBLINEAR model-file text (as LIBLINEAR's ``load_model`` reads it)."""
    tokens = text.split()
    pos = 0
    header: dict[str, object] = {}

    def take(what: str) -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise ModelFormatError(f"{name}: unexpected end of file while reading {what}")
        pos += 1
        return tokens[pos - 1]

    def take_number(what: str, kind=int):
        tok = take(what)
        try:
            return kind(tok)
        except ValueError:
            raise ModelFormatError(f"{name}: bad {what} {tok!r}") from None

    while True:
        key = take("the header")
        if key == "solver_type":
            sname = take("solver_type")
            if sname not in SOLVER_BY_NAME:
                raise ModelFormatError(f"{name}: unknown solver type {sname!r}")
            header["solver"] = SOLVER_BY_NAME[sname].number
        elif key == "nr_class":
            header["nr_class"] = take_number("nr_class")
        elif key == "nr_feature":
            header["nr_feature"] = take_number("nr_feature")
        elif key == "bias":
            header["bias"] = take_number("bias", float)
        elif key == "rho":
            header["rho"] = take_number("rho", float)
        elif key == "label":
            if "nr_class" not in header:
                raise ModelFormatError(f"{name}: 'label' before 'nr_class'")
            header["label"] = [take_number("label") for _ in range(int(header["nr_class"]))]
        elif key == "w":
            break
        else:
            raise ModelFormatError(f"{name}: unknown text in model file: {key!r}")

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
    bias = float(header["bias"])
    kind = SOLVERS[solver].kind
    if nr_class < 1 or nr_feature < 0:
        raise ModelFormatError(f"{name}: bad nr_class {nr_class} or nr_feature {nr_feature}")
    if kind == "classification" and "label" not in header:
        raise ModelFormatError(f"{name}: a classification model needs a 'label' line")
    nr_w = 1 if nr_class == 2 and solver != _MCSVM_CS else nr_class
    w_size = nr_feature + (1 if bias >= 0 else 0)
    values = tokens[pos:]
    if len(values) != w_size * nr_w:
        raise ModelFormatError(
            f"{name}: expected {w_size * nr_w} weights ({w_size} rows of {nr_w}), "
            f"found {len(values)}"
        )
    try:
        w = np.array(values, dtype=np.float64).reshape(w_size, nr_w)
    except ValueError as exc:
        raise ModelFormatError(f"{name}: bad weight: {exc}") from None
    if not np.isfinite(w).all():
        raise ModelFormatError(f"{name}: weights contain NaN or infinity")
    coef = w[:nr_feature].T
    bias_weights = w[nr_feature] if bias >= 0 else None
    labels = np.array(header.get("label", []), dtype=np.int64)
    return Model(solver, labels, coef, bias, bias_weights, rho=float(header.get("rho", 0.0)))


def load_model(path: str | os.PathLike) -> Model:
    """Read a LIBLINEAR-format model file (one written here or by LIBLINEAR)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="ascii") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise ModelFormatError(f"{path}: not a LIBLINEAR model file (not ASCII text)") from None
    return parse_model(text, path)
