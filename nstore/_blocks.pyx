# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled codec of :mod:`nstore.blocks`: sorted ``(key, value)`` entries kept as
prefix-compressed blocks, one LMDB value each (the layout is in ``docs/format.md``,
"Blocks").

A block is the LMDB value stored under its first key, the *fence*: ``varint(number of
entries)``, then its entries in ascending key order, each as::

    varint(shared) varint(suffix length) varint(2 * value length + external) suffix value

where ``shared`` is how many leading bytes the key shares with the key before it (the
fence, for the first entry, which must be the fence itself: ``shared = len(fence)`` and no
suffix) and varints are unsigned LEB128. ``external`` (1) says the value is stored outside
the block (its bytes here are empty; :mod:`nstore.blocks` keeps it under its own key).

Every function checks what it reads: a damaged block raises :class:`BlockError` naming
what is wrong, never reads outside the block, and never returns a key out of order.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

__all__ = ["BlockError", "EXTERNAL", "MAX_KEY", "Changes", "RunMerge", "changes", "sorted_changes", "pairs_changes", "sorted_bytes", "decode", "find", "lookup", "lookup_sorted", "slice_of",
           "rewrite", "rewrite_changes", "problem", "count"]

MAX_KEY = 2048  # longer than any key okvs accepts (511): a longer one is damage

EXTERNAL = Ellipsis
"""The value of an entry whose value is stored outside its block (``...``)."""


class BlockError(ValueError):
    """A block that does not decode: what is wrong, and where."""


cdef struct Reader:
    const unsigned char* data
    Py_ssize_t size
    Py_ssize_t pos
    Py_ssize_t index          # entries read so far
    Py_ssize_t total          # entries the block says it holds
    Py_ssize_t fence_size
    unsigned char key[2048]
    Py_ssize_t key_size
    Py_ssize_t value_at       # offset of the value in data
    Py_ssize_t value_size
    int external


cdef int _varint(Reader* r, Py_ssize_t* out) except -1:
    cdef Py_ssize_t result = 0
    cdef int shift = 0
    cdef unsigned char byte
    while True:
        if r.pos >= r.size:
            raise BlockError(f"entry {r.index} ends inside a number at byte {r.pos}")
        byte = r.data[r.pos]
        r.pos += 1
        result |= (<Py_ssize_t>(byte & 0x7F)) << shift
        if byte < 0x80:
            out[0] = result
            return 0
        shift += 7
        if shift > 28:
            raise BlockError(f"entry {r.index} holds a number of more than 5 bytes at byte {r.pos}")


cdef int _start(Reader* r, bytes fence, bytes block) except -1:
    r.data = <const unsigned char*>PyBytes_AS_STRING(block)
    r.size = PyBytes_GET_SIZE(block)
    r.pos = 0
    r.index = 0
    r.fence_size = PyBytes_GET_SIZE(fence)
    if r.fence_size >= MAX_KEY:
        raise BlockError(f"a fence of {r.fence_size} bytes")
    memcpy(r.key, PyBytes_AS_STRING(fence), r.fence_size)
    r.key_size = r.fence_size
    if r.size == 0:
        raise BlockError("an empty block")
    _varint(r, &r.total)
    if r.total == 0:
        raise BlockError("an empty block")
    return 0


cdef int _next(Reader* r) except -1:
    """Read the next entry into r.key / r.value_*: 1 if one was read, 0 at the end."""
    cdef Py_ssize_t shared, suffix, header, size
    cdef int greater
    if r.index == r.total:
        if r.pos != r.size:
            raise BlockError(f"{r.size - r.pos} bytes after its last entry ({r.total})")
        return 0
    _varint(r, &shared)
    _varint(r, &suffix)
    _varint(r, &header)
    size = header >> 1
    if r.index == 0:
        if shared != r.fence_size or suffix != 0:
            raise BlockError(f"the first entry is not the fence (shares {shared} of its {r.fence_size} bytes, adds {suffix})")
    else:
        if shared > r.key_size:
            raise BlockError(f"entry {r.index} shares {shared} bytes of a {r.key_size}-byte key")
        if suffix == 0:
            raise BlockError(f"entry {r.index} repeats the key before it")
        if shared + suffix >= MAX_KEY:
            raise BlockError(f"entry {r.index} makes a key of {shared + suffix} bytes")
    if suffix > r.size - r.pos or size > r.size - r.pos - suffix:
        raise BlockError(f"entry {r.index} runs past the end of the block ({r.size} bytes)")
    if r.index > 0:
        # Ascending: the first byte after the shared prefix grows (or the key extends the one before).
        if shared < r.key_size:
            greater = r.data[r.pos] > r.key[shared]
        else:
            greater = 1
        if not greater:
            raise BlockError(f"entry {r.index} does not sort after the key before it")
    memcpy(r.key + shared, r.data + r.pos, suffix)
    r.key_size = shared + suffix
    r.pos += suffix
    r.value_at = r.pos
    r.value_size = size
    r.external = header & 1
    if r.external and size:
        raise BlockError(f"entry {r.index} is external but holds {size} bytes")
    r.pos += size
    r.index += 1
    return 1


cdef inline int _compare(const unsigned char* a, Py_ssize_t a_size, const unsigned char* b, Py_ssize_t b_size) noexcept nogil:
    cdef Py_ssize_t common = a_size if a_size < b_size else b_size
    cdef int order = memcmp(a, b, common)
    if order != 0:
        return order
    return (a_size > b_size) - (a_size < b_size)


cdef inline object _key(Reader* r):
    return PyBytes_FromStringAndSize(<const char*>r.key, r.key_size)


cdef inline object _value(Reader* r):
    if r.external:
        return EXTERNAL
    return PyBytes_FromStringAndSize(<const char*>(r.data + r.value_at), r.value_size)


def decode(bytes fence, bytes block):
    """Every ``(keys, values)`` of a block, as two lists in key order (an external value
    is :data:`EXTERNAL`).

    >>> blocks = rewrite([], [b"ka", b"kb"], [b"1", b""], 2000)[0]
    >>> decode(*blocks[0])
    ([b'ka', b'kb'], [b'1', b''])
    """
    cdef Reader r
    cdef list keys = [], values = []
    _start(&r, fence, block)
    while _next(&r):
        keys.append(_key(&r))
        values.append(_value(&r))
    return keys, values


