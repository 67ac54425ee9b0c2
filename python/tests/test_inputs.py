"""What joinery reads: every input form, in place where the memory allows, and clear refusals."""
import numpy as np
import pyarrow as pa
import pytest

import joinery
from joinery import _native
from joinery._inputs import read_table


def small_tables():
    left = {"k": np.array([5, 1, 2, 2, 9, 3], np.int64), "a": np.arange(6, dtype=np.int32)}
    right = {"k": np.array([2, 3, 3, 7], np.int64), "b": np.array([20, 30, 31, 70], np.int16)}
    return left, right


EXPECTED_INNER = [(2, 2, 20), (2, 3, 20), (3, 5, 30), (3, 5, 31)]


def rows_of(result, names=("k", "a", "b")):
    if isinstance(result, dict):
        return sorted(zip(*[np.asarray(result[n]).tolist() for n in names]))
    if hasattr(result, "to_pydict"):
        d = result.to_pydict()
    elif type(result).__module__.startswith("polars"):
        d = result.to_dict(as_series=False)
    else:  # pandas
        d = {n: result[n].tolist() for n in names}
    return sorted(zip(*[d[n] for n in names]))


def test_every_table_form_gives_the_same_join():
    # The dataframe libraries are in CI's environment; a lent GPU machine may lack them.
    duckdb = pytest.importorskip("duckdb")
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")

    left, right = small_tables()
    forms = {
        "dict of numpy": (left, right, dict),
        "pyarrow Table": (pa.table(left), pa.table(right), pa.Table),
        "pyarrow RecordBatch": (pa.record_batch(left), pa.record_batch(right), pa.Table),
        "pandas": (pd.DataFrame(left), pd.DataFrame(right), pd.DataFrame),
        "polars": (pl.DataFrame(left), pl.DataFrame(right), pl.DataFrame),
        "dict of pyarrow arrays": ({n: pa.array(v) for n, v in left.items()}, right, pa.Table),
        "dict of pandas Series": ({n: pd.Series(v) for n, v in left.items()}, right, dict),
    }
    con = duckdb.connect()
    con.register("l", pa.table(left))
    forms["DuckDB relation"] = (con.sql("select * from l"), pa.table(right), pa.Table)
    for name, (l, r, result_type) in forms.items():
        got = joinery.join(l, r, on="k")
        assert isinstance(got, result_type), name
        assert rows_of(got) == EXPECTED_INNER, name


def test_result_forms_on_request():
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")

    left, right = small_tables()
    for form, result_type in [("arrow", pa.Table), ("numpy", dict), ("pandas", pd.DataFrame),
                              ("polars", pl.DataFrame)]:
        got = joinery.join(left, right, on="k", result=form)
        assert isinstance(got, result_type)
        assert rows_of(got) == EXPECTED_INNER
    with pytest.raises(ValueError, match="result must be one of"):
        joinery.join(left, right, on="k", result="excel")


def test_left_join_nulls_in_every_result_form():
    pytest.importorskip("pandas")
    left, right = small_tables()
    arrow = joinery.join(left, right, on="k", how="left", result="arrow")
    assert arrow.column("b").null_count == 3  # keys 5, 1 and 9 have no match
    numpy = joinery.join(left, right, on="k", how="left", result="numpy")
    assert isinstance(numpy["b"], np.ma.MaskedArray) and numpy["b"].mask.sum() == 3
    frame = joinery.join(left, right, on="k", how="left", result="pandas")
    assert frame["b"].isna().sum() == 3 and str(frame["b"].dtype) == "Int16"
    assert sorted(frame["k"][frame["b"].isna()].tolist()) == [1, 5, 9]
    want = [(1, 1, None), (2, 2, 20), (2, 3, 20), (3, 5, 30), (3, 5, 31), (5, 0, None), (9, 4, None)]
    key = lambda r: (r[0], r[1], -1 if r[2] is None else r[2])  # noqa: E731
    assert sorted(zip(*[arrow.column(c).to_pylist() for c in "kab"]), key=key) == want
    masked = sorted(zip(numpy["k"].tolist(), numpy["a"].tolist(), numpy["b"].tolist()), key=key)
    assert masked == want  # masked entries read back as None


