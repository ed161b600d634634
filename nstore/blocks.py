"""A keyspace kept as prefix-compressed blocks: the pairs of a key range ``[start, end)`` of an
okvs stored a few hundred to a block, each block one LMDB value under its first key (the
*fence*), its entries sharing leading bytes with the key before them (the codec is the
compiled :mod:`nstore._blocks`; the layout is in ``docs/format.md``, "Blocks").

Why: the keys of an index share most of their bytes with their neighbours (a quad's graph,
subject and predicate ids repeat from key to key), and LMDB stores every key whole with 10
bytes of its own overhead. A block stores each key's new bytes only: the store of 1,000,000
quads takes a third of the bytes, and a bulk load writes a few thousand values, not
millions of keys.

:class:`Blocks` offers what :class:`nstore.okvs.Transaction` offers for its range (``get``,
``get_many``, ``range``, ``set``, ``set_many``, ``delete``, ``remove_range``), each taking the
transaction first, so a store switches between plain keys and blocks by the object it
calls; and :meth:`Blocks.apply`, a sorted batch of sets and deletes written block by block.
A value longer than :data:`EXTERNAL_VALUE` bytes is kept outside its block, under
``external + key``.

>>> import tempfile
>>> from nstore import okvs
>>> db = okvs.open(tempfile.mkdtemp())
>>> space = Blocks(b"\\x91", b"\\x91\\xfd", external=b"\\x91\\xfd")
>>> with db.transaction(write=True) as tx:
...     space.apply(tx, [b"\\x91a", b"\\x91b"], [b"1", b"2"])
...     space.get(tx, b"\\x91b"), list(space.range(tx, b"\\x91a", b"\\x91z"))
(2, 0)
(b'2', [(b'\\x91a', b'1'), (b'\\x91b', b'2')])
>>> db.close()
"""

from __future__ import annotations

import sys
import tempfile
from bisect import bisect_left
from itertools import islice
from typing import IO, Iterable, Iterator, Protocol, Sequence

from ._blocks import (EXTERNAL, BlockError, BlockLookup, Changes, RunMerge, changes, count, count_keys, decode, find, lookup, lookup_sorted,
                      pairs_changes, problem, rewrite, rewrite_changes, slice_of)
from .errors import CorruptStoreError
from .okvs import MAX_KEY_SIZE, Transaction, prefix_end

__all__ = ["Blocks", "Plain", "Keyspace", "Runs", "BLOCK_LIMIT", "BLOCK_TARGET", "EXTERNAL_VALUE", "BlockError", "into_blocks"]

BLOCK_LIMIT = 2000
"""Most bytes of a block with its fence: two fit an LMDB leaf page of 4,096 bytes (a node
over 2,040 bytes would go to an overflow page of its own)."""
BLOCK_TARGET = 500
"""Bytes a writer fills a block to, its fence included (a block of one entry may be
larger, up to :data:`BLOCK_LIMIT`). A lookup decodes the block at or below its key up to
it, about half a block: at 500 bytes (some 60 keys of an index) a lookup of a quad
pattern costs about half what it did at 2,000, for 3% more bytes (more fences and LMDB
nodes). How a writer cuts blocks is not part of the format (docs/format.md)."""
EXTERNAL_VALUE = 512
"""Longest value kept inside a block; longer ones go under ``external + key``."""
MERGE_CHUNK = 1 << 18
"""Changes a merge of runs writes into the blocks at a time (:meth:`Runs.merge_into`)."""


