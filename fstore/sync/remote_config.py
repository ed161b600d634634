"""The remotes a store knows: each a name and a URL (``pack("u", NAME) -> URL`` in the
store, ``docs/sync.md``), and the remote-tracking branches ``NAME/BRANCH`` fetch and push
set. A URL names a directory holding a store or ``http://HOST:PORT`` of ``datae serve``,
and never holds a token, since it is stored in the store.

>>> import tempfile, fstore
>>> storage = fstore.open(tempfile.mkdtemp()).storage
>>> add_remote(storage, "origin", "http://example.org:8000")
>>> remote_urls(storage), remote_url(storage, "origin")
({'origin': 'http://example.org:8000'}, 'http://example.org:8000')
>>> remove_remote(storage, "origin"); remote_urls(storage)
{}
>>> storage.close()
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..core.refs import REMOTE, check_ref_name
from ..errors import RefExistsError, UnknownRefError
from .protocol import SyncError

if TYPE_CHECKING:
    from ..core.storage import Snapshot, Storage

__all__ = ["check_url", "add_remote", "remove_remote", "remote_urls", "remote_url", "known_url", "tracking_branches"]


def check_url(url: str) -> str:
    """``url`` if it can name a remote; a token or password in it is refused, since a
    remote's URL is stored in the store (send tokens with ``token=`` or ``$DATAE_TOKEN``)."""
    if url.startswith(("http://", "https://")):
        try:
            parts = urlsplit(url)
        except ValueError as exc:
            raise SyncError(f"remote URL {url!r} is malformed: {exc}") from None
        if parts.username is not None or parts.password is not None:
            raise SyncError(f"remote URL {parts.scheme}://...@{parts.hostname}: a remote's URL is stored in the store, "
                            "so it must not hold a token or password (use --token, --token-file or $DATAE_TOKEN)")
        try:
            parts.port
        except ValueError:
            raise SyncError(f"remote URL {url!r}: its port is not a number from 0 to 65535") from None
        if not parts.hostname:
            raise SyncError(f"remote URL {url!r} has no host")
        if parts.query or parts.fragment:
            raise SyncError(f"remote URL {parts.scheme}://{parts.netloc}{parts.path}?...: a remote's URL is stored in "
                            "the store, so it takes no query (send a token with --token, --token-file or $DATAE_TOKEN)")
    elif "://" in url and not url.startswith("file://"):
        raise SyncError(f"remote {url!r}: a remote is a path to a store or an http:// URL")
    return url


def add_remote(storage: Storage, name: str, url: str) -> None:
    """Add remote ``name`` at ``url``; RefExistsError if there is one of that name."""
    check_ref_name(name)
    check_url(url)
    with storage.write() as writer:
        if name in writer.remotes():
            raise RefExistsError(f"a remote named {name!r} already exists")
        writer.set_remote(name, url)


def remove_remote(storage: Storage, name: str) -> None:
    """Remove remote ``name``, its remote-tracking branches and the copies of its merge
    requests."""
    with storage.write() as writer:
        known_url(writer, name)
        writer.set_remote(name, None)
        writer.drop_requests(name)


def remote_urls(storage: Storage) -> dict[str, str]:
    """Every remote and its URL."""
    with storage.read() as snapshot:
        return snapshot.remotes()


def remote_url(storage: Storage, name: str) -> str:
    """The URL of remote ``name``; UnknownRefError if none."""
    with storage.read() as snapshot:
        return known_url(snapshot, name)


def known_url(snapshot: Snapshot, name: str) -> str:
    """The URL of remote ``name`` as ``snapshot`` reads it; UnknownRefError if none."""
    url = snapshot.remotes().get(name)
    if url is None:
        raise UnknownRefError(f"no remote named {name!r} (datae remote add {name} URL)")
    return url


def tracking_branches(storage: Storage) -> dict[str, str | None]:
    """Every remote-tracking branch (``REMOTE/BRANCH``) and the commit id it was at when
    last fetched or pushed."""
    with storage.read() as snapshot:
        return {name: snapshot.commit_id(seq) for name, seq in snapshot.refs(REMOTE)}
