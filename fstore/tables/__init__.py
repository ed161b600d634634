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

>>> from fstore.tables import Schema, INT_PK, encode_row
>>> s = Schema.from_dicts([{"id": "k", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0}])
>>> pk, blob = encode_row(s, {"fid": 77})
>>> INT_PK.encode_path(pk)
'A/A/A/B/kU0='
"""

from .errors import (
    ColumnValueError,
    DatasetCorruptError,
    DatasetNameError,
    ExportTargetError,
    FeatureError,
    GeometryError,
    KartRepoError,
    KartVersionError,
    LegendError,
    NoTablesError,
    PathStructureError,
    PrimaryKeyError,
    SchemaError,
    TablesError,
    RowExistsError,
    RowNotFoundError,
    RowValueError,
    TableExistsError,
    TableImportError,
    TableNotFoundError,
)
from .features import (
    decode_feature,
    encode_feature,
    encode_raw,
    encode_row,
    from_python_row,
    raw_feature,
    read_row,
    to_python_row,
)
from .geometry import Geometry, gpkg_to_wkb, normalise_gpkg, wkb_to_gpkg
from .kart_repo import KartCommit, KartDataset, KartFeature, KartRepo
from .names import is_valid_dataset_name, normalise_dataset_name, validate_dataset_name, validate_dataset_names
from .packing import pack, unpack
from .paths import GENERAL, INT_PK, LEGACY, PathStructure, decode_filename, default_path_structure, encode_filename
from .schema import Column, Legend, Schema, SchemaDiff, deterministic_column_id, legend_name, new_column_id
from .types import DATA_TYPES, ColumnType, Interval, decode_value, encode_value, validate_stored

from .mapping import ATTACHMENT, FEATURE, META, dataset_graph, dataset_name, is_dataset_graph  # noqa: E402
from .dataset import Table, list_datasets  # noqa: E402
from .store import TableWriter, as_schema, create, drop, tables_in  # noqa: E402
from .access import tuples  # noqa: E402
from .changes import LogEntry, RowChange, TableDiff, raw_diff, table_blame, table_diff, table_diffs, table_log  # noqa: E402
from .row_merge import RowConflict, SchemaConflict  # noqa: E402
from .kart_import import import_kart  # noqa: E402
from .kart_export import export_kart_tree  # noqa: E402
from .kart_repo_export import KartExport, export_kart_repo  # noqa: E402
from .csv_io import export_csv, import_csv  # noqa: E402
from .sqlite_io import export_sqlite, import_sqlite  # noqa: E402
from .frames import import_dataframe, to_dataframe  # noqa: E402
from .dataset import table_at  # noqa: E402
from .store import open_table  # noqa: E402
from .sparql_graphs import TableGraphs, graph_changes  # noqa: E402
from ..extensions import provide  # noqa: E402

# What View.table, Transaction.table, Repository.table_* and the query source's table
# graphs (fstore.query_source) call (the core never imports us).
for _name, _function in (("table_at", table_at), ("open_table", open_table), ("table_diff", table_diff),
                         ("table_log", table_log), ("table_blame", table_blame), ("table_diffs", table_diffs),
                         ("table_graphs", TableGraphs), ("table_graph_changes", graph_changes)):
    provide(_name, _function)


def list_tables(readable) -> list[str]:
    """Names of the tables in a view (``repo.at(ref)``) or a write transaction."""
    from ..transaction import Transaction

    if isinstance(readable, Transaction):
        return tables_in(readable)
    return list_datasets(readable.table_tuples)


__all__ = [
    "tuples",
    "raw_diff",
    # the store
    "create",
    "drop",
    "list_tables",
    "as_schema",
    "Table",
    "TableWriter",
    "TableDiff",
    "RowChange",
    "LogEntry",
    "table_diff",
    "table_log",
    "table_blame",
    "RowConflict",
    "SchemaConflict",
    "import_kart",
    "export_kart_tree",
    "export_kart_repo",
    "KartExport",
    "import_csv",
    "export_csv",
    "import_sqlite",
    "export_sqlite",
    "import_dataframe",
    "to_dataframe",
    "dataset_graph",
    "dataset_name",
    "is_dataset_graph",
    "META",
    "FEATURE",
    "ATTACHMENT",
    "TableNotFoundError",
    "TableExistsError",
    "RowExistsError",
    "RowNotFoundError",
    "RowValueError",
    "TableImportError",
    "DatasetCorruptError",
    # errors
    "TablesError",
    "DatasetNameError",
    "SchemaError",
    "LegendError",
    "PathStructureError",
    "PrimaryKeyError",
    "FeatureError",
    "ColumnValueError",
    "GeometryError",
    "KartRepoError",
    "KartVersionError",
    "ExportTargetError",
    "NoTablesError",
    # names
    "validate_dataset_name",
    "validate_dataset_names",
    "is_valid_dataset_name",
    "normalise_dataset_name",
    # schema
    "Column",
    "Schema",
    "Legend",
    "SchemaDiff",
    "legend_name",
    "new_column_id",
    "deterministic_column_id",
    # types
    "DATA_TYPES",
    "ColumnType",
    "Interval",
    "encode_value",
    "decode_value",
    "validate_stored",
    # geometry
    "Geometry",
    "wkb_to_gpkg",
    "gpkg_to_wkb",
    "normalise_gpkg",
    # paths
    "PathStructure",
    "LEGACY",
    "INT_PK",
    "GENERAL",
    "encode_filename",
    "decode_filename",
    "default_path_structure",
    # features
    "encode_feature",
    "decode_feature",
    "raw_feature",
    "read_row",
    "encode_raw",
    "encode_row",
    "to_python_row",
    "from_python_row",
    # msgpack
    "pack",
    "unpack",
    # Kart repositories
    "KartRepo",
    "KartCommit",
    "KartDataset",
    "KartFeature",
]
