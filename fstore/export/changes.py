"""What changed between two commits, as typed record batches (a change data feed).

The rows are those of Delta Lake's change data feed: each has the changed row's own
columns, typed as in a snapshot export, after three leading columns — ``_change_type``
(``insert``, ``delete``, ``update_preimage`` or ``update_postimage``), ``_from_commit``
and ``_to_commit``. A quad is inserted or deleted; an updated table row gives two rows, the
row before (preimage) and after (postimage), next to each other. A table's changes are in
its schema at the later commit (at the earlier one when it was dropped): an older row is
matched to it column by column id, so a renamed column keeps its values.

>>> import tempfile, fstore, fstore.tables as tables
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="v1") as tx:
...     t = tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
...                                 {"id": "v", "name": "v", "dataType": "text"}])
...     t.insert({"k": 1, "v": "a"})
>>> first = repo.head("main")
>>> with repo.transaction("main", message="v2") as tx:
...     tx.table("t").update({"k": 1, "v": "A"})
>>> schema, batches = table_change_batches(repo, first, "main", "t")
>>> [(r["_change_type"], r["v"]) for b in batches for r in b.to_pylist()]
[('update_preimage', 'a'), ('update_postimage', 'A')]
>>> repo.close()
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from ..tables.errors import TableNotFoundError
from .arrow import (
    BATCH_SIZE,
    CHANGES_SCHEMA,
    column_plan,
    change_batches,
    change_schema,
    chunks,
    column_batch,
    table_arrow_schema,
    table_crs,
)
from .errors import ExportError, require

pa = require("pyarrow", "the change export")

__all__ = ["INSERT", "DELETE", "UPDATE_PREIMAGE", "UPDATE_POSTIMAGE", "quad_change_batches",
           "table_change_batches", "changed_table"]

INSERT, DELETE, UPDATE_PREIMAGE, UPDATE_POSTIMAGE = "insert", "delete", "update_preimage", "update_postimage"


def quad_change_batches(repo: Any, a: str, b: str, batch_size: int = BATCH_SIZE) -> tuple[Any, Iterator[Any]]:
    """``(schema, batches)`` of the quads inserted and deleted from ref ``a`` to ref ``b``
    (``repo.diff(a, b)``)."""
    from_id, to_id = repo.resolve(a), repo.resolve(b)
    return CHANGES_SCHEMA, change_batches(repo.diff(a, b), from_id, to_id, batch_size)


def changed_table(repo: Any, a: str, b: str, name: str) -> Any:
    """The table whose schema a change export of ``name`` uses: at ``b``, else at ``a``."""
    for ref in (b, a):
        try:
            return repo.at(ref).table(name)
        except TableNotFoundError:
            continue
    raise ExportError(f"table {name!r} is at neither {a!r} nor {b!r}")


def table_change_batches(repo: Any, a: str, b: str, name: str,
                         batch_size: int = BATCH_SIZE) -> tuple[Any, Iterator[Any]]:
    """``(schema, batches)`` of the rows of table ``name`` inserted, deleted and updated
    from ref ``a`` to ref ``b`` (``repo.table_diff``; it holds the changed rows in memory,
    O(changes))."""
    table = changed_table(repo, a, b, name)
    arrow_schema = table_arrow_schema(table.schema, table_crs(table), name=name)
    schema = change_schema(arrow_schema)
    from_id, to_id = repo.resolve(a), repo.resolve(b)
    diff = repo.table_diff(a, b, name, python=False)
    older = _older_names(repo, a, name, table.schema)
    plan = column_plan(table.schema, arrow_schema)

    def rows() -> Iterator[tuple[str, Mapping[str, Any]]]:
        for row in diff.inserted:
            yield INSERT, row
        for row in diff.deleted:
            yield DELETE, older(row)
        for change in diff.updated:
            yield UPDATE_PREIMAGE, older(change.old)
            yield UPDATE_POSTIMAGE, change.new

    def batch(chunk: list) -> Any:
        n = len(chunk)
        prefix = [pa.array([kind for kind, _ in chunk], pa.string()),
                  pa.array([from_id] * n, pa.string()), pa.array([to_id] * n, pa.string())]
        columns = [[row.get(field.name) for _, row in chunk] for field, _, _ in plan]
        return column_batch(plan, columns, schema, name, prefix)

    return schema, chunks(rows(), batch_size, batch)


def _older_names(repo: Any, a: str, name: str, schema: Any):
    """A function renaming a row read at ``a`` to ``schema``'s column names, by column id
    (a column ``a`` lacks is null)."""
    try:
        old_schema = repo.at(a).table(name).schema
    except TableNotFoundError:
        return lambda row: row
    if old_schema == schema:
        return lambda row: row
    names = [(col.name, old_schema.by_id(col.id).name if col.id in old_schema.column_ids else None)
             for col in schema.columns]
    return lambda row: {new: (None if old is None else row.get(old)) for new, old in names}