def count(bytes fence, bytes block) -> int:
    """How many entries a block holds."""
    cdef Reader r
    _start(&r, fence, block)
    while _next(&r):
        pass
    return r.index


def find(bytes fence, bytes block, bytes key):
    """The value of ``key`` in the block, :data:`EXTERNAL`, or None if it holds no such key."""
    cdef Reader r
    cdef const unsigned char* wanted = <const unsigned char*>PyBytes_AS_STRING(key)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(key)
    cdef int order
    _start(&r, fence, block)
    while _next(&r):
        order = _compare(r.key, r.key_size, wanted, size)
        if order == 0:
            return _value(&r)
        if order > 0:
            return None
    return None


def lookup(bytes fence, bytes block, list keys, Py_ssize_t start, object bound, list out) -> int:
    """Look up ``keys[start:]`` (ascending) in one block, walking it once: ``out[i]`` gets
    the value of ``keys[i]`` (None if absent) for each key below ``bound`` (the next
    block's fence, None for the last block). Returns the index of the first key left."""
    cdef Reader r
    cdef Py_ssize_t i = start, n = len(keys), size, bound_size = 0
    cdef const unsigned char* wanted
    cdef const unsigned char* bound_data = NULL
    cdef bytes item
    cdef int order, more
    if bound is not None:
        bound_data = <const unsigned char*>PyBytes_AS_STRING(bound)
        bound_size = PyBytes_GET_SIZE(bound)
    _start(&r, fence, block)
    more = _next(&r)
    while i < n:
        item = <bytes>keys[i]
        wanted = <const unsigned char*>PyBytes_AS_STRING(item)
        size = PyBytes_GET_SIZE(item)
        if bound_data != NULL and _compare(wanted, size, bound_data, bound_size) >= 0:
            break
        while more and _compare(r.key, r.key_size, wanted, size) < 0:
            more = _next(&r)
        if more and _compare(r.key, r.key_size, wanted, size) == 0:
            out[i] = _value(&r)
        else:
            out[i] = None
        i += 1
    return i


def lookup_sorted(cursor, bytes start, bytes end, list keys):
    """The values of ``keys`` (ascending) in a keyspace of blocks ``[start, end)`` read by
    ``cursor`` (a py-lmdb cursor): each a value, :data:`EXTERNAL`, or None if absent; or
    None when the keys are not in ascending order (the caller sorts them). The blocks are
    read in order: the next block is stepped to while the wanted key is in it or the one
    after, else sought (one seek per far key, one step per near block)."""
    cdef Py_ssize_t n = len(keys), i = 0, steps = 0
    cdef list out = [None] * n
    cdef object fence = None, block = None, bound = None, key, previous = None
    for key in keys:
        if previous is not None and key < previous:
            return None
        previous = key
    while i < n:
        key = keys[i]
        if fence is not None and (bound is None or key < bound):
            i = lookup(fence, block, keys, i, bound, out)
            steps = 0
            continue
        if fence is not None and steps < 2:  # the cursor is on the next block: step to it
            fence, block = bound, cursor.value()
            bound = cursor.key() if cursor.next() else None
            steps += 1
        elif _at_floor(cursor, start, key):
            fence, block = cursor.key(), cursor.value()
            bound = cursor.key() if cursor.next() else None
            steps = 0
        else:  # below the first block: not there
            out[i] = None
            i += 1
            continue
        if bound is not None and bound >= end:
            bound = None
    return out


def slice_of(bytes fence, bytes block, bytes start, object end, bint after):
    """The entries of a block from ``start`` (inclusive, or exclusive if ``after``) up to
    ``end`` (exclusive; None: no bound): ``(keys, values, ended)``, ``ended`` true when
    the block holds a key at or past ``end`` (no later block can hold more)."""
    cdef Reader r
    cdef list keys = [], values = []
    cdef const unsigned char* low = <const unsigned char*>PyBytes_AS_STRING(start)
    cdef Py_ssize_t low_size = PyBytes_GET_SIZE(start), high_size = 0
    cdef const unsigned char* high = NULL
    cdef int order
    if end is not None:
        high = <const unsigned char*>PyBytes_AS_STRING(end)
        high_size = PyBytes_GET_SIZE(end)
    _start(&r, fence, block)
    while _next(&r):
        order = _compare(r.key, r.key_size, low, low_size)
        if order < 0 or (order == 0 and after):
            continue
        if high != NULL and _compare(r.key, r.key_size, high, high_size) >= 0:
            return keys, values, True
        keys.append(_key(&r))
        values.append(_value(&r))
    return keys, values, False


cdef class BlockLookup:
    """A prepared lookup in a keyspace of blocks (``start`` to ``end``): the key prefix is
    ``parts`` joined, each part bytes or the index of a param whose packed item fills it;
    :meth:`rows` gives the ``count`` items after the prefix of every key under it when
    one block holds them all (:func:`block_keys`), else None. One call per lookup: what a
    join on ids does for each row it extends."""

    cdef list parts
    cdef bytes start, end
    cdef Py_ssize_t count
    cdef object split

    def __init__(self, list parts, bytes start, bytes end, Py_ssize_t count):
        from nstore._pack import split_items
        self.parts, self.start, self.end, self.count = parts, start, end, count
        self.split = split_items

    def rows(self, cursor, values):
        cdef list pieces = []
        cdef object part
        cdef bytes prefix, low, high
        cdef list keys, out
        cdef Py_ssize_t skip, i, n
        for part in self.parts:
            pieces.append(part if type(part) is bytes else values[part])
        prefix = b"".join(pieces)
        low = prefix if prefix > self.start else self.start
        high = prefix + b"\xff"
        if high > self.end:
            high = self.end
        if low >= high:
            return []
        keys = block_keys(cursor, self.start, low, high)
        if keys is None:
            return None
        skip = PyBytes_GET_SIZE(prefix)
        n = len(keys)
        out = [None] * n
        split = self.split
        for i in range(n):
            out[i] = split(keys[i], skip, self.count)
        return out


