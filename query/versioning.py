"""Where version clauses read from: a repository and the ref a query runs at.

A :class:`VersionContext` resolves the refs of ``AT``, ``CHANGES`` and ``VERSIONS`` (a
branch, a tag, a commit id or its prefix, ``HEAD``, with git's ``~N`` (N-th first-parent
ancestor) and ``^N`` (N-th parent) suffixes, as ``repo.resolve`` does) and hands out what
the engine reads: a view at a ref, the
diff between two refs, the commits of an ancestry and the per-commit versions of quads.
It is the only part of the query layer that needs the repository rather than a view.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> for n in range(3):
...     with repo.transaction("main", message=f"c{n}") as tx:
...         fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("urn:n"), n)
>>> ctx = VersionContext(repo)
>>> repo.commit(ctx.resolve("main~2")).message, repo.commit(ctx.resolve("main^")).message
('c0', 'c1')
>>> ctx.resolve("main~3")
Traceback (most recent call last):
...
fstore.errors.UnknownRefError: unknown ref 'main~3': no such ancestor
>>> repo.close()
"""

from __future__ import annotations

from typing import Any, Iterator

import fstore

from .errors import QueryEvaluationError

__all__ = ["VersionContext", "require"]


class VersionContext:
    """A repository and the ref queries run at (None: the repository's current branch)."""

    def __init__(self, repo: Any, ref: str | None = None) -> None:
        self.repo = repo
        self._ref = ref

    @classmethod
    def of(cls, obj: Any) -> "VersionContext | None":
        """The context of an fstore view (at its commit), an open transaction (at its
        branch's head) or a source over either (its ``view``: see
        :class:`query.source.Source`); None for anything else."""
        view = getattr(obj, "view", obj)
        if isinstance(view, fstore.Transaction):
            return cls(view.repo, view.branch)
        if isinstance(view, fstore.View):
            return cls(view.repo, view.commit_id or view.ref)
        return None

    @property
    def ref(self) -> str:
        """The ref queries run at when they name none."""
        return self._ref or self.repo.current_branch

    # ------------------------------------------------------------------ refs

    def resolve(self, ref: str | None) -> str | None:
        """The commit id ``ref`` names (None: a branch without commits); fstore resolves
        branches, tags, ids, id prefixes, ``HEAD`` and the ``~N`` / ``^N`` suffixes."""
        return self.repo.resolve(ref or self.ref)

    def is_branch(self, ref: str) -> bool:
        return ref in self.repo.branches()

    def label(self, ref: str | None) -> str:
        """``ref`` and the short id of its commit, for messages and EXPLAIN."""
        ref = ref or self.ref
        commit = self.resolve(ref)
        if commit is None:
            return f"{ref} (no commits)"
        return commit[:10] if commit.startswith(ref) else f"{ref} ({commit[:10]})"

    # ------------------------------------------------------------------ what the engine reads

    def view(self, ref: str | None) -> Any:
        """A read-only view at ``ref``."""
        ref = ref or self.ref
        commit = self.resolve(ref)
        return self.repo.at(commit if commit is not None else ref)

    def diff(self, start: str, end: str | None) -> Iterator[tuple[str, tuple]]:
        """``("+" | "-", quad)`` for each quad whose state differs from ``start`` to ``end``."""
        a, b = self.resolve(start), self.resolve(end)
        if a is None or b is None:  # a branch without commits: diff against the empty state
            empty = a is None
            other = b if empty else a
            if other is None:
                return iter(())
            op = "+" if empty else "-"
            view = self.repo.at(other)
            pattern = (fstore.Var("g"), fstore.Var("s"), fstore.Var("p"), fstore.Var("o"))
            return ((op, (q["g"], q["s"], q["p"], q["o"])) for q in fstore.from_(view, *pattern))
        return self.repo.diff(a, b)

    def ancestry(self, ref: str | None) -> list:
        """The commits of ``ref``'s ancestry, oldest first."""
        commit = self.resolve(ref)
        if commit is None:
            return []
        return list(reversed(list(self.repo.log(commit))))

    def versions(self, ref: str | None, pattern: tuple) -> Iterator[tuple[tuple, list]]:
        """``(quad, [Commit, ...])`` for each quad matching ``pattern`` (fstore values and
        ``fstore.Var``) that holds in some commit of ``ref``'s ancestry."""
        commit = self.resolve(ref)
        if commit is None:
            return iter(())
        return self.repo.versions(commit, *pattern)


def require(versions: "VersionContext | None", clause: str) -> VersionContext:
    """``versions``, or a clear error when a version clause runs without a repository."""
    if versions is None:
        raise QueryEvaluationError(
            f"{clause} needs a datae repository: run the query on repo.at(ref), a transaction, or a query.Session"
        )
    return versions
