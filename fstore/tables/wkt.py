"""Well-Known Text for the geometries :mod:`~fstore.tables.wkb` models: parse and print.

Accepts OGC and ISO WKT in any case, with optional ``Z`` / ``M`` / ``ZM`` tags (without a
tag the dimension is taken from the first coordinate, as OGR does), ``EMPTY``, both
``MULTIPOINT (1 2, 3 4)`` and ``MULTIPOINT ((1 2), (3 4))``, bare ``( … )`` linestrings
inside COMPOUNDCURVE / CURVEPOLYGON / MULTICURVE and bare polygons inside MULTISURFACE,
and an EWKT ``SRID=n;`` prefix. Prints ISO WKT with the shortest round-tripping numbers.

>>> geom, srid = parse_wkt("SRID=4326;MULTIPOINT (1 2, 3.5 4)")
>>> srid, format_wkt(geom)
(4326, 'MULTIPOINT ((1 2),(3.5 4))')
>>> format_wkt(parse_wkt("point empty")[0])
'POINT EMPTY'
"""

from __future__ import annotations

import math
import re

from . import wkb as W
from .errors import GeometryError

__all__ = ["parse_wkt", "format_wkt"]

_TOKEN = re.compile(r"\s*(?:([A-Za-z]+)|([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b)|([(),]))")
_SRID = re.compile(r"\s*SRID=(-?\d+)\s*;", re.IGNORECASE)

# What a bare "( ... )" stands for inside each collection type.
_BARE_PART = {
    W.MULTIPOINT: W.POINT,
    W.MULTILINESTRING: W.LINESTRING,
    W.MULTIPOLYGON: W.POLYGON,
    W.COMPOUNDCURVE: W.LINESTRING,
    W.CURVEPOLYGON: W.LINESTRING,
    W.MULTICURVE: W.LINESTRING,
    W.MULTISURFACE: W.POLYGON,
    W.POLYHEDRALSURFACE: W.POLYGON,
    W.TIN: W.TRIANGLE,
}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.peeked: tuple[str, str, int] | None = None

    def peek(self) -> tuple[str, str, int]:
        if self.peeked is None:
            start = self.pos
            if self.text[start:].strip() == "":
                self.peeked = ("end", "", len(self.text))
            else:
                m = _TOKEN.match(self.text, start)
                if not m:
                    raise GeometryError(f"unexpected character {self.text[start:].lstrip()[:1]!r}", offset=start)
                self.pos = m.end()
                if m.group(1) and m.group(1).lower() not in ("nan", "inf"):
                    self.peeked = ("word", m.group(1).upper(), m.start(1))
                elif m.group(3):
                    self.peeked = (m.group(3), m.group(3), m.start(3))
                else:
                    tok = m.group(2) or m.group(1)
                    self.peeked = ("num", tok, m.start())
        return self.peeked

    def next(self) -> tuple[str, str, int]:
        tok = self.peek()
        self.peeked = None
        return tok

    def expect(self, kind: str) -> None:
        tok = self.next()
        if tok[0] != kind:
            raise GeometryError(f"expected {kind!r}, found {tok[1] or 'end of text'!r}", offset=tok[2])

    def geometry(self, bare_kind: int | None = None, dims: tuple[bool, bool] | None = None) -> W.WkbGeometry:
        tok = self.peek()
        if tok == ("word", "EMPTY", tok[2]) and bare_kind is not None:
            self.next()
            z, m = dims if dims else (False, False)
            coords = (math.nan,) * (2 + z + m) if bare_kind == W.POINT else ()
            return W.WkbGeometry(bare_kind, bool(z), bool(m), coords)
        if tok[0] == "(" and bare_kind is not None:
            kind = bare_kind
            has_z, has_m = dims if dims else (None, None)
        else:
            self.next()
            if tok[0] != "word" or tok[1] not in W.TYPE_CODES:
                raise GeometryError(f"unknown geometry type {tok[1] or 'end of text'!r}", offset=tok[2])
            kind = W.TYPE_CODES[tok[1]]
            has_z = has_m = None
            tag = self.peek()
            if tag[0] == "word" and tag[1] in ("Z", "M", "ZM"):
                self.next()
                has_z, has_m = "Z" in tag[1], "M" in tag[1]
            if self.peek()[0] == "word" and self.peek()[1] == "EMPTY":
                self.next()
                z, m = bool(has_z), bool(has_m)
                if kind == W.POINT:
                    return W.WkbGeometry(kind, z, m, (math.nan,) * (2 + z + m))
                return W.WkbGeometry(kind, z, m, ())
        return self.body(kind, has_z, has_m)

    def coord(self) -> tuple[float, ...]:
        values = []
        while self.peek()[0] == "num":
            values.append(float(self.next()[1]))
        if not 2 <= len(values) <= 4:
            raise GeometryError(f"a coordinate needs 2 to 4 numbers, found {len(values)}", offset=self.peek()[2])
        return tuple(values)

    def coord_list(self) -> list[tuple[float, ...]]:
        self.expect("(")
        pts = [self.coord()]
        while self.peek()[0] == ",":
            self.next()
            pts.append(self.coord())
        self.expect(")")
        return pts

    def body(self, kind: int, has_z: bool | None, has_m: bool | None) -> W.WkbGeometry:
        start = self.peek()[2]
        if kind in (W.POINT, W.LINESTRING, W.CIRCULARSTRING):
            pts = self.coord_list()
            if kind == W.POINT and len(pts) != 1:
                raise GeometryError("a POINT has exactly one coordinate", offset=start)
            has_z, has_m = _dims(pts, has_z, has_m, start)
            body: tuple = pts[0] if kind == W.POINT else tuple(pts)
            return W.WkbGeometry(kind, has_z, has_m, body)
        if kind in (W.POLYGON, W.TRIANGLE):
            self.expect("(")
            rings = [self.coord_list()]
            while self.peek()[0] == ",":
                self.next()
                rings.append(self.coord_list())
            self.expect(")")
            has_z, has_m = _dims([p for r in rings for p in r], has_z, has_m, start)
            return W.WkbGeometry(kind, has_z, has_m, tuple(tuple(r) for r in rings))
        # Collections.
        self.expect("(")
        parts = []
        dims = (has_z, has_m) if has_z is not None else None
        bare = _BARE_PART.get(kind)
        while True:
            if kind == W.MULTIPOINT and self.peek()[0] == "num":
                pt = self.coord()
                d = _dims([pt], *(dims or (None, None)), start)
                part = W.WkbGeometry(W.POINT, d[0], d[1], pt)
            else:
                part = self.geometry(bare, dims)
            if dims is None:
                dims = (part.has_z, part.has_m)
            parts.append(part)
            if self.peek()[0] != ",":
                break
            self.next()
        self.expect(")")
        if has_z is None:
            has_z, has_m = dims if dims else (False, False)
        parts = [_with_dims(p, has_z, has_m) for p in parts]
        return W.WkbGeometry(kind, has_z, bool(has_m), tuple(parts))


