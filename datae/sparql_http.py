"""The SPARQL 1.1 Protocol at ``/sparql``: reading an operation from an HTTP request,
running it on a repository, and choosing the result's media type.

A query comes by ``GET ?query=``, by a form ``POST`` (``query=``) or as the body of a
``POST`` with ``Content-Type: application/sparql-query``; an update by a form ``POST``
(``update=``) or as an ``application/sparql-update`` body, never by GET. Dataset
parameters: ``default-graph-uri`` and ``named-graph-uri`` for a query (they replace its
``FROM`` / ``FROM NAMED``), ``using-graph-uri`` and ``using-named-graph-uri`` for an
update (refused beside ``USING`` or ``WITH`` in the update, as the protocol says). datae's
own parameters: ``ref`` (the branch, tag or commit a query reads, or the branch an update
commits on; default: the store's current branch), ``message`` and ``author`` of an
update's commit (or the headers ``X-Datae-Message`` / ``X-Datae-Author``).
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import fstore
from nstore.errors import DataeError
from query.algebra import Dataset
from query.engine import run_query
from query.limits import Limits, collect
from query.outcomes import UpdateResult
from query.parser import parse_query, parse_update
from query.results import Result
from query.session import Session
from query.source import as_source
from query.terms import IRI
from query.updates import Load, Modify, UpdateRequest
from query.versioning import VersionContext

__all__ = ["Operation", "ProtocolError", "read_operation", "run_operation", "negotiate", "RESULT_TYPES", "GRAPH_TYPES"]

RESULT_TYPES = {
    "application/sparql-results+json": "json", "application/json": "json",
    "application/sparql-results+xml": "xml", "application/xml": "xml", "text/xml": "xml",
    "text/csv": "csv", "text/tab-separated-values": "tsv",
}
GRAPH_TYPES = {
    "text/turtle": "turtle", "application/n-triples": "ntriples", "application/n-quads": "nquads",
    "text/plain": "ntriples", "application/trig": "trig", "application/ld+json": "jsonld",
    "application/rdf+xml": "rdf",
}
_MEDIA = {"json": "application/sparql-results+json", "xml": "application/sparql-results+xml", "csv": "text/csv",
          "tsv": "text/tab-separated-values", "turtle": "text/turtle", "ntriples": "application/n-triples",
          "nquads": "application/n-quads", "trig": "application/trig", "jsonld": "application/ld+json",
          "rdf": "application/rdf+xml"}  # the media type each format is sent as
_FORM = "application/x-www-form-urlencoded"


class ProtocolError(DataeError):
    """A request the protocol does not allow; ``status`` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Operation:
    """One protocol request: a query or an update, its text and parameters."""

    kind: str  # "query" | "update"
    text: str
    default_graphs: tuple[str, ...] = ()
    named_graphs: tuple[str, ...] = ()
    ref: str | None = None
    message: str | None = None
    author: str | None = None
    format: str | None = None
    base: str | None = None


def read_operation(method: str, query_string: str, content_type: str | None, body: bytes,
                   headers: dict[str, str], base: str | None = None) -> Operation:
    """The operation an HTTP request carries (ProtocolError when it breaks the protocol);
    ``base`` resolves its relative IRIs (the endpoint's URL, as the protocol suggests)."""
    params = _params(query_string, "the URL")
    media, charset = _media_type(content_type)
    if method == "GET":
        if "update" in params:
            raise ProtocolError("an update must be sent by POST, not GET", 405)
        kind = "query"
    elif method != "POST":
        raise ProtocolError(f"the SPARQL protocol uses GET or POST, not {method}", 405)
    elif media == _FORM:
        params = {**params, **_params(_utf8(body, charset), "the form")} if body else params
        kinds = [name for name in ("query", "update") if name in params]
        if len(kinds) != 1:
            raise ProtocolError("a form POST carries exactly one of query= or update=")
        kind = kinds[0]
    elif media in ("application/sparql-query", "application/sparql-update"):
        kind = media.rsplit("-", 1)[1]
        if kind in params:
            raise ProtocolError(f"a direct POST carries the {kind} in its body, not in the URL too")
        params = {**params, kind: [_utf8(body, charset)]}
    elif media is None and not body:  # a POST with everything in its URL
        kinds = [name for name in ("query", "update") if name in params]
        if len(kinds) != 1:
            raise ProtocolError("a POST carries exactly one of query= or update=")
        kind = kinds[0]
    elif media is None:
        raise ProtocolError("a POST needs a Content-Type: application/x-www-form-urlencoded, "
                            "application/sparql-query or application/sparql-update")
    else:
        raise ProtocolError(f"Content-Type {media} is not a SPARQL protocol request", 415)
    texts = params.get(kind, [])
    if len(texts) != 1:
        raise ProtocolError(f"exactly one {kind} is expected, not {len(texts)}")
    dataset = ("default-graph-uri", "named-graph-uri") if kind == "query" else ("using-graph-uri", "using-named-graph-uri")
    return Operation(kind, texts[0], tuple(params.get(dataset[0], ())), tuple(params.get(dataset[1], ())),
                     _one(params, "ref"), _one(params, "message") or headers.get("x-datae-message"),
                     _one(params, "author") or headers.get("x-datae-author"), _one(params, "format"), base)


