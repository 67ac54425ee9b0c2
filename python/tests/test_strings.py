"""String columns (Arrow utf8 / large_utf8, NumPy and pandas strings): join keys and payloads,
group-by keys and COUNT / MIN / MAX of strings, on every algorithm, against pyarrow and pandas."""
import numpy as np
import pyarrow as pa
import pytest

import joinery
from conftest import canonical

PYARROW_HOW = {"inner": "inner", "left": "left outer", "semi": "left semi", "anti": "left anti",
               "right": "right outer", "full": "full outer"}

WORDS = ["", "a", "ab", "abc", "abcdefgh", "abcdefghi", "zebra", "Zebra", "café", "日本語",
         "a long string past sixteen bytes", "a long string past sixteen bytez", " lead",
         "trail ", "x,y", 'quote"d']


def strings(rng, rows, words, null_share=0.1):
    picks = rng.integers(0, len(words), rows)
    nulls = rng.random(rows) < null_share
    return [None if n else words[p] for p, n in zip(picks, nulls)]


def string_tables(seed, left_rows=700, right_rows=500, key_type=pa.string()):
    rng = np.random.default_rng(seed)
    left = pa.table({"k": pa.array(strings(rng, left_rows, WORDS), key_type),
                     "a": pa.array(rng.integers(-1000, 1000, left_rows), pa.int32()),
                     "s": pa.array(strings(rng, left_rows, WORDS, 0.2), pa.string())})
    right = pa.table({"k": pa.array(strings(rng, right_rows, WORDS[:12]), key_type),
                      "b": pa.array(rng.integers(0, 10**12, right_rows), pa.int64()),
                      "t": pa.array(strings(rng, right_rows, WORDS, 0.2), pa.large_string())})
    return left, right


def expect_matches_pyarrow(left, right, how, on, **kwargs):
    got = joinery.join(left, right, on=on, how=how, result="arrow", **kwargs)
    want = left.join(right, keys=on, join_type=PYARROW_HOW[how])
    columns = want.column_names
    assert sorted(got.column_names) == sorted(columns)
    for name in columns:
        assert got.schema.field(name).type == want.schema.field(name).type, name
    assert canonical(got, columns) == canonical(want, columns)
    if how in ("inner", "semi"):
        assert got.num_rows > 0
    return got


@pytest.mark.parametrize("how", ["inner", "left", "right", "full", "semi", "anti"])
def test_string_keys_and_payloads_match_pyarrow(backend, how):
    left, right = string_tables(1)
    for algorithm in joinery.algorithms("join", backend):
        expect_matches_pyarrow(left, right, how, "k", algorithm=algorithm, backend=backend)


@pytest.mark.parametrize("key_type", [pa.string(), pa.large_string()])
def test_a_string_key_beside_an_integer_key(backend, key_type):
    left, right = string_tables(2, key_type=key_type)
    rng = np.random.default_rng(3)
    left = left.append_column("i", pa.array(rng.integers(0, 3, left.num_rows), pa.int16()))
    right = right.append_column("i", pa.array(rng.integers(0, 3, right.num_rows), pa.int16()))
    for how in ("inner", "full"):
        expect_matches_pyarrow(left, right, how, ["k", "i"], backend=backend)


def test_chunked_and_sliced_string_columns(backend):
    left, right = string_tables(4, left_rows=2000, right_rows=900)
    # Several record batches (gathered into one column), and slices whose offsets do not start
    # at 0 and whose validity bitmaps start inside a byte.
    left = pa.Table.from_batches(left.slice(3).to_batches(max_chunksize=333))
    right = right.slice(5, 800)
    expect_matches_pyarrow(left, right, "inner", "k", backend=backend)
    expect_matches_pyarrow(left, right, "left", "k", backend=backend)


def test_string_group_by_matches_pyarrow(backend):
    rng = np.random.default_rng(5)
    rows = 5000
    table = pa.table({"k": pa.array(strings(rng, rows, WORDS), pa.string()),
                      "v": pa.array(rng.integers(-100, 100, rows), pa.int64()),
                      "s": pa.array([None if x is None else x + str(rng.integers(0, 9))
                                     for x in strings(rng, rows, WORDS, 0.3)], pa.large_string())})
    aggs = [("v", "sum"), ("s", "min"), ("s", "max"), ("s", "count")]
    want = table.group_by("k").aggregate(aggs)
    for algorithm in joinery.algorithms("group_by", backend):
        if algorithm == "multi_gpu":
            continue
        got = joinery.group_by(table, "k", aggs, algorithm=algorithm, backend=backend,
                               result="arrow")
        assert got.column_names == want.column_names
        for name in want.column_names:
            assert got.schema.field(name).type == want.schema.field(name).type, name
        assert canonical(got, want.column_names) == canonical(want, want.column_names)


def test_sorted_string_groups_are_in_byte_order(backend):
    rng = np.random.default_rng(6)
    keys = strings(rng, 3000, WORDS, 0.05)
    table = pa.table({"k": pa.array(keys, pa.string()), "v": np.arange(3000, dtype=np.int32)})
    got = joinery.group_by(table, "k", [("v", "count")], sort=True, backend=backend,
                           result="arrow")
    distinct = sorted({k for k in keys if k is not None}, key=lambda s: s.encode())
    assert got.column("k").to_pylist() == distinct + [None]


def test_pandas_and_numpy_strings_round_trip(backend):
    pd = pytest.importorskip("pandas")
    left = pd.DataFrame({"k": pd.Series(["x", None, "y", "z", "x"], dtype=object),
                         "a": np.arange(5, dtype=np.int64)})
    right = {"k": np.array(["x", "z", "w"]), "b": np.array([1.5, 2.5, 3.5])}
    got = joinery.join(left, right, on="k", how="left", backend=backend)
    assert isinstance(got, pd.DataFrame)
    # pandas' own string column for Python strings: object before pandas 3, "str" since.
    assert got["k"].dtype == object or pd.api.types.is_string_dtype(got["k"].dtype)
    keys = [None if pd.isna(k) else k for k in got["k"]]
    rows = sorted(zip(keys, got["a"], got["b"].fillna(-1)), key=lambda r: r[1])
    assert rows == [("x", 0, 1.5), (None, 1, -1), ("y", 2, -1), ("z", 3, 2.5), ("x", 4, 1.5)]
    numpy_result = joinery.join(right, right, on="k", backend=backend, result="numpy")
    assert sorted(numpy_result["k"].tolist()) == ["w", "x", "z"]
    with pytest.raises(TypeError, match="CuPy"):
        joinery.join(right, right, on="k", backend=backend, result="cupy")


def test_strings_meet_only_strings(backend):
    left = pa.table({"k": pa.array(["1", "2"])})
    right = pa.table({"k": pa.array([1, 2], pa.int64())})
    with pytest.raises(ValueError, match="a string key joins a string key"):
        joinery.join(left, right, on="k", backend=backend)
    with pytest.raises(ValueError, match="strings take count"):
        joinery.group_by(left.append_column("i", pa.array([1, 2])), "i", [("k", "sum")],
                         backend=backend)
