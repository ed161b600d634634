"""The change records of every commit, and the state of quads at any commit.

Each change is a record ``(graph, subject, predicate, object, seq)`` whose payload says
whether the quad is alive after commit ``seq``. Records live in an n-tuple store with the
six quad index orders, each followed by ``seq`` (so all versions of a quad are adjacent and
in significance order), plus one index led by ``seq`` (what did commit X change): 7
indices. **History significance**: the state of a quad at commit c is the payload of its
most significant record among c's ancestors; a query at c is one streaming pass over the
records matching its pattern, picking one winner per quad.
"""

from __future__ import annotations

from itertools import islice
from typing import Any, Callable, Iterable, Iterator, Sequence

from nstore import NStore, Var
from nstore.indices import minimal_permutations
from nstore.okvs import Okvs, Transaction
from nstore.pack import BlobRef, find_items, pack_value, split
from nstore.store import Param
from nstore.terms import IRI, BNode, Literal

from .ranges import NumericRange
from .values import to_rdf

__all__ = ["History", "QUAD_ITEMS", "HISTORY_INDICES", "ALIVE", "DEAD", "Quad"]

Quad = tuple[Any, Any, Any, Any]
QUAD_ITEMS = ("graph", "subject", "predicate", "object")
HISTORY_INDICES = tuple(perm + (4,) for perm in minimal_permutations(4)) + ((4, 0, 1, 2, 3),)
ALIVE = b"\x01"
DEAD = b"\x00"
_SEQ = Var("\x00seq")  # a name no user variable can take
_MISSING = object()
_TERMS: dict[bytes, Any] = {}  # packed item -> RDF term, for match(terms=True)
_TERMS_LIMIT = 1 << 18
_AS_TERM = frozenset({IRI, BNode, Literal, type(None), Var})  # pattern items to_rdf leaves alone
_SLOTS: dict[tuple[int, ...], tuple[tuple[int, int], ...]] = {}  # by the free positions of a read
_BLOB_CODE = pack_value(BlobRef(bytes(32)))[0]
_QUAD_VARS = tuple(Var(f"\x00{name}") for name in QUAD_ITEMS)


def winner(records: Iterable[tuple[int, bool]], ancestors: frozenset[int] | set[int]) -> tuple[int, bool] | None:
    """The most significant record among ``ancestors`` (records come in seq order)."""
    best = None
    for record in records:
        if record[0] in ancestors:
            best = record
    return best


