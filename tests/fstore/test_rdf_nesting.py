"""Deeply nested RDF input never crashes the process (issue 24).

pyoxigraph's JSON-LD parser recursed into a stack overflow (exit 139) on a document nested
4,000 objects deep. Each syntax fstore.rdf reads is parsed here at depths 1,000, 4,000 and
100,000 in a subprocess, so a crash fails the test instead of killing pytest. JSON-LD past
``MAX_JSON_DEPTH`` and RDF/XML past ``MAX_XML_DEPTH`` (whose parser took 155 s at 100,000
levels: time quadratic in the depth) are refused before the parser with an
``RdfNestingError``; Turtle and TriG parse (their parsers neither recurse nor slow down). The guard's verdict is checked against the
depth of random JSON values (an independent oracle: the nesting of the Python value that
``json.dumps`` wrote), read in chunks of every size.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fstore
from datae.context import EXIT_FATAL
from fstore.rdf import RdfNestingError, RdfSyntaxError, parse
from fstore.rdf_depth import MAX_JSON_DEPTH, MAX_XML_DEPTH, JsonDepthGuard
from tests.cli_fixtures import checkout_env

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

# Documents nested ``n`` levels deep, in each syntax and each way it nests.
SHAPES = {
    "jsonld-objects": ("jsonld", lambda n: '{"@id":"urn:s","urn:p":' * n + '"x"' + "}" * n),
    "jsonld-arrays": ("jsonld", lambda n: '{"@id":"urn:s","urn:p":' + "[" * n + '"x"' + "]" * n + "}"),
    "jsonld-lists": ("jsonld", lambda n: '{"@id":"urn:s","urn:p":' + '{"@list":[' * n + '"x"' + "]}" * n + "}"),
    "jsonld-context": ("jsonld", lambda n: '{"@context":' + '{"a":' * n + '"x"' + "}" * n + ',"@id":"urn:s"}'),
    "ttl-blank-nodes": ("ttl", lambda n: "<urn:s> <urn:p> " + "[ <urn:p> " * n + '"x"' + " ]" * n + " ."),
    "ttl-collections": ("ttl", lambda n: "<urn:s> <urn:p> " + "( " * n + '"x"' + " )" * n + " ."),
    "ttl-triple-terms": ("ttl", lambda n: "<urn:s> <urn:p> " + "<< <urn:s> <urn:p> " * n + '"x"' + " >>" * n + " ."),
    "trig-blank-nodes": ("trig", lambda n: "<urn:g> { <urn:s> <urn:p> " + "[ <urn:p> " * n + '"x"' + " ]" * n + " . }"),
    "trig-collections": ("trig", lambda n: "<urn:g> { <urn:s> <urn:p> " + "( " * n + '"x"' + " )" * n + " . }"),
    "rdfxml-nodes": ("rdf", lambda n: f'<rdf:RDF xmlns:rdf="{RDF}" xmlns:e="urn:e#"><rdf:Description rdf:about="urn:s">'
                     + "<e:p><rdf:Description>" * n + "<e:q>x</e:q>" + "</rdf:Description></e:p>" * n
                     + "</rdf:Description></rdf:RDF>"),
    "rdfxml-literal": ("rdf", lambda n: f'<rdf:RDF xmlns:rdf="{RDF}" xmlns:e="urn:e#"><rdf:Description rdf:about="urn:s">'
                       '<e:p rdf:parseType="Literal">' + "<a>" * n + "x" + "</a>" * n
                       + "</e:p></rdf:Description></rdf:RDF>"),
    # N-Triples and N-Quads cannot nest: a triple term there is refused as a syntax error
    "nt-triple-terms": ("nt", lambda n: "<urn:s> <urn:p> " + "<< <urn:s> <urn:p> " * n + '"x"' + " >>" * n + " ."),
    "nq-triple-terms": ("nq", lambda n: "<urn:s> <urn:p> " + "<< <urn:s> <urn:p> " * n + '"x"' + " >>" * n + " <urn:g> ."),
}

CHILD = textwrap.dedent("""
    import sys, threading
    import fstore.rdf
    data = sys.stdin.buffer.read()
    def run():
        try:
            print(len(list(fstore.rdf.parse(data, sys.argv[1]))))
        except fstore.rdf.RdfSyntaxError as exc:
            print(type(exc).__name__)
    threading.stack_size(int(sys.argv[2]))  # a thread's stack: smaller than the main thread's
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
""")


def _parse_in_child(fmt: str, document: str, stack: int = 8 << 20) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHILD, fmt, str(stack)], input=document.encode(), capture_output=True,
                          env=checkout_env(), timeout=300)


@pytest.mark.parametrize("depth", [1000, 4000, 100_000])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_deep_nesting_never_crashes(shape, depth):
    fmt, make = SHAPES[shape]
    child = _parse_in_child(fmt, make(depth))
    assert child.returncode == 0, f"{shape} at depth {depth}: exit {child.returncode} {child.stderr.decode()[-300:]}"
    said = child.stdout.decode().strip()
    if fmt in ("jsonld", "rdf"):  # refused before the parser
        assert said == "RdfNestingError"
    elif fmt in ("nt", "nq") or shape.endswith("triple-terms"):  # datae stores no triple terms
        assert said == "RdfSyntaxError"
    else:
        assert said.isdigit() and int(said) >= 1


def test_json_ld_at_the_limit_parses_in_a_small_stack():
    """The limit leaves room: a document nested exactly ``MAX_JSON_DEPTH`` objects deep
    parses in a thread with a 512 KiB stack (pyoxigraph takes about 2.5 KiB a level)."""
    # the value object "x" sits one level inside the innermost node object
    nodes = MAX_JSON_DEPTH
    document = '{"@id":"urn:s","urn:p":' * nodes + '"x"' + "}" * nodes
    child = _parse_in_child("jsonld", document, 512 << 10)
    assert child.returncode == 0 and child.stdout.decode().strip() == str(nodes)
    child = _parse_in_child("jsonld", '{"@id":"urn:s","urn:p":' * (nodes + 1) + '"x"' + "}" * (nodes + 1), 512 << 10)
    assert child.returncode == 0 and child.stdout.decode().strip() == "RdfNestingError"


def test_refusal_names_where_and_is_a_syntax_error(tmp_path):
    document = ('{\n "@id": "urn:s",\n "urn:p": "é[[[{{{\\"",\n "urn:q": ' + "[" * (MAX_JSON_DEPTH + 5) + "1"
                + "]" * (MAX_JSON_DEPTH + 5) + "}")
    with pytest.raises(RdfNestingError, match=rf"deep\.jsonld: JSON nested deeper than {MAX_JSON_DEPTH} levels "
                                              r"at line 4, column 138") as caught:
        (tmp_path / "deep.jsonld").write_text(document, encoding="utf-8")
        list(parse(tmp_path / "deep.jsonld"))
    assert isinstance(caught.value, RdfSyntaxError) and (caught.value.line, caught.value.column) == (4, 138)
    assert document.splitlines()[3][137] == "["


def test_rdf_xml_refusal_names_where():
    document = SHAPES["rdfxml-nodes"][1](MAX_XML_DEPTH)  # the root and its description are two levels more
    with pytest.raises(RdfNestingError, match=f"nested deeper than {MAX_XML_DEPTH} levels at line 1, column") as caught:
        list(parse(document.encode(), "rdf"))
    column = caught.value.column
    assert document[column - 1] == "<" and document[:column - 1].count("<e:p>") == (MAX_XML_DEPTH - 1) // 2
    shallow = SHAPES["rdfxml-nodes"][1](MAX_XML_DEPTH // 2 - 2)  # 2 + 2 * 126 = 254 levels: parses
    assert len(list(parse(shallow.encode(), "rdf"))) == MAX_XML_DEPTH // 2 - 1


def _depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


_text = st.text(alphabet=st.sampled_from(list('ab{}[]"\\\n\té€𝄞 ')), max_size=8)
_json = st.recursive(st.none() | st.integers() | _text,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                     max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(value=_json, limit=st.integers(0, 8), chunk=st.integers(1, 40), indent=st.sampled_from([None, 1]),
       ascii_only=st.booleans())
def test_guard_agrees_with_the_depth_of_the_value(value, limit, chunk, indent, ascii_only):
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    data = text.encode()
    guard = JsonDepthGuard(io.BytesIO(data), "v.json", limit, chunk=chunk)
    try:
        read = b"".join(iter(lambda: guard.read(7), b""))
    except RdfNestingError as exc:
        assert _depth(value) > limit
        assert text.splitlines()[exc.line - 1][exc.column - 1] in "{["
        return
    assert _depth(value) <= limit and read == data


def test_cli_import_refuses_deep_json_ld(tmp_path):
    """``datae import`` (in a subprocess: before the guard it died of a segfault)."""
    deep = tmp_path / "deep.jsonld"
    deep.write_text(SHAPES["jsonld-objects"][1](4000))
    fstore.open(tmp_path / "repo").close()
    child = subprocess.run([sys.executable, "-m", "datae", "--repo", str(tmp_path / "repo"), "import", str(deep),
                            "-m", "deep"], capture_output=True, env=checkout_env(), timeout=300)
    err = child.stderr.decode()
    assert child.returncode == EXIT_FATAL and err.count("\n") == 1, (child.returncode, err[-300:])
    assert err.startswith("datae: error: ") and f"nested deeper than {MAX_JSON_DEPTH} levels at line 1" in err
    with fstore.open(tmp_path / "repo") as repo:
        assert repo.head("main") is None
