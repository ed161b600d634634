"""A value reads back equal to what was written, through every layer.

Each example writes a handful of values of every kind (str, int of any size, float with
-0.0/inf/NaN, bool, Decimal, date, datetime with and without a zone, bytes, IRI, blank node,
literals with a language, with a datatype, in a non-canonical form) and reads them back
through each path a program uses: fstore reads at the head and at an old commit, SPARQL
results and lookups, diff, blame, history, a merge, a conflict, a clone, N-Quads export
and re-import, and the Parquet export read by pyarrow. What comes back must be ``==`` to
what was written, hash equal, and the same in a set (the oracle is the written values
themselves, as a program's model of them). NaN is the one value Python does not make
equal to itself; it is compared as NaN.
"""

from __future__ import annotations

import datetime as dt
import io
import math
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fstore
from fstore import IRI, BNode, Literal, Var
from fstore.export.kartothek import location, read_table
from fstore.export.snapshot import export_snapshot
from fstore.export.terms import quad_from_row
from fstore.rdf import load, serialize
from nstore.terms import term_to_ntriples
from nstore.errors import InvalidTermError
from nstore.terms import MAX_DIGITS, check_term, to_rdf
from query import execute
from tests.profiles import examples

GRAPH = IRI("urn:g")
PREDICATE = IRI("urn:p")

def _storable(value) -> bool:
    """Whether the store takes ``value`` (a decimal written with more than 4,300 digits is
    refused with InvalidTermError: tests/fstore/test_fstore_terms.py checks that)."""
    try:
        check_term(value)
    except InvalidTermError:
        return False
    return True


_zones = st.integers(min_value=-14 * 60, max_value=14 * 60).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))
_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
_big = 10 ** (MAX_DIGITS - 1)

values = st.one_of(
    _text,
    st.integers(),
    st.integers(min_value=-_big, max_value=_big),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(),  # NaN, ±inf and -0.0 included
    st.sampled_from([-0.0, 0.0, math.inf, -math.inf, math.nan, 2.0**53 + 1, 5e-324]),
    st.booleans(),
    st.decimals(allow_nan=False, allow_infinity=False).filter(_storable),  # at most 4,300 digits written
    st.dates(),
    st.datetimes(),
    st.datetimes(timezones=_zones),
    st.binary(max_size=20),
    st.from_regex(r"urn:[a-z]{1,8}(:[a-z0-9]{1,4})?", fullmatch=True).map(IRI),
    st.from_regex(r"b[a-z0-9]{0,8}", fullmatch=True).map(BNode),
    st.tuples(_text, st.sampled_from(["en", "fr-be", "de-CH-1996"])).map(lambda t: Literal(t[0], lang=t[1])),
    st.tuples(_text, st.sampled_from(["urn:type", "http://example.org/dt#x"])).map(lambda t: Literal(*t)),
    st.sampled_from([Literal(lexical, "http://www.w3.org/2001/XMLSchema#" + datatype) for lexical, datatype in
                     [("01", "integer"), ("1.50", "decimal"), ("1.5e0", "double"), ("+1", "integer"),
                      ("2024-02-29T10:00:00.000", "dateTime"), ("1", "boolean"), ("x", "token")]]),
)


def same(read, written) -> bool:
    """``read == written`` with equal hashes; NaN as NaN (Python's NaN is not equal to itself)."""
    if isinstance(written, float) and math.isnan(written):
        return isinstance(read, Literal) and read.lexical == "NaN" and read.value != read.value
    return read == written and written == read and hash(read) == hash(written)


def same_set(read, written) -> bool:
    """The quads read are the quads written, each matched once by :func:`same` item by item
    (a bag, not a Python set: 0 and 0.0 are one member of a set but two RDF terms), and the
    quads that are not NaN are also equal as Python sets."""
    read, remaining = list(read), list(written)
    for quad in read:
        match = next((i for i, w in enumerate(remaining) if all(same(r, x) for r, x in zip(quad, w))), None)
        if match is None:
            return False
        del remaining[match]
    if remaining:
        return False
    plain = [q for q in written if not _is_nan(q[-1])]
    return set(plain) == {q for q in read if not _is_nan(q[-1])}


def _is_nan(value) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, Literal) and value.lexical == "NaN" and value.datatype is not None and value.value != value.value


def quads_of(objects) -> list[tuple]:
    return [(GRAPH, IRI(f"urn:s{i}"), PREDICATE, value) for i, value in enumerate(objects)]


def check_read(pairs) -> None:
    for read, written in pairs:
        assert same(read, written), (read, written)


