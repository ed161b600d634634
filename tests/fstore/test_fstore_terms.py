"""Terms are checked where they enter the store (issue 16): a bad one raises
InvalidTermError at once, naming the value and what is wrong, and the store is unchanged."""

from __future__ import annotations

from decimal import Decimal

import pytest

import fstore
from fstore import IRI, Literal, Var
from nstore.errors import InvalidTermError, PackError
from nstore.terms import MAX_DIGITS, RDF_LANGSTRING, XSD_INTEGER, check_iri

S, P = IRI("urn:s"), IRI("urn:p")
G = IRI("http://example.org/graph")

# (position, bad value, a piece of the message): the value replaces that item of GOOD_QUAD.
GOOD_QUAD = (None, S, P, 1)
BAD = [
    (1, IRI("http://ex.org/a b"), "' ' at position 15"),
    (2, IRI("http://ex.org/\x00"), "'\\x00' at position 14"),
    (3, IRI("ex.org/no-scheme"), "needs a scheme"),
    (1, IRI(""), "needs a scheme"),
    (0, IRI("relative/graph"), "quad graph"),
    (3, IRI("http://ex.org/<tag>"), "'<' at position"),
    (3, IRI('http://ex.org/"q"'), "'\"' at position"),
    (3, IRI("http://ex.org/{x}"), "'{' at position"),
    (3, IRI("http://ex.org/a|b"), "'|' at position"),
    (3, IRI("http://ex.org/a\\b"), r"'\\' at position"),
    (3, IRI("http://ex.org/a^b"), "'^' at position"),
    (3, IRI("http://ex.org/a`b"), "'`' at position"),
    (3, IRI("http://ex.org/\x85"), "at position 14"),
    (3, IRI("http://ex.org/100%"), "does not start a %XX escape"),
    (3, None, "quad object: None"),
    (1, None, "quad subject: None"),
    (2, None, "quad predicate: None"),
    (3, 10**5000, f"at most {MAX_DIGITS} digits"),
    (3, -(10**MAX_DIGITS), f"at most {MAX_DIGITS} digits"),
    (3, Decimal("1E+5000"), "xsd:decimal is written with at most"),
    (3, Decimal("1E-5000"), "xsd:decimal is written with at most"),
    (3, Decimal("NaN"), "finite"),
    (3, Decimal("-Infinity"), "finite"),
    (3, Literal("x", lang="not a tag"), "is not a language tag"),
    (3, Literal("x", lang="toolongsubtag"), "is not a language tag"),
    (3, Literal("x", "xsd:not an iri"), "its datatype"),
    (3, Literal("x", "integer"), "its datatype 'integer': an IRI needs a scheme"),
    (3, Literal("x", RDF_LANGSTRING), "needs a language tag"),
]


@pytest.fixture
def repo(tmp_path):
    repo = fstore.open(tmp_path)
    with repo.transaction("main", message="first") as tx:
        fstore.add(tx, G, S, P, "one")
    yield repo
    repo.close()


def state(repo) -> tuple:
    """What a refused write must leave as it was: the head, its state digest, the quads."""
    head = repo.head("main")
    quads = sorted(map(repr, fstore.quads(repo.at("main"), Var("g"), Var("s"), Var("p"), Var("o"))))
    return head, repo.commit(head).digest, quads, repo.verify()


def shown(value) -> str:
    """How a message names the value (an int too long for repr by its size)."""
    if type(value) is int and value.bit_length() > 14_000:
        return f"an integer of {value.bit_length()} bits"
    return repr(value)[:200]


@pytest.mark.parametrize("position, value, reason", BAD, ids=lambda v: shown(v)[:50])
@pytest.mark.parametrize("write", ["add", "add_many"])
def test_bad_terms_are_refused(repo, position, value, reason, write):
    quad = tuple(value if i == position else item for i, item in enumerate(GOOD_QUAD))
    before = state(repo)
    with pytest.raises(InvalidTermError) as caught:
        with repo.transaction("main", message="bad") as tx:
            fstore.add(tx, None, IRI("urn:ok"), P, 2)  # a good quad first: aborted with the rest
            if write == "add":
                fstore.add(tx, *quad)
            else:
                fstore.add_many(tx, [GOOD_QUAD, quad])
    message = str(caught.value)
    where = ("graph", "subject", "predicate", "object")[position]
    assert message.startswith(f"quad {where}: {shown(value)} is not a valid term: "), message
    assert reason in message, message
    assert caught.value.value == value or value != value or type(value) is Decimal
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, fstore.DataeError)
    assert state(repo) == before


