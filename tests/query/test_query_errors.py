"""Bad input: syntax errors name line, column, token and what was expected; an unknown
prefix is a typed error; type errors inside expressions follow SPARQL (a FILTER error
rejects the row, a BIND error leaves the variable unbound, ``||`` / ``&&`` absorb errors
where the truth tables say so)."""

from __future__ import annotations


import pytest


from tests.query_fixtures import fstore_view

from nstore.errors import DataeError
from query import execute, parse_query
from query.errors import QueryError, QuerySyntaxError, UnknownPrefixError, UnsupportedFeatureError
from nstore.terms import XSD_INTEGER, IRI, Literal

EX = "http://ex/"
P = "PREFIX : <http://ex/>\n"


def _data() -> list:
    return [
        (None, IRI(EX + "a"), IRI(EX + "v"), Literal("1", XSD_INTEGER)),
        (None, IRI(EX + "b"), IRI(EX + "v"), Literal("x")),
        (None, IRI(EX + "c"), IRI(EX + "v"), IRI(EX + "thing")),
    ]


def _select(text: str) -> list[dict]:
    with fstore_view(_data()) as view:
        return [dict(row) for row in execute(view, text)]


# ---------------------------------------------------------------------------- syntax


def test_syntax_error_names_line_column_token_and_expected() -> None:
    text = "SELECT * WHERE {\n  ?s ?p\n}"
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(text)
    error = info.value
    assert (error.line, error.column) == (3, 1)
    assert error.token == "}"
    assert "a variable" in error.expected and "an IRI" in error.expected
    assert str(error).startswith("line 3, column 1: unexpected '}'")


def test_misspelled_keyword() -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query("SELEKT ?x WHERE { ?x ?p ?o }")
    assert (info.value.line, info.value.column) == (1, 1)
    assert "'SELECT'" in info.value.expected


def test_unexpected_end_of_query() -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query("SELECT ?x WHERE {\n ?x ?p ?o ")
    error = info.value
    assert "end of query" in str(error)
    assert error.line == 2
    assert "'}'" in error.expected


def test_bad_character() -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query("SELECT * WHERE { ?s ?p 'unterminated }")
    assert (info.value.line, info.value.column) == (1, 24)


def test_error_column_on_later_line() -> None:
    text = P + "SELECT ?x\nWHERE { ?x :p ?y .\n        FILTER(?y > ) }"
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(text)
    assert (info.value.line, info.value.column) == (4, 21)
    assert info.value.token == ")"


def test_unknown_prefix_is_typed_and_positioned() -> None:
    with pytest.raises(UnknownPrefixError) as info:
        parse_query("PREFIX ex: <http://ex/>\nSELECT * WHERE { ?s foaf:name ?n }")
    error = info.value
    assert error.prefix == "foaf"
    assert (error.line, error.column) == (2, 21)
    assert "foaf:" in str(error)
    assert isinstance(error, QuerySyntaxError) and isinstance(error, DataeError)


def test_errors_are_datae_errors_and_value_errors() -> None:
    with pytest.raises(ValueError):
        parse_query("ASK {")
    assert issubclass(QuerySyntaxError, QueryError) and issubclass(QueryError, DataeError)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("SELECT ?x (COUNT(*) AS ?n) WHERE { ?x ?p ?o }", "?x is projected but is neither grouped"),
        ("SELECT * WHERE { ?x ?p ?o } GROUP BY ?x", "SELECT * cannot be used with GROUP BY"),
        ("SELECT ?x WHERE { ?x ?p ?o BIND(1 AS ?x) }", "BIND assigns ?x"),
        ("SELECT ?x ?x WHERE { ?x ?p ?o }", "projected twice"),
        ("SELECT * WHERE { _:a ?p ?o OPTIONAL { _:a ?q ?r } }", "blank node _:a"),
        ("SELECT (SUM(COUNT(?x)) AS ?n) WHERE { ?x ?p ?o }", "nested"),
    ],
)
def test_static_errors(text: str, fragment: str) -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(text)
    assert fragment in str(info.value)


def test_service_is_reported_as_unsupported() -> None:
    with fstore_view(_data()) as view:
        with pytest.raises(UnsupportedFeatureError) as info:
            execute(view, "SELECT * WHERE { SERVICE <http://remote/> { ?s ?p ?o } }")
    assert info.value.feature == "SERVICE"


# ---------------------------------------------------------------------------- expression errors


def test_type_error_in_filter_rejects_only_that_row() -> None:
    rows = _select(P + "SELECT ?s WHERE { ?s :v ?o FILTER(?o + 1 > 1) }")
    assert rows == [{"s": IRI(EX + "a")}]


def test_unbound_variable_in_filter_is_an_error_not_an_exception() -> None:
    assert _select(P + "SELECT ?s WHERE { ?s :v ?o FILTER(?nothing > 1) }") == []


def test_error_or_true_is_true_and_error_and_false_is_false() -> None:
    everyone = _select(P + "SELECT ?s WHERE { ?s :v ?o FILTER(?o + 1 > 0 || true) }")
    assert len(everyone) == 3
    nobody = _select(P + "SELECT ?s WHERE { ?s :v ?o FILTER(!(?o + 1 > 0 && false)) }")
    assert len(nobody) == 3  # error && false is false, so its negation is true for all
    errors = _select(P + "SELECT ?s WHERE { ?s :v ?o FILTER(!(?o + 1 > 0)) }")
    assert errors == []  # 1+1 > 0 is true; the others are errors, and !error is an error


