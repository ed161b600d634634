"""CSV in and out of tables.

Import reads a header line and one row per record. Column types come from a given schema
(``schema.json`` columns), from ``types`` (``{column: dataType}``), from the existing table,
or are inferred from the values (:func:`~.ingest.infer_text_type`). An empty field is
NULL. Texts parse per type: integer and float as numbers, boolean as ``true``/``false``
(any case, or ``1``/``0``), blob as hex, geometry as WKT or hex WKB, the others (date,
time, timestamp, interval, numeric, text) as Kart stores them, json as JSON text (``null``
is a JSON null, read as NULL). Any bad record — too few or
too many fields, a value that does not parse or fit — raises
:class:`~.errors.TableImportError` naming the file, line and column, before anything is
staged. Export writes the same conventions back (geometry as WKT), rows in feature-path
order (as :meth:`Table.rows` streams them).

>>> import tempfile, os, fstore
>>> d = tempfile.mkdtemp(); path = os.path.join(d, "towns.csv")
>>> _ = open(path, "w").write("fid,name,founded\\n1,Ōtaki,1840-01-01\\n2,Levin,\\n")
>>> repo = fstore.open(os.path.join(d, "repo"))
>>> with repo.transaction("main", message="import") as tx:
...     import_csv(tx, "towns", path, pk="fid")
{'inserted': 2, 'updated': 0, 'deleted': 0, 'unchanged': 0}
>>> t = repo.at("main").table("towns")
>>> [c.data_type for c in t.schema], t.get(1)["founded"]
(['integer', 'text', 'date'], datetime.date(1840, 1, 1))
>>> export_csv(t, os.path.join(d, "out.csv")); sorted(open(os.path.join(d, "out.csv")).read().splitlines())
2
['1,Ōtaki,1840-01-01', '2,Levin,', 'fid,name,founded']
>>> repo.close()
"""

from __future__ import annotations

import codecs
import csv
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import islice
from typing import IO, TYPE_CHECKING, Any

from ..files import GZIP_DAMAGE, open_input, open_output
from ..progress import Progress, counted
from . import _columns
from .errors import ColumnValueError, GeometryError, SchemaError, TableImportError, TableNotFoundError
from .geometry import Geometry
from .ingest import ColumnSpec, TextTypeGuess, evolve_schema, make_schema
from .schema import Column, Schema
from .store import as_schema, column_checks, load_table, open_table
from .types import column_encoder

if TYPE_CHECKING:
    from ..transaction import Transaction

__all__ = ["import_csv", "infer_key", "read_csv", "export_csv", "parse_text", "text_parser", "format_stored"]


def _csv_reader(f: IO[str], dialect: Any) -> Any:
    """A ``csv.reader`` that takes fields of any length: a field can be as large as its
    file, while the csv module refuses fields over 128 KiB by default."""
    _allow_long_fields()
    return csv.reader(f, dialect)


def _allow_long_fields() -> None:
    # The limit is process-wide state of the csv module: it is only ever raised, as
    # lowering it back would break another reader that is midway through its file.
    if csv.field_size_limit() < _FIELD_LIMIT:
        csv.field_size_limit(_FIELD_LIMIT)


# The largest limit the csv module accepts (a C long: 2**63 - 1, or 2**31 - 1 on Windows).
_FIELD_LIMIT = min(sys.maxsize, 2**31 - 1) if sys.platform == "win32" else sys.maxsize


def _boolean(text: str) -> bool:
    low = text.strip().lower()
    if low not in ("true", "1", "false", "0"):
        raise ValueError(text)
    return low in ("true", "1")


