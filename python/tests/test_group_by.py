"""joinery.group_by against pyarrow's Table.group_by, on every algorithm and value type."""
import numpy as np
import pyarrow as pa
import pytest

import joinery
from conftest import KEY_TYPES, VALUE_TYPES, random_keys, random_values

AGGS = ["count", "sum", "min", "max", "mean"]


def expect_matches_pyarrow(table, aggs, **kwargs):
    got = joinery.group_by(table, "k", aggs, **kwargs)
    pairs = [(c, a) for c, kinds in aggs.items() for a in ([kinds] if isinstance(kinds, str) else kinds)]
    want = table.group_by("k").aggregate(pairs)
    names = ["k"] + [f"{c}_{a}" for c, a in pairs]
    assert got.column_names == names
    got, want = got.sort_by("k"), want.sort_by("k")
    assert got.column("k").to_pylist() == want.column("k").to_pylist()
    for c, a in pairs:
        name = f"{c}_{a}"
        g, w = got.column(name).to_numpy(), want.column(name).to_numpy()
        source = table.schema.field(c).type
        if a in ("min", "max"):
            assert got.schema.field(name).type == source, name
        if a == "count":
            assert got.schema.field(name).type == pa.int64()
        if a == "mean":
            assert got.schema.field(name).type == pa.float64()
        if a == "sum" and pa.types.is_integer(source):
            # Sums wrap in 64 bits (pyarrow's too); signed -> int64, unsigned -> uint64.
            want_type = pa.int64() if pa.types.is_signed_integer(source) else pa.uint64()
            assert got.schema.field(name).type == want_type
            assert (g == w.astype(g.dtype)).all(), name
        elif a == "mean" or pa.types.is_floating(source):
            np.testing.assert_allclose(g, w.astype(np.float64), rtol=1e-5, err_msg=name)
        else:
            assert (g == w).all(), name
    return got


@pytest.mark.parametrize("groups", [1, 37, 5000])
def test_every_algorithm_matches_pyarrow(backend, groups):
    rng = np.random.default_rng(groups)
    rows = 20000
    table = pa.table({"k": random_keys(rng, "int32", rows, groups),
                      "v": random_values(rng, "int32", rows),
                      "w": random_values(rng, "float64", rows)})
    for algorithm in joinery.algorithms("group_by", backend):
        expect_matches_pyarrow(table, {"v": AGGS, "w": ["sum", "max", "mean"]},
                               algorithm=algorithm, backend=backend)


@pytest.mark.parametrize("key_type", KEY_TYPES)
def test_every_key_and_value_type(backend, key_type):
    rng = np.random.default_rng(11)
    rows = 6000
    columns = {"k": random_keys(rng, key_type, rows, 300)}
    for t in VALUE_TYPES:
        columns[t] = random_values(rng, t, rows)
    table = pa.table(columns)
    expect_matches_pyarrow(table, {t: ["sum", "min", "max", "mean", "count"] for t in VALUE_TYPES},
                           backend=backend)


def test_sorted_groups_and_list_of_pairs(backend):
    rng = np.random.default_rng(12)
    table = {"k": rng.integers(-50, 50, 4000).astype(np.int64),
             "v": rng.integers(0, 9, 4000).astype(np.int16)}
    got = joinery.group_by(table, ["k"], [("v", "sum"), ("v", "count")], sort=True,
                           backend=backend)
    assert list(got) == ["k", "v_sum", "v_count"]
    assert (np.diff(got["k"]) > 0).all()
    for k, s, c in zip(got["k"], got["v_sum"], got["v_count"]):
        mask = table["k"] == k
        assert s == table["v"][mask].sum() and c == mask.sum()


def test_empty_input(backend):
    table = pa.table({"k": pa.array([], pa.int32()), "v": pa.array([], pa.int64())})
    got = joinery.group_by(table, "k", {"v": ["sum", "count"]}, backend=backend)
    assert got.num_rows == 0 and got.column_names == ["k", "v_sum", "v_count"]


def test_stats(backend):
    table = {"k": np.arange(1000, dtype=np.int32) % 10, "v": np.arange(1000, dtype=np.int32)}
    _, stats = joinery.group_by(table, "k", {"v": "sum"}, return_stats=True, backend=backend)
    assert stats.backend == backend and stats.algorithm != "automatic" and stats.seconds > 0


def test_several_keys_and_nulls_match_pyarrow(backend):
    rng = np.random.default_rng(5)
    n = 3000

    def column(values, type_, share=0.1):
        return pa.array(values, type_, mask=rng.random(n) < share)
    table = pa.table({"k1": column(rng.integers(-3, 3, n), pa.int16()),
                      "k2": column(rng.choice([0.5, 2.25, -7.0, 1e10], n), pa.float64()),
                      "v": column(rng.integers(-1000, 1000, n), pa.int32(), 0.3),
                      "w": column(rng.random(n), pa.float64(), 0.3)})
    aggs = [(c, a) for c in ("v", "w") for a in ("count", "sum", "min", "max", "mean")]
    for algorithm in joinery.algorithms("group_by", backend):
        if algorithm == "multi_gpu":
            continue
        got = joinery.group_by(table, ["k1", "k2"], aggs, algorithm=algorithm, backend=backend,
                               result="arrow")
        want = table.group_by(["k1", "k2"]).aggregate(aggs)
        names = ["k1", "k2"] + [f"{c}_{a}" for c, a in aggs]
        assert got.column_names == names
        rows = lambda t: sorted(zip(*[t.column(x).to_pylist() for x in names]),  # noqa: E731
                                key=lambda r: tuple((v is None, v or 0) for v in r))
        for g, w in zip(rows(got), rows(want.select(names)), strict=True):
            assert g[:2] == w[:2]
            for x, y in zip(g[2:], w[2:]):
                assert (x is None) == (y is None)
                if x is not None:
                    assert x == pytest.approx(y, rel=1e-9)
        sorted_groups = joinery.group_by(table, ["k1", "k2"], {"v": "size"}, sort=True,
                                         algorithm=algorithm, backend=backend, result="arrow")
        keys = list(zip(sorted_groups["k1"].to_pylist(), sorted_groups["k2"].to_pylist()))
        order = lambda k: tuple((v is None, v or 0) for v in k)  # noqa: E731
        assert keys == sorted(keys, key=order)
        assert sum(sorted_groups["v_size"].to_pylist()) == n
