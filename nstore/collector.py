"""Pausing Python's cyclic garbage collector around work that allocates many short-lived,
acyclic objects (decoded keys, rows, solutions).

Reference counting frees such objects at once; the cyclic collector only walks them. But
its collections are triggered by allocation counts, and every full collection walks every
live tracked object, caches included: a loop that builds a million rows pays for many
walks over objects it never frees. Pausing it for the length of the loop (never across a
``yield`` to code outside the library) is what ``list(...)``-heavy C extensions get for
free.

>>> import gc
>>> with paused_gc():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["paused_gc", "relaxed", "RELAXED_THRESHOLDS"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector inside the block, then restore its previous state
    (so blocks nest). Cycles made inside are collected after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


RELAXED_THRESHOLDS = (50_000, 50, 100)
"""The collector's thresholds :func:`relaxed` sets (CPython's defaults: 700, 10, 10)."""


def relaxed() -> None:
    """Raise the cyclic collector's thresholds for the rest of the process: for a process
    of datae's own that serves many queries (``datae serve``), not for a library call,
    which leaves its caller's settings alone. With CPython's defaults a
    collection runs every 700 container objects a query keeps alive a moment (rows,
    solutions, the terms a decode caches), and the older generations' walks cross the
    term caches: a third of ``datae serve``'s time on the BSBM mix (its query path in
    one process, 1M triples: 90 ms a mix, 55 ms with these thresholds).
    Reference counting still frees every object without a cycle at once; cycles wait
    longer for their collection.

    >>> import gc
    >>> before = gc.get_threshold()
    >>> relaxed(); gc.get_threshold() == RELAXED_THRESHOLDS
    True
    >>> gc.set_threshold(*before)
    """
    gc.set_threshold(*RELAXED_THRESHOLDS)
