"""Reading the tables and columns users pass, without copies where the memory allows."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import _native

# Where an input came from; the default result form follows it.
ARROW, NUMPY, PANDAS, POLARS, DEVICE = "arrow", "numpy", "pandas", "polars", "cupy"


@dataclass
class InputTable:
    names: list[str]
    columns: list  # _native.InputColumn, in the order of names
    origin: str
    keep_alive: list = field(default_factory=list)  # Python objects the columns read from

    @property
    def num_rows(self) -> int:
        return self.columns[0].rows if self.columns else 0

    def index_of(self, name: str, role: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"{role} has no column {name!r} (it has {self.names})") from None


def _module_of(obj) -> str:
    return type(obj).__module__.split(".", 1)[0]


def _is_device_array(obj) -> bool:
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    device = getattr(obj, "__dlpack_device__", None)
    return device is not None and device()[0] in (2, 3)  # CUDA, CUDA pinned host


def _synchronize_device_producer(obj) -> None:
    # Work queued on the producer's stream must finish before joinery reads the array.
    module = _module_of(obj)
    if module == "cupy":
        import cupy

        cupy.cuda.get_current_stream().synchronize()
    elif module == "torch":
        import torch

        torch.cuda.synchronize(obj.device)


def _strings_through_arrow(obj, name: str):
    """A column of Python strings (NumPy str / object arrays, pandas object or string columns),
    of dates and timestamps (datetime64) or of booleans as an Arrow array, or None when `obj`
    holds none of these."""
    import numpy as np

    kind = getattr(getattr(obj, "dtype", None), "kind", None)
    if kind in ("M", "b") or str(getattr(obj, "dtype", "")) == "boolean":
        import pyarrow as pa

        arrow = (pa.Array.from_pandas(obj) if _module_of(obj) == "pandas"
                 else pa.array(np.asarray(obj)))
        if pa.types.is_date64(arrow.type) or str(getattr(obj, "dtype", "")) == "datetime64[D]":
            arrow = arrow.cast(pa.date32())
        return arrow
    if kind not in ("O", "U", "T") and str(getattr(obj, "dtype", "")) not in ("string", "str"):
        return None
    try:
        import pyarrow as pa
    except ImportError:
        raise TypeError(f"column {name!r} holds strings: reading them needs pyarrow "
                        "(pip install pyarrow)") from None
    try:
        arrow = (pa.Array.from_pandas(obj) if _module_of(obj) == "pandas"
                 else pa.array(np.asarray(obj), from_pandas=True))
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise TypeError(f"column {name!r} has dtype {obj.dtype} but is not a column of "
                        f"strings: {e}") from None
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    if pa.types.is_null(arrow.type):  # only None / NaN: a string column of nulls
        arrow = arrow.cast(pa.string())
    if not (pa.types.is_string(arrow.type) or pa.types.is_large_string(arrow.type)):
        raise TypeError(f"column {name!r} has dtype {obj.dtype} holding {arrow.type} values: "
                        "joinery takes integer, float32 / float64 and string columns")
    return arrow


def _host_array(obj, name: str):
    import numpy as np

    array = np.asarray(obj)
    if array.dtype.kind not in "iuf" or array.dtype.itemsize not in (1, 2, 4, 8) or array.dtype.kind == "f" and array.dtype.itemsize < 4:
        raise TypeError(
            f"column {name!r} has dtype {array.dtype}: joinery takes integer (int8 .. uint64) "
            "and float32 / float64 columns"
        )
    if array.ndim != 1:
        raise ValueError(f"column {name!r} has shape {array.shape}: columns are 1-D arrays")
    if not array.flags.c_contiguous or not array.dtype.isnative:
        # A strided view or a byte-swapped array cannot be read in place: copied once.
        array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
    return array


def read_column(obj, name: str):
    """(column, origin, object kept alive) for one array-like."""
    if hasattr(obj, "__arrow_c_stream__") and _module_of(obj) != "pandas":
        columns = _native.columns_from_arrow_stream(obj.__arrow_c_stream__())
        return _single(columns, name), (POLARS if _module_of(obj) == "polars" else ARROW), None
    if hasattr(obj, "__arrow_c_array__"):
        columns = _native.columns_from_arrow_array(*obj.__arrow_c_array__())
        return _single(columns, name), ARROW, None
    if _is_device_array(obj):
        if not hasattr(obj, "__dlpack__"):
            # Only the CUDA array interface: CuPy wraps it without a copy, then DLPack serves.
            try:
                import cupy
            except ImportError:
                raise TypeError(f"column {name!r}: a device array without __dlpack__ needs "
                                "CuPy to be read (pip install cupy)") from None
            obj = cupy.asarray(obj)
        _synchronize_device_producer(obj)
        return _native.column_from_array(obj, name), DEVICE, obj
    strings = _strings_through_arrow(obj, name)
    if strings is not None:
        columns = _native.columns_from_arrow_array(*strings.__arrow_c_array__())
        return _single(columns, name), (PANDAS if _module_of(obj) == "pandas" else NUMPY), strings
    if _module_of(obj) == "pandas":
        numpy_dtype = getattr(obj.dtype, "numpy_dtype", None)  # nullable and Arrow-backed dtypes
        if numpy_dtype is not None:
            if bool(obj.isna().any()):
                # Nulls travel as an Arrow validity bitmap: the column goes through pyarrow.
                try:
                    import pyarrow
                except ImportError:
                    raise ValueError(f"column {name!r} holds nulls: reading them from pandas "
                                     "needs pyarrow (pip install pyarrow)") from None
                arrow = pyarrow.Array.from_pandas(obj)
                return _single(_native.columns_from_arrow_array(*arrow.__arrow_c_array__()),
                               name), NUMPY, arrow
            obj = obj.to_numpy(dtype=numpy_dtype)
        else:
            obj = obj.to_numpy()
    array = _host_array(obj, name)
    return _native.column_from_array(array, name), NUMPY, array


def _single(columns, name: str):
    if columns.is_table:
        raise TypeError(f"column {name!r} is a table; a column must be one array")
    return columns.columns[0]


def read_table(obj, role: str) -> InputTable:
    """The columns of a table-like: pyarrow Table / RecordBatch, anything with the Arrow
    PyCapsule interface (polars, DuckDB), a pandas DataFrame, or a dict of arrays."""
    module = _module_of(obj)
    if module == "pandas" and hasattr(obj, "columns"):
        names = [str(c) for c in obj.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"{role}: column names must be unique, got {names}")
        table = read_table({str(c): obj.iloc[:, i] for i, c in enumerate(obj.columns)}, role)
        table.origin = PANDAS
        return table
    if isinstance(obj, Mapping):
        names, columns, origins, keep = [], [], set(), []
        for key, value in obj.items():
            column, origin, kept = read_column(value, str(key))
            names.append(str(key))
            columns.append(column)
            origins.add(origin)
            keep.append(kept if kept is not None else value)
        origin = DEVICE if DEVICE in origins else ARROW if ARROW in origins else POLARS if POLARS in origins else NUMPY
        table = InputTable(names, columns, origin, keep)
    elif hasattr(obj, "__arrow_c_stream__") or hasattr(obj, "__arrow_c_array__"):
        if hasattr(obj, "__arrow_c_stream__"):
            imported = _native.columns_from_arrow_stream(obj.__arrow_c_stream__())
        else:
            imported = _native.columns_from_arrow_array(*obj.__arrow_c_array__())
        if not imported.is_table:
            raise TypeError(
                f"{role} is a single column: pass a table, or a dict {{name: array}}"
            )
        origin = POLARS if module == "polars" else ARROW
        table = InputTable(list(imported.names), list(imported.columns), origin)
    else:
        raise TypeError(
            f"{role}: expected a table (a pyarrow Table or RecordBatch, a pandas or polars "
            "DataFrame, a DuckDB relation, anything with __arrow_c_stream__, or a dict of "
            f"arrays), got {type(obj).__name__}"
        )
    _check_shape(table, role)
    return table


def _check_shape(table: InputTable, role: str) -> None:
    if not table.columns:
        raise ValueError(f"{role} has no columns")
    seen = set()
    for name in table.names:
        if name in seen:
            raise ValueError(f"{role}: column name {name!r} appears twice")
        seen.add(name)
    rows = {c.rows for c in table.columns}
    if len(rows) > 1:
        raise ValueError(f"{role}: columns differ in length ({sorted(rows)})")
    devices = {c.device for c in table.columns}
    if len(devices) > 1:
        raise ValueError(
            f"{role}: columns are in different memories (host and GPU, or two GPUs); "
            "move them to one first"
        )
