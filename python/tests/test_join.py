"""joinery.join against pyarrow's own Table.join, on every algorithm, key type and how."""
import numpy as np
import pyarrow as pa
import pytest

import joinery
from conftest import KEY_TYPES, VALUE_TYPES, canonical, key_domain, random_keys, random_values

PYARROW_HOW = {"inner": "inner", "left": "left outer", "semi": "left semi", "anti": "left anti",
               "right": "right outer", "full": "full outer", "outer": "full outer"}


def tables(seed, key_type, left_rows=3000, right_rows=2000, domain=1500,
           left_values=("int32", "float64"), right_values=("int64", "uint8")):
    rng = np.random.default_rng(seed)
    # One domain for both sides; the right side misses some of it (unmatched left rows).
    keys = key_domain(rng, key_type, domain)
    left = {"k": random_keys(rng, key_type, left_rows, keys)}
    right = {"k": random_keys(rng, key_type, right_rows, keys[: len(keys) * 3 // 4])}
    for i, t in enumerate(left_values):
        left[f"a{i}"] = random_values(rng, t, left_rows)
    for i, t in enumerate(right_values):
        right[f"b{i}"] = random_values(rng, t, right_rows)
    return pa.table(left), pa.table(right)


def expect_matches_pyarrow(left, right, how, on="k", **kwargs):
    got = joinery.join(left, right, on=on, how=how, **kwargs)
    want = left.join(right, keys=on, join_type=PYARROW_HOW[how])
    columns = want.column_names
    assert sorted(got.column_names) == sorted(columns)
    assert got.column_names[: len([on] if isinstance(on, str) else on)] == (
        [on] if isinstance(on, str) else on)
    for name in columns:
        assert got.schema.field(name).type == want.schema.field(name).type, name
    assert canonical(got, columns) == canonical(want, columns)
    if how in ("inner", "semi"):
        assert got.num_rows > 0  # the tables must exercise matches
    return got


def algorithms_of(backend):
    return [a for a in joinery.algorithms("join", backend)]


@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti"])
def test_every_algorithm_matches_pyarrow(backend, how):
    left, right = tables(1, "int32")
    for algorithm in algorithms_of(backend):
        expect_matches_pyarrow(left, right, how, algorithm=algorithm, backend=backend)


@pytest.mark.parametrize("key_type", KEY_TYPES)
@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti"])
def test_every_key_type_matches_pyarrow(backend, key_type, how):
    left, right = tables(2, key_type)
    expect_matches_pyarrow(left, right, how, backend=backend)


def test_every_value_type_is_carried(backend):
    left, right = tables(3, "int64", left_values=VALUE_TYPES, right_values=VALUE_TYPES)
    for how in ["inner", "left"]:
        expect_matches_pyarrow(left, right, how, backend=backend)


def test_skewed_many_to_many_keys(backend):
    rng = np.random.default_rng(4)
    hot = np.where(rng.random(4000) < 0.3, 7, rng.integers(0, 500, 4000)).astype(np.int64)
    left = pa.table({"k": hot, "a0": np.arange(4000, dtype=np.int32)})
    right = pa.table({"k": hot[:300].copy(), "b0": np.arange(300, dtype=np.int32)})
    for how in ["inner", "left", "semi", "anti"]:
        expect_matches_pyarrow(left, right, how, backend=backend)


def test_index_output_names_left_and_right_rows(backend):
    left, right = tables(5, "int64")
    lk, rk = left.column("k").to_numpy(), right.column("k").to_numpy()
    a0, b0 = left.column("a0").to_pylist(), right.column("b0").to_pylist()
    order = lambda r: tuple((v is None, v or 0) for v in r)  # noqa: E731
    for how in ["inner", "left"]:
        left_rows, right_rows = joinery.join(left, right, on="k", how=how, output="index",
                                             result="numpy", backend=backend)
        matched = right_rows >= 0
        assert (lk[left_rows[matched]] == rk[right_rows[matched]]).all()
        # -1 exactly for the left rows whose key the right side lacks (left join), never for inner
        missing = np.flatnonzero(~np.isin(lk, rk)).tolist()
        assert sorted(left_rows[~matched].tolist()) == (missing if how == "left" else [])
        # the (key, left payload, right payload) rows the pairs name are pyarrow's join
        want = left.join(right, keys="k", join_type=PYARROW_HOW[how])
        want_rows = sorted(zip(*[want.column(c).to_pylist() for c in ["k", "a0", "b0"]]), key=order)
        got_rows = sorted(((int(lk[l]), a0[l], b0[r] if r >= 0 else None)
                           for l, r in zip(left_rows.tolist(), right_rows.tolist())), key=order)
        assert got_rows == want_rows
    for how in ["semi", "anti"]:
        left_rows, right_rows = joinery.join(left, right, on="k", how=how, output="index",
                                             result="numpy", backend=backend)
        assert right_rows is None
        has_match = np.isin(left.column("k").to_numpy(), right.column("k").to_numpy())
        want = np.flatnonzero(has_match if how == "semi" else ~has_match)
        assert sorted(left_rows.tolist()) == want.tolist()


def test_int32_index_type(backend):
    left, right = tables(6, "int32")
    left_rows, right_rows = joinery.join(left, right, on="k", output="index", index_type="int32",
                                         result="numpy", backend=backend)
    assert left_rows.dtype == np.int32 and right_rows.dtype == np.int32
    wide = joinery.join(left, right, on="k", output="index", result="numpy", backend=backend)
    assert sorted(zip(left_rows.tolist(), right_rows.tolist())) == \
        sorted(zip(wide[0].tolist(), wide[1].tolist()))


def test_key_names_and_suffix(backend):
    left = pa.table({"id": np.array([1, 2, 3], np.int64), "v": np.array([10, 20, 30], np.int64)})
    right = pa.table({"ref": np.array([3, 1, 1], np.int64), "v": np.array([5, 6, 7], np.int64)})
    got = joinery.join(left, right, left_on="id", right_on="ref", backend=backend)
    assert got.column_names == ["id", "v", "v_right"]
    assert canonical(got, got.column_names) == [(1, 10, 6), (1, 10, 7), (3, 30, 5)]
    got = joinery.join(left, right, left_on=["id"], right_on=["ref"], suffix="_r", backend=backend)
    assert got.column_names == ["id", "v", "v_r"]


def test_the_shared_column_name_is_the_default_key(backend):
    left = {"k": np.array([1, 2], np.int32), "a": np.array([5, 6], np.int32)}
    right = {"k": np.array([2, 2], np.int32), "b": np.array([7, 8], np.int32)}
    got = joinery.join(left, right, backend=backend)
    assert sorted(zip(*[got[c].tolist() for c in ["k", "a", "b"]])) == [(2, 6, 7), (2, 6, 8)]


def test_empty_inputs(backend):
    empty = pa.table({"k": pa.array([], pa.int64()), "a0": pa.array([], pa.int32())})
    full, right = tables(7, "int64")
    for how in ["inner", "left", "semi", "anti"]:
        assert joinery.join(empty, right, on="k", how=how, backend=backend).num_rows == 0
        got = joinery.join(full.select(["k", "a0"]), empty.rename_columns(["k", "b0"]), on="k",
                           how=how, backend=backend)
        assert got.num_rows == (full.num_rows if how in ("left", "anti") else 0)


def test_stats_name_what_ran(backend):
    left, right = tables(8, "int32")
    table, stats = joinery.join(left, right, on="k", return_stats=True, backend=backend,
                                algorithm="sort_merge")
    assert isinstance(stats, joinery.Stats)
    assert stats.algorithm == "sort_merge" and stats.backend == backend
    assert stats.seconds > 0 and stats.phases and stats.call_seconds > 0
    assert table.num_rows == left.join(right, keys="k", join_type="inner").num_rows > 0


def keyed_with_nulls(seed, rows, null_share=0.1):
    """Two key columns (int16, int32) and payloads (float64, int64), each about 10% null."""
    rng = np.random.default_rng(seed)

    def column(values, type_):
        return pa.array(values, type_, mask=rng.random(rows) < null_share)
    return {"k1": column(rng.integers(-3, 3, rows), pa.int16()),
            "k2": column(rng.integers(0, 40, rows), pa.int32())}, rng


@pytest.mark.parametrize("how", ["inner", "left", "right", "full", "outer", "semi", "anti"])
def test_several_key_columns_with_nulls_match_pyarrow(backend, how):
    lcols, rng = keyed_with_nulls(11, 900)
    rcols, _ = keyed_with_nulls(12, 700)
    lcols["a"] = pa.array(rng.random(900), pa.float64(), mask=rng.random(900) < 0.1)
    rcols["b"] = pa.array(rng.integers(0, 10**12, 700), pa.int64(), mask=rng.random(700) < 0.1)
    left, right = pa.table(lcols), pa.table(rcols)
    for algorithm in algorithms_of(backend):
        got = expect_matches_pyarrow(left, right, how, on=["k1", "k2"], algorithm=algorithm,
                                     backend=backend)
        if how in ("inner", "semi"):
            assert got.num_rows > 0


def test_nulls_equal_matches_null_keys(backend):
    left = pa.table({"k": pa.array([1, None, 2], pa.int32()), "a": [10, 20, 30]})
    right = pa.table({"k": pa.array([None, 2, None], pa.int32()), "b": [7, 8, 9]})
    got = joinery.join(left, right, on="k", backend=backend, result="arrow")
    assert canonical(got, ["k", "a", "b"]) == [(2, 30, 8)]
    got = joinery.join(left, right, on="k", backend=backend, nulls_equal=True, result="arrow")
    assert canonical(got, ["k", "a", "b"]) == [(2, 30, 8), (None, 20, 7), (None, 20, 9)]


def test_float_keys_follow_sql_equality(backend):
    left = pa.table({"k": pa.array([0.0, -0.0, float("nan"), 1.5], pa.float64()),
                     "a": [1, 2, 3, 4]})
    right = pa.table({"k": pa.array([0.0, float("nan"), 1.5], pa.float64()), "b": [7, 8, 9]})
    got = joinery.join(left, right, on="k", backend=backend, result="arrow")
    # -0.0 equals 0.0; NaN matches nothing
    assert sorted(zip(got["a"].to_pylist(), got["b"].to_pylist())) == [(1, 7), (2, 7), (4, 9)]
