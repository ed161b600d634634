"""The ``datae`` command: a git-like command line over a datae store.

The store is ``--repo PATH`` or, like git, the ``.datae`` directory of the current directory
or of its nearest parent that has one. Exit codes as git's: 0 success, 1 a merge stopped on
conflicts (or ``verify`` found problems), 2 a usage error, 128 an error (no store, unknown
ref, bad input, a full disk), 130 interrupted (Ctrl-C), 70 an unexpected error (a bug).
Every error is one line on stderr, ``datae: error: <what and where>``; ``--debug`` prints
the traceback before it.

    datae init
    datae import releases/*.nq.gz --graph https://schema.org/ -m "import"
    datae log --graph --oneline
    datae diff v22.0 --stat
    datae query 'SELECT ?s WHERE { ?s a <https://schema.org/Class> } LIMIT 5' --at v22.0
    datae query 'SELECT ?op ?s CHANGES FROM <v22.0> WHERE { GRAPH ?g { ?s a <https://schema.org/Class> } }'
    datae query 'INSERT DATA { <urn:a> <urn:p> "x" }' -m "add x"  # one commit on the current branch
    datae query 'SELECT * WHERE { ?s ?p ?o }' | cut -f1        # TSV when piped, a table on a terminal
    datae export -o snapshot.nq.gz                            # gzip by suffix
    datae query 'EXPLAIN SELECT * WHERE { ?s ?p ?o }'
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NoReturn, Sequence
from urllib.parse import urlsplit

import lmdb

import fstore
from fstore import STORE_DIR
from fstore.files import open_output, without_gz
from fstore.rdf import FORMAT_NAMES, FORMATS, KEEP_GRAPHS, format_of, load, serialize
from nstore.errors import DataeError
from nstore.okvs import parse_size

from query.session import Session, default_author
from nstore.terms import format_term, parse_term

from .progress import counting_progress, table_progress, transfer_progress

__all__ = ["main", "find_store", "STORE_DIR"]

EXIT_CONFLICT = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 70  # sysexits' EX_SOFTWARE: not the user's input, a bug
EXIT_FATAL = 128
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a Ctrl-C


class Fatal(Exception):
    """An error the command line itself finds (bad option combination, no store):
    printed as ``datae: error: ...`` with exit code 128."""


def find_store(start: Path) -> Path | None:
    """The ``.datae`` directory of ``start`` or its nearest parent that has one."""
    for directory in (start, *start.parents):
        candidate = directory / STORE_DIR
        if (candidate / "data.mdb").exists():
            return candidate
    return None


def store_path(args: argparse.Namespace) -> Path:
    if args.repo:
        given = Path(fstore.locate(args.repo))  # the store fstore.open(args.repo) would open
        if (given / "data.mdb").exists():
            return given
        raise Fatal(f"not a datae repository: {args.repo}")
    found = find_store(Path.cwd())
    if found is None:
        raise Fatal("not a datae repository (or any of the parent directories): .datae")
    return found


def open_repo(args: argparse.Namespace) -> fstore.Repository:
    return fstore.open(store_path(args), map_size=map_size(args))


def map_size(args: argparse.Namespace) -> int | None:
    """``--map-size`` in bytes (None: DATAE_MAP_SIZE or the default)."""
    text = getattr(args, "map_size", None)
    return None if text is None else parse_size(text, "--map-size")


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


# -- commands ------------------------------------------------------------------------


def init_target(repo: str | None, path: str | None) -> Path:
    """Where ``datae [--repo REPO] init [PATH]`` makes its store: where ``--repo`` (or PATH)
    later opens it. A store already there (as fstore.locate finds it) is that store; a
    directory named ``.datae`` is the store itself; any other is the project folder the
    store goes in (``PATH/.datae``). Naming two different places is refused.

    >>> init_target(None, "/work/project")
    PosixPath('/work/project/.datae')
    """
    if repo and path and Path(repo).resolve() != Path(path).resolve():
        raise Fatal(f"init names the store twice: --repo {repo} and {path}; give one of them")
    given = Path(repo or path or ".").resolve()
    located = Path(fstore.locate(given))
    if (located / "data.mdb").exists() or given.name == STORE_DIR:
        return located
    return given / STORE_DIR


def cmd_init(args: argparse.Namespace) -> int:
    target = init_target(args.repo, args.path)
    existed = (target / "data.mdb").exists()
    fstore.open(target, map_size=map_size(args)).close()
    out(f"{'Reinitialized existing' if existed else 'Initialized empty'} datae repository in {target}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    repo = open_repo(args)
    branch = args.branch or repo.current_branch
    graph = KEEP_GRAPHS if args.graph is None else parse_term(args.graph, "graph")
    message = args.message or f"Import {', '.join(os.path.basename(f) for f in args.files)}"
    read = 0
    with counting_progress("quads") as progress:
        with repo.transaction(branch, message=message, author=args.author or default_author()) as tx:
            for name in args.files:
                if progress:
                    progress.file(os.path.basename(name))
                read += load(tx, name, args.format, graph=graph, replace=args.replace, base_iri=args.base,
                             progress=progress.phase if progress else None)
            if progress:
                progress.committing(read)
    if tx.commit_id is None:
        out(f"{read} quads read; nothing changed on {branch}")
    else:
        commit = repo.commit(tx.commit_id)
        out(f"[{branch} {commit.short_id}] {subject(commit.message)}")
        out(f" {read} quads read, {commit.added} added, {commit.removed} removed")
    repo.close()
    return 0


def cmd_export_spark(args: argparse.Namespace) -> int:
    from fstore.export.snapshot import export_snapshot

    if not args.out:
        raise Fatal("datae export spark needs --out DIR")
    repo = open_repo(args)
    ref = args.at or repo.current_branch
    try:
        with table_progress("exporting") as progress:
            result = export_snapshot(repo, ref, args.out, tables=args.table, partition_on=args.partition_on,
                                     indices=args.index, progress=progress)
    finally:
        repo.close()
    for name, table in result.tables.items():
        out(f"{name}: {table.rows} rows, version {table.version} ({len(table.files)} partitions written, "
            f"{table.reused} kept): {result.location.url(table.metadata_key)}")
    out(f"of commit {(result.commit_id or '')[:10]} in {result.location.uri}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    if args.kind == "spark":
        return cmd_export_spark(args)
    repo = open_repo(args)
    try:
        ref = args.at or repo.current_branch
        view = repo.at(ref)
        graph = fstore.Var("g") if args.graph is None else parse_term(args.graph, "graph")
        pattern = (graph, fstore.Var("s"), fstore.Var("p"), fstore.Var("o"))
        fmt = export_format(args.output, args.format)
        rdf_format = format_of("", fmt)
        graphs = len(fstore.graphs(view)) if not rdf_format.supports_datasets and args.graph is None else 1
        if graphs > 1:
            datasets = ", ".join(name for name in FORMAT_NAMES if FORMATS[name].supports_datasets)
            raise Fatal(f"{rdf_format.name} holds one graph, and {ref} has {graphs}: "
                        f"choose one with --graph, or write {datasets}")
        quads = fstore.quads(view, *pattern, terms=False)  # values: serialize makes the terms itself
        with counting_progress("quads") as progress:
            if progress:
                progress.expect(fstore.count(view, *pattern))
            told = progress.phase if progress else None
            if args.output:
                with open_output(args.output) as stream:
                    serialize(quads, fmt, stream, progress=told)
            else:
                sys.stdout.flush()
                serialize(quads, fmt, sys.stdout.buffer, progress=told)
    finally:
        repo.close()
    return 0


def export_format(output: str | None, given: str | None) -> str:
    """``--format``, else the one ``-o``'s name says (``x.ttl``, ``x.nq.gz``), else N-Quads."""
    if given:
        return given
    stem = without_gz(output or "")
    suffix = stem.rsplit(".", 1)[-1].lower() if "." in os.path.basename(stem) else ""
    return suffix if suffix in FORMATS else "nq"


