"""``datae table``: tables stored the Kart Datasets V3 way (``docs/tables.md``).

    datae table import towns.csv --pk id -m "towns"
    datae table show towns --pk 3
    datae table diff v1 main towns
    datae table export towns towns.gpkg
    datae table import ../kart-repo          # a whole Kart repository, its history too
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from ..context import Fatal, author, open_repo, out, positive_int

if TYPE_CHECKING:
    import fstore

__all__ = ["cmd_table", "export_name_and_dest", "table_diff_words", "import_summary"]


def table_arguments(p: argparse.ArgumentParser) -> None:
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


def _pk(text: str | None) -> object:
    """A primary key typed on the command line: an integer if it looks like one."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return text


def cmd_table(args: argparse.Namespace) -> int:
    """``datae table import|export|list|show|schema|diff|log|blame ...``."""
    # The tables (and rich for the import's progress): loaded when the command runs.
    from fstore.tables import commands

    from ..progress import counting_progress

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
                    author=author(args), progress=progress.phase if progress else None)
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
    from nstore.errors import DataeError  # the store's errors, loaded when a command runs

    try:
        for ref in refs:
            repo.resolve(ref)
    except DataeError:
        return False
    return True


def _names_table(repo: fstore.Repository, name: str, a: str, b: str) -> bool:
    """Whether refs ``a`` and ``b`` resolve and table ``name`` is at one of them."""
    from fstore.tables.commands import table_list  # the tables, loaded when a command runs

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