cdef int _next_in(Reader* r, const unsigned char* lo, Py_ssize_t lo_size,
                  const unsigned char* hi, Py_ssize_t hi_size) except -2:
    """Move ``r`` to its block's next key in ``[lo, hi)``: 1 on one, 0 at the block's end,
    -1 at a key at or past ``hi`` (no later key is in the range)."""
    while _next(r):
        if _compare(r.key, r.key_size, lo, lo_size) < 0:
            continue
        if _compare(r.key, r.key_size, hi, hi_size) >= 0:
            return -1
        return 1
    return 0


cdef bint _at_floor(cursor, bytes start, bytes low) except -1:
    """Put ``cursor`` on the block at or below ``low`` of the keyspace that begins at
    ``start``: False (the cursor then anywhere) when there is none."""
    if cursor.set_range(low):
        if cursor.key() != low and not cursor.prev():
            return False
    elif not cursor.last():
        return False
    return cursor.key() >= start


def count_keys(cursor, bytes start, bytes end, bytes low, bytes high, Py_ssize_t cap):
    """How many keys of ``[low, high)`` a keyspace of blocks (``start`` to ``end``) holds,
    read by ``cursor`` (a py-lmdb cursor) block after block, no key made into an object;
    counting stops at ``cap``."""
    cdef Reader r
    cdef Py_ssize_t n = 0
    cdef const unsigned char* lo = <const unsigned char*>PyBytes_AS_STRING(low)
    cdef const unsigned char* hi = <const unsigned char*>PyBytes_AS_STRING(high)
    cdef Py_ssize_t lo_size = PyBytes_GET_SIZE(low), hi_size = PyBytes_GET_SIZE(high)
    cdef bytes fence, block
    cdef int state
    if cap <= 0:
        return 0
    # The block at or below low, else the first after it.
    if not _at_floor(cursor, start, low) and not cursor.set_range(low):
        return 0
    while True:
        fence = cursor.key()
        if fence >= high or fence >= end:
            return n
        block = cursor.value()  # held: the reader points into it
        _start(&r, fence, block)
        while True:
            state = _next_in(&r, lo, lo_size, hi, hi_size)
            if state != 1:
                break
            n += 1
            if n >= cap:
                return n
        if state == -1 or not cursor.next():
            return n


def block_keys(cursor, bytes start, bytes low, bytes high):
    """The keys in ``[low, high)`` of a keyspace of blocks that begins at ``start``, read
    by ``cursor`` (a py-lmdb cursor), when the block at or below ``low`` holds them all: a
    lookup's whole answer in one seek and one partial decode. None when that cannot be
    told from the block (no block at or below ``low``, or the range may go on into the
    next block whose fence is below ``high``): the caller reads the range its usual way."""
    cdef Reader r
    cdef list keys = []
    cdef const unsigned char* lo = <const unsigned char*>PyBytes_AS_STRING(low)
    cdef const unsigned char* hi = <const unsigned char*>PyBytes_AS_STRING(high)
    cdef Py_ssize_t lo_size = PyBytes_GET_SIZE(low), hi_size = PyBytes_GET_SIZE(high)
    cdef bytes fence, block, following
    cdef int state
    if not _at_floor(cursor, start, low):
        return None
    fence = cursor.key()
    block = cursor.value()  # held: the reader points into it
    _start(&r, fence, block)
    while True:
        state = _next_in(&r, lo, lo_size, hi, hi_size)
        if state != 1:
            break
        keys.append(_key(&r))
    if state == -1:
        return keys
    if cursor.next():
        following = cursor.key()
        if following < high:
            return None
    return keys


def problem(bytes fence, bytes block, Py_ssize_t limit):
    """What is wrong with a block (None if nothing): it does not decode, or it is larger
    than ``limit`` bytes with its fence."""
    cdef Reader r
    try:
        _start(&r, fence, block)
        while _next(&r):
            pass
    except BlockError as exc:
        return str(exc)
    if PyBytes_GET_SIZE(fence) + PyBytes_GET_SIZE(block) > limit:
        return f"{PyBytes_GET_SIZE(block)} bytes with a {PyBytes_GET_SIZE(fence)}-byte fence, over the limit of {limit}"
    return None


# -- writing ----------------------------------------------------------------------------

cdef struct Entry:
    Py_ssize_t key_at      # offset of the key in the arena
    Py_ssize_t key_size
    Py_ssize_t value_at    # offset of the value in the arena
    Py_ssize_t value_size
    int external


cdef struct Merged:
    unsigned char* arena
    Py_ssize_t arena_size
    Py_ssize_t arena_used
    Entry* entries
    Py_ssize_t count
    Py_ssize_t capacity


cdef int _grow_arena(Merged* m, Py_ssize_t extra) except -1:
    cdef Py_ssize_t wanted = m.arena_used + extra
    cdef unsigned char* bigger
    if wanted <= m.arena_size:
        return 0
    wanted = max(wanted, 2 * m.arena_size, 4096)
    bigger = <unsigned char*>realloc(m.arena, wanted)
    if bigger == NULL:
        raise MemoryError()
    m.arena = bigger
    m.arena_size = wanted
    return 0


cdef int _push(Merged* m, const unsigned char* key, Py_ssize_t key_size,
               const unsigned char* value, Py_ssize_t value_size, int external) except -1:
    cdef Entry* bigger
    if m.count == m.capacity:
        m.capacity = max(2 * m.capacity, 256)
        bigger = <Entry*>realloc(m.entries, m.capacity * sizeof(Entry))
        if bigger == NULL:
            raise MemoryError()
        m.entries = bigger
    _grow_arena(m, key_size + value_size)
    memcpy(m.arena + m.arena_used, key, key_size)
    if value_size:
        memcpy(m.arena + m.arena_used + key_size, value, value_size)
    m.entries[m.count].key_at = m.arena_used
    m.entries[m.count].key_size = key_size
    m.entries[m.count].value_at = m.arena_used + key_size
    m.entries[m.count].value_size = value_size
    m.entries[m.count].external = external
    m.arena_used += key_size + value_size
    m.count += 1
    return 0


