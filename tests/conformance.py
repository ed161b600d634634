"""The W3C SPARQL 1.0 / 1.1 test suites, run against datae (shared by the pytest harness
``tests/test_sparql_w3c.py`` and the report ``python -m tests.conformance_report``).

The suites come from ``get_sparql_suite.sh`` (cached in ``.cache/sparql-suite``). For each
test of a manifest: load ``qt:data`` into the default graph and ``qt:graphData`` (and any
``FROM`` / ``FROM NAMED`` document) into named graphs of a fresh datae store (fstore),
run the query through ``query.execute`` and compare with the expected result the way the
suite says: result sets as multisets with blank nodes matched up to a bijection (in order
for the ORDER BY keys), graphs by isomorphism (rdflib), booleans, CSV text. Syntax tests
check that the parser accepts or rejects the query (``parse_update`` for update syntax).

Update evaluation tests load ``ut:data`` / ``ut:graphData`` into a fresh store, run the
request as one commit (``query.Session``, as ``datae query`` does) and compare the whole
resulting dataset with the expected one (``mf:result``'s ``ut:data`` / ``ut:graphData``) by
isomorphism, blank nodes shared across graphs included.

Each test gets a category (its directory, e.g. ``sparql11/aggregates``) and a status:
``pass``, ``fail`` (with the reason) or ``skip`` (naming the feature it needs).
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import tempfile
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import unquote, urlparse

import pyoxigraph as ox

ROOT = Path(__file__).resolve().parent.parent

from query import Result, execute, parse_query
from query.parser import parse_update
from query.errors import QueryError, QuerySyntaxError, UnsupportedFeatureError
from nstore.terms import NUMERIC_TYPES, XSD_BOOLEAN, BNode, IRI, Literal
from query.errors import numeric
from tests.query_fixtures import from_ox
from tests.locations import SHARED, missing, shared

__all__ = ["SUITE_DIR", "Case", "ensure_suite", "require_suite", "collect", "run_case", "Outcome", "is_update"]

SUITE_DIR = ROOT / ".cache" / "sparql-suite"
FETCH_SCRIPT = SHARED / "scripts" / "get_sparql_suite.sh"

MF = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
QT = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#"
DAWGT = "http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
RS = "http://www.w3.org/2001/sw/DataAccess/tests/result-set#"
UT = "http://www.w3.org/2009/sparql/tests/test-update#"
SD = "http://www.w3.org/ns/sparql-service-description#"

MANIFESTS = [
    "dawg-data-r2/manifest-evaluation.ttl",
    "dawg-data-r2/manifest-syntax.ttl",
    "sparql11/manifest-all.ttl",
]

EVAL_TYPES = {"QueryEvaluationTest", "CSVResultFormatTest"}
SYNTAX_TYPES = {"PositiveSyntaxTest", "PositiveSyntaxTest11", "NegativeSyntaxTest", "NegativeSyntaxTest11"}
UPDATE_TYPES = {"UpdateEvaluationTest", "PositiveUpdateSyntaxTest11", "NegativeUpdateSyntaxTest11"}
UPDATE_SYNTAX_TYPES = {"PositiveUpdateSyntaxTest11", "NegativeUpdateSyntaxTest11"}

# Directories whose tests need a feature outside datae's query layer.
SKIP_DIRS = {
    "entailment": "entailment regimes (RDFS/OWL/D inference)",
    "service": "SERVICE (federated query)",
    "syntax-fed": "SERVICE (federated query)",
    "protocol": "the SPARQL protocol over HTTP: run against datae serve by tests/test_sparql_protocol.py",
    "http-rdf-update": "the graph store protocol (HTTP)",
    "service-description": "service descriptions",
}

# Tests whose expected outcome contradicts the SPARQL 1.1 grammar datae implements.
_RDF11_STRING = "RDF 1.1: \"x\"^^xsd:string is the simple literal \"x\" (the test expects RDF 1.0's two terms)"
KNOWN_SPEC_DIFFERENCES = {
    "dawg-data-r2/basic/term-6": "SPARQL 1.0 grammar: '456.' is a decimal in 1.0, an integer then '.' in 1.1",
    "dawg-data-r2/basic/term-7": "SPARQL 1.0 grammar: '456.' is a decimal in 1.0, an integer then '.' in 1.1",
    "dawg-data-r2/syntax-sparql1/syntax-lit-08": "SPARQL 1.0 grammar: '123.' is a decimal in 1.0, an integer then '.' in 1.1",
    "dawg-data-r2/expr-builtin/dawg-datatype-2": "SPARQL 1.0: DATATYPE of a language-tagged literal is an error; SPARQL 1.1 gives rdf:langString",
    "dawg-data-r2/distinct/distinct-2": _RDF11_STRING,
    "dawg-data-r2/distinct/distinct-9": _RDF11_STRING,
    "dawg-data-r2/reduced/reduced-2": _RDF11_STRING,
    "sparql11/functions/strdt03": _RDF11_STRING,
    "sparql11/functions/strlang03": _RDF11_STRING,
    "dawg-data-r2/optional-filter/dawg-optional-filter-005-simplified": "contradicts dawg-optional-filter-005-not-simplified (which passes): SPARQL 1.1's translation (18.2.2) does not flatten { { } } before scoping filters",
    "sparql11/aggregates/agg-empty-group": "GROUP BY over no solutions: the SPARQL 1.1 algebra (18.5.1) and pyoxigraph give no group; the test expects one",
}


# ---------------------------------------------------------------------------- suite


def ensure_suite() -> Path | None:
    """The suite directory, downloading it with the shared script if it is missing."""
    target = SUITE_DIR / "w3c"
    if (target / "sparql11" / "manifest-all.ttl").exists():
        return target
    if not FETCH_SCRIPT.exists():
        return None
    SUITE_DIR.mkdir(parents=True, exist_ok=True)
    # pytest-xdist's workers each collect this module: one downloads, the others wait on
    # the lock and then find the suite there.
    with open(SUITE_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / "sparql11" / "manifest-all.ttl").exists():
            try:
                subprocess.run(["bash", str(FETCH_SCRIPT), str(SUITE_DIR)], check=True, timeout=600, capture_output=True)
            except (subprocess.SubprocessError, OSError):
                return None
    return target if (target / "sparql11" / "manifest-all.ttl").exists() else None


def require_suite() -> Path:
    """The suite directory for a test (downloaded first if missing, whichever test asks
    first); the test, or at import its module, is skipped naming what is missing, or
    failed under ``DATAE_REQUIRE_SHARED=1`` (``tests.locations.missing``)."""
    suite = ensure_suite()
    if suite is None:
        shared("scripts", FETCH_SCRIPT.name)  # no script beside a user's clone: says so
        missing(f"the W3C SPARQL suite is not in {SUITE_DIR} and {FETCH_SCRIPT} could not fetch it")
    return suite


@dataclass
class Case:
    """One test of a manifest."""

    id: str  # e.g. "sparql11/aggregates/agg01"
    category: str  # e.g. "sparql11/aggregates"
    kind: str  # the mf: type's local name
    name: str
    query: Path | None
    data: list = field(default_factory=list)
    graph_data: list = field(default_factory=list)  # (graph IRI, path)
    result: Path | None = None
    approval: str = ""
    extra: dict = field(default_factory=dict)


def _path(term: Any) -> Path:
    return Path(unquote(urlparse(term.value).path))


def _objects(store: ox.Store, subject: Any, predicate: str) -> list:
    return [q.object for q in store.quads_for_pattern(subject, ox.NamedNode(predicate), None)]


def _one(store: ox.Store, subject: Any, predicate: str) -> Any:
    found = _objects(store, subject, predicate)
    return found[0] if found else None


def _list(store: ox.Store, head: Any) -> list:
    items = []
    nil = ox.NamedNode(RDF + "nil")
    while head is not None and head != nil:
        first = _one(store, head, RDF + "first")
        if first is not None:
            items.append(first)
        head = _one(store, head, RDF + "rest")
    return items


def _load_manifest(path: Path) -> ox.Store:
    store = ox.Store()
    store.load(path=str(path), format=ox.RdfFormat.TURTLE, base_iri=path.as_uri())
    return store


def collect(suite: Path) -> list[Case]:
    """Every test of the manifests, in manifest order."""
    cases: list[Case] = []
    seen: set[str] = set()
    for manifest in MANIFESTS:
        _collect(suite / manifest, suite, cases, seen)
    return cases


def _collect(path: Path, suite: Path, cases: list, seen: set) -> None:
    if str(path) in seen or not path.exists():
        return
    seen.add(str(path))
    store = _load_manifest(path)
    me = ox.NamedNode(path.as_uri())
    for included in _objects(store, me, MF + "include"):
        for item in _list(store, included):
            _collect(_path(item), suite, cases, seen)
    category = str(path.parent.relative_to(suite))
    for entries in _objects(store, me, MF + "entries"):
        for entry in _list(store, entries):
            case = _case(store, entry, category)
            if case is not None:
                cases.append(case)


def _case(store: ox.Store, entry: Any, category: str) -> Case | None:
    kinds = [t.value.split("#")[-1] for t in _objects(store, entry, RDF + "type") if t.value.startswith(MF)]
    kind = kinds[0] if kinds else "Unknown"
    local = entry.value.split("#")[-1] if isinstance(entry, ox.NamedNode) else str(entry)
    name_term = _one(store, entry, MF + "name")
    approval = _one(store, entry, DAWGT + "approval")
    case = Case(
        id=f"{category}/{local}",
        category=category,
        kind=kind,
        name=name_term.value if name_term is not None else local,
        query=None,
        approval=approval.value.split("#")[-1] if approval is not None else "",
    )
    action = _one(store, entry, MF + "action")
    if action is None:
        return case
    if isinstance(action, ox.NamedNode):
        case.query = _path(action)
    else:
        query = _one(store, action, QT + "query") or _one(store, action, UT + "request")
        case.query = _path(query) if query is not None else None
        case.data = [_path(d) for d in _objects(store, action, QT + "data") + _objects(store, action, UT + "data")]
        case.graph_data = [(g.value, _path(g)) for g in _objects(store, action, QT + "graphData")]
        case.graph_data += _update_graphs(store, action)
        if _objects(store, action, QT + "serviceData"):
            case.extra["service"] = True
        if _objects(store, action, SD + "entailmentRegime") or _objects(store, entry, SD + "entailmentRegime"):
            case.extra["entailment"] = True
    result = _one(store, entry, MF + "result")
    if isinstance(result, ox.NamedNode):
        case.result = _path(result)
    elif result is not None and case.kind == "UpdateEvaluationTest":
        case.extra["post_data"] = [_path(d) for d in _objects(store, result, UT + "data")]
        case.extra["post_graphs"] = _update_graphs(store, result)
    requires = [r.value.split("#")[-1] for r in _objects(store, entry, MF + "requires")]
    if requires:
        case.extra["requires"] = requires
    return case


def is_update(case: Case) -> bool:
    """Whether a test is about SPARQL Update (its type, or an update request file)."""
    return case.kind in UPDATE_TYPES or (case.query is not None and case.query.suffix == ".ru")


def _update_graphs(store: ox.Store, node: Any) -> list:
    """``ut:graphData [ ut:graph <file> ; rdfs:label "graph IRI" ]`` as (graph IRI, path)."""
    found = []
    for entry in _objects(store, node, UT + "graphData"):
        graph = _one(store, entry, UT + "graph")
        label = _one(store, entry, RDFS + "label")
        if graph is not None:
            found.append((label.value if label is not None else graph.value, _path(graph)))
    return found


# ---------------------------------------------------------------------------- running


@dataclass
class Outcome:
    status: str  # "pass" | "fail" | "skip"
    reason: str = ""


def skip_reason(case: Case) -> str | None:
    """Why a test is outside datae's query layer, or None if it should run."""
    if case.id in KNOWN_SPEC_DIFFERENCES:
        return KNOWN_SPEC_DIFFERENCES[case.id]
    if case.approval in ("Withdrawn", "NotApproved", "Rejected"):
        return f"test {case.approval.lower()} by the working group"
    top = case.category.split("/")[-1]
    if top in SKIP_DIRS:
        return SKIP_DIRS[top]
    if case.extra.get("entailment"):
        return "entailment regimes (RDFS/OWL/D inference)"
    if case.extra.get("service"):
        return "SERVICE (federated query)"
    if case.kind not in EVAL_TYPES | SYNTAX_TYPES | UPDATE_TYPES:
        return f"test type {case.kind}"
    return None


