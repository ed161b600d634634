"""Query texts that differ only in their constants share one parse.

An application sends the same few queries with different values in them (a product IRI,
a price, a date: the BSBM explore mix is 11 such templates). Parsing costs more than a
small query's run (lark reads about 11 µs a token), so :class:`ShapeCache` parses each
*shape* once: the text with its absolute IRIs, strings and numbers replaced by sentinel
values (:func:`shape_of`). A later text of the same shape gets the shape's parse with its
own values put in place of the sentinels (:meth:`Template.fill`), which is a walk down
the few paths that lead to a constant.

A shape is trusted only if its parse does not depend on the values: when it is first
seen, the text is also parsed in full, and the template filled with that text's values
must equal the full parse, or the shape is never used (a regex compiled at parse time,
an IRI that names a built-in function, a folded constant: the comparison tells). Places
where a value could change the parse without changing the first text's comparison are
never slots: IRIs in ``PREFIX``/``BASE``, before ``(`` (a function or cast) or after
``^^`` (a datatype), relative IRIs (the base), and numbers after ``LIMIT``/``OFFSET``.
Texts with ``\\u`` escapes are parsed in full (they are decoded before lexing).

>>> from query.parser import _parse_query_text, string_value
>>> parsed = []
>>> cache = ShapeCache(lambda text, base: parsed.append(text) or _parse_query_text(text, base), string_value)
>>> first = cache.parse('SELECT * { ?s <http://ex/p> "a" FILTER(?s != <http://ex/x>) } LIMIT 2', None)
>>> second = 'SELECT * { ?s <http://ex/q> "b" FILTER(?s != <http://ex/y>) } LIMIT 2'
>>> cache.parse(second, None) == _parse_query_text(second, None), len(parsed)
(True, 2)
>>> shape_of('SELECT * { ?s <http://ex/p> 7 }')[1]
[('iri', 'http://ex/p'), ('integer', '7')]
"""

from __future__ import annotations

import dataclasses
import re
import secrets
import threading
from collections import OrderedDict
from typing import Any, Callable

from nstore.terms import IRI, Literal

from .iri import is_absolute

__all__ = ["ShapeCache", "Template", "shape_of", "SHAPES_KEPT"]

SHAPES_KEPT = 256
"""How many shapes a :class:`ShapeCache` keeps (least recently used dropped)."""

# SPARQL 1.1's own terminals (section 19.8), so a text splits here where lark splits it.
_TOKEN = re.compile(
    r"""(?P<space>[\x20\t\r\n]+|\#[^\r\n]*)
    |(?P<string>\"\"\"(?:(?:\"|\"\")?(?:[^\"\\]|\\.))*\"\"\"|'''(?:(?:'|'')?(?:[^'\\]|\\.))*'''
               |\"(?:[^\"\\\n\r]|\\.)*\"|'(?:[^'\\\n\r]|\\.)*')
    |(?P<iri><[^<>\"{}|^`\\\x00-\x20]*>)
    |(?P<double>(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][+-]?[0-9]+)
    |(?P<decimal>[0-9]*\.[0-9]+)
    |(?P<integer>[0-9]+)
    |(?P<word>[^\x00-\x20<>\"'{}()\[\],;.=!&|*/+\-^@\#0-9][^\x00-\x20<>\"'{}()\[\],;=!&|*/+^@\#]*)
    |(?P<other>.)""",
    re.X | re.S,
)
_LEAVES = frozenset({IRI, Literal, str, int, float, bool, type(None)})
_NUMBERS = ("integer", "decimal", "double")
_FIXED_NUMBER_AFTER = frozenset({"LIMIT", "OFFSET"})
_FIXED_IRI_AFTER = frozenset({"BASE", "PREFIX"})

_NONCE = secrets.token_hex(6)
_DIGITS = str(int(_NONCE, 16) % 10**12).zfill(12)


def _sentinel(kind: str, number: int) -> str:
    """The text of slot ``number``'s sentinel: a value of the kind no query holds."""
    if kind == "iri":
        return f"<urn:x-datae-slot:{_NONCE}:{number}>"
    if kind == "string":
        return f'"x-datae-slot:{_NONCE}:{number}"'
    if kind == "integer":
        return f"9{_DIGITS}{number:04d}"
    if kind == "decimal":
        return f"9{_DIGITS}{number:04d}.5"
    return f"9{_DIGITS}{number:04d}e0"


def _sentinel_value(kind: str, number: int) -> str:
    """What the parse makes of a sentinel: the IRI or the lexical form (a string's
    lexical form is also what a bare string, a GROUP_CONCAT separator, becomes)."""
    text = _sentinel(kind, number)
    return text[1:-1] if kind in ("iri", "string") else text


