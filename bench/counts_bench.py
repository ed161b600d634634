"""Counting benchmark (issue 27.3): SPARQL counts the store answers from the counts it keeps
with its heads, side by side with pyoxigraph, at two sizes.

Each snapshot of a datae store keeps its quads counted by graph and predicate (format 5,
docs/format.md, "Counts"). The planner reads them for its estimates, and the engine
answers from them ``COUNT(*)`` of a pattern that binds at most its predicate, and the
property partition (``GROUP BY ?p`` over ``?s ?p ?o``), in one read a predicate, where a
store without such counts reads every matching quad (O(matches)).

The data is ``bench/query_bench.py``'s social graph, loaded into a datae store and a
pyoxigraph store as that benchmark loads them; each query runs on both in turn, the best
of ``--repeat``, and the answers (every row's values) must be equal.

    python -m bench.counts_bench [--sizes 100000,1000000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile

from nstore.terms import from_oxigraph
from query import execute

from .query_bench import PREFIX, load, race, social_graph

__all__ = ["QUERIES", "main"]

QUERIES = {
    "one predicate": PREFIX + "SELECT (COUNT(*) AS ?n) WHERE { ?a :knows ?b }",
    "every quad": PREFIX + "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
    "property partition": PREFIX + "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p",
}


def run_size(quads_wanted: int, repeat: int) -> None:
    workdir = tempfile.mkdtemp(prefix="datae-counts-bench-")
    try:
        repo, store = load(list(social_graph(quads_wanted)), workdir)
        view = repo.at("main")
        print(f"{'query':<20} {'datae':>11} {'pyoxigraph':>11} {'ratio':>8}")
        for label, text in QUERIES.items():
            answers: dict[str, set] = {}

            def mine() -> int:
                answers["datae"] = {frozenset(row.items()) for row in execute(view, text)}
                return len(answers["datae"])

            def theirs() -> int:
                result = store.query(text)
                names = [v.value for v in result.variables]
                answers["pyoxigraph"] = {frozenset((n, from_oxigraph(row[n])) for n in names) for row in result}
                return len(answers["pyoxigraph"])

            (datae, _), (oxigraph, _) = race(repeat, mine, theirs)
            agree = "" if answers["datae"] == answers["pyoxigraph"] else "  ANSWERS DIFFER"
            print(f"{label:<20} {datae * 1000:>9.2f}ms {oxigraph * 1000:>9.2f}ms {datae / oxigraph:>7.4f}x{agree}")
        repo.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated quads to generate (default 100000,1000000)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per query; the best counts (default 5)")
    args = parser.parse_args(argv)
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"\n{size:,} quads")
        run_size(size, args.repeat)


if __name__ == "__main__":
    main()
