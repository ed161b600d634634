"""Relative IRI resolution (RFC 3986, section 5.2), as SPARQL's BASE requires.

>>> resolve_iri("http://a/b/c/d;p?q", "../g")
'http://a/b/g'
>>> resolve_iri("http://example.org/x/", "#frag")
'http://example.org/x/#frag'
>>> resolve_iri(None, "http://abs/")
'http://abs/'
"""

from __future__ import annotations

import re

__all__ = ["resolve_iri", "is_absolute"]

_SPLIT = re.compile(r"^(?:([A-Za-z][A-Za-z0-9+.\-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$", re.S)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def is_absolute(iri: str) -> bool:
    """Whether ``iri`` has a scheme."""
    return _SCHEME.match(iri) is not None


def _remove_dot_segments(path: str) -> str:
    output: list[str] = []
    while path:
        if path.startswith("../"):
            path = path[3:]
        elif path.startswith("./"):
            path = path[2:]
        elif path.startswith("/./"):
            path = path[2:]
        elif path == "/.":
            path = "/"
        elif path.startswith("/../"):
            path = path[3:]
            if output:
                output.pop()
        elif path == "/..":
            path = "/"
            if output:
                output.pop()
        elif path in (".", ".."):
            path = ""
        else:
            start = 1 if path.startswith("/") else 0
            end = path.find("/", start)
            if end == -1:
                end = len(path)
            output.append(path[:end])
            path = path[end:]
    return "".join(output)


def resolve_iri(base: str | None, reference: str) -> str:
    """``reference`` resolved against ``base`` (returned unchanged without a base)."""
    if base is None or is_absolute(reference):
        return reference  # absolute IRIs are kept as written (no normalisation)
    b_scheme, b_authority, b_path, b_query, _ = _SPLIT.match(base).groups()
    _, r_authority, r_path, r_query, r_fragment = _SPLIT.match(reference).groups()
    if r_authority is not None:
        authority, path, query = r_authority, _remove_dot_segments(r_path), r_query
    else:
        authority = b_authority
        if r_path == "":
            path = b_path
            query = r_query if r_query is not None else b_query
        else:
            if r_path.startswith("/"):
                path = _remove_dot_segments(r_path)
            else:
                if b_authority is not None and b_path == "":
                    merged = "/" + r_path
                else:
                    merged = b_path[: b_path.rfind("/") + 1] + r_path
                path = _remove_dot_segments(merged)
            query = r_query
    return _recompose(b_scheme, authority, path, query, r_fragment)


def _recompose(scheme, authority, path, query, fragment) -> str:
    text = ""
    if scheme is not None:
        text += scheme + ":"
    if authority is not None:
        text += "//" + authority
    text += path
    if query is not None:
        text += "?" + query
    if fragment is not None:
        text += "#" + fragment
    return text
