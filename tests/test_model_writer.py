"""The model writer: "%.17g" weights from the compiled formatter, streamed a buffer at a time,
byte for byte the text of Python's formatting; bounded memory on a wide model."""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linsvm import Model, load_model
from linsvm.io import _format, model_file
from linsvm.io.model_file import (
    ModelFields,
    format_model_text,
    labels_as_ints,
    write_model_file,
)
from linsvm.solvers import CLASSIFICATION, ONECLASS, model_file_solver


def reference_text(solver, labels, coef, bias, bias_weights, rho=0.0, feature_map=None) -> str:
    """The model text as the writer made it with one Python string per weight: the bytes the
    compiled writer must reproduce."""
    spec = model_file_solver(solver)
    coef = np.asarray(coef, dtype=np.float64)
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
    lines.append(f"nr_feature {coef.shape[1]}")
    lines.append(f"bias {bias:.17g}")
    if spec.kind == ONECLASS:
        lines.append(f"rho {rho:.17g}")
    lines.append("w")
    weights = coef.T
    if bias >= 0:
        bw = np.zeros(coef.shape[0]) if bias_weights is None else np.asarray(bias_weights)
        weights = np.vstack([weights, bw.reshape(1, coef.shape[0])])
    body = "\n".join(" ".join(f"{v:.17g}" for v in row) + " " for row in weights.tolist())
    return "\n".join(lines) + "\n" + body + ("\n" if body else "")


@pytest.fixture(autouse=True)
def _compiled_kernel_for_every_size(monkeypatch):
    """The tests here check the compiled kernel's text: small models too go through it
    (``test_small_models_formatted_by_python_give_the_same_text`` checks the Python path)."""
    monkeypatch.setattr(model_file, "PYTHON_FORMAT_MAX_WEIGHTS", -1)


def kernel_text(values: np.ndarray, buffer_bytes: int = 1 << 16) -> str:
    """values (n,) written one a line by the writer (Python for what the kernel hands back),
    a buffer of ``buffer_bytes`` at a time."""
    sink = io.BytesIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(model_file, "WRITE_BUFFER_BYTES", buffer_bytes)
        model_file._write_weight_lines(sink, values.reshape(1, -1), -1.0, None)
    return sink.getvalue().decode("ascii")


def python_text(values: np.ndarray) -> str:
    return "".join(f"{v:.17g} \n" for v in values.tolist())


# Values that exercise every layout and rounding case: signed zeros, subnormals, the ends of
# the range, powers of ten and their neighbours (the digit count changes there), the fixed /
# exponential switch (1e-5, 1e17), integers past 2**53, and exact ties at the 17th digit
# (m / 4 with m odd near 2**52: v * 10 ends in .5), which Python rounds half to even.
SPECIAL = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
           1.7976931348623157e308, -1.7976931348623157e308, 1e-5, 9.999999999999999e-5, 1e-4,
           0.0001234, 1e16, 1e17, 9.999999999999998e16, 1e22, 1e23, 2.0**53, 2.0**53 + 2,
           2.0**60, 2.0**63, 123456789012345678.0, 0.1, 1 / 3, -2 / 3, 1.5, 100.0, 1e300,
           1e-300, 4.35, 0.30000000000000004]
SPECIAL += [10.0**k for k in range(-323, 309)]
SPECIAL += [math.nextafter(10.0**k, math.inf) for k in range(-300, 300, 7)]
SPECIAL += [math.nextafter(10.0**k, 0.0) for k in range(-300, 300, 7)]
SPECIAL += [(2**52 + 2 * j + 1) / 4 for j in range(50)]  # exact ties
SPECIAL += [(2**52 + 2 * j + 1) / 2**k for j in range(5) for k in range(1, 60, 3)]


def test_special_values_format_as_python():
    values = np.array(SPECIAL + [-v for v in SPECIAL])
    assert kernel_text(values) == python_text(values)


def test_random_bit_patterns_format_as_python():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**63 - 1, size=200_000, dtype=np.int64).view(np.float64)
    values = bits[np.isfinite(bits)]
    values[::2] *= -1
    assert kernel_text(values, buffer_bytes=4096) == python_text(values)
    # weights of trained models are mostly of moderate size
    moderate = rng.standard_normal(200_000) * 10.0 ** rng.integers(-8, 8, 200_000)
    assert kernel_text(moderate) == python_text(moderate)


def test_non_finite_and_undecided_values_are_handed_to_python():
    out = np.zeros(64, dtype=np.uint8)
    for v in (math.inf, -math.inf, math.nan):
        assert _format.write_g(np.array(v).view(np.uint64)[()], out, 0, 17) == -1
    tie = (2**52 + 1) / 4  # v * 10 = N + 1/2 exactly: round half to even needs the exact value
    assert _format.write_g(np.array(tie).view(np.uint64)[()], out, 0, 17) == -1
    w = np.array([[1.0, tie, -2.0]]).view(np.uint64)
    row, col, n, status = _format.format_weight_rows(w, 0, 0, 3, out, 0)
    assert (row, col, status) == (1, 0, _format.FALLBACK) and bytes(out[:n]) == b"1 \n"
    values = np.array([1.0, tie, math.inf, -math.inf, math.nan, -0.0, 3.0])
    assert kernel_text(values) == python_text(values)


def test_buffer_boundaries_do_not_change_the_text():
    rng = np.random.default_rng(1)
    coef = rng.standard_normal((3, 500)) * 1e-3
    expected = reference_text(1, [1, 2, 3], coef, 1.0, np.array([0.5, -0.25, 1e-9]))
    for size in (_format.MAX_VALUE_BYTES + 2, 40, 97, 4096):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(model_file, "WRITE_BUFFER_BYTES", size)
            text = format_model_text(1, [1, 2, 3], coef, 1.0, np.array([0.5, -0.25, 1e-9]))
        assert text == expected


