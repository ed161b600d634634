"""Version clauses (AT, CHANGES, VERSIONS) against the versioned store's own API.

Hypothesis builds random histories (commits on several branches, forks, merges with either
policy) and each clause's answer is compared with what fstore says directly: ``AT`` with
``fstore.from_(repo.at(ref))``, ``CHANGES`` with ``repo.diff``, ``VERSIONS`` with
``repo.versions`` (one triple pattern), with the intersection of the per-quad commit sets
(a join), and with the pattern evaluated at every commit of the ancestry (OPTIONAL, NOT
EXISTS, aggregates, where intersecting would be wrong). Then the syntax: refs as ``<...>``
or strings, ``~N`` / ``^N``, errors.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fstore
from fstore import IRI
from query import Session, VersionContext, execute, explain
from query.errors import QueryEvaluationError, QuerySyntaxError
from query.source import MemorySource
from nstore.terms import Literal
from tests.profiles import examples

EX = "http://ex/"
P = f"PREFIX : <{EX}>\n"
SUBJECTS = [IRI(f"{EX}s{i}") for i in range(4)]
PREDICATES = [IRI(f"{EX}p0"), IRI(f"{EX}p1")]
OBJECTS = SUBJECTS + [0, 1, 2]
GRAPHS = [None, IRI(f"{EX}g1")]
QUADS = st.tuples(st.sampled_from(GRAPHS), st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), st.sampled_from(OBJECTS))
V = fstore.Var


def term(value: Any) -> Any:
    return None if value is None else fstore.to_rdf(value)


def bag(rows: Any) -> Counter:
    return Counter(frozenset((k, v) for k, v in row.items()) for row in rows)


class History:
    """A repository with a random history, and every commit id it holds."""

    def __init__(self, data: st.DataObject) -> None:
        self.folder = tempfile.mkdtemp(prefix="datae-versions-")
        self.repo = fstore.open(self.folder)
        self.branches = ["main"]
        steps = data.draw(st.integers(2, 9), label="steps")
        for n in range(steps):
            kind = data.draw(st.sampled_from(["commit", "commit", "commit", "branch", "merge"]), label="kind")
            if kind == "branch":
                name = f"b{n}"
                start = data.draw(st.sampled_from(self.branches), label="start")
                self.repo.branch(name, start)
                self.branches.append(name)
            elif kind == "merge":
                into = data.draw(st.sampled_from(self.branches), label="into")
                other = data.draw(st.sampled_from(self.branches), label="other")
                if into != other:
                    self.repo.merge(into, other, policy=data.draw(st.sampled_from(["ours", "theirs"]), label="policy"))
            else:
                branch = data.draw(st.sampled_from(self.branches), label="branch")
                present = self.state(branch)
                with self.repo.transaction(branch, message=f"step {n}", author="hypothesis") as tx:
                    for quad in data.draw(st.lists(QUADS, max_size=5), label="adds"):
                        fstore.add(tx, *quad)
                    if present:
                        for quad in data.draw(st.lists(st.sampled_from(present), max_size=3), label="removes"):
                            fstore.rm(tx, *quad)
        self.commits = sorted({c.id for b in self.branches for c in self.repo.log(b)})

    def state(self, ref: str) -> list:
        view = self.repo.at(ref)
        return [(b["g"], b["s"], b["p"], b["o"]) for b in fstore.from_(view, V("g"), V("s"), V("p"), V("o"))]

    def refs(self) -> list[str]:
        return self.commits + self.branches

    def close(self) -> None:
        self.repo.close()
        shutil.rmtree(self.folder, ignore_errors=True)


SETTINGS = settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------- AT


@SETTINGS
@given(st.data())
def test_at_matches_the_view_at_that_ref(data: st.DataObject) -> None:
    history = History(data)
    try:
        if not history.commits:
            return
        ref = data.draw(st.sampled_from(history.refs()), label="ref")
        session = Session(history.repo)  # reads the current branch unless AT says otherwise
        rows = session.run(f'SELECT * AT "{ref}" WHERE {{ {{ ?s ?p ?o }} UNION {{ GRAPH ?g {{ ?s ?p ?o }} }} }}')
        expected = [{k: term(v) for k, v in zip("gspo", quad) if v is not None} for quad in history.state(ref)]
        assert bag(rows) == bag(expected)
    finally:
        history.close()


# ---------------------------------------------------------------------------- CHANGES


@SETTINGS
@given(st.data())
def test_changes_match_repo_diff(data: st.DataObject) -> None:
    history = History(data)
    try:
        if not history.commits:
            return
        a = data.draw(st.sampled_from(history.refs()), label="a")
        b = data.draw(st.sampled_from(history.refs()), label="b")
        text = f"SELECT ?op ?g ?s ?p ?o CHANGES FROM <{a}> TO <{b}> WHERE {{ {{ ?s ?p ?o }} UNION {{ GRAPH ?g {{ ?s ?p ?o }} }} }}"
        rows = list(execute(history.repo.at("main"), text))
        expected = []
        for op, quad in history.repo.diff(a, b):
            row = {"op": Literal(op), **{k: term(v) for k, v in zip("gspo", quad) if v is not None}}
            expected.append(row)
        assert bag(rows) == bag(expected)
        # a join inside CHANGES: both triples changed the same way between a and b
        joined = list(execute(history.repo.at("main"), P + f"SELECT * CHANGES FROM <{a}> TO <{b}> WHERE {{ ?s :p0 ?x . ?x :p1 ?o }}"))
        diff = {op: [q for o, q in history.repo.diff(a, b) if o == op and q[0] is None] for op in "+-"}
        model = []
        for op, quads in diff.items():
            for _, s, p, x in quads:
                if p == PREDICATES[0]:
                    model += [{"op": Literal(op), "s": s, "x": x, "o": term(o)} for _, s2, p2, o in quads if p2 == PREDICATES[1] and s2 == x]
        assert bag(joined) == bag(model)
    finally:
        history.close()


# ---------------------------------------------------------------------------- VERSIONS


@SETTINGS
@given(st.data())
def test_versions_match_repo_versions(data: st.DataObject) -> None:
    history = History(data)
    try:
        ref = data.draw(st.sampled_from(history.refs()), label="ref")
        repo = history.repo
        one = list(execute(repo.at("main"), P + f"SELECT ?s ?o ?commit VERSIONS AT <{ref}> WHERE {{ ?s :p0 ?o }}"))
        expected = [
            {"s": quad[1], "o": term(quad[3]), "commit": Literal(c.id)}
            for quad, commits in repo.versions(ref, None, V("s"), PREDICATES[0], V("o"))
            for c in commits
        ]
        assert bag(one) == bag(expected)

        # a join: a solution holds where all its quads hold (intersect their commit sets)
        joined = list(execute(repo.at("main"), P + f"SELECT ?s ?x ?o ?commit VERSIONS AT <{ref}> WHERE {{ ?s :p0 ?x . ?x :p1 ?o }}"))
        first = {(q[1], q[3]): {c.id for c in cs} for q, cs in repo.versions(ref, None, V("s"), PREDICATES[0], V("o"))}
        second = {(q[1], q[3]): {c.id for c in cs} for q, cs in repo.versions(ref, None, V("s"), PREDICATES[1], V("o"))}
        model = []
        for (s, x), c1 in first.items():
            for (x2, o), c2 in second.items():
                if x2 == x:
                    model += [{"s": s, "x": term(x), "o": term(o), "commit": Literal(c)} for c in c1 & c2]
        assert bag(joined) == bag(model)
    finally:
        history.close()


NON_MONOTONE = [
    "SELECT ?s ?o WHERE { ?s :p0 ?x OPTIONAL { ?x :p1 ?o } }",
    "SELECT ?s WHERE { ?s :p0 ?x FILTER NOT EXISTS { GRAPH :g1 { ?s ?p ?x } } }",
    "SELECT ?s ?n WHERE { { SELECT ?s (COUNT(?o) AS ?n) WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } } GROUP BY ?s } }",
    "SELECT ?s ?o WHERE { ?s :p0+ ?o }",
    "SELECT ?g ?s WHERE { GRAPH ?g { ?s :p1 ?o } MINUS { ?s :p0 ?o } }",
]


@SETTINGS
@given(st.data(), st.sampled_from(NON_MONOTONE))
def test_versions_equal_the_pattern_at_each_commit(data: st.DataObject, query: str) -> None:
    history = History(data)
    try:
        ref = data.draw(st.sampled_from(history.refs()), label="ref")
        repo = history.repo
        where = query.index("WHERE")
        versioned = P + query[:where] + f"VERSIONS AT <{ref}> " + query[where:]
        versioned = versioned.replace("SELECT ", "SELECT ?commit ", 1)
        rows = list(execute(repo.at("main"), versioned))
        expected = []
        for commit in repo.log(ref):
            for row in execute(repo.at(commit.id), P + query):
                expected.append({**row, "commit": Literal(commit.id)})
        assert bag(rows) == bag(expected)
    finally:
        history.close()


# ---------------------------------------------------------------------------- syntax and errors


@pytest.fixture
def repo(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    for n, name in enumerate(["Ann", "Bea", "Cy"]):
        with repo.transaction("main", message=f"c{n}") as tx:
            fstore.add(tx, None, IRI(f"{EX}p{n}"), IRI(f"{EX}name"), name)
        if n == 0:
            repo.tag("first")
    yield repo
    repo.close()


def names(result: Any) -> list[str]:
    return sorted(row["n"].lexical for row in result)


def test_refs_as_iris_strings_and_ancestors(repo) -> None:
    view = repo.at("main")
    assert names(execute(view, P + "SELECT ?n AT <main> WHERE { ?s :name ?n }")) == ["Ann", "Bea", "Cy"]
    assert names(execute(view, P + 'SELECT ?n AT "main~1" WHERE { ?s :name ?n }')) == ["Ann", "Bea"]
    assert names(execute(view, P + 'SELECT ?n AT "main^^" WHERE { ?s :name ?n }')) == ["Ann"]
    assert names(execute(view, P + 'SELECT ?n AT "HEAD~1" WHERE { ?s :name ?n }')) == ["Ann", "Bea"]
    first = list(repo.log("main"))[-1].id
    assert names(execute(view, P + f"SELECT ?n at <{first[:8]}> WHERE {{ ?s :name ?n }}")) == ["Ann"]
    assert execute(view, P + "ASK AT <main~2> { ?s :name 'Bea' }").ask is False
    triples = execute(view, P + "CONSTRUCT { ?s :was ?n } AT <main~1> WHERE { ?s :name ?n }").triples
    assert len(triples) == 2


def test_at_with_base_does_not_resolve_the_ref(repo) -> None:
    rows = execute(repo.at("main"), "BASE <http://other/> PREFIX : <http://ex/> SELECT ?n AT <main~2> WHERE { ?s :name ?n }")
    assert names(rows) == ["Ann"]


def test_changes_default_to_the_ref_the_query_runs_at(repo) -> None:
    session = Session(repo, at="main~1")
    rows = session.run(P + "SELECT ?op ?n CHANGES FROM <main~2> WHERE { ?s :name ?n }")
    assert [(r["op"].lexical, r["n"].lexical) for r in rows] == [("+", "Bea")]
    counts = session.run(P + "SELECT ?op (COUNT(*) AS ?c) CHANGES FROM <main~2> TO <main> WHERE { ?s :name ?n } GROUP BY ?op")
    assert [(r["op"].lexical, r["c"].lexical) for r in counts] == [("+", "2")]


def test_versions_with_aggregates_and_order(repo) -> None:
    rows = list(execute(repo.at("main"), P + "SELECT ?n (COUNT(?commit) AS ?c) VERSIONS WHERE { ?s :name ?n } GROUP BY ?n ORDER BY ?n"))
    assert [(r["n"].lexical, r["c"].lexical) for r in rows] == [("Ann", "3"), ("Bea", "2"), ("Cy", "1")]


def test_explain_shows_the_version_clauses(repo) -> None:
    view = repo.at("main")
    plan = explain(view, P + "SELECT * AT <main~1> WHERE { ?s :name ?n }")
    assert plan.splitlines()[0].startswith("SELECT query AT main~1 (")
    plan = explain(view, P + "SELECT * CHANGES FROM <first> TO <main> WHERE { ?s :name ?n }")
    assert "Changes from first (" in plan and "scan ?s <http://ex/name> ?n" in plan
    plan = explain(view, P + "SELECT * VERSIONS WHERE { ?s :name ?n }")
    assert "Versions over the ancestry of" in plan


def test_errors(repo) -> None:
    view = repo.at("main")
    with pytest.raises(fstore.UnknownRefError, match="nope"):
        list(execute(view, "SELECT * AT <nope> WHERE { ?s ?p ?o }"))
    with pytest.raises(fstore.UnknownRefError, match="main~9"):
        list(execute(view, "SELECT * AT <main~9> WHERE { ?s ?p ?o }"))
    with pytest.raises(QuerySyntaxError, match="CHANGES cannot be combined with AT"):
        execute(view, "SELECT * AT <main> CHANGES FROM <main~1> WHERE { ?s ?p ?o }")
    with pytest.raises(QuerySyntaxError, match="at most one AT"):
        execute(view, "SELECT * AT <main> AT <main~1> WHERE { ?s ?p ?o }")
    with pytest.raises(QuerySyntaxError, match="DESCRIBE cannot be combined"):
        execute(view, "DESCRIBE ?s VERSIONS WHERE { ?s ?p ?o }")
    with pytest.raises(QueryEvaluationError, match="needs a datae repository"):
        execute(MemorySource([]), "SELECT * VERSIONS WHERE { ?s ?p ?o }")
    with pytest.raises(QuerySyntaxError) as info:
        execute(view, "SELECT * CHANGES <main> WHERE { ?s ?p ?o }")
    assert (info.value.line, info.value.column) == (1, 18) and "'FROM'" in info.value.expected


def test_version_context_of_views_and_transactions(repo) -> None:
    assert VersionContext.of(repo.at("first")).ref == repo.resolve("first")
    with repo.transaction("main", message="x") as tx:
        assert VersionContext.of(tx).ref == "main"
        fstore.add(tx, None, IRI(f"{EX}p9"), IRI(f"{EX}name"), "Di")
        # a transaction sees its own writes; AT reads committed history
        assert "Di" in names(execute(tx, P + "SELECT ?n WHERE { ?s :name ?n }"))
        assert "Di" not in names(execute(tx, P + "SELECT ?n AT <main> WHERE { ?s :name ?n }"))
    assert VersionContext.of(MemorySource([])) is None