def _dims(pts: list, has_z: bool | None, has_m: bool | None, offset: int) -> tuple[bool, bool]:
    n = len(pts[0])
    if has_z is None:
        has_z, has_m = n >= 3, n == 4
    want = 2 + has_z + bool(has_m)
    for p in pts:
        if len(p) != want:
            raise GeometryError(f"coordinate {p} has {len(p)} numbers, expected {want}", offset=offset)
    return bool(has_z), bool(has_m)


def _with_dims(g: W.WkbGeometry, has_z: bool, has_m: bool) -> W.WkbGeometry:
    """Give an EMPTY part the dimensions of its collection."""
    if (g.has_z, g.has_m) == (has_z, has_m) or not W.is_empty(g) or g.kind != W.POINT and g.coords:
        return g
    if g.kind == W.POINT:
        return W.WkbGeometry(g.kind, has_z, has_m, (math.nan,) * (2 + has_z + has_m))
    return W.WkbGeometry(g.kind, has_z, has_m, g.coords)


def parse_wkt(text: str) -> tuple[W.WkbGeometry, int | None]:
    """Parse (E)WKT; return the geometry and the EWKT SRID (``None`` without a prefix)."""
    srid = None
    m = _SRID.match(text)
    p = _Parser(text)
    if m:
        srid = int(m.group(1))
        p.pos = m.end()
    geom = p.geometry()
    tail = p.peek()
    if tail[0] != "end":
        raise GeometryError(f"unexpected {tail[1]!r} after the geometry", offset=tail[2])
    return geom, srid


def _num(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if v == int(v) and abs(v) < 1e16:
        return str(int(v))
    return repr(v)


def format_wkt(geom: W.WkbGeometry) -> str:
    """ISO WKT of ``geom``, e.g. ``POLYGON Z ((0 0 1,1 0 1,0 0 1))``."""
    tag = ("Z" if geom.has_z else "") + ("M" if geom.has_m else "")
    head = geom.type_name + (f" {tag}" if tag else "")
    if (geom.kind == W.POINT and W.is_empty(geom)) or (geom.kind != W.POINT and not geom.coords):
        return f"{head} EMPTY"
    return f"{head} {_body(geom)}"


def _body(geom: W.WkbGeometry) -> str:
    def pts(seq: tuple) -> str:
        return "(" + ",".join(" ".join(_num(v) for v in p) for p in seq) + ")"

    if geom.kind == W.POINT:
        return pts((geom.coords,))
    if geom.kind in (W.LINESTRING, W.CIRCULARSTRING):
        return pts(geom.coords)
    if geom.kind in (W.POLYGON, W.TRIANGLE):
        return "(" + ",".join(pts(r) for r in geom.coords) + ")"
    bare = _BARE_PART.get(geom.kind)
    parts = []
    for part in geom.coords:
        if part.kind == bare:
            parts.append(_body(part) if format_wkt(part)[-5:] != "EMPTY" else "EMPTY")
        else:
            parts.append(format_wkt(part))
    return "(" + ",".join(parts) + ")"
