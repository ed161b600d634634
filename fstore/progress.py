"""How far a long import or export has come, told to whoever asked (``progress=``): the
``datae`` command draws it on a terminal; a program can log it.

A callback takes the phase (``"read"``, ``"stage"``, ``"write"``), the items done so far
in it and their total when known (None while reading a file).

>>> heard = []
>>> list(counted(range(3), "read", lambda *told: heard.append(told), None, every=2))
[0, 1, 2]
>>> heard
[('read', 2, None), ('read', 3, None)]
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, TypeVar, Union

__all__ = ["Progress", "counted", "EVERY"]

Progress = Callable[[str, int, Union[int, None]], None]
EVERY = 8192  # items between two calls: often enough for a line redrawn ten times a second

T = TypeVar("T")


def counted(items: Iterable[T], phase: str, progress: Progress, total: int | None, *, every: int = EVERY) -> Iterator[T]:
    """``items``, telling ``progress`` how many went by every ``every`` and at the end."""
    done = 0
    for done, item in enumerate(items, 1):
        yield item
        if not done % every:
            progress(phase, done, total)
    progress(phase, done, total)
