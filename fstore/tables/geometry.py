"""Kart's geometry encoding: StandardGeoPackageBinary (GeoPackage 1.3 §2.1.3) around WKB.

Layout: ``"GP"``, version byte 0, a flags byte (bit 0 byte order of the header, bits 1–3
envelope type, bit 4 empty, bit 5 extended type), the ``srs_id`` (int32), the envelope
(0, 4, 6, 6 or 8 doubles: ``minx maxx miny maxy`` then ``minz maxz`` and/or ``minm maxm``),
then the WKB. Kart's extra rules, which :meth:`Geometry.from_wkb` and
:meth:`Geometry.normalise` apply: little-endian header and WKB, ``srs_id`` 0 (the CRS lives
in the column's ``geometryCRS``), no envelope for points and empty geometries, an XYZ
envelope for geometries with Z and an XY envelope for all others (M never enters it).

>>> g = Geometry.from_wkb(bytes.fromhex("0101000000" "000000000000f03f" "0000000000000040"))
>>> g.hex()
'47500001000000000101000000000000000000f03f0000000000000040'
>>> g.to_wkt(), g.envelope_type, g.is_empty
('POINT (1 2)', 0, False)
>>> Geometry.from_wkt("LINESTRING Z (1 2 3, 4 5 6)").header_envelope()
(1.0, 4.0, 2.0, 5.0, 3.0, 6.0)
"""

from __future__ import annotations

import struct
from typing import Any

from . import wkb as _wkb
from .errors import GeometryError
from .wkt import format_wkt, parse_wkt

__all__ = [
    "ENVELOPE_NONE",
    "ENVELOPE_XY",
    "ENVELOPE_XYZ",
    "ENVELOPE_XYM",
    "ENVELOPE_XYZM",
    "Geometry",
    "desired_envelope_type",
    "gpkg_to_wkb",
    "wkb_to_gpkg",
    "normalise_gpkg",
]

ENVELOPE_NONE, ENVELOPE_XY, ENVELOPE_XYZ, ENVELOPE_XYM, ENVELOPE_XYZM = 0, 1, 2, 3, 4
_ENVELOPE_DOUBLES = {ENVELOPE_NONE: 0, ENVELOPE_XY: 4, ENVELOPE_XYZ: 6, ENVELOPE_XYM: 6, ENVELOPE_XYZM: 8}

_LE_BIT = 0b1
_ENVELOPE_BITS = 0b1110
_EMPTY_BIT = 0b10000
_EXTENDED_BIT = 0b100000


def _parse_header(data: bytes) -> tuple[int, bool, int, int]:
    """Validate the GeoPackage header; return ``(flags, little_endian, envelope_type,
    wkb_offset)``."""
    if len(data) < 8 or data[:2] != b"GP":
        raise GeometryError(f"not GeoPackage binary (expected 'GP' header, got {bytes(data[:8])!r})", offset=0)
    version, flags = data[2], data[3]
    if version != 0:
        raise GeometryError(f"GeoPackage binary version {version} is not supported (only 0)", offset=2)
    if flags & _EXTENDED_BIT:
        raise GeometryError("ExtendedGeoPackageBinary is not supported", offset=3)
    env_type = (flags & _ENVELOPE_BITS) >> 1
    if env_type not in _ENVELOPE_DOUBLES:
        raise GeometryError(f"invalid envelope contents indicator {env_type}", offset=3)
    wkb_offset = 8 + 8 * _ENVELOPE_DOUBLES[env_type]
    if len(data) <= wkb_offset:
        raise GeometryError("GeoPackage binary ends before its WKB", offset=len(data))
    return flags, bool(flags & _LE_BIT), env_type, wkb_offset


def desired_envelope_type(empty: bool, wkb_kind: int, has_z: bool) -> int:
    """Kart's envelope rule: none for empty geometries and points, XYZ with Z, else XY."""
    if empty or wkb_kind == _wkb.POINT:
        return ENVELOPE_NONE
    return ENVELOPE_XYZ if has_z else ENVELOPE_XY


