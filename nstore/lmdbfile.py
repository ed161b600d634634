"""A check of an LMDB data file before it is mapped: LMDB trusts the file it maps, so a
truncated one kills the process with SIGBUS at the first read past its end, and an empty
one is silently made into a new, empty store.

The check reads the file's two meta pages (LMDB 0.9's layout, native byte order): at
offset 0 and at one page size, each a 16-byte page header, then ``MDB_meta``: the magic
``0xBEEFC0DE`` (u32, byte 16), the data format version 1 (u32, 20), the map address and
size (2 x u64), two ``MDB_db`` records of 48 bytes (the first one's u32 ``md_pad`` at
byte 40 holds the page size), the last page used (u64, byte 136) and the transaction id
(u64, byte 144). LMDB refuses a file if either meta page is not one; the meta of the
greater transaction id is the current one, and the file must hold every page up to its
last page.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "data.mdb")
>>> open(path, "wb").close()
>>> check_data_file(path)
Traceback (most recent call last):
...
nstore.errors.StoreFileError: ...data.mdb is empty (0 bytes), not an LMDB file: restore it from a copy, or remove it to start an empty store
"""

from __future__ import annotations

import os
import struct

from .errors import StoreFileError

__all__ = ["check_data_file", "DATA_FILE"]

DATA_FILE = "data.mdb"
_MAGIC = 0xBEEFC0DE
_DATA_VERSION = 1
_META = struct.Struct("=II")  # magic, version at byte 16
_PAGE_SIZE_AT = 40
_LAST_PAGE_AT = 136
_META_END = 152
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
        first = stream.read(_FIRST_META_BYTES)
        metas = [_meta(first, path)]
        page_size = metas[0][0] if metas[0] else 0
        if page_size:
            stream.seek(page_size)
            metas.append(_meta(stream.read(_META_END), path))
    if not metas[0]:
        raise StoreFileError(f"{path} is not an LMDB file (no LMDB meta page at its start; {size:,} bytes): {fix}")
    if size < 2 * page_size:
        raise StoreFileError(f"{path} is truncated: {size:,} bytes, less than its two LMDB meta pages of {page_size:,}: {fix}")
    if not metas[1]:
        raise StoreFileError(f"{path} is damaged: its second LMDB meta page (at byte {page_size:,}) is not one: {fix}")
    page_size, last_page, _ = max(metas, key=lambda meta: meta[2])
    needed = (last_page + 1) * page_size
    if size < needed:
        raise StoreFileError(
            f"{path} is truncated: {size:,} bytes, but its last commit uses {needed:,} "
            f"({last_page + 1:,} pages of {page_size:,}): {fix}")


def _meta(page: bytes, path: str) -> tuple[int, int, int] | None:
    """``(page size, last page, transaction id)`` of one meta page, None if it is not one."""
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
    return page_size, last_page, txn