def run_case(case: Case) -> Outcome:
    """Run one test; never raises."""
    reason = skip_reason(case)
    if reason is not None:
        return Outcome("skip", reason)
    try:
        if case.kind in SYNTAX_TYPES | UPDATE_SYNTAX_TYPES:
            return _run_syntax(case)
        if case.kind == "UpdateEvaluationTest":
            return _run_update(case)
        return _run_eval(case)
    except UnsupportedFeatureError as error:
        return Outcome("skip", error.feature)
    except Exception as error:  # a crash is a failure, with where it happened
        tail = traceback.format_exception(type(error), error, error.__traceback__)[-3:]
        return Outcome("fail", f"{type(error).__name__}: {error}\n{''.join(tail)}")


def _run_syntax(case: Case) -> Outcome:
    text = case.query.read_text(encoding="utf-8")
    positive = case.kind.startswith("Positive")
    parse = parse_update if case.kind in UPDATE_SYNTAX_TYPES or case.query.suffix == ".ru" else parse_query
    try:
        parse(text, base=case.query.as_uri())
    except UnsupportedFeatureError as error:
        return Outcome("skip", error.feature)
    except QuerySyntaxError as error:
        if positive:
            return Outcome("fail", f"rejected a valid query: {error}")
        return Outcome("pass")
    if positive:
        return Outcome("pass")
    return Outcome("fail", "accepted an invalid query")