def test_chunked_arrow_columns_are_gathered_once():
    chunks = pa.chunked_array([pa.array([1, 2], pa.int64()), pa.array([3, 2, 5], pa.int64())])
    table = pa.table({"k": chunks, "a": pa.chunked_array([[10, 20], [30, 40, 50]])})
    read = read_table(table, "left")
    assert [c.chunks_gathered for c in read.columns] == [2, 2]
    got = joinery.join(table, {"k": np.array([2, 5], np.int64)}, on="k")
    assert sorted(zip(got["k"].to_pylist(), got["a"].to_pylist())) == [(2, 20), (2, 40), (5, 50)]


def test_sliced_arrow_arrays_are_read_at_their_offset():
    keys = pa.array(np.arange(100, dtype=np.int64))
    values = pa.array(np.arange(100, dtype=np.int32) * 10)
    table = pa.table({"k": keys, "a": values}).slice(37, 5)
    got = joinery.join(table, {"k": np.array([38, 40, 99], np.int64)}, on="k")
    assert sorted(zip(got["k"].to_pylist(), got["a"].to_pylist())) == [(38, 380), (40, 400)]
    column = read_table(table, "t").columns[0]
    assert column.address == keys.buffers()[1].address + 37 * 8 and column.chunks_gathered == 0


def test_inputs_are_read_in_place():
    left, right = small_tables()
    for name, array in left.items():
        assert _native.column_from_array(array, name).address == array.ctypes.data
    table = pa.table(left)
    for i, column in enumerate(read_table(table, "left").columns):
        assert column.address == table.column(i).chunk(0).buffers()[1].address


def test_polars_frames_are_read_in_place():
    pl = pytest.importorskip("polars")
    left, _ = small_tables()
    frame = pl.DataFrame(left)
    arrow_of_frame = frame.to_arrow()  # zero-copy in polars: the same buffers
    for i, column in enumerate(read_table(frame, "left").columns):
        assert column.address == arrow_of_frame.column(i).chunk(0).buffers()[1].address


def test_results_are_handed_out_without_copies():
    left, right = small_tables()
    native = _native.join(read_table(left, "l").columns, [0], read_table(right, "r").columns, [0],
                          "inner", "table", [1], [1], "automatic", "cpu", "automatic", None, 0,
                          "int64", False)
    for i in range(len(native)):
        assert native.array(i).ctypes.data == native.address(i)
        assert pa.array(joinery._outputs._ArrowColumn(native, i)).buffers()[1].address == native.address(i)


def test_strided_numpy_views_are_copied_and_joined():
    base = np.arange(20, dtype=np.int64)
    left = {"k": base[::2], "a": np.arange(10, dtype=np.int32)}
    got = joinery.join(left, {"k": np.array([4, 5, 6], np.int64)}, on="k")
    assert sorted(zip(got["k"].tolist(), got["a"].tolist())) == [(4, 2), (6, 3)]
    with pytest.raises(ValueError, match="strided view"):
        _native.column_from_array(base[::2], "k")


def test_bad_inputs_are_refused_with_clear_errors():
    left, right = small_tables()
    with pytest.raises(ValueError, match="binary"):
        joinery.join(pa.table({"k": pa.array([b"a", b"b"], pa.binary())}),
                     pa.table({"k": pa.array([b"a"], pa.binary())}), on="k")
    with pytest.raises(TypeError, match="complex"):
        joinery.join({"k": np.array([1, 2]), "z": np.array([1 + 2j, 3j])}, right, on="k")
    with pytest.raises(ValueError, match="key"):
        joinery.join({"k": left["k"].astype(np.int32)}, right, on="k")  # int32 against int64
    with pytest.raises(KeyError, match="no column 'x'"):
        joinery.join(left, right, on="x")
    with pytest.raises(TypeError, match="1 to 8 names"):
        joinery.join(left, right, on=["k"] * 9)
    with pytest.raises(ValueError, match="pair up"):
        joinery.join(left, right, left_on=["k", "a"], right_on=["k"])
    with pytest.raises(ValueError, match="differ in length"):
        joinery.join({"k": np.arange(3), "a": np.arange(4)}, right, on="k")
    with pytest.raises(ValueError, match="1-D"):
        joinery.join({"k": np.zeros((2, 2), np.int64)}, right, on="k")
    with pytest.raises(ValueError, match="how must be"):
        joinery.join(left, right, on="k", how="cross")
    with pytest.raises(ValueError, match="join algorithm"):
        joinery.join(left, right, on="k", algorithm="quantum")
    with pytest.raises(ValueError, match="backend"):
        joinery.join(left, right, on="k", backend="tpu")
    with pytest.raises(TypeError, match="expected a table"):
        joinery.join([1, 2, 3], right, on="k")
    with pytest.raises(ValueError, match="device_budget"):
        joinery.join(left, right, on="k", device_budget="lots")
    with pytest.raises(ValueError, match="aggregation 'median'"):
        joinery.group_by(left, "k", {"a": "median"})
    with pytest.raises(ValueError, match="dictionary-encoded"):
        joinery.join(pa.table({"k": pa.array([1, 2]).dictionary_encode()}), right, on="k")
    # the inputs are untouched by a refused call
    assert left["k"].tolist() == [5, 1, 2, 2, 9, 3]


