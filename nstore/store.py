"""The generic n-tuple store (SRFI-168): any pattern over n items is one prefix scan.

Each tuple is written once per index permutation (``minimal_permutations(n)``); a pattern
picks the index whose prefix holds its bound items, so a lookup reads only matches.

>>> import tempfile
>>> from nstore import okvs, NStore, Var, select
>>> db = okvs.open(tempfile.mkdtemp())
>>> triples = NStore(db, ("demo",), ("subject", "predicate", "object"))
>>> with db.transaction(write=True) as tx:
...     triples.add(tx, "alice", "knows", "bob")
...     triples.add(tx, "bob", "name", "Bob")
True
True
>>> with db.transaction() as tx:
...     list(select(triples.from_(tx, "alice", "knows", Var("who")),
...                 triples.where(tx, Var("who"), "name", Var("name"))))
[{'who': 'bob', 'name': 'Bob'}]
"""

from __future__ import annotations

from collections import Counter
from itertools import chain, islice
from operator import itemgetter
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence

from .blobs import BlobStore, digest_of
from ._blocks import BlockError, sorted_changes
from ._pack import canonical_sum, pack_column
from .blocks import Blocks, Keyspace, Plain, Runs
from .bulk import bulk_add
from .errors import PackError, PatternError
from .indices import choose_index, minimal_permutations
from .okvs import MAX_KEY_SIZE, Okvs, Transaction, prefix_end
from .pack import BLOBREF_CODE, BlobRef, Packed, decode_item, pack, pack_value, split
from .terms import IRI, Literal

__all__ = ["NStore", "Var", "Param", "PreparedRead", "select", "Bindings"]

Bindings = dict[str, Any]
Step = Callable[[Iterator[Bindings]], Iterator[Bindings]]

_DECODE_CACHE: dict[bytes, Any] = {}
_MISSING = object()
_BLOBREF_SIZE = 33  # type code + sha256 digest
_DECODE_CACHE_LIMIT = 1 << 18
# Literal packing after the lexical form, by (datatype IRI text, language tag); see _encode.
_LITERAL_TAILS: dict[tuple[str, str], bytes] = {}


class Var:
    """A pattern variable: ``Var("x")`` binds the item at its position to the name ``x``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise PatternError(f"a variable name is a non-empty str, not {name!r}")
        self.name = name

    def __eq__(self, other: object) -> bool:
        return type(other) is Var and other.name == self.name

    def __hash__(self) -> int:
        return hash((Var, self.name))

    def __repr__(self) -> str:
        return f"Var({self.name!r})"


class Param:
    """A pattern position whose value each use of a prepared read supplies (see
    :meth:`NStore.prepare`): bound, like a value, but not known when the read is planned."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Param()"


class PreparedRead:
    """One pattern shape planned once, read many times with new values for its
    :class:`Param` positions: what a join does for every solution it extends.

    ``free`` are the pattern's free positions in index order; :meth:`keys` takes the param
    values (in pattern order) and gives ``(skip, iterator of (key, payload))`` as
    :meth:`NStore.keys` does.
    """

    __slots__ = ("free", "_store", "_parts", "_repeats", "_checks", "_lookup")

    def __init__(self, store: NStore, pattern: Sequence[Any]) -> None:
        params = [i for i, item in enumerate(pattern) if type(item) is Param]
        shape = tuple([item.name if type(item) is Var else None for item in pattern])
        number, prefix_positions, free, _, repeats, check_slots = store._plan_shape(shape)
        encode = store._encode
        parts: list[bytes | int] = [store.index_prefix(number)]
        for position in prefix_positions:  # constants joined ahead of time, params by index
            if type(pattern[position]) is Param:
                parts.append(params.index(position))
            elif type(parts[-1]) is bytes:
                parts[-1] += encode(pattern[position])
            else:
                parts.append(encode(pattern[position]))
        self.free = free
        self._store = store
        self._parts = parts  # the key prefix: bytes, and the index of a param to encode
        self._repeats = repeats
        # Bound positions the index prefix cannot hold: constants encoded now, params later.
        self._checks = [(slot, params.index(position) if type(pattern[position]) is Param else encode(pattern[position]))
                        for slot, position in check_slots]
        self._lookup = None if (repeats or self._checks) else store.space.block_lookup(parts, len(free))

    def keys(self, tx: Transaction, values: Sequence[Any]) -> tuple[int, Iterator[tuple[bytes, bytes]]]:
        encode = self._store._encode
        return self.keys_of_items(tx, [encode(value) for value in values])

    def rows_of_items(self, tx: Transaction, items: Sequence[bytes]) -> list[list[bytes]] | None:
        """The free items of every match (in ``free`` order) when one block of the store
        holds them all (:meth:`nstore.blocks.Blocks.block_lookup`), else None: read
        :meth:`keys_of_items`. For params given as items, as there."""
        if self._lookup is None:
            return None
        try:
            return self._lookup.rows(tx.seek_cursor(), items)
        except (BlockError, ValueError):  # the general read names a damaged block or item
            return None

    def keys_of_items(self, tx: Transaction, items: Sequence[bytes]) -> tuple[int, Iterator[tuple[bytes, bytes]]]:
        """:meth:`keys` for params given as the items they stand as in keys (packed
        already: what a read of this store returned), none packed again."""
        prefix = b"".join([part if type(part) is bytes else items[part] for part in self._parts])
        checks = [(slot, wanted if type(wanted) is bytes else items[wanted]) for slot, wanted in self._checks]
        return len(prefix), self._store._matching(tx, prefix, len(self.free), self._repeats, checks)


