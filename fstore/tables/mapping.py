"""How a Kart dataset is laid out as quads: graph names, predicates and subjects.

A dataset (table) called ``name`` is the graph ``<urn:datae:dataset:NAME>`` (``NAME`` is the
dataset name percent-encoded, ``/`` kept). Every file of Kart's ``.table-dataset`` tree is one
quad in that graph, keyed by its path:

==============================  ==============================  ===============================
Kart file                       quad (graph omitted)             object
==============================  ==============================  ===============================
``meta/title``                  ``"title" META ?o``               ``str`` (UTF-8 text)
``meta/schema.json``            ``"schema.json" META ?o``         ``str`` (the JSON text)
``meta/path-structure.json``    ``"path-structure.json" META``    ``str``
``meta/crs/EPSG:4326.wkt``      ``"crs/EPSG:4326.wkt" META``      ``str``
``meta/legend/<40 hex>``        ``"legend/<40 hex>" META``        ``bytes`` (msgpack legend)
``feature/<path>``              ``"<path>" FEATURE ?o``           ``bytes`` (Kart's feature blob)
``../metadata.xml``             ``"metadata.xml" ATTACHMENT``     ``str`` or ``bytes``
==============================  ==============================  ===============================

``META`` is ``<urn:datae:table:meta>``, ``FEATURE`` ``<urn:datae:table:feature>`` and
``ATTACHMENT`` ``<urn:datae:table:attachment>`` (files beside the dataset directory). A meta
item or attachment is stored as ``str`` when its bytes are valid UTF-8 (so it can be
queried as text) and as ``bytes`` otherwise; legends and features are always ``bytes``,
exactly as Kart wrote them, so exporting writes the same bytes back.

>>> dataset_graph("hydro/soundings 2")
IRI('urn:datae:dataset:hydro/soundings%202')
>>> dataset_name(dataset_graph("hydro/soundings 2"))
'hydro/soundings 2'
>>> meta_object("schema.json", b"[]"), meta_object("legend/ab", b"\\x92\\x90\\x90")
('[]', b'\\x92\\x90\\x90')
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, unquote

from nstore.terms import IRI

__all__ = [
    "GRAPH_PREFIX",
    "META",
    "FEATURE",
    "ATTACHMENT",
    "SCHEMA_ITEM",
    "PATH_STRUCTURE_ITEM",
    "TITLE_ITEM",
    "DESCRIPTION_ITEM",
    "LEGEND_PREFIX",
    "CRS_PREFIX",
    "dataset_graph",
    "dataset_name",
    "is_dataset_graph",
    "legend_item",
    "meta_object",
    "object_bytes",
]

GRAPH_PREFIX = "urn:datae:dataset:"
META = IRI("urn:datae:table:meta")
FEATURE = IRI("urn:datae:table:feature")
ATTACHMENT = IRI("urn:datae:table:attachment")

SCHEMA_ITEM = "schema.json"
PATH_STRUCTURE_ITEM = "path-structure.json"
TITLE_ITEM = "title"
DESCRIPTION_ITEM = "description"
LEGEND_PREFIX = "legend/"
CRS_PREFIX = "crs/"


def dataset_graph(name: str) -> IRI:
    """The graph holding dataset ``name``."""
    return IRI(GRAPH_PREFIX + quote(name, safe="/"))


def is_dataset_graph(graph: Any) -> bool:
    """Whether ``graph`` names a dataset."""
    return type(graph) is IRI and graph.value.startswith(GRAPH_PREFIX)


def dataset_name(graph: Any) -> str | None:
    """The dataset name a graph stands for, or None if it is not a dataset graph."""
    if not is_dataset_graph(graph):
        return None
    return unquote(graph.value[len(GRAPH_PREFIX):])


def legend_item(name: str) -> str:
    """The meta subject of legend ``name``: ``legend/<name>``."""
    return LEGEND_PREFIX + name


def meta_object(item: str, data: bytes) -> str | bytes:
    """What a meta item's bytes are stored as: legends as bytes; others as text when they
    are valid UTF-8, else as bytes."""
    if item.startswith(LEGEND_PREFIX):
        return bytes(data)
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return bytes(data)


def object_bytes(value: Any) -> bytes:
    """The file bytes of a stored meta item, attachment or feature (inverse of
    :func:`meta_object`)."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"a dataset item is stored as str or bytes, not {type(value).__name__}")
