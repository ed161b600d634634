"""The ``datae`` commands that look back, and undo: ``log``, ``show``, ``diff``, ``blame``,
``revert`` and ``reset``.

    datae log --graph --oneline  # the commits reachable from REF, newest first
    datae show [REF]             # a commit and its changes (quads, table rows)
    datae diff A [B] [--stat]    # quads added (+) and removed (-), then table rows
    datae blame S P O [--graph G]
    datae revert REF [-m MSG]    # a new commit undoing REF's changes
    datae reset [--hard] REF     # move the current branch to REF

What each does, and why ``reset`` has no working tree to touch: ``docs/versioning.md``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from ..context import author, open_repo, out, positive_int, subject

if TYPE_CHECKING:
    import fstore

__all__ = ["cmd_log", "cmd_show", "cmd_diff", "cmd_blame", "cmd_revert", "cmd_reset", "graph_rows", "edges",
           "format_quad", "change_lines", "diff_stat"]


# -- log -------------------------------------------------------------------------------------


def log_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("ref", nargs="?")
    p.add_argument("-n", type=positive_int, help="at most N commits")
    p.add_argument("--oneline", action="store_true")
    p.add_argument("--graph", action="store_true", help="draw the branches and merges beside the commits")


def cmd_log(args: argparse.Namespace) -> int:
    """``datae log [REF] [-n N] [--oneline] [--graph]``."""
    with open_repo(args) as repo:
        tags_by_commit: dict[str, list[str]] = {}
        for name, commit_id in repo.tags().items():
            tags_by_commit.setdefault(commit_id, []).append(name)
        commits = repo.log(args.ref or repo.current_branch, limit=args.n)
        # Without --graph every commit's lines get no prefix: one code path for both.
        rows = graph_rows(commits) if args.graph else ((None, "", commit) for commit in commits)
        for joins, lane, commit in rows:
            if joins is not None:
                out(joins)
            tags = f" (tag: {', '.join(sorted(tags_by_commit[commit.id]))})" if commit.id in tags_by_commit else ""
            if args.oneline:
                out(f"{lane}{commit.short_id} {subject(commit.message)}{tags}")
                continue
            text = [f"commit {commit.id}{tags}"]
            if len(commit.parents) > 1:
                text.append("Merge: " + " ".join(p[:10] for p in commit.parents))
            text += [f"Author: {commit.author}", f"Date:   {commit.time.isoformat()}",
                     f"Changes: +{commit.added} -{commit.removed}", "",
                     *(f"    {line}" for line in commit.message.splitlines() or [""]), ""]
            through = lane.replace("*", "|")  # the lanes go on beside the commit's other lines
            out(f"{lane}{text[0]}")
            for line in text[1:]:
                out(f"{through}{line}".rstrip())
    return 0
def graph_rows(commits: Iterable[fstore.Commit]) -> Iterator[tuple[str | None, str, fstore.Commit]]:
    """``log --graph``: for each commit (children before parents, as ``log`` gives them)
    the lines drawn before it (lanes joining, a merge's lanes opening; None: none), and
    its lane prefix (``*`` in its lane, ``|`` in the others). A lane is the commit it
    waits for, as in git's graph."""
    lanes: list[str] = []
    before: list[str] = []
    for commit in commits:
        hits = [i for i, waiting in enumerate(lanes) if waiting == commit.id]
        if not hits:  # a head, or a commit whose child is not shown (log -n)
            lanes.append(commit.id)
            hits = [len(lanes) - 1]
        at, ending = hits[0], set(hits[1:])
        if ending:  # lanes that forked at this commit end here; the lanes right of them close up
            before.append(edges([(i, at if i in ending else i - sum(h < i for h in ending)) for i in range(len(lanes))]))
            lanes = [waiting for i, waiting in enumerate(lanes) if i not in ending]
        yield "\n".join(before) or None, "".join("* " if i == at else "| " for i in range(len(lanes))), commit
        old = len(lanes)
        new = [parent for parent in commit.parents[1:] if parent not in lanes]
        lanes[at:at + 1] = commit.parents[:1]
        lanes[at + 1:at + 1] = new
        shift = len(lanes) - old  # +n: a merge opened n lanes; -1: a root commit ended its lane
        moves = [(i, i if i <= at else i + shift) for i in range(old) if i != at or commit.parents]
        moves += [(at, at + k) for k in range(1, len(new) + 1)]
        before = [edges(moves)] if shift else []


def edges(moves: Sequence[tuple[int, int]]) -> str:
    """One line of lanes moving from column ``a`` to ``b``: ``|`` straight on, ``/`` one
    to the left, ``\\`` one to the right (lane i is at text column 2i)."""
    chars: dict[int, str] = {}
    for a, b in moves:
        position, char = (2 * a, "|") if a == b else (2 * a - 1, "/") if b < a else (2 * a + 1, "\\")
        chars[position] = char
    return "".join(chars.get(i, " ") for i in range(max(chars, default=-1) + 1)).rstrip()



# -- show, diff ------------------------------------------------------------------------------


def show_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("ref", nargs="?")


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


def diff_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("a")
    p.add_argument("b", nargs="?")
    p.add_argument("--stat", action="store_true", help="only the quads added and removed per graph")


def cmd_diff(args: argparse.Namespace) -> int:
    """``datae diff A [B] [--stat]``."""
    from fstore.tables.changes import tables_changed  # the store layer, loaded when the command runs

    with open_repo(args) as repo:
        b = args.b or repo.current_branch
        changes = list(repo.diff(args.a, b))
        tables = tables_changed(repo, args.a, b, python=False)
    lines = diff_stat(changes, tables) if args.stat else change_lines(changes, tables)
    for line in lines:
        out(line)
    return 0


def format_quad(op: str, quad: tuple) -> str:
    """A quad change as ``datae diff`` and ``show`` print it.

    >>> from fstore import IRI
    >>> format_quad("+", (None, IRI("urn:s"), IRI("urn:p"), IRI("urn:o")))
    '+ <urn:s> <urn:p> <urn:o> .'
    """
    from nstore.terms import format_term  # the term syntax, loaded when a command runs

    graph = "" if quad[0] is None else f" {format_term(quad[0])}"
    return f"{op} " + " ".join(format_term(v) for v in quad[1:]) + graph + " ."


def change_lines(quads: Iterable[tuple[str, tuple]], tables: dict[str, Any]) -> Iterator[str]:
    """What ``diff`` and ``show`` (and the REPL's ``.diff``) print of some changes: the
    quads, then each changed table (a ``TableDiff`` of stored values) in the one format of
    table changes."""
    from fstore.tables.commands import table_changes_lines  # the store layer, loaded when a command runs

    for op, quad in quads:
        yield format_quad(op, quad)
    for name in sorted(tables):
        yield from table_changes_lines(tables[name])


def diff_stat(changes: Iterable[tuple[str, tuple]], tables: dict[str, Any] | None = None) -> list[str]:
    """``diff --stat``: quads added and removed per graph, then the totals (as git's
    files changed, insertions, deletions); then rows inserted, deleted and updated per
    changed table, and their totals."""
    from nstore.terms import format_term  # the term syntax, loaded when a command runs

    counts: dict[str, list[int]] = {}
    for op, quad in changes:
        name = "(default graph)" if quad[0] is None else format_term(quad[0])
        counts.setdefault(name, [0, 0])[op == "-"] += 1
    width = max((len(name) for name in counts), default=0)
    lines = [f" {name:<{width}} | +{added} -{removed}" for name, (added, removed) in sorted(counts.items())]
    added, removed = sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())
    lines.append(f" {len(counts)} graph{'' if len(counts) == 1 else 's'} changed, {added} quad{'' if added == 1 else 's'} "
                 f"added, {removed} removed")
    if tables:
        width = max(len(name) for name in tables) + len("table ")
        lines += [f" {'table ' + name:<{width}} | +{len(d.inserted)} -{len(d.deleted)} ~{len(d.updated)}"
                  for name, d in sorted(tables.items())]
        inserted, deleted, updated = (sum(len(getattr(d, kind)) for d in tables.values())
                                      for kind in ("inserted", "deleted", "updated"))
        lines.append(f" {len(tables)} table{'' if len(tables) == 1 else 's'} changed, {inserted} row"
                     f"{'' if inserted == 1 else 's'} inserted, {deleted} deleted, {updated} updated")
    return lines


