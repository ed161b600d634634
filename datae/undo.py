"""The ``datae`` commands that look back: ``show``, ``revert`` and ``reset``.

    datae show [REF]             # a commit and its changes (quads, table rows)
    datae revert REF [-m MSG]    # a new commit undoing REF's changes
    datae reset [--hard] REF     # move the current branch to REF

Each handler takes the parsed ``args`` and returns the exit code (``datae.cli`` registers
them). What each does, and why ``reset`` has no working tree to touch: ``docs/versioning.md``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from query.termsyntax import format_term

from .cli import default_author, open_repo, out

__all__ = ["cmd_show", "cmd_revert", "cmd_reset", "format_quad"]


def format_quad(op: str, quad: tuple) -> str:
    """A quad change as ``datae diff`` prints it.

    >>> from fstore import IRI
    >>> format_quad("+", (None, IRI("urn:s"), IRI("urn:p"), IRI("urn:o")))
    '+ <urn:s> <urn:p> <urn:o> .'
    """
    graph = "" if quad[0] is None else f" {format_term(quad[0])}"
    return f"{op} " + " ".join(format_term(v) for v in quad[1:]) + graph + " ."


def _row(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, default=str)


def cmd_show(args: argparse.Namespace) -> int:
    """``datae show [REF]``."""
    with open_repo(args) as repo:
        shown = repo.show(args.ref or repo.current_branch)
    commit = shown.commit
    out(f"commit {commit.id}")
    if len(commit.parents) > 1:
        out("Merge: " + " ".join(p[:10] for p in commit.parents))
    out(f"Author: {commit.author}")
    out(f"Date:   {commit.time.isoformat()}")
    out()
    for line in commit.message.splitlines() or [""]:
        out(f"    {line}")
    out()
    for op, quad in shown.quads:
        out(format_quad(op, quad))
    for name, diff in shown.tables.items():
        out(f"table {name}: {len(diff.inserted)} inserted, {len(diff.updated)} updated, {len(diff.deleted)} deleted"
            + (" (schema changed)" if diff.schema else ""))
        for row in diff.inserted:
            out(f"+ {_row(row)}")
        for row in diff.deleted:
            out(f"- {_row(row)}")
        for change in diff.updated:
            pk = change.pk[0] if len(change.pk) == 1 else list(change.pk)
            out(f"~ {pk}: " + ", ".join(f"{column}: {old!r} -> {new!r}" for column, (old, new) in change.cells.items()))
    return 0


def cmd_revert(args: argparse.Namespace) -> int:
    """``datae revert REF [-m MSG]``."""
    with open_repo(args) as repo:
        branch = args.branch or repo.current_branch
        made = repo.revert(args.ref, branch, message=args.message, author=args.author or default_author())
        if made is None:
            out(f"nothing to revert: {branch} already lacks the changes of {args.ref}")
            return 0
        commit = repo.commit(made)
    out(f"[{branch} {commit.short_id}] {commit.message.splitlines()[0]} (+{commit.added} -{commit.removed})")
    return 0


def cmd_reset(args: argparse.Namespace) -> int:
    """``datae reset [--hard] REF``."""
    with open_repo(args) as repo:
        branch = args.branch or repo.current_branch
        before = repo.head(branch)
        head = repo.reset(args.ref, branch, hard=args.hard)
    out(f"{branch} is now at {head[:10]}" + ("" if before is None or before == head else f" (was {before[:10]})"))
    return 0