_RDF_FORMATS = {
    ".ttl": ox.RdfFormat.TURTLE,
    ".n3": ox.RdfFormat.N3,
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".rdf": ox.RdfFormat.RDF_XML,
    ".nq": ox.RdfFormat.N_QUADS,
    ".trig": ox.RdfFormat.TRIG,
}


_FILES_READ = [0]


def read_rdf(path: Path) -> list[tuple]:
    """The triples of an RDF file as datae terms (blank nodes renamed apart per file)."""
    fmt = _RDF_FORMATS.get(path.suffix.lower(), ox.RdfFormat.TURTLE)
    _FILES_READ[0] += 1
    prefix = f"f{_FILES_READ[0]}x"

    def term(t: Any) -> Any:
        value = from_ox(t)
        return BNode(prefix + value.id) if type(value) is BNode else value

    return [(term(q.subject), term(q.predicate), term(q.object)) for q in ox.parse(path=str(path), format=fmt, base_iri=path.as_uri())]


def _load(case: Case, text: str) -> tuple[Any, Any, str]:
    """A fresh fstore repository holding the test's dataset, a view of it, its folder."""
    import fstore

    quads: list[tuple] = []
    for path in case.data:
        quads.extend((None, s, p, o) for s, p, o in read_rdf(path))
    graphs = list(case.graph_data)
    try:
        dataset = parse_query(text, base=case.query.as_uri()).dataset
        for iri in dataset.default + dataset.named:
            graphs.append((iri.value, _path(iri)))
    except QueryError:
        pass
    loaded = set()
    for iri, path in graphs:
        if iri in loaded or not path.exists():
            continue
        loaded.add(iri)
        quads.extend((IRI(iri), s, p, o) for s, p, o in read_rdf(path))
    folder = tempfile.mkdtemp(prefix="datae-w3c-")
    repo = fstore.open(folder)
    if quads:
        with repo.transaction("main", message=case.id, author="w3c") as tx:
            for quad in quads:
                fstore.add(tx, *quad)
    return repo, repo.at("main"), folder


