"""Shared fixtures: the backends to test and random tables with their pyarrow oracles."""
import os

import numpy as np
import pytest

import joinery

# The GPU backend joins the list where a GPU is present; device-check.sh sets
# JOINERY_TEST_REQUIRE_GPU=1 so that a GPU run without a GPU fails instead of testing less.
BACKENDS = ["cpu"] + (["gpu"] if joinery.gpu_count() > 0 else [])
if os.environ.get("JOINERY_TEST_REQUIRE_GPU") == "1" and "gpu" not in BACKENDS:
    raise RuntimeError("JOINERY_TEST_REQUIRE_GPU=1 but joinery sees no GPU")

# Device arrays (CuPy) and the GPU-only paths: collected only where a GPU is present.
collect_ignore = [] if "gpu" in BACKENDS else ["test_gpu.py"]

KEY_TYPES = ["int32", "int64", "uint32", "uint64"]
VALUE_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float32", "float64"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def random_values(rng, dtype: str, rows: int) -> np.ndarray:
    """Values spread over the type's whole range (negatives and extremes included)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.standard_normal(rows) * 1e6).astype(dt)
    info = np.iinfo(dt)
    values = rng.integers(info.min, info.max, size=rows, dtype=dt, endpoint=True)
    if rows >= 2:
        values[:2] = [info.min, info.max]
    return values


def key_domain(rng, dtype: str, domain: int) -> np.ndarray:
    """`domain` distinct key values spread over the type's range (its extremes included)."""
    info = np.iinfo(np.dtype(dtype))
    values = rng.integers(info.min, info.max, size=domain, dtype=np.dtype(dtype), endpoint=True)
    if domain >= 2:
        values[:2] = [info.min, info.max]
    return np.unique(values)


def random_keys(rng, dtype: str, rows: int, domain) -> np.ndarray:
    """Keys drawn from `domain`: an array of distinct values, or a number of them."""
    if np.isscalar(domain):
        domain = key_domain(rng, dtype, int(domain))
    return domain[rng.integers(0, len(domain), size=rows)]


def canonical(table, columns):
    """The rows of a pyarrow table as a sorted list of tuples over `columns`."""
    data = [table.column(c).to_pylist() for c in columns]
    key = lambda row: tuple((v is None, v if v is not None else 0) for v in row)  # noqa: E731
    return sorted(zip(*data), key=key)
