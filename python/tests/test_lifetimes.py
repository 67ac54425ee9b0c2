"""Ownership: results outlive their inputs, nothing leaks, Ctrl-C returns control."""
import gc
import os
import signal
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

import joinery


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_results_outlive_their_inputs():
    left = pa.table({"k": np.arange(1000, dtype=np.int64), "a": np.arange(1000, dtype=np.int64)})
    right = {"k": np.arange(0, 2000, 2, dtype=np.int64), "b": np.arange(1000, dtype=np.int32)}
    result = joinery.join(left, right, on="k", result="numpy")
    arrow = joinery.join(left, right, on="k")
    del left, right
    gc.collect()
    assert sorted(result["k"].tolist()) == list(range(0, 1000, 2))
    assert sorted(arrow.column("a").to_pylist()) == list(range(0, 1000, 2))


def test_inputs_can_be_freed_while_results_live():
    keys = np.arange(10000, dtype=np.int64)
    arrow_keys = pa.array(keys.copy())
    result = joinery.join({"k": arrow_keys}, {"k": keys[::3].copy()}, on="k")
    del arrow_keys, keys
    gc.collect()
    assert sorted(result.column("k").to_pylist()) == list(range(0, 10000, 3))


def test_no_leak_over_a_thousand_calls():
    rng = np.random.default_rng(1)
    left = pa.table({"k": rng.integers(0, 500, 4000), "a": rng.integers(0, 9, 4000)})
    right = {"k": np.arange(500, dtype=np.int64), "b": np.arange(500, dtype=np.int64)}
    forms = [dict(), dict(result="numpy", how="left"), dict(result="pandas")]

    def calls(n):
        for i in range(n):
            joinery.join(left, right, on="k", **forms[i % 3])
            if i % 10 == 0:
                joinery.group_by(left, "k", {"a": ["sum", "max"]})

    calls(100)
    gc.collect()
    before = rss_bytes()
    calls(1000)
    gc.collect()
    grown = rss_bytes() - before
    # One result is ~0.1 MB; a leak of one per call would be 100 MB.
    assert grown < 16 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 1000 calls"


def test_ctrl_c_interrupts_a_long_call_and_cancels_it():
    from joinery import _native

    # A nested-loop join of 2^19 x 2^17 rows runs about 12 s on two cores (2^16 x 2^16: 0.74 s).
    left = {"k": np.arange(2**19, dtype=np.int64)}
    right = {"k": np.arange(2**17, dtype=np.int64)[::-1].copy()}
    assert _native.busy_calls() == 0
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        joinery.join(left, right, on="k", algorithm="nested_loop", backend="cpu")
    assert time.perf_counter() - start < 3.0
    timer.cancel()
    # The abandoned call stops at its next check (a run of 64 probe rows), not after 6 s.
    while _native.busy_calls() > 0 and time.perf_counter() - start < 10:
        time.sleep(0.01)
    assert _native.busy_calls() == 0
    assert time.perf_counter() - start < 3.0
    # and the next call works
    assert len(joinery.join(left, right, on="k", algorithm="radix_hash", backend="cpu")["k"]) == 2**17


def test_the_interpreter_exits_cleanly_after_calls_and_an_abandoned_one():
    import subprocess
    import sys

    code = """
import os, signal, threading
import numpy as np
import joinery
left = {"k": np.arange(2**18, dtype=np.int64)}
right = {"k": np.arange(2**17, dtype=np.int64)}
for _ in range(20):
    joinery.join(left, right, on="k")
threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    joinery.join(left, right, on="k", algorithm="nested_loop", backend="cpu")
except KeyboardInterrupt:
    print("interrupted")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["interrupted"] and "terminate" not in done.stderr