def _dataset_quads(data: list, graphs: list) -> list[tuple]:
    quads = [(None, s, p, o) for path in data for s, p, o in read_rdf(path)]
    for iri, path in graphs:
        quads.extend((IRI(iri), s, p, o) for s, p, o in read_rdf(path))
    return quads


def _run_update(case: Case) -> Outcome:
    """Data in, the request as one commit, the resulting dataset compared as a whole."""
    import fstore
    from query import Session

    text = case.query.read_text(encoding="utf-8")
    folder = tempfile.mkdtemp(prefix="datae-w3c-")
    repo = fstore.open(folder)
    try:
        quads = _dataset_quads(case.data, case.graph_data)
        if quads:
            with repo.transaction("main", message=case.id, author="w3c") as tx:
                for quad in quads:
                    fstore.add(tx, *quad)
        request = parse_update(text, base=case.query.as_uri())
        Session(repo, author="w3c").update(request, text)
        view = repo.at("main")
        V = fstore.Var
        actual = [tuple(fstore.to_rdf(v) if v is not None else None for v in (b["g"], b["s"], b["p"], b["o"]))
                  for b in fstore.from_(view, V("g"), V("s"), V("p"), V("o"))]
        expected = _dataset_quads(case.extra.get("post_data", []), case.extra.get("post_graphs", []))
        return _compare_datasets(actual, expected)
    finally:
        repo.close()
        shutil.rmtree(folder, ignore_errors=True)


