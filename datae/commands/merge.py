"""The ``datae`` commands of merges and their conflicts, as git's:

    datae merge OTHER            # conflicts: listed, kept as the merge in progress, exit 1
    datae conflicts              # KEY, where, base / ours / theirs of each
    datae resolve --theirs KEY   # or --ours (the default); no KEY: every conflict
    datae merge --continue [-m MSG]
    datae merge --abort

``datae pull`` (:mod:`datae.commands.remotes`) stops on conflicts as merge does
(:func:`print_stopped`). ``--policy ours|theirs`` settles every conflict at once; ``--policy abort`` writes
nothing, as before merges kept state.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Iterable

from ..context import EXIT_CONFLICT, Fatal, author, open_repo, out, short_head, subject

if TYPE_CHECKING:
    import fstore
    from fstore.ops.conflicts import ConflictItem

__all__ = ["cmd_merge", "cmd_conflicts", "cmd_resolve", "format_item", "print_stopped"]

_HINT = ("settle them (datae resolve --ours|--theirs [KEY...]), then datae merge --continue; "
         "or datae merge --abort")


def _value(item: ConflictItem, value: Any) -> str:
    """One side of a conflict for people."""
    from nstore.terms import format_term  # the term syntax, loaded when a command runs

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

    >>> from fstore.ops.conflicts import ConflictItem, keyed
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


def print_stopped(stopped: fstore.ConflictsRecorded) -> int:
    """A merge (or pull) stopped on conflicts: list them, say how to go on; exit 1."""
    _print(stopped.items)
    out(f"Automatic merge failed: {len(stopped.items)} conflict(s); {_HINT}.")
    return EXIT_CONFLICT


def merge_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("other", nargs="?")
    p.add_argument("--into")
    p.add_argument("--policy", choices=["abort", "ours", "theirs"],
                   help="settle every conflict on one side, or (abort) write nothing; default: stop on conflicts")
    p.add_argument("--continue", dest="cont", action="store_true", help="commit the merge in progress once resolved")
    p.add_argument("--abort", action="store_true", help="forget the merge in progress")
    p.add_argument("-m", "--message")
    p.add_argument("--author")


def cmd_merge(args: argparse.Namespace) -> int:
    """``datae merge OTHER``, ``--continue``, ``--abort``."""
    import fstore  # the store layer (its merge errors), loaded when the command runs
    from fstore.ops.merge_state import items_of

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
            result = repo.merge(into, args.other, message=args.message, author=author(args),
                                policy=args.policy or "record")
        except fstore.ConflictsRecorded as stopped:
            return print_stopped(stopped)
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
    who = args.author or (state.author if state is not None and state.author else author(args))
    commit = repo.commit(repo.merge_continue(message=args.message, author=who))
    out(f"Merge made: [{state.into} {commit.short_id}] {subject(commit.message)} (+{commit.added} -{commit.removed})")
    return 0


def _abort(repo: fstore.Repository) -> int:
    state = repo.merge_abort()
    # not state.ours: commits may have gone onto the branch while the merge was stopped
    head = repo.head(state.into)
    out(f"Merge of {state.other} into {state.into} aborted; {state.into} is at {short_head(head)}")
    return 0


def conflicts_arguments(p: argparse.ArgumentParser) -> None:
    """``datae conflicts`` takes no arguments."""


def cmd_conflicts(args: argparse.Namespace) -> int:
    """``datae conflicts``: every conflict of the merge in progress."""
    with open_repo(args) as repo:
        items = repo.conflicts()
    _print(items)
    unresolved = sum(1 for item in items if not item.resolved)
    out(f"{len(items)} conflict(s), {unresolved} unresolved")
    return 0


def resolve_arguments(p: argparse.ArgumentParser) -> None:
    side = p.add_mutually_exclusive_group()
    side.add_argument("--ours", action="store_true", help="keep the branch's side (the default)")
    side.add_argument("--theirs", action="store_true", help="keep the merged side")
    p.add_argument("keys", nargs="*", metavar="KEY")


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
