"""CSV fields longer than the csv module's default limit (128 KiB) import whole, through
the API and the ``datae table import`` command: a field can be as large as its file."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pytest

import fstore
from datae.cli import main
from fstore.tables import import_csv
from fstore.tables.csv_io import read_csv

DEFAULT_LIMIT = 131072  # the csv module's own default


@pytest.fixture(autouse=True)
def default_field_limit() -> Iterator[None]:
    """Each test starts at the csv module's default limit (it is process-wide state, so
    an earlier import must not make a test pass that would fail on its own)."""
    before = csv.field_size_limit(DEFAULT_LIMIT)
    yield
    csv.field_size_limit(before)


def _long_csv(path: Path, size: int) -> dict[int, str]:
    rows = {1: "é" * size, 2: "short", 3: "x,\"y\"\n" * (size // 5)}
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "note"])
        for key, note in rows.items():
            writer.writerow([key, note])
    return rows


@pytest.mark.parametrize("size", [DEFAULT_LIMIT + 1, 3 * 2**20])
def test_api_imports_long_fields(tmp_path, size):
    rows = _long_csv(tmp_path / "long.csv", size)
    with fstore.open(tmp_path / "repo") as repo:
        with repo.transaction("main", message="long") as tx:
            assert import_csv(tx, "notes", tmp_path / "long.csv", pk="id")["inserted"] == 3
        table = repo.at("main").table("notes")
        assert {row["id"]: row["note"] for row in table.rows()} == rows


def test_read_csv_infers_types_over_long_fields(tmp_path):
    rows = _long_csv(tmp_path / "long.csv", DEFAULT_LIMIT * 2)
    specs, header, records = read_csv(tmp_path / "long.csv")
    assert header == ["id", "note"] and [s[1] for s in specs] == ["integer", "text"]
    assert [record[1] for _, record in records] == list(rows.values())


def test_cli_imports_a_field_as_large_as_the_file(tmp_path, capsys):
    note = "n" * (2**20)
    (tmp_path / "one.csv").write_text(f"id,note\n1,{note}\n", encoding="utf-8")
    fstore.open(tmp_path / "repo").close()
    code = main(["--repo", str(tmp_path / "repo"), "table", "import", str(tmp_path / "one.csv"), "--pk", "id",
                 "--name", "notes", "-m", "long"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    with fstore.open(tmp_path / "repo") as repo:
        assert repo.at("main").table("notes").get(1)["note"] == note


def test_the_limit_is_only_raised(tmp_path):
    """Another reader in the process, midway through its file, must not have the limit
    lowered under it: an import leaves the limit at least as high as it found it."""
    _long_csv(tmp_path / "long.csv", 10)
    csv.field_size_limit(2**40)
    with fstore.open(tmp_path / "repo") as repo, repo.transaction("main", message="m") as tx:
        import_csv(tx, "notes", tmp_path / "long.csv", pk="id")
    assert csv.field_size_limit() >= 2**40
