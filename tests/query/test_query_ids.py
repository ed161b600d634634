"""Basic graph patterns evaluated on ids (query.id_bgp) against the same patterns
evaluated on terms (the executor's term-level steps, themselves checked against
pyoxigraph by test_query_differential.py).

The stores have a history of several commits, with quads added and removed, and are read
at every commit: a commit that is not a branch head is read as its nearest snapshot plus
an overlay of born and dead quads, which the reads on ids must honour as the term reads
do. Adaptive steps are forced to switch to hash tables early, so both ways of joining
are compared.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fstore
import query.executor as executor_module
from query import execute
from nstore.terms import IRI, Literal, XSD_INTEGER
from tests.profiles import examples

EX = "http://ex/"
NODES = [IRI(EX + c) for c in "abcd"]
PREDICATES = [IRI(EX + p) for p in ("p", "q")]
VALUES = NODES + [Literal("x"), Literal("1", XSD_INTEGER), Literal("2", XSD_INTEGER)]
GRAPHS = [None, IRI(EX + "g")]

_QUAD = st.tuples(st.sampled_from(GRAPHS), st.sampled_from(NODES), st.sampled_from(PREDICATES), st.sampled_from(VALUES))

QUERIES = [
    "SELECT * { ?s :p ?o }",
    "SELECT * { ?s :p ?o . ?o :q ?v }",
    "SELECT * { ?s ?p ?o . ?s :q ?v FILTER(?v != :a) }",
    "SELECT * { ?s :p ?x . ?x :p ?s }",
    "SELECT * { ?s ?p ?s }",
    "SELECT * { ?s :p ?o OPTIONAL { ?o :q ?v . ?v :p ?w } }",
    "SELECT * { ?s :p ?o FILTER(?o > 1) }",
    "SELECT * { GRAPH :g { ?s :p ?o . ?s :q ?v } }",
    "SELECT * { GRAPH ?g { ?s :p ?o } ?o :q ?v }",
    "SELECT * FROM :g { ?s :q ?v . ?s :p ?o }",
    "SELECT * { ?s :q 1 . ?s :p ?o MINUS { ?o :p :a } }",
    "SELECT ?s (COUNT(*) AS ?n) { ?s ?p ?o . ?o ?q ?w } GROUP BY ?s",
    "SELECT * { VALUES ?s { :a :b :nowhere } ?s :p ?o . ?o ?p2 ?w }",
    "SELECT * { BIND(:c AS ?s) ?s :p ?o }",
    "SELECT * { :a :p+ ?x }",
    "SELECT * { ?x :p* :b }",
    "SELECT * { :a ^:q+ ?x }",
    "SELECT * { ?s :q ?o . ?o :p+ ?z }",
    "SELECT * { :nowhere :p* ?x }",
    "SELECT * { GRAPH :g { :c :p* ?x } }",
    "SELECT * { ?s :p* ?s }",
    "SELECT ?o (COUNT(?s) AS ?n) (COUNT(DISTINCT ?p) AS ?d) (SUM(?o) AS ?t) (SAMPLE(?s) AS ?x) { ?s ?p ?o } GROUP BY ?o",
    "SELECT (COUNT(*) AS ?n) (COUNT(?nowhere) AS ?u) (MAX(?o) AS ?m) (GROUP_CONCAT(?o) AS ?c) { ?s :p ?o . ?o ?q ?w }",
    "SELECT ?s ?nowhere (AVG(?v) AS ?a) { ?s :q ?v } GROUP BY ?s ?nowhere",
    "SELECT ?g (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g",
    "SELECT * { ?s :q ?v OPTIONAL { ?s :p ?o } OPTIONAL { ?o :p ?w } OPTIONAL { ?v ?x ?s } }",
    "SELECT * { ?s :q ?v OPTIONAL { ?s :p ?o . ?o :q ?z FILTER(?z != 1) } OPTIONAL { ?z :p ?s } }",
    "SELECT * { ?s :q ?v OPTIONAL { ?s :p ?o FILTER(?o != ?v) } }",
    "SELECT * { ?s :p ?o OPTIONAL { :a ?q ?s } OPTIONAL { ?o :p ?o } }",
    # Counts the store keeps (COUNT of one pattern binding at most its predicate), and
    # patterns it does not keep counts of.
    "SELECT (COUNT(*) AS ?n) (COUNT(?o) AS ?m) { ?s :p ?o }",
    "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }",
    "SELECT (COUNT(*) AS ?n) { GRAPH :g { ?s ?p ?o } }",
    "SELECT (COUNT(?s) AS ?n) FROM :g { ?s :q ?o }",
    "SELECT (COUNT(*) AS ?n) { ?s :nowhere ?o }",
    "SELECT (COUNT(*) AS ?n) { ?s :p ?s }",
    "SELECT (COUNT(*) AS ?n) { :a :p ?o }",
    "SELECT (COUNT(DISTINCT ?o) AS ?n) { ?s :p ?o }",
    "SELECT (COUNT(*) AS ?n) { ?s :p ?o FILTER(?o != :a) }",
    "SELECT ?p (COUNT(*) AS ?n) (COUNT(?o) AS ?m) { ?s ?p ?o } GROUP BY ?p",
    "SELECT ?p (COUNT(*) AS ?n) { GRAPH :g { ?s ?p ?o } } GROUP BY ?p",
    "SELECT (COUNT(*) AS ?n) { ?s ?p ?o } GROUP BY ?p",
    "SELECT ?p (COUNT(*) AS ?n) { ?s ?p ?s } GROUP BY ?p",
    "SELECT ?s (COUNT(*) AS ?n) { ?s ?p ?o } GROUP BY ?s",
]


def _rows(view: Any, text: str) -> Counter:
    return Counter(frozenset(row.items()) for row in execute(view, "PREFIX : <http://ex/> " + text))


@pytest.fixture
def on_terms(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A switch: inside ``with on_terms():`` BGPs are evaluated on terms."""
    import contextlib

    @contextlib.contextmanager
    def switch() -> Iterator[None]:
        with monkeypatch.context() as patch:
            patch.setattr(executor_module.Executor, "ids", lambda self, graph: None)
            yield

    yield switch


