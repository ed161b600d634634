"""Three-way merges of tables: rows cell by cell, schemas column by column.

fstore's quad merge finds the ``(graph, subject, predicate)`` groups both sides changed to
different objects. In a dataset graph that is a row both sides rewrote (its feature path),
or ``schema.json`` both sides changed. This module is the graph merger fstore calls for
those (the tables plug-in registers it, :mod:`.plugin`): it compares the rows of the base,
ours and theirs *by column id* through the merged schema, and only reports a conflict when
cells really conflict:

* ``update/update`` — the same cell changed to different values on each side;
* ``delete/update`` / ``update/delete`` — a row deleted on one side, changed on the other;
* ``insert/insert`` — both sides inserted the same primary key with different values;
* :class:`SchemaConflict` — incompatible schema changes (a column renamed or retyped
  differently on each side, dropped on one side and changed on the other, two new columns
  with one name...).

Everything else merges: different cells of one row, compatible schema changes (each side
adding its own column). Policies are those of quad merges: ``"abort"`` raises
:class:`fstore.MergeConflict` listing every conflict; ``"ours"`` / ``"theirs"`` take that
side's value for each conflicting cell (and that side's whole schema for a schema
conflict); a callable gets each :class:`RowConflict` (returns the row to keep as a dict,
or None to delete it) or :class:`SchemaConflict` (returns the schema to keep), and keeps
receiving plain :class:`fstore.Conflict` objects for other quads.

>>> b = Schema.from_dicts([{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0}])
>>> ours, theirs = b.add_column("a", "text", id="a"), b.add_column("t", "text", id="t")
>>> merged, problems = merge_schemas(b, ours, theirs)
>>> merged.column_names, problems
(['k', 'a', 't'], {})
>>> merge_schemas(b, b.add_column("x", "text", id="x1"), b.add_column("x", "integer", id="x2"))[1]
{'x': 'added on both sides as different columns with one name'}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..ops.conflicts import Choose, ConflictItem
from ..ops.three_way import Conflict, GraphResolution, MergeSides, Policy
from .access import legend_finder
from .dataset import DatasetState, RowReader, find_dataset, pk_of_path
from .errors import ColumnValueError, RowValueError, SchemaError, TablesError
from .features import encode_feature, from_python_row
from .geometry import Geometry
from .mapping import FEATURE, META, SCHEMA_ITEM, dataset_name, is_dataset_graph, legend_item
from .packing import pack
from .schema import Column, Schema
from .store import as_schema
from .types import decode_value

__all__ = ["RowConflict", "SchemaConflict", "merge_schemas", "merge_cells", "TableMerger"]


@dataclass(frozen=True, eq=False)
class RowConflict:
    """A row both sides changed incompatibly. ``cells`` maps each conflicting column to
    ``(base, ours, theirs)`` (Python values); ``base`` / ``ours`` / ``theirs`` are the
    whole rows (None where the row does not exist), in the merged schema. ``stored`` is
    ``cells`` as stored (Kart's encoding, a geometry as bytes); ``merged`` the row with
    every cell that does not conflict merged (Python values; None: no row)."""

    table: str
    pk: tuple[Any, ...]
    kind: str
    cells: dict[str, tuple[Any, Any, Any]]
    base: dict[str, Any] | None = None
    ours: dict[str, Any] | None = None
    theirs: dict[str, Any] | None = None
    stored: dict[str, tuple[Any, Any, Any]] = field(default_factory=dict)
    merged: dict[str, Any] | None = None

    @property
    def by_cell(self) -> bool:
        """Settled cell by cell (both sides have the row), rather than as a whole row."""
        return self.kind in ("update/update", "insert/insert")

    def items(self) -> list[ConflictItem]:
        """The items a user settles: each conflicting cell, or the row (deleted on one side,
        changed on the other: each side is None or its changed cells)."""
        if self.by_cell:
            return [ConflictItem("cell", (self.table, self.pk, column), *self.stored[column], self.kind)
                    for column in self.cells]

        def side(index: int, row: dict | None) -> tuple | None:
            return None if row is None else tuple((column, values[index]) for column, values in self.stored.items())

        return [ConflictItem("row", (self.table, self.pk), side(0, self.base), side(1, self.ours),
                             side(2, self.theirs), self.kind)]

    def settle(self, choose: Choose) -> dict[str, Any] | None:
        """The row to keep (None: delete it), as ``choose`` resolves this conflict's items
        (what a callable merge policy returns)."""
        if not self.by_cell:
            resolution = choose(self.items()[0])
            if resolution[0] == "value":
                return None if resolution[1] is None else dict(resolution[1])
            return self.ours if resolution[0] == "ours" else self.theirs
        row = dict(self.merged or {})
        for item in self.items():
            resolution = choose(item)
            base, ours, theirs = self.cells[item.where[2]]
            row[item.where[2]] = {"ours": ours, "theirs": theirs}.get(resolution[0], resolution[-1])
        return row

    def __str__(self) -> str:
        pk = self.pk[0] if len(self.pk) == 1 else self.pk
        cells = ", ".join(f"{name}: base {b!r}, ours {o!r}, theirs {t!r}" for name, (b, o, t) in self.cells.items())
        return f"table {self.table!r}, row {pk!r}: {self.kind}" + (f" ({cells})" if cells else "")


@dataclass(frozen=True, eq=False)
class SchemaConflict:
    """Both sides changed the schema incompatibly. ``columns`` maps each column (by
    name) to what went wrong; the three schemas are None where the table is missing."""

    table: str
    columns: dict[str, str]
    base: Schema | None
    ours: Schema | None
    theirs: Schema | None

    def items(self) -> list[ConflictItem]:
        """The one item a user settles: each side is its ``schema.json`` text."""
        def text(schema: Schema | None) -> str | None:
            return None if schema is None else schema.dumps().decode("utf-8")

        detail = "; ".join(f"column {name!r} {reason}" for name, reason in self.columns.items())
        return [ConflictItem("schema", (self.table,), text(self.base), text(self.ours), text(self.theirs), detail)]

    def settle(self, choose: Choose) -> Schema | str | None:
        """The schema to keep, as ``choose`` resolves this conflict's item."""
        resolution = choose(self.items()[0])
        if resolution[0] == "value":
            return resolution[1]
        return self.ours if resolution[0] == "ours" else self.theirs

    def __str__(self) -> str:
        what = "; ".join(f"column {name!r} {reason}" for name, reason in self.columns.items())
        return f"table {self.table!r}: schema conflict: {what}"


# -- schemas ---------------------------------------------------------------------------


def _fields(col: Column) -> dict[str, Any]:
    return {
        "name": col.name,
        "type": (col.data_type, tuple(sorted(col.extra_type_info.items()))),
        "pk": col.pk_index,
    }


def _column(schema: Schema, cid: str) -> Column | None:
    return schema.by_id(cid) if cid in schema.column_ids else None


def _same_schema(a: Schema | None, b: Schema | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b and [c.id for c in a] == [c.id for c in b]


def _order(base: Schema, ours: Schema, theirs: Schema, ids: set[str]) -> list[str]:
    """Column order of a merged schema: ours gives the skeleton, unless only theirs
    reordered surviving columns; each other column goes before its successor on its
    own side (last if it was last there)."""
    def relative(s: Schema) -> list[str]:
        return [c.id for c in s if c.id in ids and c.id in base]

    base_order = [c.id for c in base if c.id in ids]
    theirs_only = relative(ours) == base_order and relative(theirs) != base_order
    skeleton_side, other_side = (theirs, ours) if theirs_only else (ours, theirs)
    order = [c.id for c in skeleton_side if c.id in ids]
    for side in (other_side, base):
        ids_side = [c.id for c in side]
        for i, cid in enumerate(ids_side):
            if cid in ids and cid not in order:
                after = next((p for p in ids_side[i + 1:] if p in order), None)
                order.insert(len(order) if after is None else order.index(after), cid)
    return order


def merge_schemas(base: Schema | None, ours: Schema | None, theirs: Schema | None) -> tuple[Schema | None, dict[str, str]]:
    """Three-way merge of schemas by column id: ``(merged, problems)``; ``problems`` maps
    column names to what conflicts (empty: the merge is clean). None stands for a table
    that does not exist on that side."""
    if _same_schema(ours, theirs) or _same_schema(theirs, base):
        return ours, {}
    if _same_schema(ours, base):
        return theirs, {}
    if ours is None or theirs is None:
        side = "ours" if ours is None else "theirs"
        return None, {"*": f"table deleted by {side}, its schema changed by the other side"}
    base_s = base if base is not None else Schema([])
    problems: dict[str, str] = {}
    merged: dict[str, Column] = {}
    all_ids = list(dict.fromkeys([c.id for c in ours] + [c.id for c in theirs] + [c.id for c in base_s]))
    for cid in all_ids:
        cb, co, ct = (_column(s, cid) for s in (base_s, ours, theirs))
        label = (co or ct or cb).name
        if co is None and ct is None:
            continue
        if cb is None:
            if co is not None and ct is not None and _fields(co) != _fields(ct):
                problems[label] = "added on both sides with different definitions"
                continue
            merged[cid] = co or ct
            continue
        if co is None or ct is None:
            kept, side = (ct, "theirs") if co is None else (co, "ours")
            if _fields(kept) != _fields(cb):
                problems[label] = f"dropped on one side, changed by {side}"
            continue
        fb, fo, ft = _fields(cb), _fields(co), _fields(ct)
        out = {}
        for key in fb:
            if fo[key] == fb[key]:
                out[key] = ft[key]
            elif ft[key] == fb[key] or fo[key] == ft[key]:
                out[key] = fo[key]
            else:
                what = {"name": "renamed", "type": "retyped", "pk": "given a primary-key index"}[key]
                problems[label] = f"{what} differently on each side ({fo[key]!r} / {ft[key]!r})"
                out[key] = fo[key]
        typed = co if out["type"] == fo["type"] else ct
        merged[cid] = Column(cid, out["name"], typed.data_type, out["pk"], tuple(typed.extra_type_info.items()))
    names: dict[str, str] = {}
    for cid, col in merged.items():
        if col.name in names:
            problems[col.name] = "added on both sides as different columns with one name"
        names[col.name] = cid
    if problems:
        return None, problems
    try:
        return Schema(merged[cid] for cid in _order(base_s, ours, theirs, set(merged))), {}
    except SchemaError as e:
        return None, {"*": str(e)}


# -- rows ------------------------------------------------------------------------------


def merge_cells(base: list[Any] | None, ours: list[Any] | None, theirs: list[Any] | None) -> tuple[list[Any] | None, list[int], str | None]:
    """Three-way merge of one row's cells (stored values in one column order; None for a
    missing row): ``(merged cells, conflicting positions, conflict kind or None)``. Values
    compare by their MessagePack bytes (so ``1``, ``1.0`` and ``True`` differ)."""
    def same(a: Any, b: Any) -> bool:
        return pack(a) == pack(b)

    if ours is None and theirs is None:
        return None, [], None
    if base is None:
        if ours is None or theirs is None:
            return (ours if theirs is None else theirs), [], None
        diff = [i for i, (o, t) in enumerate(zip(ours, theirs)) if not same(o, t)]
        return ours, diff, ("insert/insert" if diff else None)
    if ours is None or theirs is None:
        kept = theirs if ours is None else ours
        changed = [i for i, (b, k) in enumerate(zip(base, kept)) if not same(b, k)]
        if not changed:
            return None, [], None
        return kept, changed, ("delete/update" if ours is None else "update/delete")
    merged, conflicts = [], []
    for i, (b, o, t) in enumerate(zip(base, ours, theirs)):
        if same(o, b):
            merged.append(t)
        elif same(t, b) or same(o, t):
            merged.append(o)
        else:
            merged.append(o)
            conflicts.append(i)
    return merged, conflicts, ("update/update" if conflicts else None)


def _python(col: Column, value: Any) -> Any:
    try:
        return decode_value(col, value)
    except ColumnValueError:
        return value


class TableMerger:
    """The graph merger of dataset graphs (the tables plug-in registers it: :mod:`.plugin`)."""

    def claims(self, graph: Any) -> bool:
        return is_dataset_graph(graph)

    def merge(self, sides: MergeSides, graph: Any, conflicts: list[Conflict], policy: Policy) -> GraphResolution:
        name = dataset_name(graph) or ""
        states: dict[str, DatasetState | None] = {}
        for side in ("base", "ours", "theirs"):
            states[side] = find_dataset(lambda pattern, side=side: sides.match(side, pattern), name)
        resolution = GraphResolution()
        rows, schema_groups = [], []
        for c in conflicts:
            if c.predicate == FEATURE:
                rows.append(c)
            elif c.predicate == META and c.subject == SCHEMA_ITEM:
                schema_groups.append(c)
            else:  # title, description, crs, attachments...: plain quad conflicts
                resolution.unresolved.append(c)
        base, ours, theirs = (states[s].schema if states[s] is not None else None for s in ("base", "ours", "theirs"))

        merged, problems = merge_schemas(base, ours, theirs)
        if problems:
            conflict = SchemaConflict(name, problems, base, ours, theirs)
            resolution.conflicts.append(conflict)
            if policy == "ours":
                merged = ours
            elif policy == "theirs":
                merged = theirs
            elif callable(policy):
                chosen = policy(conflict)
                merged = None if chosen is None else as_schema(chosen)
            else:
                merged = ours if ours is not None else theirs  # to go on finding row conflicts
        graph_legends: dict[str, Any] = {}
        for state in states.values():
            if state is not None:
                graph_legends.update(state.legends)
        if schema_groups and (not problems or policy != "abort"):
            texts = {}
            for side, schema in (("ours", ours), ("theirs", theirs)):
                if schema is not None and _same_schema(schema, merged):
                    texts.setdefault("text", states[side].meta[SCHEMA_ITEM])
            text = texts.get("text") if merged is not None else None
            if merged is not None and text is None:
                text = merged.dumps().decode("utf-8")
            resolution.keep[(graph, SCHEMA_ITEM, META)] = [] if text is None else [text]
        if merged is not None and merged.legend.name not in graph_legends:
            resolution.keep[(graph, legend_item(merged.legend.name), META)] = [merged.legend.dumps()]
            graph_legends[merged.legend.name] = merged.legend
        if rows:
            self._merge_rows(sides, graph, name, rows, merged, graph_legends, policy, resolution)
        return resolution

    def _merge_rows(self, sides: MergeSides, graph: Any, name: str, rows: list[Conflict], schema: Schema | None,
                    legends: Mapping[str, Any], policy: Policy, resolution: GraphResolution) -> None:
        if schema is None:  # the table is gone after the merge: so are its rows
            for c in rows:
                resolution.keep[(graph, c.subject, FEATURE)] = []
            return
        reader = RowReader(schema, legends, legend_finder(sides.snapshot.storage, graph, lambda: sides.tx), name)
        columns = schema.columns
        non_pk = [i for i, c in enumerate(columns) if c.pk_index is None]
        for c in rows:
            path = c.subject
            pk = pk_of_path(path)
            blobs = [objs[0] if objs else None for objs in (c.base, c.ours, c.theirs)]
            cells = [None if blob is None else list(reader.stored(path, blob, pk).values()) for blob in blobs]
            merged, conflicting, kind = merge_cells(*cells)
            if kind is not None:
                def row(values: list[Any] | None) -> dict[str, Any] | None:
                    if values is None:
                        return None
                    return {col.name: _python(col, v) for col, v in zip(columns, values)}

                detail = {
                    columns[i].name: tuple(None if vals is None else _python(columns[i], vals[i]) for vals in cells)
                    for i in conflicting
                }
                stored = {columns[i].name: tuple(None if vals is None else _plain(vals[i]) for vals in cells)
                          for i in conflicting}
                conflict = RowConflict(name, pk, kind, detail, row(cells[0]), row(cells[1]), row(cells[2]), stored,
                                       row(merged))
                resolution.conflicts.append(conflict)
                if policy == "abort":
                    continue
                merged = self._resolve(conflict, policy, cells, merged, conflicting, kind, schema)
            if merged is None:
                keep: list[Any] = []
            elif cells[1] is not None and _same_cells(merged, cells[1]):
                keep = [blobs[1]]
            elif cells[2] is not None and _same_cells(merged, cells[2]):
                keep = [blobs[2]]
            else:
                keep = [encode_feature(schema.legend.name, [merged[i] for i in non_pk])]
            resolution.keep[(graph, path, FEATURE)] = keep

    @staticmethod
    def _resolve(conflict: RowConflict, policy: Policy, cells: list, merged: list | None, conflicting: list[int],
                 kind: str, schema: Schema) -> list[Any] | None:
        if policy in ("ours", "theirs"):
            side = cells[1] if policy == "ours" else cells[2]
            if kind != "update/update" or side is None:
                return side
            out = list(merged or [])
            for i in conflicting:
                out[i] = side[i]
            return out
        assert callable(policy)
        chosen = policy(conflict)
        if chosen is None:
            return None
        if not isinstance(chosen, Mapping):
            raise TablesError(f"a merge policy must return a row (dict) or None for {conflict}, not {chosen!r}")
        try:
            stored = from_python_row(schema, chosen)
        except ColumnValueError as e:
            raise RowValueError(conflict.table, e.column, e.value, e.reason, pk=conflict.pk) from None
        values = [stored[c.name] for c in schema.columns]
        if tuple(stored[c.name] for c in schema.pk_columns) != conflict.pk:
            raise RowValueError(conflict.table, schema.pk_columns[0].name, tuple(stored[c.name] for c in schema.pk_columns),
                                f"is not the primary key of the conflicting row {conflict.pk!r}", pk=conflict.pk)
        return values


def _plain(value: Any) -> Any:
    """A stored cell as plain data (a geometry as its GeoPackage bytes)."""
    return bytes(value) if isinstance(value, Geometry) else value


def _same_cells(a: list[Any], b: list[Any]) -> bool:
    return pack(a) == pack(b)
