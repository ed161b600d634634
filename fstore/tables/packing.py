"""Kart's MessagePack conventions, used for legends, feature blobs and feature filenames.

Kart packs with msgpack-python's ``packb(use_bin_type=True, strict_types=True)`` (newer
Kart with msgspec writes the same bytes for these data): integers in their smallest
encoding, every float as float64 (``0xcb``), ``str`` as str types (str8 for 32–255 bytes),
``bytes`` as bin, tuples as arrays, and a geometry as extension type 71 (``"G"``) holding
its StandardGeoPackageBinary bytes. Unpacking gives lists for arrays, ``str`` for text and
:class:`~fstore.tables.geometry.Geometry` for extension 71.

>>> pack([77]).hex()
'914d'
>>> pack(("a", 1.0, b"x", None, True)).hex()
'95a161cb3ff0000000000000c40178c0c3'
>>> unpack(bytes.fromhex('914d'))
[77]
"""

from __future__ import annotations

import struct
from typing import Any

import msgpack

from .errors import FeatureError, GeometryError
from .geometry import Geometry

__all__ = ["GEOMETRY_EXT_CODE", "pack", "unpack", "unpack_many"]

GEOMETRY_EXT_CODE = 71  # ord("G")


def _default(obj: Any) -> Any:
    if isinstance(obj, Geometry):
        return msgpack.ExtType(GEOMETRY_EXT_CODE, bytes(obj))
    if isinstance(obj, tuple):
        return list(obj)
    if isinstance(obj, (bytearray, memoryview)):
        return bytes(obj)
    raise TypeError(f"cannot msgpack a {type(obj).__name__}: {obj!r}")


def _ext_hook(code: int, data: bytes) -> Any:
    if code == GEOMETRY_EXT_CODE:
        return Geometry(data)
    return msgpack.ExtType(code, data)


def pack(obj: Any) -> bytes:
    """Pack ``obj`` exactly as Kart does (see the module docstring)."""
    return msgpack.packb(obj, use_bin_type=True, strict_types=True, default=_default)


def unpack(data: bytes | memoryview, *, where: str | None = None) -> Any:
    """Unpack Kart MessagePack bytes; raise :class:`FeatureError` (naming ``where``) if
    they are not one complete MessagePack value."""
    try:
        return msgpack.unpackb(data, raw=False, ext_hook=_ext_hook, strict_map_key=False)
    except GeometryError as e:
        raise FeatureError(f"holds a bad geometry ({e})", path=where) from None
    except (ValueError, msgpack.UnpackException, msgpack.ExtraData) as e:
        raise FeatureError(f"not valid MessagePack ({e})", path=where) from None


def _geometry_bytes(code: int, data: bytes) -> Any:
    return data if code == GEOMETRY_EXT_CODE else msgpack.ExtType(code, data)


def unpack_many(data: bytes, count: int, *, geometry_bytes: bool = False) -> list[Any] | None:
    """Unpack ``count`` MessagePack values stored back to back in ``data`` in one call
    (as one array: no Python call per value), or None when ``data`` is not exactly that
    (then :func:`unpack` them one by one for an error naming the bad one).
    ``geometry_bytes``: geometries stay their GeoPackage bytes, not :class:`Geometry`.

    >>> unpack_many(pack([1, "a"]) + pack(2), 2)
    [[1, 'a'], 2]
    >>> unpack_many(pack(1), 2) is None
    True
    """
    header = b"\xdd" + struct.pack(">I", count)  # a msgpack array 32 of count items
    try:
        return msgpack.unpackb(header + data, raw=False, strict_map_key=False,
                               ext_hook=_geometry_bytes if geometry_bytes else _ext_hook)
    except (GeometryError, ValueError, msgpack.UnpackException, msgpack.ExtraData):
        return None