class Keyspace(Protocol):
    """How a store keeps the keys of its range: :class:`Plain` (one LMDB pair each) or
    :class:`Blocks`. Each method takes the transaction first."""

    def get(self, tx: Transaction, key: bytes) -> bytes | None: ...

    def get_many(self, tx: Transaction, keys: Sequence[bytes]) -> list[bytes | None]: ...

    def range(self, tx: Transaction, start: bytes | None = None, end: bytes | None = None, *,
              offset: int = 0, limit: int | None = None) -> Iterator[tuple[bytes, bytes]]: ...

    def under_many(self, tx: Transaction, prefixes: Sequence[bytes]) -> dict[bytes, list[tuple[bytes, bytes]]]: ...

    def block_lookup(self, parts: list, count: int) -> BlockLookup | None: ...

    def count(self, tx: Transaction, low: bytes, high: bytes, cap: int | None = None) -> int: ...

    def batches(self, tx: Transaction, start: bytes, end: bytes | None) -> Iterator[tuple[list[bytes], list[bytes]]]: ...

    def set(self, tx: Transaction, key: bytes, value: bytes) -> None: ...

    def delete(self, tx: Transaction, key: bytes) -> None: ...

    def set_many(self, tx: Transaction, items: Iterable[tuple[bytes, bytes]] | Iterable[bytes], *,
                 ascending: bool = False, value: bytes | None = None) -> int | None: ...

    def apply(self, tx: Transaction, keys: Sequence[bytes], values: Sequence[bytes | None], *,
              keep: bool = False) -> tuple[int, int]: ...


class Plain:
    """Keys stored as they are, one LMDB pair each (what :class:`Blocks` replaces)."""

    __slots__ = ()

    def get(self, tx: Transaction, key: bytes) -> bytes | None:
        return tx.get(key)

    def get_many(self, tx: Transaction, keys: Sequence[bytes]) -> list[bytes | None]:
        return tx.get_many(keys)

    def range(self, tx: Transaction, start: bytes | None = None, end: bytes | None = None, *,
              offset: int = 0, limit: int | None = None) -> Iterator[tuple[bytes, bytes]]:
        return tx.range(start, end, offset=offset, limit=limit)

    def under_many(self, tx: Transaction, prefixes: Sequence[bytes]) -> dict[bytes, list[tuple[bytes, bytes]]]:
        """The pairs whose keys start with each of ``prefixes``, by prefix."""
        return {prefix: list(tx.range(prefix, prefix_end(prefix))) for prefix in set(prefixes)}

    def block_lookup(self, parts: list, count: int) -> BlockLookup | None:
        """None: plain keys have no blocks (see :meth:`Blocks.block_lookup`)."""
        return None

    def count(self, tx: Transaction, low: bytes, high: bytes, cap: int | None = None) -> int:
        """How many keys ``[low, high)`` holds (counting stops at ``cap``)."""
        return sum(1 for _ in islice(tx.range(low, high), cap))

    def batches(self, tx: Transaction, start: bytes, end: bytes | None) -> Iterator[tuple[list[bytes], list[bytes]]]:
        """The pairs of ``[start, end)`` as ``(keys, values)`` lists of up to 4,096 pairs."""
        pairs = tx.range(start, end)
        while True:
            batch = list(islice(pairs, 4096))
            if not batch:
                return
            keys, values = zip(*batch)
            yield list(keys), list(values)

    def set(self, tx: Transaction, key: bytes, value: bytes) -> None:
        tx.set(key, value)

    def delete(self, tx: Transaction, key: bytes) -> None:
        tx.delete(key)

    def set_many(self, tx: Transaction, items: Iterable[tuple[bytes, bytes]] | Iterable[bytes], *,
                 ascending: bool = False, value: bytes | None = None) -> None:
        tx.set_many(items, ascending=ascending, value=value)

    def apply(self, tx: Transaction, keys: Sequence[bytes], values: Sequence[bytes | None], *,
              keep: bool = False) -> tuple[int, int]:
        added = removed = 0
        get = tx.get
        for key, value in zip(keys, values):
            present = get(key) is not None
            if value is None:
                if present:
                    tx.delete(key)
                    removed += 1
            elif not present:
                tx.set(key, value)
                added += 1
            elif not keep:
                tx.set(key, value)
        return added, removed

    def __repr__(self) -> str:
        return "Plain()"


