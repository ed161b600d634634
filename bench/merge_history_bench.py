"""verify and a checked clone of a history of many merges (issue 24's review): each round
commits on two branches and merges them, so a store of N rounds holds N merges. verify
recomputes every merge's counts and a local clone runs verify on its copy; the peer is a
clone commit by commit (``local=False``), which checks every commit as it arrives. Two
sizes show how the cost grows (O(merges × commits) in set unions).

    python -m bench.merge_history_bench [--merges 500,2000]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
from pathlib import Path

import fstore
from fstore import IRI

from .timing import timed

GRAPH, PREDICATE = IRI("urn:g"), IRI("urn:p")


def build(path: Path, merges: int) -> fstore.Repository:
    """A store whose ``main`` merges ``dev`` ``merges`` times, each side one commit a round."""
    repo = fstore.open(path)
    with repo.transaction("main", message="root", author="bench") as tx:
        fstore.add(tx, GRAPH, IRI("urn:root"), PREDICATE, 0)
    repo.branch("dev")
    for n in range(merges):
        with repo.transaction("dev", message=f"dev {n}", author="bench") as tx:
            fstore.add(tx, GRAPH, IRI(f"urn:dev{n}"), PREDICATE, n)
        with repo.transaction("main", message=f"main {n}", author="bench") as tx:
            fstore.add(tx, GRAPH, IRI(f"urn:main{n}"), PREDICATE, n)
        repo.merge("main", "dev")
        repo.merge("dev", "main")  # a fast-forward: dev starts the next round at the merge
    return repo


def clone_time(source: Path, dest: Path, local: bool) -> float:
    def clone() -> None:
        shutil.rmtree(dest, ignore_errors=True)
        fstore.clone(str(source), dest, local=local).close()

    return timed(clone)[0]


def run(merges: int) -> None:
    folder = Path(tempfile.mkdtemp())
    try:
        repo = build(folder / "store", merges)
        seconds, problems = timed(repo.verify)
        repo.close()
        assert problems == [], problems
        checked = clone_time(folder / "store", folder / "copy", local=True)
        replayed = clone_time(folder / "store", folder / "replay", local=False)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"{merges:>6,} merges  verify {seconds:6.2f} s  clone (copy+verify) {checked:6.2f} s  "
              f"clone --no-local {replayed:6.2f} s  ({checked / replayed:.1f}x)  peak RSS so far {peak} MB")
    finally:
        shutil.rmtree(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merges", default="500,2000")
    args = parser.parse_args()
    for merges in (int(m) for m in args.merges.split(",")):
        run(merges)


if __name__ == "__main__":
    main()
