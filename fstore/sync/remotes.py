"""The fetching and pushing side of sync: remotes, clone, fetch and push.

A remote is a URL: a path to a directory holding a store (``DIR/.datae`` or ``DIR``), or
``http://HOST:PORT`` for a store served by ``datae serve`` (:mod:`fstore.sync.http_client`).
Both answer the same calls (:class:`Remote`), which are the serving side of
:mod:`fstore.sync`, so a store on a path and a server send and check exactly the same
payloads; a store on a path has them encoded and decoded as on the wire.

Each function takes the local store's ``Storage`` (``pull`` the open store, as it
merges), and an :class:`~fstore.sync.opener.Opener` to open a remote on a path or the
clone: ``fstore.Repository`` passes itself, so nothing here imports it. The API is on
:class:`fstore.Repository` (``remote_add``, ``fetch``, ``push``, ``pull``) and
:func:`fstore.clone`.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import warnings
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Protocol

from nstore.lmdbfile import DATA_FILE

from ..core.refs import BRANCH, REMOTE, TAG, check_ref_name, kind_name, qualify
from ..location import locate
from ..ops import merge_state
from ..ops.three_way import Policy
from . import merge_requests
from . import protocol
from . import wire
from .opener import OpenedStore, Opener, OpenStore
from .protocol import NotFastForwardError, RefUpdate, SyncError, TamperedError
from .remote_config import add_remote, check_url, remote_url

if TYPE_CHECKING:
    from ..core.storage import Snapshot, Storage

__all__ = ["SkippedTagWarning", "Remote", "PathRemote", "connect", "fetch", "push", "pull", "clone_into", "Progress",
           "TOKEN_ENV"]

TOKEN_ENV = "DATAE_TOKEN"

Progress = Callable[[int, int], None]
"""Told ``(commits, records)`` received or sent so far, as a transfer runs."""


class Remote(Protocol):
    """What fetch, push and clone ask of the other store."""

    url: str

    def advertise(self) -> dict: ...

    def held_ids(self) -> set[str]: ...

    def send(self, wants: list[str], haves: set[str]) -> Iterator[dict]: ...

    def accept_push(self, updates: list[RefUpdate], payloads: Iterable[dict], force: bool) -> None: ...

    def copy_store(self, directory: str) -> None: ...

    def requests(self, state: str | None = None) -> list[dict]: ...

    def close(self) -> None: ...


class PathRemote:
    """A store on a path, opened here; its payloads go through the wire encoding. It
    answers the merge-request calls as :class:`fstore.sync.http_client.HttpRemote` does."""

    def __init__(self, url: str, store: OpenStore) -> None:
        self.url = url
        self.store = store

    def advertise(self) -> dict:
        return protocol.advertise(self.store.storage)

    def held_ids(self) -> set[str]:
        return protocol.held_ids(self.store.storage)

    def send(self, wants: list[str], haves: set[str]) -> Iterator[dict]:
        return (wire.decode_payload(wire.encode_payload(p)) for p in protocol.send(self.store.storage, wants, haves))

    def accept_push(self, updates: list[RefUpdate], payloads: Iterable[dict], force: bool) -> None:
        protocol.accept_push(self.store.storage, updates,
                             (wire.decode_payload(wire.encode_payload(p)) for p in payloads), force=force)

    def copy_store(self, directory: str) -> None:
        self.store.storage.okvs.copy_to(directory)

    def close(self) -> None:
        self.store.close()

    # -- merge requests, as the Repository methods of the same names ----------------------------

    def requests(self, state: str | None = None) -> list[dict]:
        return merge_requests.list_requests(self.store.storage, state)

    def request(self, n: int, *, limit: int = merge_requests.PREVIEW_LIMIT) -> dict:
        return merge_requests.show_request(self.store, n, limit)

    def request_open(self, source: str, target: str = "main", title: str = "", author: str = "") -> int:
        return merge_requests.open_request(self.store.storage, source, target, title, author)

    def request_comment(self, n: int, text: str, author: str = "") -> None:
        merge_requests.comment_request(self.store.storage, n, text, author)

    def request_approve(self, n: int, author: str) -> None:
        merge_requests.approve_request(self.store.storage, n, author)

    def request_merge(self, n: int, author: str = "", message: str | None = None) -> str:
        return merge_requests.merge_request(self.store.storage, n, author, message)

    def request_close(self, n: int, author: str = "") -> None:
        merge_requests.close_request(self.store.storage, n, author)


def connect(url: str, opener: Opener, token: str | None = None) -> Remote:
    """The remote ``url`` names: an HTTP server (``token``: its bearer token; default
    ``$DATAE_TOKEN``) or a store on a path, opened with ``opener``."""
    if check_url(url).startswith(("http://", "https://")):
        # Imported here: http.client costs 14 ms, which a store without HTTP remotes never pays.
        from .http_client import HttpRemote

        return HttpRemote(url, token if token is not None else os.environ.get(TOKEN_ENV))
    store = locate(url.removeprefix("file://"))
    if not os.path.isfile(os.path.join(store, DATA_FILE)):
        raise SyncError(f"remote {url!r}: no datae store there")
    return PathRemote(url, opener(store))


def _offer(remote: Remote) -> dict:
    offer = remote.advertise()
    if offer.get("protocol") != protocol.PROTOCOL_VERSION:
        raise SyncError(f"remote {remote.url!r} speaks sync protocol {offer.get('protocol')!r}; this datae speaks "
                        f"{protocol.PROTOCOL_VERSION}")
    return offer


def _counted(payloads: Iterable[dict], progress: Progress | None) -> Iterator[dict]:
    commits = records = 0
    for payload in payloads:
        yield payload
        commits += 1
        records += len(payload["records"])
        if progress is not None:
            progress(commits, records)


class SkippedTagWarning(UserWarning):
    """A fetch did not create a remote's tag whose name would make a name here ambiguous
    (a branch or remote-tracking branch has it); the tag's commit was fetched."""


