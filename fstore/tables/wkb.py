"""Just enough Well-Known Binary to re-encode a geometry and measure its envelope.

Reads WKB of either byte order in the ISO flavour (type + 1000 for Z, 2000 for M, 3000 for
ZM), the EWKB / old-OGC flavour (high bits ``0x80000000`` Z, ``0x40000000`` M,
``0x20000000`` SRID present) or a mix of them per sub-geometry; writes little-endian ISO
WKB, which is what Kart stores. Covers the OGC and SQL/MM types: Point, LineString,
Polygon, the Multi* types, GeometryCollection, CircularString, CompoundCurve,
CurvePolygon, MultiCurve, MultiSurface, PolyhedralSurface, TIN and Triangle. The envelope
follows OGR's ``GetEnvelope`` / ``GetEnvelope3D``: empty parts are skipped, and a circular
arc contributes the extreme points of its circle that it passes through.

This is not a geometry library: no predicates, no validity, no reprojection.

>>> g = read_wkb(bytes.fromhex("000000000200000002" + "3ff0000000000000" "4000000000000000"
...                                                  "4008000000000000" "4010000000000000"))
>>> g.type_name, g.coords
('LINESTRING', ((1.0, 2.0), (3.0, 4.0)))
>>> write_wkb(g).hex()
'010200000002000000000000000000f03f000000000000004000000000000008400000000000001040'
>>> envelope(g)
(1.0, 3.0, 2.0, 4.0, None, None)
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Union

from .errors import GeometryError

__all__ = [
    "POINT",
    "LINESTRING",
    "POLYGON",
    "MULTIPOINT",
    "MULTILINESTRING",
    "MULTIPOLYGON",
    "GEOMETRYCOLLECTION",
    "CIRCULARSTRING",
    "COMPOUNDCURVE",
    "CURVEPOLYGON",
    "MULTICURVE",
    "MULTISURFACE",
    "POLYHEDRALSURFACE",
    "TIN",
    "TRIANGLE",
    "TYPE_NAMES",
    "TYPE_CODES",
    "Coord",
    "WkbGeometry",
    "read_wkb",
    "read_wkb_with_srid",
    "write_wkb",
    "wkb_type_of",
    "is_empty",
    "envelope",
]

POINT, LINESTRING, POLYGON = 1, 2, 3
MULTIPOINT, MULTILINESTRING, MULTIPOLYGON, GEOMETRYCOLLECTION = 4, 5, 6, 7
CIRCULARSTRING, COMPOUNDCURVE, CURVEPOLYGON, MULTICURVE, MULTISURFACE = 8, 9, 10, 11, 12
POLYHEDRALSURFACE, TIN, TRIANGLE = 15, 16, 17

TYPE_NAMES = {
    POINT: "POINT",
    LINESTRING: "LINESTRING",
    POLYGON: "POLYGON",
    MULTIPOINT: "MULTIPOINT",
    MULTILINESTRING: "MULTILINESTRING",
    MULTIPOLYGON: "MULTIPOLYGON",
    GEOMETRYCOLLECTION: "GEOMETRYCOLLECTION",
    CIRCULARSTRING: "CIRCULARSTRING",
    COMPOUNDCURVE: "COMPOUNDCURVE",
    CURVEPOLYGON: "CURVEPOLYGON",
    MULTICURVE: "MULTICURVE",
    MULTISURFACE: "MULTISURFACE",
    POLYHEDRALSURFACE: "POLYHEDRALSURFACE",
    TIN: "TIN",
    TRIANGLE: "TRIANGLE",
}
TYPE_CODES = {name: code for code, name in TYPE_NAMES.items()}

# How the body of each type is laid out.
_POINT_BODY = {POINT}
_POINT_LIST_BODY = {LINESTRING, CIRCULARSTRING}
_RING_LIST_BODY = {POLYGON, TRIANGLE}
_PARTS_BODY = {
    MULTIPOINT,
    MULTILINESTRING,
    MULTIPOLYGON,
    GEOMETRYCOLLECTION,
    COMPOUNDCURVE,
    CURVEPOLYGON,
    MULTICURVE,
    MULTISURFACE,
    POLYHEDRALSURFACE,
    TIN,
}

_EWKB_Z = 0x80000000
_EWKB_M = 0x40000000
_EWKB_SRID = 0x20000000

Coord = tuple  # (x, y[, z][, m]) as floats
Body = Union[Coord, tuple]


@dataclass(frozen=True, slots=True)
class WkbGeometry:
    """One geometry: ``kind`` is the base type code (1–17), ``has_z`` / ``has_m`` its
    dimensions, and ``coords`` depends on the kind: a Point holds one coordinate tuple
    (all NaN when empty), a LineString or CircularString a tuple of coordinates, a
    Polygon or Triangle a tuple of rings (each a tuple of coordinates), and every
    collection-like type (Multi*, GeometryCollection, CompoundCurve, CurvePolygon,
    PolyhedralSurface, TIN) a tuple of :class:`WkbGeometry` parts."""

    kind: int
    has_z: bool
    has_m: bool
    coords: tuple

    @property
    def type_name(self) -> str:
        """The WKT name of the base type, e.g. ``"MULTIPOLYGON"``."""
        return TYPE_NAMES[self.kind]

    @property
    def dims(self) -> int:
        """Number of ordinates per coordinate (2, 3 or 4)."""
        return 2 + self.has_z + self.has_m

    @property
    def iso_code(self) -> int:
        """The ISO WKB type code, e.g. 1003 for POLYGON Z."""
        return self.kind + 1000 * self.has_z + 2000 * self.has_m

    def __eq__(self, other: object) -> bool:  # NaN-aware: an empty point equals itself
        if not isinstance(other, WkbGeometry):
            return NotImplemented
        return (self.kind, self.has_z, self.has_m) == (other.kind, other.has_z, other.has_m) and _same(
            self.coords, other.coords
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.has_z, self.has_m, len(self.coords)))


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def wkb_type_of(data: bytes, offset: int = 0) -> tuple[int, bool, bool]:
    """``(base_kind, has_z, has_m)`` of the WKB geometry at ``offset``, read from its header
    only."""
    kind, has_z, has_m, _srid, _le, _ = _read_header(data, offset)
    return kind, has_z, has_m


def _read_header(data: bytes, offset: int) -> tuple[int, bool, bool, int | None, bool, int]:
    if offset + 5 > len(data):
        raise GeometryError("WKB truncated in a geometry header", offset=offset)
    order = data[offset]
    if order not in (0, 1):
        raise GeometryError(f"WKB byte-order byte must be 0 or 1, not {order}", offset=offset)
    le = order == 1
    (raw,) = struct.unpack_from("<I" if le else ">I", data, offset + 1)
    pos = offset + 5
    has_z = bool(raw & _EWKB_Z)
    has_m = bool(raw & _EWKB_M)
    srid = None
    if raw & _EWKB_SRID:
        if pos + 4 > len(data):
            raise GeometryError("EWKB truncated in its SRID", offset=pos)
        (srid,) = struct.unpack_from("<i" if le else ">i", data, pos)
        pos += 4
    code = raw & 0x0FFFFFFF
    thousands, kind = divmod(code, 1000)
    if thousands > 3 or kind not in TYPE_NAMES:
        raise GeometryError(f"unknown WKB geometry type {raw:#x}", offset=offset + 1)
    has_z = has_z or thousands in (1, 3)
    has_m = has_m or thousands in (2, 3)
    return kind, has_z, has_m, srid, le, pos


def _parse(data: bytes, offset: int, depth: int = 0) -> tuple[WkbGeometry, int, int | None]:
    if depth > 32:
        raise GeometryError("WKB nests more than 32 levels deep", offset=offset)
    kind, has_z, has_m, srid, le, pos = _read_header(data, offset)
    dims = 2 + has_z + has_m
    e = "<" if le else ">"
    coord_fmt = struct.Struct(f"{e}{dims}d")
    count_fmt = struct.Struct(f"{e}I")
    size = coord_fmt.size

    def count() -> int:
        nonlocal pos
        if pos + 4 > len(data):
            raise GeometryError("WKB truncated in a count", offset=pos)
        (n,) = count_fmt.unpack_from(data, pos)
        pos += 4
        return n

    def points(n: int) -> tuple:
        nonlocal pos
        end = pos + n * size
        if end > len(data):
            raise GeometryError(f"WKB truncated: {n} coordinates do not fit", offset=pos)
        result = tuple(coord_fmt.unpack_from(data, pos + i * size) for i in range(n))
        pos = end
        return result

    if kind in _POINT_BODY:
        body: tuple = points(1)[0]
    elif kind in _POINT_LIST_BODY:
        body = points(count())
    elif kind in _RING_LIST_BODY:
        body = tuple(points(count()) for _ in range(count()))
    else:
        parts = []
        for _ in range(count()):
            part, pos, _ = _parse(data, pos, depth + 1)
            parts.append(part)
        body = tuple(parts)
    return WkbGeometry(kind, has_z, has_m, body), pos, srid


def read_wkb_with_srid(data: bytes) -> tuple[WkbGeometry, int | None]:
    """Parse one complete WKB / EWKB geometry; return it and its EWKB SRID (or ``None``)."""
    data = bytes(data)
    geom, end, srid = _parse(data, 0)
    if end != len(data):
        raise GeometryError(f"{len(data) - end} unexpected bytes after the WKB geometry", offset=end)
    return geom, srid


def read_wkb(data: bytes) -> WkbGeometry:
    """Parse one complete WKB / EWKB geometry (see the module docstring)."""
    return read_wkb_with_srid(data)[0]


def write_wkb(geom: WkbGeometry, *, little_endian: bool = True) -> bytes:
    """Encode ``geom`` as ISO WKB (little-endian unless asked otherwise)."""
    out = bytearray()
    _write(geom, out, "<" if little_endian else ">")
    return bytes(out)


def _write(geom: WkbGeometry, out: bytearray, e: str) -> None:
    out += struct.pack(f"{e}BI", 1 if e == "<" else 0, geom.iso_code)
    dims = geom.dims
    coord = struct.Struct(f"{e}{dims}d")

    def put_points(pts: tuple) -> None:
        out.extend(struct.pack(f"{e}I", len(pts)))
        for p in pts:
            if len(p) != dims:
                raise GeometryError(f"{geom.type_name} coordinate {p} has {len(p)} ordinates, expected {dims}")
            out.extend(coord.pack(*p))

    if geom.kind in _POINT_BODY:
        if len(geom.coords) != dims:
            raise GeometryError(f"POINT coordinate {geom.coords} has {len(geom.coords)} ordinates, expected {dims}")
        out += coord.pack(*geom.coords)
    elif geom.kind in _POINT_LIST_BODY:
        put_points(geom.coords)
    elif geom.kind in _RING_LIST_BODY:
        out += struct.pack(f"{e}I", len(geom.coords))
        for ring in geom.coords:
            put_points(ring)
    else:
        out += struct.pack(f"{e}I", len(geom.coords))
        for part in geom.coords:
            _write(part, out, e)


def is_empty(geom: WkbGeometry) -> bool:
    """OGR's ``IsEmpty``: a point whose x and y are NaN, a curve without points, a surface
    without non-empty rings, a collection without non-empty parts."""
    if geom.kind in _POINT_BODY:
        return math.isnan(geom.coords[0]) and math.isnan(geom.coords[1])
    if geom.kind in _POINT_LIST_BODY:
        return not geom.coords
    if geom.kind in _RING_LIST_BODY:
        return not any(geom.coords)
    return all(is_empty(p) for p in geom.coords)


Envelope = tuple  # (minx, maxx, miny, maxy, minz | None, maxz | None)


class _Box:
    __slots__ = ("minx", "maxx", "miny", "maxy", "minz", "maxz", "seen")

    def __init__(self) -> None:
        inf = math.inf
        self.minx = self.miny = self.minz = inf
        self.maxx = self.maxy = self.maxz = -inf
        self.seen = False

    def add(self, p: Coord, has_z: bool) -> None:
        x, y = p[0], p[1]
        if math.isnan(x) and math.isnan(y):
            return
        self.seen = True
        self.minx = min(self.minx, x)
        self.maxx = max(self.maxx, x)
        self.miny = min(self.miny, y)
        self.maxy = max(self.maxy, y)
        if has_z:
            z = p[2]
            self.minz = min(self.minz, z)
            self.maxz = max(self.maxz, z)


def envelope(geom: WkbGeometry) -> Envelope | None:
    """``(minx, maxx, miny, maxy, minz, maxz)`` of ``geom`` (z bounds ``None`` unless it
    has Z), or ``None`` if it is empty. Circular arcs widen the box to the extreme points
    of their circle that they pass through, as OGR does."""
    box = _Box()
    _extend(geom, box)
    if not box.seen:
        return None
    if geom.has_z and box.minz <= box.maxz:
        return (box.minx, box.maxx, box.miny, box.maxy, box.minz, box.maxz)
    return (box.minx, box.maxx, box.miny, box.maxy, None, None)


def _extend(geom: WkbGeometry, box: _Box) -> None:
    z = geom.has_z
    if geom.kind in _POINT_BODY:
        box.add(geom.coords, z)
    elif geom.kind in _POINT_LIST_BODY:
        for p in geom.coords:
            box.add(p, z)
        if geom.kind == CIRCULARSTRING:
            _extend_arcs(geom.coords, box)
    elif geom.kind in _RING_LIST_BODY:
        for ring in geom.coords:
            for p in ring:
                box.add(p, z)
    else:
        for part in geom.coords:
            _extend(part, box)


def _extend_arcs(pts: tuple, box: _Box) -> None:
    """Widen ``box`` by the circle extremes each arc (p0, p1, p2) sweeps through."""
    half_pi = math.pi / 2
    for i in range(0, len(pts) - 2, 2):
        params = _arc_parameters(pts[i], pts[i + 1], pts[i + 2])
        if params is None:
            continue
        r, cx, cy, a0, a2 = params
        q0 = math.floor(a0 / half_pi)
        q2 = math.floor(a2 / half_pi)
        if q0 > q2:
            q0, q2 = q2, q0
        for q in range(q0 + 1, q2 + 1):
            side = q % 4
            if side == 0:
                box.maxx = max(box.maxx, cx + r)
            elif side == 1:
                box.maxy = max(box.maxy, cy + r)
            elif side == 2:
                box.minx = min(box.minx, cx - r)
            else:
                box.miny = min(box.miny, cy - r)


def _arc_parameters(p0: Coord, p1: Coord, p2: Coord) -> tuple[float, float, float, float, float] | None:
    """Radius, centre and start / end angles (unwrapped so the arc runs from ``a0`` to
    ``a2`` through ``p1``) of the circle through three points; ``None`` if they are
    collinear (the arc is then a straight segment)."""
    x0, y0, x1, y1, x2, y2 = p0[0], p0[1], p1[0], p1[1], p2[0], p2[1]
    if x0 == x2 and y0 == y2:
        # A full circle whose diameter runs from p0 to p1.
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        r = math.hypot(x0 - cx, y0 - cy)
        if r == 0:
            return None
        a0 = math.atan2(y0 - cy, x0 - cx)
        return r, cx, cy, a0, a0 + 2 * math.pi
    d = 2 * (x0 * (y1 - y2) + x1 * (y2 - y0) + x2 * (y0 - y1))
    if d == 0:
        return None
    s0, s1, s2 = x0 * x0 + y0 * y0, x1 * x1 + y1 * y1, x2 * x2 + y2 * y2
    cx = (s0 * (y1 - y2) + s1 * (y2 - y0) + s2 * (y0 - y1)) / d
    cy = (s0 * (x2 - x1) + s1 * (x0 - x2) + s2 * (x1 - x0)) / d
    r = math.hypot(x0 - cx, y0 - cy)
    a0 = math.atan2(y0 - cy, x0 - cx)
    a1 = math.atan2(y1 - cy, x1 - cx)
    a2 = math.atan2(y2 - cy, x2 - cx)
    # Counter-clockwise when p1 lies on the ccw sweep from p0 to p2.
    two_pi = 2 * math.pi
    ccw = (a1 - a0) % two_pi < (a2 - a0) % two_pi
    if ccw:
        while a2 < a0:
            a2 += two_pi
    else:
        while a2 > a0:
            a2 -= two_pi
    return r, cx, cy, a0, a2
