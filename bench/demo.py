"""`make demo`: the main job of datae on an embedded store and real data.

Imports the schema.org releases in bench/demo_data/schemaorg as one commit each (one tag
per release), branches, edits on the branch, merges it back, queries an old commit, shows a
diff and a blame, imports a real Kart repository and exports a snapshot to Spark. The data
ships with the repository (bench/demo_data/README.md names its sources and licences).

    python -m bench.demo --store ./demo-store

A missing data file, or a step that finds nothing to show, ends the demo with one line
``demo: error: ...`` and exit status 1: the demo never reports 0 of anything.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

import fstore
from fstore import IRI, Var
from fstore.rdf import load
from fstore.tables import commands as table_commands

DATA = Path(__file__).resolve().parent / "demo_data"
SCHEMAORG = DATA / "schemaorg"
KART_POINTS = DATA / "kart" / "points.tgz"
MIN_RELEASES = 2  # a diff, a time-travel query and "changed since" need two releases at least
GRAPH = IRI("https://schema.org/")
SCHEMA = "https://schema.org/"
RDFS_COMMENT = IRI("http://www.w3.org/2000/01/rdf-schema#comment")
RDFS_LABEL = IRI("http://www.w3.org/2000/01/rdf-schema#label")
DOMAIN = IRI(SCHEMA + "domainIncludes")

console = Console(soft_wrap=True)


class DemoError(Exception):
    """The demo cannot go on (its data is missing, or a step found nothing): main prints
    ``demo: error: <message>`` and exits 1."""


def require(found: object, what: str) -> None:
    """Stop the demo when a step found nothing, instead of printing 0 of it and going on."""
    if not found:
        raise DemoError(f"{what}: the demo data in {DATA} is incomplete (see {DATA / 'README.md'})")


def release_of(path: Path) -> str:
    return re.search(r"https-([\d.]+)\.nq\.gz", path.name).group(1)


def release_files(folder: Path | None = None) -> list[Path]:
    """The schema.org release files in ``folder`` (:data:`SCHEMAORG`), oldest release
    first; at least :data:`MIN_RELEASES` of them, or :class:`DemoError`."""
    folder = SCHEMAORG if folder is None else folder
    files = sorted(folder.glob("schemaorg-current-https-*.nq.gz"),
                   key=lambda p: [int(x) for x in release_of(p).split(".")])
    if len(files) < MIN_RELEASES:
        raise DemoError(f"found {len(files)} schema.org release file(s) (schemaorg-current-https-*.nq.gz) in "
                        f"{folder}; the demo needs at least {MIN_RELEASES} (see {DATA / 'README.md'})")
    return files


def import_releases(repo: fstore.Repository) -> list[str]:
    files = release_files()
    tags = []
    start = time.perf_counter()
    for path in files:
        release = release_of(path)
        with repo.transaction("main", message=f"schema.org release {release}", author="schema.org",
                              allow_empty=True) as tx:
            count = load(tx, path, "nq", graph=GRAPH, replace=True)
            require(count, f"{path} holds no quads")  # raised inside: the transaction is rolled back
        commit = repo.commit(tx.commit_id)
        repo.tag(f"v{release}", tx.commit_id)
        tags.append(f"v{release}")
        console.print(f"  v{release:<6} {commit.short_id}  {count:>6} quads  +{commit.added:<5} -{commit.removed}")
    console.print(f"[bold]imported {len(files)} releases in {time.perf_counter() - start:.1f}s[/bold]")
    return tags


PREFIXES = {SCHEMA: "schema:", "http://www.w3.org/2000/01/rdf-schema#": "rdfs:",
            "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf:"}


def short(value) -> str:
    """A value as a person reads it: prefixed IRIs, clipped literals."""
    if isinstance(value, IRI):
        for namespace, prefix in PREFIXES.items():
            if value.value.startswith(namespace):
                return prefix + value.value[len(namespace):]
        return str(value)
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


def show_domains(repo: fstore.Repository, refs: list[str], prop: IRI) -> None:
    table = Table(title=f"{short(prop)} schema:domainIncludes ... at each ref")
    table.add_column("ref")
    table.add_column("types")
    for ref in refs:
        types = sorted(short(b["type"]) for b in fstore.from_(repo.at(ref), GRAPH, prop, DOMAIN, Var("type")))
        table.add_row(ref, ", ".join(types))
    console.print(table)


SPARQL_PREFIXES = """PREFIX schema: <https://schema.org/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""


