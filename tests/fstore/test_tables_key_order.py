"""Rows are listed in primary-key order everywhere (issue 24): ``rows()``, the CSV and
SQLite exports, ``table show`` and table diffs. Integer keys in numeric order, text in
code-point order, a compound key column by column. The oracle is Python's ``sorted`` over
the keys written."""

from __future__ import annotations

import csv
import random
import sqlite3

import pytest
from hypothesis import given, settings, strategies as st

import fstore
import fstore.tables as tables
from fstore.tables.changes import table_diff
from fstore.tables.commands import table_export, table_show

INT_KEYS = [10, 2, 1, 100, -5, 64, 65, 4096, 2**40, 3]
TEXT_KEYS = ["b", "a", "ab", "B", "é", "z", "aa", "10", "9"]
PAIRS = [("b", 2), ("a", 10), ("b", 1), ("a", 9), ("a", 100), ("c", -1)]


def _table(repo, name, columns, rows, message="rows"):
    with repo.transaction("main", message=message) as tx:
        t = tables.create(tx, name, columns) if name not in tables.list_tables(tx) else tx.table(name)
        for row in rows:
            t.insert(row)


def _int_table(repo, keys=INT_KEYS):
    _table(repo, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
                       {"id": "v", "name": "v", "dataType": "text"}], [{"k": k, "v": f"v{k}"} for k in keys])


def _pair_table(repo):
    _table(repo, "p", [{"id": "a", "name": "a", "dataType": "text", "primaryKeyIndex": 0},
                       {"id": "b", "name": "b", "dataType": "integer", "primaryKeyIndex": 1},
                       {"id": "v", "name": "v", "dataType": "text"}],
           [{"a": a, "b": b, "v": f"{a}{b}"} for a, b in PAIRS])


@pytest.fixture
def repo(tmp_path):
    with fstore.open(tmp_path / "repo") as opened:
        yield opened


def test_rows_of_integer_and_compound_keys_in_key_order(repo):
    _int_table(repo)
    _pair_table(repo)
    assert [r["k"] for r in repo.at("main").table("t").rows()] == sorted(INT_KEYS)
    assert [(r["a"], r["b"]) for r in repo.at("main").table("p").rows()] == sorted(PAIRS)
    with repo.transaction("main", message="more") as tx:
        t = tx.table("t")
        t.insert({"k": 0, "v": "zero"})
        assert [r["k"] for r in t.rows()] == sorted([*INT_KEYS, 0])  # a writer's rows too


def test_text_keys_in_code_point_order(repo):
    _table(repo, "s", [{"id": "k", "name": "k", "dataType": "text", "primaryKeyIndex": 0}], [{"k": k} for k in TEXT_KEYS])
    assert [r["k"] for r in repo.at("main").table("s").rows()] == sorted(TEXT_KEYS)


def test_csv_and_sqlite_exports_in_key_order(repo, tmp_path):
    _int_table(repo)
    _pair_table(repo)
    table_export(repo, "main", str(tmp_path / "t.csv"), name="t")
    with open(tmp_path / "t.csv", newline="") as f:
        assert [int(row["k"]) for row in csv.DictReader(f)] == sorted(INT_KEYS)
    table_export(repo, "main", str(tmp_path / "p.csv"), name="p")
    with open(tmp_path / "p.csv", newline="") as f:
        assert [(row["a"], int(row["b"])) for row in csv.DictReader(f)] == sorted(PAIRS)
    table_export(repo, "main", str(tmp_path / "p.sqlite"), name="p")
    with sqlite3.connect(tmp_path / "p.sqlite") as con:  # no ORDER BY: the order rows were written in
        assert con.execute('SELECT a, b FROM "p"').fetchall() == sorted(PAIRS)


def test_table_show_of_a_compound_key_in_key_order(repo):
    _pair_table(repo)
    lines = table_show(repo, "main", "p", limit=None).splitlines()[2:-1]
    assert [(line.split()[0], int(line.split()[1])) for line in lines] == sorted(PAIRS)


def test_table_diff_lists_rows_in_key_order(repo):
    _int_table(repo, [7])
    first = repo.head("main")
    _int_table(repo)
    with repo.transaction("main", message="change") as tx:
        t = tx.table("t")
        for k in [7, *INT_KEYS]:
            t.update({"k": k, "v": "new"})
    d = table_diff(repo, first, "main", "t", python=False)
    assert [row["k"] for row in d.inserted] == sorted(INT_KEYS)
    assert [change.pk for change in d.updated] == [(7,)]
    assert [c.pk[0] for c in d.changes] == sorted([7, *INT_KEYS])  # every change, one list in key order


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=40, unique=True))
def test_any_integer_keys_read_in_numeric_order(tmp_path_factory, keys):
    with fstore.open(tmp_path_factory.mktemp("r")) as repo:
        _int_table(repo, random.Random(len(keys)).sample(keys, len(keys)))
        assert [r["k"] for r in repo.at("main").table("t").rows()] == sorted(keys)