def cmd_branch(args: argparse.Namespace) -> int:
    repo = open_repo(args)
    if args.delete or args.force_delete:
        name = args.delete or args.force_delete
        repo.delete_branch(name, force=bool(args.force_delete))
        out(f"Deleted branch {name}")
    elif args.name:
        repo.branch(args.name, args.start or repo.current_branch)
    else:
        current = repo.current_branch
        for name, head in sorted(repo.branches().items()):
            out(f"{'*' if name == current else ' '} {name:<20} {short_head(head)}")
        if args.all:
            for name, head in sorted(repo.remote_branches().items()):
                out(f"  {'remotes/' + name:<20} {short_head(head)}")
    repo.close()
    return 0


def short_head(head: str | None) -> str:
    """A branch's head as listed: its short id, or ``(no commits)`` (never cut short)."""
    return head[:10] if head else "(no commits)"


def cmd_remote(args: argparse.Namespace) -> int:
    with open_repo(args) as repo:
        if args.remote_command == "add":
            repo.remote_add(args.name, args.url)
        elif args.remote_command == "remove":
            repo.remote_remove(args.name)
        else:
            for name, url in sorted(repo.remotes().items()):
                out(f"{name}\t{url}")
    return 0


def token(args: argparse.Namespace) -> str | None:
    """The bearer token for an HTTP remote: ``--token``, ``--token-file`` or (None)
    ``$DATAE_TOKEN``, which fstore reads."""
    if getattr(args, "token", None):
        return args.token
    if getattr(args, "token_file", None):
        return read_token_file(args.token_file)
    return None


def read_token_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            found = handle.readline().strip()
    except OSError as exc:
        raise Fatal(f"cannot read the token file {path}: {exc.strerror}") from None
    if not found:
        raise Fatal(f"the token file {path} is empty")
    return found


def cmd_clone(args: argparse.Namespace) -> int:
    target = Path(args.directory or clone_directory(args.url)).resolve() / STORE_DIR
    with transfer_progress("receiving") as progress:
        repo = fstore.clone(args.url, target, local=not args.no_local, token=token(args), progress=progress)
    with repo:
        commits = len(list(repo.log(repo.current_branch)))
        out(f"Cloned {args.url} into {target.parent}: {commits} commit(s) on {repo.current_branch}")
    return 0


def clone_directory(url: str) -> str:
    """The directory ``datae clone URL`` makes by default: the last part of the URL's
    path, else its host (``http://host:8000`` -> ``host``)."""
    parts = urlsplit(url) if "://" in url else None
    path = (parts.path if parts else url).rstrip("/")
    return Path(path).name or (parts.hostname if parts and parts.hostname else "clone")


def cmd_fetch(args: argparse.Namespace) -> int:
    with open_repo(args) as repo:
        before = repo.remote_branches()
        with transfer_progress("receiving") as progress:
            fetched = repo.fetch(args.remote, token=token(args), progress=progress)
        for name, head in sorted(fetched.items()):
            if before.get(name) != head:
                out(f"{(before.get(name) or 'new')[:10]}..{(head or 'empty')[:10]}  {name}")
    return 0


