"""Grouping labels into classes (LIBLINEAR's order), whole or a chunk of rows at a time."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import linsvm.data as data
from linsvm.data import group_labels


def _grouped_whole_and_by_chunks(y: np.ndarray, chunk: int):
    """group_labels with np.unique over the whole array, and a chunk of rows at a time."""
    saved = data._LABEL_CHUNK
    try:
        data._LABEL_CHUNK = 1 << 62
        whole = group_labels(y)
        data._LABEL_CHUNK = chunk
        chunked = group_labels(y)
    finally:
        data._LABEL_CHUNK = saved
    return whole, chunked


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.sampled_from([-1.0, 1.0, 0.0, 2.5, 7.0, -3.0, 1e300]), min_size=2,
                    max_size=200),
    chunk=st.integers(1, 50),
    as_int=st.booleans(),
)
def test_labels_grouped_by_chunks_as_whole(values, chunk, as_int):
    y = np.array(values)
    if as_int:
        y = np.floor(np.clip(y, -5, 5)).astype(np.int64)
    (labels, index), (labels_c, index_c) = _grouped_whole_and_by_chunks(y, chunk)
    np.testing.assert_array_equal(labels_c, labels)
    np.testing.assert_array_equal(index_c, index)
    assert index_c.dtype == index.dtype == np.int32
    # LIBLINEAR's order: first appearance, except +1 before -1 for a -1/+1 problem
    assert np.array_equal(labels[index], y)
    if set(labels.tolist()) != {-1, 1}:
        firsts = [int(np.flatnonzero(y == v)[0]) for v in labels]
        assert firsts == sorted(firsts)
    else:
        assert labels[0] == 1


@pytest.mark.parametrize("n", [(1 << 20) + 1, 3 << 20])
def test_many_rows_take_the_chunked_path(n):
    rng = np.random.default_rng(n)
    y = rng.choice([3.0, -1.0, 8.0], n)
    y[: 3] = [8.0, 3.0, -1.0]
    labels, index = group_labels(y)
    np.testing.assert_array_equal(labels, [8.0, 3.0, -1.0])
    np.testing.assert_array_equal(labels[index], y)


def test_plus_one_first_whatever_the_container_of_numbers():
    """-1/+1 in an object array (a pandas column of objects) is ordered as the same numbers
    in a numeric one, +1 first; booleans and strings keep their order of appearance."""
    y = np.array([-1, 1, 1, -1])
    for values in (y, y.astype(float), y.astype(object), np.array([-1, 1.0, 1, -1], dtype=object)):
        labels, class_index = group_labels(values)
        assert list(labels) == [1, -1]
        np.testing.assert_array_equal(class_index, [1, 0, 0, 1])
    assert list(group_labels(np.array(["-1", "1"], dtype=object))[0]) == ["-1", "1"]
    assert list(group_labels(np.array([False, True], dtype=object))[0]) == [False, True]
