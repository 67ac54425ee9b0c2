"""The GPU backend from Python: device arrays in and out, and the CPU backend as the oracle.
Collected only where a GPU is present (conftest.py; device-check.sh runs it)."""
import cupy
import numpy as np
import pyarrow as pa
import pytest

import joinery


def rows(result, names):
    if isinstance(result, dict):
        columns = [result[n].get() if hasattr(result[n], "get") else np.asarray(result[n]) for n in names]
        return sorted(zip(*[c.tolist() for c in columns]))
    return sorted(zip(*[result.column(n).to_pylist() for n in names]))


def random_tables(seed, rows_left=200_000, rows_right=50_000):
    rng = np.random.default_rng(seed)
    keys = rng.permutation(np.arange(1, 80_000, dtype=np.int64) * 7919)
    left = {"k": keys[rng.integers(0, len(keys), rows_left)],
            "a": rng.integers(-2**40, 2**40, rows_left), "f": rng.standard_normal(rows_left)}
    right = {"k": keys[rng.integers(0, len(keys) * 3 // 4, rows_right)],
             "b": rng.integers(0, 2**31, rows_right).astype(np.int32)}
    return left, right


@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti"])
def test_device_arrays_join_on_the_gpu_like_the_cpu(how):
    left, right = random_tables(1)
    device_left = {n: cupy.asarray(v) for n, v in left.items()}
    device_right = {n: cupy.asarray(v) for n, v in right.items()}
    got, stats = joinery.join(device_left, device_right, on="k", how=how, return_stats=True)
    assert stats.backend == "gpu"
    assert all(isinstance(v, (cupy.ndarray, tuple)) for v in got.values())
    want = joinery.join(pa.table(left), pa.table(right), on="k", how=how, backend="cpu")
    names = want.column_names
    if how == "left":
        values, valid = got["b"]
        got["b"] = cupy.where(valid, values, -1)
        want = want.set_column(names.index("b"), "b", pa.compute.fill_null(want.column("b"), -1))
    assert rows(got, names) == rows(want, names)


@pytest.mark.parametrize("algorithm", joinery.algorithms("join", "gpu"))
def test_every_gpu_join_algorithm_from_host_arrow(algorithm):
    left, right = random_tables(2, 50_000, 20_000)
    got = joinery.join(pa.table(left), pa.table(right), on="k", algorithm=algorithm, backend="gpu")
    want = joinery.join(pa.table(left), pa.table(right), on="k", backend="cpu")
    assert isinstance(got, pa.Table)
    assert rows(got, want.column_names) == rows(want, want.column_names)


def test_device_group_by_like_the_cpu():
    rng = np.random.default_rng(3)
    table = {"k": rng.integers(0, 5000, 1_000_000).astype(np.int32) * 17,
             "v": rng.integers(-1000, 1000, 1_000_000).astype(np.int32)}
    device = {n: cupy.asarray(v) for n, v in table.items()}
    aggs = {"v": ["count", "sum", "min", "max"]}
    got = joinery.group_by(device, "k", aggs, sort=True)
    assert isinstance(got["k"], cupy.ndarray)
    want = joinery.group_by(table, "k", aggs, sort=True, backend="cpu")
    for name in want:
        assert (got[name].get() == want[name]).all(), name


def test_group_by_streams_host_data_past_its_budget():
    rng = np.random.default_rng(4)
    table = {"k": rng.integers(0, 3000, 2_000_000).astype(np.int32),
             "v": rng.integers(-1000, 1000, 2_000_000).astype(np.int64)}
    aggs = {"v": ["sum", "max", "mean"]}
    got, stats = joinery.group_by(table, "k", aggs, sort=True, device_budget="8MiB",
                                  return_stats=True)
    assert stats.algorithm == "streamed"
    want = joinery.group_by(table, "k", aggs, sort=True, backend="cpu")
    for name in want:
        assert (got[name] == want[name]).all(), name


def test_a_budget_too_small_is_a_memory_error():
    left, right = random_tables(4)
    device_left = {n: cupy.asarray(v) for n, v in left.items()}
    device_right = {n: cupy.asarray(v) for n, v in right.items()}
    with pytest.raises(MemoryError):
        joinery.join(device_left, device_right, on="k", device_budget=4096)


def test_torch_cuda_tensors_are_read_in_place():
    torch = pytest.importorskip("torch")
    left, right = random_tables(5, 100_000, 30_000)
    device_left = {n: torch.from_numpy(v).cuda() for n, v in left.items()}
    device_right = {n: torch.from_numpy(v).cuda() for n, v in right.items()}
    from joinery._inputs import read_table

    table = read_table(device_left, "left")
    assert [c.address for c in table.columns] == [t.data_ptr() for t in device_left.values()]
    got = joinery.join(device_left, device_right, on="k", result="cupy")
    want = joinery.join(pa.table(left), pa.table(right), on="k", backend="cpu")
    assert rows(got, want.column_names) == rows(want, want.column_names)

