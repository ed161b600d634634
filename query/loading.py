"""``LOAD <file:...>``: which files an update may read, and how it reads them.

A SPARQL update may come from anyone who can hand the user a query, so LOAD reads only
files under a directory the caller allows (``load_dir``; none by default: LOAD is then
refused). The path is resolved (symlinks, ``..``) before the check, and no error quotes
the file: a refused or unparsable file is named by its IRI, with a line and column.

>>> import os, tempfile
>>> allowed = tempfile.mkdtemp()
>>> allowed_path("file:///etc/passwd", allowed)
Traceback (most recent call last):
query.errors.LoadError: LOAD <file:///etc/passwd>: /etc/passwd is outside the directory LOAD may read (...)
>>> allowed_path("file:///etc/passwd", None)
Traceback (most recent call last):
query.errors.LoadError: LOAD <file:///etc/passwd>: loading files is off ...
>>> allowed_path(f"file://{allowed}/data.ttl", allowed) == os.path.join(os.path.realpath(allowed), "data.ttl")
True
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from fstore.rdf import KEEP_GRAPHS, RdfFormatError, RdfSyntaxError, load
from nstore.errors import InvalidTermError

from .errors import LoadError, UnsupportedFeatureError

__all__ = ["allowed_path", "load_file"]



def allowed_path(iri: str, load_dir: str | os.PathLike[str] | None) -> str:
    """The real path of the local file ``iri`` names, if it lies under ``load_dir`` (both
    resolved: symlinks, ``..``); else :class:`LoadError`. Only ``file:`` IRIs of this
    machine (no host, or ``localhost``) name files."""
    parts = urlparse(iri)
    if parts.scheme != "file":
        raise UnsupportedFeatureError("LOAD", f"datae loads file: IRIs only, not <{iri}>")
    if parts.netloc not in ("", "localhost"):
        raise LoadError(iri, f"names a file on another host ({parts.netloc}); LOAD reads local files only")
    if load_dir is None:
        raise LoadError(iri, "loading files is off (allow a directory: --load-dir DIR, "
                             "or load_dir= of query.Session / run_text)")
    root = os.path.realpath(load_dir)
    path = os.path.realpath(url2pathname(parts.path))
    if os.path.commonpath([root, path]) != root:
        raise LoadError(iri, f"{path} is outside the directory LOAD may read ({root})")
    return path


def load_file(tx: Any, iri: str, load_dir: str | os.PathLike[str] | None, graph: Any = KEEP_GRAPHS) -> int:
    """Add the quads of the file ``iri`` names (see :func:`allowed_path`) to ``tx``; how
    many were read. Every failure is a :class:`LoadError` naming the IRI, none quoting the
    file (a parser's message would: it shows the token it could not read)."""
    path = allowed_path(iri, load_dir)
    try:
        return load(tx, path, base_iri=iri, graph=graph)
    except RdfFormatError as exc:  # an unknown format, named by the file's name
        raise LoadError(iri, str(exc)) from None
    except RdfSyntaxError as exc:
        if exc.line is None:  # RDF/XML and JSON-LD errors may have no position
            raise LoadError(iri, "not valid RDF (the file's content is not shown)") from None
        raise LoadError(iri, f"not valid RDF at line {exc.line}, column {exc.column} "
                             "(the file's content is not shown)", line=exc.line, column=exc.column) from None
    except InvalidTermError as exc:
        raise LoadError(iri, f"holds a term the store refuses: {exc.reason}") from None
    except OSError as exc:
        raise LoadError(iri, f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
