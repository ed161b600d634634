"""A term dictionary: each distinct IRI, blank node, string, literal or byte string is stored
once under a short id, and index keys hold the 6-byte :class:`~nstore.pack.TermRef` of it.

Numbers, booleans, dates and datetimes are not in the dictionary: their packing keeps their
order, so they stay inline in keys and a range of them is one scan. :meth:`Dictionary.encode`
returns such a value unchanged and anything else as the packed TermRef (a
:class:`~nstore.pack.Packed`, which stores put in keys as it is).

Keys (under the dictionary's ``prefix``; the format is in ``docs/format.md``):

* ``prefix + b"t" + pack_value(term)`` -> the TermRef item, for terms packing to at most
  :data:`INLINE_TERM` bytes; longer ones under ``prefix + b"h" + sha256(pack_value(term))``;
* ``prefix + b"i" + TermRef item`` -> ``pack_value(term)``;
* ``prefix + b"n"`` -> the next id, 8 bytes big-endian (ids are never reused).

Ids assigned in a write transaction are cached only once it commits, so an aborted one
leaves no trace in this process either.

>>> import tempfile
>>> from nstore import okvs
>>> from nstore.terms import IRI
>>> db = okvs.open(tempfile.mkdtemp())
>>> words = Dictionary(b"D")
>>> with db.transaction(write=True) as tx:
...     ref = words.encode(tx, IRI("urn:a"), create=True)
...     ref.hex(" "), words.encode(tx, 7, create=True), words.decode(tx, ref)
('50 00 00 00 00 00', 7, IRI('urn:a'))
>>> with db.transaction() as tx:
...     words.encode(tx, IRI("urn:b"), create=False) is ABSENT
True
>>> db.close()
"""

from __future__ import annotations

import hashlib
from itertools import filterfalse
import weakref
from typing import Any, Iterable, Iterator, Sequence

from ._pack import term_parts, term_refs
from .blocks import Blocks, Keyspace, Plain
from .errors import CorruptStoreError
from .okvs import Transaction, prefix_end
from .pack import BNODE_CODE, BYTES, IRI_CODE, LITERAL_CODE, STRING, TERMREF_CODE, Packed, decode_item, decode_items, pack_value
from .terms import IRI, BNode, Literal

__all__ = ["Dictionary", "INLINE_TERM", "KIND_OF", "KIND_OF_CODE", "ABSENT"]

# The TermRef kind of each type the dictionary holds, by type and by the type code of its
# packing; every other value stays inline.
KIND_OF: dict[type, int] = {IRI: 0, BNode: 1, str: 2, Literal: 3, bytes: 4}
KIND_OF_CODE: dict[int, int] = {IRI_CODE: 0, BNODE_CODE: 1, STRING: 2, LITERAL_CODE: 3, BYTES: 4}
INLINE_TERM = 400  # longest packed term keyed by itself (keys hold at most 511 bytes)
_CACHE_LIMIT = 1 << 20
# The ids a write transaction keeps in memory of those it assigned (packed term <-> item):
# past it, both maps are emptied and its look-ups read the dictionary's keys, so a
# transaction of many million new terms holds a bounded part of them.
FRESH_LIMIT = 1 << 18
_ID_BYTES = 5  # a TermRef item: its kind's code, then the id big-endian (docs/format.md, "Items")
ABSENT = type("Absent", (), {"__repr__": lambda self: "ABSENT", "__slots__": ()})()
"""What :meth:`Dictionary.encode` returns for a term it does not hold."""


