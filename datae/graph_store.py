"""The SPARQL 1.1 Graph Store HTTP Protocol at ``/store`` (as Oxigraph serves it).

A request names its graph indirectly: ``?graph=IRI`` for a named graph, ``?default`` for
the default graph, neither for the whole store. Reads (GET, HEAD) take ``ref=`` (branch,
tag or commit; default: the current branch); each write (PUT, POST, DELETE) is one commit
on the branch ``ref=`` names, with ``message=`` / ``author=`` (or the headers
``X-Datae-Message`` / ``X-Datae-Author``). The store holds quads, so a graph exists while
it holds a triple: a graph emptied by a PUT reads as 404, like one never written.

A table's graph (``urn:datae:dataset:NAME``) reads as SPARQL reads it, the W3C Direct
Mapping of its rows, and is never written here (ReadOnlyGraphError, 400, as a SPARQL
update gets): tables change through ``datae table`` or ``fstore.tables``. The whole store
is its quads, without the tables, as SPARQL's default dataset is.

    curl -X PUT -H 'Content-Type: text/turtle' --data-binary @people.ttl \\
         'http://127.0.0.1:8000/store?graph=http://example.org/people'
    curl 'http://127.0.0.1:8000/store?graph=http://example.org/people&ref=v1'
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import IO, Any, Iterator

import fstore
from fstore import Var
from fstore.rdf import parse, serialize
from fstore.tables import is_dataset_graph
from nstore.terms import canonical
from nstore.terms import IRI
from query.algebra import Var as QueryVar
from query.source import as_source
from query.update_exec import writable

from .sparql_http import ProtocolError, ranked_media

__all__ = ["Target", "UnknownGraphError", "target_of", "readable", "read", "write", "delete", "body_format", "output_format", "Written",
           "GRAPH_TYPES_IN", "DATASET_TYPES_IN"]

# What a request body may be (Content-Type -> fstore.rdf format): the triples of one graph,
# or for a POST to the whole store, quads. Never text/plain, which a web page of another
# site may send without the browser asking first (a write must not look like a form).
GRAPH_TYPES_IN = {"text/turtle": "ttl", "application/x-turtle": "ttl", "application/n-triples": "nt",
                  "application/rdf+xml": "rdf", "application/ld+json": "jsonld"}
DATASET_TYPES_IN = {"application/n-quads": "nq", "application/trig": "trig"}
# What a read is sent as (media type -> format), and the media type of each format.
_OUT = {**GRAPH_TYPES_IN, **DATASET_TYPES_IN, "text/plain": "nt"}
_MEDIA = {"ttl": "text/turtle", "nt": "application/n-triples", "rdf": "application/rdf+xml",
          "jsonld": "application/ld+json", "nq": "application/n-quads", "trig": "application/trig"}


class UnknownGraphError(ProtocolError):
    """A read or delete of a graph that holds no triples at that ref."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 404)


@dataclass(frozen=True)
class Target:
    """What a request acts on: one graph (``graph``: an IRI, or None for the default
    graph) or, with ``whole``, every graph."""

    graph: IRI | None = None
    whole: bool = False

    def __str__(self) -> str:
        return "the whole store" if self.whole else "the default graph" if self.graph is None else f"graph <{self.graph.value}>"


def target_of(params: dict[str, list[str]]) -> Target:
    """The target ``?graph=IRI`` or ``?default`` names (neither: the whole store).

    >>> target_of({"graph": ["http://example.org/g"]})
    Target(graph=IRI('http://example.org/g'), whole=False)
    """
    graphs, default = params.get("graph", []), "default" in params
    if len(graphs) > 1 or (graphs and default):
        raise ProtocolError("name one graph: ?graph=IRI or ?default, not both nor twice")
    if default:
        return Target(None)
    if not graphs:
        return Target(whole=True)
    iri = graphs[0]
    if ":" not in iri or any(c in iri for c in "<>\" {}|\\^`") or any(ord(c) <= 0x20 for c in iri):
        raise ProtocolError(f"graph={iri!r} is not an absolute IRI")
    return Target(IRI(iri))


def body_format(content_type: str | None, target: Target) -> str:
    """The fstore.rdf format of a request body (415 for a type this target cannot take)."""
    media = (content_type or "").split(";")[0].strip().lower()
    accepted = {**GRAPH_TYPES_IN, **DATASET_TYPES_IN} if target.whole else GRAPH_TYPES_IN
    if media not in accepted:
        raise ProtocolError(f"Content-Type {media or '(none)'} is not served for {target}; send one of "
                            f"{', '.join(sorted(accepted))}", 415)
    return accepted[media]


def output_format(accept: str | None, target: Target) -> tuple[str, str]:
    """``(fstore.rdf format, media type)`` to send ``target`` as, by ``Accept`` (406 if
    none is served): Turtle for a graph, TriG for the whole store unless asked otherwise.
    N-Triples, Turtle and RDF/XML hold one graph, so the whole store is sent only as
    N-Quads, TriG or JSON-LD."""
    served = DATASET_TYPES_IN | {"application/ld+json": "jsonld"} if target.whole else _OUT
    default = "trig" if target.whole else "ttl"
    for media in ranked_media(accept):
        if media in served:
            return served[media], _MEDIA[served[media]]
        if media in ("*/*", "application/*", "text/*"):
            return default, _MEDIA[default]
    raise ProtocolError(f"none of the media types in Accept: {accept} is served for {target}", 406)