def _params(text: str, where: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    try:
        for name, value in parse_qsl(text, keep_blank_values=True, strict_parsing=False, errors="strict"):
            found.setdefault(name, []).append(value)
    except UnicodeDecodeError:
        raise ProtocolError(f"the parameters in {where} are not UTF-8") from None
    return found


def _media_type(content_type: str | None) -> tuple[str | None, str | None]:
    if not content_type:
        return None, None
    media, _, rest = content_type.partition(";")
    charset = None
    for parameter in rest.split(";"):
        name, _, value = parameter.strip().partition("=")
        if name.lower() == "charset":
            charset = value.strip('"').lower()
    return media.strip().lower(), charset


def _utf8(body: bytes, charset: str | None) -> str:
    if charset not in (None, "utf-8", "utf8"):
        raise ProtocolError(f"the request's charset is {charset}; SPARQL requests are UTF-8")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"the request body is not UTF-8 (byte {exc.start})") from None


def _one(params: dict[str, list[str]], name: str) -> str | None:
    values = params.get(name, [])
    if len(values) > 1:
        raise ProtocolError(f"parameter {name} is given {len(values)} times")
    return values[0] if values else None


def negotiate(accept: str | None, form: str, fmt: str | None = None) -> tuple[str, str]:
    """``(format, media type)`` for a result of query ``form`` by the ``Accept`` header
    (or an explicit ``format`` parameter); ProtocolError 406 if none is served."""
    table = GRAPH_TYPES if form in ("CONSTRUCT", "DESCRIBE") else RESULT_TYPES
    if fmt is not None:
        if fmt not in table.values():
            raise ProtocolError(f"format {fmt!r} is not served for {form}; choose one of "
                                f"{', '.join(sorted(set(table.values())))}", 406)
        return fmt, _MEDIA[fmt]
    default = "turtle" if table is GRAPH_TYPES else "json"
    ranked = []
    for position, item in enumerate((accept or "*/*").split(",")):
        media, _, rest = item.strip().partition(";")
        quality = 1.0
        for parameter in rest.split(";"):
            name, _, value = parameter.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        ranked.append((-quality, position, media.strip().lower()))
    for negative_quality, _, media in sorted(ranked):
        if negative_quality == 0:
            break
        if media in table:
            return table[media], media
        if media in ("*/*", "application/*", "text/*"):
            return default, _MEDIA[default]
    raise ProtocolError(f"none of the media types in Accept: {accept} is served for {form}", 406)


def run_operation(repo: fstore.Repository, operation: Operation, limits: Limits) -> Result | UpdateResult:
    """Run a query under ``limits`` (its rows read), or an update as one commit."""
    if operation.kind == "update":
        request = _with_using(parse_update(operation.text, base=operation.base), operation)
        if any(isinstance(op, Load) for op in request.operations):
            # LOAD reads files of the machine it runs on: never on behalf of an HTTP client.
            raise ProtocolError("LOAD is not served over HTTP: load files with datae import on the server's machine",
                                403)
        session = Session(repo, operation.ref, operation.author or "", limits, message=operation.message)
        branch = session.branch_for(request)
        return session.update(request, operation.text, branch)
    query = parse_query(operation.text, base=operation.base)
    if operation.default_graphs or operation.named_graphs:
        query = dataclasses.replace(query, dataset=Dataset(tuple(map(IRI, operation.default_graphs)),
                                                           tuple(map(IRI, operation.named_graphs))))
    versions = VersionContext(repo, operation.ref)
    deadline = limits.deadline()
    source = as_source(_views.at(versions))
    return collect(run_query(source, query, versions=versions, limits=limits, deadline=deadline), limits, deadline)


class _Views:
    """The views of the last few commits queried, kept so that the planner's estimates
    (kept per view, :mod:`query.source`) serve every later query of the same commit: a
    server answers many queries at one head, and estimating afresh was a third of a
    small query's time. A view is pinned to its commit, so a kept one is never stale."""

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._views: OrderedDict[tuple[int, str | None], Any] = OrderedDict()
        self._lock = threading.Lock()

    def at(self, versions: VersionContext) -> Any:
        key = (id(versions.repo), versions.resolve(None))
        with self._lock:
            view = self._views.get(key)
            if view is not None:
                self._views.move_to_end(key)
                return view
        view = versions.view(None)
        with self._lock:
            self._views[key] = view
            while len(self._views) > self._size:
                self._views.popitem(last=False)
        return view


_views = _Views()


def _with_using(request: UpdateRequest, operation: Operation) -> UpdateRequest:
    """The update with the protocol's ``using-graph-uri`` / ``using-named-graph-uri`` as
    the dataset of each DELETE/INSERT ... WHERE."""
    if not (operation.default_graphs or operation.named_graphs):
        return request
    using = Dataset(tuple(map(IRI, operation.default_graphs)), tuple(map(IRI, operation.named_graphs)))
    operations: list[Any] = []
    for op in request.operations:
        if isinstance(op, Modify):
            if op.using is not None or op.with_graph is not None:
                raise ProtocolError("using-graph-uri / using-named-graph-uri cannot be combined with USING or WITH "
                                    "in the update")
            op = dataclasses.replace(op, using=using)
        operations.append(op)
    return dataclasses.replace(request, operations=tuple(operations))
