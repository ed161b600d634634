"""Fuzzing what users type and feed in: RDF files in every syntax, CSV files and SPARQL text. Whatever
the input, the only exceptions are datae's own (``DataeError``: a message naming what and
where), and a refused file leaves the store as it was.

Short under the ``ci`` profile; ``HYPOTHESIS_PROFILE=deep`` runs a hundred times the
examples, and ``make fuzz`` (``DATAE_FUZZ_EXAMPLES``) as many as fill about ten minutes.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fstore
import fstore.tables as tables
from fstore.rdf import load
from nstore.errors import DataeError
from query import execute, parse_request
from tests.profiles import examples

# Pieces of each syntax, so that random text gets past the first character often enough to
# reach the deeper parts of each parser; raw characters and bytes are mixed in.
NQ_TOKENS = ["<urn:a>", "<urn:b>", "<http://ex/p>", "<rel>", "<>", "<urn:a b>", "_:b0", "_:", '"x"', '"x"@en', '"x"@',
             '"1"^^<http://www.w3.org/2001/XMLSchema#integer>', '"1e5000"^^<http://www.w3.org/2001/XMLSchema#double>',
             '"9' + "9" * 60 + '"^^<http://www.w3.org/2001/XMLSchema#integer>', '"\\u0000"', '"\\uD800"', "^^", ".",
             " ", "\t", "\n", "\r\n", "#", "<urn:\x00>", '"""', "\\"]
TURTLE_TOKENS = ["@prefix ex: <http://ex/> .", "@base <http://ex/> .", "PREFIX : <urn:>", "ex:a", ":b", "<urn:a>", "<rel>",
                 "a", ";", ",", ".", "[", "]", "(", ")", "{", "}", "GRAPH", "_:b", '"x"', '"""x\ny"""', "'x'", "@en",
                 "^^", "ex:t", "<http://www.w3.org/2001/XMLSchema#integer>", "1", "-1.5", "1e3", "true", " ", "\n",
                 "#", "\\u00e9", "<<", ">>"]
JSONLD_TOKENS = ["{", "}", "[", "]", ":", ",", '"@id"', '"@context"', '"@type"', '"@value"', '"@language"',
                 '"@graph"', '"@list"', '"@set"', '"@vocab"', '"@base"', '"@reverse"', '"@index"', '"@json"',
                 '"urn:a"', '"http://ex/p"', '"ex:p"', '"ex"', '"http://ex/"', '"x"', '"en"', "1", "1.5e300", "true",
                 "null", " "]
RDFXML_TOKENS = ['<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex/">',
                 "</rdf:RDF>", "<rdf:Description", "</rdf:Description>", "<ex:p", "</ex:p>", "<ex:C", "</ex:C>",
                 ' rdf:about="urn:a"', ' rdf:about="rel"', ' rdf:resource="urn:b"', ' rdf:nodeID="b1"', ' rdf:ID="i"',
                 ' rdf:datatype="http://www.w3.org/2001/XMLSchema#integer"', ' xml:lang="en"', ' xml:base="urn:x/"',
                 ' rdf:parseType="Resource"', ' rdf:parseType="Collection"', ' rdf:parseType="Literal"', ">", "/>",
                 "x", "1", "&amp;", "&lt;", "<!-- c -->", "<?xml version=\"1.0\"?>", "<![CDATA[x]]>", " ", "\n"]
RDF_SYNTAXES = {"ttl": TURTLE_TOKENS, "trig": TURTLE_TOKENS, "jsonld": JSONLD_TOKENS, "rdf": RDFXML_TOKENS}
SPARQL_TOKENS = ["SELECT", "ASK", "CONSTRUCT", "DESCRIBE", "INSERT DATA", "DELETE WHERE", "WHERE", "FILTER",
                 "OPTIONAL", "UNION", "MINUS", "GRAPH", "SERVICE", "BIND", "VALUES", "AS", "GROUP BY", "ORDER BY",
                 "LIMIT", "OFFSET", "PREFIX", "BASE", "AT", "CHANGES", "VERSIONS", "FROM", "TO", "LOAD", "CLEAR ALL",
                 "{", "}", "(", ")", "[", "]", ".", ";", ",", "*", "+", "?", "|", "/", "^", "!", "=", "<", ">", "&&",
                 "||", "?s", "?p", "?o", "$x", "<urn:a>", "<http://ex/p>", "ex:p", "a", '"x"', '"x"@en', "1", "1.5",
                 "1e3", "-0", "true", "REGEX(?s, \"(a+)+$\")", "COUNT(*)", "STR(?o)", "<urn:datae:dataset:t>", " ",
                 "\n", "#"]