def _compare_datasets(actual: list, expected: list) -> Outcome:
    """Datasets equal up to blank-node renaming (one bijection across all graphs): each
    quad becomes a triple whose predicate also names the graph, then graph isomorphism."""
    from urllib.parse import quote

    def encode(quads: list) -> list:
        return [(s, IRI(f"urn:datae:graph:{quote(g.value if g is not None else '', safe='')}:{quote(p.value, safe='')}"), o)
                for g, s, p, o in quads]

    outcome = _compare_graph(encode(actual), encode(expected))
    if outcome.status == "pass":
        return outcome
    show = lambda quads: "\n".join(f"  {g} {s} {p} {o}" for g, s, p, o in sorted(quads, key=str)[:12])  # noqa: E731
    return Outcome("fail", f"datasets differ: got {len(actual)} quads, expected {len(expected)}\ngot:\n{show(actual)}\nexpected:\n{show(expected)}")


def _run_eval(case: Case) -> Outcome:
    text = case.query.read_text(encoding="utf-8")
    repo, view, folder = _load(case, text)
    try:
        result = execute(view, text, base=case.query.as_uri())
        query = parse_query(text, base=case.query.as_uri())
        if case.kind == "CSVResultFormatTest":
            return _compare_csv(result, case.result)
        expected = read_expected(case.result)
        return compare(result, expected, ordered_by=query.order_vars if _has_order(query) else ())
    finally:
        repo.close()
        shutil.rmtree(folder, ignore_errors=True)


def _has_order(query: Any) -> bool:
    from query.algebra import OrderBy

    node = query.pattern
    while node is not None:
        if type(node) is OrderBy:
            return True
        node = getattr(node, "pattern", None)
    return False


# ---------------------------------------------------------------------------- expected results


@dataclass
class Expected:
    kind: str  # "bindings" | "boolean" | "graph"
    vars: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    boolean: bool | None = None
    triples: list = field(default_factory=list)
    ordered: bool = False


def read_expected(path: Path) -> Expected:
    suffix = path.suffix.lower()
    formats = {
        ".srx": ox.QueryResultsFormat.XML,
        ".srj": ox.QueryResultsFormat.JSON,
        ".tsv": ox.QueryResultsFormat.TSV,
        ".csv": ox.QueryResultsFormat.CSV,
    }
    if suffix in formats:
        parsed = ox.parse_query_results(path=str(path), format=formats[suffix])
        if isinstance(parsed, ox.QueryBoolean):
            return Expected("boolean", boolean=bool(parsed))
        names = [v.value for v in parsed.variables]
        rows = []
        for solution in parsed:
            row = {}
            for name in names:
                value = solution[name]
                if value is not None:
                    row[name] = from_ox(value)
            rows.append(row)
        return Expected("bindings", names, rows, ordered=True)
    triples = read_rdf(path)
    return _from_graph(triples)


def _from_graph(triples: list) -> Expected:
    """A Turtle / RDF/XML expected result: an rs:ResultSet, or a graph (CONSTRUCT)."""
    result_set = [s for s, p, o in triples if p == IRI(RDF + "type") and o == IRI(RS + "ResultSet")]
    if not result_set:
        return Expected("graph", triples=triples)
    root = result_set[0]
    by_subject: dict = {}
    for s, p, o in triples:
        by_subject.setdefault(s, []).append((p, o))
    props = by_subject.get(root, [])
    for p, o in props:
        if p == IRI(RS + "boolean"):
            return Expected("boolean", boolean=o.lexical == "true")
    names = [o.lexical for p, o in props if p == IRI(RS + "resultVariable")]
    rows = []
    ordered = False
    for p, solution in props:
        if p != IRI(RS + "solution"):
            continue
        row = {}
        index = None
        for sp, so in by_subject.get(solution, []):
            if sp == IRI(RS + "binding"):
                var = value = None
                for bp, bo in by_subject.get(so, []):
                    if bp == IRI(RS + "variable"):
                        var = bo.lexical
                    elif bp == IRI(RS + "value"):
                        value = bo
                if var is not None and value is not None:
                    row[var] = value
            elif sp == IRI(RS + "index"):
                index = int(so.lexical)
                ordered = True
        rows.append((index if index is not None else 0, row))
    rows.sort(key=lambda pair: pair[0])
    return Expected("bindings", names, [r for _, r in rows], ordered=ordered)


