"""How deep a JSON-LD document nests, checked as it is read, before the parser sees it.

pyoxigraph's JSON-LD parser recurses once per nested object: a document nested a few
thousand objects deep (fewer in a thread with a small stack) overflows the C stack and
kills the whole process (a segfault, exit 139), which no ``try`` can catch. So every
JSON-LD byte passes through :class:`JsonDepthGuard` first, which refuses the document at
the first ``{`` or ``[`` that opens level ``MAX_JSON_DEPTH + 1`` outside a string, with an
:class:`~fstore.rdf_errors.RdfNestingError` naming line and column. Real JSON-LD nests a few levels (a graph,
a node, a value, a list); GeoJSON-LD coordinates five or six.

The Turtle, TriG, N-Triples, N-Quads and RDF/XML parsers of pyoxigraph keep their nesting
on the heap (tests/fstore/test_rdf_nesting.py parses each 100,000 levels deep in a
subprocess), so they need no guard.

The check is one pass in compiled string operations per 256 KiB read (split on quotes,
keep the brackets, strip matched pairs); only a chunk that may pass the limit is walked
byte by byte, to find where.

>>> import io
>>> deep = io.BytesIO(b'{"a":' * 200 + b'1' + b'}' * 200)
>>> JsonDepthGuard(deep, "deep.jsonld").read(10)
Traceback (most recent call last):
...
fstore.rdf_errors.RdfNestingError: deep.jsonld: JSON nested deeper than 128 levels at line 1, column 641: refused before parsing
"""

from __future__ import annotations

import io
from typing import IO, Any, NamedTuple

from .rdf_errors import RdfNestingError

__all__ = ["MAX_JSON_DEPTH", "MAX_XML_DEPTH", "JsonDepthGuard", "limit_xml_depth"]

MAX_JSON_DEPTH = 128
MAX_XML_DEPTH = 256
_CHUNK = 1 << 18

_BRACKETS = b"{}[]"
# One byte per bracket: "(" opens, ")" closes.
_TO_PARENS = bytes.maketrans(_BRACKETS, b"()()")
_NOT_MARKS = bytes(b for b in range(256) if b not in _BRACKETS + b'"')
# Bytes that start a UTF-8 character (not continuation bytes): a column counts characters.
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)
_QUOTE, _BACKSLASH, _NEWLINE = ord('"'), ord("\\"), ord("\n")


class JsonDepthGuard:
    """``stream`` (binary) read through in chunks of 256 KiB, each checked before a byte
    of it is handed on: ``RdfNestingError`` at the first bracket past ``limit``."""

    def __init__(self, stream: IO[bytes], name: str, limit: int = MAX_JSON_DEPTH, *, chunk: int = _CHUNK) -> None:
        self._stream = stream
        self._name = name
        self._limit = limit
        self._chunk = chunk
        self._buffer = io.BytesIO(b"")
        self._depth = 0
        self._in_string = False
        self._escaped = False  # the last chunk ended inside a string on an odd run of backslashes
        self._lines = 0  # newlines in the chunks checked so far
        self._column = 0  # characters after the last of them

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            return b"".join(iter(lambda: self.read(self._chunk), b""))
        data = self._buffer.read(size)
        if data or size == 0:
            return data
        chunk = self._stream.read(self._chunk)
        if not chunk:
            return b""
        self._check(chunk)
        self._buffer = io.BytesIO(chunk)
        return self._buffer.read(size)

    def _check(self, chunk: bytes) -> None:
        start = 1 if self._escaped else 0  # that byte is the escaped one: still in the string
        scan = _scan(chunk[start:], self._in_string, self._limit - self._depth)
        if self._depth + scan.deepest > self._limit:
            self._walk(chunk, start)  # raises if the limit is passed, else sets the state
        else:
            self._depth = max(0, self._depth + scan.opened - scan.closed)
            self._in_string, self._escaped = scan.in_string, scan.escaped
        self._count_lines(chunk)

    def _walk(self, chunk: bytes, start: int) -> None:
        """Byte by byte: where the limit is passed (raise), else the state after ``chunk``."""
        depth, in_string, i, end = self._depth, self._in_string, start, len(chunk)
        while i < end:
            byte = chunk[i]
            if in_string:
                if byte == _BACKSLASH:
                    i += 1
                elif byte == _QUOTE:
                    in_string = False
            elif byte == _QUOTE:
                in_string = True
            elif byte in (0x7B, 0x5B):  # { [
                depth += 1
                if depth > self._limit:
                    self._refuse(chunk, i)
            elif byte in (0x7D, 0x5D):  # } ]
                depth = max(0, depth - 1)
            i += 1
        self._depth, self._in_string, self._escaped = depth, in_string, i > end

    def _refuse(self, chunk: bytes, at: int) -> None:
        before = chunk[:at]
        newline = before.rfind(b"\n")
        line = self._lines + before.count(b"\n") + 1
        column = _characters(before[newline + 1:]) + (self._column if newline < 0 else 0) + 1
        raise RdfNestingError(f"{self._name}: JSON nested deeper than {self._limit} levels at line {line}, column "
                              f"{column}: refused before parsing", line=line, column=column)

    def _count_lines(self, chunk: bytes) -> None:
        newline = chunk.rfind(b"\n")
        self._lines += chunk.count(b"\n")
        self._column = _characters(chunk[newline + 1:]) + (self._column if newline < 0 else 0)


