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

Clients add parameters the protocol does not define to name the result format:
SPARQLWrapper sends ``format=``, ``output=`` and ``results=`` (each, sometimes twice),
Fuseki and Virtuoso read them. They are tolerated: they choose the format when ``Accept``
does not decide it, must agree with each other (400), and must name a format ``Accept``
admits (406).
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Sequence
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
from nstore.terms import IRI
from query.updates import Load, Modify, UpdateRequest
from query.versioning import VersionContext

__all__ = ["Operation", "ProtocolError", "MethodNotAllowedError", "ALLOWED_METHODS", "read_operation", "run_operation", "answer", "negotiate", "RESULT_TYPES", "GRAPH_TYPES",
           "FORMAT_PARAMETERS", "ranked_media", "params_of"]

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
# Parameters clients send to choose the result format (Fuseki's output= and results=,
# Virtuoso's format=); SPARQLWrapper sends all three.
FORMAT_PARAMETERS = ("format", "output", "results")
# Each short name as (the SELECT/ASK format, the CONSTRUCT/DESCRIBE format) it names; None:
# not served for that form. "xml" is RDF/XML for a graph, "json" JSON-LD, as on Fuseki.
_HINT_NAMES: dict[str, tuple[str | None, str | None]] = {
    "json": ("json", "jsonld"), "srj": ("json", None), "xml": ("xml", "rdf"), "srx": ("xml", None),
    "csv": ("csv", None), "tsv": ("tsv", None), "turtle": (None, "turtle"), "ttl": (None, "turtle"),
    "n3": (None, "turtle"), "rdf": (None, "rdf"), "rdf+xml": (None, "rdf"), "rdfxml": (None, "rdf"),
    "json-ld": (None, "jsonld"), "jsonld": (None, "jsonld"), "ntriples": (None, "ntriples"),
    "n-triples": (None, "ntriples"), "nt": (None, "ntriples"), "nquads": (None, "nquads"),
    "n-quads": (None, "nquads"), "nq": (None, "nquads"), "trig": (None, "trig"),
}


ALLOWED_METHODS = ("GET", "HEAD", "POST")
"""The methods ``/sparql`` takes (HEAD: a GET without the body)."""