def test_sliced_record_batches_read_the_slice_only():
    keys = pa.array([1, 2, 3, 4, 5, 6], pa.int64())
    values = pa.array([None, 20, 30, 40, 50, None], pa.int64())  # nulls outside the slice
    batch = pa.RecordBatch.from_arrays([keys, values], names=["k", "a"]).slice(1, 4)
    got = joinery.join(batch, {"k": np.array([2, 5, 6], np.int64)}, on="k")
    assert sorted(zip(got["k"].to_pylist(), got["a"].to_pylist())) == [(2, 20), (5, 50)]
    got = joinery.join(pa.RecordBatch.from_arrays([keys, values], names=["k", "a"]).slice(0, 3),
                       {"k": np.array([1, 2], np.int64)}, on="k")
    assert sorted(zip(got["k"].to_pylist(), got["a"].to_pylist()),
                  key=lambda t: t[0]) == [(1, None), (2, 20)]
    struct = pa.StructArray.from_arrays([keys, values], names=["k", "a"]).slice(2, 3)
    got = joinery.join(pa.RecordBatch.from_struct_array(struct), {"k": np.array([3, 4], np.int64)},
                       on="k")
    assert sorted(zip(got["k"].to_pylist(), got["a"].to_pylist())) == [(3, 30), (4, 40)]


def test_pandas_nullable_columns():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"k": pd.array([1, 2, 3], dtype="Int64"),
                          "a": pd.array([10, 20, 30], dtype="int32[pyarrow]")})
    got = joinery.join(frame, {"k": np.array([2, 3], np.int64)}, on="k")
    assert sorted(zip(got["k"].tolist(), got["a"].tolist())) == [(2, 20), (3, 30)]
    with_na = pd.DataFrame({"k": pd.array([1, None, 3], dtype="Int64"),
                            "a": pd.array([10, 20, None], dtype="Int32")})
    got = joinery.join(with_na, {"k": np.array([3, 1], np.int64)}, on="k", result="arrow")
    assert sorted(zip(got["k"].to_pylist(), got["a"].to_pylist())) == [(1, 10), (3, None)]
    with pytest.raises(ValueError, match="unique"):
        joinery.join(pd.DataFrame([[1, 2]], columns=["k", "k"]), {"k": np.array([1])}, on="k")


def test_aggregations_asked_twice_and_tiny_budgets_are_refused():
    left, right = small_tables()
    with pytest.raises(ValueError, match="asked for twice"):
        joinery.group_by(left, "k", [("a", "sum"), ("a", "sum")])
    with pytest.raises(ValueError, match="device_budget"):
        joinery.join(left, right, on="k", device_budget="0.0001kb")
    assert len(joinery.join(left, right, on="k", device_budget=np.int64(2**30))["k"]) == 4
    with pytest.raises(ValueError, match="device_budget"):
        joinery.group_by(left, "k", {"a": "sum"}, device_budget="lots")
    grouped = joinery.group_by(left, "k", {"a": "sum"}, sort=True, device_budget="1GiB")
    plain = joinery.group_by(left, "k", {"a": "sum"}, sort=True)
    assert all(np.array_equal(grouped[n], plain[n]) for n in plain)
