"""The cost of checking terms on writes (issue 16): ``fstore.add_many`` of the load
benchmark's quads into a fresh store, with the checks on and off (``fstore.api``'s
``prepare_new_quad`` replaced by the type-only ``prepare_quad``), taking turns; CPU
seconds of this process, which a busy machine disturbs less than wall time.

    python -m bench.term_check_bench [--quads 200000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gc
import shutil
import tempfile
import time

import fstore
import fstore.api as api
import fstore.patterns as patterns
import nstore.terms as terms

from .nstore_bench import generate


def load_once(quads: list, check: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one add_many of ``quads`` (one commit) into a fresh store."""
    api.prepare_new_quad = patterns.prepare_new_quad if check else patterns.prepare_quad
    terms._SEEN_IRIS.clear()  # each load starts with no IRI known valid
    folder = tempfile.mkdtemp()
    repo = fstore.open(folder)
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        with repo.transaction("main", message="load") as tx:
            fstore.add_many(tx, quads)
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        api.prepare_new_quad = patterns.prepare_new_quad
        repo.close()
        shutil.rmtree(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quads", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    quads = generate(args.quads)
    runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(args.rounds):
        for check in (False, True):
            runs[check].append(load_once(quads, check))
    best = {check: min(cpu for _, cpu in runs[check]) for check in runs}
    for check in (False, True):
        wall = min(w for w, _ in runs[check])
        print(f"checks {'on ' if check else 'off'}: best wall {wall:.2f} s, best CPU {best[check]:.2f} s "
              f"({args.quads / best[check]:,.0f} quads/s of CPU)")
    extra = best[True] - best[False]
    print(f"cost of the checks: {extra:.2f} s of CPU = {extra / best[False] * 100:.1f}% "
          f"({extra / args.quads * 1e9:.0f} ns a quad)")


if __name__ == "__main__":
    main()