class ProtocolError(DataeError):
    """A request the protocol does not allow; ``status`` is the HTTP status to answer and
    ``headers`` any headers the answer must carry."""

    def __init__(self, message: str, status: int = 400, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers


class MethodNotAllowedError(ProtocolError):
    """A method ``/sparql`` does not take for this request: 405 with the ``Allow`` header
    RFC 9110 asks for.

    >>> MethodNotAllowedError("no").headers
    {'Allow': 'GET, HEAD, POST'}
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, 405, {"Allow": ", ".join(ALLOWED_METHODS)})


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
    formats: tuple[str, ...] = ()  # the values of format=, output=, results= (see negotiate)
    base: str | None = None


def read_operation(method: str, query_string: str, content_type: str | None, body: bytes,
                   headers: dict[str, str], base: str | None = None) -> Operation:
    """The operation an HTTP request carries (ProtocolError when it breaks the protocol);
    ``base`` resolves its relative IRIs (the endpoint's URL, as the protocol suggests)."""
    params = _params(query_string, "the URL")
    media, charset = _media_type(content_type)
    if method in ("GET", "HEAD"):
        if "update" in params:
            raise MethodNotAllowedError(f"an update must be sent by POST, not {method}")
        kind = "query"
    elif method != "POST":
        raise MethodNotAllowedError(f"the SPARQL protocol uses GET or POST, not {method}")
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
                     _one(params, "author") or headers.get("x-datae-author"),
                     tuple(value for name in FORMAT_PARAMETERS for value in params.get(name, ())), base)


def params_of(query_string: str) -> dict[str, list[str]]:
    """The parameters of a URL's query string, each with its values in order."""
    return _params(query_string, "the URL")


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


def negotiate(accept: str | None, form: str, hints: Sequence[str] = ()) -> tuple[str, str]:
    """``(format, media type)`` for a result of query ``form`` by the ``Accept`` header
    and the format parameters clients add (``hints``: the values of ``format=``,
    ``output=``, ``results=``); ProtocolError 406 if none is served, 400 if the hints
    disagree.

    >>> negotiate("application/rdf+xml", "CONSTRUCT", ["xml", "xml", "xml"])
    ('rdf', 'application/rdf+xml')
    """
    table = GRAPH_TYPES if form in ("CONSTRUCT", "DESCRIBE") else RESULT_TYPES
    hinted = _hinted_format(hints, form, table)
    ranked = ranked_media(accept)
    if hinted is not None:
        if accept is None or not accept.strip() or any(_admits(media, hinted, table) for media in ranked):
            return hinted, _MEDIA[hinted]
        raise ProtocolError(f"the format parameter asks for {_MEDIA[hinted]}, which Accept: {accept} does not "
                            f"admit for {form}", 406)
    default = "turtle" if table is GRAPH_TYPES else "json"
    for media in ranked:
        if media in table:
            return table[media], media
        if media in ("*/*", "application/*", "text/*"):
            return default, _MEDIA[default]
    raise ProtocolError(f"none of the media types in Accept: {accept} is served for {form}", 406)


def ranked_media(accept: str | None) -> list[str]:
    """The media types of an Accept header with a quality above 0, best first (ties in
    the order given).

    >>> ranked_media("text/csv;q=0.5, application/json, text/html;q=0")
    ['application/json', 'text/csv']
    """
    ranked = []
    for position, item in enumerate((accept or "*/*").split(",")):
        media, _, rest = item.strip().partition(";")
        quality = 1.0
        for parameter in rest.split(";"):
            name, _, value = parameter.strip().partition("=")
            if name.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if quality > 0:
            ranked.append((-quality, position, media.strip().lower()))
    return [media for _, _, media in sorted(ranked)]


def _admits(media: str, fmt: str, table: dict[str, str]) -> bool:
    if media == "*/*" or table.get(media) == fmt:
        return True
    return media.endswith("/*") and _MEDIA[fmt].startswith(media[:-1])


def _hinted_format(hints: Sequence[str], form: str, table: dict[str, str]) -> str | None:
    """The one format the format parameters name for ``form`` (None: they name none).
    A value is a short name (``json``, ``xml``, ``turtle``, ``rdf+xml``...) or media
    types, as SPARQLWrapper sends them (``application/ld+json,application/x-json+ld``)."""
    graph = table is GRAPH_TYPES
    found: dict[str, str] = {}
    for hint in hints:
        value = hint.strip().lower()
        if not value:
            continue  # SPARQLWrapper sends an empty value where Accept would be */*
        if "/" in value:
            fmt = next((table[media] for media in ranked_media(value) if media in table), None)
        else:
            fmt = _HINT_NAMES.get(value, (None, None))[graph]
        if fmt is None:
            served = ", ".join(sorted(name for name, pair in _HINT_NAMES.items() if pair[graph]))
            raise ProtocolError(f"format {hint!r} is not served for {form}; choose one of {served}", 406)
        found.setdefault(fmt, hint)
    if len(found) > 1:
        raise ProtocolError(f"the format parameters disagree: {', '.join(map(repr, found.values()))}")
    return next(iter(found), None)


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


def answer(repo: fstore.Repository, operation: Operation, limits: Limits,
           accept: str | None) -> UpdateResult | tuple[bytes, str]:
    """:func:`run_operation`, and a query's result written in the format ``accept`` and
    the request's hints choose (:func:`negotiate`): ``(body, media type)``. One call, so a
    server hands a request to a worker thread once."""
    outcome = run_operation(repo, operation, limits)
    if isinstance(outcome, UpdateResult):
        return outcome
    fmt, media = negotiate(accept, outcome.form, operation.formats)
    return outcome.serialize(fmt), media


class _Views:
    """The views of the last few commits queried, kept so that the planner's estimates
    (kept per view, :mod:`fstore.query_source`) serve every later query of the same commit: a
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
