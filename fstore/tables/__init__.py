"""Tables stored the Kart Datasets V3 way, as quads in the versioned store.

The store side (see ``docs/tables.md``):

* :mod:`.mapping` — a dataset is the graph ``<urn:datae:dataset:NAME>``; meta items,
  legends and one quad per row (object: Kart's feature blob, as is)
* :mod:`.store` — :func:`create`, ``tx.table(name)`` writers: insert / update / upsert /
  delete / alter
* :mod:`.dataset` — ``view.table(name)``: schema, get, rows (streamed), len
* :mod:`.changes` — :func:`table_diff`, :func:`table_log`, :func:`table_blame`
* :mod:`.row_merge` — cell-wise three-way merge of rows, column-wise merge of schemas
* :mod:`.kart_import`, :mod:`.kart_export` — whole Kart repositories in, V3 trees out
* :mod:`.kart_repo_export` — the tables' history out as a Kart repository
* :mod:`.csv_io`, :mod:`.sqlite_io`, :mod:`.frames` — CSV, SQLite / GeoPackage, pandas
* :mod:`.arrow_types`, :mod:`.arrow_batches` — a table in Arrow: types, record batches
  (``to_arrow``, and the Parquet export; need pyarrow, imported only when used)
* :mod:`.commands` — plain functions for a ``datae table`` command line

The pure codec (no store needed):

* :mod:`.names` — dataset-name rules
* :mod:`.schema` — ``schema.json``, columns, legends, schema diffs, column ids
* :mod:`.types` — the eleven Kart data types: stored form, Python form, validation
* :mod:`.geometry` (with :mod:`.wkb`, :mod:`.wkt`) — GeoPackage binary geometries
* :mod:`.paths` — feature paths from primary keys (``path-structure.json``)
* :mod:`.features` — feature blobs, reading rows through any legend and schema
* :mod:`.packing` — Kart's MessagePack conventions (extension 71 for geometry)
* :mod:`.kart_repo` — reading real Kart repositories with dulwich

* :mod:`.plugin` — what a repository opened with the tables plug-in (the default) calls

Importing this package loads none of these: each name below is looked up in its module
when first used (PEP 562), so ``import fstore`` stays cheap and dulwich loads only when a
Kart repository is read, pyarrow only for Arrow / Parquet, pandas only for frames.

>>> from fstore.tables import Schema, INT_PK, encode_row
>>> s = Schema.from_dicts([{"id": "k", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0}])
>>> pk, blob = encode_row(s, {"fid": 77})
>>> INT_PK.encode_path(pk)
'A/A/A/B/kU0='
"""

from __future__ import annotations

import importlib
from typing import Any

# The module (in this package) of each public name: the names a module gives, split on spaces.
_MODULES: dict[str, str] = {
    "errors": ("ColumnValueError DatasetCorruptError DatasetNameError ExportTargetError FeatureError "
               "GeometryError KartRepoError KartVersionError LegendError NoTablesError PathStructureError "
               "PrimaryKeyError SchemaError TablesError RowExistsError RowNotFoundError RowValueError "
               "TableExistsError TableImportError TableNotFoundError"),
    "features": ("decode_feature encode_feature encode_raw encode_row from_python_row raw_feature read_row "
                 "to_python_row"),
    "geometry": "Geometry gpkg_to_wkb normalise_gpkg wkb_to_gpkg",
    "kart_repo": "KartCommit KartDataset KartFeature KartRepo",
    "names": "is_valid_dataset_name normalise_dataset_name validate_dataset_name validate_dataset_names",
    "packing": "pack unpack",
    "paths": "GENERAL INT_PK LEGACY PathStructure decode_filename default_path_structure encode_filename",
    "schema": "Column Legend Schema SchemaDiff deterministic_column_id legend_name new_column_id",
    "types": "DATA_TYPES ColumnType Interval decode_value encode_value validate_stored",
    "mapping": "ATTACHMENT FEATURE META dataset_graph dataset_name is_dataset_graph",
    "dataset": "Table",
    "store": "TableWriter as_schema create drop list_tables import_dataframe",
    "access": "tuples",
    "changes": "LogEntry RowChange TableDiff raw_diff table_blame table_diff table_log",
    "row_merge": "RowConflict SchemaConflict",
    "kart_import": "import_kart",
    "kart_export": "export_kart_tree",
    "kart_repo_export": "KartExport export_kart_repo",
    "csv_io": "export_csv import_csv",
    "sqlite_io": "export_sqlite import_sqlite",
    "frames": "to_dataframe",
}
_WHERE: dict[str, str] = {name: "." + module for module, names in _MODULES.items() for name in names.split()}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept here."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


__all__ = list(_WHERE)  # every public name, as _MODULES lists them
