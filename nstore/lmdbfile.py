"""The files of a store's directory: a check of the LMDB data file before it is mapped,
the open lock, and compaction.

**The check.** LMDB trusts the file it maps, so a truncated one kills the process with
SIGBUS at the first read past its end, and an empty one is silently made into a new,
empty store.

The check reads the file's two meta pages (LMDB 0.9's layout, native byte order): at
offset 0 and at one page size, each a 16-byte page header, then ``MDB_meta``: the magic
``0xBEEFC0DE`` (u32, byte 16), the data format version 1 (u32, 20), the map address and
size (2 x u64), two ``MDB_db`` records of 48 bytes (the first one's u32 ``md_pad`` at
byte 40 holds the page size), the last page used (u64, byte 136) and the transaction id
(u64, byte 144); the ``md_root`` of the two databases (free pages, main) is at bytes 80
and 128. LMDB refuses a file if either meta page is not one; the meta of the greater
transaction id is the current one.

A whole file usually holds every page up to that meta's last page, but not always: pages
a transaction allocated and freed again before committing are counted and never written.
So a shorter file is checked by walking its trees' branch pages (16-byte header with the
flags at byte 10 and ``lower`` at byte 12, then ``(lower - 16) / 2`` u16 node offsets;
a branch node's child page number is its first 6 bytes): every page they point at must
lie inside the file. A cut that removes only overflow pages (values over ~2 KB) is not
seen here; ``verify`` reads every value.

**The open lock.** Every process that opens the store holds a shared ``flock`` on
``datae.lock`` in its directory for as long as it has it open; compaction takes it
exclusively, so it never swaps the file under a process that has it mapped.

**Compaction** (:func:`compact`) rewrites every pair of ``data.mdb``, in key order, as
appends into a new environment in ``.compacting/`` inside the directory, flushes it to
disk, and renames it over ``data.mdb``: a rename is atomic, so a crash at any point
leaves the old file or the new one, whole. A ``.compacting/`` left by a crash is removed
by the next compaction. Why not LMDB's own compacting copy: it leaves out free pages but
copies the tree's pages as they are, and a tree that lost keys keeps pages down to a
quarter full (a store that dropped a 20,000-quad branch stayed 2.5x the size of one that
never had it); appending in key order fills every page.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "data.mdb")
>>> open(path, "wb").close()
>>> check_data_file(path)
Traceback (most recent call last):
...
nstore.errors.StoreFileError: ...data.mdb is empty (0 bytes), not an LMDB file: restore it from a copy, or remove it to start an empty store
"""

from __future__ import annotations

import fcntl
import os
import shutil
import struct
from contextlib import contextmanager
from itertools import islice
from typing import BinaryIO, Callable, Iterator

import lmdb

from .errors import StoreFileError

__all__ = ["check_data_file", "read_meta", "compact", "exclusive", "OpenLock", "DATA_FILE", "LOCK_FILE"]

DATA_FILE = "data.mdb"
LOCK_FILE = "datae.lock"
_COMPACTING = ".compacting"
_EXCLUSIVE: set[str] = set()  # directories this process holds exclusively (see exclusive)
_MAGIC = 0xBEEFC0DE
_DATA_VERSION = 1
_META = struct.Struct("=II")  # magic, version at byte 16
_PAGE_SIZE_AT = 40
_LAST_PAGE_AT = 136
_META_END = 152
_ROOTS_AT = (80, 128)  # md_root of the free-page and the main database
_NO_PAGE = (1 << 64) - 1  # the root of an empty database
_BRANCH = 0x01
_FIRST_META_BYTES = 4096  # enough for the first meta page whatever the page size


def check_data_file(path: str) -> None:
    """Raise :class:`StoreFileError` naming ``path`` if it is not a whole LMDB data file
    (a missing file is fine: LMDB creates it). It checks what LMDB itself would not: a
    file cut short (SIGBUS at a read past its end) or empty (made a new store)."""
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        return
    fix = "restore it from a copy, or remove it to start an empty store"
    if size == 0:
        raise StoreFileError(f"{path} is empty (0 bytes), not an LMDB file: {fix}")
    with open(path, "rb") as stream:
        first = read_meta(stream.read(_FIRST_META_BYTES), path)
        if not first:
            raise StoreFileError(f"{path} is not an LMDB file (no LMDB meta page at its start; {size:,} bytes): {fix}")
        page_size = first[0]
        if size < 2 * page_size:
            raise StoreFileError(f"{path} is truncated: {size:,} bytes, less than its two LMDB meta pages of {page_size:,}: {fix}")
        stream.seek(page_size)
        second = read_meta(stream.read(_META_END), path)
        if not second:
            raise StoreFileError(f"{path} is damaged: its second LMDB meta page (at byte {page_size:,}) is not one: {fix}")
        page_size, last_page, _, roots = max(first, second, key=lambda meta: meta[2])
        pages = size // page_size
        missing = None if pages > last_page else _first_page_beyond(stream, page_size, roots, pages)
    if missing is not None:
        raise StoreFileError(
            f"{path} is truncated: {size:,} bytes ({pages:,} pages of {page_size:,}), but its data "
            f"reaches page {missing:,} (its last commit uses {last_page + 1:,} pages): {fix}")


