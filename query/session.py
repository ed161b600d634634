"""Running query text against a repository at a ref: what `datae query` and the REPL share.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="m") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), "x")
>>> run_text(repo, "SELECT ?o WHERE { <urn:a> <urn:p> ?o }", fmt="csv").splitlines()
['o', 'x']
>>> repo.close()
"""

from __future__ import annotations

from typing import Any

import fstore

from .engine import execute

__all__ = ["Session", "run_text"]


class Session:
    """A repository and the ref that queries read (None: the current branch)."""

    def __init__(self, repo: fstore.Repository, at: str | None = None, author: str = "") -> None:
        self.repo = repo
        self.at = at
        self.author = author

    @property
    def ref(self) -> str:
        return self.at or self.repo.current_branch

    def run(self, text: str) -> Any:
        """Execute a query at the session's ref; returns a :class:`query.Result`."""
        return execute(self.repo.at(self.ref), text)


def run_text(repo: fstore.Repository, text: str, *, at: str | None = None, fmt: str = "table", author: str = "") -> str:
    """Run ``text`` and return its result serialised as ``fmt`` (json, csv, tsv, table, ...)."""
    result = Session(repo, at, author).run(text)
    return result.serialize(_FORMAT_NAMES.get(fmt, fmt))


_FORMAT_NAMES = {"nq": "nquads", "ttl": "turtle", "nt": "ntriples"}
