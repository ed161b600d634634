"""The ``datae`` commands of merges and their conflicts, as git's:

    datae merge OTHER            # conflicts: listed, kept as the merge in progress, exit 1
    datae conflicts              # KEY, where, base / ours / theirs of each
    datae resolve --theirs KEY   # or --ours (the default); no KEY: every conflict
    datae merge --continue [-m MSG]
    datae merge --abort
    datae pull [REMOTE [BRANCH]] # conflicts: as merge

Each handler takes the parsed ``args`` and returns the exit code (``datae.cli`` registers
them). ``--policy ours|theirs`` settles every conflict at once; ``--policy abort`` writes
nothing, as before merges kept state.
"""

from __future__ import annotations

import argparse
from typing import Any, Iterable

import fstore
from fstore.ops.conflicts import ConflictItem
from fstore.ops.merge_state import items_of

from nstore.terms import format_term

from .cli import EXIT_CONFLICT, Fatal, default_author, open_repo, out, short_head, subject, token

__all__ = ["cmd_merge", "cmd_conflicts", "cmd_resolve", "cmd_pull", "format_item"]

_HINT = ("settle them (datae resolve --ours|--theirs [KEY...]), then datae merge --continue; "
         "or datae merge --abort")


def _value(item: ConflictItem, value: Any) -> str:
    """One side of a conflict for people."""
    if item.kind == "quad":
        return " ".join(format_term(o) for o in value) or "(none)"
    if item.kind == "row":
        return "(no row)" if value is None else ", ".join(f"{column}={cell!r}" for column, cell in value)
    if item.kind == "schema":
        return "(no table)" if value is None else value
    return repr(value)


def format_item(item: ConflictItem) -> list[str]:
    """The lines that show one conflict: its key and where, then each side (and how it is
    resolved, if it is).

    >>> from fstore.ops.conflicts import keyed
    >>> item = keyed([ConflictItem("cell", ("t", (1,), "a"), "a1", "ours", "theirs", "update/update")])[0]
    >>> format_item(item)[1:]
    ["  base    'a1'", "  ours    'ours'", "  theirs  'theirs'"]
    """
    status = "" if item.resolution is None else f"  [resolved: {_resolution(item)}]"
    lines = [f"CONFLICT {item.key} {item.describe()} ({item.detail}){status}"]
    for side in ("base", "ours", "theirs"):
        lines.append(f"  {side:<7} {_value(item, getattr(item, side))}")
    return lines


def _resolution(item: ConflictItem) -> str:
    if item.resolution[0] == "value":
        return "value " + _value(item, item.resolution[1])
    return item.resolution[0]


def _print(items: Iterable[ConflictItem]) -> None:
    for item in items:
        for line in format_item(item):
            out(line)


def _stopped(stopped: fstore.ConflictsRecorded) -> int:
    _print(stopped.items)
    out(f"Automatic merge failed: {len(stopped.items)} conflict(s); {_HINT}.")
    return EXIT_CONFLICT


def cmd_merge(args: argparse.Namespace) -> int:
    """``datae merge OTHER``, ``--continue``, ``--abort``."""
    if args.cont or args.abort:
        if args.other or (args.cont and args.abort):
            raise Fatal("merge --continue and --abort take no OTHER, and not both")
        with open_repo(args) as repo:
            return _continue(repo, args) if args.cont else _abort(repo)
    if not args.other:
        raise Fatal("merge: name the ref to merge (or --continue, --abort)")
    with open_repo(args) as repo:
        into = args.into or repo.current_branch
        before = repo.head(into)
        try:
            result = repo.merge(into, args.other, message=args.message, author=args.author or default_author(),
                                policy=args.policy or "record")
        except fstore.ConflictsRecorded as stopped:
            return _stopped(stopped)
        except fstore.MergeConflict as conflict:  # --policy abort
            _print(items_of(conflict.conflicts))
            out(f"Automatic merge failed: {len(conflict.conflicts)} conflict(s); nothing was written. "
                "Use --policy ours|theirs to resolve.")
            return EXIT_CONFLICT
        if result == before:
            out("Already up to date.")
            return 0
        commit = repo.commit(result)
        if len(commit.parents) == 2 and commit.parents[0] == before:
            out(f"Merge made: [{into} {commit.short_id}] {subject(commit.message)} (+{commit.added} -{commit.removed})")
        else:
            out(f"Fast-forward {into} to {result[:10]}")
    return 0


def _continue(repo: fstore.Repository, args: argparse.Namespace) -> int:
    state = repo.merge_state()
    author = args.author or (state.author if state is not None and state.author else default_author())
    commit = repo.commit(repo.merge_continue(message=args.message, author=author))
    out(f"Merge made: [{state.into} {commit.short_id}] {subject(commit.message)} (+{commit.added} -{commit.removed})")
    return 0


def _abort(repo: fstore.Repository) -> int:
    state = repo.merge_abort()
    # not state.ours: commits may have gone onto the branch while the merge was stopped
    head = repo.head(state.into)
    out(f"Merge of {state.other} into {state.into} aborted; {state.into} is at {short_head(head)}")
    return 0


def cmd_conflicts(args: argparse.Namespace) -> int:
    """``datae conflicts``: every conflict of the merge in progress."""
    with open_repo(args) as repo:
        items = repo.conflicts()
    _print(items)
    unresolved = sum(1 for item in items if not item.resolved)
    out(f"{len(items)} conflict(s), {unresolved} unresolved")
    return 0


def cmd_resolve(args: argparse.Namespace) -> int:
    """``datae resolve [--ours|--theirs] [KEY...]`` (no KEY: every unresolved conflict)."""
    side = "theirs" if args.theirs else "ours"
    with open_repo(args) as repo:
        settled = repo.resolve_conflicts(args.keys or None, side)
        left = repo.merge_state().unresolved
    for item in settled:
        out(f"Resolved {item.key} ({item.describe()}) with {side}")
    out(f"{left} unresolved conflict(s) left" + ("" if left else "; datae merge --continue to commit the merge"))
    return 0


def cmd_pull(args: argparse.Namespace) -> int:
    """``datae pull [REMOTE [BRANCH]]``: conflicts stop it as ``datae merge`` does."""
    with open_repo(args) as repo:
        try:
            head = repo.pull(args.remote, args.branch, token=token(args), author=args.author or default_author())
        except fstore.ConflictsRecorded as stopped:
            return _stopped(stopped)
        out(f"{repo.current_branch} is at {(head or '')[:10]}")
    return 0
