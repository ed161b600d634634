"""Bulk loading for :class:`nstore.NStore`: column-wise encoding, one sort per index,
appends.

``NStore.bulk_add`` hands its tuples here. The work is arranged so that the per-tuple
steps run inside C loops (``map``, ``zip``, ``bytes.join``, ``list.sort``, ``bisect``)
rather than in Python bytecode:

1. The input is cut into chunks of at most ``CHUNK`` tuples, which bounds the memory
   of the keys built below (each chunk is sorted and written before the next is read).
2. Each column is encoded at once, with exactly ``NStore._encode``'s bytes (long values
   become blob references). A column of IRIs or of strings is encoded per distinct value
   when it has few of them, else value by value in C loops; other columns go through one
   loop specialised for IRIs and literals.
3. The keys of index 0 are built; if the store already holds tuples, those present are
   dropped (one point lookup each). Duplicates inside the chunk are found after sorting
   (they are adjacent) and dropped from every index.
4. Each index is written with one ``set_many(ascending=True)`` of its sorted keys, so LMDB
   appends pages when the keys sort after everything stored. The keys of an index are
   either built from the columns and sorted, or *derived* from an index already written
   whose permutation is a rotation of it: if index B is index A with its first k items
   moved to the end, then within each group of A's sorted keys sharing those k items,
   B's keys (``prefix_B + rest + moved items``) are already in order. Sorting the
   concatenated groups merges as many sorted runs as there are groups, which for
   columns with few distinct values (graphs, predicates, the commit of a change) costs
   a fraction of a full sort.

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

from bisect import bisect_left
from itertools import compress, groupby, islice, repeat
from operator import attrgetter, eq, getitem, itemgetter
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from .blobs import digest_of
from .okvs import prefix_end
from .pack import BLOBREF_CODE, _item_end
from .terms import IRI, Literal

if TYPE_CHECKING:  # pragma: no cover
    from .okvs import Transaction
    from .store import NStore

__all__ = ["bulk_add", "CHUNK"]

# Tuples handled per round: the keys of one index for this many tuples are held in
# memory at once (about 200 MB per index for quads of ~130-byte keys).
CHUNK = 1 << 20
# A column whose sample has at most one distinct value in this many is encoded per
# distinct value (shared bytes objects); others value by value (sequential memory).
_DISTINCT_RATIO = 8
_SAMPLE = 4096
# Derivation gives up (and sorts from scratch) past max(_MIN_GROUPS, N >> 10) groups.
_MIN_GROUPS = 64

_value_of = attrgetter("value")
_BLOB = bytes((BLOBREF_CODE,))
_IRI = b"\x40"
_STR = b"\x02"
_END = b"\x00"


def _escape(raw: bytes) -> bytes:
    return raw.replace(b"\x00", b"\x00\xff")


def _few_distinct(keys: list) -> bool:
    sample = keys[:: max(1, len(keys) // _SAMPLE)]
    return len(set(sample)) * _DISTINCT_RATIO <= len(sample)


class _ColumnEncoder:
    """Encodes columns of values exactly as ``NStore._encode`` does, and notes whether any
    item became a blob reference (type code 0x4F)."""

    def __init__(self, store: NStore) -> None:
        self.limit = store.inline_limit
        self.slow = store._encode  # the reference encoder (errors, rare types)
        self.iris: dict[str, bytes] = {}
        self.strs: dict[Any, bytes] = {}
        self.literal_tails: dict[tuple, bytes] = {}
        self.blobs = False

    def _checked(self, packed: bytes) -> bytes:
        if len(packed) > self.limit:
            self.blobs = True
            return _BLOB + digest_of(packed)
        return packed

    def iri(self, text: str) -> bytes:
        try:
            packed = _IRI + _escape(text.encode("utf-8")) + _END
        except UnicodeEncodeError:
            packed = self.slow(IRI(text))  # raises the PackError naming the value
        return self._checked(packed)

    def string(self, value: Any) -> bytes:
        packed = self.slow(value)
        if packed[0] == BLOBREF_CODE:
            self.blobs = True  # a long value, or a BlobRef given as a value (as in add)
        return packed

    def literal(self, value: Literal) -> bytes:
        try:
            lexical = value.lexical.encode("utf-8")
            datatype = value.datatype
            tail_key = (datatype.value if datatype is not None else None, value.lang)
            tail = self.literal_tails.get(tail_key)
            if tail is None:
                tail = self.literal_tails[tail_key] = (
                    _END
                    + _escape((tail_key[0] or "").encode("utf-8"))
                    + _END
                    + _escape((tail_key[1] or "").encode("utf-8"))
                    + _END
                )
        except UnicodeEncodeError:
            return self.string(value)  # raises the PackError naming the value
        return self._checked(b"\x42" + _escape(lexical) + tail)

    def column(self, values: list) -> list[bytes]:
        kinds = set(map(type, values))
        if len(kinds) == 1:
            kind = kinds.pop()
            if kind is IRI:
                texts = list(map(_value_of, values))
                if _few_distinct(texts):
                    return self._by_distinct(texts, self.iris, self.iri)
                return self._direct(texts, _IRI) or self._mixed(values)
            if kind is str:
                if _few_distinct(values):
                    return self._by_distinct(values, self.strs, self.string)
                return self._direct(values, _STR) or self._mixed(values)
        return self._mixed(values)

    def _by_distinct(self, keys: list, memo: dict, encode: Callable[[Any], bytes]) -> list[bytes]:
        """Encode each distinct key once, then look every row up (both loops in C)."""
        for key in set(keys).difference(memo):
            memo[key] = encode(key)
        return list(map(memo.__getitem__, keys))

    def _direct(self, texts: list[str], code: bytes) -> list[bytes] | None:
        """``code + utf-8 + 0x00`` per text in C loops; None if some text needs escaping,
        is too long to stay inline, or is not valid Unicode (the caller then goes value
        by value)."""
        try:
            raw = list(map(str.encode, texts))
        except UnicodeEncodeError:
            return None
        if max(map(len, raw)) + 2 > self.limit or b"\x00" in b"".join(raw):
            return None
        return list(map(b"".join, zip(repeat(code), raw, repeat(_END))))

    def _mixed(self, values: list) -> list[bytes]:
        iris = self.iris
        iri_get = iris.get
        strs = self.strs
        str_get = strs.get
        iri = self.iri
        literal = self.literal
        string = self.string
        out: list[bytes] = []
        append = out.append
        for value in values:
            kind = type(value)
            if kind is IRI:
                text = value.value
                packed = iri_get(text)
                if packed is None:
                    packed = iris[text] = iri(text)
            elif kind is Literal:
                packed = literal(value)
            elif kind is str:
                packed = str_get(value)
                if packed is None:
                    packed = strs[value] = string(value)
            else:
                packed = string(value)
            append(packed)
        return out


def _unique_sorted(keys: list[bytes]) -> list[bytes]:
    return [key for key, _ in groupby(keys)]


def _rotation(source: Sequence[int], target: Sequence[int]) -> int:
    """k such that ``target == source[k:] + source[:k]`` (0 < k < n), else 0."""
    source, target = tuple(source), tuple(target)
    for k in range(1, len(source)):
        if source[k:] + source[:k] == target:
            return k
    return 0


def _derive(keys: list[bytes], skip: int, k: int, prefix: bytes, limit: int) -> list[bytes] | None:
    """The sorted keys of the index that is the rotation by ``k`` items of the index whose
    sorted keys (prefix of ``skip`` bytes) are ``keys``; None past ``limit`` groups."""
    out: list[bytes] = []
    extend = out.extend
    start, count, groups = 0, len(keys), 0
    while start < count:
        groups += 1
        if groups > limit:
            return None
        key = keys[start]
        end = skip
        for _ in range(k):
            end = _item_end(key, end)
        head = key[:end]
        stop = bisect_left(keys, prefix_end(head), start)
        moved = head[skip:]
        rest = map(getitem, islice(keys, start, stop), repeat(slice(end, None)))
        extend(map(b"".join, zip(repeat(prefix), rest, repeat(moved))))
        start = stop
    out.sort()  # merges one sorted run per group
    return out


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


def _plan(store: NStore, columns: list[list[bytes]]) -> list[tuple[int, int, int]]:
    """The order in which to write the indices: ``(index, source, k)``, where ``source``
    is -1 for an index built and sorted from the columns, else an index written before
    whose rotation by ``k`` it is and whose first k columns look to have few values."""
    few = [_few_distinct(column) for column in columns]
    indices = store.indices
    best: dict[int, tuple[int, int]] = {}
    for target, perm in enumerate(indices):
        for source, other in enumerate(indices):
            k = _rotation(other, perm) if source != target else 0
            if k and all(few[i] for i in other[:k]) and (target not in best or k < best[target][1]):
                best[target] = (source, k)
    order: list[tuple[int, int, int]] = []
    state: dict[int, bool] = {}  # False while visiting, True once placed

    def visit(target: int) -> None:
        if target in state:
            return
        state[target] = False
        source, k = best.get(target, (-1, 0))
        if source >= 0 and state.get(source) is not False:
            visit(source)
            order.append((target, source, k))
        else:
            order.append((target, -1, 0))
        state[target] = True

    for target in range(len(indices)):
        visit(target)
    return order


def _add_chunk(store: NStore, tx: Transaction, rows: list[Sequence[Any]], payload: bytes) -> int:
    n = store.n
    if set(map(len, rows)) != {n}:
        for values in rows:
            if len(values) != n:
                store._check_arity(values, "tuple")  # raises PatternError naming the tuple
    encoder = _ColumnEncoder(store)
    columns = [encoder.column(list(map(itemgetter(j), rows))) for j in range(n)]
    count = len(rows)
    prefixes = store._index_prefixes
    indices = store.indices

    def unsorted_keys(number: int) -> list[bytes]:
        return list(map(b"".join, zip(repeat(prefixes[number], count), *[columns[i] for i in indices[number]])))

    first: list[bytes] | None = None  # index 0's keys in row order, when needed
    if next(tx.prefix(prefixes[0], limit=1), None) is not None:
        # The store holds tuples: keep only the absent ones (one point lookup each).
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
    if encoder.blobs:
        # Count one reference per new tuple, as add does: the first occurrence of each.
        if first is None:
            first = unsorted_keys(0)
        seen: dict[bytes, int] = {}
        for row, key in enumerate(first):
            seen.setdefault(key, row)
        for row in sorted(seen.values()):
            encoded = [column[row] for column in columns]
            if any(item[0] == BLOBREF_CODE for item in encoded):
                store._store_blobs(tx, rows[row], encoded, keep=True)
    order = _plan(store, columns)
    # An index's keys are kept only while an index still to come derives from them.
    last_use = {source: position for position, (_, source, _) in enumerate(order) if source >= 0}
    written: dict[int, list[bytes]] = {}
    limit = max(_MIN_GROUPS, count >> 10)
    added = duplicates = None
    for position, (number, source, k) in enumerate(order):
        keys = None
        if source >= 0:
            keys = _derive(written[source], len(prefixes[source]), k, prefixes[number], limit)
        if keys is None:
            keys = first if number == 0 and first is not None else unsorted_keys(number)
            keys.sort()
            if duplicates is None:  # the first index written: duplicates are adjacent
                duplicates = any(map(eq, keys, islice(keys, 1, None)))
            if duplicates:
                keys = _unique_sorted(keys)
        if added is None:
            added = len(keys)
        tx.set_many(keys, ascending=True, value=payload)
        if position < last_use.get(number, -1):
            written[number] = keys
        for done in [i for i in written if last_use[i] <= position]:
            del written[done]
        del keys
    return added