@settings(max_examples=examples(30), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(commits=st.lists(st.tuples(st.lists(_QUAD, max_size=30), st.lists(_QUAD, max_size=12)), min_size=1, max_size=4),
       early=st.booleans())
def test_bgps_on_ids_give_what_bgps_on_terms_give(commits: list, early: bool, on_terms: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    if early:  # hash tables from the first lookup on
        monkeypatch.setattr(executor_module, "LOOKUPS_BEFORE_SCAN", 0)
        monkeypatch.setattr(executor_module, "SCAN_ROWS_PER_LOOKUP", 10**6)
    folder = tempfile.mkdtemp(prefix="datae-ids-")
    repo = fstore.open(folder)
    try:
        for number, (added, removed) in enumerate(commits):
            with repo.transaction("main", message=f"c{number}", author="tests") as tx:
                for quad in added:
                    fstore.add(tx, *quad)
                for quad in removed:
                    fstore.rm(tx, *quad)
        refs = ["main", *[c.id for c in repo.log("main")]]
        for ref in refs:
            view = repo.at(ref)
            for text in QUERIES:
                on_ids = _rows(view, text)
                with on_terms():
                    assert on_ids == _rows(view, text), (ref, text)
    finally:
        repo.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_counts_of_one_pattern_read_the_store_s_counts_not_its_quads(monkeypatch: pytest.MonkeyPatch) -> None:
    """COUNT(*) of ``?s :p ?o``, and of ``?s ?p ?o`` grouped by ``?p``, are the counts the
    store keeps with its heads: no quad is read (a scan would fail here), and the answer
    is the count at the commit read."""
    folder = tempfile.mkdtemp(prefix="datae-ids-")
    repo = fstore.open(folder)
    try:
        with repo.transaction("main", message="m", author="tests") as tx:
            fstore.add_many(tx, [(None, IRI(f"{EX}s{i}"), PREDICATES[i % 2], i) for i in range(101)])
        first = repo.head("main")
        with repo.transaction("main", message="m2", author="tests") as tx:
            fstore.rm(tx, None, IRI(f"{EX}s0"), PREDICATES[0], 0)

        def no_scan(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the quads were read")

        monkeypatch.setattr(fstore.query_source.ItemReads, "scan", no_scan)
        text = "SELECT (COUNT(*) AS ?n) { ?s :p ?o }"
        assert _rows(repo.at("main"), text) == Counter({frozenset({("n", Literal("50", XSD_INTEGER))}): 1})
        assert _rows(repo.at(first), text) == Counter({frozenset({("n", Literal("51", XSD_INTEGER))}): 1})
        partition = "SELECT ?p (COUNT(*) AS ?n) { ?s ?p ?o } GROUP BY ?p"
        counts = {p: Literal(str(n), XSD_INTEGER) for p, n in zip(PREDICATES, (50, 50))}
        assert _rows(repo.at("main"), partition) == Counter(frozenset({("p", p), ("n", n)}) for p, n in counts.items())
    finally:
        repo.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_the_ids_path_is_the_one_taken(on_terms: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above compares two paths: a BGP over a view does run on ids."""
    folder = tempfile.mkdtemp(prefix="datae-ids-")
    repo = fstore.open(folder)
    try:
        with repo.transaction("main", message="m", author="tests") as tx:
            fstore.add(tx, None, NODES[0], PREDICATES[0], NODES[1])
        taken = []
        original = executor_module.Executor._bgp_on_ids

        def spy(self: Any, *args: Any) -> Any:
            taken.append(True)
            return original(self, *args)

        monkeypatch.setattr(executor_module.Executor, "_bgp_on_ids", spy)
        assert _rows(repo.at("main"), "SELECT * { ?s :p ?o }") == Counter({frozenset({("s", NODES[0]), ("o", NODES[1])}): 1})
        assert taken
        taken.clear()
        with on_terms():
            _rows(repo.at("main"), "SELECT * { ?s :p ?o }")
        assert not taken
    finally:
        repo.close()
        shutil.rmtree(folder, ignore_errors=True)