class Blocks:
    """The pairs of ``[start, end)`` in blocks of at most ``limit`` bytes, written about
    ``target`` bytes each; values over :data:`EXTERNAL_VALUE` bytes under ``external +
    key`` (outside the range)."""

    __slots__ = ("start", "end", "external", "limit", "target")

    def __init__(self, start: bytes, end: bytes, *, external: bytes, limit: int = BLOCK_LIMIT,
                 target: int = BLOCK_TARGET) -> None:
        if not start < end or start <= external < end:
            raise ValueError(f"blocks need start < end and the external prefix outside: {start!r}, {end!r}, {external!r}")
        self.start = start
        self.end = end
        self.external = external
        self.limit = limit
        self.target = min(target, limit)

    @classmethod
    def under(cls, prefix: bytes) -> Blocks:
        """The blocks of a store's one-byte-led keyspace: its keys below ``prefix + fd``,
        their long values at ``prefix + fd`` (``prefix + fe`` and ``ff`` stay the owner's).

        >>> Blocks.under(b"\\x90")
        Blocks(90..90fd)
        """
        return cls(prefix, prefix + b"\xfd", external=prefix + b"\xfd")

    def __repr__(self) -> str:
        return f"Blocks({self.start.hex()}..{self.end.hex()})"

    # -- reads ----------------------------------------------------------------------

    def get(self, tx: Transaction, key: bytes) -> bytes | None:
        """The value at ``key``, or None."""
        found = tx.floor(key, self.start)
        if found is None:
            return None
        value = self._find(found, key)
        return tx.get(self.external + key) if value is EXTERNAL else value

    def get_many(self, tx: Transaction, keys: Sequence[bytes]) -> list[bytes | None]:
        """The values at many keys (None where absent), each block read once: the keys are
        sorted (unless they come so), and a block's keys are looked up in one walk of it,
        the blocks in order (:func:`nstore._blocks.lookup_sorted`)."""
        keys = list(keys)
        order = keys
        try:
            found = lookup_sorted(tx.seek_cursor(), self.start, self.end, keys)
            if found is None:
                order = sorted(set(keys))
                found = lookup_sorted(tx.seek_cursor(), self.start, self.end, order)
        except BlockError:  # the walk below names the damaged block
            return self._get_many_walk(tx, keys)
        if order is not keys:
            by_key = dict(zip(order, found))
            found = [by_key[key] for key in keys]
        if EXTERNAL in found:
            found = [self._resolved(tx, key, value) for key, value in zip(keys, found)]
        return found

    def _get_many_walk(self, tx: Transaction, keys: Sequence[bytes]) -> list[bytes | None]:
        """:meth:`get_many` a seek per block, naming a damaged block."""
        order = sorted(set(keys))
        found: list[bytes | None] = [None] * len(order)
        i = 0
        while i < len(order):
            block = tx.floor_and_next(order[i], self.start, self.end)
            if block is None:
                i += 1
                continue
            try:
                i = lookup(block[0], block[1], order, i, block[2], found)
            except BlockError as exc:
                raise self._damaged(block[0], exc) from None
        by_key = dict(zip(order, found))
        return [self._resolved(tx, key, by_key[key]) for key in keys]

    def under_many(self, tx: Transaction, prefixes: Sequence[bytes]) -> dict[bytes, list[tuple[bytes, bytes]]]:
        """The pairs whose keys start with each of many ``prefixes``, by prefix, each block
        read and decoded once: the prefixes are sorted, and those a block spans are found in
        its decoded keys by bisection (a prefix whose keys run on into the next block is
        read by :meth:`range`)."""
        order = sorted(set(prefixes))
        found: dict[bytes, list[tuple[bytes, bytes]]] = {}
        i = 0
        while i < len(order):
            block = tx.floor_and_next(order[i], self.start, self.end)
            if block is None:  # before the first block, whose fence may still start with it
                found[order[i]] = list(self.range(tx, order[i], prefix_end(order[i])))
                i += 1
                continue
            fence, data, bound = block
            try:
                keys, values = decode(fence, data)
            except BlockError as exc:
                raise self._damaged(fence, exc) from None
            while i < len(order) and (bound is None or order[i] < bound):
                prefix = order[i]
                end = prefix_end(prefix)
                if bound is not None and (end is None or bound < end):  # runs on past this block
                    found[prefix] = list(self.range(tx, prefix, end))
                else:
                    low, high = bisect_left(keys, prefix), len(keys) if end is None else bisect_left(keys, end)
                    found[prefix] = [(key, self._resolved(tx, key, value))
                                     for key, value in zip(keys[low:high], values[low:high])]
                i += 1
        return found

    def range(self, tx: Transaction, start: bytes | None = None, end: bytes | None = None, *,
              offset: int = 0, limit: int | None = None) -> Iterator[tuple[bytes, bytes]]:
        """``(key, value)`` for ``start <= key < end`` in key order (bounds clipped to the
        range); writes made while iterating are seen past the last key yielded."""
        low = self.start if start is None or start < self.start else start
        high = self.end if end is None or end > self.end else end
        if offset < 0 or (limit is not None and limit < 0):
            raise ValueError(f"offset and limit must be >= 0, not {offset}, {limit}")
        pairs = self._range(tx, low, high) if low < high else iter(())
        if offset or limit is not None:
            pairs = islice(pairs, offset, None if limit is None else offset + limit)
        return pairs

    def block_lookup(self, parts: list, count: int) -> BlockLookup:
        """A prepared lookup of the keys under a prefix (``parts`` joined: bytes, or the
        index of a param's packed item), answered in C from one seek and one partial block
        decode when one block holds them all (:class:`nstore._blocks.BlockLookup`: its
        ``rows(cursor, params)`` gives each key's ``count`` items after the prefix, or
        None: read :meth:`range`)."""
        return BlockLookup(parts, self.start, self.end, count)

    def count(self, tx: Transaction, low: bytes, high: bytes, cap: int | None = None) -> int:
        """How many keys ``[low, high)`` holds (counting stops at ``cap``), counted in C
        block by block, none made into an object (a planner's estimate)."""
        low, high = max(low, self.start), min(high, self.end)
        if low >= high:
            return 0
        try:
            return count_keys(tx.seek_cursor(), self.start, self.end, low, high, sys.maxsize if cap is None else cap)
        except BlockError:  # range() names the damaged block
            return sum(1 for _ in islice(self.range(tx, low, high), cap))

    def blocks(self, tx: Transaction) -> Iterator[tuple[bytes, bytes]]:
        """Every ``(fence, block)`` of the range, in order (for compiled readers and verify)."""
        found = tx.floor(self.start, self.start) or tx.after(self.start, self.end)
        while found is not None:
            yield found
            found = tx.after(found[0], self.end)

    def batches(self, tx: Transaction, start: bytes, end: bytes | None) -> Iterator[tuple[list[bytes], list[bytes]]]:
        """The pairs of ``[start, end)`` as ``(keys, values)`` lists, a block at a time (for
        compiled readers: no pair object is made; a read transaction only)."""
        low = max(start, self.start)
        high = self.end if end is None else min(end, self.end)
        found = tx.floor(low, self.start) or tx.after(low, high)
        while found is not None:
            keys, values, ended = self._slice(tx, found, low, high, False)
            if keys:
                yield keys, values
            if ended:
                return
            found = tx.after(found[0], high)

    def entry_count(self, tx: Transaction) -> int:
        """How many pairs the range holds (O(blocks), nothing decoded into objects)."""
        return sum(count(fence, block) for fence, block in self.blocks(tx))

    def _range(self, tx: Transaction, low: bytes, high: bytes) -> Iterator[tuple[bytes, bytes]]:
        found = tx.floor(low, self.start) or tx.after(low, high)
        after = False
        while found is not None:
            fence = found[0]
            keys, values, ended = self._slice(tx, found, low, high, after)
            yield from zip(keys, values)
            if ended:
                return
            if keys:
                low, after = keys[-1], True
                if tx.write:  # the caller may have written while we yielded: find our place again
                    again = tx.floor(low, self.start)
                    if again is not None and again != found:
                        found = again
                        continue
            found = tx.after(fence, high)

    def _slice(self, tx: Transaction, found: tuple[bytes, bytes], low: bytes, high: bytes,
               after: bool) -> tuple[list[bytes], list[bytes], bool]:
        """:func:`nstore._blocks.slice_of` of one block, its external values read."""
        try:
            keys, values, ended = slice_of(found[0], found[1], low, high, after)
        except BlockError as exc:
            raise self._damaged(found[0], exc) from None
        if EXTERNAL in values:
            values = [tx.get(self.external + key) if value is EXTERNAL else value for key, value in zip(keys, values)]
        return keys, values, ended

    def _find(self, found: tuple[bytes, bytes], key: bytes) -> bytes | None:
        try:
            return find(found[0], found[1], key)
        except BlockError as exc:
            raise self._damaged(found[0], exc) from None

    def _resolved(self, tx: Transaction, key: bytes, value: bytes | None) -> bytes | None:
        return tx.get(self.external + key) if value is EXTERNAL else value

    @staticmethod
    def _damaged(fence: bytes, exc: BlockError) -> CorruptStoreError:
        return CorruptStoreError(f"the block at key {fence[:40].hex()} is damaged: {exc}")

    # -- writes ---------------------------------------------------------------------

    def apply(self, tx: Transaction, keys: Sequence[bytes], values: Sequence[bytes | None], *,
              keep: bool = False) -> tuple[int, int]:
        """Set ``keys[i]`` to ``values[i]`` (None: delete it), keys strictly ascending, each
        block touched rewritten once; with ``keep``, a key present keeps its value. Returns
        ``(keys added, keys deleted)``."""
        if not keys:
            return 0, 0
        values, outside = self._outside(tx, keys, values, keep)
        return self.write(tx, changes(list(keys), values), keep=keep, outside=outside)

    def _outside(self, tx: Transaction, keys: Sequence[bytes], values: Sequence[bytes | None],
                 keep: bool) -> tuple[list, set[bytes]]:
        """The values of a write with each one too long for a block stored under
        ``external + key`` and replaced by :data:`EXTERNAL` (unless ``keep`` and the key is
        present: it keeps its value), and the keys so stored."""
        values = list(values)
        outside: set[bytes] = set()
        for i, value in enumerate(values):
            if value is not None and len(value) > EXTERNAL_VALUE:
                if keep and self.get(tx, keys[i]) is not None:
                    continue  # present: keeps its value (and its external copy)
                tx.set(self.external + keys[i], value)
                values[i] = EXTERNAL
                outside.add(keys[i])
        return values, outside

    def write(self, tx: Transaction, made: Changes, *, keep: bool = False, outside: set[bytes] = frozenset()) -> tuple[int, int]:
        """Merge ``made`` (:func:`nstore._blocks.changes` or ``sorted_changes``) into the
        blocks it falls in, each rewritten once (with ``keep``, a key present keeps its
        value); ``outside``: the keys whose new value the caller stored externally. Returns
        ``(keys added, keys deleted)``."""
        n = len(made)
        if not n:
            return 0, 0
        if made.key(0) < self.start or made.key(n - 1) >= self.end:
            raise ValueError(f"keys {made.key(0)[:40].hex()}..{made.key(n - 1)[:40].hex()} leave {self!r}")
        added = removed = 0
        i = 0
        while i < n:
            key = made.key(i)
            found = tx.floor(key, self.start) or tx.after(key, self.end)
            olds: list[tuple[bytes, bytes]] = []
            following = None
            j = n
            if found is not None:
                olds.append(found)
                following = tx.after(found[0], self.end)
                if following is not None:
                    j = made.bisect(following[0], i)
            new, more, fewer, dropped = self._rewrite(olds, made, i, j, keep)
            if following is not None and len(new) == 1 and len(new[0][0]) + len(new[0][1]) < self.target // 4:
                # a crumb: take the next block in, so deletes do not leave a trail of tiny blocks
                olds.append(following)
                beyond = tx.after(following[0], self.end)
                j = n if beyond is None else made.bisect(beyond[0], i)
                new, more, fewer, dropped = self._rewrite(olds, made, i, j, keep)
            self._replace(tx, olds, new)
            for gone in dropped:
                if gone not in outside:
                    tx.delete(self.external + gone)
            added += more
            removed += fewer
            i = j
        return added, removed

    def _rewrite(self, olds: list[tuple[bytes, bytes]], made: Changes, lo: int, hi: int, keep: bool) -> tuple:
        try:
            return rewrite_changes(olds, made, lo, hi, self.target, keep)
        except BlockError as exc:
            raise self._damaged(olds[0][0], exc) from None

    @staticmethod
    def _replace(tx: Transaction, olds: list[tuple[bytes, bytes]], new: list[tuple[bytes, bytes]]) -> None:
        fences = {fence for fence, _ in new}
        for fence, _ in olds:
            if fence not in fences:
                tx.delete(fence)
        if len(new) > 8:
            # the first block may replace one in place; the rest, when they sort after every
            # key stored (a load), LMDB appends to full pages rather than splitting them
            tx.set(*new[0])
            tx.set_many(new[1:], ascending=True)
        else:
            for fence, block in new:
                tx.set(fence, block)

    def set(self, tx: Transaction, key: bytes, value: bytes) -> None:
        """Map ``key`` to ``value``."""
        _check_key(key)
        self.apply(tx, [key], [value])

    def delete(self, tx: Transaction, key: bytes) -> None:
        """Remove ``key`` if present."""
        self.apply(tx, [key], [None])

    def set_many(self, tx: Transaction, items: Iterable[tuple[bytes, bytes]] | Iterable[bytes], *,
                 ascending: bool = False, value: bytes | None = None) -> int:
        """Set many pairs (or, with ``value``, many keys to one value), as
        :meth:`nstore.okvs.Transaction.set_many` does; returns how many keys were new."""
        if value is not None:
            keys = items if isinstance(items, list) else list(items)
            values: list[bytes] = [value] * len(keys)
        else:
            pairs = items if isinstance(items, list) else list(items)
            keys = [key for key, _ in pairs]
            values = [v for _, v in pairs]
        if ascending:
            for key in keys[:1] + keys[-1:]:
                _check_key(key)
            return self.apply(tx, keys, values)[0]
        last = dict(zip(keys, values))  # the last value of a repeated key wins
        keys = list(last)
        values, outside = self._outside(tx, keys, list(last.values()), False)
        return self.write(tx, pairs_changes(keys, values), outside=outside)[0]  # sorted in C

    def remove_range(self, tx: Transaction, start: bytes | None, end: bytes | None) -> None:
        """Remove every key with ``start <= key < end`` in the range."""
        keys = [key for key, _ in self.range(tx, start, end)]
        self.apply(tx, keys, [None] * len(keys))

    # -- integrity ------------------------------------------------------------------

    def problems(self, tx: Transaction) -> Iterator[str]:
        """Each block that does not decode, is too large, or overlaps the next one, and each
        external value without its entry or entry without its value (O(blocks))."""
        last: bytes | None = None
        externals: set[bytes] = set()
        for fence, block in self.blocks(tx):
            where = f"{self!r}: the block at {fence[:40].hex()}"
            trouble = problem(fence, block, self.limit)
            if trouble is not None:
                yield f"{where} {trouble}"
                continue
            keys, values = decode(fence, block)
            if last is not None and keys[0] <= last:
                yield f"{where} starts at or before the last key of the block before it"
            last = keys[-1]
            externals.update(key for key, value in zip(keys, values) if value is EXTERNAL)
        for key, _ in tx.range(self.external, prefix_end(self.external)):
            if key[len(self.external):] not in externals:
                yield f"{self!r}: an external value at {key[:40].hex()} belongs to no entry"
            externals.discard(key[len(self.external):])
        for key in sorted(externals):
            yield f"{self!r}: the entry {key[:40].hex()} has no external value"


