"""`datae repl`: an interactive query shell.

Input may span lines: Enter runs it when it ends with ``;`` (outside braces, where ``;``
continues a predicate-object list) or when the line is empty; otherwise Enter adds a line.
Dot commands run at once. PREFIX and BASE declarations are kept for the session and put in
front of later statements that use them; input that only declares just records them.
History is kept in ``~/.datae_history`` (or ``$DATAE_HISTORY``); Tab completes keywords,
prefixes, IRIs seen (in results, and in a sample of the store) and branch / tag names; each
query is timed; results taller than the terminal go through a pager; Ctrl-C cancels the
running query (or clears the input), Ctrl-D leaves.

Statements: SPARQL queries (with datae's version clauses ``AT``, ``CHANGES``, ``VERSIONS``),
SPARQL updates (each one commit on the branch being read; author ``$DATAE_AUTHOR`` or
``$USER``), and ``EXPLAIN <statement>`` to see the plan. Dot commands: see ``.help``
(:data:`datae.repl_text.HELP`).

The pure parts (when input is complete, prologues, completion candidates, help text) are
in :mod:`datae.repl_text`; this module wires them to prompt_toolkit and rich.
"""

from __future__ import annotations

import os
import time
from contextlib import closing
from itertools import islice
from typing import Any, Iterable

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from rich.console import Console
from rich.markdown import Markdown

import fstore
from fstore import IRI, Var
from fstore.tables.changes import tables_changed
from nstore.errors import DataeError

from query.errors import QuerySyntaxError
from query.results import Result
from query.session import Session, default_author
from query.versioning import VersionContext

from .commands.history import change_lines
from .context import subject
from .repl_text import (
    DOT_ARGUMENTS, DOT_COMMANDS, GRAPH_FORMATS, HELP, KEYWORDS, ROW_FORMATS, Prepared, completion_candidates, declared, input_complete, needs_pager,
    prepare_statement, split_prologue,
)

__all__ = ["Repl", "run_repl", "build_prompt", "loop", "input_complete", "KEYWORDS", "DOT_COMMANDS"]

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
# Completion samples the store rather than scanning it: these many quads, once per ref
# (again after a commit), are enough to find the common predicates and classes.
STORE_SAMPLE = 5000
# IRIs remembered from results, the newest kept.
SEEN_LIMIT = 5000