cdef inline Py_ssize_t _varint_size(Py_ssize_t value) noexcept nogil:
    cdef Py_ssize_t size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


cdef inline Py_ssize_t _put_varint(unsigned char* out, Py_ssize_t value) noexcept nogil:
    cdef Py_ssize_t size = 0
    while value >= 0x80:
        out[size] = <unsigned char>((value & 0x7F) | 0x80)
        value >>= 7
        size += 1
    out[size] = <unsigned char>value
    return size + 1


cdef inline Py_ssize_t _shared(const unsigned char* a, Py_ssize_t a_size, const unsigned char* b, Py_ssize_t b_size) noexcept nogil:
    cdef Py_ssize_t common = a_size if a_size < b_size else b_size, i = 0
    while i < common and a[i] == b[i]:
        i += 1
    return i


cdef Py_ssize_t _entry_size(Merged* m, Py_ssize_t i, Py_ssize_t previous) noexcept:
    """Bytes entry i takes after entry ``previous`` (-1: it opens a block)."""
    cdef Entry* e = &m.entries[i]
    cdef Entry* p
    cdef Py_ssize_t shared, suffix
    if previous < 0:
        return _varint_size(e.key_size) + 1 + _varint_size(2 * e.value_size + e.external) + e.value_size
    p = &m.entries[previous]
    shared = _shared(m.arena + p.key_at, p.key_size, m.arena + e.key_at, e.key_size)
    suffix = e.key_size - shared
    return _varint_size(shared) + _varint_size(suffix) + _varint_size(2 * e.value_size + e.external) + suffix + e.value_size


cdef object _encode(Merged* m, Py_ssize_t first, Py_ssize_t stop, Py_ssize_t size):
    """The (fence, block) of entries [first, stop), ``size`` bytes."""
    cdef Py_ssize_t pos = _varint_size(stop - first), i, shared, suffix
    cdef bytes block = PyBytes_FromStringAndSize(NULL, size + pos)
    cdef unsigned char* out = <unsigned char*>PyBytes_AS_STRING(block)
    _put_varint(out, stop - first)
    cdef Entry* e
    cdef Entry* p
    for i in range(first, stop):
        e = &m.entries[i]
        if i == first:
            shared, suffix = e.key_size, 0
        else:
            p = &m.entries[i - 1]
            shared = _shared(m.arena + p.key_at, p.key_size, m.arena + e.key_at, e.key_size)
            suffix = e.key_size - shared
        pos += _put_varint(out + pos, shared)
        pos += _put_varint(out + pos, suffix)
        pos += _put_varint(out + pos, 2 * e.value_size + e.external)
        memcpy(out + pos, m.arena + e.key_at + shared, suffix)
        pos += suffix
        memcpy(out + pos, m.arena + e.value_at, e.value_size)
        pos += e.value_size
    if pos != PyBytes_GET_SIZE(block):
        raise AssertionError(f"block of {pos} bytes, {PyBytes_GET_SIZE(block)} expected")
    e = &m.entries[first]
    return (PyBytes_FromStringAndSize(<const char*>(m.arena + e.key_at), e.key_size), block)


cdef list _split(Merged* m, Py_ssize_t limit):
    """The merged entries cut into blocks of at most ``limit`` bytes with their fences,
    about equal when a few blocks hold them (a block split in two leaves two halves, not a
    full block and a crumb), full when many do (a bulk load)."""
    cdef list blocks = []
    cdef Py_ssize_t i, total = 0, pieces, target, first = 0, size = 0, entry, opening
    if m.count == 0:
        return blocks
    for i in range(m.count):
        total += _entry_size(m, i, i - 1)
    total += m.entries[0].key_size  # the fence
    pieces = (total + limit - 1) // limit
    target = (total + pieces - 1) // pieces if pieces < 8 else limit
    for i in range(m.count):
        if i == first:
            size = _entry_size(m, i, -1)
            continue
        entry = _entry_size(m, i, i - 1)
        # (+ 3: the entry count's varint, at most 3 bytes in a block of at most 2 MB)
        if m.entries[first].key_size + size + entry + 3 > limit or m.entries[first].key_size + size >= target:
            blocks.append(_encode(m, first, i, size))
            first = i
            size = _entry_size(m, i, -1)
        else:
            size += entry
    blocks.append(_encode(m, first, m.count, size))
    return blocks


# -- changes: what a rewrite merges in -----------------------------------------------------

cdef struct Change:
    const unsigned char* key
    Py_ssize_t size
    const unsigned char* value
    Py_ssize_t value_size
    int kind  # _SET, _EXTERNAL or _DELETE

cdef enum:
    _SET = 0
    _EXTERNAL = 1
    _DELETE = 2


cdef struct Span:
    const char* data
    Py_ssize_t size
    unsigned long long chunk  # 8 bytes of the key from the depth being sorted, big-endian
    Py_ssize_t row            # where the key came from (its value's position)


cdef inline unsigned long long _chunk(const Span* span, Py_ssize_t depth) noexcept nogil:
    """Bytes depth..depth+8 of a key as a big-endian number, zeros past its end."""
    cdef unsigned long long value = 0
    cdef Py_ssize_t i, left = span.size - depth
    cdef const unsigned char* data = <const unsigned char*>span.data + depth
    if left >= 8:
        for i in range(8):
            value = (value << 8) | data[i]
        return value
    for i in range(8):
        value = (value << 8) | (data[i] if i < left else 0)
    return value


cdef void _insertion_sort(Span* spans, Py_ssize_t n, Py_ssize_t depth) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef Span moving
    for i in range(1, n):
        moving = spans[i]
        j = i
        while j > 0 and _compare(<const unsigned char*>spans[j - 1].data + depth, spans[j - 1].size - depth,
                                 <const unsigned char*>moving.data + depth, moving.size - depth) > 0:
            spans[j] = spans[j - 1]
            j -= 1
        spans[j] = moving