class Geometry(bytes):
    """A geometry value as Kart stores it: StandardGeoPackageBinary bytes.

    Construction checks only the header (cheap, so decoding a feature stays fast); use
    :meth:`validate` to parse the WKB too. Equality is byte equality.
    """

    def __new__(cls, data: bytes | bytearray | memoryview) -> "Geometry":
        self = super().__new__(cls, data)
        _parse_header(self)
        return self

    def __repr__(self) -> str:
        return f"Geometry({bytes(self).hex()!r})"

    # -- header -------------------------------------------------------------------------
    @property
    def flags(self) -> int:
        """The GeoPackage flags byte."""
        return self[3]

    @property
    def is_little_endian(self) -> bool:
        """Whether the header (srs_id and envelope) is little-endian."""
        return bool(self[3] & _LE_BIT)

    @property
    def envelope_type(self) -> int:
        """0 none, 1 XY, 2 XYZ, 3 XYM, 4 XYZM."""
        return (self[3] & _ENVELOPE_BITS) >> 1

    @property
    def is_empty(self) -> bool:
        """The header's empty flag."""
        return bool(self[3] & _EMPTY_BIT)

    @property
    def srs_id(self) -> int:
        """The header's ``srs_id`` (always 0 in normalised Kart geometries)."""
        return struct.unpack_from("<i" if self.is_little_endian else ">i", self, 4)[0]

    @property
    def wkb_offset(self) -> int:
        """Where the WKB starts."""
        return 8 + 8 * _ENVELOPE_DOUBLES[self.envelope_type]

    def header_envelope(self) -> tuple[float, ...] | None:
        """The envelope stored in the header (4, 6 or 8 doubles), or ``None``."""
        n = _ENVELOPE_DOUBLES[self.envelope_type]
        if not n:
            return None
        return struct.unpack_from(("<" if self.is_little_endian else ">") + "d" * n, self, 8)

    # -- WKB ----------------------------------------------------------------------------
    @property
    def wkb(self) -> bytes:
        """The WKB exactly as stored (any byte order)."""
        return bytes(self[self.wkb_offset :])

    def geometry_type(self) -> tuple[int, bool, bool]:
        """``(base_kind, has_z, has_m)`` from the WKB header."""
        return _wkb.wkb_type_of(self, self.wkb_offset)

    @property
    def geometry_type_name(self) -> str:
        """E.g. ``"MULTIPOLYGON"``, ``"LINESTRING ZM"``, as in ``geometryType``."""
        kind, z, m = self.geometry_type()
        suffix = ("Z" if z else "") + ("M" if m else "")
        return _wkb.TYPE_NAMES[kind] + (f" {suffix}" if suffix else "")

    def parse(self) -> _wkb.WkbGeometry:
        """Parse the WKB into a :class:`~fstore.tables.wkb.WkbGeometry`."""
        return _wkb.read_wkb(self.wkb)

    def validate(self) -> "Geometry":
        """Parse header and WKB fully; raise :class:`GeometryError` if malformed."""
        self.parse()
        return self

    def to_wkb(self) -> bytes:
        """Little-endian WKB (Kart's ``gpkg_geom_to_wkb``): returned as stored when it is
        already little-endian, re-encoded as ISO WKB otherwise."""
        return gpkg_to_wkb(self)

    def to_hex_wkb(self) -> str:
        """Upper-case hex of :meth:`to_wkb`, as Kart prints it."""
        return self.to_wkb().hex().upper()

    def to_wkt(self) -> str:
        """ISO WKT, e.g. ``"POINT Z (1 2 3)"``."""
        return format_wkt(self.parse())

    def envelope(self, *, calculate_if_missing: bool = False) -> tuple[float, ...] | None:
        """The header envelope, or (if asked) one computed from the WKB when none is
        stored: ``(minx, maxx, miny, maxy[, minz, maxz])``."""
        env = self.header_envelope()
        if env is not None or not calculate_if_missing:
            return env
        box = _wkb.envelope(self.parse())
        if box is None:
            return None
        return box[:4] if box[4] is None else box

    def normalise(self) -> "Geometry":
        """Kart's normal form (see :func:`normalise_gpkg`)."""
        return normalise_gpkg(self)

    # -- construction -------------------------------------------------------------------
    @classmethod
    def of(cls, data: Any) -> "Geometry | None":
        """``None`` for ``None`` or empty bytes, the value itself for a Geometry, else a
        new Geometry."""
        if data is None or isinstance(data, Geometry):
            return data
        return cls(data) if data else None

    @classmethod
    def from_wkb(
        cls,
        wkb: bytes,
        *,
        srs_id: int = 0,
        little_endian: bool = True,
        little_endian_wkb: bool = True,
        envelope_type: int | None = None,
    ) -> "Geometry":
        """Build a GeoPackage geometry from WKB / EWKB (see :func:`wkb_to_gpkg`)."""
        return wkb_to_gpkg(
            wkb,
            srs_id=srs_id,
            little_endian=little_endian,
            little_endian_wkb=little_endian_wkb,
            envelope_type=envelope_type,
        )

    @classmethod
    def from_hex_wkb(cls, hex_wkb: str, **kwargs: Any) -> "Geometry":
        """:meth:`from_wkb` of hex-encoded WKB."""
        return wkb_to_gpkg(bytes.fromhex(hex_wkb), **kwargs)

    @classmethod
    def from_wkt(cls, text: str, *, srs_id: int = 0) -> "Geometry":
        """Build from (E)WKT; an ``SRID=n;`` prefix is dropped (Kart keeps the CRS per
        column) unless ``srs_id`` is given."""
        geom, _srid = parse_wkt(text)
        return _from_parsed(geom, srs_id=srs_id)


