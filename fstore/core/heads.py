"""Materialised heads: the state at a commit read from a snapshot plus a small overlay.

A **snapshot** is a set of quads (key items) in the six quad index orders, led by its
number: the state at one commit, its ``seq``. Each branch with commits uses one snapshot;
the branch that **owns** it moves it forward on every commit, by the commit's changes
(O(changes)). Branches made from another share its snapshot (creation writes one key) and
read it through an **overlay**: the quads whose state differs between the snapshot's commit
and theirs, worked out from the change records of the commits in the symmetric difference
of the two ancestries (O(changes between them), cached per process). A branch whose overlay
grows past :data:`OVERLAY_LIMIT` (or an eighth of the snapshot) gets a snapshot of its own.
Time travel is the same read: any commit is the nearest snapshot plus its overlay.

So a read at a branch head touches only live quads (and the overlay), whatever the length
of history. ``docs/format.md`` gives the keys.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="m") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), 1)
>>> repo.branch("edit")
>>> with repo.transaction("edit", message="e") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), 2)
>>> sorted(q[3].value for q in fstore.quads(repo.at("edit"), None, fstore.Var("s"), fstore.Var("p"), fstore.Var("o")))
[1, 2]
>>> repo.close()
"""

from __future__ import annotations

from collections import Counter
from itertools import chain, compress, islice
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence

import msgpack

from nstore import NStore, Var
from nstore.dictionary import ABSENT, Dictionary
from nstore.errors import CorruptStoreError, DataeError
from nstore.indices import minimal_permutations
from nstore.okvs import Okvs, Transaction
from nstore._pack import split_rows
from nstore.pack import Packed, decode_item, find_items, pack, pack_value, split, unpack
from nstore.store import Param

from .commits import CommitStore
from .layout import Quad, Space
from .ranges import NumericRange
from .refs import BRANCH, Refs
from nstore.terms import to_rdf

__all__ = ["Heads", "Reader", "Overlay", "ItemChanges", "Records", "SNAPSHOT_INDICES", "OVERLAY_LIMIT", "repeated_vars"]


class Records(Protocol):
    """What the snapshots read of their space's history (a
    :class:`fstore.core.history.History`, which builds its :class:`Heads` and so imports
    this module: this protocol keeps the import one way)."""

    space: Space
    store: NStore
    commits: CommitStore
    dictionary: Dictionary

    def has_records(self, tx: Transaction) -> bool: ...

    def state_changes(self, tx: Transaction, before: frozenset[int],
                      after: frozenset[int]) -> Iterator[tuple[bytes, list[bytes], bool]]: ...

    def encode(self, tx: Transaction, values: Sequence[Any], create: bool = False) -> list[Any] | None: ...

    def item_bytes(self, items: Sequence[Any]) -> list[Any]: ...

    def decoding(self, terms: bool) -> tuple[dict[bytes, Any], Callable[[Transaction, bytes], Any]]: ...

    def decoder(self, tx: Transaction, terms: bool) -> Callable[[bytes], Any]: ...

SNAPSHOT_INDICES = tuple((0,) + tuple(i + 1 for i in perm) for perm in minimal_permutations(4))
_BY_PAIR = next(number for number, perm in enumerate(SNAPSHOT_INDICES) if perm[:3] == (0, 1, 3))  # snapshot, graph, predicate
_PAIR, _PREDICATE = 0, 1  # the kinds of count keys (Heads._add_counts)
OVERLAY_LIMIT = 20_000
_ITEMS = ("snapshot", "graph", "subject", "predicate", "object")
_AS_TERM = frozenset({type(None), Var, Param})
_CACHED_OVERLAYS = 32
_CHUNK = 512  # rows a scan decodes the terms of in one batch
_PREPARED_KEPT = 4096  # prepared snapshot reads Heads keeps (then it starts again)
_MISSING = object()


class Overlay:
    """Quads whose state at a commit differs from a snapshot's: ``born`` (alive at the
    commit, absent from the snapshot; identity bytes -> the four key items) and ``dead``
    (in the snapshot, dead at the commit; identity bytes)."""

    __slots__ = ("born", "dead", "_indexed", "_deltas")

    def __init__(self, born: dict[bytes, list[bytes]] | None = None, dead: set[bytes] | None = None) -> None:
        self.born = born if born is not None else {}
        self.dead = dead if dead is not None else set()
        self._indexed: dict[tuple[int, ...], dict[tuple[bytes, ...], list[list[bytes]]]] = {}
        self._deltas: Counter[tuple[bytes | None, bytes | None]] | None = None

    def count_delta(self, graph: bytes | None, predicate: bytes | None) -> int:
        """How many more quads of ``graph`` with ``predicate`` (None: any) are alive here
        than in the snapshot: born ones less dead ones (tallied once per overlay)."""
        deltas = self._deltas
        if deltas is None:
            deltas = self._deltas = Counter()
            for sign, quads in ((1, self.born.values()), (-1, (split(ident, 0, 4) for ident in self.dead))):
                for g, _, p, _ in quads:
                    for key in ((g, p), (None, p), (g, None), (None, None)):
                        deltas[key] += sign
        return deltas[(graph, predicate)]

    def predicate_deltas(self, graph: bytes) -> dict[bytes, int]:
        """:meth:`count_delta` of ``graph`` with each predicate the overlay changes."""
        self.count_delta(graph, None)  # tallied
        return {p: delta for (g, p), delta in self._deltas.items() if g == graph and p is not None and delta}  # type: ignore[union-attr]

    def __len__(self) -> int:
        return len(self.born) + len(self.dead)

    def find(self, bound: Sequence[tuple[int, bytes]]) -> Iterable[list[bytes]]:
        """The born quads whose items at the bound positions are those bytes."""
        if not self.born:
            return ()
        if not bound:
            return self.born.values()
        positions = tuple(position for position, _ in bound)
        index = self._indexed.get(positions)
        if index is None:
            index = self._indexed[positions] = {}
            for items in self.born.values():
                index.setdefault(tuple(items[p] for p in positions), []).append(items)
        return index.get(tuple(item for _, item in bound), ())