cdef void _radix_sort(Span* spans, Span* scratch, Py_ssize_t n, Py_ssize_t depth) noexcept nogil:
    """Sort keys that agree on their first ``depth`` bytes: a stable LSD radix sort (a
    byte at a time, skipping bytes all keys share) on the next 8 bytes, then each run that
    ties on them in the same way from depth + 8; keys that end inside the 8 bytes sort
    before longer keys they begin (a prefix first, as LMDB orders keys)."""
    cdef Py_ssize_t i, j, k, run, ended
    cdef Py_ssize_t counts[256]
    cdef int shift, digit
    cdef Span* source = spans
    cdef Span* target = scratch
    cdef Span* swap
    cdef Span moving
    cdef unsigned long long differ
    if n < 32:
        _insertion_sort(spans, n, depth)
        return
    differ = 0
    for i in range(n):
        spans[i].chunk = _chunk(&spans[i], depth)
        differ |= spans[i].chunk ^ spans[0].chunk
    for shift in range(0, 64, 8):
        if not (differ >> shift) & 0xFF:
            continue  # every key has this byte
        memset(counts, 0, sizeof(counts))
        for i in range(n):
            counts[(source[i].chunk >> shift) & 0xFF] += 1
        k = 0
        for digit in range(256):
            j = counts[digit]
            counts[digit] = k
            k += j
        for i in range(n):
            digit = (source[i].chunk >> shift) & 0xFF
            target[counts[digit]] = source[i]
            counts[digit] += 1
        swap = source
        source = target
        target = swap
    if source != spans:
        memcpy(spans, source, n * sizeof(Span))
    i = 0
    while i < n:
        j = i + 1
        while j < n and spans[j].chunk == spans[i].chunk:
            j += 1
        run = j - i
        if run > 1:
            # keys that end within these 8 bytes first, shorter first (each begins the next;
            # equal ones are repeats), then the rest sorted on from depth + 8
            ended = 0
            for k in range(i, j):
                if spans[k].size <= depth + 8:
                    scratch[ended] = spans[k]
                    ended += 1
            if ended:
                for k in range(1, ended):  # insertion sort by size: equal sizes never move
                    moving = scratch[k]
                    digit = k
                    while digit > 0 and scratch[digit - 1].size > moving.size:
                        scratch[digit] = scratch[digit - 1]
                        digit -= 1
                    scratch[digit] = moving
                k = ended
                for digit in range(i, j):
                    if spans[digit].size > depth + 8:
                        scratch[k] = spans[digit]
                        k += 1
                memcpy(spans + i, scratch, run * sizeof(Span))
            if run - ended > 1:
                _radix_sort(spans + i + ended, scratch, run - ended, depth + 8)
        i = j


cdef inline void _set_change(Change* change, Span key, const unsigned char* value, Py_ssize_t value_size,
                             int kind) noexcept:
    change.key = <const unsigned char*>key.data
    change.size = key.size
    change.value = value
    change.value_size = value_size
    change.kind = kind


cdef class Changes:
    """Sets and deletes of strictly ascending keys, held in C for :func:`rewrite_changes`:
    made by :func:`changes` (from lists) or :func:`sorted_changes` (keys built and sorted
    here, no Python object per key)."""

    cdef Change* items
    cdef Py_ssize_t count
    cdef char* arena
    cdef object owners  # the Python objects items point into

    def __cinit__(self):
        self.items = NULL
        self.arena = NULL
        self.count = 0

    def __dealloc__(self):
        free(self.items)
        free(self.arena)

    def __len__(self) -> int:
        return self.count

    def key(self, Py_ssize_t i) -> bytes:
        """Key ``i``."""
        if not 0 <= i < self.count:
            raise IndexError(i)
        return PyBytes_FromStringAndSize(<const char*>self.items[i].key, self.items[i].size)

    def keys(self) -> list:
        """Every key, in order."""
        cdef Py_ssize_t i
        return [PyBytes_FromStringAndSize(<const char*>self.items[i].key, self.items[i].size) for i in range(self.count)]

    def value(self, Py_ssize_t i):
        """The value of key ``i``: bytes, :data:`EXTERNAL`, or None (a delete)."""
        if not 0 <= i < self.count:
            raise IndexError(i)
        if self.items[i].kind == _DELETE:
            return None
        if self.items[i].kind == _EXTERNAL:
            return EXTERNAL
        return PyBytes_FromStringAndSize(<const char*>self.items[i].value, self.items[i].value_size)

    def bisect(self, bytes key, Py_ssize_t lo=0) -> int:
        """The index of the first key at or after ``key``, from ``lo``."""
        cdef Py_ssize_t hi = self.count, middle
        cdef const unsigned char* wanted = <const unsigned char*>PyBytes_AS_STRING(key)
        cdef Py_ssize_t size = PyBytes_GET_SIZE(key)
        while lo < hi:
            middle = (lo + hi) >> 1
            if _compare(self.items[middle].key, self.items[middle].size, wanted, size) < 0:
                lo = middle + 1
            else:
                hi = middle
        return lo


    def dump(self) -> bytes:
        """Every change as one record after another, what :class:`RunMerge` reads back: its
        kind (1 byte: 0 set, 1 external, 2 delete), key size (2 bytes, big-endian), value
        size (4 bytes, big-endian), the key, the value.

        >>> changes([b"a", b"b"], [b"1", None]).dump().hex()
        '0000010000000161310200010000000062'
        """
        cdef Py_ssize_t i, total = 0, cursor = 0
        cdef Change* c
        for i in range(self.count):
            total += 7 + self.items[i].size + self.items[i].value_size
        cdef bytes out = PyBytes_FromStringAndSize(NULL, total)
        cdef unsigned char* data = <unsigned char*>PyBytes_AS_STRING(out)
        for i in range(self.count):
            c = &self.items[i]
            data[cursor] = c.kind
            data[cursor + 1] = (c.size >> 8) & 0xFF
            data[cursor + 2] = c.size & 0xFF
            data[cursor + 3] = (c.value_size >> 24) & 0xFF
            data[cursor + 4] = (c.value_size >> 16) & 0xFF
            data[cursor + 5] = (c.value_size >> 8) & 0xFF
            data[cursor + 6] = c.value_size & 0xFF
            memcpy(data + cursor + 7, c.key, c.size)
            if c.value_size:
                memcpy(data + cursor + 7 + c.size, c.value, c.value_size)
            cursor += 7 + c.size + c.value_size
        return out