# ---------------------------------------------------------------------------- comparison


def _norm(term: Any) -> Any:
    """A comparison key: numbers and booleans by datatype and value, other terms as they are."""
    if type(term) is Literal and term.datatype is not None:
        if term.datatype in NUMERIC_TYPES:
            try:
                return ("num", term.datatype.value, numeric(term)[1])
            except Exception:
                return term
        if term.datatype == XSD_BOOLEAN and term.lexical in ("1", "0", "true", "false"):
            return ("bool", term.lexical in ("1", "true"))
    return term


def _match_rows(actual: list[dict], expected: list[dict]) -> bool:
    """Multiset equality up to a bijection between blank nodes."""
    if len(actual) != len(expected):
        return False
    norm_a = [{k: _norm(v) for k, v in row.items()} for row in actual]
    norm_e = [{k: _norm(v) for k, v in row.items()} for row in expected]

    def has_bnode(row: dict) -> bool:
        return any(type(v) is BNode for v in row.values())

    plain_a = Counter(frozenset(r.items()) for r in norm_a if not has_bnode(r))
    plain_e = Counter(frozenset(r.items()) for r in norm_e if not has_bnode(r))
    if plain_a != plain_e:
        return False
    rest_a = [r for r in norm_a if has_bnode(r)]
    rest_e = [r for r in norm_e if has_bnode(r)]
    return _bijection(rest_a, rest_e, {}, {})


def _bijection(actual: list, expected: list, forward: dict, backward: dict) -> bool:
    if not expected:
        return not actual
    target = expected[0]
    for i, row in enumerate(actual):
        if row.keys() != target.keys():
            continue
        new_f, new_b = dict(forward), dict(backward)
        ok = True
        for key, value in target.items():
            mine = row[key]
            if type(value) is BNode or type(mine) is BNode:
                if type(value) is not BNode or type(mine) is not BNode:
                    ok = False
                    break
                if new_f.get(mine, value) != value or new_b.get(value, mine) != mine:
                    ok = False
                    break
                new_f[mine] = value
                new_b[value] = mine
            elif mine != value:
                ok = False
                break
        if ok and _bijection(actual[:i] + actual[i + 1 :], expected[1:], new_f, new_b):
            return True
    return False


def compare(result: Result, expected: Expected, *, ordered_by: tuple = ()) -> Outcome:
    if expected.kind == "boolean":
        if result.form != "ASK":
            return Outcome("fail", f"expected a boolean, got a {result.form} result")
        if bool(result.ask) == expected.boolean:
            return Outcome("pass")
        return Outcome("fail", f"ASK gave {result.ask}, expected {expected.boolean}")
    if expected.kind == "graph":
        return _compare_graph(result.triples if result.form in ("CONSTRUCT", "DESCRIBE") else [], expected.triples)
    rows = [{k: v for k, v in row.items()} for row in result]
    if not _match_rows(rows, expected.rows):
        return Outcome("fail", _diff(rows, expected.rows))
    if ordered_by and expected.ordered:
        keys = [k for k in ordered_by if any(k in r for r in expected.rows)]
        problem = _order_problem(rows, expected.rows, keys) if keys else None
        if problem:
            return Outcome("fail", f"solutions are right but not in the ORDER BY order ({problem}):\n" + _diff(rows, expected.rows))
    return Outcome("pass")


def _key_cmp(a: Any, b: Any) -> int | None:
    """SPARQL's order between two ORDER BY values, None where SPARQL leaves it undefined
    (blank nodes, literals of types ``<`` cannot compare)."""
    from query.expressions import compare as sparql_compare
    from query.errors import EvalError

    def rank(t: Any) -> int:
        return 0 if t is None else 1 if type(t) is BNode else 2 if type(t) is IRI else 3

    if a == b:
        return 0
    ra, rb = rank(a), rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == 1:
        return None
    if ra == 2:
        return -1 if a.value < b.value else 1
    try:
        result = sparql_compare(a, b)
    except EvalError:
        return None
    return None if result == 2 else result