def fetch(storage: Storage, name: str, opener: Opener, *, token: str | None = None,
          progress: Progress | None = None) -> dict[str, str | None]:
    """Bring remote ``name``'s commits here (a remote on a path is opened with
    ``opener``); set the remote-tracking branches ``name/BRANCH`` to its heads (dropping
    those of branches it deleted) and create its tags that are not here (a tag here is
    never moved). Returns ``{name/BRANCH: id}``."""
    remote = connect(remote_url(storage, name), opener, token)
    try:
        offer = _offer(remote)
        branches, tags = offer["branches"], offer["tags"]
        haves = protocol.held_ids(storage)
        wants = sorted({i for i in (*branches.values(), *tags.values()) if i is not None and i not in haves})
        for kind, refs in (("branch", branches), ("tag", tags)):
            for ref in refs:
                check_ref_name(ref, what=f"a {kind} of remote {name!r}")
        if wants:
            protocol.receive_all(storage, _counted(remote.send(wants, haves), progress))
        merge_requests.mirror_requests(storage, remote, name)  # fetched with the branches: read-only copies
    finally:
        remote.close()
    with storage.write() as writer:
        seq_of = writer.seq_of
        missing = sorted(i for i in (*branches.values(), *tags.values()) if i is not None and seq_of(i) is None)
        if missing:
            raise SyncError(f"remote {name!r} advertised commit {missing[0]} but did not send it; no ref moved")
        for ref, _ in list(writer.refs(REMOTE)):
            if ref.startswith(name + "/") and ref[len(name) + 1:] not in branches:
                writer.delete_ref(REMOTE, ref, log=False)  # pruned: the remote deleted it
        for branch, commit_id in branches.items():
            writer.set_ref(REMOTE, f"{name}/{branch}", None if commit_id is None else seq_of(commit_id))
        for tag, commit_id in tags.items():
            if writer.ref(TAG, tag)[0]:
                continue
            clash = _tag_clash(writer, tag)
            if clash:
                warnings.warn(SkippedTagWarning(f"remote {name!r} has a tag {tag!r} that was not fetched: {clash}; "
                                                f"its commit {commit_id} is here"), stacklevel=3)
                continue
            writer.set_ref(TAG, tag, seq_of(commit_id))
    return {f"{name}/{branch}": commit_id for branch, commit_id in branches.items()}


def _tag_clash(snapshot: Snapshot, tag: str) -> str | None:
    """Why a fetched tag named ``tag`` would make a name here ambiguous (None: it would not).
    git keeps both and warns; here a plain name must name one ref, so the tag is skipped."""
    other, remote = snapshot.ref_clash(TAG, tag)
    if other is not None:
        return f"a {kind_name(other)} here has that name"
    return None if remote is None else f"it starts with the name of remote {remote!r}"


def push(storage: Storage, name: str, branch: str | None, opener: Opener, *, force: bool = False,
         tags: bool = False, token: str | None = None, progress: Progress | None = None) -> str | None:
    """Send ``branch`` (and with ``tags`` every tag) to remote ``name`` and move its refs
    of those names: a fast-forward, unless ``force``. Refused before anything travels if
    it would not be one as far as this store knows the remote; refused at the end if a
    ref moved there meanwhile. A remote on a path is opened with ``opener``. Returns the
    id pushed for ``branch``."""
    remote = connect(remote_url(storage, name), opener, token)
    try:
        offer = _offer(remote)
        pushed, updates = _updates(storage, name, offer, branch, tags, force)
        if updates:
            payloads = _counted(protocol.send(storage, sorted({u.new for u in updates}), remote.held_ids()), progress)
            remote.accept_push(updates, payloads, force)
    finally:
        remote.close()
    if pushed is not None:
        with storage.write() as writer:
            writer.set_ref(REMOTE, f"{name}/{branch}", writer.seq_of(pushed))
    return pushed


