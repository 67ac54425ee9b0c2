"""joinery.join and joinery.group_by."""
from __future__ import annotations

import numbers
import re
from collections.abc import Mapping, Sequence

from . import _native
from ._inputs import DEVICE, InputTable, read_table
from ._outputs import Stats, assemble, check_result_form, index_arrays

_HOW = ("inner", "left", "right", "full", "outer", "semi", "anti")
_AGGREGATIONS = ("count", "size", "len", "sum", "min", "max", "mean", "avg", "n_unique",
                 "nunique")
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9,
          "gb": 10**9, "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
          "tib": 2**40}


def _budget_bytes(budget) -> int | None:
    if budget is None:
        return None
    if isinstance(budget, bool):
        raise TypeError("device_budget must be a number of bytes or a string such as '8GiB'")
    if isinstance(budget, numbers.Integral):
        if budget <= 0:
            raise ValueError(f"device_budget must be positive, got {budget}")
        return int(budget)
    if isinstance(budget, str):
        m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", budget)
        if m and m.group(2).lower() in _UNITS and float(m.group(1)) * _UNITS[m.group(2).lower()] >= 1:
            return int(float(m.group(1)) * _UNITS[m.group(2).lower()])
        raise ValueError(f"device_budget {budget!r}: expected a size such as '8GiB' or '512MB'")
    raise TypeError("device_budget must be a number of bytes or a string such as '8GiB'")


