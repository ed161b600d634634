"""Table schemas (``schema.json``), legends, column ids and schema diffs, as Kart has them.

A schema is a list of columns; each has a stable ``id`` (kept across renames and moves),
a ``name``, a ``dataType``, an optional ``primaryKeyIndex`` and optional extra type info.
``schema.json`` is Kart's ``json.dumps`` of that list (``", "`` / ``": "`` separators,
ASCII-escaped, no trailing newline); keys keep the order they were read in, so a schema
read from a repository re-serialises byte for byte, V2-era ``"primaryKeyIndex": null``
included. :meth:`Schema.normalised` drops such nulls as Kart does when it rewrites one.

A :class:`Legend` is what a feature needs to be read later: the primary-key column ids
(in ``primaryKeyIndex`` order) and the other column ids (in schema order), stored as
``msgpack([pk_ids, non_pk_ids])`` and named by the first 40 hex digits of its sha256.

>>> s = Schema.from_json('[{"id": "a1", "name": "fid", "dataType": "integer", '
...                      '"primaryKeyIndex": 0, "size": 64}, '
...                      '{"id": "b2", "name": "name", "dataType": "text"}]')
>>> s.legend.pk_columns, s.legend.non_pk_columns
(('a1',), ('b2',))
>>> s.legend.dumps().hex()
'9291a2613191a26232'
>>> s2 = s.rename_column("name", "label").add_column("note", "text", id="c3")
>>> d = s.diff(s2)
>>> sorted(d.added), d.renamed
(['c3'], {'b2': ('name', 'label')})
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import LegendError, SchemaError
from .packing import pack, unpack
from .types import DATA_TYPES, EXTRA_TYPE_INFO, FLOAT_SIZES, GEOMETRY_TYPES, INTEGER_SIZES

__all__ = [
    "Column",
    "Schema",
    "Legend",
    "SchemaDiff",
    "legend_name",
    "new_column_id",
    "deterministic_column_id",
]

_BASE_KEYS = ("id", "name", "dataType", "primaryKeyIndex")
_GEOMETRY_TYPE_RE = re.compile(r"(%s)(?: (Z|M|ZM))?" % "|".join(GEOMETRY_TYPES))


def new_column_id() -> str:
    """A fresh random column id (a UUID4 string), as Kart makes for new columns."""
    return str(uuid.uuid4())


def deterministic_column_id(*data: str | bytes) -> str:
    """Kart's ``ColumnSchema.deterministic_id``: a UUID-formatted string from the first
    16 bytes of sha256 over the UTF-8 of each argument (Kart's importers use the column
    name, type and a salt). Not a valid UUID version; only the format matters."""
    h = hashlib.sha256()
    for d in data:
        h.update(d.encode("utf-8") if isinstance(d, str) else d)
    return str(uuid.UUID(bytes=h.digest()[:16]))


def legend_name(legend_blob: bytes) -> str:
    """The name of a legend blob: the first 40 hex digits of its sha256."""
    return hashlib.sha256(legend_blob).hexdigest()[:40]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass(frozen=True, eq=False)
class Column:
    """One column of a schema.

    ``extra`` holds the extra type info as ordered ``(key, value)`` pairs (a ``None``
    value only when the source said so explicitly); ``key_order`` remembers the order of
    the keys in the source ``schema.json`` so that it re-serialises byte for byte.
    Equality ignores both (and explicit nulls), as Kart's does.
    """

    id: str
    name: str
    data_type: str
    pk_index: int | None = None
    extra: tuple[tuple[str, Any], ...] = ()
    explicit_null_pk: bool = False
    key_order: tuple[str, ...] = field(default=(), repr=False)

    @property
    def extra_type_info(self) -> dict[str, Any]:
        """Extra type info without nulls, e.g. ``{"size": 64}``."""
        return {k: v for k, v in self.extra if v is not None}

    @property
    def is_pk(self) -> bool:
        return self.pk_index is not None

    def _key(self) -> tuple:
        return (self.id, self.name, self.data_type, self.pk_index, frozenset(self.extra_type_info.items()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Column):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @classmethod
    def create(
        cls, name: str, data_type: str, *, id: str | None = None, pk_index: int | None = None, **extra: Any
    ) -> "Column":
        """A new column (random id unless given); extra type info as keywords, e.g.
        ``Column.create("fid", "integer", pk_index=0, size=64)``."""
        col = cls(
            id or new_column_id(),
            name,
            data_type,
            pk_index,
            tuple((k, v) for k, v in _canonical_extra(data_type, extra) if v is not None),
        )
        col.check(strict=True)
        return col

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, position: int | None = None, strict: bool = True) -> "Column":
        """Read one column dict of ``schema.json``; raise :class:`SchemaError`."""
        where = position
        if not isinstance(d, Mapping):
            raise SchemaError(f"must be a JSON object, not {type(d).__name__}", column=where)
        for key in ("id", "name", "dataType"):
            if key not in d:
                raise SchemaError(f"missing required key {key!r}", column=d.get("name", where))
        col = cls(
            d["id"],
            d["name"],
            d["dataType"],
            d.get("primaryKeyIndex"),
            tuple((k, v) for k, v in d.items() if k not in _BASE_KEYS),
            "primaryKeyIndex" in d and d["primaryKeyIndex"] is None,
            tuple(d.keys()),
        )
        col.check(strict=strict)
        return col

    def check(self, *, strict: bool = True) -> None:
        """Validate id, name, data type and extra type info. ``strict`` also rejects
        extra keys that the data type does not define."""
        where = self.name if isinstance(self.name, str) and self.name else self.id
        if not isinstance(self.id, str) or not self.id:
            raise SchemaError(f"id must be a non-empty string, not {self.id!r}", column=where)
        if not isinstance(self.name, str) or not self.name:
            raise SchemaError(f"name must be a non-empty string, not {self.name!r}", column=where)
        if self.data_type not in DATA_TYPES:
            raise SchemaError(f"unknown dataType {self.data_type!r} (one of {', '.join(DATA_TYPES)})", column=where)
        if self.pk_index is not None and (not _is_int(self.pk_index) or self.pk_index < 0):
            raise SchemaError(f"primaryKeyIndex must be null or a non-negative integer, not {self.pk_index!r}",
                              column=where)
        if self.data_type == "json" and self.pk_index is not None:
            raise SchemaError("a json column cannot be part of the primary key", column=where)
        allowed = EXTRA_TYPE_INFO[self.data_type]
        seen = set()
        for key, value in self.extra:
            if key in seen:
                raise SchemaError(f"duplicate key {key!r}", column=where)
            seen.add(key)
            if key not in allowed:
                if strict:
                    hint = f" ({self.data_type} takes {', '.join(allowed)})" if allowed else ""
                    raise SchemaError(f"unexpected key {key!r} for dataType {self.data_type}{hint}", column=where)
                continue
            if value is None:
                continue
            _check_extra(self.data_type, key, value, where, self.extra_type_info)

    def to_dict(self) -> dict[str, Any]:
        """The column as Kart writes it, keys in their original order."""
        values: dict[str, Any] = {"id": self.id, "name": self.name, "dataType": self.data_type}
        if self.pk_index is not None or self.explicit_null_pk:
            values["primaryKeyIndex"] = self.pk_index
        values.update(self.extra)
        order = [k for k in self.key_order if k in values]
        order += [k for k in values if k not in order]
        return {k: values[k] for k in order}

    def replace(self, **changes: Any) -> "Column":
        """A copy with some of ``id``, ``name``, ``data_type``, ``pk_index`` or ``extra``
        (a mapping or pairs) changed."""
        if "extra" in changes and isinstance(changes["extra"], Mapping):
            changes["extra"] = tuple(changes["extra"].items())
        fields = {
            "id": self.id,
            "name": self.name,
            "data_type": self.data_type,
            "pk_index": self.pk_index,
            "extra": self.extra,
            "explicit_null_pk": self.explicit_null_pk,
            "key_order": self.key_order,
        }
        fields.update(changes)
        col = Column(**fields)
        col.check(strict=False)
        return col


def _canonical_extra(data_type: str, extra: Mapping[str, Any]) -> list[tuple[str, Any]]:
    allowed = EXTRA_TYPE_INFO.get(data_type, ())
    ordered = [(k, extra[k]) for k in allowed if k in extra]
    ordered += [(k, v) for k, v in extra.items() if k not in allowed]
    return ordered


def _check_extra(data_type: str, key: str, value: Any, where: Any, info: Mapping[str, Any]) -> None:
    def bad(msg: str) -> SchemaError:
        return SchemaError(f"{key} {value!r} {msg}", column=where)

    if key == "size":
        sizes = INTEGER_SIZES if data_type == "integer" else FLOAT_SIZES
        if not _is_int(value) or value not in sizes:
            raise bad(f"is not a valid {data_type} size (one of {', '.join(map(str, sizes))})")
    elif key == "length":
        if not _is_int(value) or value <= 0:
            raise bad("must be a positive integer or null")
    elif key == "precision":
        if not _is_int(value) or value <= 0:
            raise bad("must be a positive integer or null")
    elif key == "scale":
        if not _is_int(value) or value < 0:
            raise bad("must be a non-negative integer or null")
        precision = info.get("precision")
        if precision is not None and _is_int(precision) and value > precision:
            raise bad(f"is larger than precision {precision}")
    elif key == "timezone":
        if value != "UTC":
            raise bad('must be "UTC" or null')
    elif key == "geometryType":
        if not isinstance(value, str) or not _GEOMETRY_TYPE_RE.fullmatch(value.upper()):
            raise bad("is not a WKT geometry type like POINT, MULTIPOLYGON Z or GEOMETRY")
    elif key == "geometryCRS":
        if not isinstance(value, str) or not value:
            raise bad("must be a non-empty string or null")


@dataclass(frozen=True)
class Legend:
    """The column ids a feature was written with: primary-key ids, then the others.

    >>> legend = Legend(("a",), ("b", "c"))
    >>> legend.dumps().hex()
    '9291a16192a162a163'
    >>> legend.name == legend_name(legend.dumps()) and len(legend.name)
    40
    """

    pk_columns: tuple[str, ...]
    non_pk_columns: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "pk_columns", tuple(self.pk_columns))
        object.__setattr__(self, "non_pk_columns", tuple(self.non_pk_columns))

    def dumps(self) -> bytes:
        """The legend blob: ``msgpack([pk_ids, non_pk_ids])``."""
        return pack([list(self.pk_columns), list(self.non_pk_columns)])

    @property
    def name(self) -> str:
        """First 40 hex digits of the sha256 of :meth:`dumps`."""
        return legend_name(self.dumps())

    @classmethod
    def loads(cls, data: bytes, *, name: str | None = None) -> "Legend":
        """Read a legend blob; with ``name``, also check that it hashes to that name."""
        where = f"legend {name}" if name else "legend"
        value = unpack(data, where=where)
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(part, list) and all(isinstance(i, str) for i in part) for part in value)
        ):
            raise LegendError(f"{where}: expected [[pk column ids], [other column ids]], got {value!r}")
        legend = cls(tuple(value[0]), tuple(value[1]))
        if name is not None and legend_name(bytes(data)) != name:
            raise LegendError(f"{where}: content hashes to {legend_name(bytes(data))}, not to its name")
        return legend

    @property
    def column_ids(self) -> tuple[str, ...]:
        return self.pk_columns + self.non_pk_columns

    def raw_dict(self, pk_values: Sequence[Any], non_pk_values: Sequence[Any]) -> dict[str, Any]:
        """Zip values with their column ids (pk values first)."""
        if len(pk_values) != len(self.pk_columns):
            raise LegendError(
                f"legend {self.name} has {len(self.pk_columns)} primary key column(s), got {len(pk_values)} value(s)"
            )
        if len(non_pk_values) != len(self.non_pk_columns):
            raise LegendError(
                f"legend {self.name} has {len(self.non_pk_columns)} non-pk column(s), got {len(non_pk_values)} value(s)"
            )
        raw = dict(zip(self.pk_columns, pk_values))
        raw.update(zip(self.non_pk_columns, non_pk_values))
        return raw

    def split(self, raw: Mapping[str, Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """Inverse of :meth:`raw_dict`: ``(pk_values, non_pk_values)``; missing ids read
        as ``None``."""
        return tuple(raw.get(c) for c in self.pk_columns), tuple(raw.get(c) for c in self.non_pk_columns)


@dataclass(frozen=True)
class SchemaDiff:
    """How one schema became another, by column id (Kart's ``diff_types``).

    ``added`` / ``dropped``: ids only in the new / old schema; ``renamed``: id ->
    ``(old_name, new_name)``; ``moved``: ids whose position changed (Kart's
    ``position_updates``, which an insert or a drop also causes); ``reordered``: ids of
    surviving columns whose order relative to each other changed; ``type_changed``: id ->
    ``(old_column, new_column)`` when dataType or extra type info changed; ``pk_changed``:
    ids whose ``primaryKeyIndex`` changed.
    """

    added: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    renamed: dict[str, tuple[str, str]] = field(default_factory=dict)
    moved: tuple[str, ...] = ()
    reordered: tuple[str, ...] = ()
    type_changed: dict[str, tuple[Column, Column]] = field(default_factory=dict)
    pk_changed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.dropped or self.renamed or self.moved or self.type_changed or self.pk_changed)


class Schema:
    """An immutable, ordered list of :class:`Column` with Kart's rules: unique ids and
    names, ``primaryKeyIndex`` values 0, 1, 2… with no gaps or repeats."""

    __slots__ = ("_columns", "_by_id", "_by_name", "_legend", "_pk_columns")

    def __init__(self, columns: Iterable[Column]) -> None:
        cols = tuple(columns)
        by_id: dict[str, Column] = {}
        by_name: dict[str, Column] = {}
        for c in cols:
            if not isinstance(c, Column):
                raise SchemaError(f"expected Column, got {type(c).__name__}")
            c.check(strict=False)
            if c.id in by_id:
                raise SchemaError(f"duplicate column id {c.id!r}", column=c.name)
            if c.name in by_name:
                raise SchemaError("duplicate column name (names must be unique)", column=c.name)
            by_id[c.id] = c
            by_name[c.name] = c
        ordered = sorted(cols, key=lambda c: (0, c.pk_index) if c.pk_index is not None else (1, 0))
        pk_ids, non_pk_ids = [], []
        for i, c in enumerate(ordered):
            if c.pk_index is not None:
                if c.pk_index != i:
                    raise SchemaError(
                        f"primaryKeyIndex values must be contiguous from 0: expected {i}, found {c.pk_index}",
                        column=c.name,
                    )
                pk_ids.append(c.id)
            else:
                non_pk_ids.append(c.id)
        self._columns = cols
        self._by_id = by_id
        self._by_name = by_name
        self._legend = Legend(tuple(pk_ids), tuple(non_pk_ids))
        self._pk_columns = tuple(by_id[i] for i in pk_ids)

    # -- reading and writing ------------------------------------------------------------
    @classmethod
    def from_dicts(cls, dicts: Sequence[Mapping[str, Any]], *, strict: bool = True) -> "Schema":
        """Build from the list of column dicts of a ``schema.json``."""
        if not isinstance(dicts, Sequence) or isinstance(dicts, (str, bytes)):
            raise SchemaError(f"schema.json must be a JSON array of columns, not {type(dicts).__name__}")
        return cls(Column.from_dict(d, position=i, strict=strict) for i, d in enumerate(dicts))

    @classmethod
    def from_json(cls, data: bytes | str, *, strict: bool = True) -> "Schema":
        """Parse ``schema.json`` bytes or text. ``strict=False`` keeps keys Kart does not
        define for a type (use it when reading repositories written by others)."""
        try:
            dicts = json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise SchemaError(f"schema.json is not valid JSON ({e})") from None
        return cls.from_dicts(dicts, strict=strict)

    loads = from_json

    def to_dicts(self) -> list[dict[str, Any]]:
        """The column dicts, as Kart writes them."""
        return [c.to_dict() for c in self._columns]

    def dumps(self) -> bytes:
        """``schema.json`` bytes exactly as Kart writes them."""
        return json.dumps(self.to_dicts()).encode("utf-8")

    def normalised(self) -> "Schema":
        """Without explicit nulls and with canonical key order (how Kart rewrites a
        ``schema.json`` it has read)."""
        return Schema(
            Column(c.id, c.name, c.data_type, c.pk_index, tuple((k, v) for k, v in c.extra if v is not None))
            for c in self._columns
        )

    # -- access -------------------------------------------------------------------------
    @property
    def columns(self) -> tuple[Column, ...]:
        return self._columns

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self._columns]

    @property
    def column_ids(self) -> list[str]:
        return [c.id for c in self._columns]

    @property
    def legend(self) -> Legend:
        """The legend features written with this schema use."""
        return self._legend

    @property
    def pk_columns(self) -> tuple[Column, ...]:
        """Primary-key columns in ``primaryKeyIndex`` order."""
        return self._pk_columns

    @property
    def non_pk_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self._columns if c.pk_index is None)

    @property
    def geometry_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self._columns if c.data_type == "geometry")

    def by_id(self, column_id: str) -> Column:
        try:
            return self._by_id[column_id]
        except KeyError:
            raise KeyError(f"no column with id {column_id!r}") from None

    def by_name(self, name: str) -> Column:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no column named {name!r} (columns: {', '.join(self.column_names)})") from None

    def __getitem__(self, key: int | str) -> Column:
        """By position, or by name (then by id)."""
        if isinstance(key, int):
            return self._columns[key]
        if key in self._by_name:
            return self._by_name[key]
        return self.by_id(key)

    def __contains__(self, key: object) -> bool:
        return key in self._by_name or key in self._by_id

    def __iter__(self) -> Iterator[Column]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Schema):
            return NotImplemented
        return self._columns == other._columns

    def __hash__(self) -> int:
        return hash(self._columns)

    def __repr__(self) -> str:
        cols = ", ".join(f"{c.name}:{c.data_type}{'*' if c.is_pk else ''}" for c in self._columns)
        return f"Schema([{cols}])"

    # -- rows ---------------------------------------------------------------------------
    def adapt(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """A raw feature (values by column id, from any legend) as a row of this schema:
        values by column name in schema order; ids no longer in the schema vanish, new
        columns read as ``None``."""
        return {c.name: raw.get(c.id) for c in self._columns}

    def to_raw(self, row: Mapping[str, Any] | Sequence[Any]) -> dict[str, Any]:
        """A row (by column name, or a sequence in schema order) as values by column id.
        Columns missing from a mapping read as ``None``; unknown names are an error."""
        if isinstance(row, Mapping):
            unknown = [k for k in row if k not in self._by_name]
            if unknown:
                raise SchemaError(f"row has unknown column(s) {', '.join(map(repr, unknown))}")
            return {c.id: row.get(c.name) for c in self._columns}
        if len(row) != len(self._columns):
            raise SchemaError(f"row has {len(row)} values for {len(self._columns)} columns")
        return {c.id: v for c, v in zip(self._columns, row)}

    def pk_values(self, row: Mapping[str, Any]) -> tuple[Any, ...]:
        """The primary-key values of a row (by column name), in ``primaryKeyIndex`` order."""
        return tuple(row.get(c.name) for c in self._pk_columns)

    # -- evolution ----------------------------------------------------------------------
    def diff(self, new: "Schema") -> SchemaDiff:
        """What changed from this schema to ``new``, by column id."""
        old_ids = self.column_ids
        new_ids = new.column_ids
        old_set, new_set = set(old_ids), set(new_ids)
        renamed, type_changed, moved, pk_changed = {}, {}, [], []
        for i, cid in enumerate(new_ids):
            if cid not in old_set:
                continue
            a, b = self._by_id[cid], new._by_id[cid]
            if old_ids.index(cid) != i:
                moved.append(cid)
            if a.name != b.name:
                renamed[cid] = (a.name, b.name)
            if a.data_type != b.data_type or a.extra_type_info != b.extra_type_info:
                type_changed[cid] = (a, b)
            if a.pk_index != b.pk_index:
                pk_changed.append(cid)
        kept_old = [i for i in old_ids if i in new_set]
        kept_new = [i for i in new_ids if i in old_set]
        relative = tuple(n for o, n in zip(kept_old, kept_new) if o != n)
        return SchemaDiff(
            added=tuple(i for i in new_ids if i not in old_set),
            dropped=tuple(i for i in old_ids if i not in new_set),
            renamed=renamed,
            moved=tuple(moved),
            reordered=relative,
            type_changed=type_changed,
            pk_changed=tuple(pk_changed),
        )

    def add_column(
        self, name: str, data_type: str, *, position: int | None = None, id: str | None = None, **extra: Any
    ) -> "Schema":
        """A new schema with a (non-pk) column added at ``position`` (default: last)."""
        col = Column.create(name, data_type, id=id, **extra)
        cols = list(self._columns)
        cols.insert(len(cols) if position is None else position, col)
        return Schema(cols)

    def drop_column(self, name: str) -> "Schema":
        """A new schema without column ``name`` (primary-key columns cannot be dropped)."""
        col = self.by_name(name)
        if col.is_pk:
            raise SchemaError("cannot drop a primary-key column", column=name)
        return Schema(c for c in self._columns if c.id != col.id)

    def rename_column(self, name: str, new_name: str) -> "Schema":
        """A new schema with column ``name`` renamed (its id kept)."""
        col = self.by_name(name)
        return Schema(c.replace(name=new_name) if c.id == col.id else c for c in self._columns)

    def move_column(self, name: str, position: int) -> "Schema":
        """A new schema with column ``name`` moved to ``position``."""
        col = self.by_name(name)
        cols = [c for c in self._columns if c.id != col.id]
        cols.insert(position, col)
        return Schema(cols)

    def change_type(self, name: str, data_type: str, **extra: Any) -> "Schema":
        """A new schema with column ``name`` given a new type and extra type info (its id
        and primary-key role kept)."""
        col = self.by_name(name)
        new = col.replace(data_type=data_type, extra=tuple(_canonical_extra(data_type, extra)))
        new.check(strict=True)
        return Schema(new if c.id == col.id else c for c in self._columns)