def changes(list keys, list values) -> Changes:
    """The changes ``keys[i] -> values[i]`` (bytes, :data:`EXTERNAL`, or None to delete),
    keys strictly ascending (checked)."""
    cdef Changes made = Changes()
    cdef Py_ssize_t i, n = len(keys)
    cdef object key, value
    cdef Change* c
    if len(values) != n:
        raise ValueError(f"{n} keys but {len(values)} values")
    made.items = <Change*>malloc((n if n else 1) * sizeof(Change))
    if made.items == NULL:
        raise MemoryError()
    made.owners = (keys, values)
    for i in range(n):
        key = keys[i]
        value = values[i]
        if not PyBytes_Check(key):
            raise TypeError(f"a key is bytes, not {type(key).__name__}")
        c = &made.items[i]
        c.key = <const unsigned char*>PyBytes_AS_STRING(key)
        c.size = PyBytes_GET_SIZE(key)
        if c.size == 0 or c.size >= MAX_KEY:
            raise ValueError(f"a key of {c.size} bytes")
        if i and _compare(made.items[i - 1].key, made.items[i - 1].size, c.key, c.size) >= 0:
            raise ValueError(f"keys are not strictly ascending at {key!r:.80}")
        c.value = NULL
        c.value_size = 0
        if value is None:
            c.kind = _DELETE
        elif value is EXTERNAL:
            c.kind = _EXTERNAL
        elif PyBytes_Check(value):
            c.kind = _SET
            c.value = <const unsigned char*>PyBytes_AS_STRING(value)
            c.value_size = PyBytes_GET_SIZE(value)
        else:
            raise TypeError(f"a value is bytes, EXTERNAL or None, not {type(value).__name__}")
        made.count = i + 1
    return made


def sorted_changes(bytes prefix, list columns, tuple order, object value) -> Changes:
    """The keys ``prefix + columns[order[0]][i] + columns[order[1]][i] + ...`` of every row
    ``i`` (each column a list of bytes, all of one length), sorted and without repeats,
    each set to ``value`` (bytes) or deleted (None): an index's keys for a batch of tuples.

    >>> made = sorted_changes(b"P", [[b"b", b"a", b"b"], [b"1", b"2", b"1"]], (1, 0), b"")
    >>> [made.key(i) for i in range(len(made))]
    [b'P1b', b'P2a']
    """
    cdef Changes made = Changes()
    cdef Py_ssize_t width = len(order)
    cdef Py_ssize_t rows = len(columns[0]) if width else 0
    cdef Py_ssize_t prefix_size = PyBytes_GET_SIZE(prefix)
    cdef Py_ssize_t total = 0, row, position, size, cursor = 0, unique = 0
    cdef list ordered = [columns[number] for number in order]
    cdef list column
    cdef object item
    cdef Span* spans
    cdef Span* scratch
    cdef int kind
    cdef const unsigned char* value_data = NULL
    cdef Py_ssize_t value_size = 0
    if value is None:
        kind = _DELETE
    elif PyBytes_Check(value):
        kind = _SET
        value_data = <const unsigned char*>PyBytes_AS_STRING(value)
        value_size = PyBytes_GET_SIZE(value)
    else:
        raise TypeError(f"a value is bytes or None, not {type(value).__name__}")
    made.owners = value
    for column in ordered:
        if len(column) != rows:
            raise ValueError(f"columns of {rows} and {len(column)} rows")
        for item in column:
            if not PyBytes_Check(item):
                raise TypeError(f"a key item is bytes, not {type(item).__name__}")
            total += PyBytes_GET_SIZE(item)
    total += prefix_size * rows
    made.arena = <char*>malloc(total if total else 1)
    spans = <Span*>malloc((rows if rows else 1) * sizeof(Span))
    made.items = <Change*>malloc((rows if rows else 1) * sizeof(Change))
    if made.arena == NULL or spans == NULL or made.items == NULL:
        free(spans)
        raise MemoryError()
    try:
        for row in range(rows):
            spans[row].data = made.arena + cursor
            memcpy(made.arena + cursor, PyBytes_AS_STRING(prefix), prefix_size)
            cursor += prefix_size
            for position in range(width):
                item = (<list>ordered[position])[row]
                size = PyBytes_GET_SIZE(item)
                memcpy(made.arena + cursor, PyBytes_AS_STRING(item), size)
                cursor += size
            spans[row].size = made.arena + cursor - spans[row].data
            if spans[row].size >= MAX_KEY:
                raise ValueError(f"a key of {spans[row].size} bytes")
        scratch = <Span*>malloc((rows if rows else 1) * sizeof(Span))
        if scratch == NULL:
            raise MemoryError()
        with nogil:
            _radix_sort(spans, scratch, rows, 0)
        free(scratch)
        for row in range(rows):
            if unique and _compare(made.items[unique - 1].key, made.items[unique - 1].size,
                                   <const unsigned char*>spans[row].data, spans[row].size) == 0:
                continue
            _set_change(&made.items[unique], spans[row], value_data, value_size, kind)
            unique += 1
        made.count = unique
        return made
    finally:
        free(spans)


def sorted_bytes(list items) -> list:
    """``sorted(items)`` for a list of bytes, by the radix sort of the keys (a fifth of
    Python's sort's time on a million records).

    >>> sorted_bytes([b"b", b"a\\x00", b"a"])
    [b'a', b'a\\x00', b'b']
    """
    cdef Py_ssize_t n = len(items), row
    cdef Span* spans = <Span*>malloc((n + 1) * sizeof(Span))
    cdef Span* scratch = <Span*>malloc((n + 1) * sizeof(Span))
    cdef list out
    cdef object item
    if spans == NULL or scratch == NULL:
        free(spans)
        free(scratch)
        raise MemoryError()
    try:
        for row in range(n):
            item = items[row]
            if not PyBytes_Check(item):
                raise TypeError(f"an item is bytes, not {type(item).__name__}")
            spans[row].data = PyBytes_AS_STRING(item)
            spans[row].size = PyBytes_GET_SIZE(item)
            spans[row].row = row
        with nogil:
            _radix_sort(spans, scratch, n, 0)
        out = [None] * n
        for row in range(n):
            out[row] = items[spans[row].row]
        return out
    finally:
        free(spans)
        free(scratch)


