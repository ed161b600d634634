"""The datae paper's fstore functions: add / rm / ask / from_ / where / select / count.

Reads take a :class:`View` (``repo.at(ref)``) or an open write :class:`Transaction` (which
sees its own changes); writes take a transaction. Writes take RDF terms or Python values
(``"Bea"`` is the literal ``"Bea"``, ``5`` an ``xsd:integer``); reads give RDF terms, so a term
read back equals the term written (``Literal.value`` is its Python value; ``terms=False``
gives stored values).

>>> import tempfile, fstore
>>> from fstore import IRI, Var
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="m") as tx:
...     fstore.add(tx, None, IRI("urn:a"), IRI("urn:knows"), IRI("urn:b"))
...     fstore.add(tx, None, IRI("urn:b"), IRI("urn:name"), "Bea")
>>> view = repo.at("main")
>>> list(fstore.select(fstore.from_(view, None, IRI("urn:a"), IRI("urn:knows"), Var("x")),
...                    fstore.where(view, None, Var("x"), IRI("urn:name"), Var("name"))))
[{'x': IRI('urn:b'), 'name': Literal('Bea')}]
>>> repo.close()
"""

from __future__ import annotations

from itertools import chain, islice
from typing import Any, Callable, Iterable, Iterator, Sequence, Union

from nstore import Var, select
from nstore.store import Bindings, Param, Step

from .errors import ReadOnlyViewError
from .core.history import Quad
from .core.ranges import NumericRange
from .patterns import check_cap, check_within, params_checked, prepare_new_quad, prepare_new_quads, prepare_pattern, prepare_quad
from .transaction import Transaction
from .view import View

__all__ = ["add", "add_many", "rm", "rm_many", "ask", "from_", "quads", "prepare", "Param", "where", "select", "count", "estimate", "graphs", "Var", "Readable"]

_BATCH = 1 << 16  # quads checked at a time by add_many


def _batches(quads: Iterable[Sequence[Any]]) -> Iterator[list[Any]]:
    source = iter(quads)
    while batch := list(islice(source, _BATCH)):
        yield batch

Readable = Union[View, Transaction]


def _writable(tx: Any) -> Transaction:
    if isinstance(tx, Transaction):
        return tx
    raise ReadOnlyViewError(f"cannot write through {tx!r}: use `with repo.transaction(branch) as tx`")


def _readable(view: Any) -> Readable:
    if isinstance(view, (View, Transaction)):
        return view
    raise TypeError(f"expected a View (repo.at(ref)) or a Transaction, not {type(view).__name__}")


def add(tx: Transaction, graph: Any, subject: Any, predicate: Any, object: Any) -> None:
    """Add a quad on the transaction's branch (a no-op if already present). Each item must
    be a valid term (``InvalidTermError`` otherwise, nothing staged): an absolute IRI
    (RFC 3987), a literal or Python value; None only as the graph (the default graph)."""
    _writable(tx)._intend(prepare_new_quad((graph, subject, predicate, object)), True)


def add_many(tx: Transaction, quads: Iterable[Sequence[Any]]) -> None:
    """Add many quads ``(graph, subject, predicate, object)`` at once: :func:`add` of each,
    without a call per quad (the bulk path of an import). Each quad is checked as
    :func:`add` checks it, before it is staged (a batch at a time); on a bad one, the
    transaction may hold some of those before it (abort it by leaving the ``with`` block
    with the exception, as an uncaught one does).

    >>> import tempfile, fstore
    >>> repo = fstore.open(tempfile.mkdtemp())
    >>> with repo.transaction("main", message="m") as tx:
    ...     fstore.add_many(tx, [(None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), n) for n in range(3)])
    >>> fstore.count(repo.at("main"), None, fstore.Var("s"), fstore.IRI("urn:p"), fstore.Var("o"))
    3
    >>> repo.close()
    """
    _writable(tx)._intend_many(chain.from_iterable(map(prepare_new_quads, _batches(quads))), True)


def rm_many(tx: Transaction, quads: Iterable[Sequence[Any]]) -> None:
    """Remove many quads at once (see :func:`add_many`)."""
    _writable(tx)._intend_many(map(prepare_quad, quads), False)


def rm(tx: Transaction, graph: Any, subject: Any, predicate: Any, object: Any) -> None:
    """Remove a quad from the transaction's branch (a no-op if absent)."""
    _writable(tx)._intend(prepare_quad((graph, subject, predicate, object)), False)


def ask(view: Readable, graph: Any, subject: Any, predicate: Any, object: Any) -> bool:
    """Whether the quad is present."""
    quad = prepare_quad((graph, subject, predicate, object))
    return next(iter(_readable(view)._match(quad)), None) is not None


