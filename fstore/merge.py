"""Three-way merges of quad sets, with conflicts per (graph, subject, predicate).

Against the merge base (the most significant common ancestor), a quad one side changed
takes that side's state. A (graph, subject, predicate) whose object set *both* sides changed,
to different results, is a conflict: the policy resolves it (``"ours"``, ``"theirs"``, or a
callable returning the objects to keep) or, with ``"abort"``, the merge raises
:class:`MergeConflict` and writes nothing.

The merge commit writes a *resolution record* for every quad whose merged state differs from
what history significance alone would give over the union of both ancestries, so the
significance rule stays true at the merge commit and at every descendant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Union

from nstore import Var
from nstore.okvs import Transaction as OkvsTransaction
from nstore.pack import pack

from .errors import MergeConflict
from .history import Quad, winner
from .values import check_value

if TYPE_CHECKING:
    from .repository import Repository

__all__ = ["Conflict", "Policy", "MergeOutcome", "plan_merge"]


@dataclass(frozen=True)
class Conflict:
    """Both sides changed the objects of (graph, subject, predicate) to different sets.

    ``base``, ``ours`` and ``theirs`` are the objects at each commit, in key order.
    """

    graph: Any
    subject: Any
    predicate: Any
    base: tuple
    ours: tuple
    theirs: tuple

    def __str__(self) -> str:
        return (
            f"({self.graph!r}, {self.subject!r}, {self.predicate!r}): base {list(self.base)!r}, "
            f"ours {list(self.ours)!r}, theirs {list(self.theirs)!r}"
        )


Policy = Union[str, Callable[[Conflict], Iterable[Any]]]
POLICIES = ("abort", "ours", "theirs")


@dataclass
class MergeOutcome:
    """What a merge commit must write: resolution records and counts vs the first parent."""

    records: list[tuple[Quad, bool, bytes | None]]
    added: int
    removed: int
    conflicts: list[Conflict]


def check_policy(policy: Policy) -> None:
    if not callable(policy) and policy not in POLICIES:
        raise ValueError(f"merge policy must be one of {POLICIES} or a callable, not {policy!r}")


def _objects_at(repo: Repository, tx: OkvsTransaction, gsp: tuple, ancestors: frozenset[int]) -> dict[bytes, Any]:
    return {pack(o): o for (_, _, _, o) in repo._history.match(tx, (*gsp, Var("o")), ancestors)}


def _candidates(repo: Repository, tx: OkvsTransaction, commits: Iterable[int]) -> dict[bytes, Quad]:
    found: dict[bytes, Quad] = {}
    for seq in commits:
        for quad, _ in repo._history.changes_of(tx, seq):
            found.setdefault(pack(*quad), quad)
    return found


def plan_merge(repo: Repository, tx: OkvsTransaction, ours: int, theirs: int, base: int | None, policy: Policy) -> MergeOutcome:
    """Work out a merge of commit ``theirs`` into ``ours`` (both seqs, neither an ancestor of
    the other); raises MergeConflict under the "abort" policy. Writes nothing."""
    commits = repo._commits
    anc_ours = commits.ancestors(tx, ours)
    anc_theirs = commits.ancestors(tx, theirs)
    anc_base = commits.ancestors(tx, base)
    anc_union = anc_ours | anc_theirs
    ours_side = _candidates(repo, tx, sorted(anc_ours - anc_base))
    theirs_side = _candidates(repo, tx, sorted(anc_theirs - anc_base))

    # Conflicts: (g, s, p) groups both sides touched whose object sets all differ.
    def group(key_quads: dict[bytes, Quad]) -> dict[bytes, tuple]:
        return {pack(*q[:3]): q[:3] for q in key_quads.values()}

    ours_groups, theirs_groups = group(ours_side), group(theirs_side)
    resolved: dict[bytes, dict[bytes, Any]] = {}  # group -> objects to keep
    conflicts: list[Conflict] = []
    candidates = {**ours_side, **theirs_side}
    for key in sorted(ours_groups.keys() & theirs_groups.keys()):
        gsp = ours_groups[key]
        at_base = _objects_at(repo, tx, gsp, anc_base)
        at_ours = _objects_at(repo, tx, gsp, anc_ours)
        at_theirs = _objects_at(repo, tx, gsp, anc_theirs)
        if at_ours.keys() == at_base.keys() or at_theirs.keys() == at_base.keys() or at_ours.keys() == at_theirs.keys():
            continue
        conflict = Conflict(*gsp, *(tuple(objs[k] for k in sorted(objs)) for objs in (at_base, at_ours, at_theirs)))
        conflicts.append(conflict)
        if policy == "ours":
            keep = at_ours
        elif policy == "theirs":
            keep = at_theirs
        elif callable(policy):
            keep = {}
            for obj in policy(conflict):
                obj = check_value(obj, f"merge resolution of {conflict}")
                keep[pack(obj)] = obj
        else:
            continue
        resolved[key] = keep
        for objs in (at_base, at_ours, at_theirs, keep):
            for obj in objs.values():
                quad = (*gsp, obj)
                candidates.setdefault(pack(*quad), quad)
    if conflicts and policy == "abort":
        raise MergeConflict(conflicts)

    records: list[tuple[Quad, bool, bytes | None]] = []
    added = removed = 0
    history = repo._history
    for key in sorted(candidates):
        quad = candidates[key]
        quad_records = history.records(tx, quad)
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
        if merged != state["union"]:
            records.append((quad, merged, None))
        if merged != state["ours"]:
            if merged:
                added += 1
            else:
                removed += 1
    return MergeOutcome(records, added, removed, conflicts)