def pairs_changes(list keys, list values) -> Changes:
    """The changes ``keys[i] -> values[i]`` (bytes, or :data:`EXTERNAL`) in any order,
    sorted here; a key given twice takes its last value.

    >>> made = pairs_changes([b"b", b"a", b"b"], [b"1", b"2", b"3"])
    >>> made.keys(), [made.value(i) for i in range(len(made))]
    ([b'a', b'b'], [b'2', b'3'])
    """
    cdef Changes made = Changes()
    cdef Py_ssize_t n = len(keys), row, unique = 0
    cdef Span* spans
    cdef Span* scratch
    cdef object key, value
    if len(values) != n:
        raise ValueError(f"{n} keys but {len(values)} values")
    made.owners = (keys, values)
    spans = <Span*>malloc((n + 1) * sizeof(Span))
    scratch = <Span*>malloc((n + 1) * sizeof(Span))
    made.items = <Change*>malloc((n + 1) * sizeof(Change))
    if spans == NULL or scratch == NULL or made.items == NULL:
        free(spans)
        free(scratch)
        raise MemoryError()
    try:
        for row in range(n):
            key = keys[row]
            value = values[row]
            if not PyBytes_Check(key) or not (PyBytes_Check(value) or value is EXTERNAL):
                raise TypeError(f"keys and values are bytes (a value may be EXTERNAL), not {type(key).__name__} "
                                f"and {type(value).__name__}")
            spans[row].data = PyBytes_AS_STRING(key)
            spans[row].size = PyBytes_GET_SIZE(key)
            spans[row].row = row
            if spans[row].size == 0 or spans[row].size >= MAX_KEY:
                raise ValueError(f"a key of {spans[row].size} bytes")
        with nogil:
            _radix_sort(spans, scratch, n, 0)  # stable: a repeated key's rows stay in order
        for row in range(n):
            if unique and _compare(made.items[unique - 1].key, made.items[unique - 1].size,
                                   <const unsigned char*>spans[row].data, spans[row].size) == 0:
                unique -= 1  # the later row wins
            value = values[spans[row].row]
            if value is EXTERNAL:
                _set_change(&made.items[unique], spans[row], NULL, 0, _EXTERNAL)
            else:
                _set_change(&made.items[unique], spans[row], <const unsigned char*>PyBytes_AS_STRING(value),
                            PyBytes_GET_SIZE(value), _SET)
            unique += 1
        made.count = unique
        return made
    finally:
        free(spans)
        free(scratch)


def rewrite(list blocks, list keys, list values, Py_ssize_t limit, bint keep=False):
    """Merge sorted changes into adjacent blocks: ``keys`` strictly ascending, ``values[i]``
    the new value of ``keys[i]`` (bytes, :data:`EXTERNAL` for a value kept outside, or None
    to delete the key). ``blocks`` are ``(fence, block)`` pairs in key order, adjacent in
    the keyspace (none, for a new keyspace). With ``keep``, a key already present keeps
    its value (an insert of what is absent).

    Returns ``(new blocks, added, removed, dropped_external)``: the blocks that replace
    them (their fences may differ; none if every entry was deleted), how many keys were
    new, how many deletes found their key, and the keys whose external value the changes
    replaced or deleted (their outside copies must go).

    >>> first = rewrite([], [b"a", b"c"], [b"", b""], 2000)[0]
    >>> new, added, removed, _ = rewrite(first, [b"a", b"b"], [None, b"v"], 2000)
    >>> [decode(*block) for block in new], added, removed
    ([([b'b', b'c'], [b'v', b''])], 1, 1)
    """
    cdef Changes made = changes(keys, values)
    return rewrite_changes(blocks, made, 0, made.count, limit, keep)


def rewrite_changes(list blocks, Changes made, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t limit, bint keep=False):
    """:func:`rewrite` of the changes ``made[lo:hi]``."""
    cdef Merged m
    cdef Reader r
    cdef Py_ssize_t i = lo, added = 0, removed = 0, block_number = 0, n_blocks = len(blocks)
    cdef int more = 0, order
    cdef Change* c
    cdef bytes fence, block
    cdef list dropped = []
    if not 0 <= lo <= hi <= made.count:
        raise IndexError(f"changes {lo}:{hi} of {made.count}")
    if limit < 64:
        raise ValueError(f"a block limit of {limit} bytes")
    m.arena = NULL
    m.entries = NULL
    m.arena_size = m.arena_used = m.count = m.capacity = 0
    try:
        if n_blocks:
            fence, block = blocks[0]
            _start(&r, fence, block)
            more = _next(&r)
            block_number = 1
        while True:
            # the next existing entry (crossing into the next block when one ends)
            while not more and block_number < n_blocks:
                fence, block = blocks[block_number]
                if _compare(<const unsigned char*>PyBytes_AS_STRING(fence), PyBytes_GET_SIZE(fence), r.key, r.key_size) <= 0:
                    raise BlockError("blocks given out of order")
                _start(&r, fence, block)
                more = _next(&r)
                block_number += 1
            if i < hi:
                c = &made.items[i]
                order = _compare(r.key, r.key_size, c.key, c.size) if more else 1
            elif more:
                order = -1
            else:
                break
            if order < 0:  # an existing entry the changes leave alone
                _push(&m, r.key, r.key_size, r.data + r.value_at, r.value_size, r.external)
                more = _next(&r)
                continue
            if order == 0:
                if keep and c.kind != _DELETE:  # present: left as it is
                    _push(&m, r.key, r.key_size, r.data + r.value_at, r.value_size, r.external)
                    more = _next(&r)
                    i += 1
                    continue
                # the change replaces or deletes an existing entry
                if r.external:
                    dropped.append(_key(&r))
                if c.kind == _DELETE:
                    removed += 1
                more = _next(&r)
            elif c.kind != _DELETE:
                added += 1
            if c.kind != _DELETE:
                _push(&m, c.key, c.size, c.value, c.value_size, c.kind == _EXTERNAL)
            i += 1
        return _split(&m, limit), added, removed, dropped
    finally:
        free(m.arena)
        free(m.entries)