GOOD = [
    IRI("http://example.org/a%20b#frag"),
    IRI("urn:isbn:0451450523"),
    IRI("http://例え.jp/ÿ/δ"),
    IRI("mailto:ann@example.org"),
    Literal("x", lang="en-GB"),
    Literal("x", lang="zh-Hant-TW"),
    Literal("05", XSD_INTEGER),
    10**(MAX_DIGITS - 1),
    -(10**MAX_DIGITS - 1),
    Decimal("123456789.123456789"),
    float("nan"),
    b"\x00bytes",
    "text with spaces, <> and \x00",
]


@pytest.mark.parametrize("value", GOOD, ids=lambda v: repr(v)[:40])
def test_good_terms_round_trip(repo, value):
    with repo.transaction("main", message="good") as tx:
        fstore.add(tx, None, S, P, value)
    stored = {q[3] for q in fstore.quads(repo.at("main"), None, S, P, Var("o"), terms=False)}
    assert value in stored or (value != value and any(v != v for v in stored))


def test_decimal_zero_and_trailing_zeros_are_stored_by_value(repo):
    """XSD: a decimal is a number; -0 is 0 and 1.50 is 1.5 (canonical forms 0.0, 1.5)."""
    with repo.transaction("main", message="decimals") as tx:
        fstore.add(tx, None, S, P, Decimal("-0"))
        fstore.add(tx, None, S, P, Decimal("1.50"))
    objects = sorted(b["o"] for b in fstore.from_(repo.at("main"), None, S, P, Var("o")))
    assert [o.lexical for o in objects] == ["0.0", "1.5"]
    assert [type(o.value) for o in objects] == [Decimal, Decimal]


def test_removing_takes_any_value(repo):
    """A quad stored before these checks can still be removed: rm checks nothing more."""
    with repo.transaction("main", message="rm") as tx:
        fstore.rm(tx, None, S, P, IRI("not an iri"))


def test_literal_with_a_language_and_a_datatype():
    with pytest.raises(InvalidTermError, match="language tag or a datatype, not both"):
        Literal("chat", XSD_INTEGER, lang="fr")
    assert Literal("chat", RDF_LANGSTRING, lang="fr") == Literal("chat", lang="fr")


def test_check_iri_alone():
    check_iri("http://example.org/")
    with pytest.raises(InvalidTermError, match="needs a scheme"):
        check_iri("//example.org/")


def test_unpackable_values_keep_their_error(repo):
    with pytest.raises(PackError):
        with repo.transaction("main", message="bad") as tx:
            fstore.add(tx, None, S, P, object())


# -- merge resolutions: the objects a policy returns enter the store as add's do -----------

BAD_OBJECTS = [(value, "a term is required" if value is None else reason) for position, value, reason in BAD if position == 3]


def diverged(repo) -> None:
    """Make branch "b" and "main" both change the objects of (G, S, P): a conflict."""
    repo.branch("b")
    for branch in ("main", "b"):
        with repo.transaction(branch, message=branch) as tx:
            fstore.rm(tx, G, S, P, "one")
            fstore.add(tx, G, S, P, branch)


@pytest.mark.parametrize("value, reason", BAD_OBJECTS, ids=lambda v: shown(v)[:50])
def test_merge_resolutions_are_checked(repo, value, reason):
    diverged(repo)
    before = state(repo)
    with pytest.raises(InvalidTermError) as caught:
        repo.merge("main", "b", policy=lambda conflict: ["kept", value])
    message = str(caught.value)
    assert message.startswith("merge resolution of "), message
    assert f"{shown(value)} is not a valid term: " in message and reason in message, message
    assert state(repo) == before


def test_stored_resolutions_are_checked_when_the_merge_continues(repo):
    diverged(repo)
    with pytest.raises(fstore.ConflictsRecorded) as stopped:
        repo.merge("main", "b", policy="record")
    (item,) = stopped.value.items
    before = state(repo)
    repo.resolve_with(item.key, [IRI("not an iri")])
    with pytest.raises(InvalidTermError, match="IRI\\('not an iri'\\) is not a valid term: an IRI needs a scheme"):
        repo.merge_continue()
    assert state(repo) == before and repo.merge_state() is not None  # nothing written: settle it again
    repo.resolve_with(item.key, [IRI("urn:fine")])
    merged = repo.merge_continue()
    assert [q[3] for q in fstore.quads(repo.at(merged), G, S, P, Var("o"))] == [IRI("urn:fine")]


def test_a_resolution_may_keep_what_a_side_already_holds(repo):
    """A quad stored before these checks stays mergeable, as it stays removable: a
    resolution only refuses objects it brings in."""
    legacy = IRI("not an iri")
    diverged(repo)
    with repo.transaction("main", message="legacy") as tx:
        tx._intend((G, S, P, legacy), True)  # as a store written before the checks holds it
    merged = repo.merge("main", "b", policy=lambda conflict: conflict.ours)
    assert {q[3] for q in fstore.quads(repo.at(merged), G, S, P, Var("o"))} == {Literal("main"), legacy}