def sparql(repo: fstore.Repository, title: str, text: str) -> None:
    from query.session import run_text

    console.print(f"[bold]{title}[/bold]")
    console.print(text.strip(), style="cyan", highlight=False)
    start = time.perf_counter()
    shown = run_text(repo, SPARQL_PREFIXES + text, fmt="table", author="demo")
    console.print(shown.rstrip(), markup=False, highlight=False)
    console.print(f"[dim]({(time.perf_counter() - start) * 1000:.0f} ms)[/dim]")


def sparql_demo(repo: fstore.Repository, tags: list[str]) -> None:
    sparql(repo, "Classes with the most properties, at main",
           "SELECT ?class (COUNT(?p) AS ?properties) WHERE { GRAPH ?g { ?p schema:domainIncludes ?class } }\n"
           "GROUP BY ?class ORDER BY DESC(?properties) LIMIT 5")
    sparql(repo, f"The same question at the first release ({tags[0]})",
           f"SELECT ?class (COUNT(?p) AS ?properties) AT <{tags[0]}> WHERE {{ GRAPH ?g {{ ?p schema:domainIncludes ?class }} }}\n"
           "GROUP BY ?class ORDER BY DESC(?properties) LIMIT 5")
    sparql(repo, f"Classes added or removed between {tags[0]} and {tags[-1]}",
           f"SELECT ?op (COUNT(?c) AS ?classes) CHANGES FROM <{tags[0]}> TO <{tags[-1]}>\n"
           "WHERE { GRAPH ?g { ?c a rdfs:Class } } GROUP BY ?op")
    sparql(repo, "In how many releases did schema:Thing carry each comment?",
           "SELECT ?comment (COUNT(?commit) AS ?commits) VERSIONS WHERE { GRAPH ?g { schema:Thing rdfs:comment ?comment } }\n"
           "GROUP BY ?comment")
    sparql(repo, "An update is a commit on the current branch",
           'INSERT DATA { GRAPH <https://schema.org/> { schema:DemoType rdfs:comment "Added by a SPARQL update." } }')


def tables_demo(repo: fstore.Repository) -> None:
    if not KART_POINTS.is_file():
        raise DemoError(f"the Kart repository {KART_POINTS} is missing (see {DATA / 'README.md'})")
    with tempfile.TemporaryDirectory() as scratch:
        with tarfile.open(KART_POINTS) as archive:
            archive.extractall(scratch, filter="data")
        result = table_commands.table_import(repo, str(Path(scratch) / "points"), branch_prefix="kart/")
    require(result["commits"], f"the Kart repository {KART_POINTS} gave no commits")
    console.print(f"imported Kart's 'points' repository: {result['commits']} commits onto {', '.join(result['branches'])}")
    names = table_commands.table_list(repo, "kart/main")
    require(names, f"the Kart repository {KART_POINTS} holds no table")
    name = names[0]
    console.print(table_commands.table_diff_text(repo, "kart/main~1", "kart/main", name), markup=False, highlight=False)
    table = repo.at("kart/main").table(name)
    require(len(table), f"table {name!r} of {KART_POINTS} has no rows")
    console.print(f"{name}: {len(table)} rows, columns {[c.name for c in table.schema.columns]}")

    pk = next(iter(table.rows()))["fid"]
    repo.branch("kart/survey", "kart/main")
    with repo.transaction("kart/main", message="Add a 'checked' column", author="gis") as tx:
        writer = tx.table(name)
        writer.alter(writer.schema.add_column("checked", "boolean"))
        writer.update({"fid": pk, "checked": True})
    with repo.transaction("kart/survey", message="Fix a name in the field", author="surveyor") as tx:
        tx.table(name).update({"fid": pk, "name": "Surveyed name"})
    repo.merge("kart/main", "kart/survey", author="gis")
    row = repo.at("kart/main").table(name).get(pk)
    console.print(f"after the cell-wise merge, row {pk}: name={row['name']!r} checked={row['checked']!r}")
    console.print(table_commands.table_log_text(repo, "kart/main", name, pk), markup=False, highlight=False)


