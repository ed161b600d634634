"""Query benchmark (issue 4): datae's SPARQL engine side by side with pyoxigraph's.

The same generated social graph is loaded into a datae store (one commit: one
``repo.transaction`` and ``fstore.add`` per quad) and into pyoxigraph's on-disk ``Store``;
then six queries — a star join, a chain join, a filter, an OPTIONAL, an aggregate and a
property path — run on both in the same process, each the best of ``--repeat`` runs taking turns (all
rows consumed), and their row counts must agree. One line per query with both times and
the ratio datae / pyoxigraph.

The data (:func:`social_graph`), deterministic for a seed, about 11 quads per person:

* ``n / 11`` people ``:p{i}``: ``a :Person``, ``:name "Person i"``, ``:age`` 18..90,
  ``:livesIn`` one of ``n / 1000`` cities, ``:worksFor`` one of ``n / 200`` organisations
  (80 % of people), ``:knows`` 0..10 other people (5 on average), ``:reportsTo :p{i // 4}``
  (a management tree of depth ~log4(people));
* cities ``:c{j}``: ``a :City``, ``:name``, ``:inCountry`` one of 50 countries;
* organisations ``:o{k}``: ``a :Organization``, ``:name``, ``:locatedIn`` a city.

    python -m bench.query_bench [--quads 1000000] [--repeat 3] [--profile]

``--profile`` also runs each datae query under cProfile and prints where its time goes
(parsing, planning, the fstore / nstore read path with LMDB, and the query engine), to
show what to speed up.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import random
import shutil
import tempfile
import time
from typing import Callable, Iterator

import pyoxigraph as ox

import fstore
from fstore import IRI
from nstore.terms import to_oxigraph
from query import execute
from query.parser import parse_query

__all__ = ["social_graph", "QUERIES", "main"]

EX = "http://example.org/social/"
RDF_TYPE = IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
PREFIX = f"PREFIX : <{EX}>\nPREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n"


def social_graph(quads: int, *, seed: int = 7) -> Iterator[tuple]:
    """About ``quads`` quads (default graph) of people, cities and organisations (see the
    module docstring), as datae values."""
    rng = random.Random(seed)
    ex = lambda name: IRI(EX + name)  # noqa: E731
    people = max(quads // 11, 10)
    cities = max(quads // 1000, 5)
    orgs = max(quads // 200, 5)
    person, city, org = ex("Person"), ex("City"), ex("Organization")
    name, age, lives, works, knows, reports = (ex(p) for p in ("name", "age", "livesIn", "worksFor", "knows", "reportsTo"))
    in_country, located = ex("inCountry"), ex("locatedIn")
    for j in range(cities):
        c = ex(f"c{j}")
        yield (None, c, RDF_TYPE, city)
        yield (None, c, name, f"City {j}")
        yield (None, c, in_country, ex(f"country{j % 50}"))
    for k in range(orgs):
        o = ex(f"o{k}")
        yield (None, o, RDF_TYPE, org)
        yield (None, o, name, f"Org {k}")
        yield (None, o, located, ex(f"c{rng.randrange(cities)}"))
    for i in range(people):
        p = ex(f"p{i}")
        yield (None, p, RDF_TYPE, person)
        yield (None, p, name, f"Person {i}")
        yield (None, p, age, rng.randrange(18, 91))
        yield (None, p, lives, ex(f"c{rng.randrange(cities)}"))
        if rng.random() < 0.8:
            yield (None, p, works, ex(f"o{rng.randrange(orgs)}"))
        for friend in {rng.randrange(people) for _ in range(rng.randrange(11))} - {i}:
            yield (None, p, knows, ex(f"p{friend}"))
        if i:
            yield (None, p, reports, ex(f"p{i // 4}"))


QUERIES = {
    "star join": PREFIX + """SELECT ?p ?name ?age ?org WHERE {
        ?p :livesIn :c7 ; a :Person ; :name ?name ; :age ?age ; :worksFor ?org }""",
    "chain join": PREFIX + """SELECT ?a ?b ?c WHERE {
        ?a :knows ?b . ?b :livesIn ?c . ?c :inCountry :country3 }""",
    "filter": PREFIX + """SELECT ?p ?name WHERE {
        ?p :age ?age ; :name ?name FILTER(?age >= 30 && ?age < 32 && STRSTARTS(?name, "Person 1")) }""",
    "optional": PREFIX + """SELECT ?p ?org ?city WHERE {
        ?p :age 40 OPTIONAL { ?p :worksFor ?org . ?org :locatedIn ?city } }""",
    "aggregate": PREFIX + """SELECT ?city (COUNT(?p) AS ?people) (AVG(?age) AS ?mean) WHERE {
        ?p :livesIn ?city ; :age ?age } GROUP BY ?city ORDER BY DESC(?people) LIMIT 10""",
    "path": PREFIX + """SELECT ?x WHERE { ?x :reportsTo+ :p17 }""",
}


def ox_quad(quad: tuple) -> ox.Quad:
    g, s, p, o = quad
    return ox.Quad(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o), to_oxigraph(g))


def race(repeat: int, *runs: Callable[[], int]) -> list[tuple[float, int]]:
    """The fastest of ``repeat`` runs of each engine, taking turns (so that a busy machine
    slows both alike), and each one's row count."""
    best = [float("inf")] * len(runs)
    rows = [-1] * len(runs)
    for _ in range(repeat):
        for i, run in enumerate(runs):
            start = time.perf_counter()
            rows[i] = run()
            best[i] = min(best[i], time.perf_counter() - start)
    return list(zip(best, rows))