def pull(store: OpenStore, name: str, branch: str | None, opener: Opener, *, policy: Policy = "record",
         token: str | None = None, author: str | None = None) -> str | None:
    """Fetch remote ``name`` and merge its ``branch`` (default: the current branch's
    name) into the current branch with ``store.merge``; returns the new head. Refused
    while a merge is in progress, and when the histories share no commit."""
    storage = store.storage
    with storage.read() as snapshot:
        into = snapshot.current_branch()
        merge_state.refuse_while_merging(snapshot, f"pull {name!r}")
    fetch(storage, name, opener, token=token)
    tracking = f"{name}/{branch or into}"
    other = qualify(REMOTE, tracking)  # a store may hold an older branch or tag named REMOTE/BRANCH
    with storage.read() as snapshot:
        ours, theirs = snapshot.head(into), snapshot.resolve(other)
        if ours is not None and theirs is not None and snapshot.merge_base(ours, theirs) is None:
            raise SyncError(f"cannot pull {tracking} into {into}: their histories share no commit")
    return store.merge(into, other, policy=policy, author=author)


def _updates(storage: Storage, name: str, offer: dict, branch: str | None, tags: bool,
             force: bool) -> tuple[str | None, list[RefUpdate]]:
    """The id ``branch`` is at here, and the refs a push moves, each checked to be a
    fast-forward unless ``force``."""
    updates = []
    local = None
    with storage.read() as snapshot:
        if branch is not None:
            local = snapshot.commit_id(snapshot.head(branch))
            if local is None:
                raise SyncError(f"branch {branch!r} has no commits to push")
            theirs = offer["branches"].get(branch)
            if theirs != local:
                known = snapshot.seq_of(theirs) if theirs else None
                if theirs is not None and not force and (
                        known is None or known not in snapshot.ancestors(snapshot.seq_of(local))):
                    raise NotFastForwardError(
                        f"push of {branch!r} to {name!r} refused: the remote's {branch} ({theirs[:10]}) has commits "
                        f"{branch} here lacks; fetch and merge, or force")
                updates.append(RefUpdate("branch", branch, theirs, local))
        if tags:
            for tag, seq in snapshot.refs(TAG):
                ours, theirs = snapshot.commit_id(seq), offer["tags"].get(tag)
                if theirs == ours:
                    continue
                if theirs is not None and not force:
                    raise NotFastForwardError(f"push of tag {tag!r} to {name!r} refused: it is at {theirs[:10]} there "
                                              "and a tag moves only by force")
                updates.append(RefUpdate("tag", tag, theirs, ours))
    return local, updates


def clone_into(url: str, path: str, opener: Opener[OpenedStore], *, local: bool = True,
               token: str | None = None, progress: Progress | None = None) -> OpenedStore:
    """Make the store at ``path`` a clone of ``url`` (see :func:`fstore.clone`). The clone
    is built in a hidden sibling folder, checked, and renamed into place last, so on any
    failure, a kill included, ``path`` is left as it was found (absent, or empty); a
    later clone removes what a killed one left (:func:`_build_folder`)."""
    path = os.path.abspath(path)
    if os.path.exists(os.path.join(path, DATA_FILE)):
        raise SyncError(f"cannot clone into {path}: a store is there already")
    if os.path.isdir(path) and os.listdir(path):
        raise SyncError(f"cannot clone into {path}: the directory is not empty")
    origin_url = os.path.abspath(url) if "://" not in url else url
    top = _topmost_new(path)
    with _build_folder(top) as build:
        work = os.path.normpath(os.path.join(build, os.path.relpath(path, top)))
        remote = connect(url, opener, token)
        try:
            offer = _offer(remote)
            os.makedirs(work, exist_ok=True)
            if local:
                remote.copy_store(work)
        finally:
            remote.close()
        store = opener(work)
        try:
            if local:
                _check_copy(store, url)
                _adopt_copy(store.storage, origin_url, offer["current"])
            else:
                _fetch_all(store.storage, origin_url, offer["current"], opener, token, progress)
        finally:
            store.close()  # reopened at ``path`` once the folder is in place
        _unmark(build)
        _move_into_place(build, top)
    return opener(path)


def _check_copy(store: OpenStore, url: str) -> None:
    """A copied file is taken on trust by nothing: it must pass ``verify`` (every commit id
    and its counts, every branch head's state, every index and blob) before the clone is
    made, as a fetch checks each commit it receives; otherwise TamperedError, and no
    clone. The states of tagged commits are not read whole: the ids cover their records."""
    problems = store.verify(tags=False)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise TamperedError(f"clone of {url}: the copy of its store fails verify, so nothing was cloned: "
                            f"{problems[0]}{more}; run `datae verify` there")