_EMPTY = Overlay()


class ItemChanges:
    """The quads a commit changed in one space, as key items by column: ``columns`` (the
    graph, subject, predicate and object items of each change) and ``alive`` (each change's
    state after it). Columns rather than a tuple per quad: a snapshot's keys are built and
    sorted from them in C (:func:`nstore._blocks.sorted_changes`)."""

    __slots__ = ("columns", "alive")

    def __init__(self, columns: Sequence[Sequence[bytes]], alive: Sequence[bool]) -> None:
        self.columns = [list(column) for column in columns] if alive else [[], [], [], []]
        self.alive = list(alive)

    @classmethod
    def of(cls, changes: Iterable[tuple[Sequence[bytes], bool]]) -> ItemChanges:
        """From ``(items, alive)`` pairs."""
        rows = list(changes)
        return cls(list(zip(*[items for items, _ in rows])), [alive for _, alive in rows])

    def __len__(self) -> int:
        return len(self.alive)

    def where(self, alive: bool) -> list[list[bytes]]:
        """The columns of the changes to ``alive``."""
        mask = self.alive if alive else [not state for state in self.alive]
        return [list(compress(column, mask)) for column in self.columns]


class Heads:
    """The snapshots of a repository and the branches' use of them."""

    def __init__(self, history: Records, okvs: Okvs) -> None:
        self.history = history
        space = history.space
        self.store = NStore(okvs, space.snapshots, _ITEMS, indices=SNAPSHOT_INDICES, blobs=history.store.blobs, blocks=True)
        self._meta_tag, self._branch_tag = space.meta, space.branch
        self._metas = pack(space.meta)  # pack(meta, number) -> msgpack [seq, owner or None, count]
        self._branches = pack(space.branch)  # pack(branch tag, name) -> pack(snapshot number)
        self._counts_tag = space.counts  # pack(counts tag, number, kind) + items -> pack(quads)
        self._overlays: dict[tuple[int | None, int], Overlay] = {}
        self._choices: dict[tuple, int | None] = {}
        # Prepared reads of snapshot patterns, by snapshot and key items: a plan depends on
        # neither the transaction nor the data, and queries repeat their patterns.
        self.prepared_reads: dict[tuple, Any] = {}

    # -- metadata ---------------------------------------------------------------------------

    def metas(self, tx: Transaction) -> dict[int, tuple[int, str | None, int]]:
        """Every snapshot: number -> (seq of its commit, owner branch, quad count)."""
        found = {}
        for key, value in tx.range(self._metas, self._metas + b"\xff"):
            try:
                seq, owner, count = msgpack.unpackb(value)
                found[unpack(key)[1]] = (seq, owner, count)
            except (DataeError, ValueError, TypeError, msgpack.UnpackException) as exc:
                raise CorruptStoreError(f"{self.history.space.name} snapshot record {key.hex()} is damaged: {exc}") from None
        return found

    def _set_meta(self, tx: Transaction, number: int, seq: int, owner: str | None, count: int) -> None:
        tx.set(pack(self._meta_tag, number), msgpack.packb([seq, owner, count]))

    def of_branch(self, tx: Transaction, branch: str) -> int | None:
        value = tx.get(pack(self._branch_tag, branch))
        return None if value is None else unpack(value)[0]

    def _use(self, tx: Transaction, branch: str, number: int | None) -> None:
        key = pack(self._branch_tag, branch)
        if number is not None:
            tx.set(key, pack(number))
        elif tx.get(key) is not None:
            tx.delete(key)

    def used(self, tx: Transaction) -> set[int]:
        """The snapshots some branch reads."""
        return {unpack(value)[0] for _, value in tx.range(self._branches, self._branches + b"\xff")}

    def drop_unused(self, tx: Transaction) -> int:
        """Drop every snapshot no branch reads; returns how many (for gc)."""
        used = self.used(tx)
        unused = [number for number in self.metas(tx) if number not in used]
        for number in unused:
            self._drop(tx, number)
        return len(unused)

    def _users(self, tx: Transaction, number: int) -> list[str]:
        start = self._branches
        return [unpack(key)[1] for key, value in tx.range(start, start + b"\xff") if unpack(value)[0] == number]

    def _new(self, tx: Transaction, seq: int, owner: str) -> int:
        metas = self.metas(tx)
        number = max(metas, default=0) + 1
        self._set_meta(tx, number, seq, owner, 0)
        return number

    # -- branch life cycle (called by the repository in its write transactions) -----------

    def branch_created(self, tx: Transaction, name: str, seq: int | None, start_branch: str | None) -> None:
        """A new branch at ``seq`` shares a snapshot (the one of ``start_branch`` if given,
        else the nearest): one key written."""
        if seq is None:
            self._use(tx, name, None)
            return
        number = self.of_branch(tx, start_branch) if start_branch is not None else None
        if number is None:
            number = self._choose(tx, seq, self.metas(tx))
        self._use(tx, name, number)

    def branch_deleted(self, tx: Transaction, name: str) -> None:
        """Hand the snapshots the branch owned to a branch still using them (which folds its
        overlay in), or drop them."""
        number = self.of_branch(tx, name)
        self._use(tx, name, None)
        if number is None:
            return
        metas = self.metas(tx)
        seq, owner, count = metas.get(number, (None, None, 0))
        if owner != name:
            return
        users = self._users(tx, number)
        if not users:
            self._drop(tx, number)
            return
        heir = users[0]
        self._set_meta(tx, number, seq, heir, count)
        head = Refs().get(tx, BRANCH, heir)[1]
        if head is not None and head != seq:
            self._fold(tx, number, seq, head, heir, count)

    def moved(self, tx: Transaction, branch: str, parents: Sequence[int], seq: int,
              changes: ItemChanges | None) -> bool:
        """Branch ``branch`` moved to commit ``seq`` (a commit whose parents are ``parents``
        and whose records are ``changes``, or a fast-forward: ``changes`` None). Moves its
        snapshot if it owns one, else checks that its overlay stays small. Returns True if
        it applied ``changes`` themselves to the snapshot, False if it read the commit's
        records instead (a fold or an overlay: they hold every change of the commit)."""
        metas = self.metas(tx)
        number = self.of_branch(tx, branch)
        if number is None and not metas and not changes:
            return False  # nothing in this space yet: no snapshot to keep
        if number is None or number not in metas:
            # A branch without a snapshot: share the nearest, unless this is a root commit.
            number = self._choose(tx, seq, metas) if parents or changes is None else None
            if number is None:  # start one from nothing
                number = self._new(tx, 0, branch)
            self._use(tx, branch, number)
            metas = self.metas(tx)
        base, owner, count = metas[number]
        if owner is None or owner == branch:
            if changes is not None and list(parents[:1]) == ([base] if base else []) and len(parents) < 2:
                count = self._apply(tx, number, count, changes)
                self._set_meta(tx, number, seq, branch, count)
                return True
            self._fold(tx, number, base, seq, branch, count)
            return False
        overlay = self.overlay(tx, base, seq)
        if len(overlay) > max(OVERLAY_LIMIT, count // 8):
            own = self._new(tx, seq, branch)
            self._copy(tx, number, own)
            self._set_meta(tx, own, seq, branch, self._apply_overlay(tx, own, count, overlay))
            self._use(tx, branch, own)
        return False

    # -- writing snapshots ----------------------------------------------------------------

    def _fold(self, tx: Transaction, number: int, base: int, seq: int, owner: str, count: int) -> None:
        overlay = self.overlay(tx, base, seq)
        self._set_meta(tx, number, seq, owner, self._apply_overlay(tx, number, count, overlay))

    def _apply_overlay(self, tx: Transaction, number: int, count: int, overlay: Overlay) -> int:
        changes = [(items, True) for items in overlay.born.values()]
        changes += [(split(ident, 0, 4), False) for ident in overlay.dead]
        return self._apply(tx, number, count, ItemChanges.of(changes))

    def _apply(self, tx: Transaction, number: int, count: int, changes: ItemChanges) -> int:
        """Add and remove quads (key items) in snapshot ``number``, and its counts by them;
        returns its new count."""
        snapshot = pack_value(number)
        deltas: Counter[tuple[bytes, bytes]] = Counter()
        exact = True
        died = changes.where(False)
        if died[0]:
            removed = self.store.bulk_delete_items(tx, [[snapshot] * len(died[0]), *died])
            count -= removed
            exact = removed == len(died[0])
            deltas.subtract(zip(died[0], died[2]))
        born = changes.where(True)
        if born[0]:
            added = self.store.bulk_add_items(tx, [[snapshot] * len(born[0]), *born])
            count += added
            exact = exact and added == len(born[0])
            deltas.update(zip(born[0], born[2]))
        if exact:
            self._add_counts(tx, number, deltas)
        else:  # changes that did not all apply (a damaged snapshot): count what it holds
            self._recount(tx, number)
        return count

    def _quads_of(self, tx: Transaction, number: int) -> list[list[bytes]]:
        """Every quad (key items) of snapshot ``number``, read whole before the caller
        writes to the same keyspace."""
        prefix = self.store.index_prefix(0) + pack_value(number)
        skip = len(prefix)
        return [split(key, skip, 4) for key, _ in self.store.range(tx, prefix, prefix + b"\xff")]

    def _copy(self, tx: Transaction, source: int, target: int) -> None:
        quads = self._quads_of(tx, source)
        if quads:
            self.store.bulk_add_items(tx, [[pack_value(target)] * len(quads), *map(list, zip(*quads))])
        start, into = pack(self._counts_tag, source), pack(self._counts_tag, target)
        for key, value in list(tx.range(start, start + b"\xff")):
            tx.set(into + key[len(start):], value)

    def _drop(self, tx: Transaction, number: int) -> None:
        quads = self._quads_of(tx, number)
        if quads:
            self.store.bulk_delete_items(tx, [[pack_value(number)] * len(quads), *map(list, zip(*quads))])
        tx.delete(pack(self._meta_tag, number))
        self._drop_counts(tx, number)

    # -- counts by graph and predicate (format 5) ------------------------------------------
    # Two kinds of keys per snapshot, so that an estimate is one read: the quads of each
    # (graph, predicate) pair, ``pack(tag, number, PAIR) + graph + predicate``, and of each
    # predicate in any graph, ``pack(tag, number, PREDICATE) + predicate``; the value is
    # ``pack(quads)``, and a pair or predicate without quads has no key.

    def _add_counts(self, tx: Transaction, number: int, deltas: Counter[tuple[bytes, bytes]]) -> None:
        """Move the counts of snapshot ``number`` by ``deltas`` (quads by graph and predicate)."""
        pairs, predicates = pack(self._counts_tag, number, _PAIR), pack(self._counts_tag, number, _PREDICATE)
        by_predicate: Counter[bytes] = Counter()
        for (graph, predicate), delta in deltas.items():
            if delta:
                _bump(tx, pairs + graph + predicate, delta)
                by_predicate[predicate] += delta
        for predicate, delta in by_predicate.items():
            if delta:
                _bump(tx, predicates + predicate, delta)

    def _drop_counts(self, tx: Transaction, number: int) -> None:
        start = pack(self._counts_tag, number)
        for key, _ in list(tx.range(start, start + b"\xff")):
            tx.delete(key)

    def _recount(self, tx: Transaction, number: int) -> None:
        """Write the counts of snapshot ``number`` anew from the quads it holds."""
        self._drop_counts(tx, number)
        self._add_counts(tx, number, self.tally(tx, number))

    def recount(self, tx: Transaction) -> None:
        """Write every snapshot's counts anew (``datae upgrade`` from a format without them)."""
        for number in self.metas(tx):
            self._recount(tx, number)

    def tally(self, tx: Transaction, number: int) -> Counter[tuple[bytes, bytes]]:
        """The quads snapshot ``number`` holds by (graph, predicate) key items: a skip scan
        of the index led by graph and predicate, each pair's keys counted in C
        (O(pairs) seeks; for verify and upgrade)."""
        prefix = self.store.index_prefix(_BY_PAIR) + pack_value(number)
        end = prefix + b"\xff"
        found: Counter[tuple[bytes, bytes]] = Counter()
        start = prefix
        while (first := next(self.store.range(tx, start, end, limit=1), None)) is not None:
            graph, predicate = split(first[0], len(prefix), 4)[:2]
            pair = prefix + graph + predicate
            found[(graph, predicate)] = self.store.space.count(tx, pair, pair + b"\xff", None)
            start = pair + b"\xff"  # past every key of the pair (no type code is 0xff)
        return found

    def _count_problems(self, tx: Transaction, number: int) -> Iterator[str]:
        """Where the counts kept for snapshot ``number`` differ from the quads it holds."""
        name = self.history.space.name
        try:
            pairs, predicates = self.stored_counts(tx, number)
        except (DataeError, ValueError) as exc:
            yield f"{name} snapshot {number}: its counts are damaged: {exc}"
            return
        held = self.tally(tx, number)
        by_predicate: Counter[bytes] = Counter()
        for (_, predicate), count in held.items():
            by_predicate[predicate] += count
        for what, stored, found in (("graph and predicate", pairs, held), ("predicate", predicates, by_predicate)):
            wrong = [key for key in stored.keys() | found.keys() if stored.get(key) != found.get(key)]
            if wrong:
                key = min(wrong)
                shown = b"".join(key) if type(key) is tuple else key
                yield (f"{name} snapshot {number}: {len(wrong)} count(s) by {what} differ from the quads it holds "
                       f"(first: {shown.hex()} counts {stored.get(key, 0)}, holds {found.get(key, 0)})")

    def stored_counts(self, tx: Transaction, number: int) -> tuple[dict[tuple[bytes, bytes], int], dict[bytes, int]]:
        """The counts kept for snapshot ``number``: by (graph, predicate) and by predicate."""
        pairs, predicates = pack(self._counts_tag, number, _PAIR), pack(self._counts_tag, number, _PREDICATE)
        by_pair = {tuple(split(key, len(pairs), 2)): unpack(value)[0] for key, value in tx.range(pairs, pairs + b"\xff")}
        by_predicate = {key[len(predicates):]: unpack(value)[0] for key, value in tx.range(predicates, predicates + b"\xff")}
        return by_pair, by_predicate  # type: ignore[return-value]

    def stored_predicates(self, tx: Transaction, number: int, graph: bytes) -> dict[bytes, int]:
        """The quads of ``graph`` in snapshot ``number`` by predicate item, from its counts."""
        start = pack(self._counts_tag, number, _PAIR) + graph
        return {key[len(start):]: unpack(value)[0] for key, value in tx.range(start, start + b"\xff")}

    def stored_count(self, tx: Transaction, number: int, graph: bytes | None, predicate: bytes | None) -> int:
        """The quads of snapshot ``number`` in ``graph`` with ``predicate`` (None: any), from
        its counts: one read, or for a graph with any predicate one per predicate of it."""
        if predicate is None:
            if graph is None:
                return self.metas(tx)[number][2]
            return sum(self.stored_predicates(tx, number, graph).values())
        if graph is None:
            value = tx.get(pack(self._counts_tag, number, _PREDICATE) + predicate)
        else:
            value = tx.get(pack(self._counts_tag, number, _PAIR) + graph + predicate)
        return 0 if value is None else unpack(value)[0]

    # -- choosing a snapshot and its overlay ----------------------------------------------

    def _choose(self, tx: Transaction, seq: int, metas: dict[int, tuple[int, str | None, int]]) -> int | None:
        """The snapshot nearest to commit ``seq``: fewest commits in the symmetric
        difference of the two ancestries (None: there is no snapshot)."""
        if not metas:
            return None
        key = (seq, tuple(sorted((number, meta[0]) for number, meta in metas.items())))
        chosen = self._choices.get(key, _MISSING)
        if chosen is not _MISSING:
            return chosen  # type: ignore[return-value]
        for number, (base, _, _) in metas.items():
            if base == seq:
                chosen = number
                break
        else:
            ancestors = self.history.commits.ancestors
            wanted = ancestors(tx, seq)
            chosen = min(metas, key=lambda n: (len(wanted ^ ancestors(tx, metas[n][0] or None)), n))
        if len(self._choices) > 256:
            self._choices.clear()
        self._choices[key] = chosen
        return chosen

    def base(self, tx: Transaction, seq: int, number: int | None = None) -> tuple[int | None, Overlay]:
        """The snapshot to read commit ``seq`` from (``number``, else the nearest), and the
        overlay on top of it."""
        metas = self.metas(tx)
        if number is None:
            number = self._choose(tx, seq, metas)
        if number is None:
            if not self.history.has_records(tx):  # a space no commit ever touched: O(1), not O(commits)
                return None, _EMPTY
            return None, self.overlay(tx, None, seq)
        base = metas[number][0]
        if base == seq:
            return number, _EMPTY
        return number, self.overlay(tx, base, seq)

    def overlay(self, tx: Transaction, base: int | None, seq: int) -> Overlay:
        """The quads whose state at ``seq`` differs from their state at ``base`` (a
        snapshot's commit; None or 0: no commit), in O(changes between the two commits)
        (:meth:`History.state_changes`). Commits never change, so the result is cached by
        the two commits."""
        base = base or None
        key = (base, seq)
        found = self._overlays.get(key)
        if found is not None:
            return found
        ancestors = self.history.commits.ancestors
        overlay = self._overlay(tx, ancestors(tx, base) if base else frozenset(), ancestors(tx, seq))
        if not tx.write:  # a write transaction's view may still change before it commits
            if len(self._overlays) >= _CACHED_OVERLAYS:
                self._overlays.pop(next(iter(self._overlays)))
            self._overlays[key] = overlay
        return overlay

    def _overlay(self, tx: Transaction, before: frozenset[int], after: frozenset[int]) -> Overlay:
        """The overlay of the ancestry ``after`` on ``before`` (:meth:`overlay`, uncached)."""
        overlay = Overlay()
        for ident, items, alive in self.history.state_changes(tx, before, after):
            if alive:
                overlay.born[ident] = items
            else:
                overlay.dead.add(ident)
        return overlay

    def reader(self, tx: Transaction, seq: int | None, snapshot: int | None = None) -> Reader:
        """What is alive at commit ``seq``, read from snapshot ``snapshot`` (default: the
        nearest, as every read does; verify names each snapshot in turn)."""
        return Reader(self, tx, seq, snapshot)

    # -- verify ---------------------------------------------------------------------------

    def count_keys(self, tx: Transaction, number: int) -> int:
        """How many quads snapshot ``number`` holds (its keys in index 0)."""
        prefix = self.store.index_prefix(0) + pack_value(number)
        return sum(1 for _ in self.store.range(tx, prefix, prefix + b"\xff"))

    def problems(self, tx: Transaction, refs: Refs) -> Iterator[str]:
        """Each snapshot record that is not ``[seq, owner, count]`` with ``count`` its
        quads, whose owner is not a branch at ``seq`` reading it, and each branch ->
        snapshot key naming a branch or snapshot that does not exist (O(snapshot keys);
        for verify: reads trust ``seq``, the next commit trusts the rest)."""
        name = self.history.space.name
        numbers = set()
        for key, value in tx.range(self._metas, self._metas + b"\xff"):
            try:
                number = unpack(key)[1]
                seq, owner, count = msgpack.unpackb(value)
            except (DataeError, ValueError, TypeError, msgpack.UnpackException) as exc:
                yield f"{name} snapshot record {key.hex()} is damaged: {exc}"
                continue
            numbers.add(number)
            if type(number) is not int or type(seq) is not int or type(count) is not int or \
                    not (owner is None or type(owner) is str):
                yield f"{name} snapshot record {key.hex()} holds {[seq, owner, count]!r:.100}, not [seq, owner, count]"
                continue
            held = self.count_keys(tx, number)
            if held != count:
                yield f"{name} snapshot {number} records {count} quads but holds {held}"
            yield from self._count_problems(tx, number)
            if owner is not None:
                try:
                    exists, head = refs.get(tx, BRANCH, owner)
                    reads = self.of_branch(tx, owner)
                except DataeError:
                    continue  # a damaged ref or branch -> snapshot key: reported as such
                if not exists or reads != number or head != seq:
                    yield (f"{name} snapshot {number} (commit #{seq}) is owned by branch {owner!r}, which "
                           f"{'does not exist' if not exists else 'does not read it at its head'}")
        for key, value in tx.range(self._branches, self._branches + b"\xff"):
            try:
                branch, number = unpack(key)[1], unpack(value)[0]
                exists = refs.get(tx, BRANCH, branch)[0]
            except DataeError as exc:
                yield f"{name} branch -> snapshot key {key.hex()} (or its branch) is damaged: {exc}"
                continue
            if not exists or number not in numbers:
                yield f"{name}: branch {branch!r} reads snapshot {number!r}, but one of the two does not exist"
        counts = pack(self._counts_tag)
        for key, _ in tx.range(counts, counts + b"\xff"):
            try:
                number, kind, *items = split(key, len(counts))
                known = decode_item(number) in numbers and len(items) == {_PAIR: 2, _PREDICATE: 1}.get(decode_item(kind))
            except DataeError:
                known = False
            if not known:
                yield f"{name}: count key {key.hex()} belongs to no snapshot"


class Reader:
    """The quads alive at commit ``seq``, read in the transaction ``tx``: its snapshot's
    keys, less the overlay's dead quads, plus its born ones."""

    def __init__(self, heads: Heads, tx: Transaction, seq: int | None, snapshot: int | None = None) -> None:
        self.heads = heads
        self.history = heads.history
        self.store = heads.store
        self.tx = tx
        self.seq = seq
        self._plans: dict[object, Callable[[Sequence[Any]], Iterator[Quad]]] = {}
        if seq is None:
            self.snapshot, self.overlay, self.empty = None, _EMPTY, True
        else:
            self.snapshot, self.overlay = heads.base(tx, seq, snapshot)
            self.empty = False

    # -- the pieces of a read -------------------------------------------------------------

    def _template(self, pattern: Sequence[Any], terms: bool) -> list[Any]:
        if terms and not _AS_TERM.issuperset(map(type, pattern)):
            return [item if type(item) in _AS_TERM else to_rdf(item) for item in pattern]
        return list(pattern)

    def _scan(self, items: Sequence[Any], within: NumericRange | None) -> tuple[tuple[int, ...], int, Iterator[tuple[bytes, bytes]]]:
        args = (self.snapshot, *items)
        spans = None if within is None else within.spans()
        if spans is None:
            return self.store.keys(self.tx, *args)
        return self.store.keys(self.tx, *args, within=(4, spans))

    def _rows(self, free: tuple[int, ...], skip: int, keys: Iterator[tuple[bytes, bytes]], bound: list[bytes | None]) -> Iterator[list[bytes]]:
        """The free items (in ``free`` order) of each live key: those the overlay does not
        declare dead."""
        count = len(free)
        dead = self.overlay.dead
        if not dead:
            for key, _ in keys:
                items = find_items(key, skip)
                yield items if len(items) == count else split(key, skip, count)
            return
        slots = [(slot, position - 1) for slot, position in enumerate(free)]
        for key, _ in keys:
            items = find_items(key, skip)
            if len(items) != count:
                items = split(key, skip, count)
            quad = bound.copy()
            for slot, position in slots:
                quad[position] = items[slot]
            if b"".join(quad) not in dead:  # type: ignore[arg-type]
                yield items

    def _born(self, items: Sequence[Any], within: NumericRange | None, free: tuple[int, ...], repeats: list[tuple[int, int]]) -> Iterator[list[bytes]]:
        """The overlay's born quads matching the encoded pattern, as free items."""
        if not self.overlay.born:
            return
        bound = [(i, item) for i, item in enumerate(self.history.item_bytes(items)) if type(items[i]) is not Var]
        spans = None if within is None else within.spans()
        for quad in self.overlay.find(bound):
            if repeats and any(quad[a] != quad[b] for a, b in repeats):
                continue
            if spans is not None and not any(start <= quad[3] < end for start, end in spans):
                continue
            yield [quad[position - 1] for position in free]

    def _filler(self, template: list[Any], free: tuple[int, ...], terms: bool) -> Callable[[list[bytes]], Quad]:
        decode = self.history.decoder(self.tx, terms)
        slots = tuple((slot, position - 1) for slot, position in enumerate(free))

        def fill(items: list[bytes]) -> Quad:
            values = template.copy()
            for slot, position in slots:
                values[position] = decode(items[slot])
            return tuple(values)  # type: ignore[return-value]

        return fill

    def _filled(self, template: list[Any], free: tuple[int, ...], skip: int, keys: Iterator[tuple[bytes, bytes]],
                bound: list[bytes | None], terms: bool) -> Iterator[Quad]:
        """:meth:`_rows` and :meth:`_filler` in one loop: the hot path of every read."""
        if self.overlay.dead:
            fill = self._filler(template, free, terms)
            for items in self._rows(free, skip, keys, bound):
                yield fill(items)
            return
        cache, slow = self.history.decoding(terms)
        prefetch = self.history.prefetch
        tx = self.tx
        slots = tuple((slot, position - 1) for slot, position in enumerate(free))
        missing = _MISSING
        first = True
        for rows in _split_chunks(keys, skip, len(free)):
            # Past the first row, a chunk's terms are decoded in one batch of dictionary
            # reads before its rows are filled.
            if not first:
                prefetch(tx, chain.from_iterable(rows), terms)
            first = False
            for items in rows:
                values = template.copy()
                for slot, position in slots:
                    item = items[slot]
                    value = cache.get(item, missing)
                    values[position] = slow(tx, item) if value is missing else value
                yield tuple(values)  # type: ignore[misc]

    def _free(self, pattern: Sequence[Any]) -> tuple[tuple[int, ...], list[tuple[int, int]]]:
        """Free positions (1-based, as in snapshot keys) and repeated Var pairs (0-based)."""
        return tuple(i + 1 for i, item in enumerate(pattern) if type(item) is Var), repeated_vars(pattern)

    # -- reads ----------------------------------------------------------------------------

    def match(self, pattern: Sequence[Any], within: NumericRange | None = None, terms: bool = False) -> Iterator[Quad]:
        """Each quad matching ``pattern`` (values or Var) alive here, its Var positions
        filled in: stored values, or RDF terms if ``terms``."""
        if self.empty:
            return iter(())
        items = self.history.encode(self.tx, pattern)
        if items is None:
            return iter(())
        return self._match(pattern, items, within, terms)

    def _match(self, pattern: Sequence[Any], items: list[Any], within: NumericRange | None, terms: bool) -> Iterator[Quad]:
        template = self._template(pattern, terms)
        free_all, repeats = self._free(pattern)
        if self.snapshot is not None:
            free, skip, keys = self._scan(items, within)
            bound = [None if type(item) is Var else item for item in self.history.item_bytes(items)] if self.overlay.dead else []
            yield from self._filled(template, free, skip, keys, bound, terms)  # type: ignore[arg-type]
        if self.overlay.born:
            fill = self._filler(template, free_all, terms)
            for row in self._born(items, within, free_all, repeats):
                yield fill(row)

    def contains_many(self, quads: Sequence[Quad]) -> list[bool]:
        """Whether each quad (values) is alive here."""
        return [next(iter(self.match(quad)), None) is not None for quad in quads]

    def match_many(self, patterns: Sequence[Sequence[Any]]) -> list[list[Quad]]:
        """:meth:`match` of many patterns, each one's quads in a list."""
        return [list(self.match(pattern)) for pattern in patterns]

    def packed(self, pattern: Sequence[Any]) -> tuple[tuple[int, ...], Iterator[list[bytes]]]:
        """:meth:`match` without decoding: the Var positions (0-based, in pattern order)
        and each alive quad's key items at those positions (:meth:`scan_items` in pattern
        order); decode an item with ``history.value``."""
        positions, rows = self.scan_items(pattern)
        in_order = tuple(sorted(positions))
        if positions == in_order:
            return positions, rows
        order = [positions.index(position) for position in in_order]
        return in_order, ([row[i] for i in order] for row in rows)

    # -- reads on key items (the query engine's joins on ids) -------------------------------

    def item(self, value: Any) -> bytes | None:
        """The key item that stands for a stored value here (a dictionary reference or the
        inline value), or None when no quad can hold it (not in the dictionary)."""
        items = self.history.encode(self.tx, (value,))
        return None if items is None else self.history.item_bytes(items)[0]

    def scan_items(self, pattern: Sequence[Any], within: NumericRange | None = None) -> tuple[tuple[int, ...], Iterator[list[bytes]]]:
        """:meth:`match` without decoding: the positions (0-based, in the order of each
        row's items) and, per live quad, its key items there (decode an item with
        ``history.term``). The positions are the pattern's Var positions, in index order."""
        items = None if self.empty else self.history.encode(self.tx, pattern)
        free_all, repeats = self._free(pattern)
        if items is None:
            return tuple(p - 1 for p in free_all), iter(())
        if self.snapshot is None:
            return tuple(p - 1 for p in free_all), self._born(items, within, free_all, repeats)
        free, skip, keys = self._scan(items, within)
        bound = [None if type(item) is Var else item for item in self.history.item_bytes(items)] if self.overlay.dead else []
        rows = self._item_rows(free, skip, keys, bound)
        if self.overlay.born:
            order = [free_all.index(p) for p in free]
            born = ([row[i] for i in order] for row in self._born(items, within, free_all, repeats))
            rows = chain(rows, born)
        return tuple(p - 1 for p in free), rows

    def prepare_items(self, pattern: Sequence[Any]) -> tuple[tuple[int, ...], Callable[[Sequence[bytes]], Iterable[list[bytes]]]]:
        """:meth:`prepare` on key items: the function returned takes the key items of the
        :class:`~nstore.store.Param` positions (in pattern order, as a read gave them) and
        yields each live quad's items at the positions returned with it (as
        :meth:`scan_items`), none encoded or decoded."""
        params = [i for i, item in enumerate(pattern) if type(item) is Param]
        items = None if self.empty else self.history.encode(self.tx, pattern)
        free_all, repeats = self._free(pattern)
        if items is None:
            return tuple(p - 1 for p in free_all), lambda values: iter(())
        read = self._prepared_read(items) if self.snapshot is not None else None
        free = read.free if read is not None else free_all
        order = [free_all.index(p) for p in free]
        overlay, tx = self.overlay, self.tx
        row_items = self._item_rows

        def run(values: Sequence[bytes]) -> Iterable[list[bytes]]:
            if not overlay:
                rows = read.rows_of_items(tx, values)  # type: ignore[union-attr]
                if rows is not None:
                    return rows
                skip, keys = read.keys_of_items(tx, values)  # type: ignore[union-attr]
                return row_items(free, skip, keys, [])
            return with_overlay(values)

        def with_overlay(values: Sequence[bytes]) -> Iterator[list[bytes]]:
            filled = list(items)  # type: ignore[arg-type]
            for position, item in zip(params, values):
                filled[position] = Packed(item)
            if read is not None:
                skip, keys = read.keys_of_items(tx, values)
                bound = [None if type(item) is Var else item for item in self.history.item_bytes(filled)]
                yield from row_items(free, skip, keys, bound)
            for row in self._born(filled, None, free_all, repeats):
                yield [row[i] for i in order]

        return tuple(p - 1 for p in free), run

    def _prepared_read(self, items: list[Any]) -> Any:
        """The snapshot store's prepared read of ``items`` (kept in ``heads.prepared_reads``)."""
        key = (self.snapshot, *[("?", i.name) if type(i) is Var else "P" if type(i) is Param else i
                                for i in self.history.item_bytes(items)])
        kept = self.heads.prepared_reads
        read = kept.get(key)
        if read is None:
            if len(kept) >= _PREPARED_KEPT:
                kept.clear()
            read = kept[key] = self.store.prepare(self.snapshot, *items)
        return read

    def _item_rows(self, free: tuple[int, ...], skip: int, keys: Iterator[tuple[bytes, bytes]],
                   bound: list[bytes | None]) -> Iterator[list[bytes]]:
        """The free items of each live key (:meth:`_rows`), split in C a chunk at a time
        when the overlay declares nothing dead."""
        if self.overlay.dead:
            yield from self._rows(free, skip, keys, bound)
            return
        for rows in _split_chunks(keys, skip, len(free)):
            yield from rows

    def count(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        """How many quads match (counting stops at ``cap``), none of them decoded: from the
        snapshot's counts where they answer (:meth:`known_count`), else by counting keys."""
        if self.empty or cap == 0:
            return 0
        items = self.history.encode(self.tx, pattern)
        if items is None:
            return 0
        known = self._known(pattern, items)
        if known is not None:
            return known if cap is None else min(known, cap)
        total = 0
        if self.snapshot is not None and not self.overlay.dead:
            total = self.store.count(self.tx, self.snapshot, *items, cap=cap)
            if total == cap:
                return total
        elif self.snapshot is not None:
            free, skip, keys = self._scan(items, None)
            live: Iterable[Any] = keys
            if self.overlay.dead:
                bound = [None if type(item) is Var else item for item in self.history.item_bytes(items)]
                live = self._rows(free, skip, keys, bound)
            for _ in live:
                total += 1
                if total == cap:
                    return total
        free_all, repeats = self._free(pattern)
        for _ in self._born(items, None, free_all, repeats):
            total += 1
            if total == cap:
                return total
        return total

    def known_count(self, pattern: Sequence[Any]) -> int | None:
        """How many quads match ``pattern``, from the counts kept with the snapshot plus the
        overlay's (O(1): no key of the quads read) when it binds at most the graph and the
        predicate and repeats no variable; else None.

        >>> import tempfile, fstore
        >>> repo = fstore.open(tempfile.mkdtemp())
        >>> with repo.transaction("main", message="m") as tx:
        ...     fstore.add_many(tx, [(None, fstore.IRI(f"urn:s{i}"), fstore.IRI("urn:p"), i) for i in range(5)])
        >>> with repo.storage.read() as snapshot:
        ...     reader = snapshot.reader(snapshot.head("main"))
        ...     [reader.known_count((None, fstore.Var("s"), fstore.IRI("urn:p"), fstore.Var("o"))),
        ...      reader.known_count((None, fstore.Var("s"), fstore.IRI("urn:p"), 3))]
        [5, None]
        >>> repo.close()
        """
        if not _counted(pattern):
            return None
        items = None if self.empty else self.history.encode(self.tx, pattern)
        return 0 if items is None else self._known(pattern, items)

    def _known(self, pattern: Sequence[Any], items: list[Any]) -> int | None:
        if not _counted(pattern):
            return None
        graph, _, predicate, _ = self.history.item_bytes(items)
        graph = None if type(graph) is Var else bytes(graph)
        predicate = None if type(predicate) is Var else bytes(predicate)
        stored = 0 if self.snapshot is None else self.heads.stored_count(self.tx, self.snapshot, graph, predicate)
        return stored + self.overlay.count_delta(graph, predicate)

    def predicate_counts(self, graph: Any) -> dict[bytes, int]:
        """The quads of ``graph`` (a stored value; None: the default graph) alive here, by
        predicate key item: the snapshot's counts (one read a predicate) plus the
        overlay's born quads less its dead ones. Predicates without quads are left out.

        >>> import tempfile, fstore
        >>> repo = fstore.open(tempfile.mkdtemp())
        >>> with repo.transaction("main", message="m") as tx:
        ...     fstore.add_many(tx, [(None, fstore.IRI(f"urn:s{i}"), fstore.IRI(f"urn:p{i % 2}"), i) for i in range(5)])
        >>> with repo.storage.read() as snapshot:
        ...     sorted(snapshot.reader(snapshot.head("main")).predicate_counts(None).values())
        [2, 3]
        >>> repo.close()
        """
        items = None if self.empty else self.history.encode(self.tx, [graph])
        if items is None:
            return {}
        item = bytes(self.history.item_bytes(items)[0])
        found: dict[bytes, int] = {}
        if self.snapshot is not None:
            found = self.heads.stored_predicates(self.tx, self.snapshot, item)
        for predicate, delta in self.overlay.predicate_deltas(item).items():
            found[predicate] = found.get(predicate, 0) + delta
        return {predicate: count for predicate, count in found.items() if count}

    def graphs(self) -> list[Any]:
        """The graphs holding at least one quad here, in the order of their packed values:
        a skip scan of the graph-led index (one seek per graph), plus the overlay's."""
        if self.empty:
            return []
        found: dict[bytes, None] = {}
        if self.snapshot is not None:
            prefix = self.store.index_prefix(0) + pack_value(self.snapshot)
            end = prefix + b"\xff"
            start = prefix
            while True:
                first = next(self.store.range(self.tx, start, end, limit=1), None)
                if first is None:
                    break
                item = split(first[0], len(prefix))[0]
                if not self.overlay.dead or self._any_live(prefix + item, item):
                    found[item] = None
                # Past every key of this graph item (see nstore.store: no type code is 0xff).
                start = prefix + item + b"\xff"
        for items in self.overlay.born.values():
            found.setdefault(items[0], None)
        decode = self.history.decoder(self.tx, False)
        graphs = [decode(item) for item in found]
        return sorted(graphs, key=pack_value)

    def _any_live(self, prefix: bytes, graph: bytes) -> bool:
        skip = len(prefix)
        dead = self.overlay.dead
        for key, _ in self.store.range(self.tx, prefix, prefix + b"\xff"):
            if graph + b"".join(split(key, skip, 3)) not in dead:
                return True
        return False

    def prepared(self, token: object, pattern: Sequence[Any], terms: bool) -> Callable[[Sequence[Any]], Iterator[Quad]]:
        """:meth:`prepare` once per ``token`` on this reader."""
        plan = self._plans.get(token)
        if plan is None:
            plan = self._plans[token] = self.prepare(pattern, terms)
        return plan

    def prepare(self, pattern: Sequence[Any], terms: bool = False) -> Callable[[Sequence[Any]], Iterator[Quad]]:
        """:meth:`match` planned once for a pattern with :class:`~nstore.store.Param`
        positions: the function returned takes the values of those positions (in pattern
        order) and yields what :meth:`match` would."""
        params = [i for i, item in enumerate(pattern) if type(item) is Param]
        items = None if self.empty else self.history.encode(self.tx, pattern)
        if items is None:
            return lambda values: iter(())
        encode = self.history.dictionary.encode
        tx = self.tx
        read = self.store.prepare(self.snapshot, *items) if self.snapshot is not None else None
        free_all, repeats = self._free(pattern)
        free = read.free if read is not None else ()
        base = self._template(pattern, terms)
        overlay = self.overlay
        as_term = to_rdf if terms else None

        def run(values: Sequence[Any]) -> Iterator[Quad]:
            encoded = []
            for value in values:
                item = encode(tx, value, create=False)
                if item is ABSENT:
                    return iter(())
                encoded.append(item)
            template = base.copy()
            for position, value in zip(params, values):
                template[position] = value if as_term is None or type(value) in _AS_TERM else as_term(value)
            if not overlay:
                if read is None:
                    return iter(())
                skip, keys = read.keys(tx, encoded)
                return self._filled(template, free, skip, keys, [], terms)
            return with_overlay(template, encoded)

        def with_overlay(template: list[Any], encoded: list[Any]) -> Iterator[Quad]:
            filled = list(items)
            for position, item in zip(params, encoded):
                filled[position] = item
            if read is not None:
                skip, keys = read.keys(tx, encoded)
                bound = [None if type(item) is Var else item for item in self.history.item_bytes(filled)]
                yield from self._filled(template, free, skip, keys, bound, terms)
            fill = self._filler(template, free_all, terms)
            for row in self._born(filled, None, free_all, repeats):
                yield fill(row)

        return run


def _split_chunks(keys: Iterator[tuple[bytes, bytes]], skip: int, count: int) -> Iterator[list[list[bytes]]]:
    """The ``count`` items after ``skip`` bytes of each key, split in C a chunk of keys at a
    time: the first chunk one key (a LIMIT 1, an ASK, a lookup of one match gets it at
    once), then :data:`_CHUNK` keys."""
    size = 1
    while True:
        chunk = list(islice(keys, size))
        if not chunk:
            return
        try:
            rows = split_rows(chunk, skip, count)
        except ValueError:  # an item the C split does not know: Python's splits or names it
            rows = [split(key, skip, count) for key, _ in chunk]
        yield rows
        size = _CHUNK


def _counted(pattern: Sequence[Any]) -> bool:
    """Whether the counts kept with the snapshots answer ``pattern``: subject and object
    free, no variable repeated."""
    return type(pattern[1]) is Var and type(pattern[3]) is Var and not repeated_vars(pattern)


def _bump(tx: Transaction, key: bytes, delta: int) -> None:
    """Add ``delta`` to the count at ``key`` (absent: 0), deleting it at 0."""
    value = tx.get(key)
    count = (0 if value is None else unpack(value)[0]) + delta
    if count < 0:
        raise CorruptStoreError(f"a snapshot count ({key.hex()}) would fall below zero: the counts are damaged")
    if count:
        tx.set(key, pack(count))
    elif value is not None:
        tx.delete(key)


def repeated_vars(pattern: Sequence[Any]) -> list[tuple[int, int]]:
    """Pairs of positions holding the same Var (their items must be equal)."""
    first: dict[str, int] = {}
    pairs = []
    for position, item in enumerate(pattern):
        if type(item) is Var:
            if item.name in first:
                pairs.append((position, first[item.name]))
            else:
                first[item.name] = position
    return pairs
