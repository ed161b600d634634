"""Merge requests (the paper's pull requests): a proposal to merge a source branch into a
target branch of the same store, reviewed (comments, approvals) and then merged or closed
there, so that a senior person validates the change of a less senior one.

Requests are repository metadata, in no commit (``docs/format.md``: ``pack("q", n)``): they
have no history of their own and no commit id depends on them. A fetch copies a remote's
requests, read-only, under ``pack("Q", remote, n)`` (:func:`mirror_requests`,
:class:`Mirror`). Every argument and result of the API is JSON (dicts, lists, str, int,
None), since the same calls are to travel over HTTP to a server.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="first", author="ann") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), "o")
>>> repo.branch("fix")
>>> with repo.transaction("fix", message="fix", author="bob") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), "o2")
>>> number = repo.request_open("fix", "main", "Fix the object", author="bob")
>>> repo.request_approve(number, author="ann")
>>> shown = repo.request(number)
>>> shown["state"], shown["preview"]["quads"], shown["preview"]["changes"], shown["preview"]["conflicts"]
('open', {'added': 1, 'removed': 0}, ['+ <urn:s> <urn:p> "o2" .'], [])
>>> merged = repo.request_merge(number, author="ann")
>>> repo.requests()[0]["state"], repo.head("main") == merged
('merged', True)
>>> repo.close()
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import unquote

from ..ops.merge import merge as merge_into
from ..ops.diff import diff_seqs
from ..errors import FstoreError, MergeConflict, UnknownRefError
from ..ops.three_way import Conflict, plan_merge
from ..core.refs import BRANCH, REMOTE
from nstore.terms import IRI, format_term, to_rdf

from .opener import OpenStore
from .remote_config import remote_url

if TYPE_CHECKING:
    from ..core.storage import Snapshot, Storage, Writer

__all__ = [
    "STATES",
    "PREVIEW_LIMIT",
    "RequestError",
    "UnknownRequestError",
    "RequestStateError",
    "RequestRefusedError",
    "RequestConflictError",
    "open_request",
    "list_requests",
    "show_request",
    "comment_request",
    "approve_request",
    "merge_request",
    "close_request",
    "mirror_requests",
    "adopt_copied_requests",
    "Mirror",
]

STATES = ("open", "merged", "closed")
PREVIEW_LIMIT = 20
MAX_PREVIEW_LIMIT = 10_000
# fstore.tables.mapping owns these names; the core may not import the tables package
# (tests/test_layers.py), and a request only needs them to count rows.
_DATASET_PREFIX = "urn:datae:dataset:"
_FEATURE = IRI("urn:datae:table:feature")


class RequestError(FstoreError):
    """A merge request operation was refused; the store is unchanged."""


class UnknownRequestError(RequestError, KeyError):
    """No request has that number."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class RequestStateError(RequestError):
    """The request is not open (merged or closed), or an open one already proposes it."""


class RequestRefusedError(RequestError):
    """The request or the action makes no sense: a branch into itself, nothing to merge,
    an approval by the request's own author or by nobody."""


class RequestConflictError(RequestError):
    """Merging the request would conflict; ``conflicts`` lists them (JSON, as in the
    preview). Nothing was written."""

    def __init__(self, message: str, conflicts: list[dict]) -> None:
        super().__init__(message)
        self.conflicts = conflicts


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# -- reading ------------------------------------------------------------------------------


def _record(snapshot: Snapshot, number: int, remote: str | None = None) -> dict:
    if not isinstance(number, int) or isinstance(number, bool):
        raise UnknownRequestError(f"a request number is an integer, not {number!r}")
    record = snapshot.request_record(number, remote)
    if record is None:
        where = "" if remote is None else f" of remote {remote!r} (as of the last fetch)"
        raise UnknownRequestError(f"no merge request #{number}{where}")
    return record


def _check_state(state: str | None) -> None:
    if state is not None and state not in STATES:
        raise RequestRefusedError(f"a request state is one of {', '.join(STATES)}, not {state!r}")


def list_requests(storage: Storage, state: str | None = None, remote: str | None = None) -> list[dict]:
    """Every request (in ``state`` if given), by number; ``remote``: the copies of that
    remote's the last fetch made."""
    _check_state(state)
    with storage.read() as snapshot:
        return [record for _, record in snapshot.request_records(remote)
                if state is None or record["state"] == state]


