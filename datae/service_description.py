"""The SPARQL 1.1 Service Description of ``/sparql``: what ``GET /sparql`` without a
query answers (https://www.w3.org/TR/sparql11-service-description/), in Turtle, RDF/XML,
JSON-LD or N-Triples by ``Accept``.

    >>> b"sd:SPARQL11Query" in describe("http://127.0.0.1:8000/sparql", read_only=True, fmt="ttl")
    True
"""

from __future__ import annotations

from fstore.rdf import serialize
from nstore.terms import BNode, IRI

from .sparql_http import ProtocolError, ranked_media

__all__ = ["describe", "output_format"]

SD = "http://www.w3.org/ns/sparql-service-description#"
FORMATS = "http://www.w3.org/ns/formats/"
RDF_TYPE = IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
# The result formats /sparql serves (datae.sparql_http), by their W3C format IRIs.
RESULT_FORMATS = ("SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV", "SPARQL_Results_TSV",
                  "Turtle", "N-Triples", "N-Quads", "TriG", "JSON-LD", "RDF_XML")
_OUT = {"text/turtle": "ttl", "application/rdf+xml": "rdf", "application/ld+json": "jsonld",
        "application/n-triples": "nt"}
_MEDIA = {fmt: media for media, fmt in _OUT.items()}


def output_format(accept: str | None) -> tuple[str, str]:
    """``(fstore.rdf format, media type)`` of the description by ``Accept`` (Turtle
    unless asked otherwise; 406 if none is served)."""
    for media in ranked_media(accept):
        if media in _OUT:
            return _OUT[media], media
        if media in ("*/*", "text/*", "application/*"):
            return "ttl", _MEDIA["ttl"]
    raise ProtocolError(f"none of the media types in Accept: {accept} is served for the service description; "
                        f"send one of {', '.join(_OUT)}", 406)


def describe(endpoint: str, *, read_only: bool, fmt: str = "ttl") -> bytes:
    """The description of the endpoint at ``endpoint``: its languages (no update on a
    read-only server), result formats and default dataset."""
    service, dataset, default = BNode("service"), BNode("dataset"), BNode("defaultGraph")
    languages = ["SPARQL11Query"] + ([] if read_only else ["SPARQL11Update"])
    triples = [
        (service, RDF_TYPE, IRI(SD + "Service")),
        (service, IRI(SD + "endpoint"), IRI(endpoint)),
        *[(service, IRI(SD + "supportedLanguage"), IRI(SD + name)) for name in languages],
        *[(service, IRI(SD + "resultFormat"), IRI(FORMATS + name)) for name in RESULT_FORMATS],
        (service, IRI(SD + "defaultDataset"), dataset),
        (dataset, RDF_TYPE, IRI(SD + "Dataset")),
        (dataset, IRI(SD + "defaultGraph"), default),
        (default, RDF_TYPE, IRI(SD + "Graph")),
    ]
    return serialize([(None, s, p, o) for s, p, o in triples], fmt, prefixes={"sd": SD, "formats": FORMATS}) or b""