@given(values)
@settings(max_examples=examples(400))
def test_a_value_equals_its_term(value):
    """The term a value reads back as is equal to it and hashes equal, also inside tuples
    and sets; the reverse comparison agrees."""
    term = to_rdf(value)
    assert same(term, value)
    fresh = Literal(term.lexical, term.datatype, term.lang) if isinstance(term, Literal) else term
    assert hash(fresh) == hash(term) and fresh == term  # a read term and one a program makes
    if not _is_nan(value):
        assert {(IRI("urn:s"), term)} == {(IRI("urn:s"), value)}
        assert value in {term} and term in {value}
        assert {term: 1}[value] == 1


def test_equal_python_values_of_other_terms_stay_unequal():
    """Equality is RDF term equality: a value equals only the one literal it writes as."""
    assert Literal("1", "http://www.w3.org/2001/XMLSchema#integer") != 1.0
    assert Literal("1", "http://www.w3.org/2001/XMLSchema#integer") != True  # noqa: E712
    assert Literal("true", "http://www.w3.org/2001/XMLSchema#boolean") != 1
    assert Literal("01", "http://www.w3.org/2001/XMLSchema#integer") != 1
    assert Literal("a", lang="en") != "a"
    assert Literal("a", "urn:type") != "a"
    assert IRI("urn:a") != "urn:a" and BNode("b") != "b"
    assert to_rdf(dt.date(2024, 1, 1)) != dt.datetime(2024, 1, 1)
    utc = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone.utc)
    paris = utc.astimezone(dt.timezone(dt.timedelta(hours=1)))
    assert utc == paris and to_rdf(utc) != paris  # the same instant, another lexical form
    assert len({Literal("1.5E0", "http://www.w3.org/2001/XMLSchema#double"), 1.5, Literal("1.5")}) == 2
    assert Literal("7", "http://www.w3.org/2001/XMLSchema#integer") != 10**5000  # no term for it, not an error


distinct_values = st.lists(values, min_size=1, max_size=8)


@given(distinct_values)
@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_values_read_back_as_written_through_every_path(tmp_path_factory, objects):
    objects = _distinct(objects)
    written = quads_of(objects)
    root = tmp_path_factory.mktemp("roundtrip")
    repo = fstore.open(root / "store")
    with repo.transaction("main", message="seed") as tx:
        fstore.add(tx, GRAPH, IRI("urn:other"), PREDICATE, "seed")
    seed = tx.commit_id
    with repo.transaction("main", message="values", author="ann") as tx:
        fstore.add_many(tx, written)
    first = tx.commit_id
    with repo.transaction("main", message="later") as tx:
        fstore.add(tx, GRAPH, IRI("urn:other"), PREDICATE, "later")
    subjects = {s for _, s, _, _ in written}

    for ref in ("main", first):
        view = repo.at(ref)
        read = list(fstore.quads(view, GRAPH, Var("s"), PREDICATE, Var("o")))
        read = [q for q in read if q[1] in subjects]
        assert same_set(read, written)
        for (g, s, p, o) in written:
            (row,) = fstore.from_(view, g, s, p, Var("o"))
            assert same(row["o"], o)
            assert _is_nan(o) or fstore.ask(view, g, s, p, o)  # found by the value written

    _check_sparql(repo.at("main"), written)
    assert same_set([q for op, q in repo.diff(seed, first) if op == "+"], written)
    for quad in written:
        assert repo.blame("main", *quad).message == "values"
    (commit, changes), = [(c, ch) for c, ch in repo.history("main", GRAPH, Var("s"), PREDICATE, Var("o"))
                          if c.message == "values"]
    assert same_set([q for _, q in changes], written)

    _check_merge_and_conflict(repo, written)
    _check_clone(repo, root, written)
    _check_nquads(repo, root, written)
    _check_parquet(repo, root, written)
    repo.close()


def _distinct(objects: list) -> list:
    """The values, none equal to another in Python (0, 0.0 and False are one member of a
    Python set, though three RDF terms: a program's set could not tell them apart either;
    test_equal_python_values_of_other_terms_stay_unequal covers them)."""
    seen, kept = set(), []
    for value in objects:
        key = term_to_ntriples(to_rdf(value)) if _is_nan(value) else value
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept


def _ours(read, written) -> list[tuple]:
    """The quads read whose subjects are those written (the test adds others around them)."""
    subjects = {s for _, s, _, _ in written}
    return [q for q in read if q[1] in subjects]