class Repl:
    """The session state and what a statement does: read a statement, run it, show the
    result and its time. No terminal needed: ``handle`` prints to ``console``.

    >>> import io, tempfile
    >>> repo = fstore.open(tempfile.mkdtemp())
    >>> shell = Repl(repo, None, Console(file=io.StringIO(), color_system=None))
    >>> shell.handle("PREFIX ex: <http://ex/>")
    True
    >>> shell.prefixes
    {'ex': 'http://ex/'}
    >>> repo.close()
    """

    def __init__(self, repo: fstore.Repository, at: str | None, console: Console, author: str | None = None,
                 **options: Any) -> None:
        self.session = Session(repo, at, author or default_author(), **options)  # limits=, load_dir=
        self.repo = repo
        self.console = console
        self.format = "table"  # of rows (SELECT, ASK)
        self.graph_format = "table"  # of CONSTRUCT and DESCRIBE results
        self.pager = True
        self.prefixes: dict[str, str] = {}
        self.base: str | None = None
        self.seen: dict[str, None] = {}  # an ordered set of IRIs from results
        self._sampled: dict[str, list[str]] = {}  # ref -> IRIs sampled from the store

    def prompt(self) -> str:
        return f"datae ({self.session.ref})> "

    def handle(self, text: str) -> bool:
        """Run one statement or dot command; False means leave."""
        text = text.strip().removesuffix(";").rstrip()
        if text.startswith("."):
            return self.dot(text)
        if not split_prologue(text).rest.strip():
            self.declare(text)
        else:
            self.run(text)
        return True

    def declare(self, text: str) -> None:
        """Input with nothing after its declarations: record them (only comments: nothing)."""
        found = declared(text)
        if found.prefixes or found.base is not None:
            self.remember(text)
            self.show_prefixes()

    def run(self, text: str) -> None:
        """Run a statement with the session's declarations, show its outcome and time."""
        start = time.perf_counter()
        prepared = prepare_statement(text, self.prefixes, self.base)
        try:
            result = self.session.run(prepared.text)
            if isinstance(result, Result):
                # The table shortens IRIs by these; the query's own come first to win ties.
                result.prefixes = {**result.prefixes, **{k: v for k, v in self.prefixes.items() if k not in result.prefixes}}
            graph = isinstance(result, Result) and result.form in ("CONSTRUCT", "DESCRIBE")
            shown = result.serialize(self.graph_format if graph else self.format)
        except KeyboardInterrupt:
            self.console.print("[yellow]query cancelled[/yellow]")
            return
        except DataeError as exc:
            self.console.print(f"[red]error:[/red] {_in_input_terms(exc, prepared)}", markup=True, highlight=False)
            return
        elapsed = time.perf_counter() - start
        self.remember(text)
        self.note(result)
        self.show(shown.rstrip("\n"))
        self.console.print(f"[dim]({elapsed * 1000:.1f} ms at {self.session.ref})[/dim]")

    def remember(self, text: str) -> None:
        """Keep the declarations of a statement that ran (or only declared)."""
        found = declared(text)
        self.prefixes.update(found.prefixes)
        if found.base is not None:
            self.base = found.base

    def note(self, result: Any) -> None:
        """Remember the IRIs of a result for completion; a commit makes the samples stale."""
        if not isinstance(result, Result):
            self._sampled.clear()
            return
        if result.form not in ("SELECT",):
            return
        for row in islice(result.rows, SEEN_LIMIT):
            for term in row.values():
                if type(term) is IRI:
                    self.seen[term.value] = None
        while len(self.seen) > SEEN_LIMIT:
            del self.seen[next(iter(self.seen))]

    def show(self, text: str) -> None:
        """Print ``text``, through the pager when it is taller than the terminal."""
        if needs_pager(text, self.console.height, is_terminal=self.console.is_terminal, enabled=self.pager):
            with self.console.pager():
                self.console.print(text, markup=False, highlight=False)
        else:
            self.console.print(text, markup=False, highlight=False)

    def show_prefixes(self) -> None:
        if self.base is not None:
            self.console.print(f"BASE <{self.base}>", markup=False, highlight=False)
        for name, iri in self.prefixes.items():
            self.console.print(f"PREFIX {name}: <{iri}>", markup=False, highlight=False)
        if self.base is None and not self.prefixes:
            self.console.print("no prefixes declared")

    def iris(self) -> list[str]:
        """IRIs to complete: those seen in results, then a sample of the store's predicates
        and classes at the session's ref (taken once per ref, not per keystroke)."""
        ref = self.session.ref
        if ref not in self._sampled:
            self._sampled[ref] = sample_iris(self.repo, ref)
        return [*self.seen, *self._sampled[ref]]

    def refs(self) -> list[str]:
        return [*self.repo.branches(), *self.repo.tags()]

    def dot(self, text: str) -> bool:
        command, *args = text.split()
        try:
            if command == ".quit":
                return False
            if command == ".at":
                if args:
                    VersionContext(self.repo).resolve(args[0])  # raises for an unknown ref
                    self.session.at = args[0]
                self.console.print(f"queries read {self.session.ref}")
            elif command == ".branch":
                if args:
                    self.repo.switch(args[0])
                    self.session.at = None
                current = self.repo.current_branch
                for name, head in sorted(self.repo.branches().items()):
                    self.console.print(f"{'*' if name == current else ' '} {name} {(head or '')[:10]}", highlight=False)
            elif command == ".log":
                for commit in self.repo.log(self.session.ref, limit=int(args[0]) if args else 10):
                    self.console.print(f"{commit.short_id} {subject(commit.message)} (+{commit.added} -{commit.removed})",
                                       markup=False, highlight=False)
            elif command == ".diff":
                if not args:
                    raise ValueError(".diff needs a ref: .diff A [B]")
                b = args[1] if len(args) > 1 else self.session.ref
                lines = list(change_lines(self.repo.diff(args[0], b), tables_changed(self.repo, args[0], b, python=False)))
                if lines:
                    self.show("\n".join(lines))
            elif command == ".format":
                if not args or args[0] not in DOT_ARGUMENTS[".format"]:
                    raise ValueError(f".format {'|'.join(ROW_FORMATS)} (SELECT) or "
                                     f"{'|'.join(('table', *GRAPH_FORMATS))} (CONSTRUCT)")
                if args[0] == "table":
                    self.format = self.graph_format = "table"
                elif args[0] in ROW_FORMATS:
                    self.format = args[0]
                else:
                    self.graph_format = args[0]
            elif command == ".prefixes":
                self.show_prefixes()
            elif command == ".pager":
                if len(args) != 1 or args[0] not in ("on", "off"):
                    raise ValueError(".pager on|off")
                self.pager = args[0] == "on"
                self.console.print(f"pager {args[0]}")
            elif command == ".help":
                self.console.print(Markdown(HELP))
            else:
                raise ValueError(f"unknown command {command}; try .help")
        except (DataeError, ValueError) as exc:
            self.console.print(f"[red]error:[/red] {exc}", highlight=False)
        return True


