"""The REPL's pure parts, testable without a terminal: when Enter runs the input, the
session's PREFIX / BASE declarations, completion candidates, the pager decision and the
help text. :mod:`datae.repl` wires them to prompt_toolkit and rich.

>>> input_complete("SELECT * WHERE { ?s ?p ?o }")
False
>>> input_complete("SELECT * WHERE { ?s ?p ?o };")
True
>>> prologue = split_prologue("PREFIX ex: <http://ex/>\\nSELECT * WHERE { ?s ex:p ?o }")
>>> prologue.prefixes, prologue.rest.strip()
({'ex': 'http://ex/'}, 'SELECT * WHERE { ?s ex:p ?o }')
>>> with_session_prologue("SELECT * { ?s ex:p ?o }", {"ex": "http://ex/"}, None)
'PREFIX ex: <http://ex/>\\nSELECT * { ?s ex:p ?o }'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from fstore.rdf import FORMAT_NAMES
from query.session import split_explain

__all__ = [
    "KEYWORDS",
    "DOT_COMMANDS",
    "HELP",
    "Scan",
    "Prologue",
    "scan",
    "input_complete",
    "split_prologue",
    "declared",
    "used_prefixes",
    "with_session_prologue",
    "prepare_statement",
    "Prepared",
    "completion_candidates",
    "needs_pager",
]

KEYWORDS = (
    "SELECT", "ASK", "CONSTRUCT", "DESCRIBE", "WHERE", "PREFIX", "BASE", "DISTINCT", "REDUCED", "FROM", "NAMED",
    "GRAPH", "OPTIONAL", "UNION", "MINUS", "FILTER", "BIND", "VALUES", "AS", "GROUP BY", "HAVING", "ORDER BY",
    "ASC", "DESC", "LIMIT", "OFFSET", "COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT", "EXISTS",
    "NOT EXISTS", "IN", "NOT IN", "REGEX", "STR", "LANG", "LANGMATCHES", "DATATYPE", "BOUND", "ISIRI", "ISLITERAL",
    "ISBLANK", "INSERT DATA", "DELETE DATA", "INSERT", "DELETE", "EXPLAIN", "AT", "CHANGES", "VERSIONS", "TO",
    "WITH", "USING", "CLEAR", "DROP", "CREATE", "LOAD", "ADD", "MOVE", "COPY", "DEFAULT", "ALL", "SERVICE",
    "STRSTARTS", "STRENDS", "CONTAINS", "LCASE", "UCASE", "COALESCE", "IF", "SEPARATOR",
)
DOT_COMMANDS = (".at", ".branch", ".log", ".diff", ".format", ".prefixes", ".pager", ".help", ".quit")
# Commands whose argument is a ref: completion offers branches and tags there.
REF_COMMANDS = (".at", ".branch", ".diff", ".log")
# .format takes a rows format (SELECT, ASK) or a graph format (CONSTRUCT, DESCRIBE); each
# kind of result keeps its own, so choosing Turtle does not break the next SELECT.
ROW_FORMATS = ("table", "json", "csv", "tsv")
GRAPH_FORMATS = FORMAT_NAMES
DOT_ARGUMENTS = {".format": (*ROW_FORMATS, *GRAPH_FORMATS), ".pager": ("on", "off")}

HELP = """\
# datae repl

Type a SPARQL query or update over as many lines as you like. **Enter** runs it when it
ends with `;` or when the line is empty; otherwise Enter adds a line. Dot commands run
at once. (To chain update operations over lines, start the next line with `;`.)
**Tab** completes keywords, prefixes (`ex:`), IRIs seen and refs;
**Ctrl-C** cancels a query or clears the input, **Ctrl-D** leaves.

| statement | what it does |
|---|---|
| `SELECT` / `ASK` / `CONSTRUCT` / `DESCRIBE` | a query, read at the session's ref (or its own `AT`, `CHANGES`, `VERSIONS` clause) |
| `INSERT DATA`, `DELETE ... WHERE`, `CLEAR` ... | an update: one commit on the branch being read |
| `EXPLAIN <statement>` | the plan instead of the result |
| `PREFIX ex: <http://ex/>` alone | recorded for the session, nothing run |

