"""The change records of every commit, the term dictionary, and reads of the state at any
commit (through :mod:`fstore.core.heads`).

Each change is a record ``(graph, subject, predicate, object, seq)`` whose payload says
whether the quad is alive after commit ``seq``; terms in it are dictionary references
(:mod:`nstore.dictionary`), numbers and dates inline. Records have two indices: the quad
then ``seq`` (all versions of a quad adjacent, in significance order: blame, merge, diff)
and ``seq`` then the quad (what did commit X change). **History significance**: the state
of a quad at commit c is the payload of its most significant record among c's ancestors.

Reads of a commit's state never scan records: they read a materialised head (a snapshot)
and an overlay of the few quads whose state differs (see :mod:`fstore.core.heads`).
"""

from __future__ import annotations

from itertools import chain, islice
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterable, Iterator, Sequence

from nstore import NStore, Var
from nstore._blocks import sorted_bytes
from nstore._pack import split_rows
from nstore.dictionary import ABSENT, KIND_OF_CODE, Dictionary
from nstore.okvs import Okvs, Transaction, prefix_end
from nstore.store import Param
from nstore.pack import BLOBREF_CODE, TERMREF_CODE, Packed, decode_item, pack, pack_value, split

from .heads import Heads, ItemChanges, repeated_vars
from .layout import QUADS, Quad, Space
from nstore.terms import to_rdf

if TYPE_CHECKING:
    from .commits import CommitStore

__all__ = ["History", "QUAD_ITEMS", "RECORD_INDICES", "ALIVE", "DEAD", "Quad", "winner", "matches", "rechunked"]

QUAD_ITEMS = ("graph", "subject", "predicate", "object")
RECORD_INDICES = ((0, 1, 2, 3, 4), (4, 0, 1, 2, 3))
ALIVE = b"\x01"
DEAD = b"\x00"
_PAYLOAD = {True: ALIVE, False: DEAD}
_CHUNK = 4096  # records whose keys a read splits at once
_MISSING = object()
_CACHE_LIMIT = 1 << 18
_REF_CODES = range(TERMREF_CODE, TERMREF_CODE + 5)
_AS_IS = frozenset({Packed, Var, Param})


def winner(records: Iterable[tuple[int, bool]], ancestors: frozenset[int] | set[int]) -> tuple[int, bool] | None:
    """The most significant record among ``ancestors`` (records come in seq order)."""
    best = None
    for record in records:
        if record[0] in ancestors:
            best = record
    return best


def rechunked(lists: Iterable[list[Any]], size: int) -> Iterator[list[Any]]:
    """The items of ``lists`` regrouped as lists of ``size`` (the last may be shorter);
    a list of that size passes as it is.

    >>> list(rechunked([[1, 2, 3], [4], [5, 6]], 2))
    [[1, 2], [3, 4], [5, 6]]
    """
    held: list[Any] = []
    for found in lists:
        if not held and len(found) == size:
            yield found
            continue
        held += found
        while len(held) >= size:
            yield held[:size]
            del held[:size]
    if held:
        yield held


def matches(pattern: Sequence[Any], quad: Quad) -> bool:
    """Whether a quad fits a pattern (values compare by their packed bytes, so ``1`` and
    ``True`` differ as they do in the store; a repeated Var must bind one value).

    >>> matches((Var("g"), Var("x"), "p", Var("x")), (None, "a", "p", "a"))
    True
    """
    bound: dict[str, bytes] = {}
    for item, value in zip(pattern, quad):
        packed = pack_value(value)
        if type(item) is Var:
            if bound.setdefault(item.name, packed) != packed:
                return False
        elif pack_value(item) != packed:
            return False
    return True


