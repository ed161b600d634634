"""`datae repl`: an interactive query shell.

Enter runs the statement once its braces balance, it ends with ``;``, or it is a dot
command; otherwise it starts a new line. History is kept in ``~/.datae_history`` (or ``$DATAE_HISTORY``); Tab
completes keywords, declared prefixes and branch / tag names; each query is timed; Ctrl-C
cancels the running query (or clears the line), Ctrl-D leaves.

Statements: SPARQL queries (with datae's version clauses ``AT``, ``CHANGES``, ``VERSIONS``),
SPARQL updates (each one commit on the branch being read; author ``$DATAE_AUTHOR`` or
``$USER``), and ``EXPLAIN <statement>`` to see the plan.

Dot commands: ``.at REF`` (query another branch, tag or commit), ``.branch [NAME]``
(list branches, or switch), ``.log [N]``, ``.diff A [B]``, ``.format table|json|csv|tsv``,
``.help``, ``.quit``.
"""

from __future__ import annotations

import os
import re
import time
from typing import Iterable

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from rich.console import Console

import fstore
from nstore.errors import DataeError

from query.session import Session, default_author
from query.termsyntax import format_term
from query.versioning import VersionContext

__all__ = ["run_repl", "statement_complete", "KEYWORDS"]

KEYWORDS = (
    "SELECT", "ASK", "CONSTRUCT", "DESCRIBE", "WHERE", "PREFIX", "BASE", "DISTINCT", "REDUCED", "FROM", "NAMED",
    "GRAPH", "OPTIONAL", "UNION", "MINUS", "FILTER", "BIND", "VALUES", "AS", "GROUP BY", "HAVING", "ORDER BY",
    "ASC", "DESC", "LIMIT", "OFFSET", "COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT", "EXISTS",
    "NOT EXISTS", "IN", "NOT IN", "REGEX", "STR", "LANG", "LANGMATCHES", "DATATYPE", "BOUND", "ISIRI", "ISLITERAL",
    "ISBLANK", "INSERT DATA", "DELETE DATA", "INSERT", "DELETE", "EXPLAIN", "AT", "CHANGES", "VERSIONS", "TO",
    "WITH", "USING", "CLEAR", "DROP", "CREATE", "LOAD", "ADD", "MOVE", "COPY", "DEFAULT", "ALL",
)
DOT_COMMANDS = (".at", ".branch", ".log", ".diff", ".format", ".help", ".quit")
_PREFIX_DECL = re.compile(r"PREFIX\s+([A-Za-z][\w.-]*)?:", re.IGNORECASE)
_GRAPH_UPDATE = re.compile(r"^\s*(CLEAR|DROP|CREATE|LOAD|ADD|MOVE|COPY)\b", re.IGNORECASE | re.MULTILINE)


def statement_complete(text: str) -> bool:
    """Whether Enter should run ``text``: a dot command, or braces that balance."""
    stripped = text.strip()
    if not stripped:
        return False
    if stripped.startswith(".") or stripped.endswith(";"):
        return True
    depth = 0
    in_string: str | None = None
    for char in re.sub(r"<[^<>\s]*>", "", stripped):
        if in_string:
            if char == in_string:
                in_string = None
        elif char in "\"'":
            in_string = char
        elif char == "#":
            break
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
    braceless = stripped.upper().startswith("EXPLAIN") or _GRAPH_UPDATE.search(stripped) is not None
    return depth <= 0 and in_string is None and ("{" in stripped or braceless)


class _Completer(Completer):
    def __init__(self, repo: fstore.Repository) -> None:
        self.repo = repo

    def get_completions(self, document, complete_event) -> Iterable[Completion]:
        word = document.get_word_before_cursor(WORD=True)
        if not word:
            return
        line = document.current_line_before_cursor
        candidates: list[str] = []
        if line.lstrip().startswith((".at", ".branch", ".diff", ".log")) or line.rstrip().upper().endswith("AT"):
            candidates = [*self.repo.branches(), *self.repo.tags()]
        else:
            candidates = list(KEYWORDS) + list(DOT_COMMANDS)
            candidates += [f"{p}:" for p in _PREFIX_DECL.findall(document.text)]
        for candidate in candidates:
            if candidate.lower().startswith(word.lower()) and candidate != word:
                yield Completion(candidate, start_position=-len(word))


def _bindings() -> KeyBindings:
    keys = KeyBindings()

    @keys.add("enter")
    def _(event) -> None:
        buffer = event.current_buffer
        if statement_complete(buffer.text):
            buffer.validate_and_handle()
        else:
            buffer.insert_text("\n")

    return keys


class Repl:
    """The loop: read a statement, run it, show the result and its time."""

    def __init__(self, repo: fstore.Repository, at: str | None, console: Console, author: str | None = None) -> None:
        self.session = Session(repo, at, author or default_author())
        self.repo = repo
        self.console = console
        self.format = "table"

    def prompt(self) -> str:
        return f"datae ({self.session.ref})> "

    def handle(self, text: str) -> bool:
        """Run one statement; False means leave."""
        text = text.strip().removesuffix(";")
        if text.startswith("."):
            return self.dot(text)
        start = time.perf_counter()
        try:
            result = self.session.run(text)
            shown = result.serialize(self.format)
        except KeyboardInterrupt:
            self.console.print("[yellow]query cancelled[/yellow]")
            return True
        except DataeError as exc:
            self.console.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
            return True
        elapsed = time.perf_counter() - start
        self.console.print(shown.rstrip("\n"), markup=False, highlight=False)
        self.console.print(f"[dim]({elapsed * 1000:.1f} ms at {self.session.ref})[/dim]")
        return True

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
                    self.console.print(f"{commit.short_id} {commit.message} (+{commit.added} -{commit.removed})",
                                       markup=False, highlight=False)
            elif command == ".diff":
                if not args:
                    raise ValueError(".diff needs a ref: .diff A [B]")
                b = args[1] if len(args) > 1 else self.session.ref
                for op, quad in self.repo.diff(args[0], b):
                    self.console.print(f"{op} " + " ".join(format_term(v) for v in quad[1:]), markup=False, highlight=False)
            elif command == ".format":
                if not args or args[0] not in ("table", "json", "csv", "tsv"):
                    raise ValueError(".format table|json|csv|tsv")
                self.format = args[0]
            elif command == ".help":
                self.console.print(__doc__, markup=False)
            else:
                raise ValueError(f"unknown command {command}; try .help")
        except (DataeError, ValueError) as exc:
            self.console.print(f"[red]error:[/red] {exc}")
        return True


def run_repl(repo: fstore.Repository, *, at: str | None = None) -> int:
    """Run the REPL on ``repo`` until Ctrl-D or ``.quit``."""
    console = Console()
    repl = Repl(repo, at, console)
    history = os.environ.get("DATAE_HISTORY") or os.path.expanduser("~/.datae_history")
    prompt = PromptSession(history=FileHistory(history), completer=_Completer(repo), multiline=True,
                           key_bindings=_bindings(), complete_while_typing=False)
    console.print("datae repl — end a statement with balanced braces and Enter; .help for commands")
    while True:
        try:
            text = prompt.prompt(repl.prompt())
        except KeyboardInterrupt:
            continue
        except EOFError:
            return 0
        if not repl.handle(text):
            return 0