PREFIX and BASE declarations are kept for the session: a later statement that uses
`ex:` without declaring it gets the declaration prepended.

| command | what it does |
|---|---|
| `.at REF` | read another branch, tag or commit |
| `.branch [NAME]` | list branches, or switch to one |
| `.log [N]` | the last N commits (10) |
| `.diff A [B]` | the quads and table rows that differ from A to B (the session's ref), as `datae diff` prints them |
| `.format table\\|json\\|csv\\|tsv` | how SELECT results are shown |
| `.format table\\|nq\\|trig\\|jsonld\\|nt\\|ttl\\|rdf` | how CONSTRUCT and DESCRIBE results are shown |
| `.prefixes` | the session's PREFIX and BASE declarations |
| `.pager on\\|off` | page results taller than the terminal |
| `.help`, `.quit` | this text; leave |
"""

# An IRIREF as SPARQL defines it (no blanks, quotes, braces...): a `<` that does not start
# one is the less-than operator.
_IRIREF = re.compile(r'<[^<>"{}|^`\\\x00-\x20]*>')
_OPEN = "{(["
_CLOSE = "})]"
_PN_PREFIX = r"(?:[^\W\d_](?:[\w.\-]*[\w\-])?)?"
# Masked text: strings and comments blanked, so a keyword found in it is a keyword.
_DECL = re.compile(
    rf"(?<![\w:?$])(?:PREFIX\s+({_PN_PREFIX}):\s*<([^<>\s]*)>|BASE\s*<([^<>\s]*)>)", re.IGNORECASE
)


@dataclass
class Scan:
    """What a left-to-right read of statement text found: bracket ``depth``, the string it
    ends inside (its quote, or None), the last character outside strings and comments,
    and the text with strings and comments blanked (``masked``)."""

    depth: int = 0
    in_string: str | None = None
    last: str = ""
    masked: str = ""


def scan(text: str) -> Scan:
    """Read ``text`` as SPARQL tokens enough to know where strings, IRIs, comments and
    brackets are.

    >>> s = scan('SELECT * { ?s ?p "}" # }\\n')
    >>> s.depth, s.in_string, s.last
    (1, None, '"')
    """
    result = Scan()
    masked: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in "\"'":
            quote = text[i : i + 3] if text.startswith(char * 3, i) else char
            end = _string_end(text, i + len(quote), quote)
            if end is None:
                result.in_string = quote
                masked.append(quote + " " * (n - i - len(quote)))
                break
            masked.append(quote + " " * (end - i - 2 * len(quote)) + quote)
            result.last = char
            i = end
            continue
        if char == "#":
            end = text.find("\n", i)
            end = n if end < 0 else end
            masked.append(" " * (end - i))
            i = end
            continue
        if char == "<":
            match = _IRIREF.match(text, i)
            if match:
                masked.append(match.group())
                result.last = ">"
                i = match.end()
                continue
        if char in _OPEN:
            result.depth += 1
        elif char in _CLOSE:
            result.depth -= 1
        if not char.isspace():
            result.last = char
        masked.append(char)
        i += 1
    result.masked = "".join(masked)
    return result


def _string_end(text: str, start: int, quote: str) -> int | None:
    """The index just after the string whose body starts at ``start`` (None: unclosed)."""
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text.startswith(quote, i):
            return i + len(quote)
        if len(quote) == 1 and text[i] == "\n":
            return None  # a short string cannot span lines: the statement is unfinished
        i += 1
    return None


def input_complete(text: str) -> bool:
    """Whether Enter should run ``text`` rather than add a line: a dot command, input that
    ends with ``;`` outside brackets and strings, or an empty last line (blank input too,
    which runs nothing).

    A ``;`` inside braces continues a predicate-object list, so it does not end the input;
    a statement with balanced braces may still go on (``GROUP BY`` on the next line), so
    balance alone does not either.

    >>> input_complete("SELECT ?s WHERE { ?s ?p ?o }")
    False
    >>> input_complete("SELECT ?s WHERE { ?s ?p ?o }\\n")
    True
    >>> input_complete("SELECT * WHERE { ?s :a 1 ;")
    False
    >>> input_complete(".at v1")
    True
    """
    stripped = text.strip()
    if not stripped or stripped.startswith("."):
        return True
    state = scan(text)
    if state.in_string and len(state.in_string) == 3:
        return False  # blank lines belong to a long string literal
    if "\n" in text and not text.rsplit("\n", 1)[1].strip():
        return True
    return state.in_string is None and state.depth <= 0 and state.last == ";"


@dataclass
class Prologue:
    """The PREFIX and BASE declarations of a statement and the statement after its
    leading ones (``rest``; EXPLAIN, if any, kept in front)."""

    prefixes: dict[str, str] = field(default_factory=dict)
    base: str | None = None
    rest: str = ""


def declared(text: str) -> Prologue:
    """Every PREFIX and BASE declaration in ``text`` (an update declares them before each
    operation), the last one of a name winning; ``rest`` is left empty.

    >>> declared("PREFIX a: <urn:a:> INSERT DATA { a:x a:y 1 } ; PREFIX b: <urn:b:> CLEAR ALL").prefixes
    {'a': 'urn:a:', 'b': 'urn:b:'}
    """
    found = Prologue()
    for match in _DECL.finditer(scan(text).masked):
        name, namespace, base = match.groups()
        if base is not None:
            found.base = base
        else:
            found.prefixes[name] = namespace
    return found


def split_prologue(text: str) -> Prologue:
    """The declarations ``text`` starts with (after ``EXPLAIN``, blanks and comments) and
    what follows them. A ``rest`` that is blank means the input only declared.

    >>> p = split_prologue("PREFIX : <http://ex/>\\n BASE <http://b/>")
    >>> p.prefixes, p.base, p.rest
    ({'': 'http://ex/'}, 'http://b/', '')
    """
    explain, body = split_explain(text)
    masked = scan(body).masked
    prologue = Prologue()
    position = 0
    while True:
        match = re.compile(r"\s*").match(masked, position)
        position = match.end()
        decl = _DECL.match(masked, position)
        if decl is None:
            break
        name, namespace, base = decl.groups()
        if base is not None:
            prologue.base = base
        else:
            prologue.prefixes[name] = namespace
        position = decl.end()
    rest = body[position:]
    prologue.rest = ("EXPLAIN " + rest) if explain else rest
    return prologue


def used_prefixes(text: str) -> set[str]:
    """The prefix names ``text`` uses in prefixed names (``ex:a`` uses ``ex``).

    >>> sorted(used_prefixes('SELECT * { ?s ex:p :o ; <urn:x:y> "a:b" }'))
    ['', 'ex']
    """
    masked = _IRIREF.sub(lambda m: " " * len(m.group()), scan(text).masked)
    return {m.group(1) for m in re.finditer(rf"(?<![\w.\-:?$])({_PN_PREFIX}):", masked)}


@dataclass
class Prepared:
    """A statement with the session's declarations put in front, and where, so that an
    error's position can be given back in the input's terms (:meth:`position`): the first
    ``after_line`` lines are the input's own, then ``added`` lines come in. The parser
    reads the statement after ``EXPLAIN``, which starts on line ``body_line`` at (0-based)
    column ``body_column``."""

    text: str
    after_line: int = 0
    added: int = 0
    body_line: int = 1
    body_column: int = 0

    def position(self, line: int, column: int) -> tuple[int, int]:
        """Where in the input as typed the parser's ``line``, ``column`` (1-based, in the
        statement after EXPLAIN) is."""
        if line == 1:
            column += self.body_column
        line += self.body_line - 1
        return (line if line <= self.after_line else max(line - self.added, 1)), column


def prepare_statement(text: str, prefixes: Mapping[str, str], base: str | None) -> Prepared:
    """``text`` with the session's declarations it uses but does not make itself put in
    front, one a line (after ``EXPLAIN``, whose line's rest is moved below them at the same
    column). Only used prefixes are added, so an update's commit message (its text) stays
    short and still parses on its own.

    >>> p = prepare_statement("SELECT * {\\n ?s a ex:C }", {"ex": "urn:ex:", "no": "urn:no:"}, None)
    >>> p.text, p.position(3, 9)
    ('PREFIX ex: <urn:ex:>\\nSELECT * {\\n ?s a ex:C }', (2, 9))
    >>> p = prepare_statement("EXPLAIN SELECT * { ?s a ex:C }", {"ex": "urn:ex:"}, "urn:b/")
    >>> print(p.text); p.position(4, 30)
    EXPLAIN
    BASE <urn:b/>
    PREFIX ex: <urn:ex:>
            SELECT * { ?s a ex:C }
    (1, 30)
    """
    own = declared(text)
    used = used_prefixes(text)
    lines = []
    if base is not None and own.base is None:
        lines.append(f"BASE <{base}>")
    lines += [f"PREFIX {name}: <{iri}>" for name, iri in prefixes.items() if name in used and name not in own.prefixes]
    explain, body = split_explain(text)
    head = text[: len(text) - len(body)]
    body_line, body_column = head.count("\n") + 1, len(head) - (head.rfind("\n") + 1)
    if not lines:
        return Prepared(text, body_line=body_line, body_column=body_column)
    if not explain:
        return Prepared("\n".join(lines) + "\n" + text, 0, len(lines))
    # EXPLAIN's line is split so that the statement keeps its columns below the declarations.
    prepared = head + "\n" + "\n".join(lines) + "\n" + " " * body_column + body
    return Prepared(prepared, body_line, len(lines) + 1, body_line, body_column)


def with_session_prologue(text: str, prefixes: Mapping[str, str], base: str | None) -> str:
    """The text of :func:`prepare_statement`.

    >>> with_session_prologue("SELECT * { ?s a ex:C }", {"ex": "urn:ex:"}, None)
    'PREFIX ex: <urn:ex:>\\nSELECT * { ?s a ex:C }'
    """
    return prepare_statement(text, prefixes, base).text


def completion_candidates(
    text_before_cursor: str,
    *,
    prefixes: Mapping[str, str] = {},
    iris: Iterable[str] = (),
    refs: Iterable[str] = (),
) -> tuple[str, list[str]]:
    """The word being typed and what may complete it: a dot command's arguments (refs after
    ``.at``, ``.diff`` ... and after ``AT``); full IRIs after ``<``; ``ex:local`` names
    from the IRIs under a prefix; keywords, dot commands and ``ex:`` otherwise.

    >>> completion_candidates("SELECT * { ?s ex:na", prefixes={"ex": "http://ex/"}, iris=["http://ex/name"])
    ('ex:na', ['ex:name'])
    >>> completion_candidates("SEL")
    ('SEL', ['SELECT'])
    >>> completion_candidates(".at ", refs=["main", "v1"])
    ('', ['main', 'v1'])
    >>> completion_candidates(".format c")
    ('c', ['csv'])
    """
    line = text_before_cursor.rsplit("\n", 1)[-1]
    word = re.split(r"[\s{}()\[\],;]", line)[-1]
    head = line[: len(line) - len(word)].rstrip()
    command = head.split()[0] if head.lstrip().startswith(".") else ""
    if command in DOT_ARGUMENTS:
        pool: Iterable[str] = DOT_ARGUMENTS[command]
    elif command in REF_COMMANDS or re.search(r"(?:^|\s)AT$", head, re.IGNORECASE):
        pool = refs
    elif not word:
        return word, []  # every keyword would be too many to be useful
    elif word.startswith("<"):
        pool = (f"<{iri}>" for iri in iris)
    elif ":" in word:
        name = word.split(":", 1)[0]
        namespace = prefixes.get(name)
        pool = [] if namespace is None else [
            f"{name}:{iri[len(namespace):]}" for iri in iris
            if iri.startswith(namespace) and re.fullmatch(r"[\w\-.]*", iri[len(namespace):])
        ]
    else:
        pool = [*KEYWORDS, *(DOT_COMMANDS if word.startswith(".") else ()), *(f"{p}:" for p in prefixes)]
    lowered = word.lower()
    return word, sorted({c for c in pool if c.lower().startswith(lowered) and c != word})


def needs_pager(text: str, height: int, *, is_terminal: bool, enabled: bool = True) -> bool:
    """Whether to show ``text`` through a pager: only on a terminal, when paging is on,
    and when the text (plus the prompt and timing lines) would not fit.

    >>> needs_pager("a\\n" * 100, 40, is_terminal=True), needs_pager("a\\n" * 100, 40, is_terminal=False)
    (True, False)
    """
    return enabled and is_terminal and text.count("\n") + 3 > height
