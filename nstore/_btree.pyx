# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled half of :mod:`nstore.btree`: the page walk of an LMDB file's B-trees in C.

The checks, their order and every problem's wording are those of the pure-Python walk in
:mod:`nstore.btree` (the module doc there lists them), which stays as this one's test
oracle (``tests/nstore/test_btree_compiled.py`` runs both on intact and damaged files).
Python unpacked every header and node with ``struct`` and made a bytes object of every
key to compare it: about 0.35 µs a key, three times a raw scan of the file. Here a key is
a pointer into the mapped file and a length, compared with ``memcmp``; Python objects are
made only to word a problem.

>>> import tempfile, lmdb, os, mmap
>>> from nstore.btree import _meta_of
>>> directory = tempfile.mkdtemp()
>>> env = lmdb.open(directory)
>>> with env.begin(write=True) as txn:
...     for i in range(2000):
...         _ = txn.put(b"key %05d" % i, b"value")
>>> with env.begin() as txn, open(os.path.join(directory, "data.mdb"), "rb") as stream:
...     data = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
...     page_size, last_page, records = _meta_of(data, txn.id(), txn.stat())
...     walk(data, page_size, len(data) // page_size, last_page, records)
[]
>>> data.close(); env.close()
"""

from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.stdint cimport uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

__all__ = ["walk", "MAX_PROBLEMS"]

# The constants of nstore.btree (which documents them); a test pins that they agree.
MAX_PROBLEMS = 20
cdef enum:
    _BRANCH = 0x01
    _LEAF = 0x02
    _OVERFLOW = 0x04
    _BIGDATA = 0x01
    _HEADER = 16
    _NODE = 8
    _INTEGER_KEY = 0x08
cdef uint64_t _NO_PAGE = 0xFFFFFFFFFFFFFFFFULL
_TREES = ("free-page", "main")

# A key or a bound: none (no bound), bytes in the mapped file, or an integer key.
cdef enum:
    NONE = 0
    BYTES = 1
    INTEGER = 2


cdef struct Key:
    int kind
    const unsigned char* data
    Py_ssize_t size
    uint64_t value


cdef struct Frame:
    uint64_t number
    long level
    Key low
    Key high
    long long parent  # the branch page it hangs from, -1 for a root
    Py_ssize_t index  # its node number in that page


cdef struct Child:
    uint64_t page
    Key key


cdef inline uint16_t _u16(const unsigned char* at) noexcept nogil:
    cdef uint16_t value
    memcpy(&value, at, 2)
    return value


cdef inline uint32_t _u32(const unsigned char* at) noexcept nogil:
    cdef uint32_t value
    memcpy(&value, at, 4)
    return value


cdef inline uint64_t _u64(const unsigned char* at) noexcept nogil:
    cdef uint64_t value
    memcpy(&value, at, 8)
    return value


cdef inline int _compare(const Key* a, const Key* b) noexcept nogil:
    """Python's ordering of two keys of one kind (bytes or ints): -1, 0 or 1."""
    cdef Py_ssize_t common
    cdef int order
    if a.kind == INTEGER:
        return (a.value > b.value) - (a.value < b.value)
    common = a.size if a.size < b.size else b.size
    order = memcmp(a.data, b.data, common)
    if order != 0:
        return 1 if order > 0 else -1
    return (a.size > b.size) - (a.size < b.size)


cdef str _shown(const Key* key):
    """nstore.btree._shown of a key."""
    if key.kind == NONE:
        return "-"
    if key.kind == INTEGER:
        return str(key.value)
    shown = (<const char*>key.data)[:min(key.size, 24)]
    return shown.hex() + ("..." if key.size > 24 else "")


cdef str _parent(const Frame* frame):
    if frame.parent < 0:
        return "its root"
    return f"child {frame.index} of page {frame.parent}"


cdef class _Walk:
    """One walk over the mapped file ``data``: the pages seen (1: in a tree, 2: listed
    free), the problems found, the scratch arrays of the branch page at hand."""

    cdef const unsigned char* data
    cdef Py_ssize_t page_size
    cdef uint64_t pages
    cdef uint64_t last_page
    cdef unsigned char* used
    cdef list problems
    cdef Frame* stack
    cdef Py_ssize_t stacked
    cdef Py_ssize_t room
    cdef Child* children
    cdef uint16_t* nodes
    cdef str name  # the tree being walked
    cdef long depth  # its depth, as its record says

    def __cinit__(self):
        self.used = NULL
        self.stack = NULL
        self.children = NULL
        self.nodes = NULL

    def __dealloc__(self):
        free(self.used)
        free(self.stack)
        free(self.children)
        free(self.nodes)

    cdef int problem(self, str text) except -1:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)
        return 0

    cdef str where(self, const Frame* frame):
        """How a problem names a page (made only for a problem: most walks have none)."""
        return f"{self.name} tree page {frame.number} (level {frame.level} of {self.depth}, {_parent(frame)})"

    cdef inline bint full(self):
        return len(self.problems) >= MAX_PROBLEMS

    cdef int push(self, Frame frame) except -1:
        cdef Frame* grown
        if self.stacked == self.room:
            grown = <Frame*>realloc(self.stack, (2 * self.room + 64) * sizeof(Frame))
            if grown == NULL:
                raise MemoryError()
            self.stack = grown
            self.room = 2 * self.room + 64
        self.stack[self.stacked] = frame
        self.stacked += 1
        return 0

    cdef bint key(self, Py_ssize_t base, Py_ssize_t offset, bint integer, Key* key, uint32_t* lo_hi,
                  uint16_t* flags, Py_ssize_t* end) noexcept:
        """nstore.btree._key: the node at ``offset`` of the page at ``base``; False if its
        key does not fit the page (or is not 8 bytes in an integer-keyed tree)."""
        cdef const unsigned char* node = self.data + base + offset
        cdef uint16_t ksize = _u16(node + 6)
        cdef Py_ssize_t start = base + offset + _NODE
        end[0] = start + ksize
        if end[0] > base + self.page_size:
            return False
        lo_hi[0] = <uint32_t>_u16(node) | (<uint32_t>_u16(node + 2) << 16)
        flags[0] = _u16(node + 4)
        if integer:
            if ksize != 8:
                return False
            key.kind = INTEGER
            key.value = _u64(self.data + start)
        else:
            key.kind = BYTES
            key.data = self.data + start
            key.size = ksize
        return True

    cdef Py_ssize_t page(self, const Frame* frame, uint16_t* flags) except -2:
        """nstore.btree._page: the number of nodes of a tree page (its offsets copied to
        ``self.nodes``), marked used; -1 (and a problem) if it is outside the file, used
        twice, or its header or node table is impossible."""
        cdef uint64_t number = frame.number
        cdef Py_ssize_t base, count, index
        cdef uint16_t lower, upper, offset
        cdef uint64_t stored
        if number < 2 or number > self.last_page or number >= self.pages:
            self.problem(f"{self.name} tree page {number} ({_parent(frame)}): outside the file's {self.pages} pages "
                         f"(its last page in use is {self.last_page})")
            return -1
        if self.used[number]:
            self.problem(f"{self.name} tree page {number} ({_parent(frame)}): reached twice")
            return -1
        self.used[number] = 1
        base = <Py_ssize_t>number * self.page_size
        stored = _u64(self.data + base)
        flags[0] = _u16(self.data + base + 10)
        lower = _u16(self.data + base + 12)
        upper = _u16(self.data + base + 14)
        if stored != number:
            self.problem(f"{self.name} tree page {number} ({_parent(frame)}): its header says it is page {stored}")
            return -1
        if lower < _HEADER or lower > upper or upper > self.page_size or lower % 2:
            self.problem(f"{self.name} tree page {number} ({_parent(frame)}): node table bounds {lower}..{upper} "
                         f"do not fit a page of {self.page_size}")
            return -1
        count = (lower - _HEADER) // 2
        if count == 0:
            self.problem(f"{self.name} tree page {number} ({_parent(frame)}): no nodes")
            return -1
        for index in range(count):
            offset = _u16(self.data + base + _HEADER + 2 * index)
            if offset < upper or offset > self.page_size - _NODE or offset % 2:
                self.problem(f"{self.name} tree page {number} ({_parent(frame)}): node {index} at byte {offset}, "
                             f"outside the page's nodes ({upper}..{self.page_size - _NODE})")
                return -1
            self.nodes[index] = offset
        return count

    cdef int branch(self, const Frame* frame, Py_ssize_t count, bint integer) except -1:
        """nstore.btree._branch: push the children of a branch page, each with its key
        bounds, last first (so the walk meets the leaves in key order); a problem (and no
        child) for a separator out of order or outside the page's bounds. LMDB never reads
        node 0's key, so neither does this."""
        cdef Py_ssize_t base = <Py_ssize_t>frame.number * self.page_size
        cdef Py_ssize_t index, end
        cdef Key key
        cdef const Key* previous
        cdef uint32_t lo_hi
        cdef uint16_t flags
        cdef Frame child
        for index in range(count):
            if not self.key(base, self.nodes[index], integer and index > 0, &key, &lo_hi, &flags, &end):
                self.problem(f"{self.where(frame)}: node {index} holds no valid key")
                return 0
            self.children[index].page = <uint64_t>lo_hi | (<uint64_t>flags << 32)
            if index:
                previous = &frame.low if index == 1 else &self.children[index - 1].key
                if (previous.kind != NONE and (_compare(&key, previous) < 0 or
                                               (index > 1 and _compare(&key, previous) == 0))) or \
                        (frame.high.kind != NONE and _compare(&key, &frame.high) >= 0):
                    self.problem(f"{self.where(frame)}: separator {index} ({_shown(&key)}) is out of order "
                                 f"(it must lie in [{_shown(previous)}, {_shown(&frame.high)}))")
                    return 0
                self.children[index].key = key
        for index in range(count - 1, -1, -1):
            child.number = self.children[index].page
            child.level = frame.level + 1
            child.low = frame.low if index == 0 else self.children[index].key
            child.high = frame.high if index == count - 1 else self.children[index + 1].key
            child.parent = <long long>frame.number
            child.index = index
            self.push(child)
        return 0

    cdef int leaf(self, const Frame* frame, Py_ssize_t count, bint integer, uint64_t* entries,
                  uint64_t* overflow) except -1:
        """nstore.btree._leaf: check a leaf's keys (ascending, inside its bounds) and
        values (inside the page, or in overflow pages of the right size); adds its entries
        and overflow pages to the counts."""
        cdef Py_ssize_t base = <Py_ssize_t>frame.number * self.page_size
        cdef Py_ssize_t end_of_page = base + self.page_size
        cdef Py_ssize_t index, value_at
        cdef Key key, previous
        cdef uint32_t size
        cdef uint16_t flags
        cdef uint64_t pages = 0
        previous.kind = NONE
        for index in range(count):
            if not self.key(base, self.nodes[index], integer, &key, &size, &flags, &value_at):
                self.problem(f"{self.where(frame)}: node {index} holds no valid key")
                return 0
            if (previous.kind != NONE and _compare(&key, &previous) <= 0) or \
                    (frame.low.kind != NONE and _compare(&key, &frame.low) < 0) or \
                    (frame.high.kind != NONE and _compare(&key, &frame.high) >= 0) or \
                    (key.kind == BYTES and key.size == 0):
                self.problem(f"{self.where(frame)}: key {index} ({_shown(&key)}) is out of order (after {_shown(&previous)}, "
                             f"in [{_shown(&frame.low)}, {_shown(&frame.high)}))")
                return 0
            previous = key
            if flags == _BIGDATA:
                if value_at + 8 > end_of_page:
                    self.problem(f"{self.where(frame)}: node {index}'s overflow page number does not fit the page")
                    return 0
                pages += self.overflow_pages(_u64(self.data + value_at), size, frame, index)
            elif flags != 0:
                self.problem(f"{self.where(frame)}: node {index} has flags {flags:#x} (datae stores plain values only)")
                return 0
            elif value_at + size > end_of_page:
                self.problem(f"{self.where(frame)}: node {index}'s value of {size} bytes does not fit the page")
                return 0
        entries[0] += count
        overflow[0] += pages
        return 0

    cdef uint64_t overflow_pages(self, uint64_t number, uint32_t size, const Frame* frame, Py_ssize_t node) except? 0:
        """nstore.btree._overflow: check the overflow pages of a value of ``size`` bytes
        starting at page ``number``; how many there are (0 after a problem)."""
        cdef uint64_t wanted = (_HEADER - 1 + <uint64_t>size) // self.page_size + 1
        cdef uint64_t page, stored
        cdef Py_ssize_t base
        cdef uint16_t flags
        cdef uint32_t count
        # number > last_page or >= pages first, so that the sums below cannot wrap.
        if number < 2 or number > self.last_page or number >= self.pages or \
                number + wanted - 1 > self.last_page or number + wanted > self.pages:
            self.problem(f"{self.where(frame)} node {node}: its {wanted} overflow pages from page {number} lie outside the file")
            return 0
        for page in range(number, number + wanted):
            if self.used[page]:
                self.problem(f"{self.where(frame)} node {node}: its overflow pages from page {number} are reached twice")
                return 0
        base = <Py_ssize_t>number * self.page_size
        stored = _u64(self.data + base)
        flags = _u16(self.data + base + 10)
        count = _u32(self.data + base + 12)
        if stored != number or flags != _OVERFLOW or count != wanted:
            self.problem(f"{self.where(frame)} node {node}: page {number} is not the start of {wanted} overflow pages "
                         f"(page number {stored}, flags {flags:#x}, {count} pages)")
            return 0
        memset(self.used + number, 1, wanted)
        return wanted

    cdef int tree(self, str name, tuple record) except -1:
        """nstore.btree._walk_tree: walk one tree from its root, depth first, each page
        with the key bounds its ancestors' separators give it; then its counts."""
        cdef uint16_t db_flags = record[1]
        cdef uint64_t root = record[7]
        cdef uint64_t found[4]  # branch, leaf, overflow pages, entries
        cdef Frame frame
        cdef uint16_t flags
        cdef Py_ssize_t count
        cdef bint integer = db_flags & _INTEGER_KEY
        branches, leaves, overflows, entries = record[3:7]
        self.name = name
        self.depth = record[2]
        if root == _NO_PAGE:
            if self.depth or branches or leaves or overflows or entries:
                self.problem(f"the {name} tree has no root page but its record counts {entries} entries")
            return 0
        memset(found, 0, sizeof(found))
        frame.number = root
        frame.level = 1
        frame.low.kind = NONE
        frame.high.kind = NONE
        frame.parent = -1
        frame.index = 0
        self.stacked = 0
        self.push(frame)
        while self.stacked and not self.full():
            self.stacked -= 1
            frame = self.stack[self.stacked]
            count = self.page(&frame, &flags)
            if count < 0:
                continue
            if frame.level < self.depth:
                if flags != _BRANCH:
                    self.problem(f"{self.where(&frame)}: flags {flags:#x}, not a branch page")
                    continue
                found[0] += 1
                self.branch(&frame, count, integer)
            elif frame.level == self.depth:
                if flags != _LEAF:
                    self.problem(f"{self.where(&frame)}: flags {flags:#x}, not a leaf page")
                    continue
                found[1] += 1
                self.leaf(&frame, count, integer, &found[3], &found[2])
        if self.problems:
            return 0
        for what, seen, counted in (("branch pages", found[0], branches), ("leaf pages", found[1], leaves),
                                    ("overflow pages", found[2], overflows), ("entries", found[3], entries)):
            if seen != counted:
                self.problem(f"the {name} tree holds {seen} {what} but its record in the meta page says {counted}")
        return 0

    cdef int free_list(self, tuple record) except -1:
        """nstore.btree._check_free_list: every page the free-page tree lists is inside the
        pages in use and in no tree, listed once (run only on trees found whole, so its
        pages are read without checks)."""
        cdef uint64_t root = record[7]
        cdef long depth = record[2]
        cdef Frame frame, child
        cdef Py_ssize_t base, count, index, value_at, listed, number
        cdef Key key
        cdef uint32_t size
        cdef uint16_t flags
        cdef uint64_t page, holds
        if root == _NO_PAGE:
            return 0
        frame.number = root
        frame.level = 1
        self.stacked = 0
        self.push(frame)
        while self.stacked:
            self.stacked -= 1
            frame = self.stack[self.stacked]
            base = <Py_ssize_t>frame.number * self.page_size
            count = (_u16(self.data + base + 12) - _HEADER) // 2
            for index in range(count):
                if not self.key(base, _u16(self.data + base + _HEADER + 2 * index), frame.level == depth,
                                &key, &size, &flags, &value_at):
                    # a key the walk read as bytes: the tree's record lost its integer flag
                    self.problem(f"free-page tree page {frame.number}: node {index} holds no valid key")
                    continue
                if frame.level < depth:
                    child.number = <uint64_t>size | (<uint64_t>flags << 32)
                    child.level = frame.level + 1
                    self.push(child)
                    continue
                if flags == _BIGDATA:
                    value_at = <Py_ssize_t>_u64(self.data + value_at) * self.page_size + _HEADER
                if size < 8 or size % 8:
                    self.problem(f"free-page list of transaction {key.value}: {size} bytes, not a list of page numbers")
                    continue
                listed = size // 8
                holds = _u64(self.data + value_at)
                if holds != <uint64_t>(listed - 1):
                    self.problem(f"free-page list of transaction {key.value}: says {holds} pages but holds {listed - 1}")
                    continue
                for number in range(1, listed):
                    page = _u64(self.data + value_at + 8 * number)
                    if page < 2 or page > self.last_page:
                        self.problem(f"free-page list of transaction {key.value}: page {page} is outside the pages "
                                     f"in use (2..{self.last_page})")
                    elif self.used[page]:
                        what = "listed free twice" if self.used[page] == 2 else "in use by a tree"
                        self.problem(f"free-page list of transaction {key.value}: page {page} is {what}: the next "
                                     "write would overwrite it")
                    else:
                        self.used[page] = 2
        return 0


