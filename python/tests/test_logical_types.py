"""bool, date32, timestamps and decimals from Arrow, NumPy and pandas: join keys and payloads,
group-by keys and their aggregates, against pyarrow; the result keeps each column's type."""
import datetime
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import joinery
from conftest import canonical

PYARROW_HOW = {"inner": "inner", "left": "left outer", "semi": "left semi", "anti": "left anti",
               "right": "right outer", "full": "full outer"}


def with_nulls(rng, values, share=0.1):
    return [None if rng.random() < share else v for v in values]


def typed_tables(seed, left_rows=600, right_rows=400):
    rng = np.random.default_rng(seed)
    day = datetime.date(1995, 1, 1)
    dates = lambda n, span: [day + datetime.timedelta(days=int(d))  # noqa: E731
                             for d in rng.integers(-span, span, n)]
    left = pa.table({
        "d": pa.array(with_nulls(rng, dates(left_rows, 40)), pa.date32()),
        "p": pa.array(with_nulls(rng, [decimal.Decimal(int(v)).scaleb(-2)
                                       for v in rng.integers(-10**9, 10**9, left_rows)]),
                      pa.decimal128(12, 2)),
        "t": pa.array(rng.integers(-10**15, 10**15, left_rows), pa.timestamp("us")),
        "f": pa.array(with_nulls(rng, (rng.random(left_rows) < 0.3).tolist()), pa.bool_()),
    })
    right = pa.table({
        "d": pa.array(with_nulls(rng, dates(right_rows, 30)), pa.date32()),
        "w": pa.array([decimal.Decimal(int(v)) * 10**20 for v in rng.integers(-99, 99, right_rows)],
                      pa.decimal128(38, 0)),
        "n": pa.array(rng.integers(-10**17, 10**17, right_rows), pa.timestamp("ns")),
    })
    return left, right


@pytest.mark.parametrize("how", ["inner", "left", "right", "full", "semi", "anti"])
def test_typed_keys_and_payloads_match_pyarrow(backend, how):
    left, right = typed_tables(1)
    for algorithm in joinery.algorithms("join", backend):
        if algorithm.startswith("multi_gpu"):
            continue
        got = joinery.join(left, right, on="d", how=how, algorithm=algorithm, backend=backend,
                           result="arrow")
        want = left.join(right, keys="d", join_type=PYARROW_HOW[how])
        columns = want.column_names
        assert sorted(got.column_names) == sorted(columns)
        for name in columns:
            assert got.schema.field(name).type == want.schema.field(name).type, name
        assert canonical(got, columns) == canonical(want, columns)
        if how in ("inner", "semi"):
            assert got.num_rows > 0


def test_decimal_and_timestamp_keys(backend):
    left, right = typed_tables(2)
    left = left.append_column("w", pa.array([decimal.Decimal(int(v)) * 10**20 for v in
                                             np.random.default_rng(3).integers(-99, 99, left.num_rows)],
                                            pa.decimal128(38, 0)))
    got = joinery.join(left, right, on=["w", "d"], how="inner", backend=backend, result="arrow")
    want = left.join(right, keys=["w", "d"], join_type="inner")
    assert got.num_rows == want.num_rows > 0
    assert canonical(got, want.column_names) == canonical(want, want.column_names)


def test_typed_group_by_matches_pyarrow(backend):
    left, _ = typed_tables(4, left_rows=5000)
    aggs = [("p", "sum"), ("p", "min"), ("p", "max"), ("p", "count"), ("t", "min"),
            ("t", "max"), ("f", "max")]
    want = left.group_by(["d", "f"]).aggregate(aggs)
    for algorithm in joinery.algorithms("group_by", backend):
        if algorithm == "multi_gpu":
            continue
        got = joinery.group_by(left, ["d", "f"], aggs, algorithm=algorithm, backend=backend,
                               result="arrow")
        assert got.column_names == want.column_names
        for name in want.column_names:
            if name == "p_sum":  # pyarrow keeps decimal128(12, 2); SQL widens it to 38 digits
                assert got.schema.field(name).type == pa.decimal128(38, 2)
                continue
            assert got.schema.field(name).type == want.schema.field(name).type, name
        got = got.set_column(got.column_names.index("p_sum"), "p_sum",
                             pc.cast(got.column("p_sum"), pa.decimal128(12, 2)))
        assert canonical(got, want.column_names) == canonical(want, want.column_names)