def _key_list(value, what: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if (isinstance(value, Sequence) and 1 <= len(value) <= 8
            and all(isinstance(v, str) for v in value)):
        return list(value)
    raise TypeError(f"{what} must be a column name or a list of 1 to 8 names, got {value!r}")


def _join_keys(on, left_on, right_on, left: InputTable,
               right: InputTable) -> tuple[list[str], list[str]]:
    if on is not None:
        if left_on is not None or right_on is not None:
            raise ValueError("pass either on, or left_on and right_on, not both")
        keys = _key_list(on, "on")
        return keys, keys
    if left_on is not None or right_on is not None:
        if left_on is None or right_on is None:
            raise ValueError("left_on and right_on go together")
        lk, rk = _key_list(left_on, "left_on"), _key_list(right_on, "right_on")
        if len(lk) != len(rk):
            raise ValueError(f"left_on names {len(lk)} columns and right_on {len(rk)}; "
                             "they pair up in order")
        return lk, rk
    common = [n for n in left.names if n in right.names]
    if len(common) != 1:
        raise ValueError("name the key with on= (or left_on= and right_on=): the tables share "
                         f"{len(common)} column names {common}")
    return common, common


def _default_form(*tables: InputTable) -> str:
    if any(t.origin == DEVICE for t in tables):
        return "cupy"
    return tables[0].origin


def join(left, right, on=None, left_on=None, right_on=None, how: str = "inner", *,
         algorithm: str = "auto", backend: str = "auto", strategy: str = "auto",
         device_budget=None, suffix: str = "_right", output: str = "table",
         result: str | None = None, return_stats: bool = False, device: int = 0,
         index_type: str = "int64", nulls_equal: bool = False):
    """Joins two tables on one or several key columns of each.

    ``how`` follows pandas and polars: "inner"; "left" keeps every row of ``left`` (right
    columns are null where nothing matched), "right" every row of ``right``, "full" (or
    pandas' "outer") both; "semi" / "anti" keep the rows of ``left`` that have / have no match
    in ``right`` (left columns only). The key columns come out once, filled from ``right``
    where a row has no ``left`` row. Keys and values may be any integer, float or string type
    and hold nulls: a null key matches nothing unless ``nulls_equal`` (a NaN key never matches);
    string keys join string keys.
    Rows of the result are in no particular order.

    Tables may be pyarrow Tables or RecordBatches, pandas, polars or DuckDB results (anything
    with ``__arrow_c_stream__``), or dicts of arrays (NumPy, pyarrow, CuPy / torch on the GPU).
    Contiguous columns are read in place; a column that arrives in several Arrow chunks is
    gathered into one buffer first; strided NumPy views are copied.

    Args:
        on: the key column's name in both tables, or a list of names (up to 8).
        left_on, right_on: the keys' names when they differ (lists pair up in order). With
            no key named, the one column name the tables share.
        algorithm: "auto" or a joinery algorithm ("radix_hash", "sort_merge",
            "no_partition_hash", "streamed", "triton", "nested_loop", "indexed_nested_loop", ...;
            ``joinery.algorithms("join")`` lists those of this build).
        backend: "auto" (the GPU when present), "cpu" or "gpu".
        strategy: the GPU's table materialization: "auto", "gfur" or "gftr".
        device_budget: device memory the GPU may use, in bytes or as "8GiB".
        suffix: appended to right column names that clash with left ones.
        output: "table" (the key, the left columns, the right columns) or "index" (the
            matching row numbers: a (left_rows, right_rows) pair; -1 where an outer join
            found no match, right_rows None for semi / anti).
        result: "arrow", "numpy" (a dict of arrays; numpy.ma masked arrays where a column
            holds nulls), "pandas", "polars" or "cupy" (a dict of device arrays; a
            (values, valid) pair where a column holds nulls). Default: the form of the inputs.
        return_stats: also return a :class:`joinery.Stats` (algorithm, backend, seconds,
            phases).
        device: the GPU to run on (device arrays: theirs).
        index_type: "int64" or "int32" row numbers (output="index").
        nulls_equal: a null key matches a null key (polars' ``nulls_equal``).

    Example:
        >>> import pyarrow as pa, joinery
        >>> orders = pa.table({"cust": [1, 2, 2, 3], "amount": [10, 20, 30, 40]})
        >>> customers = pa.table({"cust": [1, 2, 4], "region": [7, 8, 9]})
        >>> joinery.join(orders, customers, on="cust").sort_by("amount").to_pydict()
        {'cust': [1, 2, 2], 'amount': [10, 20, 30], 'region': [7, 8, 8]}
    """
    if how not in _HOW:
        raise ValueError(f"how must be one of {_HOW}, got {how!r}")
    if output not in ("table", "index"):
        raise ValueError(f"output must be 'table' or 'index', got {output!r}")
    check_result_form(result)
    left_table, right_table = read_table(left, "left"), read_table(right, "right")
    left_keys, right_keys = _join_keys(on, left_on, right_on, left_table, right_table)
    li = [left_table.index_of(k, "left") for k in left_keys]
    ri = [right_table.index_of(k, "right") for k in right_keys]
    left_payloads = ([] if output == "index"
                     else [i for i in range(len(left_table.names)) if i not in li])
    right_payloads = ([] if how in ("semi", "anti") or output == "index"
                      else [i for i in range(len(right_table.names)) if i not in ri])
    native = _native.join(left_table.columns, li, right_table.columns, ri, how, output,
                          left_payloads, right_payloads, algorithm, backend, strategy,
                          _budget_bytes(device_budget), device, index_type, bool(nulls_equal))
    form = result or _default_form(left_table, right_table)
    if output == "index":
        arrays = index_arrays(native, form)
        value = (arrays[0], arrays[1] if len(arrays) > 1 else None)
    else:
        # The library's order: keys, right payloads, left payloads.
        nkeys = len(left_keys)
        left_names = list(left_keys) + [left_table.names[i] for i in left_payloads]
        taken = set(left_names)
        right_names = []
        for i in right_payloads:
            name = right_table.names[i]
            name = name + suffix if name in taken else name
            if name in taken:
                raise ValueError(f"column {name!r} would appear twice in the result: "
                                 "choose another suffix")
            taken.add(name)
            right_names.append(name)
        order = (list(range(nkeys))
                 + [nkeys + len(right_payloads) + j for j in range(len(left_payloads))]
                 + [nkeys + j for j in range(len(right_payloads))])
        value = assemble(native, order, left_names + right_names, form)
    return (value, Stats.of(native)) if return_stats else value


def _aggregation_list(aggs) -> list[tuple[str, str]]:
    if isinstance(aggs, Mapping):
        pairs = []
        for column, kinds in aggs.items():
            for kind in [kinds] if isinstance(kinds, str) else kinds:
                pairs.append((str(column), kind))
    elif isinstance(aggs, Sequence) and not isinstance(aggs, str):
        pairs = []
        for item in aggs:
            if not (isinstance(item, Sequence) and len(item) == 2):
                raise TypeError(f"aggs: expected (column, aggregation) pairs, got {item!r}")
            pairs.append((str(item[0]), item[1]))
    else:
        raise TypeError("aggs must be a dict {column: 'sum' | ['sum', 'max']} or a list of "
                        "(column, aggregation) pairs")
    for column, kind in pairs:
        if kind not in _AGGREGATIONS:
            raise ValueError(f"aggregation {kind!r} of column {column!r}: expected one of "
                             f"{_AGGREGATIONS}")
    if not pairs:
        raise ValueError("aggs names no aggregation")
    seen = set()
    for pair in pairs:
        if pair in seen:
            raise ValueError(f"aggregation {pair[1]!r} of column {pair[0]!r} is asked for twice")
        seen.add(pair)
    return pairs


def group_by(table, by, aggs, *, algorithm: str = "auto", backend: str = "auto",
             sort: bool = False, device_budget=None, result: str | None = None,
             return_stats: bool = False, device: int = 0):
    """Groups ``table`` by one or several key columns and aggregates other columns per group.

    A null key is a group of its own (SQL's GROUP BY), all NaNs one group; aggregates skip
    null values and are null for a group that has none.

    Args:
        table: as for :func:`join`.
        by: the key column's name, or a list of names (up to 8).
        aggs: ``{"v": ["sum", "max"], "w": "mean"}`` or ``[("v", "sum"), ("w", "mean")]``;
            aggregations "count" (non-null values, as pandas and polars count), "size" or
            "len" (rows), "sum", "min", "max", "mean" (also "avg"), "n_unique" (also
            "nunique": distinct non-null values, polars' and pandas' name). Result columns
            are the keys, then ``<column>_<aggregation>`` in request order (pyarrow's names).
            count / size / n_unique -> int64; sum -> int64 / uint64 (wrapping) or float64; min / max ->
            the column's type; mean -> float64.
        algorithm: "auto" or a joinery group-by algorithm (``joinery.algorithms("group_by")``;
            "streamed" streams host data through the GPU in chunks).
        backend: "auto", "cpu" or "gpu".
        device_budget: device memory the GPU may use, in bytes or as "8GiB"; host data that
            would not fit it is streamed through the GPU.
        sort: order the groups by the keys (ascending, nulls last); otherwise in no particular
            order.
        result, return_stats, device: as for :func:`join`.

    Example:
        >>> import pyarrow as pa, joinery
        >>> t = pa.table({"k": [1, 2, 1, 2, 3], "v": [1, 2, 3, 4, 5]})
        >>> joinery.group_by(t, "k", {"v": ["sum", "max"]}, sort=True).to_pydict()
        {'k': [1, 2, 3], 'v_sum': [4, 6, 5], 'v_max': [3, 4, 5]}
    """
    check_result_form(result)
    input_table = read_table(table, "table")
    keys = _key_list(by, "by")
    key_indices = [input_table.index_of(k, "table") for k in keys]
    pairs = _aggregation_list(aggs)
    requests = [(kind, input_table.index_of(column, "table")) for column, kind in pairs]
    native = _native.group_by(input_table.columns, key_indices, requests, algorithm, backend,
                              bool(sort), _budget_bytes(device_budget), device)
    names = list(keys) + [f"{column}_{kind}" for column, kind in pairs]
    value = assemble(native, list(range(len(names))), names,
                     result or _default_form(input_table))
    return (value, Stats.of(native)) if return_stats else value


def algorithms(operation: str = "join", backend: str = "cpu") -> list[str]:
    """The algorithms of this build for ``operation`` ("join" or "group_by") on ``backend``."""
    if operation == "join":
        return _native.join_algorithms(backend)
    if operation == "group_by":
        return _native.group_by_algorithms(backend)
    raise ValueError(f"operation must be 'join' or 'group_by', got {operation!r}")


def gpu_count() -> int:
    """GPUs this process sees (0 without a GPU or in a build without the GPU backend)."""
    return _native.device_count()
