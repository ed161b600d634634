"""A check of the B-trees of an LMDB data file, page by page, as LMDB's searches read them.

LMDB trusts its pages. A flipped byte in a branch page can send a search to the wrong leaf
(a lookup misses a key that a full scan still sees), point a child at a page of the wrong
kind (LMDB then aborts the process on an assertion), or make a leaf's keys unordered (its
binary search misses some). A scan of every key, which is what comparing indices does,
sees none of that. This module walks the trees of one committed state from its meta page
and checks what every search relies on:

* every page reached is inside the file, reached once, of the kind its depth calls for
  (branch above, leaf at the tree's depth, overflow pages where a leaf says), and holds
  its own number;
* its node table and every node lie inside the page;
* keys ascend strictly within a page, and every key under a branch separator lies in
  ``[that separator, the next one)`` of every branch above it: then a search for any key
  lands on the leaf that holds it, exactly as a scan meets it;
* the counts of branch, leaf and overflow pages and of entries in the meta page's record
  of each tree are what the walk finds (a leaf that lost a node shows here);
* the free-page list names only pages that no tree uses (else the next write would
  overwrite live data).

The layout is LMDB 0.9's, native byte order (see :mod:`nstore.lmdbfile` for the meta
page): a page is a 16-byte header (``pgno`` u64, pad u16, flags u16, ``lower`` u16,
``upper`` u16; an overflow page holds its page count at byte 12 instead) and a table of
u16 node offsets; a node is ``lo`` u16, ``hi`` u16, ``flags`` u16, ``ksize`` u16, the key,
then (in a leaf) the value, or the u64 first page of its overflow pages (flag
``F_BIGDATA``). A branch node's child page is ``lo | hi << 16 | flags << 32``; a leaf
node's value size is ``lo | hi << 16``. The free-page tree's keys are transaction ids
(native u64, compared as integers); each value lists page numbers, its length first.

>>> import tempfile, lmdb, os
>>> directory = tempfile.mkdtemp()
>>> env = lmdb.open(directory)
>>> with env.begin(write=True) as txn:
...     for i in range(2000):
...         _ = txn.put(b"key %05d" % i, b"value")
>>> with env.begin() as txn:
...     tree_problems(os.path.join(directory, "data.mdb"), txn.id(), txn.stat())
[]
>>> env.close()
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
from dataclasses import dataclass, field
from typing import Mapping

from ._btree import walk as compiled_walk
from .lmdbfile import read_meta

__all__ = ["tree_problems", "python_walk", "compiled_walk", "MAX_PROBLEMS"]

MAX_PROBLEMS = 20  # a damaged page usually breaks many things: name the first ones
_BRANCH, _LEAF, _OVERFLOW = 0x01, 0x02, 0x04
_BIGDATA = 0x01
_HEADER = 16
_NODE = 8
_DB_AT = (40, 88)  # the free-page and the main tree's MDB_db records in a meta page
_DB = struct.Struct("=IHHQQQQQ")  # pad, flags, depth, branch, leaf, overflow pages, entries, root
_INTEGER_KEY = 0x08
_NO_PAGE = (1 << 64) - 1
_PAGE = struct.Struct("=QHHHH")
_NODE_HEADER = struct.Struct("=HHHH")
_U64 = struct.Struct("=Q")
_TREES = ("free-page", "main")
_STAT = ("depth", "branch_pages", "leaf_pages", "overflow_pages", "entries")  # LMDB's stat, in record order


@dataclass
class _Walk:
    """What one walk has seen: pages by number (1: in a tree, 2: listed free), counts."""

    data: mmap.mmap | bytes
    page_size: int
    pages: int  # pages the file holds
    last_page: int
    used: bytearray
    problems: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)


def tree_problems(path: str, txn_id: int, stat: Mapping[str, int] | None = None, *,
                  compiled: bool = True) -> list[str] | None:
    """Each way the trees of transaction ``txn_id``'s state in the LMDB file ``path``
    break what searches rely on (see the module doc); an empty list: none. None when
    neither meta page holds that transaction any more (two later writes replaced it:
    check again in a newer read transaction).

    Hold a read transaction of ``txn_id`` open while this runs: LMDB reuses only pages
    freed before the oldest open reader's state, so that state's pages stay as they are
    however many writes commit meanwhile, and the walk needs no check at its end. Its
    meta page is not protected (the write after next rewrites it), so the walk reads a
    copy taken at the start. ``stat``, LMDB's statistics of the main tree in that
    transaction (``txn.stat()``), guards the copy: a meta page caught half rewritten
    still shows the old transaction id but no longer the counts LMDB read.

    The walk is the compiled one (:mod:`nstore._btree`); ``compiled=False`` runs this
    module's own, which words every problem the same and is its test oracle."""
    with open(path, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        if size == 0:
            return ["the file is empty"]
        with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as data:
            meta = _meta_of(data, txn_id, stat)
            if meta is None:
                return None
            page_size, last_page, records = meta
            check = compiled_walk if compiled else python_walk
            return check(data, page_size, size // page_size, last_page, records)


def python_walk(data: mmap.mmap | bytes, page_size: int, pages: int, last_page: int, records: list[tuple]) -> list[str]:
    """Each problem of the free-page and the main tree of the file ``data`` (``pages``
    pages of ``page_size``; ``last_page`` and the two tree ``records`` from the meta page
    :func:`_meta_of` found), in Python: :func:`nstore._btree.walk`'s oracle."""
    walk = _Walk(data, page_size, pages, last_page, bytearray(last_page + 1))
    for name, record in zip(_TREES, records):
        _walk_tree(walk, name, record)
    if not walk.problems:
        _check_free_list(walk, records[0])
    return walk.problems


def _meta_of(data: mmap.mmap | bytes, txn_id: int,
             stat: Mapping[str, int] | None) -> tuple[int, int, list[tuple]] | None:
    """``(page size, last page, [free-page tree record, main tree record])`` from a copy
    of the meta page of ``txn_id``, or None if no meta page holds it whole: a write
    replacing it as it was read shows as two reads that differ, or counts that are not
    ``stat``'s."""
    first = read_meta(data[:4096], "")
    if not first:
        return None
    page_size = first[0]
    for number in (0, 1):
        copy = data[number * page_size:(number + 1) * page_size]
        meta = read_meta(copy, "")
        if not meta or meta[2] != txn_id or data[number * page_size:(number + 1) * page_size] != copy:
            continue
        records = [_DB.unpack_from(copy, offset) for offset in _DB_AT]
        if stat is not None and records[1][2:7] != tuple(stat[name] for name in _STAT):
            return None
        return meta[0], meta[1], records
    return None


def _walk_tree(walk: _Walk, name: str, record: tuple) -> None:
    """Walk one tree from its root, depth first, each page with the key bounds its
    ancestors' separators give it."""
    _, flags, depth, branches, leaves, overflows, entries, root = record
    if root == _NO_PAGE:
        if depth or branches or leaves or overflows or entries:
            walk.problem(f"the {name} tree has no root page but its record counts {entries} entries")
        return
    integer = bool(flags & _INTEGER_KEY)
    found = {"branch": 0, "leaf": 0, "overflow": 0, "entries": 0}
    stack: list[tuple[int, int, bytes | int | None, bytes | int | None, str]] = [(root, 1, None, None, "its root")]
    while stack and len(walk.problems) < MAX_PROBLEMS:
        number, level, low, high, parent = stack.pop()
        page = _page(walk, number, name, parent)
        if page is None:
            continue
        base, flags, nodes = page
        where = f"{name} tree page {number} (level {level} of {depth}, {parent})"
        if level < depth:
            if flags != _BRANCH:
                walk.problem(f"{where}: flags {flags:#x}, not a branch page")
                continue
            found["branch"] += 1
            children = _branch(walk, base, nodes, low, high, integer, where)
            # Pushed in reverse, so the walk meets the leaves in key order.
            for index in range(len(children) - 1, -1, -1):
                child, child_low, child_high = children[index]
                stack.append((child, level + 1, child_low, child_high, f"child {index} of page {number}"))
        elif level == depth:
            if flags != _LEAF:
                walk.problem(f"{where}: flags {flags:#x}, not a leaf page")
                continue
            found["leaf"] += 1
            entries_here, overflow_pages = _leaf(walk, base, nodes, low, high, integer, where)
            found["entries"] += entries_here
            found["overflow"] += overflow_pages
    if walk.problems:
        return
    for kind, counted in (("branch", branches), ("leaf", leaves), ("overflow", overflows), ("entries", entries)):
        if found[kind] != counted:
            what = "entries" if kind == "entries" else f"{kind} pages"
            walk.problem(f"the {name} tree holds {found[kind]} {what} but its record in the meta page says {counted}")


def _page(walk: _Walk, number: int, name: str, parent: str) -> tuple[int, int, list[int]] | None:
    """``(byte offset, flags, node offsets)`` of a tree page, marked used; None (and a
    problem) if it is outside the file, used twice, or its header or node table is
    impossible."""
    where = f"{name} tree page {number} ({parent})"
    if number < 2 or number > walk.last_page or number >= walk.pages:
        walk.problem(f"{where}: outside the file's {walk.pages} pages (its last page in use is {walk.last_page})")
        return None
    if walk.used[number]:
        walk.problem(f"{where}: reached twice")
        return None
    walk.used[number] = 1
    base = number * walk.page_size
    stored, _, flags, lower, upper = _PAGE.unpack_from(walk.data, base)
    if stored != number:
        walk.problem(f"{where}: its header says it is page {stored}")
        return None
    if lower < _HEADER or lower > upper or upper > walk.page_size or lower % 2:
        walk.problem(f"{where}: node table bounds {lower}..{upper} do not fit a page of {walk.page_size}")
        return None
    count = (lower - _HEADER) // 2
    if count == 0:
        walk.problem(f"{where}: no nodes")
        return None
    nodes = list(struct.unpack_from(f"={count}H", walk.data, base + _HEADER))
    limit = walk.page_size - _NODE
    for index, offset in enumerate(nodes):
        if offset < upper or offset > limit or offset % 2:
            walk.problem(f"{where}: node {index} at byte {offset}, outside the page's nodes ({upper}..{limit})")
            return None
    return base, flags, nodes


def _key(walk: _Walk, base: int, offset: int, integer: bool) -> tuple[bytes | int, int, int, int] | None:
    """A node's key (an int for an integer-keyed tree), its header's ``lo | hi << 16``,
    its flags and the byte after the key; None if the key does not fit the page (or is
    not 8 bytes in an integer-keyed tree)."""
    lo, hi, flags, ksize = _NODE_HEADER.unpack_from(walk.data, base + offset)
    start = base + offset + _NODE
    end = start + ksize
    if end > base + walk.page_size:
        return None
    key: bytes | int = walk.data[start:end]
    if integer:
        if ksize != 8:
            return None
        key = int.from_bytes(key, sys.byteorder)
    return key, lo | hi << 16, flags, end


_Bound = bytes | int | None  # a key, or no bound


def _branch(walk: _Walk, base: int, nodes: list[int], low: _Bound, high: _Bound, integer: bool,
            where: str) -> list[tuple[int, _Bound, _Bound]]:
    """The children of a branch page with the key bounds of each; a problem for a
    separator out of order or outside ``[low, high)``. LMDB never reads node 0's key (a
    search in a branch page starts at node 1), so neither does this."""
    pages, separators = [], [low]
    for index, offset in enumerate(nodes):
        found = _key(walk, base, offset, integer and index > 0)
        if found is None:
            walk.problem(f"{where}: node {index} holds no valid key")
            return []
        key, lo_hi, flags, _ = found
        pages.append(lo_hi | flags << 32)
        if index:
            previous = separators[-1]
            if (previous is not None and (key < previous or (index > 1 and key == previous))) or \
                    (high is not None and key >= high):
                walk.problem(f"{where}: separator {index} ({_shown(key)}) is out of order "
                             f"(it must lie in [{_shown(previous)}, {_shown(high)}))")
                return []
            separators.append(key)
    separators.append(high)
    return [(page, separators[index], separators[index + 1]) for index, page in enumerate(pages)]


def _leaf(walk: _Walk, base: int, nodes: list[int], low: _Bound, high: _Bound, integer: bool,
          where: str) -> tuple[int, int]:
    """Check a leaf's keys (ascending, inside ``[low, high)``) and values (inside the
    page, or in overflow pages of the right size); returns its entries and overflow pages."""
    previous = None
    overflow = 0
    end_of_page = base + walk.page_size
    for index, offset in enumerate(nodes):
        found = _key(walk, base, offset, integer)
        if found is None:
            walk.problem(f"{where}: node {index} holds no valid key")
            return 0, 0
        key, size, flags, value_at = found
        if (previous is not None and key <= previous) or (low is not None and key < low) or \
                (high is not None and key >= high) or key == b"":
            walk.problem(f"{where}: key {index} ({_shown(key)}) is out of order (after {_shown(previous)}, "
                         f"in [{_shown(low)}, {_shown(high)}))")
            return 0, 0
        previous = key
        if flags == _BIGDATA:
            if value_at + 8 > end_of_page:
                walk.problem(f"{where}: node {index}'s overflow page number does not fit the page")
                return 0, 0
            overflow += _overflow(walk, _U64.unpack_from(walk.data, value_at)[0], size, f"{where} node {index}")
        elif flags != 0:
            walk.problem(f"{where}: node {index} has flags {flags:#x} (datae stores plain values only)")
            return 0, 0
        elif value_at + size > end_of_page:
            walk.problem(f"{where}: node {index}'s value of {size} bytes does not fit the page")
            return 0, 0
    return len(nodes), overflow


def _overflow(walk: _Walk, number: int, size: int, where: str) -> int:
    """Check the overflow pages of a value of ``size`` bytes starting at page ``number``;
    returns how many there are (0 after a problem)."""
    wanted = (_HEADER - 1 + size) // walk.page_size + 1
    if number < 2 or number + wanted - 1 > walk.last_page or number + wanted > walk.pages:
        walk.problem(f"{where}: its {wanted} overflow pages from page {number} lie outside the file")
        return 0
    if any(walk.used[number:number + wanted]):
        walk.problem(f"{where}: its overflow pages from page {number} are reached twice")
        return 0
    base = number * walk.page_size
    stored, _, flags = struct.unpack_from("=QHH", walk.data, base)
    (count,) = struct.unpack_from("=I", walk.data, base + 12)
    if stored != number or flags != _OVERFLOW or count != wanted:
        walk.problem(f"{where}: page {number} is not the start of {wanted} overflow pages "
                     f"(page number {stored}, flags {flags:#x}, {count} pages)")
        return 0
    walk.used[number:number + wanted] = b"\x01" * wanted
    return wanted


def _check_free_list(walk: _Walk, record: tuple) -> None:
    """Every page the free-page tree lists is inside the file's pages in use and in no
    tree, listed once: the next write reuses those pages."""
    root = record[-1]
    if root == _NO_PAGE:
        return
    stack = [(root, 1)]
    depth = record[2]
    while stack:
        number, level = stack.pop()
        base = number * walk.page_size
        _, _, flags, lower, _ = _PAGE.unpack_from(walk.data, base)
        nodes = struct.unpack_from(f"={(lower - _HEADER) // 2}H", walk.data, base + _HEADER)
        for index, offset in enumerate(nodes):
            found = _key(walk, base, offset, level == depth)
            if found is None:  # a key the walk read as bytes: the tree's record lost its integer flag
                walk.problem(f"free-page tree page {number}: node {index} holds no valid key")
                continue
            key, size, node_flags, value_at = found
            if level < depth:
                stack.append((size | node_flags << 32, level + 1))
                continue
            if node_flags == _BIGDATA:
                value_at = _U64.unpack_from(walk.data, value_at)[0] * walk.page_size + _HEADER
            if size < 8 or size % 8:
                walk.problem(f"free-page list of transaction {key}: {size} bytes, not a list of page numbers")
                continue
            listed = struct.unpack_from(f"={size // 8}Q", walk.data, value_at)
            if listed[0] != len(listed) - 1:
                walk.problem(f"free-page list of transaction {key}: says {listed[0]} pages but holds {len(listed) - 1}")
                continue
            for page in listed[1:]:
                if page < 2 or page > walk.last_page:
                    walk.problem(f"free-page list of transaction {key}: page {page} is outside the pages in use "
                                 f"(2..{walk.last_page})")
                elif walk.used[page]:
                    what = "listed free twice" if walk.used[page] == 2 else "in use by a tree"
                    walk.problem(f"free-page list of transaction {key}: page {page} is {what}: the next write "
                                 "would overwrite it")
                else:
                    walk.used[page] = 2


def _shown(key: object) -> str:
    if key is None:
        return "-"
    if isinstance(key, bytes):
        return key[:24].hex() + ("..." if len(key) > 24 else "")
    return str(key)