def cmd_push(args: argparse.Namespace) -> int:
    with open_repo(args) as repo:
        branch = args.branch or repo.current_branch
        with transfer_progress("sending") as progress:
            pushed = repo.push(args.remote, branch, force=args.force, tags=args.tags, token=token(args),
                               progress=progress)
    out(f"{branch} -> {args.remote}/{branch} ({(pushed or '')[:10]})")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from query.limits import Limits

    from .server import ServerConfig, serve

    if args.timeout <= 0 or args.max_results <= 0 or args.max_held_rows <= 0:
        raise Fatal("--timeout, --max-results and --max-held-rows must be positive")
    path = store_path(args)
    config = ServerConfig(str(path), token=read_token_file(args.token_file) if args.token_file else None,
                          read_only=args.read_only,
                          limits=Limits(args.timeout, args.max_results, args.max_held_rows, **memory_limits(args)))
    if config.token is None and not config.read_only and args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"datae serve: warning: anyone who reaches {args.host} can write (give --token-file or --read-only)",
              file=sys.stderr)
    serve(config, args.host, args.port, announce=lambda line: print(line, flush=True))  # AddressInUseError names host:port
    return 0


def cmd_switch(args: argparse.Namespace) -> int:
    repo = open_repo(args)
    repo.switch(args.branch)
    out(f"Switched to branch '{args.branch}'")
    repo.close()
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    with open_repo(args) as repo:
        status = repo.status()
        merging = repo.merge_state()
    head = status["head"]
    out(f"On branch {status['branch']} at {head[:10]}" if head else f"On branch {status['branch']}, no commits yet")
    if merging is not None:
        out(f"merging {merging.other} into {merging.into}: {merging.unresolved} unresolved conflict(s)")
    for name, counts in sorted(status["tracking"].items()):
        ahead, behind = counts["ahead"], counts["behind"]
        if not ahead and not behind:
            out(f"up to date with {name}")
        else:
            out(f"{ahead} commit(s) ahead of {name}, {behind} behind (as of the last fetch)")
    return 0


def cmd_tag(args: argparse.Namespace) -> int:
    repo = open_repo(args)
    if args.delete:
        repo.delete_tag(args.delete)
        out(f"Deleted tag {args.delete}")
    elif args.name:
        repo.tag(args.name, args.ref or repo.current_branch)
    else:
        for name, commit in sorted(repo.tags().items()):
            out(f"{name:<20} {commit[:10]}")
    repo.close()
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    repo = open_repo(args)
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
    repo.close()
    return 0


def subject(message: str) -> str:
    """A commit message's first line, as ``log --oneline`` shows it (git's subject).

    >>> subject("Fix the thing\\n\\nBecause it was broken")
    'Fix the thing'
    """
    return message.splitlines()[0] if message else ""


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


def cmd_diff(args: argparse.Namespace) -> int:
    from fstore.tables.changes import tables_changed

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
    graph = "" if quad[0] is None else f" {format_term(quad[0])}"
    return f"{op} " + " ".join(format_term(v) for v in quad[1:]) + graph + " ."


def change_lines(quads: Iterable[tuple[str, tuple]], tables: dict[str, Any]) -> Iterator[str]:
    """What ``diff`` and ``show`` print of some changes: the quads, then each changed
    table (a ``TableDiff`` of stored values) in the one format of table changes."""
    from fstore.tables.commands import table_changes_lines

    for op, quad in quads:
        yield format_quad(op, quad)
    for name in sorted(tables):
        yield from table_changes_lines(tables[name])


def diff_stat(changes: Iterable[tuple[str, tuple]], tables: dict[str, Any] | None = None) -> list[str]:
    """``diff --stat``: quads added and removed per graph, then the totals (as git's
    files changed, insertions, deletions); then rows inserted, deleted and updated per
    changed table, and their totals."""
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


def cmd_blame(args: argparse.Namespace) -> int:
    repo = open_repo(args)
    ref = args.at or repo.current_branch
    triple = (parse_term(args.subject, "subject"), parse_term(args.predicate, "predicate"),
              parse_term(args.object, "object"))
    if args.graph is not None:
        lines = [blame_line(repo, ref, parse_term(args.graph, "graph"), triple, name_graph=False)]
    else:
        # Every graph the triple was ever in at ref: one line each, newest change first.
        lines = [blame_line(repo, ref, graph, triple, name_graph=True) for graph in graphs_of(repo, ref, triple)]
    repo.close()
    out("\n".join(line for line in lines if line) or "no commit ever touched this quad")
    return 0


def graphs_of(repo: fstore.Repository, ref: str, triple: tuple[object, object, object]) -> list[object]:
    """The graphs (None: the default graph) whose quad of ``triple`` some commit of
    ``ref``'s history changed, the most recently changed first."""
    seen: dict[object, None] = {}
    for _, changes in repo.history(ref, fstore.Var("g"), *triple):
        for _, quad in changes:
            seen.setdefault(quad[0])
    return list(seen)


def blame_line(repo: fstore.Repository, ref: str, graph: object, triple: tuple[object, object, object], *,
               name_graph: bool) -> str | None:
    """``datae blame``'s line for one quad (None: no commit touched it)."""
    commit = repo.blame(ref, graph, *triple)
    if commit is None:
        return None
    present = fstore.ask(repo.at(ref), graph, *triple)
    where = f" in {'the default graph' if graph is None else format_term(graph)}" if name_graph else ""
    return f"{commit.short_id} ({commit.author} {commit.time.date()}) {'added' if present else 'removed'}{where}: " \
           f"{subject(commit.message)}"


def query_limits(args: argparse.Namespace) -> Any:
    """The ``query.limits.Limits`` that ``--timeout`` and ``--max-held-rows`` give."""
    from query.limits import Limits

    if (args.timeout is not None and args.timeout <= 0) or args.max_held_rows <= 0:
        raise Fatal("--timeout and --max-held-rows must be positive")
    return Limits(timeout=args.timeout, max_rows=None, max_held_rows=args.max_held_rows, **memory_limits(args))


def cmd_query(args: argparse.Namespace) -> int:
    text = query_text(args)
    limits = query_limits(args)
    repo = open_repo(args)
    try:
        session = Session(repo, args.at, args.author or default_author(), limits,
                          message=args.message, load_dir=args.load_dir)
        result = session.run(text)
        write_text(result.serialize(result_format(result.form, args.format, sys.stdout.isatty())))
    finally:
        repo.close()
    return 0