class History:
    """One space's change records and materialised heads (``fstore.core.layout``), its terms
    in the repository's dictionary (see the module docstring)."""

    def __init__(self, okvs: Okvs, commits: CommitStore, dictionary: Dictionary, space: Space = QUADS) -> None:
        self.okvs = okvs
        self.commits = commits
        self.space = space
        self.dictionary = dictionary
        self.store = NStore(okvs, space.records, QUAD_ITEMS + ("seq",), indices=RECORD_INDICES, blocks=True)
        self.heads = Heads(self, okvs)
        self._values: dict[bytes, Any] = {}  # item -> stored value (committed ids only)
        self._terms: dict[bytes, Any] = {}  # item -> RDF term

    # -- terms and items ----------------------------------------------------------------

    def parts(self, quad: Sequence[Any]) -> list[bytes]:
        """Each value of a quad packed (its term, not its id): joined, they make its
        :meth:`identity`, and the dictionary looks up terms by them."""
        packed = self.store.packed  # cached packing of IRIs and strings
        return [packed(v) for v in quad]

    def needs_values(self, parts: Sequence[bytes]) -> bool:
        """Whether :meth:`write` needs a streamed change's values, not only its packed
        ``parts`` (it does for a value too long for a key: it stores the value's blob)."""
        return True

    def identity(self, quad: Sequence[Any]) -> bytes:
        """The packed quad (its terms, not their ids): a dict key that tells apart values
        Python calls equal (1, 1.0, True), and what commit ids hash."""
        return b"".join(self.parts(quad))

    def encode(self, tx: Transaction, values: Sequence[Any], create: bool = False) -> list[Any] | None:
        """The items that stand for ``values`` in keys (Var and Param stay as they are):
        dictionary references as :class:`~nstore.pack.Packed`, inline values unchanged;
        None when a term is not in the dictionary (no key holds it) unless ``create``."""
        encode = self.dictionary.encode
        items = []
        for value in values:
            item = encode(tx, value, create=create)
            if item is ABSENT:
                return None
            items.append(item)
        return items

    def item_bytes(self, items: Sequence[Any]) -> list[Any]:
        """The key bytes of encoded items, as :class:`~nstore.pack.Packed` (a Var or Param
        stays as it is)."""
        encode = self.store.item
        return [item if type(item) in _AS_IS else Packed(encode(item)) for item in items]

    def value(self, tx: Transaction, item: bytes) -> Any:
        """The stored value of one key item (a term from the dictionary, a blob fetched)."""
        value = self._values.get(item, _MISSING)
        if value is not _MISSING:
            return value
        code = item[0]
        if code in _REF_CODES:
            value = self.dictionary.decode(tx, item)
            if tx.write and self.dictionary.is_fresh(tx, item):  # gone if the transaction aborts
                return value
        elif code == BLOBREF_CODE:
            return self.store.decode(tx, item)  # hash-checked on every read, never cached
        else:
            value = decode_item(item)
        if len(self._values) >= _CACHE_LIMIT:
            self._values.clear()
        self._values[item] = value
        return value

    def values(self, tx: Transaction, items: Sequence[bytes]) -> list[Any]:
        """:meth:`value` of many items, read in one loop and not cached (for a bulk read
        whose items are each used once, such as a table export's feature blobs)."""
        if any(item[0] == BLOBREF_CODE for item in items):
            return [self.value(tx, item) for item in items]
        return self.dictionary.decode_many(tx, items)

    def term(self, tx: Transaction, item: bytes) -> Any:
        """The RDF term of one key item (``to_rdf`` of its value), cached."""
        term = self._terms.get(item, _MISSING)
        if term is not _MISSING:
            return term
        term = to_rdf(self.value(tx, item))
        if item in self._values:  # cacheable (see value)
            if len(self._terms) >= _CACHE_LIMIT:
                self._terms.clear()
            self._terms[item] = term
        return term

    def prefetch(self, tx: Transaction, items: Iterable[bytes], terms: bool) -> None:
        """Decode the dictionary items among ``items`` not cached yet in one batch (each
        block of the dictionary read once, :meth:`nstore.dictionary.Dictionary.decode_many`)
        into the caches :meth:`decoding` reads: what a scan does before it fills a chunk of
        rows, rather than one dictionary lookup per item. In a write transaction, whose
        fresh ids must not be cached, it does nothing."""
        if tx.write:
            return
        cache = self._terms if terms else self._values
        wanted = [item for item in set(items).difference(cache) if item[0] in _REF_CODES]
        if not wanted:
            return
        values = self.dictionary.decode_many(tx, wanted)
        if len(self._values) + len(wanted) >= _CACHE_LIMIT:
            self._values.clear()
        self._values.update(zip(wanted, values))
        if terms:
            if len(self._terms) + len(wanted) >= _CACHE_LIMIT:
                self._terms.clear()
            self._terms.update(zip(wanted, map(to_rdf, values)))

    def decoding(self, terms: bool) -> tuple[dict[bytes, Any], Callable[[Transaction, bytes], Any]]:
        """The two halves of :meth:`decoder`, for a hot loop that inlines it: the cache
        (item -> value, or RDF term if ``terms``) and the method to call on a miss."""
        return (self._terms, self.term) if terms else (self._values, self.value)

    def decoder(self, tx: Transaction, terms: bool) -> Callable[[bytes], Any]:
        """``item -> value`` (or RDF term) for reads in ``tx``."""
        cache, slow = self.decoding(terms)

        def decode(item: bytes) -> Any:
            value = cache.get(item, _MISSING)
            return slow(tx, item) if value is _MISSING else value

        return decode

    # -- records --------------------------------------------------------------------------

    def write(self, tx: Transaction, seq: int, changes: Iterable[tuple[Quad, bool, Sequence[bytes] | None]]) -> tuple[list[bytes], ItemChanges]:
        """Record that commit ``seq`` set each quad to alive / dead (each change may carry
        the quad's :meth:`parts`). Returns the records as :meth:`packed_changes_of` reads
        them back (what the commit id hashes) and the changes as key items.

        The work is done a column at a time (packing, dictionary look-ups, keys) in C loops,
        not a Python step per quad."""
        changes = list(changes)
        if not changes:
            return [], ItemChanges([], [])
        quads, alive, given = zip(*changes)
        if None in given:
            given = [parts if parts is not None else self.parts(quad) for quad, parts in zip(quads, given)]
        columns = list(zip(*given))
        # Each distinct packed value -> its key item: a dictionary id, the value itself if
        # inline, or None for an inline value too long for a key (the row keeps its blob).
        items_of: dict[bytes, Packed | None] = dict(self.dictionary.encode_packed(tx, chain.from_iterable(columns)))
        limit = self.store.inline_limit
        for part in set(chain.from_iterable(columns)).difference(items_of):
            items_of[part] = Packed(part) if len(part) <= limit else None
        item_columns = [list(map(items_of.__getitem__, column)) for column in columns]
        records = sorted_bytes(list(map(bytes.__add__, map(b"".join, given), map(_PAYLOAD.__getitem__, alive))))
        if any(None in column for column in item_columns):
            for position, column in enumerate(item_columns):  # a long value: its blob reference
                item_columns[position] = [Packed(self.store.item(quad[position])) if item is None else item
                                          for quad, item in zip(quads, column)]
            self._write_with_blobs(tx, seq, quads, alive, item_columns)
            return records, ItemChanges(item_columns, alive)
        encoded = ItemChanges(item_columns, alive)
        seq_item = pack_value(seq)
        for state, payload in ((True, ALIVE), (False, DEAD)):
            written = encoded.where(state)
            if written[0]:
                self.store.bulk_add_items(tx, [*written, [seq_item] * len(written[0])], payload=payload)
        return records, encoded

    def deferred(self, tx: Transaction) -> ContextManager[None]:
        """Within it, :meth:`write` keeps the records' keys as sorted runs merged into their
        blocks when it ends (``NStore.deferred``): a commit written a chunk at a time."""
        return self.store.deferred(tx)

    def _write_with_blobs(self, tx: Transaction, seq: int, quads: Sequence[Quad], alive: Sequence[bool],
                          item_columns: list[list[Packed]]) -> None:
        """The records of a commit holding a value too long for a key: rows that name such
        a value by itself, so the store keeps its blob and counts its references."""
        born: list[tuple] = []
        died: list[tuple] = []
        seq_item = Packed(pack_value(seq))
        for quad, state, items in zip(quads, alive, zip(*item_columns)):
            if any(item[0] == BLOBREF_CODE for item in items):
                row = (*[value if item[0] == BLOBREF_CODE else Packed(item) for value, item in zip(quad, items)], seq)
            else:
                row = (*map(Packed, items), seq_item)
            (born if state else died).append(row)
        if born:
            self.store.bulk_add(tx, born, payload=ALIVE)
        if died:
            self.store.bulk_add(tx, died, payload=DEAD)

    def item_records(self, tx: Transaction, items: Sequence[bytes]) -> Iterator[tuple[bytes, bytes]]:
        """``(packed seq, payload)`` of every record of the quad whose key items are
        ``items``, in significance order."""
        prefix = self.store.index_prefix(0) + b"".join(items)
        start = len(prefix)
        for key, payload in self.store.range(tx, prefix, prefix + b"\xff"):
            yield key[start:], payload

    def records(self, tx: Transaction, quad: Quad) -> list[tuple[int, bool]]:
        """Every ``(seq, alive)`` record of one quad, in significance order."""
        items = self.encode(tx, quad)
        if items is None:
            return []
        return [(decode_item(seq), payload == ALIVE) for seq, payload in self.item_records(tx, self.item_bytes(items))]

    def records_many(self, tx: Transaction, quads: Sequence[Quad]) -> list[list[tuple[int, bool]]]:
        """:meth:`records` of many quads."""
        return [self.records(tx, quad) for quad in quads]

    def alive_many(self, tx: Transaction, ancestors: frozenset[int], quads: Sequence[Quad],
                   parts: Sequence[Sequence[bytes]]) -> list[bool]:
        """Whether each quad (given with its :meth:`parts`) is alive at the commit whose
        ancestors are ``ancestors``: :meth:`records` and :func:`winner` for many quads, their
        terms looked up in one batch and their records read in one sorted walk of the
        quad-led index (a quad naming a value too long for a key is read by itself)."""
        if not ancestors:
            return [False] * len(quads)
        items_of = self.dictionary.find_packed(tx, chain.from_iterable(parts))
        limit = self.store.inline_limit
        lead = self.store.index_prefix(0)
        prefixes: list[bytes | None] = []
        for row in parts:
            items = [items_of.get(part) or (None if part[0] in KIND_OF_CODE else part) for part in row]
            if None in items:  # a term the dictionary lacks: no record can name it
                prefixes.append(None)
            elif any(len(item) > limit for item in items):
                prefixes.append(b"")  # a blob in its key: read by itself below
            else:
                prefixes.append(lead + b"".join(items))
        found = self.store.space.under_many(tx, [prefix for prefix in prefixes if prefix])
        alive = []
        for quad, prefix in zip(quads, prefixes):
            if prefix is None:
                alive.append(False)
                continue
            if prefix:
                skip = len(prefix)
                records = [(decode_item(key[skip:]), payload == ALIVE) for key, payload in found[prefix]]
            else:
                records = self.records(tx, quad)
            best = winner(records, ancestors)
            alive.append(best is not None and best[1])
        return alive

    def match_records(self, tx: Transaction, pattern: Sequence[Any]) -> Iterator[tuple[Quad, list[tuple[int, bool]]]]:
        """Yield ``(quad, [(seq, alive), ...])`` for every quad matching ``pattern`` that has
        records, whatever its state: a scan of the quad-led index from the pattern's
        leading bound items, the other bound items checked per key."""
        items = self.encode(tx, pattern)
        if items is None:
            return
        lead: list[bytes] = []
        for item in items:
            if type(item) is Var:
                break
            lead.append(self.item_bytes([item])[0])
        checks = [(i, self.item_bytes([item])[0]) for i, item in enumerate(items) if i >= len(lead) and type(item) is not Var]
        repeats = repeated_vars(pattern)
        prefix = self.store.index_prefix(0) + b"".join(lead)
        skip = len(prefix)
        count = 5 - len(lead)
        decode = self.decoder(tx, False)
        group: list[bytes] | None = None
        wanted = False
        records: list[tuple[int, bool]] = []
        for key, payload in self.store.range(tx, prefix, prefix + b"\xff"):
            quad_items = lead + split(key, skip, count)
            seq = quad_items.pop()
            if quad_items != group:
                if wanted:
                    yield tuple(map(decode, group)), records  # type: ignore[arg-type]
                group, records = quad_items, []
                wanted = all(quad_items[i] == item for i, item in checks) and all(quad_items[a] == quad_items[b] for a, b in repeats)
            if wanted:
                records.append((decode_item(seq), payload == ALIVE))
        if wanted:
            yield tuple(map(decode, group)), records  # type: ignore[arg-type]

    def has_records(self, tx: Transaction) -> bool:
        """Whether any commit recorded a change in this space."""
        prefix = self.store.index_prefix(0)
        return next(self.store.range(tx, prefix, prefix_end(prefix), limit=1), None) is not None

    def raw_changes_of(self, tx: Transaction, seq: int) -> Iterator[tuple[list[bytes], bytes]]:
        """The records commit ``seq`` wrote as ``(key items of the quad, payload)``."""
        for rows, payloads in self.raw_change_chunks(tx, seq):
            yield from zip(rows, payloads)

    def raw_change_chunks(self, tx: Transaction, seq: int) -> Iterator[tuple[list[list[bytes]], list[bytes]]]:
        """:meth:`raw_changes_of` a chunk at a time: the key items of each quad, and the
        payloads."""
        prefix = self.store.index_prefix(1) + pack_value(seq)
        skip = len(prefix)
        pairs = self.store.range(tx, prefix, prefix + b"\xff")
        while chunk := list(islice(pairs, _CHUNK)):  # keys split in C a chunk at a time
            try:
                rows = split_rows(chunk, skip, 4)
            except ValueError:  # an item the C split does not know: Python's splits or names it
                rows = [split(key, skip, 4) for key, _ in chunk]
            yield rows, list(map(itemgetter(1), chunk))

    def change_items(self, tx: Transaction, seq: int, size: int) -> Iterator[ItemChanges]:
        """The records commit ``seq`` wrote as key items, ``size`` at a time (what moves a
        snapshot to a commit written in chunks)."""
        pairs = (list(zip(rows, map(ALIVE.__eq__, payloads))) for rows, payloads in self.raw_change_chunks(tx, seq))
        for chunk in rechunked(pairs, size):
            yield ItemChanges.of(chunk)

    def changes_of(self, tx: Transaction, seq: int) -> Iterator[tuple[Quad, bool]]:
        """The records commit ``seq`` wrote: ``(quad, alive)``."""
        decode = self.decoder(tx, False)
        for items, payload in self.raw_changes_of(tx, seq):
            yield tuple(map(decode, items)), payload == ALIVE  # type: ignore[misc]

    def quads_changed_by(self, tx: Transaction, seqs: Iterable[int]) -> dict[bytes, Quad]:
        """Every quad commits ``seqs`` wrote a record of, once each, by packed key (in the
        order first met): what a merge or a graft must settle."""
        found: dict[bytes, Quad] = {}
        for seq in seqs:
            for quad, _ in self.changes_of(tx, seq):
                found.setdefault(pack(*quad), quad)
        return found

    def packed_changes_of(self, tx: Transaction, seq: int) -> list[bytes]:
        """The records of commit ``seq`` as :meth:`write` returned them (what its id hashes)."""
        return sorted(self.identity(quad) + (ALIVE if alive else DEAD) for quad, alive in self.changes_of(tx, seq))

    def drop_records(self, tx: Transaction, seq: int) -> int:
        """Delete every record commit ``seq`` wrote (for gc: no ref reaches it); a long
        value's blob loses one reference each. Returns how many."""
        seq_item = Packed(pack_value(seq))
        rows = [(*[self.value(tx, item) if item[0] == BLOBREF_CODE else Packed(item) for item in items], seq_item)
                for items, _ in self.raw_changes_of(tx, seq)]
        self.store.bulk_delete(tx, rows)
        return len(rows)

    def term_ids(self, tx: Transaction) -> set[bytes]:
        """Every dictionary id a key of this space holds (records and snapshots; for gc)."""
        found: set[bytes] = set()
        for store in (self.store, self.heads.store):
            prefix = store.index_prefix(0)
            skip = len(prefix)
            for key, _ in store.range(tx, prefix, prefix_end(prefix)):
                found.update(item for item in split(key, skip, store.n) if item[0] in _REF_CODES)
        return found

    def state_changes(self, tx: Transaction, before: frozenset[int], after: frozenset[int]) -> Iterator[tuple[bytes, list[bytes], bool]]:
        """Each quad whose state under the ancestry ``after`` differs from its state under
        ``before``: ``(its key items joined, the key items, alive under after)``. Only
        records of commits in one ancestry and not the other can differ, so the cost is
        O(changes between the two)."""
        touched: dict[bytes, list[bytes]] = {}
        for commit in before ^ after:
            for items, _ in self.raw_changes_of(tx, commit):
                touched.setdefault(b"".join(items), items)
        # the touched tuples' record seqs are decoded (memoised) rather than the ancestries
        # packed: an ancestry holds every commit, the touched tuples' records only a few
        seqs: dict[bytes, int] = {}
        for ident, items in touched.items():
            was = now = False
            for record_seq, payload in self.item_records(tx, items):
                number = seqs.get(record_seq)
                if number is None:
                    number = seqs[record_seq] = decode_item(record_seq)
                if number in before:
                    was = payload == ALIVE
                if number in after:
                    now = payload == ALIVE
            if was != now:
                yield ident, items, now

    # -- reads of a commit's state (see fstore.core.heads) --------------------------------------

    def reader(self, tx: Transaction, seq: int | None, snapshot: int | None = None):
        """The quads alive at commit ``seq`` (None: no commits), read in ``tx`` (from
        snapshot ``snapshot``, default the nearest)."""
        return self.heads.reader(tx, seq, snapshot)

    def match(self, tx: Transaction, pattern: Sequence[Any], seq: int | None, within: Any = None, terms: bool = False) -> Iterator[Quad]:
        """Each quad matching ``pattern`` alive at commit ``seq`` (see :meth:`Reader.match`)."""
        return self.reader(tx, seq).match(pattern, within, terms)