def text_parser(col: Column) -> Callable[[str], Any]:
    """A function from a CSV field to the stored value for ``col`` (``""`` is None);
    it raises :class:`ColumnValueError`. Made once a column, as an import calls it once
    a cell."""
    t = col.data_type
    encode = column_encoder(col)
    convert: Callable[[str], Any] | None = {"integer": int, "float": float, "blob": bytes.fromhex,
                                            "json": json.loads, "boolean": _boolean}.get(t)

    def parse(text: str) -> Any:
        if text == "":
            return None
        if convert is None:
            return encode(text)
        try:
            value = convert(text)
        except ValueError:
            raise ColumnValueError(col.name, text, f"is not a valid {t}") from None
        return encode(value)

    return parse


def parse_text(col: Column, text: str) -> Any:
    """A CSV field as a value for ``col`` (``""`` is None); raises ColumnValueError."""
    return text_parser(col)(text)


def format_stored(col: Any, value: Any) -> str:
    """A stored value as a CSV field (None is ``""``; a json value, or any dict or list,
    as compact JSON text)."""
    if value is None:
        return ""
    if isinstance(value, (dict, list)) or getattr(col, "data_type", None) == "json":
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Geometry):
        try:
            return value.to_wkt()
        except GeometryError:
            return bytes(value).hex()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return str(value)


def read_csv(path: str | os.PathLike[str], columns: Sequence[Column] | None = None, *,
             types: Mapping[str, str] | None = None, encoding: str = "utf-8-sig",
             dialect: str | type[csv.Dialect] = "excel") -> tuple[list[ColumnSpec], list[Column] | None, Iterator[tuple[int, dict[str, Any]]]]:
    """``(column specs, header, records)``: the specs give each column's type (from
    ``columns`` by name, ``types``, or inferred with a first pass over the file);
    ``records`` yields ``(line, row of parsed values)``. Errors name file, line, column."""
    source = os.fspath(path)
    known = {c.name: c for c in (columns or [])}
    types = dict(types or {})
    with open_input(source, encoding=encoding) as f, _reading(source, encoding):
        reader = _csv_reader(f, dialect)
        try:
            header = next(reader)
        except StopIteration:
            raise TableImportError(source, "is empty: a CSV file needs a header line", line=1) from None
        _check_header(source, header)
        need = [h for h in header if h not in known and h not in types]
        guesses = {h: TextTypeGuess() for h in need}
        if need:
            index = [header.index(h) for h in need]
            kept = [guesses[h] for h in need]
            batch: list[list[str]] = []
            for record in reader:
                if len(record) != len(header):
                    raise _width(source, reader.line_num, record, header)
                batch.append(record)
                if len(batch) == _PARSE_BATCH:
                    _guess(batch, index, kept)
                    batch = []
            _guess(batch, index, kept)
    specs: list[ColumnSpec] = []
    for h in header:
        if h in known:
            c = known[h]
            specs.append((h, c.data_type, dict(c.extra_type_info)))
        elif h in types:
            specs.append((h, types[h], {"size": 64} if types[h] in ("integer", "float") else {}))
        else:
            specs.append((h, *guesses[h].result()))
    return specs, header, _records(source, header, encoding, dialect)


def _check_header(source: str, header: list[str]) -> None:
    seen = set()
    for i, h in enumerate(header):
        if not h:
            raise TableImportError(source, f"header field {i + 1} is empty: every column needs a name", line=1)
        if h in seen:
            raise TableImportError(source, f"column {h!r} appears twice in the header", line=1, column=h)
        seen.add(h)


def _width(source: str, line: int, record: list[str], header: list[str]) -> TableImportError:
    return TableImportError(source, f"has {len(record)} field(s), but the header has {len(header)}", line=line)


@contextmanager
def _reading(source: str, encoding: str) -> Iterator[None]:
    """Turn a decoding failure while reading ``source`` into a :class:`TableImportError`
    naming the line and byte offset of the first undecodable byte. The text reader
    decodes in chunks, so its error knows neither: the file is read again, as bytes, to
    find them (only on this error path: reading stays as fast as before). A damaged
    ``.gz`` file is one too."""
    try:
        yield
    except UnicodeDecodeError as e:
        line, offset, byte = _first_undecodable(source, encoding)
        raise TableImportError(source, f"byte 0x{byte:02x} at byte offset {offset} is not {e.encoding} "
                               f"({e.reason}): save the file as {encoding.removesuffix('-sig').upper()}",
                               line=line) from None
    except GZIP_DAMAGE as e:
        raise TableImportError(source, f"is not a whole gzip file ({e})") from None


