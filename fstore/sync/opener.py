"""What sync asks of an open store, and of whatever opens one: two protocols, so that
:mod:`fstore.sync` never imports the facade (:class:`fstore.Repository` satisfies both:
an instance is an :class:`OpenStore`, the class itself an :class:`Opener`).

Sync works on a store's :class:`~fstore.core.storage.Storage` wherever it can; the
protocol adds only the operations sync builds on but does not own: closing the store,
``verify`` (a cloned file is checked before it is kept) and ``merge`` (pull).

>>> import tempfile, fstore
>>> def reopen(opener: Opener, path: str) -> OpenStore:
...     return opener(path)
>>> store = reopen(fstore.Repository, tempfile.mkdtemp())
>>> isinstance(store, OpenStore), store.verify()
(True, [])
>>> store.close()
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from ..core.storage import Storage
    from ..ops.three_way import Policy

__all__ = ["OpenStore", "Opener", "OpenedStore"]


@runtime_checkable
class OpenStore(Protocol):
    """An open store as sync uses it."""

    @property
    def storage(self) -> Storage: ...

    def close(self) -> None: ...

    def verify(self, *, quick: bool = False, tags: bool = True) -> list[str]:
        """Every problem found in the store (an empty list: none)."""
        ...

    def merge(self, into: str, other: str, *, message: str | None = None, author: str | None = None,
              policy: Policy = "abort", time: _dt.datetime | None = None) -> str | None:
        """Merge ``other`` (any ref) into branch ``into``; the resulting head id."""
        ...


OpenedStore = TypeVar("OpenedStore", bound=OpenStore, covariant=True)


class Opener(Protocol[OpenedStore]):
    """Opens the store at ``path`` (a directory holding one, or ``DIR/.datae``)."""

    def __call__(self, path: str) -> OpenedStore: ...