def show_request(store: OpenStore, number: int, limit: int = PREVIEW_LIMIT, remote: str | None = None) -> dict:
    """Request ``number`` with its ``preview`` (see :func:`_preview`; None when its
    commits are not at hand: a closed request, or a deleted branch)."""
    if not isinstance(limit, int) or not 0 <= limit <= MAX_PREVIEW_LIMIT:
        raise RequestRefusedError(f"a preview shows 0 to {MAX_PREVIEW_LIMIT} changes, not {limit!r}")
    with store.storage.read() as snapshot:
        record = _record(snapshot, number, remote)
        ends = _ends(snapshot, record, remote)
        record["preview"] = None if ends is None else _preview(snapshot, *ends, limit)
    return record


def _ends(snapshot: Snapshot, record: dict, remote: str | None) -> tuple[int, int | None] | None:
    """The commits (source, target) a preview compares: the branches' heads while open
    (a remote's as last fetched, for a copy), what was merged onto what once merged."""
    if record["state"] == "merged":
        source = snapshot.seq_of(record["merged_head"])
        target = None if record["merged_onto"] is None else snapshot.seq_of(record["merged_onto"])
        if source is None or (target is None and record["merged_onto"] is not None):
            return None  # not fetched, or dropped by gc
        return source, target
    if record["state"] != "open":
        return None
    heads = []
    for branch in (record["source"], record["target"]):
        kind, name = (REMOTE, f"{remote}/{branch}") if remote is not None else (BRANCH, branch)
        exists, seq = snapshot.ref(kind, name)
        if not exists:
            return None
        heads.append(seq)
    return None if heads[0] is None else (heads[0], heads[1])


def _preview(snapshot: Snapshot, source: int, target: int | None, limit: int) -> dict:
    """What merging commit ``source`` into ``target`` would do, computed without writing:
    ``kind`` ("up to date", "fast-forward" or "merge"); the changes of the source since
    the merge base (GitHub's three-dot diff): quads ``added`` / ``removed``, ``tables``
    (table -> rows changed), the first ``limit`` quad ``changes`` as N-Quads-like lines
    and how many ``more``; and the ``conflicts`` (a dry run of the merge planner)."""
    if source in snapshot.ancestors(target):
        kind, base = "up to date", source
    elif target is None or target in snapshot.ancestors(source):
        kind, base = "fast-forward", target
    else:
        kind, base = "merge", snapshot.merge_base(target, source)
    preview = {"kind": kind, "source_head": snapshot.commit_id(source), "target_head": snapshot.commit_id(target),
               "base": snapshot.commit_id(base), "quads": {"added": 0, "removed": 0}, "tables": {},
               "changes": [], "more": 0, "conflicts": []}
    if kind == "up to date":
        return preview
    for op, quad in diff_seqs(snapshot, base, source):
        preview["quads"]["added" if op == "+" else "removed"] += 1
        if len(preview["changes"]) < limit:
            preview["changes"].append(_change_line(op, quad))
        else:
            preview["more"] += 1
    preview["tables"] = _rows_changed(snapshot, base, source)
    if kind == "merge":
        for space in snapshot.spaces:  # plan_merge writes nothing; under "abort" it only lists
            outcome = plan_merge(snapshot, space, target, source, base, "abort")
            preview["conflicts"] += [_conflict_json(conflict) for conflict in outcome.conflicts]
    return preview


def _change_line(op: str, quad: tuple) -> str:
    graph, *triple = map(format_term, quad)
    return f"{op} {' '.join(triple)}{' ' + graph if graph else ''} ."


def _rows_changed(snapshot: Snapshot, base: int | None, source: int) -> dict[str, int]:
    """Table name -> rows the source inserted, deleted or updated since ``base`` (a row
    is one feature tuple, its graph the table's, its subject the row's path)."""
    rows: dict[str, set[str]] = {}
    for _, (graph, path, predicate, _) in diff_seqs(snapshot, base, source, history=snapshot.tables):
        if to_rdf(predicate) == _FEATURE:
            name = unquote(str(to_rdf(graph).value).removeprefix(_DATASET_PREFIX))
            rows.setdefault(name, set()).add(str(path))
    return {name: len(paths) for name, paths in sorted(rows.items())}