def _first_undecodable(source: str, encoding: str) -> tuple[int, int, int]:
    """``(line, byte offset, byte)`` of the first byte of ``source`` that ``encoding``
    cannot decode (in a ``.gz`` file: of its content). Line by line: no ASCII-compatible
    encoding's character spans a newline."""
    decoder = codecs.getincrementaldecoder(encoding)()
    offset = 0
    with open_input(source) as f:
        for line, raw in enumerate(f, 1):
            try:
                decoder.decode(raw)
            except UnicodeDecodeError as e:
                return line, offset + e.start, raw[e.start]
            offset += len(raw)
        try:
            decoder.decode(b"", True)
        except UnicodeDecodeError as e:  # cut off inside a character at the end of the file
            return line, offset - len(e.object) + e.start, e.object[e.start]
    return line, offset, 0  # (not reached: the text reader failed on these same bytes)


def _records(source: str, header: list[str], encoding: str, dialect: Any) -> Iterator[tuple[int, list[str]]]:
    with open_input(source, encoding=encoding) as f, _reading(source, encoding):
        reader = _csv_reader(f, dialect)
        next(reader, None)
        for record in reader:
            if len(record) != len(header):
                if not record:  # a blank line
                    continue
                raise _width(source, reader.line_num, record, header)
            yield reader.line_num, record


def _parse(source: str, columns: list[Column], records: Iterator[tuple[int, list[str]]], lines: list[int]) -> Iterator[dict[str, Any]]:
    parsers = [(col.name, text_parser(col)) for col in columns]
    plan = _field_plan(columns, [parse for _, parse in parsers])
    while batch := list(islice(records, _PARSE_BATCH)):
        # In C a batch at a time (_columns.parse_fields); a record it leaves is parsed
        # here, which names the field it refuses.
        fast = _columns.parse_fields([record for _, record in batch], *plan) if COMPILED else [None] * len(batch)
        for (line, record), row in zip(batch, fast):
            if row is None:
                try:
                    row = {name: parse(text) for (name, parse), text in zip(parsers, record)}
                except ColumnValueError as e:
                    text = record[[name for name, _ in parsers].index(e.column)]
                    raise TableImportError(source, f"value {text!r} {e.reason}", line=line, column=e.column,
                                           value=text) from None
            lines.append(line)
            yield row


def _guess(records: list[list[str]], index: list[int], guesses: list[TextTypeGuess]) -> None:
    """Add the fields at ``index`` of each record to their column's guess (in C a batch at
    a time, :func:`._columns.guess_fields`, as ``add`` guesses)."""
    if COMPILED:
        _columns.guess_fields(records, index, guesses)
        return
    for record in records:
        for guess, i in zip(guesses, index):
            guess.add(record[i])


_PARSE_BATCH = 4096
COMPILED = True
"""Whether CSV fields are parsed in C (tests turn it off for the reference)."""


def _field_plan(columns: list[Column], parsers: list[Callable[[str], Any]]) -> tuple:
    """The arguments after the records of :func:`._columns.parse_fields`: each column's
    name, how its fields are read, its checks and its Python parser."""
    codes = {"text": _columns.TEXT_FIELD, "integer": _columns.INT_FIELD, "float": _columns.FLOAT_FIELD,
             "boolean": _columns.BOOL_FIELD, "date": _columns.DATE_FIELD}
    return [col.name for col in columns], *column_checks(columns, codes, _columns.OTHER_FIELD), parsers