def _in_input_terms(exc: DataeError, prepared: Prepared) -> str:
    """The error's text, a syntax error's position counted in the input as typed (not in
    the statement after EXPLAIN, nor with the session's declarations put in front)."""
    text = str(exc)
    if isinstance(exc, QuerySyntaxError) and exc.line is not None and exc.column is not None:
        line, column = prepared.position(exc.line, exc.column)
        text = text.replace(f"line {exc.line}, column {exc.column}:", f"line {line}, column {column}:", 1)
    return text


def sample_iris(repo: fstore.Repository, ref: str, limit: int = STORE_SAMPLE) -> list[str]:
    """The predicates and classes (objects of ``rdf:type``) among the first ``limit`` quads
    at ``ref``: cheap on any store, and the vocabulary a query needs most."""
    found: dict[str, None] = {}
    try:
        matches = fstore.quads(repo.at(ref), Var("g"), Var("s"), Var("p"), Var("o"))
    except DataeError:
        return []  # an unknown ref: nothing to offer
    with closing(matches):  # ends the read transaction the generator holds, unexhausted
        for _, _, p, o in islice(matches, limit):
            if type(p) is IRI:
                found[p.value] = None
                if p.value == RDF_TYPE and type(o) is IRI:
                    found[o.value] = None
    return list(found)


class _Completer(Completer):
    def __init__(self, repl: Repl) -> None:
        self.repl = repl

    def get_completions(self, document, complete_event) -> Iterable[Completion]:
        before = document.text_before_cursor
        prefixes = {**self.repl.prefixes, **declared(document.text).prefixes}
        word, candidates = completion_candidates(before, prefixes=prefixes, iris=self.repl.iris(), refs=self.repl.refs())
        for candidate in candidates:
            yield Completion(candidate, start_position=-len(word))


def _bindings() -> KeyBindings:
    keys = KeyBindings()

    @keys.add("enter")
    def _(event) -> None:
        buffer = event.current_buffer
        if input_complete(buffer.text):
            buffer.validate_and_handle()
        else:
            buffer.insert_text("\n")

    return keys


def build_prompt(repl: Repl, *, history: History | None = None, **io: Any) -> PromptSession:
    """The prompt_toolkit session: multi-line input whose Enter runs complete input (see
    :func:`input_complete`), completion on Tab. ``io`` passes ``input`` / ``output`` (tests
    use a pipe input and a dummy output)."""
    return PromptSession(
        history=InMemoryHistory() if history is None else history, completer=_Completer(repl), multiline=True, key_bindings=_bindings(),
        complete_while_typing=False, prompt_continuation=lambda width, line, wrap: "...> ".rjust(width), **io,
    )


def loop(repl: Repl, prompt: PromptSession) -> int:
    """Read and run statements until Ctrl-D or ``.quit``."""
    while True:
        try:
            text = prompt.prompt(repl.prompt())
        except KeyboardInterrupt:
            continue
        except EOFError:
            return 0
        if not repl.handle(text):
            return 0


def run_repl(repo: fstore.Repository, *, at: str | None = None, **options: Any) -> int:
    """Run the REPL on ``repo`` until Ctrl-D or ``.quit``; ``options`` (``limits``,
    ``load_dir``) go to every statement's :class:`query.session.Session`."""
    console = Console()
    repl = Repl(repo, at, console, **options)
    history = os.environ.get("DATAE_HISTORY") or os.path.expanduser("~/.datae_history")
    console.print("datae repl — end a statement with ; or an empty line; .help for commands", highlight=False)
    return loop(repl, build_prompt(repl, history=FileHistory(history)))