def limit_xml_depth(parser: Any, name: str, limit: int = MAX_XML_DEPTH) -> None:
    """Make an expat ``parser`` raise ``RdfNestingError`` at the first element that opens
    level ``limit + 1``.

    >>> from xml.parsers import expat
    >>> parser = expat.ParserCreate(); limit_xml_depth(parser, "deep.rdf", 2)
    >>> parser.Parse(b"<a>\\n <b><c/></b></a>", True)
    Traceback (most recent call last):
    ...
    fstore.rdf_errors.RdfNestingError: deep.rdf: XML elements nested deeper than 2 levels at line 2, column 5: refused before parsing
    """
    depth = 0

    def start(*_: Any) -> None:
        nonlocal depth
        depth += 1
        if depth > limit:
            line, column = parser.CurrentLineNumber, parser.CurrentColumnNumber + 1
            raise RdfNestingError(f"{name}: XML elements nested deeper than {limit} levels at line {line}, column "
                                  f"{column}: refused before parsing", line=line, column=column)

    def end(_: Any) -> None:
        nonlocal depth
        depth -= 1

    parser.ordered_attributes = True  # lists, not dicts: cheaper, and only the depth is wanted
    parser.StartElementHandler = start
    parser.EndElementHandler = end


class _Scan(NamedTuple):
    opened: int  # brackets opened outside strings
    closed: int  # brackets closed outside strings
    deepest: int  # a bound on the deepest level reached, relative to the start
    in_string: bool  # whether the data ends inside a string,
    escaped: bool  # and there on an unpaired backslash


def _scan(data: bytes, in_string: bool, budget: int) -> _Scan:
    """What ``data`` (starting inside a string or not) does to the nesting, in compiled
    string operations. Matched pairs are stripped innermost first: the passes that takes
    bound the nesting of what they strip, which sits at most as deep as the unmatched
    openers left. Past ``budget`` passes the bound is over the limit already: stop."""
    if b"\\" in data:  # escaped quotes and backslashes are no delimiters (length kept)
        data = data.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    # Only quotes and brackets matter. Dropping two adjacent quotes (an empty string, or
    # the end of one and the start of the next) leaves every bracket inside or outside a
    # string as it was, and leaves few quotes: splitting on them is then cheap.
    marks = data.translate(None, _NOT_MARKS).replace(b'""', b"")
    pieces = marks.split(b'"')
    ends_inside = in_string ^ (len(pieces) % 2 == 0)
    brackets = b"".join(pieces[1 if in_string else 0::2]).translate(_TO_PARENS)
    opened = brackets.count(b"(")
    left, passes = brackets, 0
    while passes <= budget and b"()" in left:
        left = left.replace(b"()", b"")
        passes += 1
    return _Scan(opened, len(brackets) - opened, left.count(b"(") + passes, ends_inside,
                 ends_inside and data.endswith(b"\\"))


def _characters(data: bytes) -> int:
    if data.isascii():
        return len(data)
    return len(data) - len(data.translate(None, _NOT_CONTINUATION))
