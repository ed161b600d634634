"""The ``datae`` commands that move data in and out: ``import``, ``export``, ``query``
and ``repl``.

    datae import releases/*.nq.gz --graph https://schema.org/ -m "import"
    datae export -o snapshot.nq.gz                            # gzip by suffix
    datae export spark --out warehouse/                       # Parquet, Kartothek layout
    datae query 'SELECT * WHERE { ?s ?p ?o }' | cut -f1        # TSV when piped, a table on a terminal
    datae query 'INSERT DATA { <urn:a> <urn:p> "x" }' -m "add x"  # one commit on the current branch
    datae repl --at v22.0
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..context import Fatal, author, open_repo, out, query_limit_options, query_limits, subject

__all__ = ["cmd_import", "cmd_export", "cmd_query", "cmd_repl", "RDF_FORMATS", "export_format", "result_format",
           "query_text"]

# fstore.rdf.FORMAT_NAMES, written here so that declaring --format (and showing its choices
# in --help) does not load the store; tests/datae/test_cli_table.py checks they agree.
RDF_FORMATS = ("nq", "trig", "jsonld", "nt", "ttl", "rdf")


# -- import ----------------------------------------------------------------------------------


def import_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+")
    p.add_argument("--graph", help="put every quad in this graph (an IRI)")
    p.add_argument("--branch", help="branch to commit on (default: the current branch)")
    p.add_argument("-m", "--message")
    p.add_argument("--author")
    p.add_argument("--format", choices=RDF_FORMATS, help="default: from each file's name (.owl and .xml: RDF/XML)")
    p.add_argument("--base", help="base IRI for relative IRIs")
    p.add_argument("--replace", action="store_true", help="each graph in the files ends up with exactly their quads")


def cmd_import(args: argparse.Namespace) -> int:
    """``datae import FILE... [--graph G] [--replace]``: one commit."""
    # The store's RDF reading, the term syntax and rich: loaded when the command runs.
    from fstore.rdf import KEEP_GRAPHS, load
    from nstore.terms import parse_term

    from ..progress import counting_progress

    with open_repo(args) as repo:
        branch = args.branch or repo.current_branch
        graph = KEEP_GRAPHS if args.graph is None else parse_term(args.graph, "graph")
        message = args.message or f"Import {', '.join(os.path.basename(f) for f in args.files)}"
        read = 0
        with counting_progress("quads") as progress:
            with repo.transaction(branch, message=message, author=author(args)) as tx:
                for name in args.files:
                    if progress:
                        progress.file(os.path.basename(name))
                    # streamed: memory stays flat however big the file (an error aborts it all)
                    read += load(tx, name, args.format, graph=graph, replace=args.replace, base_iri=args.base,
                                 progress=progress.phase if progress else None, stream=True)
                if progress:
                    progress.committing(read)
        if tx.commit_id is None:
            out(f"{read} quads read; nothing changed on {branch}")
        else:
            commit = repo.commit(tx.commit_id)
            out(f"[{branch} {commit.short_id}] {subject(commit.message)}")
            out(f" {read} quads read, {commit.added} added, {commit.removed} removed")
    return 0


# -- export ----------------------------------------------------------------------------------


def export_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kind", nargs="?", choices=["rdf", "spark"], default="rdf")
    p.add_argument("--at", help="branch, tag or commit (default: the current branch)")
    p.add_argument("--out", help="export spark: the dataset directory or URI")
    p.add_argument("--table", action="append", help="export spark: a table to include (repeatable; default: all)")
    p.add_argument("--partition-on", action="append",
                   help="export spark: partition on this column (repeatable; the quads are partitioned by graph)")
    p.add_argument("--index", action="append", help="export spark: build a secondary index on this column")
    p.add_argument("--format", choices=RDF_FORMATS, help="default: from -o's name (.nq, .trig, .jsonld, .nt, "
                   ".ttl, .rdf; .gz compresses), else nq; nt, ttl and rdf hold one graph")
    p.add_argument("--graph", help="only this graph")
    p.add_argument("-o", "--output", help="the file to write (default: stdout); a name ending in .gz is gzip-compressed")


def cmd_export(args: argparse.Namespace) -> int:
    """``datae export [-o FILE] [--format F] [--graph G] [--at REF]``, or ``export spark``."""
    if args.kind == "spark":
        return export_spark(args)
    # The store and its RDF writing, the term syntax and rich: loaded when the command runs.
    import fstore
    from fstore.files import open_output
    from fstore.rdf import FORMATS, format_of, serialize
    from nstore.terms import parse_term

    from ..progress import counting_progress

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
            datasets = ", ".join(name for name in RDF_FORMATS if FORMATS[name].supports_datasets)
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


def export_spark(args: argparse.Namespace) -> int:
    """``datae export spark --out DIR``: a Parquet dataset in Kartothek layout."""
    # The Parquet export (pyarrow) and rich: loaded when the command runs.
    from fstore.export.snapshot import export_snapshot

    from ..progress import table_progress

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


def export_format(output: str | None, given: str | None) -> str:
    """``--format``, else the one ``-o``'s name says (``x.ttl``, ``x.nq.gz``), else N-Quads.

    >>> export_format("snapshot.ttl.gz", None), export_format("ontology.owl", None), export_format(None, None)
    ('ttl', 'owl', 'nq')
    """
    if given:
        return given
    from fstore.files import without_gz  # the store layer, loaded when a command runs
    from fstore.rdf import FORMATS  # every name a syntax goes by (.owl, .xml, .turtle, ...), not only --format's

    stem = without_gz(output or "")
    suffix = stem.rsplit(".", 1)[-1].lower() if "." in os.path.basename(stem) else ""
    return suffix if suffix in FORMATS else "nq"


# -- query, repl -----------------------------------------------------------------------------

GRAPH_FORMS = ("CONSTRUCT", "DESCRIBE")
ROW_FORMATS = ("json", "csv", "tsv")


def query_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", nargs="?")
    p.add_argument("-f", "--file")
    p.add_argument("--at", help="branch, tag or commit to query (default: the current branch)")
    p.add_argument("--format", choices=["table", "json", "csv", "tsv", *RDF_FORMATS],
                   help="default: a table on a terminal; else TSV for SELECT, N-Quads for CONSTRUCT")
    p.add_argument("-m", "--message", help="an update's commit message (default: the update's text)")
    p.add_argument("--author")
    query_limit_options(p)


def cmd_query(args: argparse.Namespace) -> int:
    """``datae query QUERY`` (or ``-f FILE``, or stdin): a query's result, or an update's
    one commit."""
    from query.session import Session  # the query engine, loaded when the command runs

    text = query_text(args)
    limits = query_limits(args)
    repo = open_repo(args)
    try:
        session = Session(repo, args.at, author(args), limits, message=args.message, load_dir=args.load_dir)
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


def result_format(form: str, given: str | None, terminal: bool) -> str:
    """The format ``datae query`` writes a ``form`` result in: ``given`` (``--format``),
    else a table for a person at a terminal, else what a program reads fast and whole:
    TSV for SELECT (a rich table is 30 times slower at 200k rows, and cut to a width),
    N-Quads for a graph. ASK, updates and EXPLAIN print the same either way.

    >>> result_format("SELECT", None, terminal=False), result_format("CONSTRUCT", None, terminal=False)
    ('tsv', 'nq')
    """
    graph = form in GRAPH_FORMS
    if given is None:
        if terminal or form not in ("SELECT", *GRAPH_FORMS):
            return "table"
        return "nq" if graph else "tsv"
    if form in ("SELECT", "ASK", *GRAPH_FORMS) and given != "table" and (given in RDF_FORMATS) != graph:
        raise Fatal(f"a {form} result cannot be written as {given}: "
                    f"choose table, {', '.join(RDF_FORMATS if graph else ROW_FORMATS)}")
    return given


def write_text(text: str) -> None:
    """Write ``text`` to stdout ending in a newline (JSON and ASK results have none of
    their own, and a shell prompt would follow them on the same line)."""
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")


def repl_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--at")
    query_limit_options(p)


def cmd_repl(args: argparse.Namespace) -> int:
    """``datae repl [--at REF]``: until Ctrl-D or ``.quit``."""
    from ..repl import run_repl  # prompt_toolkit and rich, loaded when the command runs

    limits = query_limits(args)
    repo = open_repo(args)
    try:
        return run_repl(repo, at=args.at, limits=limits, load_dir=args.load_dir)
    finally:
        repo.close()
