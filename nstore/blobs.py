"""A content-addressed blob store: values too long for an index key, kept once by sha256.

A blob is stored under its digest with a reference count, so tuples sharing a long value
share one copy, and its hash is checked every time it is read (Kirin's content addressing).

>>> import tempfile
>>> from nstore import okvs
>>> db = okvs.open(tempfile.mkdtemp())
>>> blobs = BlobStore(b"\\x02b\\x00")
>>> with db.transaction(write=True) as tx:
...     digest = blobs.put(tx, b"x" * 1000)
...     len(blobs.get(tx, digest))
1000
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Iterator, Mapping

from .errors import CorruptBlobError
from .okvs import Transaction, prefix_end

__all__ = ["BlobStore", "digest_of"]


def digest_of(data: bytes) -> bytes:
    """The content address of ``data``: its 32-byte sha256 digest."""
    return hashlib.sha256(data).digest()


class BlobStore:
    """Blobs under ``key_prefix + b"d" + digest``; reference counts under ``b"r"``."""

    def __init__(self, key_prefix: bytes) -> None:
        self._data = key_prefix + b"d"
        self._refs = key_prefix + b"r"

    def put(self, tx: Transaction, data: bytes, digest: bytes | None = None) -> bytes:
        """Store ``data`` (or count one more reference to it) and return its digest."""
        digest = digest or digest_of(data)
        count = tx.get(self._refs + digest)
        if count is None:
            tx.set(self._data + digest, data)
            tx.set(self._refs + digest, b"1")
        else:
            tx.set(self._refs + digest, str(int(count) + 1).encode())
        return digest

    def release(self, tx: Transaction, digest: bytes) -> None:
        """Drop one reference; the blob is removed with its last reference."""
        count = tx.get(self._refs + digest)
        if count is None:
            return
        if count == b"1":
            tx.delete(self._refs + digest)
            tx.delete(self._data + digest)
        else:
            tx.set(self._refs + digest, str(int(count) - 1).encode())

    def get(self, tx: Transaction, digest: bytes) -> bytes:
        """The blob with this digest, checked against it. Only keys hold digests, so an
        absent blob is damage too: :class:`CorruptBlobError` either way."""
        data = tx.get(self._data + digest)
        if data is None:
            raise CorruptBlobError(f"blob {digest.hex()} is referred to but not stored")
        if digest_of(data) != digest:
            raise CorruptBlobError(f"blob {digest.hex()} does not hash to its address")
        return data

    def digests(self, tx: Transaction) -> Iterator[bytes]:
        """Every stored digest, in order."""
        skip = len(self._data)
        for key, _ in tx.range(self._data, prefix_end(self._data)):
            yield key[skip:]

    def reference_problems(self, tx: Transaction, counted: Mapping[bytes, int], used: Iterable[bytes] = ()) -> Iterator[str]:
        """Each blob whose reference count is not ``counted[digest]`` (the references the
        stores that count them hold), each blob referred to (``counted`` or ``used``, by
        stores that do not count) but not stored, and each count or blob without the
        other (O(blobs); for verify: a wrong count frees a blob in use, later)."""
        counts: dict[bytes, bytes] = {key[len(self._refs):]: value for key, value in tx.prefix(self._refs)}
        stored = set(self.digests(tx))
        for digest in sorted(stored | counts.keys() | {d for d, n in counted.items() if n}):
            count = counts.get(digest)
            wanted = counted.get(digest, 0)
            if digest not in stored:
                yield f"blob {digest.hex()} is referred to {wanted} times but not stored"
            elif count is None or not count.isdigit() or int(count) != wanted:
                yield f"blob {digest.hex()} counts {count!r} references, but keys hold {wanted}"
        for digest in set(used) - stored:
            yield f"blob {digest.hex()} is referred to but not stored"

    def verify(self, tx: Transaction) -> Iterator[bytes]:
        """Yield the digest of every blob whose content no longer matches it."""
        skip = len(self._data)
        for key, data in tx.range(self._data, prefix_end(self._data)):
            if digest_of(data) != key[skip:]:
                yield key[skip:]
