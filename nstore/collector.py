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

__all__ = ["paused_gc"]


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