def _quads(readable: Any, target: Target) -> Iterator[tuple]:
    if is_dataset_graph(target.graph):  # a table: the Direct Mapping of its rows, as SPARQL reads it
        pattern = (target.graph, QueryVar("s"), QueryVar("p"), QueryVar("o"))
        return ((target.graph, b["s"], b["p"], canonical(b["o"])) for b in as_source(readable).match(pattern))
    if target.whole:
        return ((b["g"], b["s"], b["p"], b["o"]) for b in fstore.from_(readable, Var("g"), Var("s"), Var("p"), Var("o")))
    return ((target.graph, b["s"], b["p"], b["o"]) for b in fstore.from_(readable, target.graph, Var("s"), Var("p"), Var("o")))


def _exists(readable: Any, target: Target) -> bool:
    if is_dataset_graph(target.graph):
        return any(True for _ in _quads(readable, target))
    return any(True for _ in fstore.from_(readable, target.graph, Var("s"), Var("p"), Var("o"), limit=1))


def _writable(target: Target, verb: str) -> None:
    """ReadOnlyGraphError if ``target`` is a table's graph (SPARQL Update refuses it too)."""
    if not target.whole:
        writable(target.graph, f"graph store {verb}", is_dataset_graph)


def readable(repo: fstore.Repository, target: Target, ref: str | None) -> Any:
    """The view ``read`` reads ``target`` from: the state at ``ref`` (default: the
    current branch). A named graph without triples there is UnknownGraphError (the
    default graph always exists); checked before any byte is sent."""
    ref = ref or repo.current_branch
    view = repo.at(ref)
    if not target.whole and target.graph is not None and not _exists(view, target):
        raise UnknownGraphError(f"{target} holds no triples at {ref}")
    return view


def read(view: Any, target: Target, fmt: str, output: IO[bytes]) -> None:
    """Write ``target`` as it is in ``view`` to ``output`` as ``fmt``, streamed: a graph as
    its triples, the whole store as quads."""
    quads = _quads(view, target)
    if not target.whole:
        quads = ((None, s, p, o) for _, s, p, o in quads)  # a graph is sent as triples
    serialize(quads, fmt, output)


@dataclass(frozen=True)
class Written:
    """What a write did: whether it created the graph, the commit (None: nothing changed)
    and the graph it wrote (a new one for a POST to the whole store)."""

    created: bool
    commit: str | None
    target: Target


def _branch(repo: fstore.Repository, ref: str | None) -> str:
    branch = ref or repo.current_branch
    if branch not in repo.branches():
        raise ProtocolError(f"ref={branch!r} is not a branch: a write commits on a branch", 400)
    return branch


def write(repo: fstore.Repository, target: Target, body: bytes, fmt: str, *, replace: bool, ref: str | None,
          base: str, message: str | None, author: str) -> Written:
    """PUT (``replace``) or POST ``body`` into ``target`` as one commit. A POST to the
    whole store with a triples body makes a new graph (named under ``base``); with a
    quads body it adds the quads as they are. The body is parsed whole before anything
    changes, so a syntax error leaves the store as it was."""
    if target.whole and replace:
        raise ProtocolError("PUT replaces one graph: name it with ?graph=IRI or ?default")
    if target.whole and fmt not in DATASET_TYPES_IN.values():
        target = Target(IRI(f"{base.rstrip('/')}/graphs/{uuid.uuid4().hex}"))
    verb = "PUT" if replace else "POST"
    _writable(target, verb)
    branch = _branch(repo, ref)
    given = list(parse(body, fmt, base_iri=base if target.whole or target.graph is None else target.graph.value,
                       **({} if target.whole else {"graph": target.graph})))
    for quad in given if target.whole else ():  # every quad's graph, before anything is written
        writable(quad[0], f"graph store {verb}", is_dataset_graph)
    with repo.transaction(branch, message=message or f"{verb} {target} (graph store protocol)", author=author) as tx:
        existed = target.whole or _exists(tx, target)
        if replace:
            fstore.rm_many(tx, list(_quads(tx, target)))
        fstore.add_many(tx, given)
    return Written(not existed and bool(given), tx.commit_id, target)


def delete(repo: fstore.Repository, target: Target, *, ref: str | None, message: str | None, author: str) -> str | None:
    """Remove every triple of ``target`` as one commit; a named graph without triples is
    UnknownGraphError. Returns the commit id (None: nothing changed)."""
    if target.whole:
        raise ProtocolError("DELETE removes one graph: name it with ?graph=IRI or ?default")
    _writable(target, "DELETE")
    branch = _branch(repo, ref)
    with repo.transaction(branch, message=message or f"DELETE {target} (graph store protocol)", author=author) as tx:
        quads = list(_quads(tx, target))
        if not quads and target.graph is not None:
            raise UnknownGraphError(f"{target} holds no triples on {branch}")
        fstore.rm_many(tx, quads)
    return tx.commit_id