def shape_of(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The shape of a query text (its sentinel text) and its slots' ``(kind, text)``: the
    IRI without its brackets, the string with its quotes, the number as written.
    A text with nothing to take out has no slots."""
    parts: list[str] = []
    slots: list[tuple[str, str]] = []
    tokens = [(m.lastgroup, m.group()) for m in _TOKEN.finditer(text)]
    previous = ""  # the last token that was not space, upper-cased
    for at, (kind, token) in enumerate(tokens):
        slot = None
        if kind in _NUMBERS and previous not in _FIXED_NUMBER_AFTER:
            slot = kind
        elif kind == "string":
            slot = kind
        elif kind == "iri" and previous not in _FIXED_IRI_AFTER and not previous.endswith(":") \
                and previous != "^" and _next_solid(tokens, at) != "(" and is_absolute(token[1:-1]):
            slot = kind
        if slot is None:
            parts.append(token)
        else:
            parts.append(_sentinel(slot, len(slots)))
            slots.append((slot, token[1:-1] if slot == "iri" else token))
        if kind != "space":
            previous = token.upper()
    return "".join(parts), slots


def _next_solid(tokens: list[tuple[str | None, str]], at: int) -> str:
    for kind, token in tokens[at + 1:]:
        if kind != "space":
            return token
    return ""


class _Rejected:
    """The mark of a shape whose parse depends on its values."""


_REJECTED = _Rejected()


class Template:
    """A shape's parse, with the sentinels of its slots to replace.

    ``string_of`` turns a string token (quotes included) into its value, as the parser
    does."""

    def __init__(self, parsed: Any, slots: list[tuple[str, str]], string_of: Callable[[str], str]) -> None:
        self.parsed = parsed
        self.kinds = [kind for kind, _ in slots]
        self.string_of = string_of
        self.iris: dict[str, int] = {}
        self.lexicals: dict[str, int] = {}  # sentinel lexical form -> slot
        for number, kind in enumerate(self.kinds):
            (self.iris if kind == "iri" else self.lexicals)[_sentinel_value(kind, number)] = number
        self.hot: set[int] = set()  # ids of the nodes that are or hold a sentinel
        self._mark(parsed, {})

    def fill(self, slots: list[tuple[str, str]]) -> Any:
        """The parse of the text whose slots are ``slots`` (of this shape)."""
        values = [token if kind != "string" else self.string_of(token) for kind, token in slots]
        return self._put(self.parsed, values)

    # -- the walk ------------------------------------------------------------------------

    def _leaf(self, node: Any, values: list[str] | None) -> Any:
        """``node`` with a slot's value in place of its sentinel (the node itself when it
        holds none); with ``values`` None, whether it holds one."""
        kind = type(node)
        if kind is IRI:
            number = self.iris.get(node.value)
            if number is None:
                return None if values is None else node
            return True if values is None else IRI(values[number])
        if kind is Literal:
            lexical = node.lexical
            sign = lexical[:1] if lexical[:1] in ("-", "+") else ""
            number = self.lexicals.get(lexical[len(sign):])
            if number is None or (sign and self.kinds[number] not in _NUMBERS):
                return None if values is None else node
            return True if values is None else Literal(sign + values[number], node.datatype, node.lang)
        if kind is str:
            number = self.lexicals.get(node)
            if number is None:
                return None if values is None else node
            return True if values is None else values[number]
        return None if values is None else node

    def _mark(self, node: Any, seen: dict[int, bool]) -> bool:
        found = seen.get(id(node))
        if found is not None:
            return found
        children = _children(node)
        if children is None:
            found = bool(self._leaf(node, None))
        else:
            found = False
            for child in children:
                found = self._mark(child, seen) or found
        seen[id(node)] = found
        if found:
            self.hot.add(id(node))
        return found

    def _put(self, node: Any, values: list[str]) -> Any:
        if id(node) not in self.hot:
            return node
        kind = type(node)
        if kind in _LEAVES:
            return self._leaf(node, values)
        if kind is tuple or kind is list:
            return kind(self._put(item, values) for item in node)
        if kind is dict:
            return {self._put(k, values): self._put(v, values) for k, v in node.items()}
        if kind is frozenset or kind is set:
            return kind(self._put(item, values) for item in node)
        changes = {f.name: self._put(getattr(node, f.name), values) for f in dataclasses.fields(node) if f.init}
        return dataclasses.replace(node, **changes)


def _children(node: Any) -> Any:
    """The parts of a container of the parse (None for a leaf)."""
    kind = type(node)
    if kind in _LEAVES:
        return None
    if kind is tuple or kind is list or kind is frozenset or kind is set:
        return node
    if kind is dict:
        return [*node.keys(), *node.values()]
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return [getattr(node, f.name) for f in dataclasses.fields(node) if f.init]
    return None


class ShapeCache:
    """Parses through shapes: ``parse(text, base)`` gives what ``parse_text(text, base)``
    would, parsing once per shape (see the module's docstring). ``string_of`` gives a
    string token's value as the parser reads it."""

    def __init__(self, parse_text: Callable[[str, str | None], Any], string_of: Callable[[str], str],
                 size: int = SHAPES_KEPT) -> None:
        self.parse_text = parse_text
        self.string_of = string_of
        self.size = size
        self.shapes: OrderedDict[tuple[str, str | None], Any] = OrderedDict()
        self._lock = threading.Lock()  # a server parses in several threads

    def parse(self, text: str, base: str | None) -> Any:
        if "\\u" in text or "\\U" in text:
            return self.parse_text(text, base)
        shape, slots = shape_of(text)
        if not slots:
            return self.parse_text(text, base)
        key = (shape, base)
        with self._lock:
            found = self.shapes.get(key)
            if found is not None:
                self.shapes.move_to_end(key)
        if found is None:
            parsed = self.parse_text(text, base)  # errors are the full parse's
            self._keep(key, self._learn(shape, base, slots, parsed))
            return parsed
        if found is _REJECTED:
            return self.parse_text(text, base)
        try:
            return found.fill(slots)
        except ValueError:  # a value the term model refuses: the full parse names it
            return self.parse_text(text, base)

    def _learn(self, shape: str, base: str | None, slots: list[tuple[str, str]], parsed: Any) -> Any:
        """The shape's template if filling it with ``slots`` gives ``parsed``."""
        try:
            template = Template(self.parse_text(shape, base), slots, self.string_of)
            if template.fill(slots) == parsed:
                return template
        except Exception:  # noqa: BLE001 - a sentinel the parse refuses: the shape is not one
            pass
        return _REJECTED

    def _keep(self, key: tuple[str, str | None], entry: Any) -> None:
        with self._lock:
            self.shapes[key] = entry
            if len(self.shapes) > self.size:
                self.shapes.popitem(last=False)