# -- blame -----------------------------------------------------------------------------------


def blame_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("subject")
    p.add_argument("predicate")
    p.add_argument("object")
    p.add_argument("--graph", help="only the quad in this graph (default: the triple in every graph)")
    p.add_argument("--at")


def cmd_blame(args: argparse.Namespace) -> int:
    """``datae blame S P O [--graph G] [--at REF]``."""
    from nstore.terms import parse_term  # the term syntax, loaded when the command runs

    with open_repo(args) as repo:
        ref = args.at or repo.current_branch
        triple = (parse_term(args.subject, "subject"), parse_term(args.predicate, "predicate"),
                  parse_term(args.object, "object"))
        if args.graph is not None:
            lines = [blame_line(repo, ref, parse_term(args.graph, "graph"), triple, name_graph=False)]
        else:
            # Every graph the triple was ever in at ref: one line each, newest change first.
            lines = [blame_line(repo, ref, graph, triple, name_graph=True) for graph in graphs_of(repo, ref, triple)]
    out("\n".join(line for line in lines if line) or "no commit ever touched this quad")
    return 0


def graphs_of(repo: fstore.Repository, ref: str, triple: tuple[object, object, object]) -> list[object]:
    """The graphs (None: the default graph) whose quad of ``triple`` some commit of
    ``ref``'s history changed, the most recently changed first."""
    from fstore import Var  # the store layer, loaded when a command runs

    seen: dict[object, None] = {}
    for _, changes in repo.history(ref, Var("g"), *triple):
        for _, quad in changes:
            seen.setdefault(quad[0])
    return list(seen)


