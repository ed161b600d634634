"""History depth benchmark (issue 12, "Storage format v2"): does a long history slow the
head down, and what do time travel and a commit cost, side by side with pyoxigraph.

    python -m bench.history_bench [--quads 100000] [--times 10] [--history-commits 100]
                                  [--commits 200] [--changes 1000] [--queries 2000] [--repeat 3]
    python -m bench.history_bench --quads 5000 --commits 30 --changes 200    # a quick run

The data is the social graph of ``bench/query_bench.py`` (:func:`social_graph`, ``--quads``
quads, default graph), so its SPARQL queries apply at the head. An *object change* of a
quad removes it and adds the same graph, subject and predicate with another object: one
the predicate takes elsewhere in the data (another city, age, friend, name, class...),
never one the subject and predicate already hold.

Three stores hold the same final state (the social graph):

* **deep**: a datae store with history. Commit 0 holds every quad with a changed object;
  then ``--history-commits`` (C) commits of ``quads * times / C`` object changes each
  change every quad ``--times`` (K) times in all, in K rounds of shuffled order, the last
  round giving each quad its final object. Commit C/2 ("halfway") is the time-travel point;
  every quad exists exactly once at any commit, so lookups there count as many results;
* **final**: a datae store holding only the final state, in one commit;
* **pyoxigraph**: an on-disk ``Store`` holding the final state (``bulk_extend`` + ``flush``).

Measured (each the best of ``--repeat`` runs, the engines taking turns; all results read):

* subject-bound lookups: ``fstore.quads(view, ?g, s, ?p, ?o)`` for ``--queries`` random
  subjects, counting results, against ``Store.quads_for_pattern(s, None, None, None)``;
* predicate-bound lookups: ``fstore.quads(view, ?g, ?s, p, ?o)`` for every predicate of
  the data, against ``quads_for_pattern(None, p, None, None)``;
* both lookups also on the deep store at the halfway commit (``repo.at(commit_id)``);
* the six SPARQL queries of ``bench/query_bench.py`` (``QUERIES``), run with
  ``query.execute`` at the head of main of deep and final, and ``Store.query``;
* commit cost: a fresh datae store loaded with the final state (one commit), then
  ``--commits`` commits of ``--changes`` object changes each (random quads, so
  ``--changes`` removes and as many adds, durable commit); the figure at a checkpoint
  (commit 10, 20, 50, 100, 200, 500, 1000..., and the last) is the median time of the 5
  commits ending there. Peer: the same changes applied to a pyoxigraph ``Store``
  (``remove`` per quad, ``extend`` of the new ones, ``flush``).

Not timed: generating the data and the changes, converting them to pyoxigraph terms,
building the stores (their build times are printed for information). Bytes on disk are
allocated blocks. Ratios are datae / peer (> 1: datae slower); targets are issue 12's:
deep head / final <= 1.2, time travel / head <= 2, commit cost late / early ~1.0.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from itertools import islice
from typing import Any, Callable, Iterator

import pyoxigraph as ox

import fstore
from fstore import Var
from query import execute

from .nstore_bench import disk_bytes, machine
from .query_bench import QUERIES, ox_quad, race, social_graph

G, S, P, O = Var("g"), Var("s"), Var("p"), Var("o")
Quad = tuple


class Changes:
    """Object changes to a list of quads (slots): :meth:`change` replaces slot ``i``'s object
    with another object its predicate takes in the data, never making a quad that is live
    or in ``avoid``. ``current`` is the quad each slot holds now."""

    def __init__(self, quads: list[Quad], rng: random.Random, avoid: frozenset = frozenset()) -> None:
        self.current = list(quads)
        self.live = set(quads)
        self.avoid = avoid
        self.rng = rng
        pools: dict[Any, dict[Any, None]] = {}
        for _, _, p, o in quads:
            pools.setdefault(p, {})[o] = None
        self.pools = {p: list(objects) for p, objects in pools.items()}
        self.fresh = 0

    def change(self, i: int, to: Quad | None = None) -> tuple[Quad, Quad]:
        """(old, new) for slot ``i``; ``to`` forces the new quad (which must not be live)."""
        old = self.current[i]
        new = to
        if new is None:
            g, s, p, _ = old
            pool, pick = self.pools[p], self.rng.randrange
            for _ in range(32):
                candidate = (g, s, p, pool[pick(len(pool))])
                if candidate not in self.live and candidate not in self.avoid:
                    new = candidate
                    break
            else:  # a tiny pool (tiny --quads): a value no quad holds
                self.fresh += 1
                new = (g, s, p, f"changed value {self.fresh}")
        assert new not in self.live, new
        self.live.remove(old)
        self.live.add(new)
        self.current[i] = new
        return old, new


def history_changes(final: list[Quad], times: int, rng: random.Random) -> tuple[list[Quad], Iterator[tuple[Quad, Quad]]]:
    """The initial quads (every object changed away from the final one) and the stream of
    ``len(final) * times`` changes that ends in ``final``: rounds of shuffled order, the
    last giving each quad its final object."""
    changes = Changes(final, rng, avoid=frozenset(final))
    for i in range(len(final)):
        changes.change(i)
    initial = list(changes.current)

    def stream() -> Iterator[tuple[Quad, Quad]]:
        order = list(range(len(final)))
        for round_ in range(times):
            rng.shuffle(order)
            last = round_ == times - 1
            for i in order:
                yield changes.change(i, final[i] if last else None)

    return initial, stream()


def apply(repo: fstore.Repository, batch: list[tuple[Quad, Quad]], message: str) -> str:
    with repo.transaction("main", message=message, author="bench") as tx:
        for old, new in batch:
            fstore.rm(tx, *old)
            fstore.add(tx, *new)
    return tx.commit_id


def load_one_commit(path: str, quads: list[Quad], message: str) -> tuple[fstore.Repository, str]:
    repo = fstore.open(path)
    with repo.transaction("main", message=message, author="bench") as tx:
        for quad in quads:
            fstore.add(tx, *quad)
    return repo, tx.commit_id


def ms(seconds: float) -> str:
    return f"{seconds * 1000:10.1f} ms"


# -- the stores and their lookups ------------------------------------------------------


def build(args: argparse.Namespace, root: str, final: list[Quad]) -> tuple[fstore.Repository, list[str], fstore.Repository, ox.Store]:
    n, times, commits = len(final), args.times, args.history_commits
    rng = random.Random(12)
    initial, stream = history_changes(final, times, rng)
    per_commit = -(-n * times // commits)
    start = time.perf_counter()
    deep, first = load_one_commit(os.path.join(root, "deep"), initial, "initial state")
    building, ids = time.perf_counter() - start, [first]
    for number in range(commits):
        batch = list(islice(stream, per_commit))
        if not batch:
            break
        start = time.perf_counter()
        ids.append(apply(deep, batch, f"changes {number + 1}"))
        building += time.perf_counter() - start
    print(f"deep store: {n:,} quads + {len(ids) - 1} commits of {per_commit:,} object changes "
          f"({n * times:,} in all) built in {building:.1f} s")
    start = time.perf_counter()
    flat, _ = load_one_commit(os.path.join(root, "final"), final, "final state")
    print(f"final-state store: {n:,} quads in one commit, {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    store = ox.Store(os.path.join(root, "oxigraph"))
    store.bulk_extend([ox_quad(q) for q in final])
    store.flush()
    print(f"pyoxigraph: {n:,} quads, bulk_extend + flush, {time.perf_counter() - start:.1f} s")
    return deep, ids, flat, store


def datae_lookups(view: Any, patterns: list[tuple]) -> Callable[[], int]:
    def run() -> int:
        found = 0
        for pattern in patterns:
            for _ in fstore.quads(view, *pattern):
                found += 1
        return found

    return run


def ox_lookups(store: ox.Store, patterns: list[tuple]) -> Callable[[], int]:
    def run() -> int:
        found = 0
        for pattern in patterns:
            for _ in store.quads_for_pattern(*pattern):
                found += 1
        return found

    return run


def lookups(args: argparse.Namespace, final: list[Quad], deep: fstore.Repository, halfway: str,
            flat: fstore.Repository, store: ox.Store, ratios: list) -> None:
    rng = random.Random(5)
    subjects = list(dict.fromkeys(q[1] for q in final))
    subjects = rng.sample(subjects, min(args.queries, len(subjects)))
    predicates = list(dict.fromkeys(q[2] for q in final))
    node = lambda value: ox.NamedNode(value.value)  # noqa: E731
    cases = [
        (f"{len(subjects):,} subject lookups", [(G, s, P, O) for s in subjects], [(node(s), None, None, None) for s in subjects]),
        (f"{len(predicates)} predicate lookups", [(G, S, p, O) for p in predicates], [(None, node(p), None, None) for p in predicates]),
    ]
    head, past, flat_head = deep.at("main"), deep.at(halfway), flat.at("main")
    print(f"\n{'lookups (best of %d)' % args.repeat:<28} {'results':>9} {'deep head':>13} {'final':>13} "
          f"{'pyoxigraph':>13} {'deep halfway':>13}")
    for label, patterns, ox_patterns in cases:
        (deep_s, deep_n), (flat_s, flat_n), (ox_s, ox_n), (past_s, past_n) = race(
            args.repeat, datae_lookups(head, patterns), datae_lookups(flat_head, patterns),
            ox_lookups(store, ox_patterns), datae_lookups(past, patterns),
        )
        agree = "" if deep_n == flat_n == ox_n == past_n else f"  COUNTS DIFFER: {deep_n} {flat_n} {ox_n} {past_n}"
        print(f"{label:<28} {deep_n:>9,} {ms(deep_s)} {ms(flat_s)} {ms(ox_s)} {ms(past_s)}{agree}")
        ratios.append((f"deep head / final: {label}", deep_s / flat_s, 1.2))
        ratios.append((f"time travel / head: {label}", past_s / deep_s, 2.0))
        ratios.append((f"final / pyoxigraph: {label}", flat_s / ox_s, None))


def queries(args: argparse.Namespace, deep: fstore.Repository, flat: fstore.Repository, store: ox.Store, ratios: list) -> None:
    head, flat_head = deep.at("main"), flat.at("main")
    print(f"\n{'SPARQL (best of %d)' % args.repeat:<28} {'rows':>9} {'deep head':>13} {'final':>13} {'pyoxigraph':>13}")
    for label, text in QUERIES.items():
        (deep_s, deep_n), (flat_s, flat_n), (ox_s, ox_n) = race(
            args.repeat,
            lambda: sum(1 for _ in execute(head, text)),
            lambda: sum(1 for _ in execute(flat_head, text)),
            lambda: sum(1 for _ in store.query(text)),
        )
        agree = "" if deep_n == flat_n == ox_n else f"  ROW COUNTS DIFFER: {deep_n} {flat_n} {ox_n}"
        print(f"{label:<28} {deep_n:>9,} {ms(deep_s)} {ms(flat_s)} {ms(ox_s)}{agree}")
        ratios.append((f"deep head / final: query {label}", deep_s / flat_s, 1.2))
        ratios.append((f"final / pyoxigraph: query {label}", flat_s / ox_s, None))


# -- commit cost ------------------------------------------------------------------------


def checkpoints(commits: int) -> list[int]:
    marks = [m * 10**e for e in range(1, 7) for m in (1, 2, 5) if m * 10**e <= commits]
    return sorted(set(marks + [commits]))


def commit_cost(args: argparse.Namespace, root: str, final: list[Quad], ratios: list) -> None:
    n, changes_per = len(final), min(args.changes, len(final))
    print(f"\ncommit cost: {args.commits} commits of {changes_per:,} object changes on {n:,} quads "
          f"(figure at commit c: median of commits c-4..c)")
    repo, _ = load_one_commit(os.path.join(root, "growing"), final, "final state")
    store = ox.Store(os.path.join(root, "oxigraph-growing"))
    store.bulk_extend([ox_quad(q) for q in final])
    store.flush()
    changes = Changes(final, random.Random(13))
    datae_s: list[float] = []
    ox_s: list[float] = []
    marks = checkpoints(args.commits)
    print(f"{'commit':>8} {'datae':>13} {'pyoxigraph':>13} {'datae/pyox':>11}")
    figures: dict[int, float] = {}
    for number in range(1, args.commits + 1):
        batch = [changes.change(i) for i in changes.rng.sample(range(n), changes_per)]
        removed = [ox_quad(old) for old, _ in batch]
        added = [ox_quad(new) for _, new in batch]
        gc.collect()
        start = time.perf_counter()
        apply(repo, batch, f"commit {number}")
        datae_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        for quad in removed:
            store.remove(quad)
        store.extend(added)
        store.flush()
        ox_s.append(time.perf_counter() - start)
        if number in marks:
            mine, theirs = statistics.median(datae_s[-5:]), statistics.median(ox_s[-5:])
            figures[number] = mine
            print(f"{number:>8} {ms(mine)} {ms(theirs)} {mine / theirs:>10.2f}x", flush=True)
    early, late = min(figures), max(figures)
    ratios.append((f"commit cost late / early (commit {late} / {early})", figures[late] / figures[early], "~1.0"))
    ratios.append((f"commit cost datae / pyoxigraph at commit {late}", figures[late] / statistics.median(ox_s[-5:]), None))
    print(f"history of the growing store: {disk_bytes(repo.path) / 1e6:.1f} MB on disk after {args.commits + 1} commits")
    repo.close()
    del store


# -- main --------------------------------------------------------------------------------


def bench(args: argparse.Namespace) -> None:
    print(f"# history benchmark: {args.quads:,} quads x {args.times} changes over {args.history_commits} commits; "
          f"commit cost over {args.commits} commits of {args.changes:,}; {machine()}")
    root = tempfile.mkdtemp(prefix="datae-history-bench-", dir=args.dir)
    ratios: list[tuple[str, float, Any]] = []
    try:
        final = list(dict.fromkeys(social_graph(args.quads)))
        deep, ids, flat, store = build(args, root, final)
        halfway = ids[(len(ids) - 1) // 2]
        print(f"halfway: commit {(len(ids) - 1) // 2} of {len(ids) - 1} ({halfway[:12]})")
        lookups(args, final, deep, halfway, flat, store, ratios)
        queries(args, deep, flat, store, ratios)
        deep.close()
        flat.close()
        del store
        gc.collect()
        print("\nbytes on disk: " + ", ".join(
            f"{name} {disk_bytes(os.path.join(root, name)) / 1e6:.1f} MB" for name in ("deep", "final", "oxigraph")))
        if args.commits:
            commit_cost(args, root, final, ratios)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\n{'ratio (datae / peer: > 1 means slower)':<62} {'value':>7}  target")
    for label, value, target in ratios:
        if target is None:
            verdict = ""
        elif isinstance(target, str):
            verdict = target
        else:
            verdict = f"<= {target}: {'met' if value <= target else 'MISSED'}"
        print(f"{label:<62} {value:>7.2f}  {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="quick run: --quads 5000 --commits 30 --changes 200")
    parser.add_argument("--quads", type=int, default=100_000, help="quads of the social graph (default 100,000)")
    parser.add_argument("--times", type=int, default=10, help="object changes per quad in the deep history (default 10)")
    parser.add_argument("--history-commits", type=int, default=100, help="commits the deep history spreads them over (default 100)")
    parser.add_argument("--commits", type=int, default=200, help="commits of the commit-cost run (default 200; 0: skip it)")
    parser.add_argument("--changes", type=int, default=1000, help="object changes per commit of the commit-cost run (default 1,000)")
    parser.add_argument("--queries", type=int, default=2000, help="subject lookups (default 2,000)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs per lookup and query (default 3)")
    parser.add_argument("--dir", default=None, help="where to create the stores (default: the temp dir)")
    bench(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