# -- runs: sorted changes written out, merged back in order -------------------------------


cdef class RunMerge:
    """The changes of several runs (each the bytes of :meth:`Changes.dump`, sorted, read
    from a file a piece at a time) merged into one ascending sequence, taken out as
    :class:`Changes` of at most ``n`` (:meth:`take`). A key in several runs is taken once,
    with the change of the latest run. O(runs) per change (a run is a chunk of a commit:
    a handful).

    >>> import io
    >>> merge = RunMerge([io.BytesIO(changes([b"a", b"c"], [b"1", b"3"]).dump()),
    ...                   io.BytesIO(changes([b"b", b"c"], [b"2", None]).dump())], 5)
    >>> made = merge.take(10)
    >>> [(made.key(i), made.value(i)) for i in range(len(made))], len(merge.take(10))
    ([(b'a', b'1'), (b'b', b'2'), (b'c', None)], 0)
    """

    cdef list files
    cdef list buffers  # each run's bytes read and not yet taken (from its offset)
    cdef Py_ssize_t* offsets
    cdef Py_ssize_t runs
    cdef Py_ssize_t piece

    def __cinit__(self, list files, Py_ssize_t piece=1 << 22):
        cdef Py_ssize_t i
        self.files = list(files)
        self.runs = len(self.files)
        self.piece = piece if piece > 0 else 1
        self.buffers = [b""] * self.runs
        self.offsets = <Py_ssize_t*>calloc(self.runs if self.runs else 1, sizeof(Py_ssize_t))
        if self.offsets == NULL:
            raise MemoryError()
        for i in range(self.runs):
            self._fill(i)

    def __dealloc__(self):
        free(self.offsets)

    cdef Py_ssize_t _record(self, Py_ssize_t i) except -2:
        """The size of run ``i``'s next whole record in its buffer (-1: none whole)."""
        cdef bytes buffer = self.buffers[i]
        cdef Py_ssize_t left = PyBytes_GET_SIZE(buffer) - self.offsets[i]
        cdef const unsigned char* data = <const unsigned char*>PyBytes_AS_STRING(buffer) + self.offsets[i]
        cdef Py_ssize_t size
        if left < 7:
            return -1
        size = 7 + ((<Py_ssize_t>data[1] << 8) | data[2]) + ((<Py_ssize_t>data[3] << 24) | (<Py_ssize_t>data[4] << 16) |
                                                             (<Py_ssize_t>data[5] << 8) | data[6])
        return size if size <= left else -1

    cdef int _fill(self, Py_ssize_t i) except -1:
        """Read run ``i`` until its buffer holds a whole record, or the run is done (its
        buffer empty); a run ending inside a record is damage."""
        cdef bytes more
        while self._record(i) < 0:
            more = self.files[i].read(self.piece)
            rest = self.buffers[i][self.offsets[i]:]
            if not more:
                if rest:
                    raise BlockError(f"a run ends inside a change ({len(rest)} bytes left)")
                self.buffers[i] = b""
                self.offsets[i] = 0
                return 0
            self.buffers[i] = rest + more
            self.offsets[i] = 0
        return 0

    def take(self, Py_ssize_t n) -> Changes:
        """The next (at most) ``n`` changes in key order (none left: an empty Changes)."""
        cdef Changes made = Changes()
        cdef Py_ssize_t capacity = 1 << 16, used = 0, count = 0, i, best, size, key_size, value_size
        cdef Py_ssize_t* key_at
        cdef const unsigned char* head
        cdef const unsigned char* best_head
        cdef Py_ssize_t best_size
        cdef char* grown
        cdef int order
        made.items = <Change*>malloc((n if n > 0 else 1) * sizeof(Change))
        made.arena = <char*>malloc(capacity)
        key_at = <Py_ssize_t*>malloc((n if n > 0 else 1) * sizeof(Py_ssize_t))
        if made.items == NULL or made.arena == NULL or key_at == NULL:
            free(key_at)
            raise MemoryError()
        try:
            while count < n:
                best = -1
                best_head = NULL
                best_size = 0
                for i in range(self.runs):
                    if PyBytes_GET_SIZE(self.buffers[i]) == 0:
                        continue  # done
                    head = <const unsigned char*>PyBytes_AS_STRING(self.buffers[i]) + self.offsets[i]
                    key_size = (<Py_ssize_t>head[1] << 8) | head[2]
                    if best >= 0:
                        order = _compare(head + 7, key_size, best_head + 7, best_size)
                        if order > 0:
                            continue
                        if order == 0:  # the same key in an earlier run: the later one wins
                            self._advance(best)
                    best = i
                    best_head = <const unsigned char*>PyBytes_AS_STRING(self.buffers[i]) + self.offsets[i]
                    best_size = key_size
                if best < 0:
                    break
                size = self._record(best)
                if used + size > capacity:
                    while used + size > capacity:
                        capacity *= 2
                    grown = <char*>realloc(made.arena, capacity)
                    if grown == NULL:
                        raise MemoryError()
                    made.arena = grown
                memcpy(made.arena + used, best_head, size)
                key_at[count] = used
                used += size
                count += 1
                self._advance(best)
            for i in range(count):  # the arena moved as it grew: point into it now
                head = <const unsigned char*>made.arena + key_at[i]
                made.items[i].kind = head[0]
                made.items[i].size = (<Py_ssize_t>head[1] << 8) | head[2]
                made.items[i].value_size = ((<Py_ssize_t>head[3] << 24) | (<Py_ssize_t>head[4] << 16) |
                                            (<Py_ssize_t>head[5] << 8) | head[6])
                made.items[i].key = head + 7
                made.items[i].value = head + 7 + made.items[i].size if made.items[i].value_size else NULL
            made.count = count
            return made
        finally:
            free(key_at)

    cdef int _advance(self, Py_ssize_t i) except -1:
        self.offsets[i] += self._record(i)
        return self._fill(i)
