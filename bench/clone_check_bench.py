"""What checking a clone by file copy costs (issue 24): a clone runs ``verify`` on the
copied file before it is made, since a copied file carries every damage of its source.

    python -m bench.clone_check_bench                          # demo size: 16 releases of 16k quads
    python -m bench.clone_check_bench --quads 4000 --commits 4  # quick

A store shaped like the demo's (``--commits`` releases of ``--quads`` quads, each release
replacing ``--churn`` of them, one tag each) is cloned from its path. Printed: the file
copy alone (what a clone was before), the verify of the copy, and the whole clone, with
the ratio of the clone to the copy, and a clone commit by commit (``--no-local``), whose
every commit is checked as it arrives.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile

import fstore
from fstore import IRI

from .timing import timed


def build(path: str, quads: int, commits: int, churn: int) -> None:
    rng = random.Random(1)
    repo = fstore.open(path)
    live = [(IRI("https://schema.org/"), IRI(f"https://schema.org/T{i}"), IRI(f"urn:p{i % 40}"),
             f"a description of term {i} " * rng.randrange(1, 6)) for i in range(quads)]
    for n in range(commits):
        with repo.transaction("main", message=f"release {n}", author="bench") as tx:
            if n == 0:
                fstore.add_many(tx, live)
            else:
                gone = rng.sample(range(len(live)), churn)
                fstore.rm_many(tx, [live[i] for i in gone])
                for i in gone:
                    live[i] = (*live[i][:3], f"release {n} text {rng.random()}")
                fstore.add_many(tx, [live[i] for i in gone])
        repo.tag(f"v{n}", "main")
    repo.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quads", type=int, default=16_000)
    parser.add_argument("--commits", type=int, default=16)
    parser.add_argument("--churn", type=int, default=800)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="clone-check-")
    try:
        origin = os.path.join(work, "origin", ".datae")
        build(origin, args.quads, args.commits, args.churn)
        size = os.path.getsize(os.path.join(origin, "data.mdb"))
        source = fstore.open(origin)

        def copy() -> None:
            target = tempfile.mkdtemp(dir=work)
            source.storage.okvs.copy_to(target)

        copied, _ = timed(copy, repeat=3)
        source.close()
        clones = iter(range(1000))

        def clone() -> fstore.Repository:
            repo = fstore.clone(os.path.dirname(origin), os.path.join(work, f"clone{next(clones)}", ".datae"))
            repo.close()
            return repo

        cloned, _ = timed(clone, repeat=3)
        fetched, _ = timed(lambda: fstore.clone(os.path.dirname(origin), os.path.join(work, f"clone{next(clones)}", ".datae"),
                                                local=False).close(), repeat=3)
        def check() -> list[str]:  # a store opened afresh each time, as a clone checks its copy
            with fstore.open(os.path.join(work, "clone0", ".datae")) as checked:
                return checked.verify(tags=False)

        verified, problems = timed(check, repeat=3)
        assert problems == [], problems
        print(f"store: {args.commits} commits, {args.quads} quads a release, data.mdb {size / 1e6:.1f} MB")
        print(f"file copy alone      {copied:7.3f} s")
        print(f"verify of the copy   {verified:7.3f} s")
        print(f"clone (copy+verify)  {cloned:7.3f} s   {cloned / copied:.1f}x the copy")
        print(f"clone --no-local     {fetched:7.3f} s   (every commit sent and checked: the peer)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
