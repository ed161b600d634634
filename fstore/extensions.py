"""What packages above the versioned core (``fstore.tables``) provide to its classes, so that
the core never imports them: ``View.table``, ``Transaction.table`` and the
``Repository.table_*`` methods call the function provided under their name. ``fstore``'s
``__init__`` imports ``fstore.tables``, which provides them, so they are there whenever
``fstore`` is.

>>> provided("table_at").__module__
'fstore.tables.dataset'
"""

from __future__ import annotations

from typing import Any, Callable

from .errors import FstoreError

__all__ = ["provide", "provided"]

_PROVIDED: dict[str, Callable[..., Any]] = {}


def provide(name: str, function: Callable[..., Any]) -> None:
    """Make ``function`` what the core calls for ``name``."""
    _PROVIDED[name] = function


def provided(name: str) -> Callable[..., Any]:
    """The function provided for ``name``."""
    try:
        return _PROVIDED[name]
    except KeyError:
        raise FstoreError(f"{name} is provided by fstore.tables, which is not loaded (import fstore)") from None
