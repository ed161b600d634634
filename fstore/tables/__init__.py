"""Tables stored the Kart Datasets V3 way: the pure codec (no store needed).

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
    DatasetNameError,
    FeatureError,
    GeometryError,
    KartRepoError,
    LegendError,
    PathStructureError,
    PrimaryKeyError,
    SchemaError,
    TablesError,
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

__all__ = [
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
