"""A feature index whose model cannot fit in memory: refused at its line, before allocating,
by every way `linsvm train` reads its data (in memory, --memory, --dask); the bound is what
the process can allocate (physical memory, the address-space limit), not a constant."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from linsvm import _memory
from linsvm.errors import DataFormatError
from linsvm.io import libsvm, read_libsvm, write_cache
from linsvm.outofcore import train_cache

HUGE = "1 1:1 99999999999:1\n-1 2:1\n"  # 745 GiB of weights for one weight vector
GIB = 2**30


def cli(args: list[str], address_space: int | None = None, timeout: float = 600):
    """``linsvm`` in a subprocess, under an address-space limit when given."""

    def limit() -> None:
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    command = "import sys; from linsvm.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", command, *args], capture_output=True,
                          text=True, timeout=timeout, preexec_fn=limit)  # fmt: skip


def test_the_bound_follows_the_address_space_limit():
    script = textwrap.dedent(
        """
        import resource
        from linsvm import _memory
        before = _memory.allocatable_memory()
        used = _memory._address_space_used()
        resource.setrlimit(resource.RLIMIT_AS, (used + 2**30, resource.RLIM_INFINITY))
        after = _memory.allocatable_memory()
        print(before, after, used)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)  # fmt: skip
    before, after, used = map(int, done.stdout.split())
    assert before == min(before, _memory.physical_memory())
    assert 0 < after <= 2**30 and after < before


def test_reading_to_train_refuses_a_width_that_cannot_fit(tmp_path, monkeypatch):
    path = tmp_path / "huge.txt"
    path.write_text("1 1:1 3:2\n-1 2:1 134217729:1\n")
    # plain reading is not bounded by memory: the matrix itself is small
    X, _ = read_libsvm(path)
    assert X.shape == (2, 134217729)
    monkeypatch.setattr(_memory, "allocatable_memory", lambda: GIB)  # room for 2**27 features
    with pytest.raises(DataFormatError) as caught:
        read_libsvm(path, check_width=True)
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    assert caught.value.what == (
        "feature index 134217729 too large: a model over 134217729 features needs 1.0 GiB a "
        "weight vector, more than the 1.0 GiB of memory this process can allocate"
    )
    path.write_text("1 1:1 3:2\n-1 2:1 134217728:1\n")  # exactly 1 GiB of weights fits
    assert read_libsvm(path, check_width=True)[0].shape == (2, 134217728)
    # 0-based: index 134217727 is already 2**27 features; 134217728 is one too many
    path.write_text("1 0:1 134217728:1\n")
    with pytest.raises(DataFormatError, match="a model over 134217729 features"):
        read_libsvm(path, check_width=True, zero_based=True)
    assert read_libsvm(path, check_width=True, n_features=2**28, zero_based=True)[0].shape == (
        1, 2**28)  # an explicit width is the caller's


def test_a_cache_of_a_width_that_cannot_fit_is_refused_at_the_line(tmp_path, monkeypatch):
    text = tmp_path / "huge.txt"
    text.write_text("1 1:1\n\n-1 2:1 200000000:1\n")
    cache = tmp_path / "huge.lsvc"
    write_cache(text, cache)  # converting is not training: the cache is small
    monkeypatch.setattr(_memory, "allocatable_memory", lambda: GIB)
    with pytest.raises(DataFormatError, match=r"huge.txt:3: feature index 200000000 too large"):
        write_cache(text, tmp_path / "other.lsvc", check_width=True)
    for call in (lambda: read_libsvm(cache, check_width=True),
                 lambda: train_cache(cache, memory="300M")):
        with pytest.raises(DataFormatError) as caught:
            call()
        assert caught.value.line == 3 and "200000000 features" in caught.value.what


def test_the_parser_stops_at_the_line():
    """The kernel refuses the index as it meets it: a malformed line after it is not read."""
    options = libsvm._Options.check(np.float64, None, False, False, check_width=True)
    assert options.index_limit < 99999999999
    with pytest.raises(DataFormatError, match=r"mem:1: feature index 99999999999 too large"):
        libsvm.parse_libsvm_bytes((HUGE + "x y z\n").encode(), "mem", n_jobs=1,
                                  check_width=True)
    # without check_width the index is read, and the next line's error comes first
    with pytest.raises(DataFormatError, match=r"mem:3: bad label 'x'"):
        libsvm.parse_libsvm_bytes((HUGE + "x y z\n").encode(), "mem", n_jobs=1)


