"""joinery: relational joins and grouped aggregations on NVIDIA GPUs, with a multi-core CPU
backend beside them, over Arrow, NumPy, pandas, polars and CuPy data.

    >>> import pyarrow as pa, joinery
    >>> orders = pa.table({"cust": [1, 2, 2, 3], "amount": [10, 20, 30, 40]})
    >>> customers = pa.table({"cust": [1, 2, 4], "region": [7, 8, 9]})
    >>> joinery.join(orders, customers, on="cust", how="left").sort_by("amount").to_pydict()
    {'cust': [1, 2, 2, 3], 'amount': [10, 20, 30, 40], 'region': [7, 8, 8, None]}

See help(joinery.join), help(joinery.group_by) and docs/python.md.
"""
import atexit as _atexit

from . import _native
from ._api import algorithms, gpu_count, group_by, join
from ._outputs import Stats

# A call still running at exit (one abandoned by Ctrl-C) is cancelled and waited for: a process
# that ends while a worker thread is inside a parallel region aborts.
_atexit.register(_native.cancel_all_and_wait, 30.0)

__all__ = ["join", "group_by", "Stats", "algorithms", "gpu_count"]
__version__ = "0.1.0"