def _first_page_beyond(stream: BinaryIO, page_size: int, roots: list[int], pages: int) -> int | None:
    """The first page number at or past ``pages`` that the trees from ``roots`` point at
    (through branch pages), or None."""
    todo = [root for root in roots if root != _NO_PAGE]
    while todo:
        number = todo.pop()
        if number >= pages:
            return number
        stream.seek(number * page_size)
        page = stream.read(page_size)
        flags, lower = struct.unpack_from("=HH", page, 10)
        if not flags & _BRANCH:
            continue
        for slot in range(16, min(lower, page_size), 2):
            (offset,) = struct.unpack_from("=H", page, slot)
            if offset + 6 > page_size:
                return number  # not a branch page LMDB could read
            low, high, top = struct.unpack_from("=HHH", page, offset)
            todo.append(low | high << 16 | top << 32)
    return None


def read_meta(page: bytes, path: str) -> tuple[int, int, int, list[int]] | None:
    """``(page size, last page, transaction id, root pages)`` of one meta page (its first
    152 bytes or more), None if it is not one; a meta page of another LMDB data format is
    a :class:`StoreFileError` naming ``path``."""
    if len(page) < _META_END:
        return None
    magic, version = _META.unpack_from(page, 16)
    if magic != _MAGIC:
        return None
    if version != _DATA_VERSION:
        raise StoreFileError(f"{path} is an LMDB file of data format {version}; this LMDB reads format {_DATA_VERSION}")
    page_size = struct.unpack_from("=I", page, _PAGE_SIZE_AT)[0]
    if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        return None
    last_page, txn = struct.unpack_from("=QQ", page, _LAST_PAGE_AT)
    roots = [struct.unpack_from("=Q", page, at)[0] for at in _ROOTS_AT]
    return page_size, last_page, txn, roots


class OpenLock:
    """The shared (or, for compaction, exclusive) ``flock`` on a store directory's
    ``datae.lock``; a directory that cannot hold the file (read-only) is not locked, since
    nothing can compact it either."""

    def __init__(self, directory: str, *, exclusive: bool = False) -> None:
        self.fd: int | None = None
        if not exclusive and os.path.realpath(directory) in _EXCLUSIVE:
            return  # opened by the process that holds it exclusively (to prune before compacting)
        path = os.path.join(directory, LOCK_FILE)
        try:
            self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            if exclusive:
                raise
            return
        try:
            fcntl.flock(self.fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            self.release()
            if exclusive:
                raise StoreFileError(f"{directory} is open elsewhere (another process, or another handle here): "
                                     "close it there before compacting") from None
            raise StoreFileError(f"{directory} is being compacted (datae gc) by another process: "
                                 "open it again when that ends") from None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the flock
            self.fd = None


@contextmanager
def exclusive(directory: str) -> Iterator[None]:
    """Hold the store's open lock exclusively: no other process or handle has it open,
    and none can open it until the block ends, except this process's own opens inside it.

    A compaction runs inside it (:func:`compact`), and so may the writes that prepare one."""
    lock = OpenLock(directory, exclusive=True)
    real = os.path.realpath(directory)
    _EXCLUSIVE.add(real)
    try:
        yield
    finally:
        _EXCLUSIVE.discard(real)
        lock.release()


def compact(directory: str, *, transform: Callable[[Iterator[tuple[bytes, bytes]]], Iterator[tuple[bytes, bytes]]] | None = None,
            finish: Callable[[str], None] | None = None) -> tuple[int, int]:
    """Replace the store's ``data.mdb`` by a rewrite of its pairs in key order (see the
    module doc), inside :func:`exclusive` with every handle on it closed. Returns the
    file's bytes before and after.

    ``transform`` turns the stream of pairs (key order) into the pairs to write (still in
    key order): an upgrade of the format. ``finish(directory of the new file)`` runs before
    the new file replaces the old one, to complete it (keys a format derives from others)
    and check it; if it raises, the old file stays as it was."""
    if os.path.realpath(directory) not in _EXCLUSIVE:
        raise StoreFileError(f"compacting {directory} needs it held exclusively (nstore.lmdbfile.exclusive)")
    data = os.path.join(directory, DATA_FILE)
    check_data_file(data)
    before = os.path.getsize(data)
    work = os.path.join(directory, _COMPACTING)
    shutil.rmtree(work, ignore_errors=True)
    os.mkdir(work)
    _rewrite(directory, work, map_size=max(2 * before, 1 << 20), transform=transform)
    copied = os.path.join(work, DATA_FILE)
    if finish is not None:
        try:
            finish(work)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    _flush(copied)
    os.replace(copied, data)
    _flush(directory)
    shutil.rmtree(work, ignore_errors=True)
    return before, os.path.getsize(data)


_BATCH = 1 << 14  # pairs per putmulti: bounds the memory of a rewrite


def _rewrite(source: str, target: str, map_size: int, transform=None) -> None:
    """Every pair of the environment in ``source``, appended in key order into a new one
    in ``target`` (one write transaction, committed with a sync)."""
    old = lmdb.open(source, map_size=map_size, subdir=True, max_dbs=0, readahead=False)
    try:
        old.reader_check()
        new = lmdb.open(target, map_size=map_size, subdir=True, max_dbs=0, readahead=False, sync=True)
        try:
            with old.begin() as reading, new.begin(write=True) as writing:
                pairs = reading.cursor().iternext()
                if transform is not None:
                    pairs = transform(pairs)
                cursor = writing.cursor()
                while True:
                    batch = list(islice(pairs, _BATCH))
                    if not batch:
                        break
                    consumed, added = cursor.putmulti(batch, append=True)
                    if added != consumed:
                        raise StoreFileError(f"{source}: its keys are not in order; compaction stopped, nothing changed")
        finally:
            new.close()
    finally:
        old.close()


def _flush(path: str) -> None:
    """fsync a file or a directory (a rename is durable once its directory is flushed)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