def test_decimal_sum_past_int64_and_average():
    # Ten values of 18 digits: their sum's integer (10^19 - 10) is past int64.
    largest = decimal.Decimal("9999999999999999.99")
    values = [largest] * 10 + [decimal.Decimal("-0.05"), None]
    table = pa.table({"k": pa.array([1] * 10 + [2, 2], pa.int32()),
                      "v": pa.array(values, pa.decimal128(18, 2))})
    got = joinery.group_by(table, "k", [("v", "sum"), ("v", "mean")], sort=True, backend="cpu",
                           result="arrow")
    assert got.column("v_sum").to_pylist() == [decimal.Decimal("99999999999999999.90"),
                                               decimal.Decimal("-0.05")]
    assert got.column("v_mean").to_pylist() == pytest.approx([9999999999999999.99, -0.05])


def test_numpy_and_pandas_dates_and_bools(backend):
    pd = pytest.importorskip("pandas")
    left = pd.DataFrame({"d": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03"]),
                         "b": [True, False, True]})
    # The same unit on both sides (pandas' own: ns before pandas 3, us since).
    right = {"d": np.array(["2024-01-02", "2024-01-03", "2024-01-04"], dtype=left["d"].dtype),
             "v": np.arange(3, dtype=np.int64)}
    got = joinery.join(left, right, on="d", backend=backend)
    assert isinstance(got, pd.DataFrame)
    assert got["d"].dtype == left["d"].dtype
    rows = sorted(zip(got["d"].dt.strftime("%Y-%m-%d"), got["b"], got["v"]))
    assert rows == [("2024-01-02", False, 0), ("2024-01-03", True, 1)]
    numpy_result = joinery.join(left, right, on="d", backend=backend, result="numpy")
    assert numpy_result["d"].dtype == left["d"].dtype
    with pytest.raises(TypeError, match="CuPy"):
        joinery.join(left, right, on="d", backend=backend, result="cupy")


def test_types_that_are_refused(backend):
    table = pa.table({"k": pa.array([1, 2], pa.int32()),
                      "d": pa.array([datetime.date(2020, 1, 1)] * 2, pa.date32()),
                      "z": pa.array([datetime.datetime(2020, 1, 1)] * 2,
                                    pa.timestamp("us", tz="UTC"))})
    with pytest.raises(ValueError, match="sum of a date32 column is not supported"):
        joinery.group_by(table.select(["k", "d"]), "k", [("d", "sum")], backend=backend)
    with pytest.raises(ValueError, match="time zone"):
        joinery.group_by(table, "k", [("z", "max")], backend=backend)
    ints = pa.table({"d": pa.array([1, 2], pa.int32())})
    with pytest.raises(ValueError, match="mismatched key types"):
        joinery.join(table.select(["d"]), ints, on="d", backend=backend)


def test_a_decimal_of_18_digits_joins_a_wider_one(backend):
    # decimal128(12, 2) is read as decimal64; it still joins decimal128(20, 2).
    left = pa.table({"k": pa.array([decimal.Decimal("1.25"), decimal.Decimal("-3.00"), None],
                                   pa.decimal128(12, 2))})
    right = pa.table({"k": pa.array([decimal.Decimal("1.25"), decimal.Decimal("10") ** 17],
                                    pa.decimal128(20, 2)),
                      "v": pa.array([1, 2], pa.int32())})
    got = joinery.join(left, right, on="k", how="left", backend=backend, result="arrow")
    assert got.schema.field("k").type == pa.decimal128(20, 2)
    widened = left.cast(pa.schema([("k", pa.decimal128(20, 2))]))  # pyarrow joins equal types
    assert canonical(got, ["k", "v"]) == canonical(
        widened.join(right, keys="k", join_type="left outer"), ["k", "v"])
