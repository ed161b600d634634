"""datae's query layer: SPARQL 1.1 queries over the versioned store.

``execute(source_or_view, text)`` parses (lark grammar ``sparql.lark``), translates to the
SPARQL algebra, plans (join order from cardinality estimates, filter push-down) and runs a
query with streaming evaluation; ``explain`` shows the plan.

>>> from query import execute, MemorySource, IRI, Literal
>>> src = MemorySource([(None, IRI("http://ex/a"), IRI("http://ex/name"), Literal("Alice"))])
>>> result = execute(src, "SELECT ?n WHERE { ?s <http://ex/name> ?n }")
>>> result.vars, [row["n"].lexical for row in result]
(['n'], ['Alice'])
>>> result.serialize("csv")
'n\\r\\nAlice\\r\\n'

Over a datae repository, :class:`Session` runs any statement text: queries (with the version
clauses ``AT``, ``CHANGES``, ``VERSIONS``), SPARQL updates (one commit each) and ``EXPLAIN``.
"""

from .engine import execute, explain, run_query
from .errors import QueryError, QueryEvaluationError, QuerySyntaxError, UnknownPrefixError, UnsupportedFeatureError, UpdateError
from .outcomes import PlanText, UpdateResult
from .parser import parse_query, parse_request, parse_update
from .results import FORMATS, Result
from .session import Session, run_text
from .versioning import VersionContext
from .source import MemorySource, Source, as_source
from nstore.terms import BNode, IRI, Literal

__all__ = [
    "execute",
    "explain",
    "run_query",
    "parse_query",
    "parse_update",
    "parse_request",
    "Session",
    "run_text",
    "VersionContext",
    "UpdateResult",
    "PlanText",
    "UpdateError",
    "Result",
    "FORMATS",
    "Source",
    "MemorySource",
    "as_source",
    "IRI",
    "BNode",
    "Literal",
    "QueryError",
    "QuerySyntaxError",
    "UnknownPrefixError",
    "UnsupportedFeatureError",
    "QueryEvaluationError",
]