class Dictionary:
    """The term dictionary under the key prefix ``prefix`` (see the module docstring)."""

    def __init__(self, prefix: bytes, *, blocks: bool = False) -> None:
        self.prefix = prefix
        # every key of the dictionary, as plain LMDB pairs or in prefix-compressed blocks
        self.space: Keyspace = Blocks.under(prefix) if blocks else Plain()
        self._term_key = prefix + b"t"
        self._hash_key = prefix + b"h"
        self._id_key = prefix + b"i"
        self._next_key = prefix + b"n"
        # Committed ids only: term -> TermRef item (reads) and packed term -> item (writes).
        self._refs: dict[Any, Packed] = {}
        self._packed: dict[bytes, Packed] = {}
        # Per open write transaction: the ids it assigned and its next id, published to
        # the caches above when it commits.
        self._fresh: weakref.WeakKeyDictionary[Transaction, dict] = weakref.WeakKeyDictionary()

    def encode(self, tx: Transaction, value: Any, *, create: bool) -> Any:
        """What stands in keys for ``value``: the value itself if it is stored inline, else
        its TermRef item; for a term not in the dictionary, a new id if ``create`` (in a
        write transaction), else :data:`ABSENT` (no key can hold it)."""
        kind = KIND_OF.get(type(value))
        if kind is None:
            return value
        ref = self._refs.get(value)
        if ref is not None:
            return ref
        packed = pack_value(value)
        fresh = self._fresh.get(tx) if tx.write else None
        if fresh is not None:
            ref = fresh["refs"].get(packed)
            if ref is not None:
                return Packed(ref)
        found = self.space.get(tx, self._key(packed))
        if found is not None:
            ref = Packed(found)
            if fresh is None or not self._assigned_by(fresh, found):
                self._remember(self._refs, value, ref)
            return ref
        if not create:
            return ABSENT
        return self._assign(tx, [packed])[packed]

    def encode_packed(self, tx: Transaction, parts: Iterable[bytes]) -> dict[bytes, bytes]:
        """The TermRef item of each packed term among ``parts`` (packed items, e.g. of
        ``pack_value``; those of inline types are left out), in a write transaction: terms
        not in the dictionary get ids, in one batch whose keys are written in key order.

        Lookups are by the packed bytes, whose hash and equality run in C: this is the
        path of a commit's many terms, where :meth:`encode` would hash each term object."""
        found, missing = self._found_packed(tx, parts)
        if missing:
            found.update(self._assign(tx, missing))
        return found

    def find_packed(self, tx: Transaction, parts: Iterable[bytes]) -> dict[bytes, bytes]:
        """:meth:`encode_packed` that assigns nothing: the TermRef item of each packed term
        among ``parts`` that the dictionary holds (one batch of look-ups)."""
        return self._found_packed(tx, parts)[0]

    def _found_packed(self, tx: Transaction, parts: Iterable[bytes]) -> tuple[dict[bytes, bytes], list[bytes]]:
        """The items of the packed terms among ``parts`` held (committed, or assigned by
        ``tx``), and the terms not held, in first-seen order (ids do not depend on hashing)."""
        committed = self._packed
        fresh = self._fresh_state(tx) if tx.write else {"refs": {}, "empty": False, "first": b"\xff" * _ID_BYTES}
        fresh_refs = fresh["refs"]
        wanted = term_parts(parts)  # distinct
        found: dict[bytes, bytes] = {}
        for cache in (committed, fresh_refs):
            if cache and wanted:
                known = list(filter(cache.__contains__, wanted))
                found.update(zip(known, map(cache.__getitem__, known)))
                wanted = list(filterfalse(cache.__contains__, wanted))
        if wanted and not fresh["empty"]:  # else it holds only what this transaction assigned
            missing = []
            for part, stored in zip(wanted, self.space.get_many(tx, [self._key(part) for part in wanted])):
                if stored is None:
                    missing.append(part)
                else:
                    found[part] = stored
                    if not self._assigned_by(fresh, stored):
                        self._remember(committed, part, stored)
            wanted = missing
        return found, wanted

    def key_of(self, term: Any) -> bytes:
        """The key under which a term's id is found."""
        return self._key(pack_value(term))

    def _key(self, packed: bytes) -> bytes:
        """The key of a packed term's id (its hash for a long one)."""
        if len(packed) <= INLINE_TERM:
            return self._term_key + packed
        return self._hash_key + hashlib.sha256(packed).digest()

    def _fresh_state(self, tx: Transaction) -> dict:
        """What ``tx`` assigned so far (packed term -> item, item -> packed term), its next
        id, and whether the dictionary was empty when it started (read once per
        transaction)."""
        fresh = self._fresh.get(tx)
        if fresh is None:
            stored = self.space.get(tx, self._next_key)
            first = int.from_bytes(stored, "big") if stored else 0
            fresh = {"next": first, "empty": first == 0, "refs": {}, "terms": {},
                     "first": first.to_bytes(_ID_BYTES, "big")}
            self._fresh[tx] = fresh
            tx.on_commit(lambda: self._publish(fresh))
        return fresh

    def _assign(self, tx: Transaction, parts: list[bytes]) -> dict[bytes, bytes]:
        """Give new ids to packed terms none of which the dictionary holds (a C loop makes
        their items, :func:`nstore._pack.term_refs`); their keys are sorted in C and merged
        into the dictionary's blocks as one batch, appended whole into a new dictionary."""
        fresh = self._fresh_state(tx)
        number = fresh["next"]
        items = term_refs(parts, number)
        fresh["next"] = number + len(items)
        assigned = dict(zip(parts, items))
        if len(fresh["refs"]) + len(assigned) > FRESH_LIMIT:  # read back from the keys written below
            fresh["refs"].clear()
            fresh["terms"].clear()
            fresh["empty"] = False
        else:
            fresh["refs"].update(assigned)
            fresh["terms"].update(zip(items, parts))
        term_keys = list(map(self._key, parts)) if any(len(part) > INLINE_TERM for part in parts) \
            else list(map(self._term_key.__add__, parts))
        keys = [*term_keys, *map(self._id_key.__add__, items), self._next_key]
        values = [*items, *parts, fresh["next"].to_bytes(8, "big")]
        self.space.set_many(tx, list(zip(keys, values)))
        return assigned

    def _publish(self, fresh: dict) -> None:
        if len(self._packed) + len(fresh["refs"]) > _CACHE_LIMIT:
            self._packed.clear()
        self._packed.update(fresh["refs"])

    @staticmethod
    def _remember(cache: dict, key: Any, ref: Packed) -> None:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[key] = ref

    def decode(self, tx: Transaction, item: bytes) -> Any:
        """The term a TermRef item stands for (any other item decoded as it is); one read
        of the dictionary: readers cache by item themselves (see :meth:`is_fresh`)."""
        if not TERMREF_CODE <= item[0] < TERMREF_CODE + len(KIND_OF):
            return decode_item(item)
        if tx.write:
            fresh = self._fresh.get(tx)
            if fresh is not None and item in fresh["terms"]:
                return decode_item(fresh["terms"][item])
        packed = self.space.get(tx, self._id_key + item)
        if packed is None:
            raise CorruptStoreError(f"term id {item.hex()} is in a key but not in the dictionary")
        return decode_item(packed)

    def decode_many(self, tx: Transaction, items: Sequence[bytes]) -> list[Any]:
        """:meth:`decode` of many items in one loop (for bulk reads, e.g. an export)."""
        if tx.write:
            return [self.decode(tx, item) for item in items]
        prefix, low, high = self._id_key, TERMREF_CODE, TERMREF_CODE + len(KIND_OF)
        if not all(low <= item[0] < high for item in items):
            return [self.decode(tx, item) for item in items]
        found = self.space.get_many(tx, [prefix + item for item in items])
        if None in found:
            missing = items[found.index(None)]
            raise CorruptStoreError(f"term id {missing.hex()} is in a key but not in the dictionary")
        return decode_items(found)

    def packed_many(self, tx: Transaction, items: Sequence[bytes]) -> list[bytes]:
        """The stored packing (``pack_value``) of the term of each TermRef item, read in one
        sorted pass over the dictionary's blocks and never decoded: what identities join,
        for a pass that hashes them (verify). A missing id raises as :meth:`decode` does."""
        found = self.space.get_many(tx, [self._id_key + item for item in items])
        if tx.write and None in found:
            fresh = self._fresh.get(tx)
            terms = fresh["terms"] if fresh is not None else {}
            found = [packed if packed is not None else terms.get(item) for item, packed in zip(items, found)]
        if None in found:
            missing = items[found.index(None)]
            raise CorruptStoreError(f"term id {missing.hex()} is in a key but not in the dictionary")
        return found  # type: ignore[return-value]

    def is_fresh(self, tx: Transaction, item: bytes) -> bool:
        """Whether ``item`` is an id that ``tx`` assigned (and an abort would take back)."""
        fresh = self._fresh.get(tx) if tx.write else None
        return fresh is not None and self._assigned_by(fresh, item)

    @staticmethod
    def _assigned_by(fresh: dict, item: bytes) -> bool:
        """Whether TermRef ``item`` was numbered by the transaction of ``fresh`` (ids count
        up from the next id it found)."""
        return TERMREF_CODE <= item[0] < TERMREF_CODE + len(KIND_OF) and item[1:1 + _ID_BYTES] >= fresh["first"]

    def drop_unreferenced(self, tx: Transaction, referenced: set[bytes]) -> int:
        """Delete every term whose id is not in ``referenced`` (the ids some key holds; for
        gc, with no other handle on the store open: ids are never reused, but a cache of
        another handle would still name a dropped one). Returns how many."""
        start = self._id_key
        dropped = [(item, packed) for item, packed in ((key[len(start):], packed)
                   for key, packed in self.space.range(tx, start, prefix_end(start))) if item not in referenced]
        keys = sorted([start + item for item, _ in dropped] + [self._key(packed) for _, packed in dropped])
        self.space.apply(tx, keys, [None] * len(keys))
        self._refs.clear()
        self._packed.clear()
        return len(dropped)

    def problems(self, tx: Transaction) -> Iterator[str]:
        """Each way the dictionary contradicts itself: an id whose term does not map back
        to it, an id of the wrong kind for its term, a term -> id entry with no id -> term
        entry, ids past the next id (O(terms); for verify).

        Both directions are compared as sums of the hashes of their ``(term key, id)``
        pairs, a batch at a time; only if the sums differ is each id looked up, to name
        the one that does not map back."""
        stored = self.space.get(tx, self._next_key)
        next_id = int.from_bytes(stored, "big") if stored else 0
        ids = forward = 0
        skip = len(self._id_key)
        for keys, terms in self.space.batches(tx, self._id_key, prefix_end(self._id_key)):
            items = [key[skip:] for key in keys]
            ids += len(items)
            for item, packed in zip(items, terms):
                kind = KIND_OF_CODE.get(packed[0]) if packed else None
                if len(item) != 6 or kind is None or item[0] != TERMREF_CODE + kind:
                    yield f"dictionary: id {item.hex()} holds {packed[:40].hex()}, not a term of its kind"
                elif int.from_bytes(item[1:], "big") >= next_id:
                    yield f"dictionary: id {item.hex()} is not below the next id {next_id}"
            forward += sum(map(hash, zip(map(self._key, terms), items)))
        entries = backward = 0
        for start in (self._hash_key, self._term_key):  # a hash may start with ff: the whole span
            for keys, items in self.space.batches(tx, start, prefix_end(start)):
                entries += len(keys)
                backward += sum(map(hash, zip(keys, items)))
        if forward % (1 << 64) != backward % (1 << 64):
            for item, packed in self.space.range(tx, self._id_key, prefix_end(self._id_key)):
                if self.space.get(tx, self._key(packed)) != item[skip:]:
                    yield f"dictionary: the term of id {item[skip:].hex()} ({packed[:40].hex()}) does not map back to it"
        if entries != ids:
            yield f"dictionary: {entries} term -> id entries but {ids} id -> term entries"

    def entries(self, tx: Transaction) -> Iterator[tuple[bytes, Any]]:
        """Every ``(TermRef item, term)`` stored, in id-key order (for verify and stats)."""
        start = self._id_key
        for key, packed in self.space.range(tx, start, start + b"\xff"):
            yield key[len(start):], decode_item(packed)