def _check_key(key: bytes) -> None:
    if type(key) is not bytes or not 0 < len(key) <= MAX_KEY_SIZE:
        raise ValueError(f"a key is 1 to {MAX_KEY_SIZE} bytes, not {key!r:.60}")


_RUN = 1 << 16  # pairs encoded at a time by into_blocks: bounds its memory


def into_blocks(pairs: Iterable[tuple[bytes, bytes]], spaces: Sequence[Blocks]) -> Iterator[tuple[bytes, bytes]]:
    """The pairs of a whole store in key order (plain keys, e.g. of an older format), with
    the pairs inside each of ``spaces`` turned into that space's blocks (and its long
    values into external pairs): what a store rewritten into blocks holds, in key order,
    streamed a run at a time. Each space's external prefix must be its end.

    >>> space = Blocks(b"b", b"c", external=b"c")
    >>> out = list(into_blocks([(b"a", b""), (b"b1", b"x"), (b"b2", b""), (b"d", b"")], [space]))
    >>> [key for key, _ in out], decode(*out[1])
    ([b'a', b'b1', b'd'], ([b'b1', b'b2'], [b'x', b'']))
    """
    for space in spaces:
        if space.external != space.end:
            raise ValueError(f"{space!r}: its external values must follow it")
    keys: list[bytes] = []
    values: list[bytes | object] = []
    outside: list[tuple[bytes, bytes]] = []  # long values, emitted after the space's blocks
    current: Blocks | None = None

    def flush(final: bool) -> Iterator[tuple[bytes, bytes]]:
        nonlocal keys, values, outside
        blocks = rewrite([], keys, values, current.target)[0]
        if final:
            keys, values = [], []
        else:  # the last block, not full yet, continues with the next run
            keys, values = decode(*blocks.pop())
        yield from blocks
        if final:
            yield from outside
            outside = []

    for key, value in pairs:
        if current is None or not current.start <= key < current.end:
            if current is not None:
                yield from flush(True)
            current = next((space for space in spaces if space.start <= key < space.end), None)
        if current is None:
            yield key, value
            continue
        keys.append(key)
        if len(value) > EXTERNAL_VALUE:
            outside.append((current.external + key, value))
            values.append(EXTERNAL)
        else:
            values.append(value)
        if len(keys) >= _RUN:
            yield from flush(False)
    if current is not None:
        yield from flush(True)


