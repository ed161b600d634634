"""Where a store is: a folder holding ``data.mdb``, or a project folder holding one in
``.datae`` (as git keeps ``.git``). ``fstore.open``, remotes and the ``datae`` command
all find a store here, so a path names the same store to each of them.
"""

from __future__ import annotations

import os

from nstore.lmdbfile import DATA_FILE

from .errors import AmbiguousStoreError

__all__ = ["STORE_DIR", "locate"]

# The folder a project keeps its store in, as git keeps ``.git`` (``datae init`` makes it).
STORE_DIR = ".datae"


def locate(path: str | os.PathLike) -> str:
    """The store directory ``path`` names, as the ``datae`` command finds it: ``path``
    itself if it holds a store (``data.mdb``), else ``path/.datae`` if that exists (a
    project folder made by ``datae init``), else ``path`` (where a new store goes).

    A folder holding both a store and a ``.datae`` is refused (``AmbiguousStoreError``):
    which one was meant cannot be guessed, and opening either would hide the other.

    >>> import tempfile, fstore
    >>> project = tempfile.mkdtemp()
    >>> fstore.open(os.path.join(project, STORE_DIR)).close()    # what `datae init` makes
    >>> locate(project) == os.path.join(project, STORE_DIR)
    True
    """
    path = os.fspath(path)
    inner = os.path.join(path, STORE_DIR)
    has_store = os.path.exists(os.path.join(path, DATA_FILE))
    if not os.path.isdir(inner):
        return path
    if has_store:
        raise AmbiguousStoreError(f"{path} holds two stores, its own {DATA_FILE} and {inner}: open one of them by its path")
    return inner