def _check_sparql(view, written) -> None:
    rows = execute(view, "SELECT ?s ?o WHERE { GRAPH <urn:g> { ?s <urn:p> ?o } }")
    got = {row["s"]: row["o"] for row in rows if row["s"] != IRI("urn:other")}
    check_read((got[s], o) for _, s, _, o in written)
    for _, s, _, o in written:
        if isinstance(o, BNode):
            continue  # a blank node in a query is a variable, not the stored node
        text = f"ASK {{ GRAPH <urn:g> {{ {term_to_ntriples(s)} <urn:p> {term_to_ntriples(to_rdf(o))} }} }}"
        assert execute(view, text).ask, text
    constructed = execute(view, "CONSTRUCT { ?s <urn:p> ?o } WHERE { GRAPH <urn:g> { ?s <urn:p> ?o } }")
    got = {s: o for s, _, o in constructed if s != IRI("urn:other")}
    check_read((got[s], o) for _, s, _, o in written)


def _check_merge_and_conflict(repo, written) -> None:
    """The values merged in from a branch, and as the sides of a conflict."""
    repo.branch("side", "main")
    repo.branch("rival", "main")
    with repo.transaction("side", message="side") as tx:
        fstore.add_many(tx, [(IRI("urn:side"), s, p, o) for _, s, p, o in written])
    with repo.transaction("main", message="main moves") as tx:
        fstore.add(tx, GRAPH, IRI("urn:main"), PREDICATE, "moved")
    repo.merge("main", "side", policy="abort")
    merged = list(fstore.quads(repo.at("main"), IRI("urn:side"), Var("s"), PREDICATE, Var("o")))
    assert same_set(merged, [(IRI("urn:side"), s, p, o) for _, s, p, o in written])

    subject = IRI("urn:contested")
    with repo.transaction("rival", message="rival") as tx:
        fstore.add(tx, GRAPH, subject, PREDICATE, "rival's")
    with repo.transaction("main", message="ours") as tx:
        fstore.add_many(tx, [(GRAPH, subject, PREDICATE, o) for _, _, _, o in written])
    try:
        repo.merge("main", "rival", policy="record")
    except fstore.ConflictsRecorded:
        pass
    (item,) = [c for c in repo.conflicts() if c.kind == "quad"]
    assert same_set([(o,) for o in item.ours], [(o,) for _, _, _, o in written])
    repo.merge_abort()


def _check_clone(repo, root, written) -> None:
    for local in (True, False):
        copy = fstore.clone(str(repo.path), root / f"clone-{local}", local=local)
        read = list(fstore.quads(copy.at("main"), GRAPH, Var("s"), PREDICATE, Var("o")))
        assert same_set(_ours(read, written),
                        written)
        copy.close()


def _check_nquads(repo, root, written) -> None:
    text = serialize(fstore.quads(repo.at("main"), GRAPH, Var("s"), PREDICATE, Var("o")), "nq")
    again = fstore.open(root / "reimported")
    with again.transaction("main", message="import") as tx:
        load(tx, io.BytesIO(text), "nq")
    read = list(fstore.quads(again.at("main"), GRAPH, Var("s"), PREDICATE, Var("o")))
    assert same_set(_ours(read, written),
                    written)
    again.close()


def _check_parquet(repo, root, written) -> None:
    dest = root / "parquet"
    export_snapshot(repo, "main", dest)
    table = read_table(location(dest), "quads")
    read = [quad_from_row(row) for row in table.to_pylist()]
    read = _ours([q for q in read if q[0] == GRAPH and q[2] == PREDICATE], written)
    assert same_set(read, written)
    # each typed column holds the value exactly where it has one
    for row in table.to_pylist():
        if row["object_int"] is not None:
            assert int(row["object"]) == row["object_int"]  # exact, also for "01" and above 2**53


def test_every_nan_is_one_term(tmp_path):
    """NaNs of other bit patterns (a payload, the sign bit) are the one term
    "NaN"^^xsd:double: stored once, found by any NaN and by SPARQL's NaN."""
    import struct

    payload = struct.unpack("d", struct.pack("Q", 0x7FF8000000000001))[0]
    negative = struct.unpack("d", struct.pack("Q", 0xFFF8000000000000))[0]
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="nans") as tx:
        for nan in (payload, negative, math.nan):
            fstore.add(tx, GRAPH, IRI("urn:s"), PREDICATE, nan)
    view = repo.at("main")
    (quad,) = fstore.quads(view, GRAPH, IRI("urn:s"), PREDICATE, Var("o"))
    assert _is_nan(quad[3])
    assert all(fstore.ask(view, GRAPH, IRI("urn:s"), PREDICATE, nan) for nan in (payload, negative, math.nan))
    assert execute(view, 'ASK { GRAPH <urn:g> { <urn:s> <urn:p> "NaN"^^<http://www.w3.org/2001/XMLSchema#double> } }').ask
    repo.close()
