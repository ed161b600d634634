"""Branches and tags: creating and deleting them, and where the current branch stands
against its remote-tracking branches (``status``).

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="one") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), 1)
>>> with repo.storage.write() as writer:
...     create_branch(writer, "dev", "main")
...     tag(writer, "v1", "dev") == writer.commit_id(writer.head("main"))
True
>>> with repo.storage.read() as snapshot:
...     status(snapshot)["branch"], sorted(snapshot.branches())
('main', ['dev', 'main'])
>>> repo.close()
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from ..core.storage import Snapshot, Writer
from ..core.refs import BRANCH, REMOTE, TAG, check_ref_name, qualified
from ..errors import RefInUseError, UnknownRefError

__all__ = ["create_branch", "delete_branch", "tag", "status", "reflog"]


def create_branch(writer: Writer, name: str, start: str | None) -> None:
    """Branch ``name`` at ``start`` (any ref; None: an empty branch with no commits), sharing
    the start branch's snapshots if ``start`` names a branch. O(1): it writes one key."""
    check_ref_name(name)
    seq = None if start is None else writer.resolve(start)
    kind, plain = qualified(start) if start is not None else (None, "")
    named_branch = kind in (None, BRANCH) and writer.ref(BRANCH, plain)[0]
    start_branch = plain if start is not None and named_branch else None  # its snapshot is shared
    writer.create_branch(name, seq, start_branch)


def delete_branch(writer: Writer, name: str, *, force: bool = True) -> None:
    """Delete a branch, never the current one; without ``force``, only one whose commits
    another branch holds (git's ``branch -d``)."""
    if writer.current_branch() == name:
        raise RefInUseError(f"cannot delete branch {name!r}: it is the current branch")
    head = writer.head(name)
    if not force and head is not None:
        others = [seq for other, seq in writer.refs(BRANCH) if other != name and seq is not None]
        if not any(head in writer.ancestors(seq) for seq in others):
            raise RefInUseError(f"branch {name!r} is not merged into any other branch: "
                                "delete it anyway with force (datae branch -D)")
    writer.delete_branch(name)


def tag(writer: Writer, name: str, ref: str) -> str:
    """Tag the commit ``ref`` names; returns its id."""
    check_ref_name(name)
    seq = writer.resolve(ref)
    if seq is None:
        raise UnknownRefError(f"cannot tag {ref!r}: it has no commits")
    writer.create_ref(TAG, name, seq)
    return writer.commit(seq).id


def status(snapshot: Snapshot) -> dict[str, Any]:
    """The current branch, its head id, and for each remote-tracking branch of the same
    name the commits ahead (here only) and behind (there only)."""
    branch = snapshot.current_branch()
    head = snapshot.head(branch)
    mine = snapshot.ancestors(head)
    tracking = {}
    for name, seq in snapshot.refs(REMOTE):
        if name.split("/", 1)[1] == branch:
            theirs = snapshot.ancestors(seq)
            tracking[name] = {"ahead": len(mine - theirs), "behind": len(theirs - mine)}
    return {"branch": branch, "head": snapshot.commit_id(head), "tracking": tracking}


def reflog(snapshot: Snapshot) -> list[tuple[_dt.datetime, str, str, str]]:
    """The deleted branches and tags, oldest first: ``(when, "branch" or "tag", name, the
    commit id it reached)``."""
    return [(when, "branch" if kind == BRANCH else "tag", name, snapshot.commit(seq).id)
            for when, kind, name, seq in snapshot.reflog()]
