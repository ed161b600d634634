"""The REPL driven in a pseudo-terminal: type a query, read the table back."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import datae
import fstore
from fstore import IRI
from datae.repl import input_complete

# The checkout this test imports (wherever the test file itself lives).
ROOT = Path(datae.__file__).resolve().parents[1]


def test_input_complete():
    assert not input_complete("SELECT * WHERE { ?s ?p ?o }")  # GROUP BY may follow on the next line
    assert input_complete("SELECT * WHERE { ?s ?p ?o };")
    assert input_complete("SELECT * WHERE { ?s ?p ?o }\n")  # an empty line
    assert not input_complete("SELECT * WHERE {\n ?s ?p ?o")
    assert input_complete(".log 3")
    assert input_complete("DESCRIBE <urn:x>;")
    assert not input_complete('SELECT * WHERE { ?s ?p "};" ')


class Terminal:
    """A child process on a pseudo-terminal that answers cursor-position requests."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        self.screen = ""

    def read_until(self, needle: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while needle not in self.screen:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"timed out waiting for {needle!r}; screen so far:\n{self.screen[-2000:]}"
            ready, _, _ = select.select([self.master], [], [], min(remaining, 0.5))
            if ready:
                try:
                    chunk = os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:
                    break
                if "\x1b[6n" in chunk:
                    os.write(self.master, b"\x1b[1;1R")
                self.screen += chunk
        found = self.screen
        self.screen = ""
        return found

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> int:
        try:
            return self.process.wait(timeout=20)
        finally:
            os.close(self.master)


def datae_command(repo: str, *args: str) -> list[str]:
    """``python -m datae`` from this checkout (the ``datae`` script would import whichever
    checkout the environment was installed from)."""
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
            "from datae.cli import main; sys.exit(main())", "--repo", repo, *args]


def test_repl_in_a_pty(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    with repo.transaction("main", message="one") as tx:
        fstore.add(tx, None, IRI("urn:a"), IRI("urn:name"), "Alice")
    repo.tag("v1")
    with repo.transaction("main", message="two") as tx:
        fstore.rm(tx, None, IRI("urn:a"), IRI("urn:name"), "Alice")
        fstore.add(tx, None, IRI("urn:a"), IRI("urn:name"), "Alicia")
    repo.close()

    env = {**os.environ, "TERM": "xterm", "DATAE_HISTORY": str(tmp_path / "history"), "COLUMNS": "100", "LINES": "40"}
    term = Terminal(datae_command(str(tmp_path / "repo"), "repl"), env)
    try:
        term.read_until("datae (main)>")
        term.type("PREFIX u: <urn:>\r\r")  # only declares: recorded for the session
        term.read_until("PREFIX u: <urn:>")
        term.read_until("datae (main)>")
        term.type("SELECT ?name WHERE {\r")  # unfinished: Enter starts a new line
        term.type("u:a u:name ?name }\r")  # may go on (GROUP BY ...): a new line too
        assert "ms at" not in term.read_until("...>")
        term.type("\r")  # an empty line runs it
        screen = term.read_until("ms at main")
        assert "Alicia" in screen and "Alice " not in screen.replace("Alicia", "")
        term.type(".at v1\r")
        term.read_until("queries read v1")
        term.type("SELECT ?name WHERE { <urn:a> <urn:name> ?name };\r")
        screen = term.read_until("ms at v1")
        assert "Alice" in screen and "Alicia" not in screen
        term.type(".log\r")
        screen = term.read_until("one (+1 -0)")
        assert "two" not in screen
        term.type(".at main\r")
        term.read_until("queries read main")
        term.type(".log 1\r")
        term.read_until("two (+1 -1)")
        term.type("SELECT WHERE {\r};\r")
        screen = term.read_until("expected")
        assert "line 1, column 8" in screen
        term.read_until("datae (main)>")
        term.type("\x04")
        assert term.close() == 0
    finally:
        term.process.kill()
    assert "SELECT ?name" in (tmp_path / "history").read_text()