class Runs:
    """Sorted changes of one keyspace kept in temporary files (one file a run, the bytes of
    :meth:`nstore._blocks.Changes.dump`), merged into its blocks once: what a commit too
    large to hold writes a chunk at a time, so that no chunk rewrites every block of an
    index (the chunks' keys fall all over it) and each block is written once, in key order.

    >>> import tempfile
    >>> from nstore import okvs
    >>> from nstore._blocks import changes
    >>> db = okvs.open(tempfile.mkdtemp())
    >>> space = Blocks.under(b"\\x91")
    >>> with db.transaction(write=True) as tx, Runs() as runs:
    ...     runs.add(changes([b"\\x91b"], [b"2"]))
    ...     runs.add(changes([b"\\x91a"], [b"1"]))
    ...     runs.merge_into(tx, space)
    ...     list(space.range(tx))
    [(b'\\x91a', b'1'), (b'\\x91b', b'2')]
    >>> db.close()
    """

    def __init__(self) -> None:
        self.files: list[IO[bytes]] = []

    def add(self, made: Changes) -> None:
        """Keep ``made`` as a run (a later run's change of a key wins over an earlier's)."""
        if len(made):
            run = tempfile.TemporaryFile(prefix="datae-run-")
            self.files.append(run)
            run.write(made.dump())
            run.seek(0)

    def merge_into(self, tx: Transaction, space: Blocks, *, keep: bool = True) -> None:
        """Write every run's changes into ``space``, merged in key order, a chunk of
        :data:`MERGE_CHUNK` at a time (each block rewritten once over the whole merge)."""
        merge = RunMerge(self.files)
        while len(made := merge.take(MERGE_CHUNK)):
            space.write(tx, made, keep=keep)

    def close(self) -> None:
        for run in self.files:
            run.close()
        self.files = []

    def __enter__(self) -> Runs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
