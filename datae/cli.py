"""The ``datae`` command: a git-like command line over a datae store, as a table of
commands.

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

:data:`COMMANDS` names each command's module in :mod:`datae.commands` and its one-line
help. A module declares command ``NAME``'s arguments in ``NAME_arguments(parser)`` and
runs it in ``cmd_NAME(args)``. Only the module of the command given is imported, when
argparse reaches it: ``datae --help`` and ``datae --version`` load neither the store nor
the query engine, and ``datae CMD --help`` loads only CMD's module, whose top level imports
nothing heavier than :mod:`datae.context`.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from importlib import import_module
from typing import Any, NoReturn, Sequence

from .context import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, describe_error, fail, warning_line

__all__ = ["main", "COMMANDS"]

# name -> (module in datae.commands, one-line help); --help lists them in this order.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("store", "create an empty store in PATH/.datae (PATH: --repo, else the current directory)"),
    "import": ("data", "import RDF files (N-Quads, TriG, JSON-LD, N-Triples, Turtle, RDF/XML; .gz too) as one commit"),
    "export": ("data", "write the quads at a ref as N-Quads, TriG or JSON-LD (one graph: also N-Triples, Turtle, "
               "RDF/XML), or (export spark) a Parquet dataset in Kartothek layout for Spark"),
    "branch": ("branches", "list, create (NAME [START]) or delete (-d NAME) branches"),
    "remote": ("remotes", "the stores this one fetches from and pushes to: add NAME URL, remove NAME, list"),
    "clone": ("remotes", "a new store in DIRECTORY with every commit of the store at URL"),
    "fetch": ("remotes", "bring a remote's new commits and tags here (REMOTE/BRANCH refs)"),
    "push": ("remotes", "send a branch to a remote (a fast-forward unless --force)"),
    "pull": ("remotes", "fetch a remote, then merge its branch into the current one"),
    "serve": ("serve", "serve the store over HTTP: sync for http:// remotes, SPARQL queries and updates at /sparql "
              "(GET /sparql alone: the service description), the graph store protocol at /store, merge requests "
              "at /requests (docs/server.md)"),
    "switch": ("branches", "make BRANCH the current branch"),
    "tag": ("branches", "list tags, tag REF (default: the current branch) as NAME, or delete one (-d NAME)"),
    "status": ("store", "the current branch, and how far it is from its remote-tracking branches"),
    "merge": ("merge", "merge OTHER into the current branch (or --into BRANCH); conflicts stop it as the merge in "
              "progress: --continue or --abort it"),
    "conflicts": ("merge", "the conflicts of the merge in progress (KEY, where, base/ours/theirs)"),
    "resolve": ("merge", "settle conflicts KEY... (default: every unresolved one) of the merge in progress"),
    "show": ("history", "a commit (default: the current branch's head) and its changes"),
    "revert": ("history", "a new commit undoing the changes of commit REF"),
    "reset": ("history", "move the current branch to REF (--hard: even if commits only it reached are dropped; "
              "they stay in the reflog)"),
    "log": ("history", "the commits reachable from REF, newest first"),
    "diff": ("history", "quads added (+) and removed (-) from A to B (default: the current branch)"),
    "blame": ("history", "the commit that gave a quad its state"),
    "query": ("data", "run a SPARQL query, an update (one commit) or EXPLAIN (QUERY, -f FILE, or stdin)"),
    "repl": ("data", "an interactive query shell"),
    "table": ("tables", "tables stored the Kart Datasets V3 way: import, export, list, show, schema, diff, log, blame"),
    "stats": ("store", "counts of commits, branches, tags, quads, and the file's live and reclaimable bytes"),
    "verify": ("store", "recompute every commit id, head digest and blob hash; check every index and the dictionary"),
    "gc": ("store", "drop what no branch, tag, remote-tracking branch or recent reflog entry reaches, then compact "
           "the file"),
    "upgrade": ("store", "rewrite a store of an older format (3) in this datae's format, verified before it replaces "
                "the old file"),
    "reflog": ("store", "the deleted branches and tags, and the commits they reached"),
    "request": ("merge_requests", "merge requests: open, list, show, comment, approve, merge, close (--remote NAME: a "
                "remote's)"),
}


class Parser(argparse.ArgumentParser):
    """argparse with datae's error line: the usage, then ``datae: error: <command>:
    <problem>`` (subcommands' parsers are of this class too)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        command = self.prog.removeprefix("datae").strip()
        self.exit(EXIT_USAGE, f"datae: error: {command + ': ' if command else ''}{message}\n")


class CommandParser(Parser):
    """A command's parser, empty until argparse hands it the command's arguments: then it
    imports the command's module, which declares the arguments and names the handler (as
    Kart's lazy click group loads a command's module only when that command runs)."""

    def __init__(self, *args: Any, command: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command = command
        self.loaded = False

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("parser_class", Parser)  # a command's own subcommands (remote add) load nothing
        return super().add_subparsers(**kwargs)

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        if not self.loaded:
            module = import_module(f"datae.commands.{COMMANDS[self.command][0]}")  # the lazy load of one command
            getattr(module, f"{self.command}_arguments")(self)
            self.set_defaults(handler=getattr(module, f"cmd_{self.command}"))
            self.loaded = True
        return super().parse_known_args(args, namespace)


class VersionAction(argparse.Action):
    """``--version``: the version is read (importlib.metadata, 30 ms) only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show program's version number and exit", **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        print(f"datae {package_version()}")  # on stdout, as argparse's own version action
        parser.exit()


def package_version() -> str:
    """The installed distribution's version (pyproject's), for ``--version``."""
    from importlib.metadata import PackageNotFoundError, version  # 30 ms: only for --version

    try:
        return version("datae")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def build_parser() -> Parser:
    """The global options and a parser per command of :data:`COMMANDS`, each empty until
    argparse reaches it (:class:`CommandParser`)."""
    parser = Parser(prog="datae", description="datae: a versioned quad store.")
    parser.add_argument("--version", action=VersionAction)
    parser.add_argument("--debug", action="store_true", help="print the traceback of an error")
    parser.add_argument("--repo", help="the store (a .datae directory or its parent); default: found from the cwd")
    parser.add_argument("--map-size", metavar="SIZE",
                        help="the LMDB map to reserve, e.g. 8G (default: DATAE_MAP_SIZE, else 256G, halved while the "
                             "address space refuses it)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=CommandParser)
    for name, (_, help) in COMMANDS.items():
        sub.add_parser(name, command=name, help=help, description=help)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``datae ARGV...`` (default: ``sys.argv[1:]``); return its exit code. A usage
    error exits (SystemExit 2), as argparse does.

    >>> main(["--repo", "/nowhere", "status"])  # prints: datae: error: not a datae repository: /nowhere
    128
    """
    debug = False
    try:
        args = build_parser().parse_args(argv)
        debug = args.debug
        with warnings.catch_warnings():
            warnings.showwarning = warning_line
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


if __name__ == "__main__":
    sys.exit(main())
