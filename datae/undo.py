"""The ``datae`` commands that look back: ``show``, ``revert`` and ``reset``.

    datae show [REF]             # a commit and its changes (quads, table rows)
    datae revert REF [-m MSG]    # a new commit undoing REF's changes
    datae reset [--hard] REF     # move the current branch to REF

Each handler takes the parsed ``args`` and returns the exit code (``datae.cli`` registers
them). What each does, and why ``reset`` has no working tree to touch: ``docs/versioning.md``.
"""

from __future__ import annotations

import argparse

from .cli import change_lines, default_author, format_quad, open_repo, out

__all__ = ["cmd_show", "cmd_revert", "cmd_reset", "format_quad"]


def cmd_show(args: argparse.Namespace) -> int:
    """``datae show [REF]``."""
    with open_repo(args) as repo:
        shown = repo.show(args.ref or repo.current_branch, python=False)  # as diff and table diff print them
        commit, tables = shown.commit, shown.tables
    out(f"commit {commit.id}")
    if len(commit.parents) > 1:
        out("Merge: " + " ".join(p[:10] for p in commit.parents))
    out(f"Author: {commit.author}")
    out(f"Date:   {commit.time.isoformat()}")
    out()
    for line in commit.message.splitlines() or [""]:
        out(f"    {line}")
    out()
    for line in change_lines(shown.quads, tables):
        out(line)
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