def query_text(args: argparse.Namespace) -> str:
    """The statement ``datae query`` runs: QUERY, ``-f FILE`` or stdin (QUERY ``-``, or
    neither given), once; an empty one is refused rather than run as nothing."""
    if args.query is not None and args.file is not None:
        raise Fatal("give the query once: QUERY or -f FILE, not both")
    if args.file is not None:
        text, where = Path(args.file).read_text(), args.file
    elif args.query is None or args.query == "-":
        text, where = sys.stdin.read(), "stdin"
    else:
        text, where = args.query, "QUERY"
    if not text.strip():
        raise Fatal(f"no query in {where}: give one as QUERY, with -f FILE, or on stdin")
    return text


GRAPH_FORMS = ("CONSTRUCT", "DESCRIBE")
GRAPH_FORMATS = FORMAT_NAMES
ROW_FORMATS = ("json", "csv", "tsv")


def result_format(form: str, given: str | None, terminal: bool) -> str:
    """The format ``datae query`` writes a ``form`` result in: ``given`` (``--format``),
    else a table for a person at a terminal, else what a program reads fast and whole:
    TSV for SELECT (a rich table is 30 times slower at 200k rows, and cut to a width),
    N-Quads for a graph. ASK, updates and EXPLAIN print the same either way."""
    graph = form in GRAPH_FORMS
    if given is None:
        if terminal or form not in ("SELECT", *GRAPH_FORMS):
            return "table"
        return "nq" if graph else "tsv"
    if form in ("SELECT", "ASK", *GRAPH_FORMS) and given != "table" and (given in GRAPH_FORMATS) != graph:
        raise Fatal(f"a {form} result cannot be written as {given}: "
                    f"choose table, {', '.join(GRAPH_FORMATS if graph else ROW_FORMATS)}")
    return given


def write_text(text: str) -> None:
    """Write ``text`` to stdout ending in a newline (JSON and ASK results have none of
    their own, and a shell prompt would follow them on the same line)."""
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")


def cmd_repl(args: argparse.Namespace) -> int:
    from .repl import run_repl

    limits = query_limits(args)
    repo = open_repo(args)
    try:
        return run_repl(repo, at=args.at, limits=limits, load_dir=args.load_dir)
    finally:
        repo.close()


def cmd_stats(args: argparse.Namespace) -> int:
    repo = open_repo(args)
    for key, value in repo.stats().items():
        out(f"{key:<12} {value:,}" if isinstance(value, int) else f"{key:<12} {value}")
    view = repo.at(repo.current_branch)
    out(f"{'quads':<12} {fstore.count(view, fstore.Var('g'), fstore.Var('s'), fstore.Var('p'), fstore.Var('o'))} "
        f"(at {repo.current_branch})")
    repo.close()
    return 0


def cmd_gc(args: argparse.Namespace) -> int:
    repo = open_repo(args)
    try:
        report = repo.gc(expire=dt.timedelta(days=args.expire))
    finally:
        repo.close()
    out(f"dropped {report.commits} commit(s), {report.records} change record(s), {report.snapshots} snapshot(s), "
        f"{report.terms} term(s), {report.reflog_entries} reflog entr{'y' if report.reflog_entries == 1 else 'ies'}")
    out(f"data file: {report.bytes_before:,} -> {report.bytes_after:,} bytes")
    return 0