def from_(view: Readable, *pattern: Any, offset: int = 0, limit: int | None = None) -> Iterator[Bindings]:
    """Yield ``{variable: RDF term}`` for each quad matching the pattern (values or ``Var``)."""
    prepared = prepare_pattern(pattern)
    if offset < 0 or (limit is not None and limit < 0):
        raise ValueError(f"offset and limit must be >= 0, not {offset}, {limit}")
    slots = [(i, item.name) for i, item in enumerate(prepared) if type(item) is Var]
    matched = _readable(view)._match(prepared, None, True)
    if offset or limit is not None:
        matched = islice(matched, offset, None if limit is None else offset + limit)
    for quad in matched:
        yield {name: quad[i] for i, name in slots}


def quads(
    view: Readable,
    graph: Any,
    subject: Any,
    predicate: Any,
    object: Any,
    *,
    within: NumericRange | None = None,
    terms: bool = True,
) -> Iterator[Quad]:
    """Yield each quad ``(graph, subject, predicate, object)`` matching the pattern (values
    or ``Var``), whole: :func:`from_` without building a dict per match.

    ``within`` (a :class:`~fstore.core.ranges.NumericRange`, the object being a ``Var``) reads
    only the quads whose object may lie in the range: every number in it, plus objects
    stored as Literals or blobs, which the caller compares itself. ``terms=True`` gives
    each item as its RDF term (``fstore.to_rdf``: ``"Bea"`` as ``Literal("Bea")``), as a
    SPARQL engine wants it, from a cache of terms by their stored bytes.

    >>> import tempfile, fstore
    >>> repo = fstore.open(tempfile.mkdtemp())
    >>> with repo.transaction("main", message="m") as tx:
    ...     fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), 1)
    >>> list(fstore.quads(repo.at("main"), None, Var("s"), fstore.IRI("urn:p"), Var("o")))
    [(None, IRI('urn:a'), IRI('urn:p'), Literal('1', datatype='http://www.w3.org/2001/XMLSchema#integer'))]
    >>> repo.close()
    """
    prepared = prepare_pattern((graph, subject, predicate, object))
    check_within(prepared, within)
    return _readable(view)._match(prepared, within, terms)


def prepare(view: Readable, graph: Any, subject: Any, predicate: Any, object: Any, *, terms: bool = True) -> Callable[..., Iterator[Quad]]:
    """Plan once a read whose ``Param()`` positions change from call to call, as a join
    does for every solution it extends: ``read(*values)`` yields what ``quads`` would with
    those values (in pattern order) in place of the params, without planning again.

    >>> import tempfile, fstore
    >>> repo = fstore.open(tempfile.mkdtemp())
    >>> name = fstore.IRI("urn:name")
    >>> with repo.transaction("main", message="m") as tx:
    ...     fstore.add(tx, None, fstore.IRI("urn:a"), name, "Ann")
    ...     fstore.add(tx, None, fstore.IRI("urn:b"), name, "Bob")
    >>> read = fstore.prepare(repo.at("main"), None, fstore.Param(), name, Var("n"))
    >>> [q[3].value for who in ("urn:b", "urn:a", "urn:c") for q in read(fstore.IRI(who))]
    ['Bob', 'Ann']
    >>> repo.close()
    """
    pattern = prepare_pattern((graph, subject, predicate, object), params=True)
    return params_checked(_readable(view)._prepare(pattern, terms))


def count(view: Readable, *pattern: Any) -> int:
    """How many quads match the pattern."""
    return _readable(view)._count(prepare_pattern(pattern))


def estimate(view: Readable, graph: Any, subject: Any, predicate: Any, object: Any, cap: int) -> int:
    """``min(count, cap)``: counting stops after ``cap`` matches (a query planner's estimate)."""
    check_cap(cap)
    return _readable(view)._count(prepare_pattern((graph, subject, predicate, object)), cap)


def graphs(view: Readable) -> list[Any]:
    """The graphs that hold at least one quad (None, the default graph, included), in key
    order; one seek per graph rather than a scan of the quads."""
    return _readable(view)._graphs()


def where(view: Readable, *pattern: Any) -> Step:
    """A join step for :func:`select`: extends each binding with the pattern's matches."""
    prepare_pattern(pattern)

    def step(bindings: Iterator[Bindings]) -> Iterator[Bindings]:
        for binding in bindings:
            bound = [binding.get(item.name, item) if type(item) is Var else item for item in pattern]
            for extra in from_(view, *bound):
                yield {**binding, **extra}

    return step
