"""Running statement text against a repository: what `datae query` and the REPL share.

A statement is a query, an update request, or either one after ``EXPLAIN``:

* a query reads the session's ref (``--at`` / ``.at``; default: the current branch) unless
  it names its own with a version clause (``AT``, ``CHANGES``, ``VERSIONS``);
* an update request is one commit on a branch: the one of a leading ``AT <branch>``, else
  the session's ref (which must then be a branch), else the current branch. Its message
  is the session's ``message`` if it has one, else the update text; its author the session's;
* ``EXPLAIN <statement>`` returns the plan instead of running it.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> print(run_text(repo, 'INSERT DATA { <urn:a> <urn:p> "x" }', author="ann")[:10])
committed 
>>> run_text(repo, "SELECT ?o WHERE { <urn:a> <urn:p> ?o }", fmt="csv").splitlines()
['o', 'x']
>>> run_text(repo, 'INSERT DATA { <urn:a> <urn:p> "x" }')
'no change on main\\n'
>>> print(run_text(repo, "EXPLAIN SELECT ?o WHERE { <urn:a> <urn:p> ?o }"), end="")
SELECT query
  Project ?o
    BGP  (est. 1)
      scan <urn:a> <urn:p> ?o  (est. 1)
>>> repo.close()
"""

from __future__ import annotations

import os
import re

import fstore

from .engine import explain_query, run_query
from .errors import UpdateError
from .limits import Limits
from .outcomes import PlanText, UpdateResult
from .parser import parse_request
from .results import Result
from .source import as_source
from .update_exec import apply_update, explain_update
from .updates import UpdateRequest
from .versioning import VersionContext

__all__ = ["Session", "run_text", "split_explain", "default_author"]

_EXPLAIN = re.compile(r"\A(?:\s|#[^\n]*(?:\n|\Z))*EXPLAIN\b", re.IGNORECASE)


def split_explain(text: str) -> tuple[bool, str]:
    """Whether ``text`` starts with ``EXPLAIN`` (after blanks and comments), and the
    statement after it."""
    match = _EXPLAIN.match(text)
    if match is None:
        return False, text
    return True, text[match.end():]


def default_author() -> str:
    """The author of commits made from the command line or the REPL."""
    return os.environ.get("DATAE_AUTHOR") or os.environ.get("USER") or "unknown"


class Session:
    """A repository, the ref queries read (None: the current branch), the author of the
    commits updates make, their ``message`` (None, the default, or empty: each update's
    own text), and the directory ``LOAD <file:...>`` may read files under (``load_dir``;
    None, the default: LOAD is refused, see :mod:`query.loading`)."""

    def __init__(self, repo: fstore.Repository, at: str | None = None, author: str = "",
                 limits: Limits | None = None, *, message: str | None = None,
                 load_dir: str | os.PathLike[str] | None = None) -> None:
        self.repo = repo
        self.at = at
        self.author = author
        self.limits = limits  # timeout and held-rows cap of each query (None: unbounded)
        self.message = message
        self.load_dir = load_dir

    @property
    def ref(self) -> str:
        return self.at or self.repo.current_branch

    @property
    def versions(self) -> VersionContext:
        return VersionContext(self.repo, self.at)

    def run(self, text: str) -> Result | UpdateResult | PlanText:
        """Run a statement: a :class:`query.Result` for a query, an :class:`UpdateResult`
        for an update, a :class:`PlanText` for ``EXPLAIN``."""
        explain, body = split_explain(text)
        request = parse_request(body)
        versions = self.versions
        if isinstance(request, UpdateRequest):
            branch = self.branch_for(request)
            if explain:
                return PlanText(explain_update(as_source(self.repo.at(branch)), request, branch))
            return self.update(request, text, branch)
        source = as_source(versions.view(None))
        if explain:
            return PlanText(explain_query(source, request, versions=versions))
        return run_query(source, request, versions=versions, limits=self.limits)

    def branch_for(self, request: UpdateRequest) -> str:
        """The branch an update commits on; an error if that ref is not a branch."""
        branch = request.at or self.ref
        if branch not in self.repo.branches():
            how = "its AT clause names" if request.at else "the session reads"
            raise UpdateError(
                f"cannot update {branch!r}: {how} a tag or commit, not a branch "
                "(updates commit on a branch: use AT <branch>, --at BRANCH or .at BRANCH)"
            )
        return branch

    def update(self, request: UpdateRequest, text: str, branch: str | None = None) -> UpdateResult:
        """Apply an update request as one commit on ``branch``, with the session's message
        (none: ``text``, the request's text)."""
        branch = branch or self.branch_for(request)
        # An empty message counts as none: a commit is never left without one.
        message = (self.message or text).strip()
        with self.repo.transaction(branch, message=message, author=self.author) as tx:
            apply_update(tx, request, self.limits, load_dir=self.load_dir)
        if tx.commit_id is None:
            return UpdateResult(branch, None)
        commit = self.repo.commit(tx.commit_id)
        return UpdateResult(branch, commit.id, commit.added, commit.removed)


def run_text(repo: fstore.Repository, text: str, *, at: str | None = None, fmt: str = "table", author: str = "",
             limits: Limits | None = None, load_dir: str | os.PathLike[str] | None = None) -> str:
    """Run ``text`` and return its outcome serialised as ``fmt`` (json, csv, tsv, table, ...);
    a query runs under ``limits`` (its timeout counts the serialising too); ``load_dir`` as
    for :class:`Session`."""
    result = Session(repo, at, author, limits, load_dir=load_dir).run(text)
    return result.serialize(_FORMAT_NAMES.get(fmt, fmt))


_FORMAT_NAMES = {"nq": "nquads", "ttl": "turtle", "nt": "ntriples"}
