"""Byte flips in a store's data.mdb, read back through every access path (issue 24).

Run as ``python -m tests.fstore.flip_probe SOURCE WORK SEED COUNT [--pages N] [--build SIZE]``:
reads the store in ``SOURCE`` (made by :func:`build`, first if ``--build``), then for each
probe writes a copy of its ``data.mdb`` with one bit flipped into a fresh directory under
``WORK`` (a new path each time, so no cache keyed by path carries a pristine answer over),
and classifies the outcome:

* ``refused at open``: a typed error when the store is opened;
* ``reported by verify``: ``Repository.verify()`` lists a problem or raises a typed error;
* ``harmless``: verify finds nothing and every read below gives what it gives on the
  pristine store;
* ``MISSED``: verify finds nothing, and some read differs or raises.

Flip positions: ``COUNT`` uniformly random bytes of the file, then ``--pages N`` bytes in
each kind of B-tree page (by keyspace and leaf / branch, and overflow pages; see
:func:`tests.lmdb_pages.pages`): random bytes of its node table and nodes (headers, keys,
values), where a flip changes what the tree holds or how it is searched.

Each probe prints one JSON line (``probe``, ``offset``, ``page``, ``outcome``, and for a
miss the reads that differ), then a last line ``{"outcomes": {...}}``. A signal kills the
process after the line naming the offset is printed, so the caller sees which flip.

The reads (:func:`answers`) cover every index permutation: each pattern shape (16 sets of
bound positions) with values taken from the store at every ref, so each snapshot index and
the term dictionary both ways are used; old commits (snapshot + overlay from the change
records), diff, blame, history and versions (the record indices), log and refs, table rows
by scan and by primary key, table diff and log, and SPARQL.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import random
import shutil
import sys
from decimal import Decimal
from typing import Any, Iterator

import fstore
import fstore.tables as tables
from fstore import IRI, BNode, Literal, Param, Var
from nstore.errors import DataeError
from tests.lmdb_pages import pages

__all__ = ["build", "answers", "positions", "probe", "main"]

DATA = "data.mdb"
REFS = ("main", "side", "v1", "main~1", "main~2", "main~3", "side~1")
_T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def _object(i: int) -> Any:
    """An object of one of many kinds (inline numbers and dates, dictionary terms, a long
    string kept by hash, an int too long for a key: a blob)."""
    kinds = [
        i, f"text {i}", Literal(f"t{i}", lang="en"), i + 0.5, Decimal(f"{i}.25"), i % 2 == 0,
        dt.date(2020, 1, 1) + dt.timedelta(days=i), _T0 + dt.timedelta(hours=i), IRI(f"urn:o{i % 40}"),
        Literal(f"{i}", datatype=IRI("urn:type")), BNode(f"b{i % 30}"), "long " * 100 + str(i),
        10 ** 300 + i, bytes([i % 256]) * 3, -i * 1000,
    ]
    return kinds[i % len(kinds)]


def _quad(i: int) -> tuple:
    return (IRI(f"urn:g{i % 4}") if i % 5 else None, IRI(f"urn:s{i % 150}"), IRI(f"urn:p{i % 7}"), _object(i))


def build(path: str, size: int = 900) -> None:
    """A store with history: commits adding and removing quads of every kind, a table whose
    rows change, a branch with its own commits, a tag, a merge."""
    repo = fstore.open(path)
    try:
        with repo.transaction("main", message="one", author="a", time=_T0) as tx:
            fstore.add_many(tx, [_quad(i) for i in range(size)])
            tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
                                    {"id": "v", "name": "v", "dataType": "text"}])
            tx.table("t").insert_many([{"k": i, "v": f"row {i}"} for i in range(120)])
        with repo.transaction("main", message="two", author="a", time=_T0 + dt.timedelta(1)) as tx:
            fstore.rm_many(tx, [_quad(i) for i in range(0, size, 3)])
            fstore.add_many(tx, [_quad(i) for i in range(size, size + size // 4)])
            table = tx.table("t")
            for i in range(0, 120, 4):
                table.update({"k": i, "v": f"changed {i}"})
            for i in range(1, 120, 9):
                table.delete(i)
        repo.tag("v1")
        repo.branch("side")
        with repo.transaction("side", message="side", author="b", time=_T0 + dt.timedelta(2)) as tx:
            fstore.add_many(tx, [(IRI("urn:gs"), IRI(f"urn:s{i}"), IRI("urn:ps"), _object(i)) for i in range(size // 5)])
            fstore.rm_many(tx, [_quad(i) for i in range(1, size, 7)])
            tx.table("t").insert_many([{"k": 1000 + i, "v": f"side {i}"} for i in range(30)])
        with repo.transaction("main", message="three", author="a", time=_T0 + dt.timedelta(3)) as tx:
            fstore.rm_many(tx, [_quad(i) for i in range(2, size, 11)])
            tx.table("t").insert_many([{"k": 2000 + i, "v": f"main {i}"} for i in range(30)])
        repo.merge("main", "side", author="a", time=_T0 + dt.timedelta(4))
        with repo.transaction("side", message="side two", author="b", time=_T0 + dt.timedelta(5)) as tx:
            fstore.add(tx, None, IRI("urn:last"), IRI("urn:p"), "last")
            # Values longer than half a page: LMDB keeps them in overflow pages.
            fstore.add_many(tx, [(None, IRI("urn:big"), IRI("urn:p"), f"{i} " + "big " * 1500) for i in range(3)])
        repo.branch("gone", "main~1")
        repo.delete_branch("gone")  # a reflog entry
        problems = repo.verify()
        assert problems == [], problems
    finally:
        repo.close()


def _show(value: Any) -> Any:
    """A JSON-able, exact form of read values (repr keeps 1, 1.0 and True apart)."""
    return repr(value)


def _sorted(values: Iterator[Any]) -> list[str]:
    return sorted(_show(v) for v in values)


def _samples(quads: list[tuple], count: int) -> list[tuple]:
    """``count`` quads spread over a (sorted) list, always the same ones."""
    if not quads:
        return []
    step = max(1, len(quads) // count)
    return quads[::step][:count]


def _patterns(samples: list[tuple]) -> Iterator[tuple[str, tuple]]:
    """Every shape of pattern (each set of bound positions), bound to each sample."""
    names = ("g", "s", "p", "o")
    for bound in itertools.product((False, True), repeat=4):
        for n, quad in enumerate(samples):
            pattern = tuple(quad[i] if b else Var(names[i]) for i, b in enumerate(bound))
            yield f"{''.join('b' if b else '-' for b in bound)}#{n}", pattern


def answers(repo: fstore.Repository, samples: dict[str, list[tuple]] | None = None) -> dict[str, Any]:
    """What every access path reads (see the module doc). ``samples`` are the quads whose
    values bind the patterns at each ref; None (the pristine store): three quads of each
    ref are chosen and returned under ``"__samples"``, for the reads of the flipped copies."""
    got: dict[str, Any] = {}
    everything = (Var("g"), Var("s"), Var("p"), Var("o"))
    got["branches"] = repo.branches()
    got["tags"] = repo.tags()
    got["current"] = repo.current_branch
    got["reflog"] = [(kind, name, commit) for _, kind, name, commit in repo.reflog()]
    got["log"] = [(c.id, c.parents, c.message, c.author, c.time.isoformat(), c.digest) for c in repo.log("main")]
    for ref in REFS:
        view = repo.at(ref)
        got[f"{ref} id"] = view.commit_id
        found = list(fstore.quads(view, *everything))
        got[f"{ref} all"] = _sorted(found)
        got[f"{ref} count"] = fstore.count(view, *everything)
        got[f"{ref} graphs"] = _sorted(fstore.graphs(view))
        chosen = samples[ref] if samples is not None else _samples(sorted(found, key=repr), 3)
        for name, pattern in _patterns(chosen):
            got[f"{ref} {name}"] = _sorted(fstore.quads(view, *pattern))
        read = fstore.prepare(view, Param(), Param(), Var("p"), Var("o"))
        for n, quad in enumerate(chosen):
            got[f"{ref} prepared#{n}"] = _sorted(read(quad[0], quad[1]))
        table = view.table("t")
        got[f"{ref} rows"] = _sorted(tuple(sorted(row.items())) for row in table.rows())
        got[f"{ref} rows by key"] = [_show(table.get(k)) for k in (0, 1, 4, 7, 50, 119, 1005, 2010)]
        if samples is None:
            got.setdefault("__samples", {})[ref] = chosen
    for a, b in (("main~3", "main"), ("v1", "side"), ("main~1", "main~2")):
        got[f"diff {a} {b}"] = _sorted(repo.diff(a, b))
        got[f"table diff {a} {b}"] = _show(repo.table_diff(a, b, "t"))
    for n, quad in enumerate((samples or got["__samples"])["main~3"]):
        got[f"blame#{n}"] = [_show(repo.blame(ref, *quad)) for ref in ("main", "side")]
        got[f"history#{n}"] = [(c.id, _sorted(changes)) for c, changes in repo.history("main", None, quad[1], Var("p"), Var("o"))]
        got[f"versions#{n}"] = [(_show(q), [c.id for c in commits]) for q, commits in repo.versions("main", Var("g"), quad[1], quad[2], Var("o"))]
    for k in (0, 4, 1005):
        got[f"table log {k}"] = _show(repo.table_log("main", "t", k))
    from query import Session

    session = Session(repo, "main")
    for n, text in enumerate((
        "SELECT ?s (COUNT(?o) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?s ORDER BY ?s",
        "SELECT ?g ?s ?o WHERE { GRAPH ?g { ?s ?p ?o . FILTER(?o > 100 && ?o < 400) } } ORDER BY ?g ?s ?o",
        "SELECT ?s ?x WHERE { GRAPH <urn:g1> { ?s <urn:p3> ?o . ?s <urn:p1> ?x } } ORDER BY ?s ?x",
        "SELECT ?k ?v WHERE { GRAPH <urn:datae:dataset:t> { ?r ?k ?v } } ORDER BY ?r ?k",
    )):
        got[f"sparql#{n}"] = session.run(text).serialize("csv")
    return got


def _jsonable(answers: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps({k: v for k, v in answers.items() if k != "__samples"}, default=repr))


def positions(data: bytes, rng: random.Random, count: int, per_page_kind: int) -> list[tuple[int, str]]:
    """Random offsets over the file, then ``per_page_kind`` inside the node tables and nodes
    of pages of each kind."""
    chosen = [(rng.randrange(len(data)), "anywhere") for _ in range(count)]
    by_kind: dict[str, list[list[tuple[int, int]]]] = {}
    for _, kind, spans in pages(data):
        by_kind.setdefault(kind, []).append(spans)
    for kind in sorted(by_kind):
        for _ in range(per_page_kind):
            start, end = rng.choice(rng.choice(by_kind[kind]))
            if end > start:
                chosen.append((rng.randrange(start, end), kind))
    return chosen


def probe(source: str, work: str, seed: int, count: int, per_page_kind: int) -> dict[str, int]:
    repo = fstore.open(source)
    try:
        expected = answers(repo)
    finally:
        repo.close()
    samples = expected.pop("__samples")
    expected = _jsonable(expected)
    with open(os.path.join(source, DATA), "rb") as stream:
        data = stream.read()
    rng = random.Random(seed)
    outcomes: dict[str, int] = {}
    for number, (offset, kind) in enumerate(positions(data, rng, count, per_page_kind)):
        bit = 1 << rng.randrange(8)
        print(json.dumps({"probe": number, "offset": offset, "page": kind}), flush=True)
        path = os.path.join(work, f"probe-{number}")
        os.makedirs(path)
        flipped = bytearray(data)
        flipped[offset] ^= bit
        with open(os.path.join(path, DATA), "wb") as stream:
            stream.write(flipped)
        outcome, detail = _one(path, expected, samples)
        shutil.rmtree(path, ignore_errors=True)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        print(json.dumps({"probe": number, "offset": offset, "bit": bit, "page": kind, "outcome": outcome,
                          "detail": detail}), flush=True)
    return outcomes


def _one(path: str, expected: dict[str, Any], samples: dict[str, list[tuple]]) -> tuple[str, Any]:
    try:
        repo = fstore.open(path)
    except DataeError:
        return "refused at open", None
    try:
        try:
            problems = repo.verify()
        except DataeError as exc:
            return "reported by verify", f"raised {exc}"
        except Exception as exc:  # noqa: BLE001 - verify must report damage with a typed error at worst
            return "VERIFY CRASHED", f"{type(exc).__name__}: {exc}"[:500]
        if problems:
            return "reported by verify", problems[:3]
        try:
            got = _jsonable(answers(repo, samples))
        except Exception as exc:  # noqa: BLE001 - any failure of a read verify passed is a miss
            return "MISSED", f"a read raised {type(exc).__name__}: {exc}"[:500]
        wrong = [key for key in expected if got.get(key) != expected[key]]
        return ("MISSED", wrong[:10]) if wrong else ("harmless", None)
    finally:
        repo.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source")
    parser.add_argument("work")
    parser.add_argument("seed", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("--pages", type=int, default=0, help="flips in each kind of B-tree page")
    parser.add_argument("--build", type=int, default=0, metavar="SIZE",
                        help="build the store in SOURCE first, from SIZE quads")
    args = parser.parse_args(argv)
    if args.build:
        build(args.source, args.build)
    outcomes = probe(args.source, args.work, args.seed, args.count, args.pages)
    print(json.dumps({"outcomes": outcomes}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