class History:
    """Change records under the key prefix ``("h",)`` (see the module docstring)."""

    def __init__(self, okvs: Okvs) -> None:
        self.store = NStore(okvs, ("h",), QUAD_ITEMS + ("seq",), indices=HISTORY_INDICES)
        self._packed_ancestries: dict[frozenset[int], frozenset[bytes]] = {}

    def identity(self, quad: Quad) -> bytes:
        """The packed quad as it stands in the records' keys: a dict key that tells apart
        values Python calls equal (1, 1.0, True), and sorts in the change index's order."""
        return self.store.identity(*quad)

    def write(self, tx: Transaction, seq: int, changes: Iterable[tuple[Quad, bool, bytes | None]]) -> list[bytes]:
        """Record that commit ``seq`` set each quad to alive / dead; each change may carry
        the quad's :meth:`identity` if known. Returns the records as
        :meth:`packed_changes_of` will read them back (what the commit id hashes)."""
        born: list[tuple] = []
        died: list[tuple] = []
        packed: list[bytes] = []
        identity = self.store.identity
        for quad, alive, key in changes:
            (born if alive else died).append((*quad, seq))
            packed.append((key or identity(*quad)) + (ALIVE if alive else DEAD))
        if born:
            self.store.bulk_add(tx, born, payload=ALIVE)
        if died:
            self.store.bulk_add(tx, died, payload=DEAD)
        packed.sort()
        return packed

    def records(self, tx: Transaction, quad: Quad) -> list[tuple[int, bool]]:
        """Every ``(seq, alive)`` record of one quad, in significance order."""
        decode = self.store.decode
        _, rows = self.store.raw(tx, *quad, _SEQ)
        return [(decode(tx, items[0]), payload == ALIVE) for items, payload in rows]

    def state(self, tx: Transaction, quad: Quad, ancestors: frozenset[int]) -> bool:
        """Whether ``quad`` is alive at the commit whose ancestry is ``ancestors``."""
        best = winner(self.records(tx, quad), ancestors)
        return best is not None and best[1]

    def _packed(self, ancestors: frozenset[int]) -> frozenset[bytes]:
        """The ancestry as packed seq items, so records are tested without decoding
        (cached: a view or transaction reads with one ancestry many times)."""
        packed = self._packed_ancestries.get(ancestors)
        if packed is None:
            if len(self._packed_ancestries) >= 64:
                self._packed_ancestries.clear()
            encode = self.store.identity
            packed = self._packed_ancestries[ancestors] = frozenset(encode(seq) for seq in ancestors)
        return packed

    def match(
        self,
        tx: Transaction,
        pattern: Sequence[Any],
        ancestors: frozenset[int],
        within: NumericRange | None = None,
        terms: bool = False,
    ) -> Iterator[Quad]:
        """Yield each quad matching ``pattern`` (values or Var) alive at that ancestry, with
        its Var positions filled in, in index order. One pass; no walk of the DAG.
        ``within`` keeps the quads whose object (a Var) lies in its spans; ``terms`` gives
        every item as its RDF term (``to_rdf``) rather than its stored value."""
        if not ancestors:
            return iter(())
        spans = None if within is None else within.spans()
        if spans is None:
            free, skip, keys = self.store.keys(tx, *pattern, _SEQ)
        else:
            free, skip, keys = self.store.keys(tx, *pattern, _SEQ, within=(3, spans))
        fill = self._filler(tx, list(pattern), free, terms)
        return _winners(keys, skip, len(free), self._packed(ancestors), fill)

    def prepare(
        self, pattern: Sequence[Any], ancestors: frozenset[int], terms: bool = False
    ) -> Callable[[Transaction, Sequence[Any]], Iterator[Quad]]:
        """:meth:`match` planned once for a pattern with :class:`~nstore.store.Param`
        positions: the function returned takes a transaction and the values of those
        positions (in pattern order) and yields what :meth:`match` would."""
        read = self.store.prepare(*pattern, _SEQ)
        params = [i for i, item in enumerate(pattern) if type(item) is Param]
        base = list(pattern)
        count = len(read.free)
        packed = self._packed(ancestors) if ancestors else None

        def run(tx: Transaction, values: Sequence[Any]) -> Iterator[Quad]:
            if packed is None:
                return iter(())
            template = base.copy()
            for position, value in zip(params, values):
                template[position] = value
            skip, keys = read.keys(tx, values)
            return _winners(keys, skip, count, packed, self._filler(tx, template, read.free, terms))

        return run

    def _filler(self, tx: Transaction, template: list[Any], free: tuple[int, ...], terms: bool) -> Callable[[list[bytes]], Quad]:
        """The function that turns a winner's packed free items into its quad: ``template``
        (the pattern's values) with the free positions decoded, as stored values or as
        RDF terms (``terms``), each through a cache of decoded items."""
        if terms:
            cached, decode = _TERMS.get, self._term
            if not _AS_TERM.issuperset(map(type, template)):
                template = [item if type(item) in _AS_TERM else to_rdf(item) for item in template]
        else:
            cached, decode = self.store.decoded.get, self.store.decode
        slots = _SLOTS.get(free)
        if slots is None:
            slots = _SLOTS[free] = tuple(enumerate(free[:-1]))  # (slot in a key, position in the quad)

        def fill(items: list[bytes]) -> Quad:
            values = template.copy()
            for slot, position in slots:
                item = items[slot]
                value = cached(item, _MISSING)
                values[position] = decode(tx, item) if value is _MISSING else value
            return tuple(values)  # type: ignore[return-value]

        return fill

    def match_packed(
        self, tx: Transaction, pattern: Sequence[Any], ancestors: frozenset[int]
    ) -> tuple[tuple[int, ...], Iterator[list[bytes]]]:
        """:meth:`match` without decoding: the free positions of ``pattern`` in index order
        (seq last) and, per alive quad, its packed free items (seq dropped), for readers
        that turn bytes into columns themselves (decode an item with ``store.decode``)."""
        if not ancestors:
            return (), iter(())
        free, skip, keys = self.store.keys(tx, *pattern, _SEQ)
        return free, _winners(keys, skip, len(free), self._packed(ancestors), None)

    def _term(self, tx: Transaction, item: bytes) -> Any:
        """The RDF term of a packed item (cached, blobs aside: they are checked per read)."""
        term = to_rdf(self.store.decode(tx, item))
        if item[0] != _BLOB_CODE:
            if len(_TERMS) >= _TERMS_LIMIT:
                _TERMS.clear()
            _TERMS[item] = term
        return term

    def count(self, tx: Transaction, pattern: Sequence[Any], ancestors: frozenset[int], cap: int | None = None) -> int:
        """How many quads match ``pattern`` at that ancestry (at most ``cap``, counting
        stops there): :meth:`match` without decoding the quads."""
        if not ancestors:
            return 0
        free, skip, keys = self.store.keys(tx, *pattern, _SEQ)
        alive = _winners(keys, skip, len(free), self._packed(ancestors), None)
        if cap is None:
            return sum(1 for _ in alive)
        return sum(1 for _ in islice(alive, cap))

    def graphs(self, tx: Transaction, ancestors: frozenset[int]) -> list[Any]:
        """The graphs holding at least one quad at that ancestry, in key order: a skip scan
        over the graph-led index, one seek per graph ever written."""
        found: list[Any] = []
        if not ancestors:
            return found
        index_prefix = self.store.index_prefix(0)  # index 0 leads with the graph
        end = index_prefix + b"\xff"
        start = index_prefix
        while True:
            first = next(tx.range(start, end, limit=1), None)
            if first is None:
                return found
            item = split(first[0], len(index_prefix))[0]
            graph = self.store.decode(tx, item)
            if self.count(tx, (graph, *_QUAD_VARS[1:]), ancestors, cap=1):
                found.append(graph)
            # Past every key of this graph item: the next item's type code is below 0xff,
            # and a longer value sharing these bytes continues with its escape 0x00 0xff.
            start = index_prefix + item + b"\xff"

    def match_records(self, tx: Transaction, pattern: Sequence[Any]) -> Iterator[tuple[Quad, list[tuple[int, bool]]]]:
        """Yield ``(quad, [(seq, alive), ...])`` for every quad matching ``pattern`` that has
        records, whatever its state."""
        decode = self.store.decode
        group: list[bytes] | None = None
        records: list[tuple[int, bool]] = []
        free, rows = self.store.raw(tx, *pattern, _SEQ)
        fill = self._filler(tx, list(pattern), free, False)
        for items, payload in rows:
            head = items[:-1]
            if head != group:
                if group is not None:
                    yield fill(group), records
                group, records = head, []
            records.append((decode(tx, items[-1]), payload == ALIVE))
        if group is not None:
            yield fill(group), records

    def changes_of(self, tx: Transaction, seq: int) -> Iterator[tuple[Quad, bool]]:
        """The records commit ``seq`` wrote: ``(quad, alive)`` in key order."""
        for quad, payload in self.store.scan(tx, *_QUAD_VARS, seq):
            yield quad[:4], payload == ALIVE

    def packed_changes_of(self, tx: Transaction, seq: int) -> Iterator[bytes]:
        """The records of commit ``seq`` as packed bytes (what its id hashes), in key order."""
        _, rows = self.store.raw(tx, *_QUAD_VARS, seq)
        for items, payload in rows:
            yield b"".join(items) + payload


def _winners(
    keys: Iterator[tuple[bytes, bytes]], skip: int, count: int, ancestors: frozenset[bytes], fill: Any
) -> Iterator[Any]:
    """For each group of records of one quad (adjacent, in significance order) whose last
    record among the packed ``ancestors`` says alive: ``fill(items)`` of its packed free
    items (seq dropped), or the items themselves if ``fill`` is None. The hot loop of every
    read: keys are split here, and only winners are decoded."""
    group: list[bytes] | None = None
    alive = False
    for key, payload in keys:
        items = find_items(key, skip)
        if len(items) != count:
            items = split(key, skip, count)
        seq = items.pop()
        if items != group:
            if alive:
                yield group if fill is None else fill(group)
            group = items
            alive = False
        if seq in ancestors:
            alive = payload == ALIVE
    if alive:
        yield group if fill is None else fill(group)