def _order_problem(actual: list, expected: list, keys: list) -> str | None:
    """Every pair of expected solutions SPARQL orders strictly must keep its order in ours."""

    def key(row: dict) -> tuple:
        return tuple(row.get(k) for k in keys)

    mine = [tuple(_norm(v) for v in key(r)) for r in actual]
    first: dict = {}
    last: dict = {}
    for position, k in enumerate(mine):
        first.setdefault(k, position)
        last[k] = position
    theirs = [key(r) for r in expected]
    for i in range(len(theirs)):
        for j in range(i + 1, len(theirs)):
            verdict = 0
            for x, y in zip(theirs[i], theirs[j]):
                c = _key_cmp(x, y)
                if c != 0:
                    verdict = c
                    break
            if not verdict:
                continue
            ki = tuple(_norm(v) for v in theirs[i])
            kj = tuple(_norm(v) for v in theirs[j])
            if ki in first and kj in last and first[ki] > last[kj]:
                return f"{theirs[i]} should come before {theirs[j]}"
    return None


def _show(rows: list) -> str:
    lines = []
    for row in rows[:12]:
        lines.append("  " + ", ".join(f"{k}={v}" for k, v in sorted(row.items())))
    if len(rows) > 12:
        lines.append(f"  ... {len(rows) - 12} more")
    return "\n".join(lines) or "  (none)"


def _diff(actual: list, expected: list) -> str:
    return f"got {len(actual)} solutions:\n{_show(actual)}\nexpected {len(expected)}:\n{_show(expected)}"


def _compare_graph(actual: list, expected: list) -> Outcome:
    from rdflib import BNode as RBNode
    from rdflib import Graph
    from rdflib import Literal as RLiteral
    from rdflib import URIRef
    from rdflib.compare import isomorphic

    def to_rdflib(term: Any) -> Any:
        if type(term) is IRI:
            return URIRef(term.value)
        if type(term) is BNode:
            return RBNode(term.id)
        norm = _norm(term)
        if type(norm) is tuple and norm[0] == "num":
            return RLiteral(str(norm[2]), datatype=URIRef(norm[1]))
        if term.lang:
            return RLiteral(term.lexical, lang=term.lang)
        return RLiteral(term.lexical, datatype=URIRef(term.datatype.value) if term.datatype else None)

    mine, theirs = Graph(), Graph()
    for s, p, o in actual:
        mine.add((to_rdflib(s), to_rdflib(p), to_rdflib(o)))
    for s, p, o in expected:
        theirs.add((to_rdflib(s), to_rdflib(p), to_rdflib(o)))
    if isomorphic(mine, theirs):
        return Outcome("pass")
    return Outcome("fail", f"graphs differ: got {len(mine)} triples, expected {len(theirs)}\n" + "\n".join(f"  {s} {p} {o}" for s, p, o in list(actual)[:10]))


def _compare_csv(result: Result, path: Path) -> Outcome:
    import csv
    import io

    def rows(text: str) -> list:
        parsed = list(csv.reader(io.StringIO(text)))
        return parsed

    mine = rows(result.serialize("csv"))
    theirs = rows(path.read_text(encoding="utf-8"))
    if not mine or not theirs or mine[0] != theirs[0]:
        return Outcome("fail", f"CSV header {mine[:1]} != {theirs[:1]}")

    def as_dicts(table: list) -> list:
        header = table[0]
        out = []
        for line in table[1:]:
            row = {}
            for name, cell in zip(header, line):
                if cell.startswith("_:"):
                    row[name] = BNode(cell[2:])
                elif cell != "":
                    row[name] = Literal(cell)
            out.append(row)
        return out

    if _match_rows(as_dicts(mine), as_dicts(theirs)):
        return Outcome("pass")
    return Outcome("fail", "CSV differs:\n" + result.serialize("csv")[:800])


def run_all(cases: list[Case]) -> Iterator[tuple[Case, Outcome]]:
    for case in cases:
        yield case, run_case(case)

