"""How every benchmark times a call: the best wall time of ``repeat`` runs, the garbage
collector run before each and paused during it (its passes over the benchmark's own
live objects would otherwise dominate the spread).

>>> seconds, result = timed(lambda: sum(range(1000)), repeat=3)
>>> result, seconds >= 0
(499500, True)
"""

from __future__ import annotations

import gc
import time
from typing import Any, Callable, Iterable

from nstore.bulk import gc_paused

__all__ = ["timed", "print_growth"]


def timed(function: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    """``(best seconds, last result)`` of ``repeat`` calls of ``function``."""
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        with gc_paused():
            start = time.perf_counter()
            result = function()
            best = min(best, time.perf_counter() - start)
    return best, result


def print_growth(results: dict[int, dict[str, float]], names: Iterable[str], word: str = "growth") -> None:
    """One line per measure: how its time grew from the first size of ``results`` (rows or
    quads -> measure -> seconds) to the last, ``"{word} {name}: x{time factor} for x{size
    factor} rows"``; nothing for a single size."""
    sizes = list(results)
    if len(sizes) < 2:
        return
    a, b = sizes[0], sizes[-1]
    for name in names:
        print(f"{word} {name}: x{results[b][name] / results[a][name]:.1f} for x{b / a:.0f} rows")