@pytest.mark.parametrize("mode", [[], ["--memory", "300M"]])
def test_train_refuses_in_one_line(tmp_path, mode):
    data = tmp_path / "huge.txt"
    data.write_text(HUGE)
    done = cli(["train", "-q", *mode, str(data), str(tmp_path / "m")], address_space=8 * GIB)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith(
        f"linsvm train: error: {data}:1: feature index 99999999999 too large: a model over "
        "99999999999 features needs 745.1 GiB a weight vector, more than the "
    )
    assert not (tmp_path / "m").exists()


def test_train_decides_from_the_address_space_limit(tmp_path):
    """2**31 features (16 GiB of weights) under a 6 GiB address-space limit: refused at the
    line; a narrow file trains under the same limit."""
    data = tmp_path / "wide.txt"
    data.write_text("1 1:1\n-1 2:1\n1 1:0.5 2147483648:1\n")
    done = cli(["train", "-q", str(data), str(tmp_path / "m")], address_space=6 * GIB)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert f"{data}:3: feature index 2147483648 too large" in done.stderr
    assert "needs 16.0 GiB a weight vector" in done.stderr
    data.write_text("1 1:1\n-1 2:1\n1 1:0.5 2:1\n")
    done = cli(["train", "-q", str(data), str(tmp_path / "m")], address_space=6 * GIB)
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_hashed_map_reads_any_index(tmp_path):
    """--hash-bits hashes the raw indices: the model's width is 2**b, whatever the file's."""
    data = tmp_path / "huge.txt"
    data.write_text(HUGE)
    done = cli(["train", "-q", "--hash-bits", "4", str(data), str(tmp_path / "m")])
    assert done.returncode == 0, done.stderr[-3000:]


def test_dask_refuses_in_one_line(tmp_path):
    pytest.importorskip("distributed")
    data = tmp_path / "huge.txt"
    data.write_text(HUGE)
    done = cli(["train", "-q", "--dask", "local:2", str(data), str(tmp_path / "m")])
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("linsvm train: error: ")
    assert "huge.txt:1: feature index 99999999999 too large: a model over 99999999999 " \
           "features needs 745.1 GiB a weight vector" in lines[0]
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("solver, classes, vectors", [(1, 3, 3), (4, 2, 2), (4, 3, 3), (1, 2, 1)])
@pytest.mark.parametrize("memory", [None, "300M"])
def test_a_model_of_many_classes_that_cannot_fit_is_refused_before_training(
    tmp_path, monkeypatch, solver, classes, vectors, memory
):
    """The reader bounds one weight vector's width; a model of k classes holds k (Crammer-
    Singer: one a class, two included). 3 x 2**31 weights were found out only when the trained
    weights were assembled, after the whole run: now refused before any training."""
    from linsvm import InvalidInputError, train
    from linsvm.outofcore import train_cache

    width = 100_000
    monkeypatch.setattr(_memory, "allocatable_memory", lambda: 2 * 8 * width + 8 * 1000)
    data = tmp_path / "wide.txt"
    rows = ["1 1:1 2:0.5", f"-1 2:1 {width}:1", "1 1:0.5", "-1 2:0.2"]
    if classes == 3:
        rows += ["2 3:1", "2 1:0.1 3:0.5"]
    data.write_text("\n".join(rows) + "\n")
    X, y = read_libsvm(data, check_width=True)
    assert X.shape[1] == width
    runs = [lambda: train(X, y, solver=solver)]
    if memory is not None:
        if solver == 4:
            return  # (Crammer-Singer does not train in blocks)
        cache = tmp_path / "wide.lsvc"
        write_cache(data, cache)
        runs = [lambda: train_cache(cache, solver=solver, memory=memory)]
    for run in runs:
        if vectors <= 2:
            run()  # (within the room: two vectors fit)
            continue
        with pytest.raises(InvalidInputError, match=rf"the model's weights \({vectors} x "
                                                    rf"{width} float64"):  # fmt: skip
            run()