def load(quads: list, workdir: str) -> tuple[fstore.Repository, ox.Store]:
    repo = fstore.open(os.path.join(workdir, "datae"))
    start = time.perf_counter()
    with repo.transaction("main", message="social graph", author="bench") as tx:
        for quad in quads:
            fstore.add(tx, *quad)
    datae_load = time.perf_counter() - start
    store = ox.Store(os.path.join(workdir, "oxigraph"))
    start = time.perf_counter()
    store.bulk_extend(ox_quad(q) for q in quads)
    store.flush()
    ox_load = time.perf_counter() - start
    print(f"load: datae {datae_load:.1f} s (one commit), pyoxigraph {ox_load:.1f} s (bulk_extend)")
    return repo, store


def profile(view: fstore.View, text: str) -> str:
    """Where a query's time goes (cProfile, inclusive times as shares of the whole):
    parsing, planning, and reading through fstore (setting reads up and iterating them in
    ``fstore.core.history``: LMDB, nstore key splitting, the history pass, term decoding); the
    rest is the query engine itself (executor, expressions, solution dicts)."""
    profiler = cProfile.Profile()
    profiler.enable()
    sum(1 for _ in execute(view, text))
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = max(stats.total_tt, 1e-9)  # type: ignore[attr-defined]
    shares = {"parse": 0.0, "plan": 0.0, "fstore reads": 0.0}
    for (filename, _, function), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        if filename.endswith("query/parser.py") and function == "parse_query":
            shares["parse"] += cumulative
        elif filename.endswith("query/planner.py") and function == "plan":
            shares["plan"] = max(shares["plan"], cumulative)
        elif filename.endswith("fstore/core/history.py") and function in ("match", "run", "_winners"):
            # Setting a read up (match, run: prepared) and iterating it (_winners, which
            # counts too): none of them calls another, so their times add up.
            shares["fstore reads"] += cumulative
    engine = max(total - sum(shares.values()), 0.0)
    shares["query engine"] = engine
    return ", ".join(f"{label} {100 * value / total:.0f}%" for label, value in shares.items())


def run_size(quads_wanted: int, repeat: int, show_profile: bool) -> dict[str, tuple[float, float, int]]:
    workdir = tempfile.mkdtemp(prefix="datae-query-bench-")
    try:
        start = time.perf_counter()
        quads = list(social_graph(quads_wanted))
        print(f"\n{len(quads):,} quads generated in {time.perf_counter() - start:.1f} s")
        repo, store = load(quads, workdir)
        del quads  # both stores hold the data now; a million live tuples would only slow the GC
        gc.collect()
        view = repo.at("main")
        print(f"{'query':<12} {'rows':>8} {'datae':>11} {'pyoxigraph':>11} {'ratio':>7}")
        results = {}
        for label, text in QUERIES.items():
            parse_query(text)
            (mine, mine_rows), (theirs, their_rows) = race(
                repeat, lambda: sum(1 for _ in execute(view, text)), lambda: sum(1 for _ in store.query(text))
            )
            agree = "" if mine_rows == their_rows else f"  ROW COUNTS DIFFER: pyoxigraph {their_rows}"
            print(f"{label:<12} {mine_rows:>8} {mine * 1000:>9.1f}ms {theirs * 1000:>9.1f}ms {mine / theirs:>6.1f}x{agree}")
            results[label] = (mine, theirs, mine_rows)
            if show_profile:
                print(f"{'':<12} profile: {profile(view, text)}")
        repo.close()
        del store
        return results
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="SPARQL queries: datae vs pyoxigraph on the same data")
    parser.add_argument("--quads", type=int, default=1_000_000, help="size of the generated graph (default 1,000,000)")
    parser.add_argument("--small", type=int, default=0, help="also run this smaller size first and print how each query scales")
    parser.add_argument("--repeat", type=int, default=3, help="runs per query; the best counts (default 3)")
    parser.add_argument("--profile", action="store_true", help="show where each datae query spends its time")
    args = parser.parse_args(argv)
    sizes = [args.small, args.quads] if args.small else [args.quads]
    runs = [run_size(size, args.repeat, args.profile) for size in sizes]
    if len(runs) == 2:
        small, large = runs
        factor = args.quads / args.small
        print(f"\nscaling from {args.small:,} to {args.quads:,} quads (x{factor:.0f} data): time factor datae / pyoxigraph (rows factor)")
        for label in QUERIES:
            (m1, t1, r1), (m2, t2, r2) = small[label], large[label]
            print(f"{label:<12} {m2 / m1:>6.1f}x / {t2 / t1:>6.1f}x   (rows x{r2 / max(r1, 1):.1f})")


if __name__ == "__main__":
    main()