def _conflict_json(conflict: Any) -> dict:
    """A conflict as JSON: the quad's terms as N-Triples text and each side's objects
    (target = ours, source = theirs), or a table's conflict as text; ``text`` always."""
    if not isinstance(conflict, Conflict):
        return {"table": getattr(conflict, "table", None), "text": str(conflict)}
    graph, subject, predicate = (format_term(v) or None for v in (conflict.graph, conflict.subject, conflict.predicate))
    sides = {side: [format_term(o) for o in objects]
             for side, objects in (("base", conflict.base), ("target", conflict.ours), ("source", conflict.theirs))}
    where = " ".join(v for v in (subject, predicate, graph) if v)
    text = f"{where}: base {' '.join(sides['base']) or '(none)'}, target {' '.join(sides['target']) or '(none)'}, " \
           f"source {' '.join(sides['source']) or '(none)'}"
    return {"graph": graph, "subject": subject, "predicate": predicate, **sides, "text": text}


# -- writing ------------------------------------------------------------------------------


def _require_open(record: dict, action: str) -> None:
    if record["state"] != "open":
        raise RequestStateError(f"cannot {action} merge request #{record['number']}: it is {record['state']}")


def _branch_head(snapshot: Snapshot, branch: str, role: str) -> int | None:
    try:
        return snapshot.head(branch)
    except UnknownRefError:
        raise UnknownRefError(f"no branch named {branch!r} (the request's {role})") from None


def open_request(storage: Storage, source: str, target: str, title: str, author: str) -> int:
    """Propose merging branch ``source`` into branch ``target``; returns the new request's
    number (1, 2, ... in this store). Refused: a branch into itself, a source with no
    commits or nothing the target lacks, a pair an open request already proposes."""
    if source == target:
        raise RequestRefusedError(f"cannot request to merge branch {source!r} into itself")
    with storage.write() as writer:
        head = _branch_head(writer, source, "source")
        onto = _branch_head(writer, target, "target")
        if head is None or head in writer.ancestors(onto):
            raise RequestRefusedError(f"nothing to merge: {target!r} already holds every commit of {source!r}")
        for number, other in writer.request_records():
            if other["state"] == "open" and (other["source"], other["target"]) == (source, target):
                raise RequestStateError(f"merge request #{number} already proposes {source} -> {target}")
        number = writer.next_request_number()
        now = _now()
        writer.put_request(number, {
            "number": number, "source": source, "target": target, "title": title, "author": author,
            "created": now, "updated": now, "state": "open", "source_head": writer.commit_id(head),
            "comments": [], "approvals": [], "merge_commit": None, "merged_head": None, "merged_onto": None,
            "merged_by": None, "closed_by": None})
    return number


def _update(storage: Storage, number: int, change: Callable[[Writer, dict], None]) -> None:
    """Apply ``change(writer, record)`` to request ``number`` in one write transaction
    (an exception inside leaves it as it was) and stamp it updated."""
    with storage.write() as writer:
        record = _record(writer, number)
        change(writer, record)
        record["updated"] = _now()
        writer.put_request(number, record)


def comment_request(storage: Storage, number: int, text: str, author: str) -> None:
    """Add a comment (allowed in every state: a merged request can still be discussed)."""
    if not isinstance(text, str) or not text.strip():
        raise RequestRefusedError(f"a comment on merge request #{number} needs some text")

    def change(writer: Writer, record: dict) -> None:
        record["comments"].append({"author": author, "time": _now(), "text": text})

    _update(storage, number, change)


def approve_request(storage: Storage, number: int, author: str) -> None:
    """Approve an open request at its source's current head. As on GitHub, its own author
    cannot approve it (the point is that someone else validates the change), nor can an
    unnamed author. Approving again records the newer head in place of the older."""
    if not author:
        raise RequestRefusedError(f"an approval of merge request #{number} needs an author")

    def change(writer: Writer, record: dict) -> None:
        _require_open(record, "approve")
        if author == record["author"]:
            raise RequestRefusedError(f"{author} opened merge request #{number} and cannot approve it: "
                                      "someone else must")
        head = writer.ref(BRANCH, record["source"])[1]
        approvals = [a for a in record["approvals"] if a["author"] != author]
        record["approvals"] = approvals + [{"author": author, "time": _now(), "head": writer.commit_id(head)}]

    _update(storage, number, change)


