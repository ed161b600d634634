"""Query results and their serialisations.

:class:`Result` holds what a query returned: for SELECT the variables (``vars``) and the
solutions (iterate it: dicts from variable name to RDF term, unbound variables absent); for
ASK the boolean ``ask``; for CONSTRUCT / DESCRIBE the ``triples``. ``serialize(format)``
writes the W3C formats:

* ``json`` — SPARQL 1.1 Query Results JSON; ``xml`` — SPARQL Query Results XML;
* ``csv`` / ``tsv`` — SPARQL 1.1 Query Results CSV and TSV;
* for CONSTRUCT and DESCRIBE, any RDF syntax of :data:`fstore.rdf.FORMATS` (via
  pyoxigraph): ``ntriples``/``nt``, ``nquads``/``nq``, ``turtle``/``ttl``, ``trig``,
  ``jsonld``, ``rdf`` (RDF/XML; ``xml`` too);
* ``table`` — a table for people (rich), with IRIs shortened by the query's prefixes.

>>> r = Result("SELECT", ["x"], solutions=[{"x": Literal("a,b")}, {}])
>>> r.serialize("csv")
'x\\r\\n"a,b"\\r\\n\\r\\n'
>>> print(r.serialize("tsv"), end="")
?x
"a,b"
<BLANKLINE>
>>> Result("ASK", ask=True).serialize("json")
'{"head": {}, "boolean": true}'
"""

from __future__ import annotations

import io
import json
import re
from typing import Any, Iterable, Iterator
from xml.sax.saxutils import escape, quoteattr

from fstore.rdf import FORMAT_NAMES, FORMATS as RDF_FORMATS, serialize
from nstore.terms import XSD, BNode, IRI, Literal, term_to_ntriples

__all__ = ["Result", "FORMATS"]

FORMATS = ("json", "xml", "csv", "tsv", "table", "ntriples", "nquads", "turtle", "trig", "jsonld", "rdf")

_TSV_NUMBER = {
    XSD + "integer": re.compile(r"[+-]?[0-9]+\Z"),
    XSD + "decimal": re.compile(r"[+-]?[0-9]*\.[0-9]+\Z"),
    XSD + "double": re.compile(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][+-]?[0-9]+\Z"),
    XSD + "boolean": re.compile(r"(true|false)\Z"),
}


def _csv_field(text: str) -> str:
    """A CSV field (RFC 4180): quoted when it holds a comma, quote or line break."""
    if any(c in text for c in ',"\r\n') or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


def _tsv_term(term: Any) -> str:
    if type(term) is Literal and term.datatype is not None:
        pattern = _TSV_NUMBER.get(term.datatype.value)
        if pattern is not None and pattern.match(term.lexical):
            return term.lexical
    return term_to_ntriples(term)


def _json_term(term: Any) -> dict:
    kind = type(term)
    if kind is IRI:
        return {"type": "uri", "value": term.value}
    if kind is BNode:
        return {"type": "bnode", "value": term.id}
    out: dict = {"type": "literal", "value": term.lexical}
    if term.lang:
        out["xml:lang"] = term.lang
    elif term.datatype is not None:
        out["datatype"] = term.datatype.value
    return out


def _xml_term(term: Any) -> str:
    kind = type(term)
    if kind is IRI:
        return f"<uri>{escape(term.value)}</uri>"
    if kind is BNode:
        return f"<bnode>{escape(term.id)}</bnode>"
    if term.lang:
        return f"<literal xml:lang={quoteattr(term.lang)}>{escape(term.lexical)}</literal>"
    if term.datatype is not None:
        return f"<literal datatype={quoteattr(term.datatype.value)}>{escape(term.lexical)}</literal>"
    return f"<literal>{escape(term.lexical)}</literal>"