class NStore:
    """A set of n-tuples named ``items``, namespaced by the tuple ``prefix`` in ``okvs``.

    ``indices`` overrides the index permutations (default: the minimal cover of n items);
    ``blobs`` is where values too long for a key go (default: a blob store of its own).
    ``prefix`` may also be raw bytes: a keyspace its owner reserves (``fstore.core.layout``),
    followed by one byte per index number; such a store may keep its index keys in
    prefix-compressed ``blocks`` (:mod:`nstore.blocks`) rather than one LMDB pair each.
    """

    def __init__(
        self,
        okvs: Okvs | None,
        prefix: tuple | bytes,
        items: Sequence[str],
        *,
        indices: Sequence[Sequence[int]] | None = None,
        blobs: BlobStore | None = None,
        blocks: bool = False,
    ) -> None:
        self.okvs = okvs
        self.prefix = prefix if type(prefix) is bytes else tuple(prefix)
        self.items = tuple(items)
        self.n = len(self.items)
        if len(set(self.items)) != self.n:
            raise PatternError(f"item names must differ: {self.items}")
        self.indices = tuple(tuple(p) for p in (indices or minimal_permutations(self.n)))
        for perm in self.indices:
            if sorted(perm) != list(range(self.n)):
                raise PatternError(f"index {perm} is not a permutation of {self.n} items")
        if self.indices[0] != tuple(range(self.n)):
            # add, delete, ask and bulk_add look a tuple up in index 0 by its items in order.
            raise PatternError(f"index 0 must be the identity {tuple(range(self.n))}, not {self.indices[0]}")
        if type(prefix) is bytes:
            # A raw key prefix (an owner's short keyspace byte): index numbers are one byte
            # each after it, blobs under 0xfe.
            if not prefix or len(self.indices) > 0xFD:
                raise PatternError(f"a raw key prefix is non-empty bytes for at most 253 indices, not {prefix!r}")
            packed_prefix = prefix
            self._index_prefixes = [prefix + bytes([i]) for i in range(len(self.indices))]
            self.blobs = blobs or BlobStore(prefix + b"\xfe")
            self.space: Keyspace = Blocks.under(prefix) if blocks else Plain()
        else:
            # The prefix packs as one nested tuple: self-delimiting, so no store's keys start
            # with another's (("q",) would otherwise be a byte prefix of ("q", 0)).
            if blocks:
                raise PatternError("blocks need a raw key prefix (bytes), not a tuple")
            packed_prefix = pack(self.prefix)
            self._index_prefixes = [packed_prefix + pack_value(i) for i in range(len(self.indices))]
            self.blobs = blobs or BlobStore(packed_prefix + pack_value("blob"))
            self.space = Plain()
        # The longest item kept inline: n of them must fit one key with the index prefix.
        self.inline_limit = (MAX_KEY_SIZE - max(map(len, self._index_prefixes))) // self.n
        if self.inline_limit < _BLOBREF_SIZE:
            raise PatternError(
                f"prefix {self.prefix!r} with {self.n} items leaves {self.inline_limit} bytes per item in a "
                f"{MAX_KEY_SIZE}-byte key: at least {_BLOBREF_SIZE} are needed (use a shorter prefix or fewer items)"
            )
        # What decode() has decoded: packed item -> value, shared by every store (blobs are
        # never in it). Hot loops read it directly and call decode() on a miss.
        self.decoded: dict[bytes, Any] = _DECODE_CACHE
        self._iri_cache: dict[str, bytes] = {}
        self._str_cache: dict[str | bytes, bytes] = {}
        self._key_getters = [itemgetter(*perm) if self.n > 1 else (lambda row: (row[0],)) for perm in self.indices]
        self._plans: dict[tuple[str | None, ...], tuple] = {}
        self.blob_refs_made = 0  # long values seen by _encode: tells bulk_add to store blobs
        # While a write transaction defers index writes (deferred()): it, and a Runs per index.
        self._deferred: tuple[Transaction, list[Runs]] | None = None

    def __repr__(self) -> str:
        return f"NStore(prefix={self.prefix!r}, items={self.items!r}, indices={len(self.indices)})"

    # -- encoding -------------------------------------------------------------------

    def _encode(self, value: Any) -> bytes:
        """The packed form of a value as it stands in a key (a BlobRef if too long)."""
        packed = self.packed(value)
        if len(packed) > self.inline_limit:
            self.blob_refs_made += 1
            return pack_value(BlobRef(digest_of(packed)))
        return packed

    def packed(self, value: Any) -> bytes:
        """The packed value itself, however long (cached for IRIs and short strings)."""
        if value is None:
            return b"\x00"  # the default graph, in most patterns
        kind = type(value)
        if kind is Packed:  # an item packed already (a dictionary's TermRef)
            return bytes(value)
        if kind is BlobRef:  # the store's own reference type: a user value must not fake one
            raise PackError(f"{value!r} is datae's internal blob reference, not a value to store")
        # Cache by a key whose hash and equality run in C, and that only equal values share.
        if kind is IRI:
            cache, key = self._iri_cache, value.value
        elif kind is str or kind is bytes:
            cache, key = self._str_cache, value
        else:
            cache = key = None
        if cache is not None:
            packed = cache.get(key)
            if packed is not None:
                return packed
        try:
            if kind is IRI:  # the commonest value: pack_value's IRI branch, inlined
                packed = b"\x40" + key.encode("utf-8").replace(b"\x00", b"\x00\xff") + b"\x00"
            elif kind is Literal:  # pack_value's literal branch, with the datatype/lang tail cached
                datatype, lang = value.datatype, value.lang
                tail_key = (datatype.value if datatype is not None else "", lang or "")
                tail = _LITERAL_TAILS.get(tail_key)
                if tail is None:
                    tail = b"\x00" + pack_value(tail_key[0])[1:] + pack_value(tail_key[1])[1:]
                    if len(_LITERAL_TAILS) < 4096:
                        _LITERAL_TAILS[tail_key] = tail
                packed = b"\x42" + value.lexical.encode("utf-8").replace(b"\x00", b"\x00\xff") + tail
            else:
                packed = pack_value(value)
        except (UnicodeEncodeError, PackError):
            packed = pack_value(value)  # raises the PackError naming the value
        if cache is not None and len(packed) <= self.inline_limit:  # long values rarely repeat
            if len(cache) > _DECODE_CACHE_LIMIT:
                cache.clear()
            cache[key] = packed
        return packed

    def packed_column(self, values: list[Any]) -> list[bytes]:
        """:meth:`packed` of each value, in one C loop (:func:`nstore._pack.pack_column`;
        :meth:`packed` itself packs the kinds it leaves to Python, and stays its oracle)."""
        return pack_column(values, self.packed, self._iri_cache, self._str_cache, self.inline_limit, _DECODE_CACHE_LIMIT)

    def decode(self, tx: Transaction, item: bytes) -> Any:
        """The value of one packed item from :meth:`raw` or :meth:`keys` (fetching it if
        it is a blob; values are cached by their bytes)."""
        value = _DECODE_CACHE.get(item, _MISSING)
        if value is _MISSING:
            value = decode_item(item)
            if type(value) is BlobRef:
                # Not cached: a blob is hash-checked on every read (and may be large).
                return decode_item(self.blobs.get(tx, value.digest))
            if len(_DECODE_CACHE) > _DECODE_CACHE_LIMIT:
                _DECODE_CACHE.clear()
            _DECODE_CACHE[item] = value
        return value

    def _check_arity(self, values: Sequence, what: str) -> None:
        if len(values) != self.n:
            raise PatternError(
                f"{what} has {len(values)} items, but this store holds {self.n} "
                f"({', '.join(self.items)}): {tuple(values)!r:.200}"
            )

    def _keys(self, encoded: Sequence[bytes]) -> list[bytes]:
        return [prefix + b"".join([encoded[i] for i in perm]) for prefix, perm in zip(self._index_prefixes, self.indices)]

    def _store_blobs(self, tx: Transaction, values: Sequence, encoded: Sequence[bytes], keep: bool) -> None:
        for value, item in zip(values, encoded):
            # A BlobRef: count (or release) one reference to the value; a Packed one is
            # the caller's (it holds the blob elsewhere).
            if item[0] == BLOBREF_CODE and type(value) is not Packed:
                digest = item[1:]
                if keep:
                    self.blobs.put(tx, pack_value(value), digest)
                else:
                    self.blobs.release(tx, digest)

    # -- writes ---------------------------------------------------------------------

    def add(self, tx: Transaction, *values: Any, payload: bytes = b"") -> bool:
        """Add a tuple; returns False (and changes nothing) if it was already present.

        ``payload`` is stored beside the tuple in every index (see :meth:`scan`).
        """
        self._check_arity(values, "tuple")
        encoded = [self._encode(v) for v in values]
        keys = self._keys(encoded)
        space = self.space
        if space.get(tx, keys[0]) is not None:
            return False
        self._store_blobs(tx, values, encoded, keep=True)
        for key in keys:
            space.set(tx, key, payload)
        return True

    def delete(self, tx: Transaction, *values: Any) -> bool:
        """Remove a tuple; returns False (and changes nothing) if it was absent."""
        self._check_arity(values, "tuple")
        encoded = [self._encode(v) for v in values]
        keys = self._keys(encoded)
        space = self.space
        if space.get(tx, keys[0]) is None:
            return False
        self._store_blobs(tx, values, encoded, keep=False)
        for key in keys:
            space.delete(tx, key)
        return True

    def bulk_add_items(self, tx: Transaction, columns: Sequence[list[bytes]], *, payload: bytes = b"") -> int:
        """:meth:`bulk_add` of tuples given as columns of packed items (as keys hold them,
        e.g. a dictionary's TermRefs; no value long enough for a blob), one list per
        position: the keys are built and sorted in C from the columns. Returns how many
        tuples were new."""
        if len(columns) != self.n:
            raise PatternError(f"{len(columns)} columns, but this store holds {self.n} items")
        if not columns[0]:
            return 0
        if type(self.space) is not Blocks:
            return self.bulk_add(tx, [tuple(map(Packed, row)) for row in zip(*columns)], payload=payload)
        runs = self._runs(tx)
        added = 0
        for number, (prefix, perm) in enumerate(zip(self._index_prefixes, self.indices)):
            made = sorted_changes(prefix, list(columns), perm, payload)
            if runs is not None:
                runs[number].add(made)
                new = len(made)
            else:
                new = self.space.write(tx, made, keep=True)[0]
            if number == 0:
                added = new
        return added

    @contextmanager
    def deferred(self, tx: Transaction) -> Iterator[None]:
        """Within it, :meth:`bulk_add_items` and :meth:`bulk_delete_items` keep each index's
        sorted keys as a run (:class:`nstore.blocks.Runs`), merged into the blocks when it
        ends: a commit too large to hold writes its changes a chunk at a time, and each
        chunk would otherwise rewrite every block of every index. The caller promises that
        the tuples it adds are absent and those it deletes present (the counts returned
        assume it), and reads none of the store's tuples until it ends (they are not there
        yet). A store of plain keys writes at once.

        >>> import tempfile
        >>> from nstore import okvs
        >>> db = okvs.open(tempfile.mkdtemp())
        >>> store = NStore(db, b"\\x91", ("a", "b"), blocks=True)
        >>> with db.transaction(write=True) as tx:
        ...     with store.deferred(tx):
        ...         store.bulk_add_items(tx, [[pack_value(1), pack_value(2)], [pack_value(3), pack_value(4)]])
        ...         store.count(tx, Var("a"), Var("b"))
        ...     store.count(tx, Var("a"), Var("b"))
        2
        0
        2
        >>> db.close()
        """
        if type(self.space) is not Blocks:
            yield
            return
        if self._deferred is not None:
            raise RuntimeError(f"{self!r} defers the writes of a transaction already")
        runs = [Runs() for _ in self.indices]
        self._deferred = (tx, runs)
        try:
            yield
            for index_runs in runs:
                index_runs.merge_into(tx, self.space)
        finally:
            self._deferred = None
            for index_runs in runs:
                index_runs.close()

    def _runs(self, tx: Transaction) -> list[Runs] | None:
        deferred = self._deferred
        return deferred[1] if deferred is not None and deferred[0] is tx else None

    def bulk_delete_items(self, tx: Transaction, columns: Sequence[list[bytes]]) -> int:
        """:meth:`bulk_delete` of tuples given as columns of packed items (see
        :meth:`bulk_add_items`). Returns how many were present."""
        if len(columns) != self.n:
            raise PatternError(f"{len(columns)} columns, but this store holds {self.n} items")
        if not columns[0]:
            return 0
        removed = 0
        runs = self._runs(tx)
        for number, (prefix, perm) in enumerate(zip(self._index_prefixes, self.indices)):
            made = sorted_changes(prefix, list(columns), perm, None)
            if runs is not None:
                runs[number].add(made)
                gone = len(made)
            elif type(self.space) is Blocks:
                gone = self.space.write(tx, made, keep=False)[1]
            else:
                keys = [made.key(i) for i in range(len(made))]
                gone = self.space.apply(tx, keys, [None] * len(keys))[1]
            if number == 0:
                removed = gone
        return removed

    def bulk_delete(self, tx: Transaction, tuples: Iterable[Sequence[Any]]) -> int:
        """Remove many tuples at once (absent ones are skipped); returns how many were
        present. Each index's keys are sorted and deleted in one pass over its blocks."""
        rows = [tuple(values) for values in tuples]
        for values in rows:
            self._check_arity(values, "tuple")
        encoded = [[self._encode(v) for v in values] for values in rows]
        if self.blob_refs_made and any(item[0] == BLOBREF_CODE for items in encoded for item in items):
            return sum(self.delete(tx, *values) for values in rows)  # each blob reference released once
        if not encoded:
            return 0
        return self.bulk_delete_items(tx, [list(column) for column in zip(*encoded)])

    def bulk_add(self, tx: Transaction, tuples: Iterable[Sequence[Any]], *, payload: bytes = b"") -> int:
        """Add many tuples at once and return how many were new.

        Duplicates and tuples already present are skipped (and count no blob reference).
        Each index is sorted and written in key order, so LMDB appends pages rather than
        searching for them: cost O(N log N) for the sorts plus O(N) writes per index.
        The per-tuple work runs in C loops; see :mod:`nstore.bulk`.
        """
        return bulk_add(self, tx, tuples, payload)

    # -- reads ----------------------------------------------------------------------

    def ask(self, tx: Transaction, *values: Any) -> bool:
        """Whether the tuple is present (one point lookup)."""
        self._check_arity(values, "tuple")
        key = self._index_prefixes[0] + b"".join([self._encode(v) for v in values])
        return self.space.get(tx, key) is not None

    def range(self, tx: Transaction, start: bytes, end: bytes | None, **options: Any) -> Iterator[tuple[bytes, bytes]]:
        """The raw ``(key, payload)`` pairs of this store's index keys in ``[start, end)``
        (``offset``, ``limit`` as :meth:`nstore.okvs.Transaction.range`): the one way to read
        them, whether they are stored as plain keys or in blocks."""
        return self.space.range(tx, start, end, **options)

    def _plan(
        self, pattern: Sequence[Any], index: int | None = None
    ) -> tuple[bytes, tuple[int, ...], list[tuple[int, str]], list[tuple[int, int]], list[tuple[int, bytes]]]:
        """Key prefix to scan, the positions after it, variable slots to bind, slots that
        must repeat an earlier one, and slots that must equal a bound value (when the
        indices do not cover every set of bound positions). ``index`` forces the index."""
        shape = tuple([item.name if type(item) is Var else None for item in pattern])
        plan = self._plans.get(shape if index is None else (shape, index))
        if plan is None:
            self._check_arity(pattern, "pattern")
            plan = self._plan_shape(shape, index)
            self._plans[shape if index is None else (shape, index)] = plan
        number, prefix_positions, free, binds, repeats, check_slots = plan
        encode = self._encode
        key_prefix = self._index_prefixes[number] + b"".join([encode(pattern[i]) for i in prefix_positions])
        checks = [(slot, encode(pattern[position])) for slot, position in check_slots] if check_slots else check_slots
        return key_prefix, free, binds, repeats, checks

    def _plan_shape(self, shape: tuple[str | None, ...], index: int | None = None) -> tuple:
        """The part of a plan that depends only on which positions are bound and the names
        of the variables (cached per shape: queries repeat shapes with new values)."""
        bound = [i for i, name in enumerate(shape) if name is None]
        if index is None:
            number, length = choose_index(self.indices, bound)
        else:
            number, length = index, len(bound)
        perm = self.indices[number]
        free = perm[length:]
        first_slot: dict[str, int] = {}
        binds: list[tuple[int, str]] = []
        repeats: list[tuple[int, int]] = []
        check_slots: list[tuple[int, int]] = []
        # Visit free positions in pattern order so bindings list variables as written.
        for position in sorted(free):
            slot = free.index(position)
            name = shape[position]
            if name is None:  # bound, but not in the index prefix
                check_slots.append((slot, position))
            elif name in first_slot:
                repeats.append((slot, first_slot[name]))
            else:
                first_slot[name] = slot
                binds.append((slot, name))
        return number, perm[:length], free, binds, repeats, check_slots

    def _rows(
        self, tx: Transaction, pattern: Sequence[Any], offset: int = 0, limit: int | None = None
    ) -> tuple[tuple[int, ...], list[tuple[int, str]], Iterator[tuple[list[bytes], bytes]]]:
        """The free positions (in index order), the variable slots to bind, and an iterator
        of ``(packed free items, payload)`` per match."""
        free, binds, skip, keys = self._keys_of(tx, pattern, offset, limit)
        count = len(free)
        return free, binds, ((split(key, skip, count), payload) for key, payload in keys)

    def keys(
        self, tx: Transaction, *pattern: Any, within: tuple[int, Sequence[tuple[bytes, bytes]]] | None = None
    ) -> tuple[tuple[int, ...], int, Iterator[tuple[bytes, bytes]]]:
        """The lowest level of reading: the free positions of the pattern (in index order),
        how many leading bytes every matching key shares, and an iterator of ``(key,
        payload)`` per match. ``split(key, skip, len(free))`` gives a key's free items.

        ``within=(position, spans)`` keeps only tuples whose packed item at that (variable)
        position lies in one of the ascending byte spans ``[start, end)`` (see
        :func:`nstore.pack.value_span`): a range scan when an index has the position right
        after the bound ones, else a check per key.

        >>> import tempfile
        >>> from nstore import okvs
        >>> from nstore.pack import split, value_span
        >>> db = okvs.open(tempfile.mkdtemp())
        >>> ages = NStore(db, ("ages",), ("who", "age"))
        >>> with db.transaction(write=True) as tx:
        ...     ages.bulk_add(tx, [("ann", 31), ("bob", 45), ("cy", 52)])
        ...     free, skip, keys = ages.keys(tx, Var("who"), Var("age"), within=(1, [value_span(40, 60)]))
        ...     [ages.decode(tx, split(key, skip, 2)[free.index(0)]) for key, _ in keys]
        3
        ['bob', 'cy']
        """
        if within is None:
            key_prefix, free, _, repeats, checks = self._plan(pattern)
            return free, len(key_prefix), self._matching(tx, key_prefix, len(free), repeats, checks)
        position, spans = within
        if type(pattern[position]) is not Var:
            raise PatternError(f"within= restricts a variable position, and {position} holds {pattern[position]!r:.80}")
        shape = tuple([item.name if type(item) is Var else None for item in pattern])
        bound = {i for i, name in enumerate(shape) if name is None}
        for number, perm in enumerate(self.indices):
            if set(perm[: len(bound)]) == bound and perm[len(bound)] == position:
                break
        else:  # no index continues with the position: filter every key of the pattern
            key_prefix, free, _, repeats, checks = self._plan(pattern)
            checks = [*checks, (free.index(position), tuple(spans))]
            return free, len(key_prefix), self._matching(tx, key_prefix, len(free), repeats, checks)
        key_prefix, free, _, repeats, checks = self._plan(pattern, number)
        scans = (self.space.range(tx, key_prefix + start, key_prefix + end) for start, end in spans)
        keys = chain.from_iterable(scans)
        if repeats or checks:
            keys = self._filtered(keys, len(key_prefix), len(free), repeats, checks)
        return free, len(key_prefix), keys

    def prepare(self, *pattern: Any) -> PreparedRead:
        """Plan a pattern whose :class:`Param` positions change from read to read.

        >>> import tempfile
        >>> from nstore import okvs
        >>> from nstore.pack import split
        >>> db = okvs.open(tempfile.mkdtemp())
        >>> ages = NStore(db, ("ages",), ("who", "age"))
        >>> read = ages.prepare(Param(), Var("age"))
        >>> with db.transaction(write=True) as tx:
        ...     ages.bulk_add(tx, [("ann", 31), ("bob", 45)])
        ...     skip, keys = read.keys(tx, ["bob"])
        ...     [ages.decode(tx, split(key, skip, 1)[0]) for key, _ in keys]
        2
        [45]
        """
        self._check_arity(pattern, "pattern")
        return PreparedRead(self, pattern)

    def _keys_of(
        self, tx: Transaction, pattern: Sequence[Any], offset: int, limit: int | None
    ) -> tuple[tuple[int, ...], list[tuple[int, str]], int, Iterator[tuple[bytes, bytes]]]:
        key_prefix, free, binds, repeats, checks = self._plan(pattern)
        skip = len(key_prefix)
        if not (repeats or checks):
            return free, binds, skip, self.space.range(tx, key_prefix, key_prefix + b"\xff", offset=offset, limit=limit)
        # Keys are filtered, so offset and limit count afterwards.
        matching = self._matching(tx, key_prefix, len(free), repeats, checks)
        if offset or limit is not None:
            matching = islice(matching, offset, None if limit is None else offset + limit)
        return free, binds, skip, matching

    def _matching(
        self, tx: Transaction, key_prefix: bytes, count: int, repeats: list, checks: list
    ) -> Iterator[tuple[bytes, bytes]]:
        """The keys of a pattern: all under ``key_prefix``, filtered by ``repeats`` and
        ``checks`` if there are any (see :meth:`_filtered`)."""
        # Not tx.prefix(key_prefix): a packed str, bytes or tuple is a byte prefix of a
        # longer one that continues with an escaped NUL (pack("a") of pack("a\x00b")),
        # so the keys that continue with 0xff belong to other values. No type code is
        # 0xff, so every key of a match sorts below key_prefix + 0xff.
        keys = self.space.range(tx, key_prefix, key_prefix + b"\xff")
        if repeats or checks:
            return self._filtered(keys, len(key_prefix), count, repeats, checks)
        return keys

    @staticmethod
    def _filtered(
        keys: Iterator[tuple[bytes, bytes]], skip: int, count: int, repeats: list, checks: list
    ) -> Iterator[tuple[bytes, bytes]]:
        """The keys whose items repeat where a variable repeats, and equal the bound values
        the index prefix could not hold (or lie in the spans a check gives as a tuple)."""
        for key, payload in keys:
            items = split(key, skip, count)
            if repeats and any(items[a] != items[b] for a, b in repeats):
                continue
            if checks and not all(_passes(items[slot], wanted) for slot, wanted in checks):
                continue
            yield key, payload

    def from_(self, tx: Transaction, *pattern: Any, offset: int = 0, limit: int | None = None) -> Iterator[Bindings]:
        """Yield one ``{variable name: value}`` per tuple matching the pattern.

        With one free variable the values come in their packed (value) order.
        """
        decode = self.decode
        _, binds, rows = self._rows(tx, pattern, offset, limit)
        for items, _ in rows:
            yield {name: decode(tx, items[slot]) for slot, name in binds}

    def scan(self, tx: Transaction, *pattern: Any) -> Iterator[tuple[tuple, bytes]]:
        """Yield ``(tuple, payload)`` for every match, the tuple in item order."""
        decode = self.decode
        pattern_values = list(pattern)
        free, _, rows = self._rows(tx, pattern)
        for items, payload in rows:
            values = list(pattern_values)
            for slot, position in enumerate(free):
                values[position] = decode(tx, items[slot])
            yield tuple(values), payload

    def raw(self, tx: Transaction, *pattern: Any) -> tuple[tuple[int, ...], Iterator[tuple[list[bytes], bytes]]]:
        """The free positions of the pattern (in index order) and an iterator of
        ``(packed_items, payload)`` per match, items still packed in that order, for callers
        that group or filter on bytes before decoding; decode an item with :meth:`decode`.

        >>> import tempfile
        >>> from nstore import okvs
        >>> db = okvs.open(tempfile.mkdtemp())
        >>> pairs = NStore(db, ("pairs",), ("left", "right"))
        >>> with db.transaction(write=True) as tx:
        ...     pairs.add(tx, "a", 1)
        ...     free, rows = pairs.raw(tx, "a", Var("r"))
        ...     free, [(pairs.decode(tx, items[0]), payload) for items, payload in rows]
        True
        ((1,), [(1, b'')])
        """
        free, _, rows = self._rows(tx, pattern)
        return free, rows

    def index_prefix(self, number: int) -> bytes:
        """The key prefix of index ``number`` (its keys continue with the packed items in
        that index's permutation order)."""
        return self._index_prefixes[number]

    def item(self, value: Any) -> bytes:
        """The packed item of one value as keys of this store hold it (a BlobRef if too
        long), cached for IRIs and strings."""
        return self._encode(value)

    def identity(self, *values: Any) -> bytes:
        """The packed items of a (possibly partial, leading) tuple as they stand in the
        identity index: equal exactly when the stored tuples are equal (``1``, ``1.0`` and
        ``True`` differ), and in the order of that index."""
        return b"".join([self._encode(v) for v in values])


    def index_digests(self, tx: Transaction, blob_refs: Counter[bytes] | None = None) -> list[int | tuple[bytes, str]]:
        """For each index, the sum modulo 2^64 of a hash of (items in the store's item order
        || payload) over its keys, a block at a time in C (:func:`nstore._pack.canonical_sum`):
        every index of an intact store holds the same tuples, so the sums are equal (O(keys);
        what a full verify compares; the hash is the process's own, so sums compare within
        one process only). An index holding a key that is not a tuple of this store gives
        ``(that key, what is wrong)`` instead. ``blob_refs`` counts each blob digest the keys
        of index 0 refer to."""
        sums: list[int | tuple[bytes, str]] = []
        for number, perm in enumerate(self.indices):
            refs: list[bytes] | None = [] if blob_refs is not None and number == 0 else None
            prefix = self._index_prefixes[number]
            total = 0
            for keys, payloads in self.space.batches(tx, prefix, prefix_end(prefix)):
                found = canonical_sum(keys, payloads, len(prefix), perm, refs)
                if type(found) is tuple:
                    sums.append(found)
                    break
                total += found
            else:
                sums.append(total % (1 << 64))
            if refs:
                blob_refs.update(ref[1:] for ref in refs)
        return sums

    def count(self, tx: Transaction, *pattern: Any, cap: int | None = None) -> int:
        """How many tuples match the pattern (a scan of the matching keys, not decoded;
        counting stops at ``cap``)."""
        key_prefix, _, _, repeats, checks = self._plan(pattern)
        if repeats or checks:
            return sum(1 for _ in islice(self._rows(tx, pattern)[2], cap))
        return self.space.count(tx, key_prefix, key_prefix + b"\xff", cap)  # see _matching for the end key

    def where(self, tx: Transaction, *pattern: Any) -> Step:
        """A join step for :func:`select`: extends each binding with the pattern's matches."""
        self._check_arity(pattern, "pattern")

        def step(bindings: Iterator[Bindings]) -> Iterator[Bindings]:
            for binding in bindings:
                bound = [binding.get(item.name, item) if type(item) is Var else item for item in pattern]
                for extra in self.from_(tx, *bound):
                    yield {**binding, **extra}

        return step


def _passes(item: bytes, wanted: bytes | tuple[tuple[bytes, bytes], ...]) -> bool:
    """Whether a packed item equals a bound value, or lies in one of its spans."""
    if type(wanted) is bytes:
        return item == wanted
    return any(start <= item < end for start, end in wanted)


def select(seed: Iterable[Bindings], *steps: Step) -> Iterator[Bindings]:
    """Chain ``from_`` and ``where`` steps into one stream of bindings (SRFI-168's
    ``nstore-query``)."""
    stream = iter(seed)
    for step in steps:
        stream = step(stream)
    return stream
