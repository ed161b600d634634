"""Reset: datae has no working tree, so a reset only moves a branch. It refuses to drop
commits no other ref (branch, tag, remote-tracking branch) reaches unless ``hard``;
whenever the old head is not an ancestor of the new one, the old head goes to the
reflog, so gc keeps its commits until the entry expires (as ``push --force`` does).

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> for n in (1, 2):
...     with repo.transaction("main", message=f"set {n}") as tx:
...         fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), n)
>>> with repo.storage.write() as writer:
...     reset(writer, "main~1", hard=True) == writer.commit_id(1)
True
>>> repo.close()
"""

from __future__ import annotations

from ..core.storage import Snapshot, Writer
from ..core.refs import BRANCH, REMOTE, TAG
from ..errors import ResetRefusedError, UnknownRefError
from .conflicts import decode_state
from .merge_state import refuse_while_merging

__all__ = ["reset", "lost_by_reset", "refuse_reset"]


def lost_by_reset(snapshot: Snapshot, branch: str, old: int | None, new: int) -> set[int]:
    """The commits moving ``branch`` from ``old`` to ``new`` leaves no ref reaching."""
    ancestors = snapshot.ancestors
    dropped = set(ancestors(old)) - ancestors(new)
    for kind in (BRANCH, TAG, REMOTE):
        for name, seq in snapshot.refs(kind):
            if dropped and seq is not None and not (kind == BRANCH and name == branch):
                dropped -= ancestors(seq)
    return dropped


def refuse_reset(branch: str, lost: set[int], target: str) -> None:
    """Raise :class:`ResetRefusedError` if the reset would lose commits (``lost``)."""
    if lost:
        raise ResetRefusedError(f"resetting {branch!r} to {target!r} would drop {len(lost)} commit(s) no other branch "
                                "or tag reaches; reset --hard to drop them (they stay in the reflog until gc expires it)")


def reset(writer: Writer, ref: str, branch: str | None = None, *, hard: bool = False) -> str:
    """Move ``branch`` (default: the current one) to commit ``ref``; returns its id (see
    :meth:`fstore.Repository.reset`)."""
    branch = branch or writer.current_branch()
    raw = writer.merge_state()
    if raw is not None and decode_state(raw).into == branch:
        refuse_while_merging(writer, f"reset {branch!r}")
    old = writer.head(branch)
    new = writer.resolve(ref)
    if new is None:
        raise UnknownRefError(f"cannot reset {branch!r} to {ref!r}: it has no commits")
    if new == old:
        return writer.commit_id(new)  # type: ignore[return-value]
    if not hard:
        refuse_reset(branch, lost_by_reset(writer, branch, old, new), ref)
    forward = old is None or old in writer.ancestors(new)
    if not forward:
        writer.log_ref(BRANCH, branch, old)
    writer.fast_forward(branch, old if forward else None, new)
    return writer.commit_id(new)  # type: ignore[return-value]