def _text_of(tokens: list[str]) -> st.SearchStrategy[str]:
    token = st.one_of(st.sampled_from(tokens), st.text(max_size=3))
    return st.lists(token, max_size=40).map("".join)


def _state(repo: fstore.Repository) -> tuple:
    """What a refused input must leave as it was: every branch's head and the commit count."""
    return tuple(sorted(repo.branches().items())), sum(1 for _ in repo.log("main"))


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    repo = fstore.open(str(tmp_path_factory.mktemp("fuzz") / "store"))
    with repo.transaction("main", message="seed") as tx:
        fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("http://ex/p"), "x")
        tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
                                {"id": "v", "name": "v", "dataType": "text"}]).insert({"k": 1, "v": "a"})
    yield repo
    repo.close()


# make fuzz sets DATAE_FUZZ_EXAMPLES: a run of about ten minutes whatever the profile's scale.
FUZZ = settings(max_examples=int(os.environ.get("DATAE_FUZZ_EXAMPLES") or examples(150)), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@FUZZ
@given(data=st.one_of(_text_of(NQ_TOKENS).map(str.encode), st.binary(max_size=80)))
def test_any_nquads_file_loads_or_is_refused_cleanly(repo, data: bytes) -> None:
    before = _state(repo)
    try:
        with repo.transaction("main", message="fuzz") as tx:
            load(tx, data, "nq")
    except DataeError:
        assert _state(repo) == before
    else:
        _undo_last(repo, before)


@FUZZ
@given(syntax=st.sampled_from(sorted(RDF_SYNTAXES)), data=st.data())
def test_any_file_in_another_rdf_syntax_loads_or_is_refused_cleanly(repo, syntax: str, data) -> None:
    text = data.draw(st.one_of(_text_of(RDF_SYNTAXES[syntax]).map(str.encode), st.binary(max_size=80)), "file")
    before = _state(repo)
    try:
        with repo.transaction("main", message="fuzz") as tx:
            load(tx, text, syntax)
    except DataeError:
        assert _state(repo) == before
    else:
        _undo_last(repo, before)


@FUZZ
@given(data=st.one_of(st.lists(st.lists(st.sampled_from(["k", "v", "1", "2", "x", "", '"', '""', "1.5", "-",
                                                          "2020-01-01", "true", "\x00", "é"]), max_size=4)
                                        .map(",".join), max_size=5).map(lambda lines: "\n".join(lines).encode()),
                           st.binary(max_size=60)))
def test_any_csv_file_imports_or_is_refused_cleanly(repo, tmp_path_factory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    path.write_bytes(data)
    before = _state(repo)
    try:
        with repo.transaction("main", message="fuzz") as tx:
            tables.import_csv(tx, "t", path, mode="upsert")
    except DataeError:
        assert _state(repo) == before
    else:
        _undo_last(repo, before)


@FUZZ
@given(text=_text_of(SPARQL_TOKENS))
def test_any_query_text_parses_or_is_refused_cleanly(repo, text: str) -> None:
    try:
        request = parse_request(text)
    except DataeError:
        return
    if type(request).__name__ != "Query":
        return  # updates are not run here: their parsing is what is fuzzed
    try:
        result = execute(repo.at("main"), text)
        result.serialize("nquads" if result.form in ("CONSTRUCT", "DESCRIBE") else "json")
    except DataeError:
        pass


def _undo_last(repo: fstore.Repository, before: tuple) -> None:
    """Put ``main`` back where it was (an input that was taken made a commit)."""
    branches, _ = before
    head = dict(branches)["main"]
    if repo.head("main") != head:
        repo.reset(head, "main", hard=True)