def close_request(storage: Storage, number: int, author: str) -> None:
    """Close an open request without merging it."""

    def change(writer: Writer, record: dict) -> None:
        _require_open(record, "close")
        record["state"], record["closed_by"] = "closed", author

    _update(storage, number, change)


def merge_request(storage: Storage, number: int, author: str, message: str | None = None) -> str:
    """Merge an open request's source into its target with the normal merge (a
    fast-forward when it can be); returns the target's new head. A conflicting merge is
    refused with :class:`RequestConflictError`, and nothing is written: the contributor
    merges the target into the source, resolves there, and pushes again.

    One write transaction reads the request, merges and marks it merged: a second merge
    or a close of the same request, from this process or another (the workers of ``datae
    serve``), waits for it on LMDB's writer lock and is then refused as the request is no
    longer open. (Read first and merged after, a close could land in between and the
    branch be merged under a closed request.)"""
    with storage.write() as writer:
        record = _record(writer, number)
        _require_open(record, "merge")
        source, target = record["source"], record["target"]
        head = writer.commit_id(_branch_head(writer, source, "source"))
        onto = writer.commit_id(_branch_head(writer, target, "target"))
        if message is None:
            message = f"Merge request #{number} from {source}: {record['title']}" if record["title"] else \
                      f"Merge request #{number} from {source}"
        try:
            # The id read above, not the branch name: what is recorded is what was merged.
            merged = merge_into(writer, target, head, message=message, author=author)
        except MergeConflict as exc:
            conflicts = [_conflict_json(conflict) for conflict in exc.conflicts]
            shown = "; ".join(c["text"] for c in conflicts[:3]) + (" ..." if len(conflicts) > 3 else "")
            raise RequestConflictError(
                f"merge request #{number} conflicts ({len(conflicts)}: {shown}); nothing was written. Merge {target} "
                f"into {source}, resolve the conflicts there, and update the request's branch", conflicts) from None
        record.update(state="merged", merge_commit=merged, merged_head=head, merged_onto=onto, merged_by=author,
                      updated=_now())
        writer.put_request(number, record)
    return merged  # type: ignore[return-value]  # a merge of a commit: never a branch without one


# -- copies of a remote's requests ----------------------------------------------------------


def mirror_requests(storage: Storage, remote: Any, remote_name: str) -> int:
    """Replace the copies of ``remote_name``'s requests in ``storage`` with what
    ``remote`` (anything with a ``requests()`` method: a store on a path, or the HTTP
    client) holds now; returns how many. Called by fetch."""
    records = remote.requests()
    with storage.write() as writer:
        writer.drop_requests(remote_name)
        for record in records:
            writer.put_request(record["number"], record, remote_name)
    return len(records)


def adopt_copied_requests(writer: Writer, remote: str) -> None:
    """In a clone made by copying a store's file: the requests copied are ``remote``'s,
    not the clone's own, and the copies it held of its own remotes' are not the clone's."""
    records = list(writer.request_records())
    writer.drop_requests()
    writer.drop_request_mirrors()
    for number, record in records:
        writer.put_request(number, record, remote)


class Mirror:
    """The copies of ``remote``'s requests the last fetch made: read-only, offline. Open
    requests preview ``remote/SOURCE`` into ``remote/TARGET`` as fetched.

    The same read methods as :class:`fstore.Repository`, so a command can take either."""

    def __init__(self, store: OpenStore, remote: str) -> None:
        remote_url(store.storage, remote)  # UnknownRefError if there is no such remote
        self.store = store
        self.remote = remote

    def requests(self, state: str | None = None) -> list[dict]:
        return list_requests(self.store.storage, state, self.remote)

    def request(self, number: int, *, limit: int = PREVIEW_LIMIT) -> dict:
        return show_request(self.store, number, limit, self.remote)