class Result:
    """The result of one query (see the module docstring)."""

    def __init__(
        self,
        form: str,
        vars: Iterable[str] = (),
        *,
        solutions: Iterable[dict] | None = None,
        ask: bool | None = None,
        triples: Iterable[tuple] | None = None,
        prefixes: dict | None = None,
    ) -> None:
        self.form = form
        self.vars = list(vars)
        self.ask = ask
        self._source: Iterator[dict] | None = iter(solutions) if solutions is not None else None
        self._rows: list[dict] = []
        self._triples = triples
        self.prefixes = dict(prefixes or {})

    def __repr__(self) -> str:
        if self.form == "ASK":
            return f"Result(ASK {self.ask})"
        return f"Result({self.form} {' '.join('?' + v for v in self.vars)})"

    # ------------------------------------------------------------------ access

    def __iter__(self) -> Iterator[Any]:
        """SELECT: solutions (streamed on first iteration, kept for later ones);
        CONSTRUCT / DESCRIBE: triples."""
        if self.form in ("CONSTRUCT", "DESCRIBE"):
            return iter(self.triples)
        return self._iter_rows()

    def _iter_rows(self) -> Iterator[dict]:
        yield from self._rows
        if self._source is not None:
            for row in self._source:
                self._rows.append(row)
                yield row
            self._source = None

    @property
    def rows(self) -> list[dict]:
        """All solutions, as a list."""
        for _ in self._iter_rows():
            pass
        return self._rows

    @property
    def triples(self) -> list[tuple]:
        """CONSTRUCT / DESCRIBE: the triples ``(s, p, o)`` of the result graph."""
        if self._triples is None:
            return []
        if not isinstance(self._triples, list):
            self._triples = list(self._triples)
        return self._triples

    def __bool__(self) -> bool:
        if self.form == "ASK":
            return bool(self.ask)
        return True

    # ------------------------------------------------------------------ serialisation

    def serialize(self, format: str = "json") -> str:
        """The result as text in ``format`` (one of :data:`FORMATS`)."""
        fmt = format.lower()
        if self.form in ("CONSTRUCT", "DESCRIBE"):
            if fmt == "table":
                return self._table(["subject", "predicate", "object"], [dict(zip(("subject", "predicate", "object"), t)) for t in self.triples])
            return self._graph(fmt)
        if fmt == "json":
            return self._json()
        if fmt == "xml":
            return self._xml()
        if fmt == "csv":
            return self._csv()
        if fmt == "tsv":
            return self._tsv()
        if fmt == "table":
            if self.form == "ASK":
                return "yes" if self.ask else "no"
            return self._table(self.vars, self.rows)
        raise ValueError(f"unknown result format {format!r}; choose one of {', '.join(FORMATS)}")

    def _json(self) -> str:
        if self.form == "ASK":
            return json.dumps({"head": {}, "boolean": bool(self.ask)})
        bindings = [{name: _json_term(value) for name, value in row.items() if name in self.vars} for row in self.rows]
        return json.dumps({"head": {"vars": self.vars}, "results": {"bindings": bindings}}, ensure_ascii=False)

    def _xml(self) -> str:
        out = ['<?xml version="1.0"?>', '<sparql xmlns="http://www.w3.org/2005/sparql-results#">', "  <head>"]
        if self.form == "ASK":
            out += ["  </head>", f"  <boolean>{'true' if self.ask else 'false'}</boolean>", "</sparql>"]
            return "\n".join(out) + "\n"
        out += [f"    <variable name={quoteattr(v)}/>" for v in self.vars]
        out += ["  </head>", "  <results>"]
        for row in self.rows:
            out.append("    <result>")
            for name in self.vars:
                if name in row:
                    out.append(f"      <binding name={quoteattr(name)}>{_xml_term(row[name])}</binding>")
            out.append("    </result>")
        out += ["  </results>", "</sparql>"]
        return "\n".join(out) + "\n"

    def _csv(self) -> str:
        if self.form == "ASK":
            return "_askResult\r\n" + ("true" if self.ask else "false") + "\r\n"
        lines = [",".join(_csv_field(v) for v in self.vars)]
        for row in self.rows:
            cells = []
            for name in self.vars:
                term = row.get(name)
                if term is None:
                    cells.append("")
                elif type(term) is IRI:
                    cells.append(_csv_field(term.value))
                elif type(term) is BNode:
                    cells.append("_:" + term.id)
                else:
                    cells.append(_csv_field(term.lexical))
            lines.append(",".join(cells))
        return "\r\n".join(lines) + "\r\n"

    def _tsv(self) -> str:
        if self.form == "ASK":
            return "?_askResult\n" + ("true" if self.ask else "false") + "\n"
        lines = ["\t".join("?" + v for v in self.vars)]
        for row in self.rows:
            lines.append("\t".join(_tsv_term(row[name]) if name in row else "" for name in self.vars))
        return "\n".join(lines) + "\n"

    def _short(self, term: Any) -> str:
        if type(term) is IRI:
            best = None
            for prefix, namespace in self.prefixes.items():
                if term.value.startswith(namespace) and (best is None or len(namespace) > len(best[1])):
                    local = term.value[len(namespace) :]
                    if re.fullmatch(r"[A-Za-z0-9_\-]*", local):
                        best = (prefix, namespace)
            if best is not None:
                return f"{best[0]}:{term.value[len(best[1]):]}"
        if type(term) is Literal and term.datatype is not None and term.datatype.value in _TSV_NUMBER:
            if _TSV_NUMBER[term.datatype.value].match(term.lexical):
                return term.lexical
        return term_to_ntriples(term)

    def _table(self, columns: list, rows: list) -> str:
        from rich.console import Console
        from rich.table import Table

        table = Table(*columns, show_lines=False)
        for row in rows:
            table.add_row(*["" if row.get(c) is None else self._short(row[c]) for c in columns])
        buffer = io.StringIO()
        console = Console(file=buffer, width=160, color_system=None, force_terminal=False)
        console.print(table)
        count = len(rows)
        console.print(f"{count} {'row' if count == 1 else 'rows'}")
        return buffer.getvalue()

    def _graph(self, fmt: str) -> str:
        if fmt not in RDF_FORMATS:
            raise ValueError(f"a {self.form} result is a graph: choose one of {', '.join(FORMAT_NAMES)}, not {fmt!r}")
        data = serialize(((None, s, p, o) for s, p, o in self.triples), fmt, prefixes=self.prefixes)
        return data.decode("utf-8")