def walk(data, Py_ssize_t page_size, unsigned long long pages, unsigned long long last_page,
         list records) -> list:
    """Each problem of the free-page and the main tree of the mapped LMDB file ``data``
    (a buffer: an mmap or bytes), given the page size, the pages the file holds, the last
    page in use and the two ``MDB_db`` records (unpacked as ``nstore.btree._DB``) of the
    meta page of the state to check: what :func:`nstore.btree.tree_problems` reports,
    from a meta page :func:`nstore.btree._meta_of` found."""
    cdef const unsigned char[::1] view = data
    cdef _Walk state = _Walk()
    if view.shape[0] == 0:
        return ["the file is empty"]
    if last_page >= <unsigned long long>PY_SSIZE_T_MAX:  # what bytearray(last_page + 1) refuses
        raise OverflowError(f"last page {last_page} of the meta page is past any file")
    state.data = &view[0]
    state.page_size = page_size
    state.pages = pages
    state.last_page = last_page
    state.problems = []
    state.used = <unsigned char*>calloc(last_page + 1, 1)
    state.children = <Child*>malloc((page_size // 2 + 1) * sizeof(Child))
    state.nodes = <uint16_t*>malloc((page_size // 2 + 1) * sizeof(uint16_t))
    if state.used == NULL or state.children == NULL or state.nodes == NULL:
        raise MemoryError()
    for name, record in zip(_TREES, records):
        state.tree(name, record)
    if not state.problems:
        state.free_list(records[0])
    return state.problems
