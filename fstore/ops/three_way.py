"""Three-way merges of quad sets, with conflicts per (graph, subject, predicate).

Against the merge base (the most significant common ancestor), a quad one side changed
takes that side's state. A (graph, subject, predicate) whose object set *both* sides changed,
to different results, is a conflict: the policy resolves it (``"ours"``, ``"theirs"``, or a
callable returning the objects to keep) or, with ``"abort"``, the merge raises
:class:`MergeConflict` and writes nothing (``"record"``, the repository's, keeps it as the
merge in progress: :mod:`fstore.ops.merge_state`).

The merge commit writes a *resolution record* for every quad whose merged state differs from
what history significance alone would give over the union of both ancestries, so the
significance rule stays true at the merge commit and at every descendant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence, Union

from nstore import Var
from nstore.errors import InvalidTermError, PackError
from nstore.okvs import Transaction as OkvsTransaction
from nstore.pack import pack
from nstore.terms import check_term

from ..core.storage import Snapshot
from ..core.history import History, Quad, winner
from nstore.terms import check_value, to_rdf
from .conflicts import Choose, ConflictItem

__all__ = [
    "Conflict",
    "Policy",
    "MergeOutcome",
    "plan_merge",
    "MergeSides",
    "GraphResolution",
    "GraphMerger",
    "graph_mergers",
    "resolution_objects",
]


@dataclass(frozen=True)
class Conflict:
    """Both sides changed the objects of (graph, subject, predicate) to different sets.

    Users (a merge policy, :class:`~fstore.errors.MergeConflict`) get every part as an RDF
    term, as reads give them (the default graph is None); ``base``, ``ours`` and ``theirs``
    are the objects at each commit, in key order.
    """

    graph: Any
    subject: Any
    predicate: Any
    base: tuple
    ours: tuple
    theirs: tuple

    def in_terms(self) -> Conflict:
        """This conflict as users see it: every part an RDF term (graph mergers, inside
        fstore, are given stored values)."""
        return Conflict(*map(to_rdf, (self.graph, self.subject, self.predicate)),
                        *(tuple(map(to_rdf, objects)) for objects in (self.base, self.ours, self.theirs)))

    def items(self) -> list[ConflictItem]:
        """This conflict as the one item a user settles (see :mod:`fstore.ops.conflicts`)."""
        return [ConflictItem("quad", (self.graph, self.subject, self.predicate), self.base, self.ours, self.theirs,
                             "objects changed differently on each side")]

    def settle(self, choose: Choose) -> Iterable[Any]:
        """The objects to keep, as ``choose`` resolves this conflict's item (what a
        callable merge policy returns)."""
        item = self.items()[0]
        return item.value_for(choose(item))

    def __str__(self) -> str:
        return (
            f"({self.graph!r}, {self.subject!r}, {self.predicate!r}): base {list(self.base)!r}, "
            f"ours {list(self.ours)!r}, theirs {list(self.theirs)!r}"
        )


Policy = Union[str, Callable[[Conflict], Iterable[Any]]]
POLICIES = ("abort", "ours", "theirs", "record")


@dataclass
class MergeOutcome:
    """What a merge commit must write: resolution records and counts vs the first parent."""

    records: list[tuple[Quad, bool, list[bytes] | None]]
    added: int
    removed: int
    conflicts: list[Conflict]


class MergeSides:
    """Read access to a merge's states, for a :class:`GraphMerger`: ``match(side,
    pattern)`` yields the quads alive at ``"base"``, ``"ours"`` or ``"theirs"``;
    ``records(pattern)`` yields every quad ever recorded (any state) with its records;
    ``snapshot`` is the state they are read in."""

    def __init__(self, snapshot: Snapshot, seqs: dict[str, int | None], history: History) -> None:
        self.snapshot = snapshot
        self.tx: OkvsTransaction = snapshot.tx
        self.seqs = seqs
        self.history = history
        self._readers: dict[str, Any] = {}
        self._objects: dict[tuple[str, bytes], dict[bytes, Any]] = {}  # (side, packed group) -> objects

    def _reader(self, side: str) -> Any:
        reader = self._readers.get(side)
        if reader is None:
            reader = self._readers[side] = self.history.reader(self.tx, self.seqs[side])
        return reader

    def match(self, side: str, pattern: tuple) -> Iterator[Quad]:
        return self._reader(side).match(pattern)

    def objects(self, side: str, gsp: tuple) -> dict[bytes, Any]:
        """The objects of group ``gsp`` (graph, subject, predicate) at ``side``, by packed
        object (read by :meth:`prefetch` if it was)."""
        found = self._objects.get((side, pack(*gsp)))
        if found is None:
            found = {pack(o): o for (_, _, _, o) in self.match(side, (*gsp, Var("o")))}
        return found

    def prefetch(self, gsps: Sequence[tuple]) -> None:
        """Read the objects of many groups at every side in batches (what a merge reads of
        each group both sides changed)."""
        for side in ("base", "ours", "theirs"):
            quads = self._reader(side).match_many([(*gsp, Var("o")) for gsp in gsps])
            for gsp, found in zip(gsps, quads):
                self._objects[(side, pack(*gsp))] = {pack(o): o for (_, _, _, o) in found}

    def records(self, pattern: tuple) -> Iterator[tuple[Quad, list[tuple[int, bool]]]]:
        return self.history.match_records(self.tx, pattern)


@dataclass
class GraphResolution:
    """What a :class:`GraphMerger` decided for one graph: ``keep`` gives the exact
    objects some ``(graph, subject, predicate)`` groups hold after the merge (groups in
    conflict, and any others it needs, e.g. a new legend); ``conflicts`` are the
    conflicts it found (raised under "abort", already resolved by the policy otherwise);
    ``unresolved`` are quad conflicts it leaves to the usual policy."""

    keep: dict[tuple, list[Any]] = field(default_factory=dict)
    conflicts: list[Any] = field(default_factory=list)
    unresolved: list[Conflict] = field(default_factory=list)


class GraphMerger(Protocol):
    """Merges the conflicts of the graphs it ``claims`` with its own rules (e.g. tables,
    cell by cell); a plug-in registers one (:meth:`fstore.plugins.Plugins.add_graph_merger`)."""

    def claims(self, graph: Any) -> bool: ...

    def merge(self, sides: MergeSides, graph: Any, conflicts: list[Conflict], policy: Policy) -> GraphResolution: ...


def graph_mergers(snapshot: Snapshot) -> Sequence[GraphMerger]:
    """The graph mergers of the store a merge runs in: those its plug-ins registered when
    it opened (``storage.plugins``, see :mod:`fstore.plugins`), never a process-wide list."""
    plugins = snapshot.storage.plugins
    return () if plugins is None else plugins.graph_mergers


def _claimant(mergers: Sequence[GraphMerger], graph: Any) -> GraphMerger | None:
    return next((m for m in mergers if m.claims(graph)), None)


def resolution_objects(objects: Iterable[Any], held: Iterable[dict[bytes, Any]], where: str) -> dict[bytes, Any]:
    """The ``objects`` a resolution keeps, by packed key, each in canonical form. One no
    side holds (``held``: the objects at each side) enters the store, so it is checked as
    ``fstore.add`` checks a term (``InvalidTermError`` naming ``where``); one a side holds
    is kept as it is, so a quad stored before the checks stays mergeable."""
    held = tuple(held)
    keep: dict[bytes, Any] = {}
    for obj in objects:
        obj = check_value(obj, where)
        try:
            check_term(obj, where)  # before packing, as add checks: a NaN decimal is a bad term, not a PackError
        except InvalidTermError:
            if not _held(obj, held):
                raise
        keep[pack(obj)] = obj
    return keep


def _held(obj: Any, held: tuple[dict[bytes, Any], ...]) -> bool:
    """Whether a side holds ``obj`` (what cannot be packed was never stored)."""
    try:
        key = pack(obj)
    except PackError:
        return False
    return any(key in side for side in held)


def check_policy(policy: Policy) -> None:
    if not callable(policy) and policy not in POLICIES:
        raise ValueError(f"merge policy must be one of {POLICIES} or a callable, not {policy!r}")


_SIDES = ("base", "ours", "theirs")


def plan_merge(snapshot: Snapshot, history: History, ours: int, theirs: int, base: int | None,
               policy: Policy) -> MergeOutcome:
    """Work out a merge of commit ``theirs`` into ``ours`` (both seqs, neither an ancestor of
    the other) in one space (``history``: the quads or the tables); under the "abort"
    policy conflicts are only listed (the caller raises). Writes nothing."""
    tx = snapshot.tx
    anc_ours = snapshot.ancestors(ours)
    anc_theirs = snapshot.ancestors(theirs)
    anc_base = snapshot.ancestors(base)
    anc_union = anc_ours | anc_theirs
    ours_side = history.quads_changed_by(tx, sorted(anc_ours - anc_base))
    theirs_side = history.quads_changed_by(tx, sorted(anc_theirs - anc_base))

    # Conflicts: (g, s, p) groups both sides touched whose object sets all differ.
    def group(key_quads: dict[bytes, Quad]) -> dict[bytes, tuple]:
        return {pack(*q[:3]): q[:3] for q in key_quads.values()}

    ours_groups, theirs_groups = group(ours_side), group(theirs_side)
    resolved: dict[bytes, dict[bytes, Any]] = {}  # group -> objects to keep
    conflicts: list[Conflict] = []
    candidates = {**ours_side, **theirs_side}

    def apply_policy(key: bytes, gsp: tuple, conflict: Conflict, at_base: dict, at_ours: dict, at_theirs: dict) -> None:
        conflict = conflict.in_terms()
        conflicts.append(conflict)
        if policy == "ours":
            keep = at_ours
        elif policy == "theirs":
            keep = at_theirs
        elif callable(policy):
            keep = resolution_objects(policy(conflict), (at_base, at_ours, at_theirs), f"merge resolution of {conflict}")
        else:
            return
        resolved[key] = keep
        for objs in (at_base, at_ours, at_theirs, keep):
            for obj in objs.values():
                quad = (*gsp, obj)
                candidates.setdefault(pack(*quad), quad)

    mergers = graph_mergers(snapshot)
    sides = MergeSides(snapshot, {"base": base, "ours": ours, "theirs": theirs}, history)
    deferred: dict[bytes, tuple[GraphMerger, Any, list[Conflict]]] = {}
    both = sorted(ours_groups.keys() & theirs_groups.keys())
    sides.prefetch([ours_groups[key] for key in both])
    for key in both:
        gsp = ours_groups[key]
        at_base, at_ours, at_theirs = (sides.objects(side, gsp) for side in _SIDES)
        if at_ours.keys() == at_base.keys() or at_theirs.keys() == at_base.keys() or at_ours.keys() == at_theirs.keys():
            continue
        conflict = Conflict(*gsp, *(tuple(objs[k] for k in sorted(objs)) for objs in (at_base, at_ours, at_theirs)))
        merger = _claimant(mergers, gsp[0]) if mergers else None
        if merger is not None:  # a graph merger resolves it below, with its graph's others
            deferred.setdefault(pack(gsp[0]), (merger, gsp[0], []))[2].append(conflict)
            continue
        apply_policy(key, gsp, conflict, at_base, at_ours, at_theirs)
    for merger, graph, graph_conflicts in deferred.values():
        resolution = merger.merge(sides, graph, graph_conflicts, policy)
        conflicts.extend(resolution.conflicts)
        for conflict in resolution.unresolved:
            gsp = (conflict.graph, conflict.subject, conflict.predicate)
            apply_policy(pack(*gsp), gsp, conflict, *(sides.objects(side, gsp) for side in _SIDES))
        for gsp, objects in resolution.keep.items():
            held = [sides.objects(side, gsp) for side in _SIDES]
            keep = resolution_objects(objects, held, f"merge resolution of {gsp!r}")
            resolved[pack(*gsp)] = keep
            for objs in (*held, keep):
                for obj in objs.values():
                    quad = (*gsp, obj)
                    candidates.setdefault(pack(*quad), quad)
    if conflicts and policy == "abort":
        return MergeOutcome([], 0, 0, conflicts)

    records: list[tuple[Quad, bool, list[bytes] | None]] = []
    added = removed = 0
    ordered = sorted(candidates)
    for key, quad_records in zip(ordered, history.records_many(tx, [candidates[key] for key in ordered])):
        quad = candidates[key]
        state = {}
        for name, ancestry in (("base", anc_base), ("ours", anc_ours), ("theirs", anc_theirs), ("union", anc_union)):
            best = winner(quad_records, ancestry)
            state[name] = best is not None and best[1]
        keep = resolved.get(pack(*quad[:3]))
        if keep is not None:
            merged = pack(quad[3]) in keep
        elif state["ours"] == state["base"]:
            merged = state["theirs"]
        else:
            merged = state["ours"]
        # A quad both sides changed, to different states, gets a record even when the union
        # of the two histories already holds the merged state: which side's record wins in
        # that union follows the significance order, and that order is each store's own
        # (commits arrive in different orders). The merge's record comes after both in
        # every store, so the state at the merge, its digest and its id are the same
        # wherever it is received.
        contested = state["ours"] != state["theirs"] and key in ours_side and key in theirs_side
        if merged != state["union"] or contested:
            records.append((quad, merged, None))
        if merged != state["ours"]:
            if merged:
                added += 1
            else:
                removed += 1
    return MergeOutcome(records, added, removed, conflicts)
