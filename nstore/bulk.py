"""Bulk loading for :class:`nstore.NStore`: one sort per index, then appends.

``NStore.bulk_add`` hands its tuples here. The per-tuple work runs inside C loops
(``map``, ``compress``, and :func:`nstore._blocks.sorted_changes`) rather than in Python
bytecode, apart from ``NStore._encode`` called once per value:

1. The input is cut into chunks of at most ``CHUNK`` tuples, which bounds the memory
   of the keys built below (each chunk is sorted and written before the next is read).
2. Each column is encoded with ``NStore._encode``'s bytes (long values become blob
   references); items a dictionary packed already are taken as they are.
3. If the store already holds tuples in plain keys, the tuples present are dropped (one
   point lookup each of their index-0 key); a store in blocks keeps what is present as it
   merges each block instead.
4. Each index's keys (``prefix + items in permutation order``) are built into one buffer
   and sorted in C by ``sorted_changes`` (a radix sort eight bytes at a time, each key
   once), then merged into the store's blocks, or written as plain keys with one
   ``set_many(ascending=True, value=payload)``: LMDB appends pages when the keys sort
   after everything stored, and no ``(key, value)`` pair is built per key.

>>> import tempfile
>>> from nstore import okvs, NStore, IRI, Var
>>> db = okvs.open(tempfile.mkdtemp())
>>> store = NStore(db, ("t",), ("s", "p", "o"))
>>> rows = [(IRI("a"), IRI("p"), 1), (IRI("a"), IRI("p"), 1), (IRI("b"), IRI("p"), "x" * 600)]
>>> with db.transaction(write=True) as tx:
...     store.bulk_add(tx, rows), store.bulk_add(tx, rows)
(2, 0)
>>> with db.transaction() as tx:
...     sorted(b["s"].value for b in store.from_(tx, Var("s"), IRI("p"), Var("o")))
['a', 'b']
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from itertools import compress, islice, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Protocol, Sequence

from ._blocks import sorted_changes
from .blocks import Blocks
from .pack import BLOBREF_CODE, BlobRef, Packed
from .terms import IRI

if TYPE_CHECKING:  # pragma: no cover
    from .okvs import Transaction


class NStore(Protocol):
    """What bulk loading uses of :class:`nstore.NStore`, whose ``bulk_add`` it implements
    (named here, not imported: the store imports this module)."""

    n: int
    indices: tuple[tuple[int, ...], ...]
    inline_limit: int
    blob_refs_made: int
    _index_prefixes: list[bytes]
    space: Any

    def _encode(self, value: Any) -> bytes: ...

    def _check_arity(self, values: Sequence, what: str) -> None: ...

    def _store_blobs(self, tx: Transaction, values: Sequence, encoded: Sequence[bytes], keep: bool) -> None: ...

__all__ = ["bulk_add", "gc_paused", "CHUNK"]

# Tuples handled per round: the keys of one index for this many tuples are held in
# memory at once (about 170 MB per index for quads of ~130-byte keys).
CHUNK = 1 << 20
# A column is "few distinct" when a sample of about this many rows has at most one
# distinct value per _FEW rows.
_SAMPLE = 4096
_FEW = 8


_OWN_REFS = (BlobRef, Packed)  # references the caller accounts for


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for one bulk step (and resumed after it,
    if it ran before).

    A bulk step allocates millions of tuples and lists that form no cycles, and every
    collection walks all of them still alive: at 200,000 quads a commit spent a quarter
    of its time in the collector. The pause is process-wide; cycles other threads make
    meanwhile are collected once it ends.

    >>> with gc_paused():
    ...     gc.isenabled()
    False
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def bulk_add(store: NStore, tx: Transaction, tuples: Iterable[Sequence[Any]], payload: bytes) -> int:
    """Add ``tuples`` to ``store`` in ``tx``; return how many were new (see module doc)."""
    if isinstance(tuples, list) and len(tuples) <= CHUNK:
        return _add_chunk(store, tx, tuples, payload) if tuples else 0
    added = 0
    source = iter(tuples)
    while True:
        chunk = list(islice(source, CHUNK))
        if not chunk:
            return added
        added += _add_chunk(store, tx, chunk, payload)


def _encode_column(store: NStore, values: list) -> list[bytes]:
    """The packed items of one column, as ``store._encode`` makes them. A column of many
    distinct values (a sample tells) packs its IRIs and strings here, without a call of
    ``_encode`` each and without filling its cache with values met once (10-15% of a
    bulk load); a column of few reads them from that cache."""
    if set(map(type, values)) == {Packed}:  # items packed already (a dictionary's): as they are
        return values
    encode = store._encode
    sample = list(map(encode, values[:: max(1, len(values) // _SAMPLE)]))
    if len(set(sample)) * _FEW <= len(sample):
        return list(map(encode, values))
    limit = store.inline_limit

    def own(value: Any) -> bytes:
        kind = type(value)
        if kind is IRI or kind is str:
            try:
                text = value.value if kind is IRI else value
                packed = (b"\x40" if kind is IRI else b"\x02") + text.encode("utf-8").replace(b"\x00", b"\x00\xff") + b"\x00"
            except UnicodeEncodeError:
                return encode(value)  # raises the PackError naming the value
            return packed if len(packed) <= limit else encode(value)  # encode makes the BlobRef
        return encode(value)

    return list(map(own, values))


def _add_chunk(store: NStore, tx: Transaction, rows: list[Sequence[Any]], payload: bytes) -> int:
    n = store.n
    if set(map(len, rows)) != {n}:
        for values in rows:
            if len(values) != n:
                store._check_arity(values, "tuple")  # raises PatternError naming the tuple
    blob_refs = store.blob_refs_made  # _encode counts the long values it turns into BlobRefs
    columns = [_encode_column(store, list(map(itemgetter(j), rows))) for j in range(n)]
    count = len(rows)
    prefixes = store._index_prefixes
    indices = store.indices

    def unsorted_keys(number: int) -> list[bytes]:
        return list(map(b"".join, zip(repeat(prefixes[number], count), *[columns[i] for i in indices[number]])))

    first: list[bytes] | None = None  # index 0's keys in row order, when needed
    blocked = type(store.space) is Blocks
    if not blocked and next(tx.prefix(prefixes[0], limit=1), None) is not None:
        # The store holds tuples: keep only the absent ones (one point lookup each; a
        # store in blocks keeps what is present as it merges instead).
        first = unsorted_keys(0)
        get = tx.get
        absent = [get(key) is None for key in first]
        if not all(absent):
            first = list(compress(first, absent))
            columns = [list(compress(column, absent)) for column in columns]
            rows = list(compress(rows, absent))
            count = len(first)
            if not count:
                return 0
    if store.blob_refs_made != blob_refs:
        # As add does, count one reference per new tuple holding a long value (the first
        # occurrence of each tuple), for every blob reference item of that tuple.
        if first is None:
            first = unsorted_keys(0)
        if blocked:  # which tuples are new decides the blob references: look each up
            get = store.space.get
            absent = [get(tx, key) is None for key in first]
            first = list(compress(first, absent))
            columns = [list(compress(column, absent)) for column in columns]
            rows = list(compress(rows, absent))
            if not first:
                return 0
        seen: dict[bytes, int] = {}
        for row, key in enumerate(first):
            seen.setdefault(key, row)
        for row in sorted(seen.values()):
            values = rows[row]
            encoded = [column[row] for column in columns]
            if any(item[0] == BLOBREF_CODE and type(value) not in _OWN_REFS for item, value in zip(encoded, values)):
                store._store_blobs(tx, values, encoded, keep=True)
    added = 0
    for number in range(len(indices)):
        # the keys built and sorted in C, each once (a tuple given twice is one key)
        made = sorted_changes(prefixes[number], columns, indices[number], payload)
        if blocked:  # merged into the blocks with no object per key
            new = store.space.write(tx, made, keep=True)[0]
        else:
            tx.set_many(made.keys(), ascending=True, value=payload)
            new = len(made)
        if number == 0:
            added = new
        del made
    return added
