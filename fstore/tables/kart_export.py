"""Export tables at any commit as Kart Datasets V3 trees on disk.

Each dataset ``name`` becomes ``DEST/name/.table-dataset/`` with ``meta/`` (title,
description, ``schema.json``, ``path-structure.json``, ``crs/*.wkt``, ``legend/*``) and
``feature/<path>`` files, plus its attachments (e.g. ``metadata.xml``) beside the
``.table-dataset`` directory. Every file holds exactly the bytes stored in the quads, so a
dataset imported from Kart exports byte for byte as Kart wrote it, and one made here is
what Kart would write. A dataset without ``path-structure.json`` (imported from V2) gets
the legacy structure it implies, written out, so the tree is a complete V3 dataset.

>>> import tempfile, fstore, fstore.tables as tables
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="m") as tx:
...     t = tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0}])
...     t.insert({"k": 77})
>>> dest = tempfile.mkdtemp()
>>> export_kart_tree(repo.at("main"), dest)
{'t': 1}
>>> import os; sorted(os.listdir(os.path.join(dest, "t", ".table-dataset", "meta")))
['legend', 'path-structure.json', 'schema.json']
>>> os.path.exists(os.path.join(dest, "t", ".table-dataset", "feature", "A/A/A/B/kU0="))
True
>>> repo.close()
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from .access import legend_finder, view_source
from .dataset import Table, list_datasets, load_dataset
from .errors import DatasetCorruptError
from .mapping import ATTACHMENT, FEATURE, META, PATH_STRUCTURE_ITEM, object_bytes
from .paths import LEGACY

__all__ = ["export_kart_tree", "dataset_file", "DATASET_DIR"]

DATASET_DIR = ".table-dataset"


def _check_relpath(table: str, path: str) -> None:
    if (not path or path[0] == "/" or "//" in path or path[-1] == "/" or "\\" in path or "\x00" in path
            or ("." in path and any(p in (".", "..") for p in path.split("/")))):
        raise DatasetCorruptError(table, f"item path {path!r} cannot be written inside the dataset directory")


def dataset_file(name: str, kind: Any, item: str) -> str:
    """Where a table tuple ``(graph of name, item, kind, …)`` lives in a Kart V3 tree: its
    path from the tree's root, ``/``-separated (checked: it stays inside the dataset).

    >>> dataset_file("a/b", FEATURE, "A/A/A/B/kU0=")
    'a/b/.table-dataset/feature/A/A/A/B/kU0='
    >>> dataset_file("a/b", META, "schema.json"), dataset_file("a/b", ATTACHMENT, "metadata.xml")
    ('a/b/.table-dataset/meta/schema.json', 'a/b/metadata.xml')
    """
    _check_relpath(name, name)  # checks only (called once per file written: no join)
    _check_relpath(name, item)
    if kind == FEATURE:
        return f"{name}/{DATASET_DIR}/feature/{item}"
    if kind == META:
        return f"{name}/{DATASET_DIR}/meta/{item}"
    if kind == ATTACHMENT:
        return f"{name}/{item}"
    raise DatasetCorruptError(name, f"item {item!r} is of no kind a Kart tree holds ({kind!r})")


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def export_kart_tree(view: Any, dest: str | os.PathLike[str], *, tables: Iterable[str] | None = None) -> dict[str, int]:
    """Write the tables of ``view`` (``repo.at(ref)``; all, or those named) as Kart V3
    dataset trees under ``dest``; returns ``{table: features written}``. Streams the rows:
    memory stays flat however large the table."""
    dest = os.fspath(dest)
    source = view_source(view)
    names = list(tables) if tables is not None else list_datasets(source)
    written: dict[str, int] = {}
    for name in names:
        state = load_dataset(source, name, f"at {getattr(view, 'ref', '')!r}")

        def write(kind: Any, item: str, data: bytes) -> None:
            _write(os.path.join(dest, *dataset_file(name, kind, item).split("/")), data)

        for item, value in state.meta.items():
            write(META, item, object_bytes(value))
        if PATH_STRUCTURE_ITEM not in state.meta:
            write(META, PATH_STRUCTURE_ITEM, LEGACY.dumps())
        for item, value in state.attachments.items():
            write(ATTACHMENT, item, object_bytes(value))
        table = Table(source, state, legend_finder(view.repo.storage, state.graph))
        n = 0
        for path, blob in table.features():
            write(FEATURE, path, blob)
            n += 1
        written[name] = n
    return written