WEIGHTS = st.floats(allow_nan=False, allow_infinity=False, width=64) | st.sampled_from(SPECIAL)


@settings(deadline=None, max_examples=150)
@given(
    n_w=st.integers(0, 4),
    data=st.data(),
    bias=st.sampled_from([-1.0, 1.0, 0.5]),
    solver=st.sampled_from([1, 4, 11, 21]),
    with_bias_weights=st.booleans(),
)
def test_any_model_text_is_the_reference_text(n_w, data, bias, solver, with_bias_weights):
    n_features = data.draw(st.integers(0, 12))
    coef = np.array(
        data.draw(st.lists(WEIGHTS, min_size=n_w * n_features, max_size=n_w * n_features)),
        dtype=np.float64,
    ).reshape(n_w, n_features)
    labels = list(range(1, n_w + 1)) if n_w >= 2 else [1, -1]
    bias_weights = None
    if with_bias_weights:
        bias_weights = np.array(data.draw(st.lists(WEIGHTS, min_size=n_w, max_size=n_w)))
    fmap = data.draw(st.sampled_from([None, {"degree": "2", "n_input": "3"}]))
    rho = data.draw(WEIGHTS)
    args = (solver, labels, coef, bias, bias_weights, rho, fmap)
    assert format_model_text(*args) == reference_text(*args)


@pytest.mark.parametrize("n_w, n_features, bias", [(1, 7, -1.0), (3, 5, 1.0), (0, 4, 1.0),
                                                   (2, 0, 1.0), (2, 0, -1.0)])  # fmt: skip
def test_small_models_formatted_by_python_give_the_same_text(monkeypatch, n_w, n_features,
                                                            bias):  # fmt: skip
    rng = np.random.default_rng(n_w * 10 + n_features)
    special = np.array(SPECIAL[: n_w * n_features])
    coef = (rng.standard_normal(n_w * n_features) * special).reshape(n_w, n_features)
    args = (1 if n_w <= 1 else 4, list(range(1, max(n_w, 2) + 1)), coef, bias,
            rng.standard_normal(n_w))  # fmt: skip
    kernel = format_model_text(*args)
    monkeypatch.setattr(model_file, "PYTHON_FORMAT_MAX_WEIGHTS", 1 << 16)
    assert format_model_text(*args) == kernel == reference_text(*args)


def test_transposed_and_float32_weights(tmp_path):
    """Weights as a parsed model holds them (a transposed view) and float32 ones."""
    rng = np.random.default_rng(2)
    coef = rng.standard_normal((7, 4)).T  # (4, 7), not C-contiguous
    args = (4, [5, 6, 7, 8], coef, 1.0, rng.standard_normal(4))
    assert format_model_text(*args) == reference_text(*args)
    coef32 = rng.standard_normal((3, 9)).astype(np.float32)
    args32 = (1, [1, 2, 3], coef32, -1.0, None)
    assert format_model_text(*args32) == reference_text(*args32)
    path = tmp_path / "m.model"
    write_model_file(path, ModelFields(4, np.array([5, 6, 7, 8]), coef, 1.0, args[4]))
    assert path.read_bytes() == reference_text(*args).encode("ascii")


def test_multi_class_model_saves_the_reference_bytes(tmp_path):
    rng = np.random.default_rng(3)
    coef = rng.standard_normal((5, 300)) * np.logspace(-12, 12, 300)
    coef[:, ::17] = 0.0
    coef[1, ::13] = -0.0
    model = Model(1, np.array([3, 1, 4, 5, 9]), coef, 1.0, rng.standard_normal(5))
    path = tmp_path / "multi.model"
    model.save(path)
    expected = reference_text(1, [3, 1, 4, 5, 9], coef, 1.0, model.bias_weights_)
    assert path.read_bytes() == expected.encode("ascii")
    back = load_model(path)
    assert back.coef_.tobytes() == model.coef_.tobytes()


def test_writing_a_wide_model_takes_a_buffer_not_a_string_per_weight(tmp_path):
    """30 million weights saved under an address-space limit of what the process maps plus
    256 MiB: the weights as Python floats alone would take 720 MB."""
    script = textwrap.dedent(
        """
        import os, resource, sys
        import numpy as np
        from linsvm import Model

        path = sys.argv[1]
        # the kernels compiled first (a model wider than Python formats)
        Model(1, np.array([1, -1]), np.ones((1, 1 << 17)), 1.0).save(path)
        coef = np.zeros((1, 30_000_000))
        coef[0, ::1000] = -0.25
        model = Model(1, np.array([1, -1]), coef, 1.0)
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = mapped + 256 * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        model.save(path)
        print("saved")
        """
    )
    path = tmp_path / "wide.model"
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "saved"
    with open(path, "rb") as f:
        head = f.read(200).split(b"\n")
    assert head[:6] == [b"solver_type L2R_L2LOSS_SVC_DUAL", b"nr_class 2", b"label 1 -1",
                        b"nr_feature 30000000", b"bias 1", b"w"]
    assert head[6] == b"-0.25 " and head[7] == b"0 "
    # 30,000 lines "-0.25 \n", the other weights and the bias "0 \n"
    header = sum(len(h) + 1 for h in head[:6])
    assert os.path.getsize(path) == header + 30_000 * 7 + (30_000_000 - 30_000 + 1) * 3
