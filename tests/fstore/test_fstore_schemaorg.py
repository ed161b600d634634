"""Sixteen real schema.org releases as sixteen commits: every commit materialises exactly its
release file, and each diff between consecutive commits is the set difference of the files."""

from __future__ import annotations

import datetime as dt
import functools
import re
from pathlib import Path

import pytest

import fstore
from fstore import IRI, Var
from fstore.rdf import load, parse
from nstore.pack import pack
from tests.locations import shared

RELEASES = shared("testdata", "schemaorg")  # all sixteen; the repository ships six (bench/demo_data)
GRAPH = IRI("https://schema.org/")


def version_of(path: Path) -> tuple[int, ...]:
    return tuple(int(x) for x in re.search(r"https-([\d.]+)\.nq\.gz", path.name).group(1).split("."))


FILES = sorted(RELEASES.glob("schemaorg-current-https-*.nq.gz"), key=version_of)


def release_time(index: int) -> dt.datetime:
    return dt.datetime(2023, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(days=30 * index)


def term_key(*quad) -> bytes:
    """A quad's bytes as RDF terms: what reads give back (``"x"`` as ``Literal("x")``)."""
    return pack(*map(fstore.to_rdf, quad))


@functools.cache  # each release parsed and keyed once a run (emptied when the module is done)
def release_keys(path: Path) -> dict[bytes, tuple]:
    return {term_key(*q): q for q in parse(path, graph=GRAPH, format="nq")}


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    repo = fstore.open(tmp_path_factory.mktemp("schemaorg") / "repo")
    commits = []
    for index, path in enumerate(FILES):
        with repo.transaction("main", message=f"schema.org {path.name}", author="schema.org",
                              time=release_time(index), allow_empty=True) as tx:
            wanted = release_keys(path)
            current = {term_key(GRAPH, b["s"], b["p"], b["o"]): (b["s"], b["p"], b["o"])
                       for b in fstore.from_(tx, GRAPH, Var("s"), Var("p"), Var("o"))}
            for key, (s, p, o) in current.items():
                if key not in wanted:
                    fstore.rm(tx, GRAPH, s, p, o)
            for quad in wanted.values():
                fstore.add(tx, *quad)
        commits.append(tx.commit_id)
    yield repo, commits
    repo.close()
    release_keys.cache_clear()


def test_sixteen_releases_are_sixteen_commits(imported):
    repo, commits = imported
    assert len(FILES) == 16
    assert len(set(commits)) == 16
    assert [c.id for c in repo.log("main")] == commits[::-1]
    assert repo.verify() == []


@pytest.mark.parametrize("index", range(16))
def test_commit_materialises_its_release(imported, index):
    repo, commits = imported
    expected = release_keys(FILES[index])
    view = repo.at(commits[index])
    got = [term_key(GRAPH, b["s"], b["p"], b["o"]) for b in fstore.from_(view, GRAPH, Var("s"), Var("p"), Var("o"))]
    assert len(got) == len(set(got))
    assert set(got) == set(expected)


@pytest.mark.parametrize("index", range(1, 16))
def test_diff_of_consecutive_commits_is_the_file_difference(imported, index):
    repo, commits = imported
    before, after = release_keys(FILES[index - 1]), release_keys(FILES[index])
    got = {(op, term_key(*quad)) for op, quad in repo.diff(commits[index - 1], commits[index])}
    expected = {("+", k) for k in after.keys() - before.keys()} | {("-", k) for k in before.keys() - after.keys()}
    assert got == expected
    commit = repo.commit(commits[index])
    assert (commit.added, commit.removed) == (len(after.keys() - before.keys()), len(before.keys() - after.keys()))


def test_load_replace_makes_the_same_commits(imported, tmp_path):
    """fstore.rdf.load(replace=True) in another store gives commits with the same ids: the
    ids hash content (parents, changes, message, author, time), not where they were made."""
    repo, commits = imported
    other = fstore.open(tmp_path / "other")
    for index, path in enumerate(FILES[:4]):
        with other.transaction("main", message=f"schema.org {path.name}", author="schema.org",
                               time=release_time(index), allow_empty=True) as tx:
            load(tx, path, "nq", graph=GRAPH, replace=True)
        assert tx.commit_id == commits[index]
    other.close()


def test_terms_written_read_back_equal(tmp_path):
    """A release written as RDF terms (Literal objects, as a parser gives them) reads back
    as the same terms, through fstore and through SPARQL, at every commit."""
    from query import execute

    repo = fstore.open(tmp_path / "terms")
    written = []
    for index, path in enumerate(FILES[:2]):
        terms = {tuple(map(fstore.to_rdf, q)) for q in parse(path, format="nq", graph=GRAPH)}
        with repo.transaction("main", message=path.name, allow_empty=True) as tx:
            for quad in {tuple(map(fstore.to_rdf, b)) for b in fstore.quads(tx, GRAPH, Var("s"), Var("p"), Var("o"))} - terms:
                fstore.rm(tx, *quad)
            for quad in terms:
                fstore.add(tx, *quad)
        written.append((tx.commit_id, terms))
    for commit, terms in written:
        view = repo.at(commit)
        assert set(fstore.quads(view, GRAPH, Var("s"), Var("p"), Var("o"))) == terms
        rows = execute(view, f"SELECT ?s ?p ?o WHERE {{ GRAPH <{GRAPH.value}> {{ ?s ?p ?o }} }}")
        assert {(GRAPH, r["s"], r["p"], r["o"]) for r in rows} == terms
    repo.close()