def cmd_reflog(args: argparse.Namespace) -> int:
    repo = open_repo(args)
    try:
        entries = repo.reflog()
    finally:
        repo.close()
    for when, kind, name, commit in entries:
        out(f"{commit[:10]} {when.isoformat(timespec='seconds')} deleted {kind} {name}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    repo = open_repo(args)
    problems = repo.verify(quick=args.quick)
    repo.close()
    for problem in problems:
        out(f"error: {problem}")
    if problems:
        return EXIT_CONFLICT
    out("ok: the B-trees and every commit id verified" if args.quick else
        "ok: the B-trees, every commit id and its counts, every head and snapshot digest, index, ref, term and blob verified")
    return 0


def _pk(text: str | None) -> object:
    """A primary key typed on the command line: an integer if it looks like one."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return text


def cmd_table(args: argparse.Namespace) -> int:
    from fstore.tables import commands

    repo = open_repo(args)
    ref = getattr(args, "at", None) or repo.current_branch
    try:
        if args.table_command == "import":
            with counting_progress("rows") as progress:
                if progress:
                    progress.file(os.path.basename(args.source))
                result = commands.table_import(
                    repo, args.source, name=args.name, branch=args.branch, pk=args.pk, table=args.table,
                    message=args.message, branch_prefix=args.branch_prefix,
                    mode="upsert" if args.upsert else "replace" if args.replace else "insert",
                    author=args.author or default_author(), progress=progress.phase if progress else None)
            out(import_summary(result))
        elif args.table_command == "export" and args.kart:
            if export_dest(args):
                raise Fatal("give either a destination file or --kart DIR, not both")
            result = commands.table_export_kart(repo, args.kart, ref=args.ref or args.at)
            heads = ", ".join(f"{name} {sha[:10]}" for name, sha in result["branches"].items())
            out(f"{result['commits']} commits written to Kart repository {args.kart} (branches: {heads})")
        elif args.table_command == "export":
            name, dest = export_name_and_dest(args, commands.table_list(repo, ref))
            if not dest:
                raise Fatal("name a destination: a file, a directory, or --kart DIR")
            written = commands.table_export(repo, ref, dest, name=name, format=args.format)
            for name, rows in written.items():
                out(f"{name}: {rows} rows written to {dest}")
        elif args.table_command == "list":
            for name in commands.table_list(repo, ref):
                out(name)
        elif args.table_command == "show":
            out(commands.table_show(repo, ref, args.name, limit=args.limit, pk=_pk(args.pk)))
        elif args.table_command == "schema":
            out(commands.table_schema(repo, ref, args.name))
        elif args.table_command == "diff":
            name, a, b = table_diff_words(repo, args.words)
            out(commands.table_diff_text(repo, a, b, name))
        elif args.table_command == "log":
            out(commands.table_log_text(repo, ref, args.name, _pk(args.pk)))
        elif args.table_command == "blame":
            out(commands.table_blame_text(repo, ref, args.name, _pk(args.pk), args.column))
    finally:
        repo.close()
    return 0


def export_dest(args: argparse.Namespace) -> str | None:
    """``datae table export``'s destination: DEST or ``-o``, not both."""
    return export_name_and_dest(args, [])[1]


def export_name_and_dest(args: argparse.Namespace, tables: list[str]) -> tuple[str | None, str | None]:
    """``datae table export [NAME] [DEST]``: the table (NAME first, as every ``table``
    command takes it; ``--name`` still says it too) and the destination (DEST or ``-o``).
    One word alone is DEST (``table export towns.csv``), or NAME when ``-o`` gives DEST
    and one of ``tables`` (those at the ref) is so named."""
    words = [word for word in (args.first, args.dest) if word is not None]
    if len(words) == 2:
        name, dest = words
    elif words and args.output and words[0] in tables:
        name, dest = words[0], None
    else:
        name, dest = None, (words[0] if words else None)
    if dest and args.output:
        raise Fatal(f"give the destination once: DEST or -o, not both ({dest!r} names no table at this ref)"
                    if len(words) == 1 else "give the destination once: DEST or -o, not both")
    if name and args.name and name != args.name:
        raise Fatal(f"give the table once: {name!r} or --name {args.name!r}, not both")
    return name or args.name, dest or args.output


def table_diff_words(repo: fstore.Repository, words: list[str]) -> tuple[str, str, str]:
    """``datae table diff A [B] NAME`` as ``diff A [B]`` takes refs (B: the current
    branch), the table last; the older ``NAME A [B]`` still reads when only that reading
    names a table and refs. Returns ``(name, a, b)``; a reading of both is an error naming
    both."""
    if not 2 <= len(words) <= 3:
        raise Fatal("table diff takes A [B] NAME: the refs as diff takes them, then the table")
    current = repo.current_branch
    last = (words[-1], words[0], words[1] if len(words) == 3 else current)
    first = (words[0], words[1], words[2] if len(words) == 3 else current)
    readings = [reading for reading in (last, first) if _names_table(repo, *reading)]
    if len(readings) == 2 and readings[0] != readings[1]:
        raise Fatal(f"table diff {' '.join(words)} is ambiguous: table {last[0]!r} from {last[1]} to {last[2]}, "
                    f"or table {first[0]!r} from {first[1]} to {first[2]}; name the refs by commit id")
    if readings:
        return readings[0]
    # no reading names a table: the one whose refs resolve says which table is missing
    return first if not _resolves(repo, last[1], last[2]) and _resolves(repo, first[1], first[2]) else last


def _resolves(repo: fstore.Repository, *refs: str) -> bool:
    try:
        for ref in refs:
            repo.resolve(ref)
    except DataeError:
        return False
    return True


def _names_table(repo: fstore.Repository, name: str, a: str, b: str) -> bool:
    """Whether refs ``a`` and ``b`` resolve and table ``name`` is at one of them."""
    from fstore.tables.commands import table_list

    if not _resolves(repo, a, b):
        return False
    return any(name in table_list(repo, ref) for ref in (a, b) if repo.resolve(ref) is not None)


def import_summary(result: dict[str, Any]) -> str:
    """What ``datae table import`` says it did: per table the rows inserted, updated,
    deleted and left; for a Kart repository the commits and the refs it made."""
    if "commits" in result:
        refs = ", ".join(f"{name} {sha[:10]}" for name, sha in {**result["branches"], **result["tags"]}.items())
        return f"{result['commits']} commits imported ({refs or 'no refs'})"
    return "\n".join(f"{name}: " + ", ".join(f"{counts[what]:,} {what}" for what in
                                             ("inserted", "updated", "deleted", "unchanged"))
                     for name, counts in result.items())


# -- parser --------------------------------------------------------------------------


def query_limit_options(p: argparse.ArgumentParser) -> None:
    """``--load-dir``, ``--timeout`` and ``--max-held-rows``: what a statement may read
    and how long and how much it may run (``datae query`` and ``datae repl``)."""
    p.add_argument("--load-dir", metavar="DIR",
                   help="let LOAD <file:...> read files under DIR (default: LOAD is refused; docs/query.md)")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="stop each query after this long (default: none)")
    held_rows_option(p)


def held_rows_option(p: argparse.ArgumentParser) -> None:
    """``--max-held-rows``: the cap on rows one query operator (ORDER BY, GROUP BY,
    DISTINCT, a hash join) holds in memory; ``--max-held-bytes`` and
    ``--max-value-length``: the query's memory budget (query.limits)."""
    from query.limits import MAX_HELD_BYTES, MAX_HELD_ROWS, MAX_VALUE_LENGTH

    p.add_argument("--max-held-rows", type=int, default=MAX_HELD_ROWS, metavar="ROWS",
                   help=f"refuse a query whose sort, grouping, DISTINCT or join holds more rows (default {MAX_HELD_ROWS})")
    p.add_argument("--max-held-bytes", type=int, default=MAX_HELD_BYTES, metavar="BYTES",
                   help=f"refuse a query whose held values take more bytes (default {MAX_HELD_BYTES})")
    p.add_argument("--max-value-length", type=int, default=MAX_VALUE_LENGTH, metavar="CHARS",
                   help=f"refuse a query that makes a longer value with CONCAT, REPLACE... (default {MAX_VALUE_LENGTH})")


