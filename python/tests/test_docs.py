"""The examples of docs/python.md and of the docstrings run as written."""
import doctest
import os
import pathlib
import re

import pytest

import joinery

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_complete_example_of_docs_python_md(tmp_path, monkeypatch):
    pytest.importorskip("duckdb")
    text = (ROOT / "docs" / "python.md").read_text()
    block = re.search(r"## A complete example.*?```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(block, "docs/python.md", "exec"), scope)
    joined, revenue = scope["joined"], scope["revenue"]
    orders, customer = scope["orders"], scope["customer"]
    assert joined.num_rows == orders.num_rows  # every customer key exists
    assert sorted(joined.column_names) == sorted(orders.column_names + customer.column_names[1:])
    assert revenue.num_rows > 0 and "o_totalprice_sum" in revenue.column_names


def test_docstring_examples():
    for module in (joinery, joinery._api):
        failures, _ = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert failures == 0, module.__name__


def test_the_readme_example():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Python\n.*?```python\n(.*?)```", text, re.S).group(1)
    scope = {}
    exec(compile(block, "README.md", "exec"), scope)
    left = scope["joinery"].join(scope["orders"], scope["customers"], on="cust", how="left")
    assert left.sort_by("amount").to_pydict() == {
        "cust": [1, 2, 2, 3], "amount": [10, 20, 30, 40], "region": [7, 8, 8, None]}