def import_csv(tx: Transaction, name: str, path: str | os.PathLike[str], *, pk: str | Sequence[str] | None = None,
               schema: Any = None, types: Mapping[str, str] | None = None, replace: bool = False,
               title: str | None = None, description: str | None = None, mode: str | None = None,
               progress: Progress | None = None) -> dict[str, int]:
    """Load a CSV file into table ``name`` (created if missing, with primary key ``pk``,
    else the one column whose values are all present and distinct, or the given
    ``schema``; else evolved to the file's columns). ``mode``: ``insert`` (the default),
    ``upsert``, or ``replace`` (``replace=True``): the table ends up holding exactly the
    file's rows. All or nothing; returns counts. ``progress`` hears the rows read
    (:mod:`fstore.progress`, phase ``"read"``)."""
    source = os.fspath(path)
    columns: list[Column] = []
    if schema is not None:
        columns = list(as_schema(schema).columns)
    else:
        try:
            columns = list(open_table(tx, name).schema.columns)
        except TableNotFoundError:
            columns = []
    specs, header, records = read_csv(source, columns, types=types)

    pk_list = [pk] if isinstance(pk, str) else list(pk or [])
    if schema is not None:
        target = as_schema(schema)
        missing = [h for h in header if h not in target]
        if missing:
            raise TableImportError(source, f"column(s) {missing} are not in the given schema", line=1, column=missing[0])
    elif columns:
        target = evolve_schema(name, Schema(columns), specs, drop_missing=replace)
    else:
        pk_list = pk_list or [infer_key(name, source, header)]
        target = make_schema(name, specs, pk_list)
    parse_columns = [target.by_name(h) for h in header]
    lines: list[int] = []
    rows = _parse(source, parse_columns, records, lines)
    if progress is not None:
        rows = counted(rows, "read", progress, None)
    return load_table(tx, name, specs, rows, pk=pk_list, replace=replace, schema=target,
                      where=lambda i: f"{source}, line {lines[i]}", title=title, description=description, mode=mode)


def infer_key(table: str, path: str, header: Sequence[str], *, encoding: str = "utf-8-sig",
              dialect: str | type[csv.Dialect] = "excel") -> str:
    """The primary key of a new table from a CSV file: the one column whose values are
    all present and all distinct. None or several such columns: a :class:`SchemaError`
    that names them and asks for ``--pk`` (one pass over the file)."""
    seen: dict[str, set[str]] = {h: set() for h in header}
    with open_input(path, encoding=encoding) as f, _reading(path, encoding):
        reader = _csv_reader(f, dialect)
        next(reader, None)
        for record in reader:
            for h, value in zip(header, record):
                values = seen.get(h)
                if values is None:
                    continue
                if value == "" or value in values:
                    del seen[h]  # empty or repeated: not a key
                else:
                    values.add(value)
    if len(seen) == 1:
        return next(iter(seen))
    found = f"columns {sorted(seen)} all could be" if seen else "no column has values all present and distinct, so none is"
    raise SchemaError(f"table {table!r} needs a primary key: {found}; name it with --pk (pk= in the API)")


def export_csv(table: Any, dest: str | os.PathLike[str] | IO[str]) -> int:
    """Write a table (``view.table(name)`` or a writer) as CSV to a text stream or a file
    (gzip-compressed when named ``.gz``, whole or not at all: :func:`fstore.files.open_output`);
    returns rows written, in primary-key order (``rows()``: the table's stored rows are
    held to sort them; the file is written as a stream)."""
    if hasattr(dest, "write"):
        return _write_csv(table, dest)
    with open_output(dest, text=True) as stream:
        return _write_csv(table, stream)


def _write_csv(table: Any, stream: IO[str]) -> int:
    columns = table.schema.columns
    writer = csv.writer(stream)
    writer.writerow([c.name for c in columns])
    n = 0
    for row in table.rows(python=False):
        writer.writerow([format_stored(c, row[c.name]) for c in columns])
        n += 1
    return n