def test_bind_error_leaves_variable_unbound() -> None:
    rows = _select(P + "SELECT ?s ?n WHERE { ?s :v ?o BIND(?o * 2 AS ?n) } ORDER BY ?s")
    assert rows[0] == {"s": IRI(EX + "a"), "n": Literal("2", XSD_INTEGER)}
    assert rows[1] == {"s": IRI(EX + "b")} and rows[2] == {"s": IRI(EX + "c")}


def test_equality_of_unknown_types_is_an_error_but_iri_vs_literal_is_false() -> None:
    rows = _select(P + 'SELECT ?s WHERE { ?s :v ?o FILTER(?o != "x"^^<http://ex/dt>) }')
    # 1 and "x" are literals of known types, different from a literal of an unknown type:
    # SPARQL cannot tell whether they are equal (error); the IRI is simply different.
    assert rows == [{"s": IRI(EX + "c")}]


def test_numeric_promotion_and_division() -> None:
    rows = _select(
        "SELECT (1 + 2.5 AS ?d) (1 / 2 AS ?q) (2 * 1.5e0 AS ?f) (7 - 2 AS ?i) WHERE {}"
    )
    (row,) = rows
    assert row["d"] == Literal("3.5", "http://www.w3.org/2001/XMLSchema#decimal")
    assert row["q"] == Literal("0.5", "http://www.w3.org/2001/XMLSchema#decimal")
    assert row["f"].datatype == IRI("http://www.w3.org/2001/XMLSchema#double")
    assert row["i"] == Literal("5", XSD_INTEGER)


def test_division_by_zero_is_an_error_for_integers() -> None:
    (row,) = _select("SELECT (1 / 0 AS ?x) (1.0e0 / 0 AS ?y) WHERE {}")
    assert "x" not in row
    assert row["y"].lexical == "INF"


def test_unknown_function_is_an_error_value() -> None:
    assert _select(P + "SELECT ?s WHERE { ?s :v ?o FILTER(<http://ex/nofunction>(?o)) }") == []


def test_order_by_puts_unbound_then_blank_nodes_then_iris_then_literals() -> None:
    rows = _select(
        P + "SELECT ?x WHERE { VALUES ?x { 3 :z UNDEF \"a\" 1 } } ORDER BY ?x"
    )
    assert [r.get("x") for r in rows] == [None, IRI(EX + "z"), Literal("1", XSD_INTEGER), Literal("3", XSD_INTEGER), Literal("a")]


def _powers_of_ten(count: int) -> str:
    """BINDs of ?v0 = 1e20 and ?vN = ?v(N-1) squared (1e(20 * 2**N)): decimals beyond the
    exponent Python's decimal context allows (999,999) after 16 squarings."""
    binds = ["BIND(100000000000000000000.0 AS ?v0)"]
    binds += [f"BIND(?v{n - 1} * ?v{n - 1} AS ?v{n})" for n in range(1, count + 1)]
    return " ".join(binds)


def test_decimal_overflow_is_an_evaluation_error() -> None:
    # ?v15 is 1e655360; its square passes decimal's largest exponent: an error, so the
    # BIND leaves ?v16 unbound and the FILTER rejects the row (it once escaped as Overflow)
    (row,) = _select(f"SELECT ?v16 (BOUND(?v15) AS ?held) (ROUND(?v15 * ?v15) AS ?r) WHERE {{ {_powers_of_ten(16)} }}")
    assert row == {"held": Literal("true", "http://www.w3.org/2001/XMLSchema#boolean")}
    assert _select(f"SELECT ?v15 WHERE {{ {_powers_of_ten(15)} FILTER(?v15 * ?v15 > 0) }}") == []


def test_a_decimal_sum_that_overflows_is_an_evaluation_error() -> None:
    # 9e999999 is the largest power of ten times 9 decimal holds; two of them do not fit
    nine = "?v15 * ?v14 * ?v9 * ?v8 * ?v6 * ?v3 * ?v2 * ?v1 * ?v0 * 90000000000000000000.0"
    (row,) = _select(f"SELECT (SUM(?x) AS ?sum) (AVG(?x) AS ?avg) (COUNT(?x) AS ?n) (MAX(STRLEN(STR(?x))) AS ?digits) "
                     f"WHERE {{ VALUES ?k {{ 1 2 }} {_powers_of_ten(15)} BIND({nine} AS ?x) }}")
    assert row == {"n": Literal("2", XSD_INTEGER), "digits": Literal("1000002", XSD_INTEGER)}


@pytest.mark.parametrize("function", ["ABS", "ROUND"])
def test_rounding_a_decimal_past_the_largest_is_an_evaluation_error(function: str) -> None:
    # 999...9.9 with a million nines: ABS and ROUND round it to decimal's 28 digits, which
    # gives 1e1000000, past the largest exponent (CEIL and FLOOR are exact and hold it)
    nine = "?v15 * ?v14 * ?v9 * ?v8 * ?v6 * ?v3 * ?v2 * ?v1 * ?v0 * 90000000000000000000.0"
    nines = f"STRDT(REPLACE(STR({nine}), '0', '9'), <http://www.w3.org/2001/XMLSchema#decimal>)"
    (row,) = _select(f"SELECT ?r (STRLEN(STR(?n)) AS ?digits) WHERE {{ {_powers_of_ten(15)} BIND({nines} AS ?n) "
                     f"BIND({function}(?n) AS ?r) }}")
    assert row == {"digits": Literal("1000002", XSD_INTEGER)}