def memory_limits(args: argparse.Namespace) -> dict[str, int]:
    """``--max-held-bytes`` and ``--max-value-length`` as ``Limits`` fields (positive)."""
    if args.max_held_bytes <= 0 or args.max_value_length <= 0:
        raise Fatal("--max-held-bytes and --max-value-length must be positive")
    return {"max_held_bytes": args.max_held_bytes, "max_value_length": args.max_value_length}


class Parser(argparse.ArgumentParser):
    """argparse with datae's error line: the usage, then ``datae: error: <command>:
    <problem>`` (subcommands' parsers are of this class too)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        command = self.prog.removeprefix("datae").strip()
        self.exit(EXIT_USAGE, f"datae: error: {command + ': ' if command else ''}{message}\n")


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a count of commits or rows)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


def package_version() -> str:
    """The installed distribution's version (pyproject's), for ``--version``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("datae")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    from . import merging, undo  # they import this module's helpers

    parser = Parser(prog="datae", description="datae: a versioned quad store.")
    parser.add_argument("--version", action="version", version=f"datae {package_version()}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an error")
    parser.add_argument("--repo", help="the store (a .datae directory or its parent); default: found from the cwd")
    parser.add_argument("--map-size", metavar="SIZE",
                        help="the LMDB map to reserve, e.g. 8G (default: DATAE_MAP_SIZE, else 256G, halved while the "
                             "address space refuses it)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, handler: Callable[[argparse.Namespace], int], help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.set_defaults(handler=handler)
        return p

    p = command("init", cmd_init, "create an empty store in PATH/.datae (PATH: --repo, else the current directory)")
    p.add_argument("path", nargs="?")

    p = command("import", cmd_import, "import RDF files (N-Quads, TriG, JSON-LD, N-Triples, Turtle, RDF/XML; "
                ".gz too) as one commit")
    p.add_argument("files", nargs="+")
    p.add_argument("--graph", help="put every quad in this graph (an IRI)")
    p.add_argument("--branch", help="branch to commit on (default: the current branch)")
    p.add_argument("-m", "--message")
    p.add_argument("--author")
    p.add_argument("--format", choices=FORMAT_NAMES, help="default: from each file's name (.owl and .xml: RDF/XML)")
    p.add_argument("--base", help="base IRI for relative IRIs")
    p.add_argument("--replace", action="store_true", help="each graph in the files ends up with exactly their quads")

    p = command("export", cmd_export, "write the quads at a ref as N-Quads, TriG or JSON-LD (one graph: also "
                "N-Triples, Turtle, RDF/XML), "
                "or (export spark) a Parquet dataset in Kartothek layout for Spark")
    p.add_argument("kind", nargs="?", choices=["rdf", "spark"], default="rdf")
    p.add_argument("--at", help="branch, tag or commit (default: the current branch)")
    p.add_argument("--out", help="export spark: the dataset directory or URI")
    p.add_argument("--table", action="append", help="export spark: a table to include (repeatable; default: all)")
    p.add_argument("--partition-on", action="append",
                   help="export spark: partition on this column (repeatable; the quads are partitioned by graph)")
    p.add_argument("--index", action="append", help="export spark: build a secondary index on this column")
    p.add_argument("--format", choices=FORMAT_NAMES, help="default: from -o's name (.nq, .trig, .jsonld, .nt, "
                   ".ttl, .rdf; .gz compresses), else nq; nt, ttl and rdf hold one graph")
    p.add_argument("--graph", help="only this graph")
    p.add_argument("-o", "--output", help="the file to write (default: stdout); a name ending in .gz is gzip-compressed")

    p = command("branch", cmd_branch, "list, create (NAME [START]) or delete (-d NAME) branches")
    p.add_argument("name", nargs="?")
    p.add_argument("start", nargs="?")
    p.add_argument("-d", "--delete", metavar="NAME", help="delete a branch another branch has merged")
    p.add_argument("-D", dest="force_delete", metavar="NAME", help="delete a branch even if nothing has merged it")
    p.add_argument("-a", "--all", action="store_true", help="list the remote-tracking branches too")

    p = command("remote", cmd_remote, "the stores this one fetches from and pushes to: add NAME URL, remove NAME, list")
    remotes = p.add_subparsers(dest="remote_command", required=True, metavar="REMOTE_COMMAND")
    r = remotes.add_parser("add", help="add a remote (URL: a path to a store, or http://HOST:PORT of datae serve)")
    r.add_argument("name")
    r.add_argument("url")
    r = remotes.add_parser("remove", help="remove a remote and its remote-tracking branches")
    r.add_argument("name")
    remotes.add_parser("list", help="every remote and its URL")

    def token_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--token", help="an HTTP remote's bearer token (default: --token-file, else $DATAE_TOKEN)")
        p.add_argument("--token-file", metavar="FILE", help="read the bearer token from the first line of FILE")

    p = command("clone", cmd_clone, "a new store in DIRECTORY with every commit of the store at URL")
    p.add_argument("url", help="a path to a store, or http://HOST:PORT of datae serve")
    p.add_argument("directory", nargs="?")
    p.add_argument("--no-local", action="store_true",
                   help="send and check every commit, as a fetch does, rather than copying the store's file")
    token_options(p)
    p = command("fetch", cmd_fetch, "bring a remote's new commits and tags here (REMOTE/BRANCH refs)")
    p.add_argument("remote", nargs="?", default="origin")
    token_options(p)
    p = command("push", cmd_push, "send a branch to a remote (a fast-forward unless --force)")
    p.add_argument("remote", nargs="?", default="origin")
    p.add_argument("branch", nargs="?")
    p.add_argument("--force", action="store_true", help="move the remote's branch even if it drops commits (they stay in its reflog)")
    p.add_argument("--tags", action="store_true", help="push every tag too (a tag there is moved only with --force)")
    token_options(p)
    p = command("pull", merging.cmd_pull, "fetch a remote, then merge its branch into the current one")
    p.add_argument("remote", nargs="?", default="origin")
    p.add_argument("branch", nargs="?")
    p.add_argument("--author", help="the merge commit's author (default: $DATAE_AUTHOR, else $USER)")
    token_options(p)

    p = command("serve", cmd_serve, "serve the store over HTTP: sync for http:// remotes, SPARQL queries and "
                "updates at /sparql (GET /sparql alone: the service description), the graph store protocol at "
                "/store, merge requests at /requests (docs/server.md)")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="default 8000; 0 picks a free port")
    p.add_argument("--token-file", metavar="FILE", help="writes (push, SPARQL update, graph store writes, merge requests) need "
                   "Authorization: Bearer with the token on FILE's first line")
    p.add_argument("--read-only", action="store_true", help="refuse every write")
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="stop a query after this long (default 30)")
    p.add_argument("--max-results", type=int, default=100_000, metavar="ROWS",
                   help="refuse a query result larger than this (default 100000)")
    held_rows_option(p)

    p = command("switch", cmd_switch, "make BRANCH the current branch")
    p.add_argument("branch")

    p = command("tag", cmd_tag, "list tags, tag REF (default: the current branch) as NAME, or delete one (-d NAME)")
    p.add_argument("name", nargs="?")
    p.add_argument("ref", nargs="?")
    p.add_argument("-d", "--delete", metavar="NAME")

    command("status", cmd_status, "the current branch, and how far it is from its remote-tracking branches")

    p = command("merge", merging.cmd_merge, "merge OTHER into the current branch (or --into BRANCH); conflicts stop "
                "it as the merge in progress: --continue or --abort it")
    p.add_argument("other", nargs="?")
    p.add_argument("--into")
    p.add_argument("--policy", choices=["abort", "ours", "theirs"],
                   help="settle every conflict on one side, or (abort) write nothing; default: stop on conflicts")
    p.add_argument("--continue", dest="cont", action="store_true", help="commit the merge in progress once resolved")
    p.add_argument("--abort", action="store_true", help="forget the merge in progress")
    p.add_argument("-m", "--message")
    p.add_argument("--author")
    command("conflicts", merging.cmd_conflicts, "the conflicts of the merge in progress (KEY, where, base/ours/theirs)")
    p = command("resolve", merging.cmd_resolve, "settle conflicts KEY... (default: every unresolved one) of the merge in progress")
    side = p.add_mutually_exclusive_group()
    side.add_argument("--ours", action="store_true", help="keep the branch's side (the default)")
    side.add_argument("--theirs", action="store_true", help="keep the merged side")
    p.add_argument("keys", nargs="*", metavar="KEY")

    p = command("show", undo.cmd_show, "a commit (default: the current branch's head) and its changes")
    p.add_argument("ref", nargs="?")
    p = command("revert", undo.cmd_revert, "a new commit undoing the changes of commit REF")
    p.add_argument("ref")
    p.add_argument("--branch", help="the branch to commit on (default: the current branch)")
    p.add_argument("-m", "--message")
    p.add_argument("--author")
    p = command("reset", undo.cmd_reset, "move the current branch to REF (--hard: even if commits only it reached "
                "are dropped; they stay in the reflog)")
    p.add_argument("ref")
    p.add_argument("--branch", help="the branch to move (default: the current branch)")
    p.add_argument("--hard", action="store_true")

    p = command("log", cmd_log, "the commits reachable from REF, newest first")
    p.add_argument("ref", nargs="?")
    p.add_argument("-n", type=positive_int, help="at most N commits")
    p.add_argument("--oneline", action="store_true")
    p.add_argument("--graph", action="store_true", help="draw the branches and merges beside the commits")

    p = command("diff", cmd_diff, "quads added (+) and removed (-) from A to B (default: the current branch)")
    p.add_argument("a")
    p.add_argument("b", nargs="?")
    p.add_argument("--stat", action="store_true", help="only the quads added and removed per graph")

    p = command("blame", cmd_blame, "the commit that gave a quad its state")
    p.add_argument("subject")
    p.add_argument("predicate")
    p.add_argument("object")
    p.add_argument("--graph", help="only the quad in this graph (default: the triple in every graph)")
    p.add_argument("--at")

    p = command("query", cmd_query, "run a SPARQL query, an update (one commit) or EXPLAIN (QUERY, -f FILE, or stdin)")
    p.add_argument("query", nargs="?")
    p.add_argument("-f", "--file")
    p.add_argument("--at", help="branch, tag or commit to query (default: the current branch)")
    p.add_argument("--format", choices=["table", "json", "csv", "tsv", *FORMAT_NAMES],
                   help="default: a table on a terminal; else TSV for SELECT, N-Quads for CONSTRUCT")
    p.add_argument("-m", "--message", help="an update's commit message (default: the update's text)")
    p.add_argument("--author")
    query_limit_options(p)

    p = command("repl", cmd_repl, "an interactive query shell")
    p.add_argument("--at")
    query_limit_options(p)

    p = command("table", cmd_table, "tables stored the Kart Datasets V3 way: import, export, list, show, schema, diff, log, blame")
    tables = p.add_subparsers(dest="table_command", required=True, metavar="TABLE_COMMAND")
    t = tables.add_parser("import", help="a CSV, SQLite or GeoPackage table (one commit), or a whole Kart repository")
    t.add_argument("source")
    t.add_argument("--name", help="table name (default: the file's stem)")
    t.add_argument("--pk", help="primary key column of a new table (default for a CSV: the one column whose values "
                   "are all present and distinct)")
    t.add_argument("--table", help="the table inside a SQLite / GeoPackage file")
    t.add_argument("--branch", help="the branch to commit on (default: the current one); a Kart repository is "
                   "grafted onto it")
    how = t.add_mutually_exclusive_group()
    how.add_argument("--upsert", action="store_true", help="insert new keys, rewrite changed rows, keep the others")
    how.add_argument("--replace", action="store_true", help="the table ends up with exactly the file's rows")
    t.add_argument("-m", "--message")
    t.add_argument("--author")
    t.add_argument("--branch-prefix", default="", help="a Kart repository: its branches become PREFIX<name>, a "
                   "history of their own (default: grafted onto --branch, or the current branch, if it has commits)")
    t = tables.add_parser("export", help="to a .csv / .sqlite / .gpkg file, Kart V3 dataset trees in a directory, "
                          "or (--kart) a Kart repository with the tables' history")
    t.add_argument("first", nargs="?", metavar="NAME", help="the table (default: the one table there is; a Kart "
                   "tree directory: every table)")
    t.add_argument("dest", nargs="?", help="a .csv file (.csv.gz: gzip-compressed), a .sqlite / .gpkg file, or a "
                   "directory for Kart V3 dataset trees")
    t.add_argument("-o", "--output", metavar="DEST", help="the same as DEST, as datae export takes it")
    t.add_argument("--name", help="the same as NAME")
    t.add_argument("--format", choices=["csv", "sqlite", "gpkg", "kart"])
    t.add_argument("--at")
    t.add_argument("--kart", metavar="DIR", help="write a Kart (Datasets V3) git repository: one commit per commit "
                   "that changed tables (DIR must not exist or be empty)")
    t.add_argument("--ref", help="--kart: the history of this ref only (default: every branch and tag)")
    t = tables.add_parser("list", help="the tables at a ref")
    t.add_argument("--at")
    t = tables.add_parser("show", help="rows of a table")
    t.add_argument("name")
    t.add_argument("--pk", help="only this row")
    t.add_argument("--limit", type=positive_int, default=20, help="at most N rows (default 20)")
    t.add_argument("--at")
    t = tables.add_parser("schema", help="a table's schema.json")
    t.add_argument("name")
    t.add_argument("--at")
    t = tables.add_parser("diff", usage="datae table diff [-h] A [B] NAME",
                          help="rows inserted (+), deleted (-) and cells updated (~) from A to B "
                          "(default: the current branch), as datae diff A [B] prints them")
    t.add_argument("words", nargs="+", metavar="A [B] NAME", help="the refs as datae diff takes them, then the table "
                   "(the older NAME A [B] still reads when it is not ambiguous)")
    t = tables.add_parser("log", help="the commits that changed one row")
    t.add_argument("name")
    t.add_argument("pk")
    t.add_argument("--at")
    t = tables.add_parser("blame", help="the commit that gave a cell its value")
    t.add_argument("name")
    t.add_argument("pk")
    t.add_argument("column")
    t.add_argument("--at")

    command("stats", cmd_stats, "counts of commits, branches, tags, quads, and the file's live and reclaimable bytes")
    p = command("verify", cmd_verify, "recompute every commit id, head digest and blob hash; check every index and the dictionary")
    p.add_argument("--quick", action="store_true", help="check the commit chain only (every commit id)")
    p = command("gc", cmd_gc, "drop what no branch, tag, remote-tracking branch or recent reflog entry reaches, then compact the file")
    p.add_argument("--expire", type=float, default=30.0, metavar="DAYS",
                   help="keep deleted branches' and tags' commits this many days (default 30; 0: drop them now)")
    command("reflog", cmd_reflog, "the deleted branches and tags, and the commits they reached")
    from .requests_cli import register as register_requests  # imported here: it imports this module

    register_requests(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    debug = False
    try:
        args = build_parser().parse_args(argv)
        debug = args.debug
        with warnings.catch_warnings():
            warnings.showwarning = _warning_line
            return args.handler(args)
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, as git does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        # Ctrl-C is the user's choice, not an error: no traceback, the shell's code.
        # Any write in progress was aborted with its transaction.
        if debug:
            traceback.print_exc()
        return EXIT_INTERRUPTED
    except Exception as exc:  # every error leaves by the one path below
        if debug:
            traceback.print_exc()
        message, code = describe_error(exc)
        return fail(message if debug or code != EXIT_INTERNAL else f"{message} (rerun with --debug for the traceback)",
                    code)


def _warning_line(message: Warning | str, *_: Any, **__: Any) -> None:
    """A warning (e.g. a tag a fetch skipped) is one line, ``datae: warning: ...``."""
    sys.stdout.flush()
    print(f"datae: warning: {message}", file=sys.stderr)


def describe_error(exc: Exception) -> tuple[str, int]:
    """What went wrong, for one line, and the exit code: datae's own errors say what and
    where themselves; the operating system's and LMDB's name their file or store."""
    if isinstance(exc, (Fatal, DataeError)):
        return str(exc), EXIT_FATAL
    if isinstance(exc, OSError):
        what = exc.strerror or str(exc)
        return (f"{exc.filename}: {what}" if exc.filename is not None else what), EXIT_FATAL
    if isinstance(exc, lmdb.MapFullError):
        return f"the store's map is full ({exc}): give a larger --map-size", EXIT_FATAL
    if isinstance(exc, lmdb.Error):
        return f"the store's LMDB file: {exc}", EXIT_FATAL
    return f"unexpected {type(exc).__name__}: {exc}", EXIT_INTERNAL


def fail(message: str, code: int = EXIT_FATAL) -> int:
    """Print the one error line every failure of the command prints; return ``code``."""
    sys.stdout.flush()  # what was written so far comes before the error line
    print(f"datae: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