def blame_line(repo: fstore.Repository, ref: str, graph: object, triple: tuple[object, object, object], *,
               name_graph: bool) -> str | None:
    """``datae blame``'s line for one quad (None: no commit touched it)."""
    from fstore import ask  # the store layer, loaded when a command runs
    from nstore.terms import format_term

    commit = repo.blame(ref, graph, *triple)
    if commit is None:
        return None
    present = ask(repo.at(ref), graph, *triple)
    where = f" in {'the default graph' if graph is None else format_term(graph)}" if name_graph else ""
    return f"{commit.short_id} ({commit.author} {commit.time.date()}) {'added' if present else 'removed'}{where}: " \
           f"{subject(commit.message)}"


# -- revert, reset ---------------------------------------------------------------------------


def revert_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("ref")
    p.add_argument("--branch", help="the branch to commit on (default: the current branch)")
    p.add_argument("-m", "--message")
    p.add_argument("--author")


def cmd_revert(args: argparse.Namespace) -> int:
    """``datae revert REF [-m MSG]``."""
    with open_repo(args) as repo:
        branch = args.branch or repo.current_branch
        made = repo.revert(args.ref, branch, message=args.message, author=author(args))
        if made is None:
            out(f"nothing to revert: {branch} already lacks the changes of {args.ref}")
            return 0
        commit = repo.commit(made)
    out(f"[{branch} {commit.short_id}] {commit.message.splitlines()[0]} (+{commit.added} -{commit.removed})")
    return 0


def reset_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("ref")
    p.add_argument("--branch", help="the branch to move (default: the current branch)")
    p.add_argument("--hard", action="store_true")


def cmd_reset(args: argparse.Namespace) -> int:
    """``datae reset [--hard] REF``."""
    with open_repo(args) as repo:
        branch = args.branch or repo.current_branch
        before = repo.head(branch)
        head = repo.reset(args.ref, branch, hard=args.hard)
    out(f"{branch} is now at {head[:10]}" + ("" if before is None or before == head else f" (was {before[:10]})"))
    return 0
