"""What every ``datae`` command shares: exit codes, the one-line error, printing, opening
the store ``--repo`` (or the cwd) names, and the options several commands take.

Command modules (:mod:`datae.commands`) import this module, never :mod:`datae.cli`. It
imports only the standard library at its top: ``datae --help`` and ``datae CMD --help``
load it, and they must not load the store, the query engine or rich. What a command needs
of the layers below it imports when it runs (``open_repo`` imports fstore then).

    >>> subject("Fix the thing\\n\\nBecause it was broken")
    'Fix the thing'
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import fstore
    from query.limits import Limits

__all__ = [
    "EXIT_CONFLICT", "EXIT_USAGE", "EXIT_INTERNAL", "EXIT_FATAL", "EXIT_INTERRUPTED",
    "Fatal", "out", "find_store", "store_path", "open_repo", "map_size", "author", "token", "read_token_file",
    "token_options", "positive_int", "subject", "short_head", "query_limit_options", "held_rows_option",
    "memory_limits", "query_limits", "describe_error", "fail", "warning_line",
    "MAX_HELD_ROWS", "MAX_HELD_BYTES", "MAX_VALUE_LENGTH",
]

EXIT_CONFLICT = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 70  # sysexits' EX_SOFTWARE: not the user's input, a bug
EXIT_FATAL = 128
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a Ctrl-C

# query.limits' defaults, written here so that declaring --max-held-rows (and showing it in
# --help) does not load the query engine; tests/datae/test_cli_table.py checks they agree.
MAX_HELD_ROWS = 2_000_000
MAX_HELD_BYTES = 1 << 30
MAX_VALUE_LENGTH = 1 << 24


class Fatal(Exception):
    """An error the command line itself finds (bad option combination, no store):
    printed as ``datae: error: ...`` with exit code 128."""


def out(text: str = "") -> None:
    """Print one line on stdout (the commands' output)."""
    sys.stdout.write(text + "\n")


# -- the store -------------------------------------------------------------------------


def find_store(start: Path) -> Path | None:
    """The ``.datae`` directory of ``start`` or its nearest parent that has one.

    >>> find_store(Path("/")) is None
    True
    """
    from fstore import STORE_DIR  # the store layer, loaded when a command runs

    for directory in (start, *start.parents):
        candidate = directory / STORE_DIR
        if (candidate / "data.mdb").exists():
            return candidate
    return None


def store_path(args: argparse.Namespace) -> Path:
    """The store ``--repo`` names, else the one found from the cwd (as git finds ``.git``)."""
    import fstore  # the store layer, loaded when a command runs

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
    """The store of :func:`store_path`, opened with ``--map-size``."""
    import fstore  # the store layer, loaded when a command runs

    return fstore.open(store_path(args), map_size=map_size(args))


def map_size(args: argparse.Namespace) -> int | None:
    """``--map-size`` in bytes (None: DATAE_MAP_SIZE or the default)."""
    text = getattr(args, "map_size", None)
    if text is None:
        return None
    from nstore.okvs import parse_size  # the store layer, loaded when a command runs

    return parse_size(text, "--map-size")


def author(args: argparse.Namespace) -> str:
    """``--author``, else ``$DATAE_AUTHOR``, else ``$USER`` (query.session's default)."""
    if args.author:
        return args.author
    from query.session import default_author  # the query layer, loaded when a command runs

    return default_author()


# -- HTTP remotes' bearer token ----------------------------------------------------------


def token_options(p: argparse.ArgumentParser) -> None:
    """``--token`` and ``--token-file``: the bearer token of an HTTP remote."""
    p.add_argument("--token", help="an HTTP remote's bearer token (default: --token-file, else $DATAE_TOKEN)")
    p.add_argument("--token-file", metavar="FILE", help="read the bearer token from the first line of FILE")


def token(args: argparse.Namespace) -> str | None:
    """The bearer token for an HTTP remote: ``--token``, ``--token-file`` or (None)
    ``$DATAE_TOKEN``, which fstore reads."""
    if getattr(args, "token", None):
        return args.token
    if getattr(args, "token_file", None):
        return read_token_file(args.token_file)
    return None


def read_token_file(path: str) -> str:
    """The first line of ``path``, stripped; refused if empty or unreadable."""
    try:
        with open(path, encoding="utf-8") as handle:
            found = handle.readline().strip()
    except OSError as exc:
        raise Fatal(f"cannot read the token file {path}: {exc.strerror}") from None
    if not found:
        raise Fatal(f"the token file {path} is empty")
    return found


# -- argument types and shared options ---------------------------------------------------


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a count of commits or rows).

    >>> positive_int("3")
    3
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


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


def query_limits(args: argparse.Namespace) -> Limits:
    """The ``query.limits.Limits`` that ``--timeout`` and ``--max-held-rows`` give."""
    if (args.timeout is not None and args.timeout <= 0) or args.max_held_rows <= 0:
        raise Fatal("--timeout and --max-held-rows must be positive")
    from query.limits import Limits  # the query layer, loaded when a command runs

    return Limits(timeout=args.timeout, max_rows=None, max_held_rows=args.max_held_rows, **memory_limits(args))


# -- what commands print -----------------------------------------------------------------


def subject(message: str) -> str:
    """A commit message's first line, as ``log --oneline`` shows it (git's subject).

    >>> subject("Fix the thing\\n\\nBecause it was broken")
    'Fix the thing'
    """
    return message.splitlines()[0] if message else ""


def short_head(head: str | None) -> str:
    """A branch's head as listed: its short id, or ``(no commits)`` (never cut short).

    >>> short_head(None)
    '(no commits)'
    """
    return head[:10] if head else "(no commits)"


# -- errors ------------------------------------------------------------------------------


def describe_error(exc: Exception) -> tuple[str, int]:
    """What went wrong, for one line, and the exit code: datae's own errors say what and
    where themselves; the operating system's and LMDB's name their file or store.

    >>> describe_error(Fatal("no store"))
    ('no store', 128)
    """
    # Imported on the error path only: a command that raised one of these has loaded them.
    import lmdb
    from nstore.errors import DataeError

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


def warning_line(message: Warning | str, *_: Any, **__: Any) -> None:
    """A warning (e.g. a tag a fetch skipped) is one line, ``datae: warning: ...``."""
    sys.stdout.flush()
    print(f"datae: warning: {message}", file=sys.stderr)