def spark_demo(repo: fstore.Repository, dest: Path) -> None:
    from pyspark.sql import SparkSession

    from fstore.spark import export_snapshot, result_dataframe

    shutil.rmtree(dest, ignore_errors=True)
    start = time.perf_counter()
    result = export_snapshot(repo, "main", str(dest), partition_on={"quads": ["graph"]})
    require(result.tables["quads"].rows, f"the export of main to {dest} wrote no quads")
    rows = ", ".join(f"{name} {table.rows}" for name, table in result.tables.items())
    console.print(f"exported commit {result.commit_id[:10]} in {time.perf_counter() - start:.1f}s: {rows} rows")
    console.print(f"metadata (written last): {result.metadata_url()}")
    spark = (SparkSession.builder.master("local[2]").appName("datae-demo").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "2")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        result_dataframe(spark, result).createOrReplaceTempView("quads")
        top = spark.sql("SELECT predicate, count(*) AS quads FROM quads GROUP BY predicate ORDER BY quads DESC LIMIT 5")
        table = Table(title="Spark SQL: the five most used predicates at main")
        table.add_column("predicate")
        table.add_column("quads", justify="right")
        predicates = top.collect()
        require(predicates, f"Spark read no quads from {result.metadata_url()}")
        for row in predicates:
            table.add_row(row["predicate"], str(row["quads"]))
        console.print(table)
    finally:
        spark.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", default="./demo-store")
    args = parser.parse_args(argv)
    try:
        release_files()  # before anything is written: a clone without the data stops here
        run(args.store)
    except DemoError as exc:
        print(f"demo: error: {exc}", file=sys.stderr)
        return 1
    return 0


def run(store: str) -> None:
    """The demo's nine steps on a new store at ``store`` (any old one is removed)."""
    shutil.rmtree(store, ignore_errors=True)
    repo = fstore.open(store)

    releases = len(release_files())
    console.rule(f"1. {releases} schema.org releases become {releases} commits")
    tags = import_releases(repo)

    console.rule("2. a branch, an edit, a merge")
    repo.branch("curation", "main")
    thing = IRI(SCHEMA + "Thing")
    with repo.transaction("curation", message="Clarify the comment on schema:Thing", author="curator") as tx:
        for old in list(fstore.from_(tx, GRAPH, thing, RDFS_COMMENT, Var("c"))):
            fstore.rm(tx, GRAPH, thing, RDFS_COMMENT, old["c"])
        fstore.add(tx, GRAPH, thing, RDFS_COMMENT, "The most generic type of item (curated in datae).")
    with repo.transaction("main", message="Label for the demo", author="maintainer") as tx:
        fstore.add(tx, GRAPH, IRI(SCHEMA + "DemoType"), RDFS_LABEL, "DemoType")
    merged = repo.merge("main", "curation", author="maintainer")
    console.print(f"merged curation into main: {merged[:10]}")
    for commit in repo.log("main", limit=4):
        console.print(f"  {commit.short_id}  {commit.message:<45} +{commit.added} -{commit.removed}  {commit.author}")

    console.rule("3. time travel: one question at several releases")
    changed = [q for op, q in repo.diff(tags[0], "main") if q[2] == DOMAIN]
    require(changed, f"no schema:domainIncludes changed between {tags[0]} and main")
    prop = changed[0][1]
    show_domains(repo, [tags[0], tags[len(tags) // 2], "main"], prop)

    console.rule(f"4. diff {tags[-2]} .. {tags[-1]}")
    changes = list(repo.diff(tags[-2], tags[-1]))
    require(changes, f"releases {tags[-2]} and {tags[-1]} do not differ")
    for op, quad in changes[:8]:
        console.print(f"  {op} {short(quad[1])} {short(quad[2])} {short(quad[3])}")
    console.print(f"  ... {len(changes)} changes in all")

    console.rule("5. blame")
    for binding in fstore.from_(repo.at("main"), GRAPH, thing, RDFS_COMMENT, Var("c")):
        commit = repo.blame("main", GRAPH, thing, RDFS_COMMENT, binding["c"])
        console.print(f"  schema:Thing rdfs:comment {short(binding['c'])}\n    <- {commit.short_id} {commit.message!r} by {commit.author}")
    quad = (GRAPH, IRI(SCHEMA + "name"), IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#Property"))
    commit = repo.blame("main", *quad)
    console.print(f"  schema:name a rdf:Property\n    <- {commit.short_id} {commit.message!r} by {commit.author}")

    console.rule("6. SPARQL at any commit, over changes, and across versions")
    sparql_demo(repo, tags)

    console.rule("7. tables: a real Kart repository, a schema change, a cell-wise merge")
    tables_demo(repo)

    console.rule("8. integrity")
    problems = repo.verify()
    if problems:
        raise DemoError(f"verify found {len(problems)} problem(s) in {store}: {problems[0]}")
    console.print(f"verify: ok; {repo.stats()}")

    console.rule("9. Spark: a snapshot of main as a Kartothek dataset, and Spark SQL on it")
    spark_demo(repo, Path(f"{store.rstrip('/')}-spark"))
    repo.close()


if __name__ == "__main__":
    sys.exit(main())
