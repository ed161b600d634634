"""The pages of an LMDB data file, read directly (LMDB 0.9's layout, native byte order; see
``nstore/btree.py``): for tests that damage a file where its B-trees are, not at random."""

from __future__ import annotations

import struct

__all__ = ["pages", "page_size", "main_tree", "nodes"]

_BRANCH, _LEAF, _OVERFLOW, _META = 0x01, 0x02, 0x04, 0x08


def pages(data: bytes) -> list[tuple[int, str, list[tuple[int, int]]]]:
    """Every B-tree page of an LMDB file: ``(page number, kind, byte spans)`` where kind is
    ``"leaf"`` or ``"branch"`` and the keyspace of its first key (its first byte, and the
    index number for datae's one-byte keyspaces), and the spans are the node table and
    each node (header, key and, in a leaf, value) of the page: where a flip changes what
    the tree holds or how it is searched, not free space; or kind ``"overflow"`` and the
    span of the page header of a value's first overflow page."""
    size = page_size(data)
    found = []
    for number in range(2, len(data) // size):
        base = number * size
        flags, lower = struct.unpack_from("=HH", data, base + 10)
        if flags == _OVERFLOW:  # its header: where a flip makes LMDB misread the value's pages
            found.append((number, "overflow", [(base, base + 16)]))
            continue
        if flags & (_BRANCH | _LEAF) == 0 or flags & (_OVERFLOW | _META):
            continue
        count = (lower - 16) // 2
        if not 0 < count < size // 8:
            continue
        spans: list[tuple[int, int]] = [(base + 16, base + lower)]  # the node offsets
        keys = []
        for slot in range(count):
            (offset,) = struct.unpack_from("=H", data, base + 16 + 2 * slot)
            if offset + 8 > size:
                break
            lo, hi, node_flags, ksize = struct.unpack_from("=HHHH", data, base + offset)
            value = lo | hi << 16 if flags & _LEAF else 0
            value = 8 if node_flags & 0x01 else value  # F_BIGDATA: the overflow page number
            spans.append((base + offset, min(base + offset + 8 + ksize + value, base + size)))
            keys.append(data[base + offset + 8: base + offset + 8 + ksize])
        first = next((key for key in keys if key), b"")
        space = first[:2].hex() if first[:1] and first[0] >= 0x90 else first[:1].hex()
        found.append((number, f"{'branch' if flags & _BRANCH else 'leaf'} {space}", spans))
    return found


def page_size(data: bytes) -> int:
    """The page size the first meta page records."""
    return struct.unpack_from("=I", data, 40)[0]


def main_tree(data: bytes) -> tuple[int, int]:
    """``(root page, depth)`` of the main tree in the current meta page."""
    size = page_size(data)
    metas = [struct.unpack_from("=Q", data, n * size + 144)[0] for n in (0, 1)]
    base = metas.index(max(metas)) * size
    depth = struct.unpack_from("=H", data, base + 94)[0]
    return struct.unpack_from("=Q", data, base + 128)[0], depth


def nodes(data: bytes, number: int) -> list[tuple[int, bytes, int]]:
    """``(byte offset of the node, key, child page or value size)`` of each node of a page."""
    size = page_size(data)
    base = number * size
    lower = struct.unpack_from("=H", data, base + 12)[0]
    found = []
    for slot in range((lower - 16) // 2):
        offset = struct.unpack_from("=H", data, base + 16 + 2 * slot)[0]
        lo, hi, flags, ksize = struct.unpack_from("=HHHH", data, base + offset)
        found.append((base + offset, data[base + offset + 8: base + offset + 8 + ksize], lo | hi << 16 | flags << 32))
    return found