def _topmost_new(path: str) -> str:
    """The folder a clone into ``path`` creates: ``path``'s highest ancestor (or itself)
    that does not exist yet, or ``path`` itself if it is an existing empty directory."""
    top = path
    while not os.path.exists(os.path.dirname(top)) and os.path.dirname(top) != top:
        top = os.path.dirname(top)
    return top


_BUILDING = ".clone-"
_TOKEN_HEX = 12  # secrets.token_hex(6)
_MARKER = ".datae-clone-in-progress"  # in a build folder, locked by the clone building it


@contextmanager
def _build_folder(top: str) -> Iterator[str]:
    """A new hidden sibling of ``top`` to build a clone in, holding a marker file locked
    (``flock``) while this process lives, and removed on any error. A killed clone's lock
    dies with it, so the siblings of ``top`` that carry the marker and whose lock can be
    taken are leftovers of killed clones: removed. Nothing else is ever removed."""
    parent, name = os.path.split(top)
    _remove_leftovers(parent, f".{name}{_BUILDING}")
    build = os.path.join(parent, f".{name}{_BUILDING}{secrets.token_hex(_TOKEN_HEX // 2)}")
    try:
        os.mkdir(build)  # not mkdtemp: the clone keeps the folder, with the modes umask gives
    except OSError as exc:
        raise SyncError(f"cannot clone into {top}: cannot make a folder in {parent}: {exc.strerror}") from None
    lock = -1
    try:
        lock = _marked_and_locked(build)
        yield build
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    finally:
        if lock >= 0:
            os.close(lock)


def _marked_and_locked(build: str) -> int:
    """Put the marker in ``build``, locked before it has its name: a folder another clone
    may remove is one whose marker it can lock, so a live build is never eligible."""
    pending = os.path.join(build, f"{_MARKER}.{os.getpid()}")
    lock = os.open(pending, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: nobody else holds it
    os.rename(pending, os.path.join(build, _MARKER))
    return lock


def _unmark(build: str) -> None:
    """Drop the marker of a finished build (still locked by us) before it moves into place."""
    os.unlink(os.path.join(build, _MARKER))


def _is_build_name(entry: str, prefix: str) -> bool:
    token = entry[len(prefix):]
    return (entry.startswith(prefix) and len(token) == _TOKEN_HEX
            and all(c in "0123456789abcdef" for c in token))


def _remove_leftovers(parent: str, prefix: str) -> None:
    """Remove the build folders of killed clones: named as :func:`_build_folder` names
    them and holding a marker nobody holds locked."""
    for entry in os.listdir(parent):
        if not _is_build_name(entry, prefix):
            continue
        folder = os.path.join(parent, entry)
        try:
            lock = os.open(os.path.join(folder, _MARKER), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue  # not ours, or a build that has not marked itself yet
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a clone running now
        finally:
            os.close(lock)
        shutil.rmtree(folder, ignore_errors=True)


def _move_into_place(build: str, top: str) -> None:
    """Rename the finished clone to ``top`` (which may be an empty directory: replaced)."""
    try:
        os.rename(build, top)
    except OSError as exc:
        raise SyncError(f"cannot clone into {top}: {exc.strerror} (something was put there during the clone)") from None


def _adopt_copy(storage: Storage, origin_url: str, current: str) -> None:
    """The refs of a store that is a copy of origin's file: origin's branches as
    ``origin/BRANCH``, its current branch the only local one."""
    with storage.write() as writer:
        writer.forget_remote_state()
        writer.clear_merge()  # a merge in progress there is not one here
        writer.set_remote("origin", origin_url)
        merge_requests.adopt_copied_requests(writer, "origin")
        for kind in (BRANCH, TAG):  # names a store of older rules let in are refused here
            for ref, _ in writer.refs(kind):
                check_ref_name(ref, what=f"a {kind_name(kind)} of {origin_url!r}")
        for branch, seq in list(writer.refs(BRANCH)):
            writer.set_ref(REMOTE, f"origin/{branch}", seq)
            if branch != current:
                writer.delete_branch(branch, log=False)


def _fetch_all(storage: Storage, origin_url: str, current: str, opener: Opener, token: str | None,
               progress: Progress | None) -> None:
    """A clone commit by commit: ``origin`` added and fetched, and its current branch made
    the current branch here."""
    add_remote(storage, "origin", origin_url)
    head = fetch(storage, "origin", opener, token=token, progress=progress).get(f"origin/{current}")
    with storage.write() as writer:
        if current != writer.current_branch():
            writer.create_branch(current, None, None)
        if head is not None:  # a snapshot of its own: it reads at once as fast as the remote's
            writer.fast_forward(current, None, writer.seq_of(head))
        writer.set_current_branch(current)
