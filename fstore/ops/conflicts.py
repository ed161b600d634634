"""Conflicts as things a user settles one by one, each under a short key.

A merge's conflicts come from the quads (:class:`fstore.ops.three_way.Conflict`, one per
``(graph, subject, predicate)``) and from graph mergers (tables: a conflicting cell, a row
deleted on one side and changed on the other, a schema). Each turns into
:class:`ConflictItem` objects: what a user can settle with ``"ours"``, ``"theirs"`` or an
explicit value, named by a key derived from where it is (so the same merge always gives
the same keys). They are stored as the merge in progress (:mod:`fstore.ops.merge_state`).

>>> from fstore import IRI
>>> item = ConflictItem("quad", (None, IRI("urn:s"), IRI("urn:p")), ("a",), ("b",), ("c",))
>>> [found.key for found in keyed([item])] == [location_key("quad", item.where)[:8]]
True
>>> decode_item(*encode_item(keyed([item])[0])).where == item.where
True
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import msgpack

from nstore.pack import pack, unpack

from ..errors import ResolutionError

__all__ = [
    "ConflictItem",
    "MergeState",
    "Resolution",
    "Choose",
    "KINDS",
    "SIDES",
    "keyed",
    "location_key",
    "encode_item",
    "decode_item",
    "encode_resolution",
    "decode_resolution",
    "encode_state",
    "decode_state",
]

KINDS = ("quad", "cell", "row", "schema")
SIDES = ("ours", "theirs")
KEY_LENGTH = 8  # hex digits: short to type, lengthened only if two conflicts of one merge share them

Resolution = tuple  # ("ours",), ("theirs",) or ("value", value)
Choose = Callable[["ConflictItem"], Resolution]


@dataclass(frozen=True)
class ConflictItem:
    """One conflict a user settles. ``where`` by ``kind``:

    * ``"quad"``: ``(graph, subject, predicate)``; the sides are tuples of objects (RDF terms);
    * ``"cell"``: ``(table, primary key tuple, column)``; the sides are cell values as stored
      (Kart's encoding: dates, times and numerics as text, a geometry as its bytes);
    * ``"row"``: ``(table, primary key tuple)`` of a row deleted on one side and changed on
      the other; each side is None (no row) or the changed cells as ``((column, value), ...)``;
    * ``"schema"``: ``(table,)``; each side is its ``schema.json`` text (None: no table).

    ``detail`` says what kind of conflict it is; ``resolution`` is how it was settled
    (None: not yet), as ``("ours",)``, ``("theirs",)`` or ``("value", value)``."""

    kind: str
    where: tuple
    base: Any
    ours: Any
    theirs: Any
    detail: str = ""
    key: str = ""
    resolution: Resolution | None = field(default=None, compare=False)

    @property
    def location(self) -> bytes:
        """What identifies this conflict within a merge."""
        return pack(self.kind, *self.where)

    @property
    def resolved(self) -> bool:
        return self.resolution is not None

    def describe(self) -> str:
        """Where it is, for people: ``table 't', row 1, column 'a'``."""
        if self.kind == "quad":
            graph, subject, predicate = self.where
            return f"{subject} {predicate}" + ("" if graph is None else f" in graph {graph}")
        table = f"table {self.where[0]!r}"
        if self.kind == "schema":
            return f"{table}, schema"
        pk = self.where[1][0] if len(self.where[1]) == 1 else self.where[1]
        return f"{table}, row {pk!r}" + (f", column {self.where[2]!r}" if self.kind == "cell" else "")

    def value_for(self, resolution: Resolution) -> Any:
        """The side's value (or the explicit one) this resolution settles on."""
        if resolution[0] == "value":
            return resolution[1]
        return self.ours if resolution[0] == "ours" else self.theirs


def location_key(kind: str, where: tuple) -> str:
    return hashlib.sha256(pack(kind, *where)).hexdigest()


def keyed(items: list[ConflictItem]) -> list[ConflictItem]:
    """``items`` with their keys: the first hex digits of a hash of where each is, as few
    as keep them distinct (8 unless two collide)."""
    full = [location_key(item.kind, item.where) for item in items]
    length = KEY_LENGTH
    while len({digest[:length] for digest in full}) < len(set(full)):
        length += 2
    return [replace(item, key=digest[:length]) for item, digest in zip(items, full)]


def _storable(value: Any, what: str) -> Any:
    """``value`` checked to pack (nstore's tuple packing; dicts as sorted pairs)."""
    if isinstance(value, dict):
        value = tuple(value.items())
    if isinstance(value, list):
        value = tuple(value)
    try:
        pack(value)
    except (TypeError, ValueError) as exc:
        raise ResolutionError(f"{what}: {value!r} cannot be stored ({exc}); give a text, number, date, "
                              "bytes or RDF term (times, intervals and geometries as Kart stores them)") from None
    return value


def encode_item(item: ConflictItem) -> tuple[str, bytes]:
    """``(key, record)``: what the store keeps of a conflict."""
    return item.key, pack(item.kind, item.detail, tuple(item.where), item.base, item.ours, item.theirs)


def decode_item(key: str, record: bytes, resolution: bytes | None = None) -> ConflictItem:
    kind, detail, where, base, ours, theirs = unpack(record)
    return ConflictItem(kind, where, base, ours, theirs, detail, key,
                        None if resolution is None else decode_resolution(resolution))


def encode_resolution(item: ConflictItem, side: str, value: Any = None) -> bytes:
    """A resolution of ``item``: a side, or ``side == "value"`` and ``value`` (a quad
    conflict: the objects to keep; a cell: its value; a row: a dict, or None to delete it;
    a schema: its JSON text)."""
    if side in SIDES:
        return pack(side)
    if side != "value":
        raise ResolutionError(f"a conflict is resolved with 'ours', 'theirs' or a value, not {side!r}")
    what = f"conflict {item.key} ({item.describe()})"
    if item.kind == "quad":
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise ResolutionError(f"{what}: give the objects to keep as a list, not {value!r}")
        value = tuple(value)
    elif item.kind == "row" and value is not None and not isinstance(value, dict):
        raise ResolutionError(f"{what}: give the row to keep as a dict (or None to delete it), not {value!r}")
    elif item.kind == "schema" and not isinstance(value, str):
        raise ResolutionError(f"{what}: give the schema to keep as its JSON text, not {value!r}")
    return pack("value", _storable(value, what))


def decode_resolution(raw: bytes) -> Resolution:
    return unpack(raw)


@dataclass(frozen=True)
class MergeState:
    """The merge in progress: ``other`` (as given) into branch ``into``, whose head was
    ``ours`` when it started; ``theirs`` and ``base`` are commit ids (``base`` None: no
    common ancestor); ``conflicts`` and ``unresolved`` count the conflict items."""

    into: str
    other: str
    ours: str
    theirs: str
    base: str | None
    message: str
    author: str
    conflicts: int = 0
    unresolved: int = 0


def encode_state(state: MergeState) -> bytes:
    return msgpack.packb({"into": state.into, "other": state.other, "ours": state.ours, "theirs": state.theirs,
                          "base": state.base, "message": state.message, "author": state.author})


def decode_state(raw: bytes, conflicts: int = 0, unresolved: int = 0) -> MergeState:
    fields = msgpack.unpackb(raw)
    return MergeState(fields["into"], fields["other"], fields["ours"], fields["theirs"], fields["base"],
                      fields["message"], fields["author"], conflicts, unresolved)