def _from_parsed(
    geom: _wkb.WkbGeometry,
    *,
    srs_id: int = 0,
    little_endian: bool = True,
    little_endian_wkb: bool = True,
    envelope_type: int | None = None,
) -> Geometry:
    empty = _wkb.is_empty(geom)
    if envelope_type is None:
        envelope_type = desired_envelope_type(empty, geom.kind, geom.has_z)
    if envelope_type not in (ENVELOPE_NONE, ENVELOPE_XY, ENVELOPE_XYZ):
        raise GeometryError(f"cannot write envelope type {envelope_type} (only none, XY, XYZ)")
    e = "<" if little_endian else ">"
    flags = (_LE_BIT if little_endian else 0) | (_EMPTY_BIT if empty else 0) | (envelope_type << 1)
    header = b"GP" + struct.pack(f"{e}BBi", 0, flags, srs_id)
    env = b""
    if envelope_type != ENVELOPE_NONE:
        box = _wkb.envelope(geom)
        if box is None:
            nan = float("nan")
            box = (nan, nan, nan, nan, nan, nan)
        values = box[:4]
        if envelope_type == ENVELOPE_XYZ:
            values += (box[4], box[5]) if box[4] is not None else (0.0, 0.0)
        env = struct.pack(e + "d" * len(values), *values)
    return Geometry(header + env + _wkb.write_wkb(geom, little_endian=little_endian_wkb))


def wkb_to_gpkg(
    wkb: bytes,
    *,
    srs_id: int = 0,
    little_endian: bool = True,
    little_endian_wkb: bool = True,
    envelope_type: int | None = None,
) -> Geometry:
    """WKB (ISO or EWKB, any byte order) -> Kart GeoPackage geometry.

    The WKB is re-encoded as ISO WKB; the envelope follows Kart's rule unless
    ``envelope_type`` forces one; the empty flag is set for empty geometries. The keyword
    arguments other than ``srs_id`` exist to build non-normal inputs for tests, as in
    Kart's own tests.
    """
    geom = _wkb.read_wkb(wkb)
    return _from_parsed(
        geom,
        srs_id=srs_id,
        little_endian=little_endian,
        little_endian_wkb=little_endian_wkb,
        envelope_type=envelope_type,
    )


def gpkg_to_wkb(gpkg: bytes) -> bytes:
    """GeoPackage geometry -> little-endian WKB (stored WKB returned unchanged when it is
    already little-endian, as Kart does)."""
    _flags, _le, _env, offset = _parse_header(gpkg)
    data = bytes(gpkg[offset:])
    if data[0] == 0:
        return _wkb.write_wkb(_wkb.read_wkb(data))
    return data


def normalise_gpkg(gpkg: bytes) -> Geometry:
    """Kart's ``normalise_gpkg_geom``: a little-endian geometry with little-endian WKB and
    the envelope Kart's rule asks for only has its ``srs_id`` zeroed (bytes otherwise kept,
    including a stored envelope); anything else is rebuilt from its WKB."""
    flags, le, env_type, offset = _parse_header(gpkg)
    data = bytes(gpkg)
    want = None
    if le:
        kind, has_z, _m = _wkb.wkb_type_of(data, offset)
        want = desired_envelope_type(bool(flags & _EMPTY_BIT), kind, has_z)
        if data[offset] == 1 and env_type == want:
            if data[4:8] == b"\x00\x00\x00\x00":
                return gpkg if isinstance(gpkg, Geometry) else Geometry(data)
            return Geometry(data[:4] + b"\x00\x00\x00\x00" + data[8:])
    geom = _wkb.read_wkb(data[offset:])
    return _from_parsed(geom, envelope_type=want)
