"""Handing results to Arrow, NumPy, pandas, polars or CuPy without copying the columns."""
from __future__ import annotations

from dataclasses import dataclass, field

RESULT_FORMS = ("arrow", "numpy", "pandas", "polars", "cupy")


@dataclass(frozen=True)
class Stats:
    """What an operation reports about itself."""

    algorithm: str  #: the algorithm that ran (never "automatic")
    backend: str  #: "cpu" or "gpu"
    seconds: float  #: the library's own measure of the operation (its statistics' seconds)
    phases: dict = field(default_factory=dict)  #: seconds of each phase, by name
    bytes_moved: int = 0  #: bytes read and written (an estimate)
    strategy: str | None = None  #: joins' table materialization on the GPU (gfur / gftr)
    call_seconds: float = 0.0  #: wall time of the C++ call, as a C++ caller would see it

    @classmethod
    def of(cls, native) -> "Stats":
        s = native.stats
        return cls(s["algorithm"], s["backend"], s["seconds"], dict(s["phases"]),
                   s["bytes_moved"], s.get("strategy"), s["call_seconds"])


class _ArrowColumn:
    """One result column behind the Arrow PyCapsule interface (pyarrow.array takes it)."""

    def __init__(self, native, index: int):
        self._native, self._index = native, index

    def __arrow_c_array__(self, requested_schema=None):
        return self._native.arrow_capsules(self._index)


def check_result_form(result: str | None) -> None:
    if result is not None and result not in RESULT_FORMS:
        raise ValueError(f"result must be one of {RESULT_FORMS} or None, got {result!r}")


def _host_values(native, i: int):
    values = native.array(i)
    return values.get() if native.on_device(i) else values  # cupy -> numpy, one copy


def _valid_flags(native, i: int, rows: int):
    validity = native.validity(i)
    if validity is None:
        return None
    if native.on_device(i):
        validity = validity.get()
    import numpy as np

    return np.unpackbits(validity, bitorder="little")[:rows].astype(bool)


def _arrow_array(native, i: int):
    import pyarrow as pa

    if not native.on_device(i) or native.is_arrow_only(i):
        return pa.array(_ArrowColumn(native, i))
    values = _host_values(native, i)
    valid = _valid_flags(native, i, len(values))
    return pa.array(values, mask=None if valid is None else ~valid)


def _numpy_array(native, i: int):
    # Strings: an object array of str, None for nulls (pandas' and pyarrow's form); dates and
    # timestamps: datetime64 (NaT for nulls); decimals: objects of decimal.Decimal; bool: bool
    # (objects with None where there are nulls), as pyarrow converts them.
    if native.is_arrow_only(i):
        return _arrow_array(native, i).to_numpy(zero_copy_only=False)
    values = _host_values(native, i)
    valid = _valid_flags(native, i, len(values))
    if valid is None:
        return values
    import numpy as np

    return np.ma.MaskedArray(values, mask=~valid)


def _cupy_array(native, i: int):
    if native.is_arrow_only(i):
        kind = "string" if native.is_string(i) else "bool, date, timestamp or decimal"
        raise TypeError(f"a {kind} column cannot be a CuPy array: ask for result='arrow', "
                        "'polars', 'pandas' or 'numpy'")
    import cupy

    values = native.array(i)
    on_device = native.on_device(i)
    if not on_device:
        values = cupy.asarray(values)
    validity = native.validity(i)
    if validity is None:
        return values
    rows = len(values)
    validity = cupy.asarray(validity)
    valid = cupy.unpackbits(validity, bitorder="little")[:rows].astype(bool)
    return values, valid


def assemble(native, order: list[int], names: list[str], form: str):
    """The result columns `order` (indices into native), named `names`, in `form`."""
    if form == "arrow" or form == "polars":
        import pyarrow as pa

        table = pa.table([_arrow_array(native, i) for i in order], names=names)
        if form == "polars":
            import polars

            return polars.from_arrow(table)
        return table
    if form == "numpy":
        return {n: _numpy_array(native, i) for n, i in zip(names, order)}
    if form == "pandas":
        import pandas as pd

        columns = {}
        for n, i in zip(names, order):
            if native.is_arrow_only(i) and not native.is_string(i):
                columns[n] = _arrow_array(native, i).to_pandas()  # pandas' own dtypes
                continue
            column = _numpy_array(native, i)
            if hasattr(column, "mask"):  # nullable: pandas' masked arrays keep the type
                import numpy as np

                masked = (pd.arrays.FloatingArray if column.dtype.kind == "f"
                          else pd.arrays.IntegerArray)
                column = masked(column.data, np.ma.getmaskarray(column))
            columns[n] = column
        return pd.DataFrame(columns, copy=False)
    if form == "cupy":
        return {n: _cupy_array(native, i) for n, i in zip(names, order)}
    raise ValueError(f"unknown result form {form!r}")


def index_arrays(native, form: str):
    """The row-index columns of an index-form join, in `form` (arrow: pyarrow arrays)."""
    arrays = []
    for i in range(len(native)):
        if form in ("arrow", "polars"):
            arrays.append(_arrow_array(native, i))
        elif form == "cupy":
            arrays.append(_cupy_array(native, i))
        else:
            arrays.append(_host_values(native, i))
    return arrays
