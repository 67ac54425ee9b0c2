"""joinery against DuckDB's SQL on TPC-H-shaped tables: orders x lineitem, customer outer joins
with NULLs in the output, and lineitem grouped by (l_returnflag, l_linestatus) as in Q1; then the
same with TPC-H's text as strings (comments carried, customers joined to nations by name, Q1's
flags as strings with MIN / MAX of a comment). The tables follow TPC-H's shapes (sparse order
keys, a third of the customers without orders, flags as one-letter codes, dates as day numbers)
at a size that runs in CI."""
import math

import numpy as np
import pyarrow as pa
import pytest

import joinery

duckdb = pytest.importorskip("duckdb")


def tpch_like(seed=19):
    rng = np.random.default_rng(seed)
    customers = 1500
    custkey = np.arange(1, customers + 1, dtype=np.int32)
    customer = pa.table({"c_custkey": custkey,
                         "c_nationkey": rng.integers(0, 25, customers).astype(np.int8),
                         "c_acctbal": np.round(rng.uniform(-999.99, 9999.99, customers), 2)})
    orders_n = 15000
    # TPC-H: order keys are sparse (8 of every 32), customers with custkey % 3 == 0 order nothing.
    orderkey = (np.arange(orders_n, dtype=np.int64) // 8) * 32 + np.arange(orders_n) % 8 + 1
    buyers = custkey[custkey % 3 != 0]
    o_custkey = rng.choice(buyers, orders_n)
    o_custkey[:40] = customers + 1 + np.arange(40)  # orders of customers not in the table
    orders = pa.table({"o_orderkey": orderkey,
                       "o_custkey": o_custkey.astype(np.int32),
                       "o_orderdate": pa.array(rng.integers(8035, 10591, orders_n), pa.int32()),
                       "o_totalprice": np.round(rng.uniform(800, 500000, orders_n), 2)})
    lines = rng.integers(1, 8, orders_n)
    n = int(lines.sum())
    l_orderkey = np.repeat(orderkey, lines)
    flags = np.frombuffer(b"ANR", np.int8)
    status = np.frombuffer(b"FO", np.int8)
    discount = pa.array(np.round(rng.uniform(0, 0.1, n), 2), pa.float64(),
                        mask=rng.random(n) < 0.05)  # some NULL discounts
    lineitem = pa.table({"l_orderkey": l_orderkey,
                         "l_linenumber": np.concatenate([np.arange(1, k + 1) for k in lines]).astype(np.int32),
                         "l_quantity": rng.integers(1, 51, n).astype(np.int32),
                         "l_extendedprice": np.round(rng.uniform(900, 105000, n), 2),
                         "l_discount": discount,
                         "l_returnflag": flags[rng.integers(0, 3, n)],
                         "l_linestatus": status[rng.integers(0, 2, n)],
                         "l_shipdate": pa.array(rng.integers(8036, 10713, n), pa.int32())})
    return customer, orders, lineitem


def canonical_rows(table, columns):
    data = [table.column(c).to_pylist() for c in columns]
    return sorted(zip(*data), key=lambda r: tuple((v is None, v if v is not None else 0) for v in r))


def assert_same_rows(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for x, y in zip(g, w):
            if isinstance(y, float) and x is not None:
                assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9), (g, w)
            else:
                assert x == y, (g, w)


@pytest.fixture(scope="module")
def tables():
    return tpch_like()


def test_orders_join_lineitem_carries_dates_and_prices(backend, tables):
    _, orders, lineitem = tables
    got = joinery.join(lineitem, orders, left_on="l_orderkey", right_on="o_orderkey",
                       backend=backend, result="arrow")
    want = duckdb.sql("select l_orderkey, l_linenumber, l_quantity, l_extendedprice, l_discount, "
                      "l_returnflag, l_linestatus, l_shipdate, o_custkey, o_orderdate, "
                      "o_totalprice from lineitem join orders on l_orderkey = o_orderkey"
                      ).arrow().read_all()
    columns = ["l_orderkey", "l_linenumber", "l_quantity", "l_extendedprice", "l_discount",
               "l_returnflag", "l_linestatus", "l_shipdate", "o_custkey", "o_orderdate",
               "o_totalprice"]
    assert got.num_rows == lineitem.num_rows
    assert_same_rows(canonical_rows(got, columns), canonical_rows(want, columns))


@pytest.mark.parametrize("how,sql", [("left", "left join"), ("full", "full outer join"),
                                     ("right", "right join"), ("anti", "anti join"),
                                     ("semi", "semi join")])
def test_customer_outer_joins_orders_with_nulls(backend, tables, how, sql):
    customer, orders, _ = tables
    got = joinery.join(customer, orders, left_on="c_custkey", right_on="o_custkey", how=how,
                       backend=backend, result="arrow")
    if how in ("semi", "anti"):
        columns = ["c_custkey", "c_nationkey", "c_acctbal"]
        want = duckdb.sql(f"select {', '.join(columns)} from customer {sql} orders "
                          "on c_custkey = o_custkey").arrow().read_all()
    else:
        # The key comes out once: the customer's, the order's where there is no customer.
        columns = ["c_custkey", "c_nationkey", "c_acctbal", "o_orderkey", "o_orderdate",
                   "o_totalprice"]
        want = duckdb.sql("select coalesce(c_custkey, o_custkey) as c_custkey, c_nationkey, "
                          f"c_acctbal, o_orderkey, o_orderdate, o_totalprice from customer {sql} "
                          "orders on c_custkey = o_custkey").arrow().read_all()
    assert_same_rows(canonical_rows(got, columns), canonical_rows(want, columns))
    if how in ("left", "full", "anti"):
        assert got.column(columns[-1]).null_count > 0 or how == "anti"


def test_lineitem_grouped_by_flag_and_status_as_q1(backend, tables):
    _, _, lineitem = tables
    aggs = [("l_quantity", "sum"), ("l_extendedprice", "sum"), ("l_quantity", "mean"),
            ("l_extendedprice", "mean"), ("l_discount", "mean"), ("l_discount", "count"),
            ("l_discount", "min"), ("l_discount", "max"), ("l_orderkey", "size")]
    got = joinery.group_by(lineitem, ["l_returnflag", "l_linestatus"], aggs, sort=True,
                           backend=backend, result="arrow")
    want = duckdb.sql("select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice), "
                      "avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(l_discount), "
                      "min(l_discount), max(l_discount), count(*) from lineitem "
                      "group by l_returnflag, l_linestatus "
                      "order by l_returnflag, l_linestatus").fetchall()
    names = ["l_returnflag", "l_linestatus"] + [f"{c}_{a}" for c, a in aggs]
    rows = list(zip(*[got.column(n).to_pylist() for n in names]))
    assert len(rows) == 6
    assert_same_rows(rows, [tuple(r) for r in want])


NATIONS = ["ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA", "FRANCE", "GERMANY",
           "INDIA", "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA", "MOROCCO",
           "MOZAMBIQUE", "PERU", "CHINA", "ROMANIA", "SAUDI ARABIA", "VIETNAM", "RUSSIA",
           "UNITED KINGDOM", "UNITED STATES"]


@pytest.fixture(scope="module")
def string_tables(tables):
    """The tables with TPC-H's text columns: names, comments, flags and nations as strings."""
    customer, orders, lineitem = tables
    rng = np.random.default_rng(23)
    words = ["furiously", "quickly", "pending", "final", "deposits", "accounts", "ironic", "",
             "slyly, carefully", 'the "special" requests']
    comments = lambda n: pa.array(  # noqa: E731
        [None if rng.random() < 0.03 else " ".join(rng.choice(words, rng.integers(1, 6)))
         for _ in range(n)], pa.string())
    customer = customer.append_column(
        "c_name", pa.array([f"Customer#{k:09d}" for k in customer.column("c_custkey").to_pylist()]))
    customer = customer.append_column(
        "c_nation", pa.array([NATIONS[k % 25] for k in customer.column("c_nationkey").to_pylist()]))
    orders = orders.append_column("o_comment", comments(orders.num_rows))
    lineitem = lineitem.append_column(
        "l_flag", pa.array([chr(x) for x in lineitem.column("l_returnflag").to_pylist()]))
    lineitem = lineitem.append_column(
        "l_status", pa.array([chr(x) for x in lineitem.column("l_linestatus").to_pylist()],
                             pa.large_string()))
    lineitem = lineitem.append_column("l_comment", comments(lineitem.num_rows))
    nation = pa.table({"n_name": NATIONS[:20] + ["ATLANTIS"],  # five nations missing, one extra
                       "n_regionkey": pa.array([i % 5 for i in range(21)], pa.int32())})
    return customer, orders, lineitem, nation


def test_orders_join_lineitem_carries_strings(backend, string_tables):
    _, orders, lineitem, _ = string_tables
    lines = lineitem.select(["l_orderkey", "l_linenumber", "l_flag", "l_comment"])
    heads = orders.select(["o_orderkey", "o_custkey", "o_comment"])
    got = joinery.join(lines, heads, left_on="l_orderkey", right_on="o_orderkey",
                       backend=backend, result="arrow")
    want = duckdb.sql("select l_orderkey, l_linenumber, l_flag, l_comment, o_custkey, o_comment "
                      "from lines join heads on l_orderkey = o_orderkey").arrow().read_all()
    columns = ["l_orderkey", "l_linenumber", "l_flag", "l_comment", "o_custkey", "o_comment"]
    assert got.num_rows == lineitem.num_rows
    assert canonical_rows(got, columns) == canonical_rows(want, columns)


@pytest.mark.parametrize("how,sql", [("left", "left join"), ("full", "full outer join"),
                                     ("right", "right join")])
def test_customer_joins_nation_on_names_with_nulls(backend, string_tables, how, sql):
    customer, _, _, nation = string_tables
    people = customer.select(["c_custkey", "c_name", "c_nation"])
    got = joinery.join(people, nation, left_on="c_nation", right_on="n_name", how=how,
                       backend=backend, result="arrow")
    want = duckdb.sql("select c_custkey, c_name, coalesce(c_nation, n_name) as c_nation, "
                      f"n_regionkey from people {sql} nation on c_nation = n_name"
                      ).arrow().read_all()
    columns = ["c_custkey", "c_name", "c_nation", "n_regionkey"]
    assert canonical_rows(got, columns) == canonical_rows(want, columns)
    assert got.column("n_regionkey").null_count > 0 or how == "right"


def test_lineitem_grouped_by_string_flags_as_q1(backend, string_tables):
    _, _, lineitem, _ = string_tables
    aggs = [("l_quantity", "sum"), ("l_extendedprice", "sum"), ("l_discount", "mean"),
            ("l_comment", "count"), ("l_comment", "min"), ("l_comment", "max"),
            ("l_orderkey", "size")]
    got = joinery.group_by(lineitem, ["l_flag", "l_status"], aggs, sort=True, backend=backend,
                           result="arrow")
    want = duckdb.sql("select l_flag, l_status, sum(l_quantity), sum(l_extendedprice), "
                      "avg(l_discount), count(l_comment), min(l_comment), max(l_comment), "
                      "count(*) from lineitem group by l_flag, l_status "
                      "order by l_flag, l_status").fetchall()
    names = ["l_flag", "l_status"] + [f"{c}_{a}" for c, a in aggs]
    rows = list(zip(*[got.column(n).to_pylist() for n in names]))
    assert len(rows) == 6
    assert_same_rows(rows, [tuple(r) for r in want])


@pytest.fixture(scope="module")
def typed_tables(string_tables):
    """The tables with TPC-H's own types, as DuckDB hands them over in Arrow: dates as date32,
    prices, quantities and discounts as DECIMAL(15, 2), flags as strings, a bool and a
    timestamp beside them."""
    _, orders, lineitem, _ = string_tables
    con = duckdb.connect()
    con.register("orders_in", orders)
    con.register("lineitem_in", lineitem)
    typed_orders = con.sql(
        "select o_orderkey, o_custkey, date '1970-01-01' + o_orderdate as o_orderdate, "
        "o_totalprice::decimal(15, 2) as o_totalprice, o_comment, "
        "timestamp '1992-01-01 08:30:00' + to_microseconds(o_orderkey * 1000003) as o_entered "
        "from orders_in").arrow().read_all()
    typed_lineitem = con.sql(
        "select l_orderkey, l_linenumber, l_quantity::decimal(15, 2) as l_quantity, "
        "l_extendedprice::decimal(15, 2) as l_extendedprice, "
        "l_discount::decimal(15, 2) as l_discount, "
        "(l_extendedprice * (1 - coalesce(l_discount, 0)))::decimal(15, 2) as l_disc_price, "
        "l_flag as l_returnflag, l_status as l_linestatus, "
        "date '1970-01-01' + l_shipdate as l_shipdate, l_linenumber % 2 = 0 as l_even "
        "from lineitem_in").arrow().read_all()
    return typed_orders, typed_lineitem


def test_orders_join_lineitem_with_dates_and_decimals(backend, typed_tables):
    orders, lineitem = typed_tables
    got = joinery.join(lineitem, orders, left_on="l_orderkey", right_on="o_orderkey",
                       backend=backend, result="arrow")
    want = duckdb.sql("select * exclude (o_orderkey) from lineitem join orders "
                      "on l_orderkey = o_orderkey").arrow().read_all()
    assert got.num_rows == lineitem.num_rows
    for name in want.column_names:  # every type as DuckDB gave it, dates and decimals kept
        assert got.schema.field(name).type == want.schema.field(name).type, name
    assert canonical_rows(got, want.column_names) == canonical_rows(want, want.column_names)


def test_orders_left_join_with_nulls_in_typed_columns(backend, typed_tables):
    orders, lineitem = typed_tables
    few = lineitem.filter(pa.compute.equal(lineitem.column("l_linenumber"), 7))
    got = joinery.join(orders, few, left_on="o_orderkey", right_on="l_orderkey", how="left",
                       backend=backend, result="arrow")
    want = duckdb.sql("select * exclude (l_orderkey) from orders left join few "
                      "on o_orderkey = l_orderkey").arrow().read_all()
    assert got.column("l_shipdate").null_count > 0
    assert canonical_rows(got, want.column_names) == canonical_rows(want, want.column_names)


def test_q1_with_decimal_sums_and_dates(backend, typed_tables):
    _, lineitem = typed_tables
    aggs = [("l_quantity", "sum"), ("l_extendedprice", "sum"), ("l_disc_price", "sum"),
            ("l_quantity", "mean"), ("l_extendedprice", "mean"), ("l_discount", "mean"),
            ("l_discount", "count"), ("l_shipdate", "min"), ("l_shipdate", "max"),
            ("l_even", "max"), ("l_orderkey", "size")]
    got = joinery.group_by(lineitem, ["l_returnflag", "l_linestatus"], aggs, sort=True,
                           backend=backend, result="arrow")
    want = duckdb.sql("select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice), "
                      "sum(l_disc_price), avg(l_quantity), avg(l_extendedprice), "
                      "avg(l_discount), count(l_discount), min(l_shipdate), max(l_shipdate), "
                      "bool_or(l_even), count(*) from lineitem "
                      "group by l_returnflag, l_linestatus "
                      "order by l_returnflag, l_linestatus").fetchall()
    names = ["l_returnflag", "l_linestatus"] + [f"{c}_{a}" for c, a in aggs]
    assert got.schema.field("l_extendedprice_sum").type == pa.decimal128(38, 2)
    assert got.schema.field("l_shipdate_min").type == pa.date32()
    rows = list(zip(*[got.column(n).to_pylist() for n in names]))
    assert len(rows) == 6
    assert_same_rows(rows, [tuple(r) for r in want])


def test_lineitem_distinct_counts_as_count_distinct(backend, tables):
    _, _, lineitem = tables
    aggs = [("l_orderkey", "n_unique"), ("l_discount", "nunique"), ("l_shipdate", "n_unique"),
            ("l_quantity", "sum")]
    got = joinery.group_by(lineitem, ["l_returnflag", "l_linestatus"], aggs, sort=True,
                           backend=backend, result="arrow")
    want = duckdb.sql("select l_returnflag, l_linestatus, count(distinct l_orderkey), "
                      "count(distinct l_discount), count(distinct l_shipdate), sum(l_quantity) "
                      "from lineitem group by l_returnflag, l_linestatus "
                      "order by l_returnflag, l_linestatus").fetchall()
    names = ["l_returnflag", "l_linestatus"] + [f"{c}_{a}" for c, a in aggs]
    rows = list(zip(*[got.column(n).to_pylist() for n in names]))
    assert len(rows) == 6
    assert_same_rows(rows, [tuple(r) for r in want])
