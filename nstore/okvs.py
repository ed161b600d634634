"""An ordered key-value store (SRFI-167) over one LMDB environment.

One writer and many readers at once, across threads and processes; a reader sees one
committed state for its whole transaction. The memory map grows by itself: when a write
transaction fills it, the transaction is replayed into a larger map, so ``MapFullError``
never reaches the caller.

>>> import tempfile
>>> db = open(tempfile.mkdtemp())
>>> with db.transaction(write=True) as tx:
...     tx.set(b"a", b"1"); tx.set(b"b", b"2"); tx.set(b"c", b"3")
>>> with db.transaction() as tx:
...     list(tx.range(b"b", None))
[(b'b', b'2'), (b'c', b'3')]
>>> db.close()
"""

from __future__ import annotations

import os
import shutil
import tempfile
from bisect import bisect_left
import sys
import threading
import time
from contextlib import contextmanager
from itertools import islice, repeat
from typing import Any, Callable, Iterable, Iterator

import lmdb

from .errors import (
    CorruptStoreError,
    DataeError,
    ReadOnlyTransactionError,
    SettingError,
    StoreFileError,
    StoreWriteError,
    TransactionClosedError,
    TransactionError,
    TransactionTooLargeError,
)
from .lmdbfile import DATA_FILE, OpenLock, check_data_file

__all__ = ["open", "Okvs", "Transaction", "InvalidKeyError", "MAX_KEY_SIZE", "DEFAULT_MAP_SIZE", "MAP_SIZE_VARIABLE",
           "parse_size", "map_size_setting"]

MAX_KEY_SIZE = 511
# LMDB reserves address space, not memory or disk, for the map (the file grows with the
# data), and growing it inside a write transaction means replaying that transaction; so a
# 64-bit process asks for a map no store on one disk outgrows. Where address space is
# limited (ulimit -v) the map halves until it fits, down to MIN_MAP_SIZE or twice the
# file; DATAE_MAP_SIZE (bytes, or with K, M, G, T) or map_size= sets it instead.
DEFAULT_MAP_SIZE = (256 << 30) if sys.maxsize > 2**32 else (1 << 30)
MIN_MAP_SIZE = 1 << 30
MAP_SIZE_VARIABLE = "DATAE_MAP_SIZE"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# Writes are journalled so a transaction can be replayed into a grown map; past this many
# bytes the journal is dropped (the map is grown ahead of such transactions instead): a
# bulk load past it holds no copy of what it wrote.
JOURNAL_LIMIT = 64 << 20
SCRATCH_TABLE = b"\xff\xffokvs scratch"
"""The name a write transaction's scratch table had inside the store's file (formats up
to 6 wrote none that outlived its transaction); no key of the store is under it."""
SCRATCH_PREFIX = ".scratch-"
"""A write transaction's scratch table (:meth:`Transaction.set_many` with ``scratch=True``)
is an LMDB file of its own in ``<store>/.scratch-<pid>-<random>/``, written by one
transaction that is never committed and removed when the store's transaction ends: its
pages never enter the store's file (whose freed pages LMDB would keep), and a crash
leaves a directory that the next open of the store removes."""
SCRATCH_MAP_SIZE = 1 << 40  # address space only: the file grows by the pages written
_GROW_WAIT_SECONDS = 60.0
# What LMDB raises when the pages it reads are not what they should be.
# (A transaction that met one is invalid: its next read raises BadTxnError.)
_DAMAGE = (lmdb.CorruptedError, lmdb.PageNotFoundError, lmdb.InvalidError, lmdb.BadTxnError)


class InvalidKeyError(DataeError, ValueError):
    """A key is empty or longer than LMDB allows (511 bytes)."""


class _Environment:
    """One LMDB environment shared by every Okvs opened on the same path in this process
    (LMDB forbids opening an environment twice in one process)."""

    def __init__(self, path: str, readonly: bool, map_size: int | None) -> None:
        self.path = path
        self.readonly = readonly
        self.lock = OpenLock(path)
        try:
            self.env = self._open(map_size)
        except BaseException:
            self.lock.release()
            raise
        if not readonly:
            self.env.reader_check()  # free the reader slots of processes that died holding them
        self.users = 0
        # Transactions of this process that are open or being begun, and resizes waiting
        # for them to end; both guarded by `cond`. LMDB forbids changing the map while any
        # transaction of the process is open, so a pending resize holds back new ones
        # (else a stream of readers would starve it).
        self.active = 0
        self.resizing = 0
        self.cond = threading.Condition()
        # LMDB allows one write transaction at a time. Writers of this process queue here
        # rather than inside LMDB, where a waiting writer would count as open and block
        # the resize that the current writer needs in order to finish.
        self.write_lock = threading.Lock()
        self.writer: int | None = None  # thread id of the holder of `write_lock`

    def _open(self, map_size: int | None) -> lmdb.Environment:
        """The LMDB environment, with the map asked for (``map_size``, else the variable
        DATAE_MAP_SIZE) or the default, halved while the address space refuses it."""
        asked = map_size or map_size_setting()
        size = asked or DEFAULT_MAP_SIZE
        data = os.path.join(self.path, DATA_FILE)
        floor = max(MIN_MAP_SIZE, 2 * os.path.getsize(data) if os.path.exists(data) else 0)
        while True:
            try:
                return lmdb.open(self.path, map_size=size, subdir=True, readonly=self.readonly, create=not self.readonly,
                                 max_dbs=1, max_readers=512, readahead=False, lock=True)
            except lmdb.MemoryError as exc:
                if asked or size // 2 < floor:
                    raise StoreFileError(f"cannot map the store at {self.path}: {size:,} bytes of address space are not "
                                         f"available ({exc}); set a smaller map with --map-size or {MAP_SIZE_VARIABLE}") from None
                size //= 2
            except lmdb.Error as exc:
                raise StoreFileError(f"cannot open the store at {self.path}: {exc}") from None

    def acquire_writer(self) -> None:
        if self.writer == threading.get_ident():
            raise TransactionError(f"this thread already has a write transaction open on {self.path}")
        self.write_lock.acquire()
        self.writer = threading.get_ident()

    def release_writer(self) -> None:
        self.writer = None
        self.write_lock.release()

    def begin(self, write: bool) -> lmdb.Transaction:
        while True:
            # Count the transaction before LMDB starts it, so no resize can run under it.
            with self.cond:
                while self.resizing:
                    self.cond.wait()
                self.active += 1
            try:
                return self.env.begin(write=write)
            except lmdb.MapResizedError:
                # Another process grew the map: adopt its size and try again.
                self.end()
                self._resize(lambda size: 0)
            except BaseException:
                self.end()
                raise

    def end(self) -> None:
        with self.cond:
            self.active -= 1
            self.cond.notify_all()

    def used_bytes(self) -> int:
        info = self.env.info()
        return (info["last_pgno"] + 1) * self.env.stat()["psize"]

    def grow(self, at_least: int, *, wait: bool = True) -> None:
        """Double the map until it exceeds ``at_least``. No transaction of this process may
        be open while LMDB changes the map, so wait for them to end (or, with
        ``wait=False``, leave the map as it is if any is open)."""
        def doubled(size: int) -> int:
            while size <= at_least:
                size *= 2
            return size

        self._resize(doubled, wait=wait)

    @contextmanager
    def holding_back(self) -> Iterator[None]:
        """New transactions of this process wait until the block ends (a resize is due)."""
        with self.cond:
            self.resizing += 1
        try:
            yield
        finally:
            with self.cond:
                self.resizing -= 1
                self.cond.notify_all()

    def _resize(self, new_size: Callable[[int], int], *, wait: bool = True) -> None:
        """Set the map to ``new_size(current size)`` (0: adopt the size on disk) once no
        transaction of this process is open, holding back new ones meanwhile."""
        with self.cond:
            if self.active and not wait:
                return
            self.resizing += 1
            try:
                deadline = time.monotonic() + _GROW_WAIT_SECONDS
                while self.active:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TransactionError(
                            f"cannot grow the map of {self.path}: {self.active} transaction(s) "
                            f"of this process stayed open for {_GROW_WAIT_SECONDS:.0f}s"
                        )
                    self.cond.wait(remaining)
                self.env.set_mapsize(new_size(self.env.info()["map_size"]))
            finally:
                self.resizing -= 1
                self.cond.notify_all()


_registry: dict[str, _Environment] = {}
_registry_lock = threading.Lock()


def parse_size(text: str, what: str = MAP_SIZE_VARIABLE) -> int:
    """Bytes from ``"4294967296"``, ``"512M"`` or ``"64G"`` (powers of 1024).

    >>> parse_size("64G"), parse_size("4294967296")
    (68719476736, 4294967296)
    """
    cleaned = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = cleaned[-1:] if cleaned[-1:] in _UNITS else ""
    number = cleaned[: len(cleaned) - len(unit)]
    try:
        size = int(float(number) * _UNITS[unit])
    except ValueError:
        raise SettingError(f"{what}: {text!r} is not a size (bytes, or a number with K, M, G or T)") from None
    if size < 1 << 20:
        raise SettingError(f"{what}: {text!r} is less than 1 MiB")
    return size


def map_size_setting() -> int | None:
    """The map size DATAE_MAP_SIZE asks for, if set."""
    text = os.environ.get(MAP_SIZE_VARIABLE)
    return parse_size(text) if text else None


def open(path: str | os.PathLike, *, readonly: bool = False, map_size: int | None = None) -> Okvs:
    """Open (creating it unless ``readonly``) the store in directory ``path``.

    ``map_size`` is the initial size of the memory map in bytes; it grows when full.
    """
    return Okvs(path, readonly=readonly, map_size=map_size)


class _Scratch:
    """A write transaction's scratch table (see :data:`SCRATCH_PREFIX`)."""

    def __init__(self, store: str) -> None:
        self.path = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=store)
        try:
            self.env = lmdb.open(self.path, map_size=SCRATCH_MAP_SIZE, subdir=True, lock=False, sync=False,
                                 metasync=False, readahead=False, max_dbs=0)
            self.txn = self.env.begin(write=True)
        except lmdb.Error as exc:
            shutil.rmtree(self.path, ignore_errors=True)
            raise StoreWriteError(f"cannot make a scratch file in {store}: {exc}") from None

    def close(self) -> None:
        try:
            self.txn.abort()
            self.env.close()
        finally:
            shutil.rmtree(self.path, ignore_errors=True)


def remove_stale_scratch(store: str) -> None:
    """Remove the scratch directories of processes that are gone (a crash mid-transaction)."""
    try:
        names = os.listdir(store)
    except OSError:
        return
    for name in names:
        if not name.startswith(SCRATCH_PREFIX):
            continue
        try:
            pid = int(name[len(SCRATCH_PREFIX):].split("-", 1)[0])
        except ValueError:
            continue
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(os.path.join(store, name), ignore_errors=True)
        except OSError:  # alive, another user's: leave it
            pass


class Okvs:
    """An ordered mapping of bytes to bytes with ACID transactions (see :func:`open`)."""

    def __init__(self, path: str | os.PathLike, *, readonly: bool = False, map_size: int | None = None) -> None:
        path = os.fspath(path)
        if not readonly:
            os.makedirs(path, exist_ok=True)
        elif not os.path.isdir(path):
            raise FileNotFoundError(f"no datae store at {path}")
        real = os.path.realpath(path)
        with _registry_lock:
            shared = _registry.get(real)
            if shared is None:
                check_data_file(os.path.join(real, DATA_FILE))
                shared = _Environment(real, readonly, map_size)
                _registry[real] = shared
            elif shared.readonly and not readonly:
                raise TransactionError(f"{path} is already open read-only in this process")
            shared.users += 1
        self._shared: _Environment | None = shared
        self.path = path
        self.readonly = readonly
        if not readonly:
            remove_stale_scratch(real)

    def transaction(self, write: bool = False) -> Transaction:
        """A transaction; as a context manager it commits on normal exit, aborts on error."""
        shared = self._require_open()
        if write and self.readonly:
            raise ReadOnlyTransactionError(f"{self.path} was opened read-only: no write transaction")
        return Transaction(shared, write)

    def copy_to(self, directory: str | os.PathLike) -> None:
        """Write a consistent copy of the store (its state at one read transaction, free
        pages left out) into ``directory``, which must exist and be empty."""
        try:
            self._require_open().env.copy(os.fspath(directory), compact=True)
        except lmdb.Error as exc:
            raise StoreWriteError(f"cannot copy the store at {self.path} to {directory}: {exc}") from None

    def copy_to_fd(self, fd: int) -> None:
        """Write the same consistent copy as :meth:`copy_to` to the open file descriptor
        ``fd`` (a file, a pipe, a socket) as one stream of bytes: a whole ``data.mdb``."""
        try:
            self._require_open().env.copyfd(fd, compact=True)
        except lmdb.Error as exc:
            raise StoreWriteError(f"cannot copy the store at {self.path}: {exc}") from None

    def live_bytes(self) -> int:
        """The bytes of the pages the store's keys use, and its two meta pages (the file
        may hold more: LMDB never shrinks it; compaction gives the rest back)."""
        stat = self._require_open().env.stat()
        return (stat["branch_pages"] + stat["leaf_pages"] + stat["overflow_pages"] + 2) * stat["psize"]

    @property
    def map_size(self) -> int:
        return self._require_open().env.info()["map_size"]

    def _require_open(self) -> _Environment:
        if self._shared is None:
            raise TransactionError(f"the store at {self.path} is closed")
        return self._shared

    def close(self) -> None:
        """Release this handle; the environment closes when its last handle does."""
        shared, self._shared = self._shared, None
        if shared is None:
            return
        with _registry_lock:
            shared.users -= 1
            if shared.users == 0:
                del _registry[shared.path]
                shared.env.close()
                shared.lock.release()

    def __enter__(self) -> Okvs:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._shared is None else ("read-only" if self.readonly else "read-write")
        return f"<Okvs {self.path!r} {state}>"


def _check_key(key: bytes) -> bytes:
    if type(key) is not bytes:
        if not isinstance(key, (bytearray, memoryview)):
            raise TypeError(f"okvs keys are bytes, not {type(key).__name__}")
        key = bytes(key)  # and check its length like any other key
    if not key or len(key) > MAX_KEY_SIZE:
        raise InvalidKeyError(f"okvs key of {len(key)} bytes: keys hold 1 to {MAX_KEY_SIZE} bytes ({key[:32]!r}...)")
    return key


class Transaction:
    """A read or write transaction; obtain one from :meth:`Okvs.transaction`.

    Iterators from :meth:`range` and :meth:`prefix` are valid only while it is open.
    """

    def __init__(self, shared: _Environment, write: bool) -> None:
        self._shared = shared
        self.write = write
        self._txn: lmdb.Transaction | None = None
        self._holds_writer = False
        if write:
            shared.acquire_writer()
            self._holds_writer = True
            try:
                used = shared.used_bytes()
                if used * 2 > shared.env.info()["map_size"]:
                    shared.grow(used * 2, wait=False)
                self._txn = shared.begin(write)
            except BaseException:
                self._holds_writer = False
                shared.release_writer()
                raise
        else:
            self._txn = shared.begin(write)
        self._on_commit: list[Callable[[], None]] = []
        self._generation = 0  # bumped when the transaction is replayed into a grown map
        self._journal: list[tuple] | None = [] if write else None
        self._journal_bytes = 0
        self._base_id = self._txn.id()
        self._seek_cursor: lmdb.Cursor | None = None
        self._seek_generation = -1
        self._scratch: _Scratch | None = None  # the scratch table, once this transaction made it

    # -- life cycle -----------------------------------------------------------------

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._txn is None:
            return
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def commit(self) -> None:
        txn = self._require_open()
        self.drop_scratch()  # none of it is ever committed
        try:
            txn.commit()
        except lmdb.MapFullError:
            self._replay_grown()
            self._txn.commit()
        except lmdb.Error as exc:  # a full disk, an I/O error: nothing of it was committed
            raise StoreWriteError(f"cannot commit to the store at {self._shared.path}: {exc}; "
                                  "it holds its last committed state") from None
        finally:
            self._close()
        hooks, self._on_commit = self._on_commit, []
        for hook in hooks:
            hook()

    def on_commit(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` once this transaction has committed (never if it aborts): for
        caches that may only learn what is durable."""
        self._require_open()
        self._on_commit.append(hook)

    def abort(self) -> None:
        txn = self._require_open()
        txn.abort()
        self._close()

    def _end_txn(self) -> None:
        """Stop counting the (finished) LMDB transaction, so the map can be resized."""
        if self._txn is not None:
            self._txn = None
            self._seek_cursor = None
            self._shared.end()

    def _close(self) -> None:
        self.drop_scratch()
        self._end_txn()
        self._journal = None
        if self._holds_writer:
            self._holds_writer = False
            self._shared.release_writer()

    @property
    def closed(self) -> bool:
        return self._txn is None

    def tree_problems(self) -> list[str] | None:
        """Each way the LMDB B-trees of the state this read transaction sees break what
        LMDB's searches rely on (:func:`nstore.btree.tree_problems`; O(pages)): what a scan
        of every key cannot see. Writes that commit during the walk change nothing (this
        transaction keeps its pages). None if, when it is called, that state is no longer
        the file's newest or the one before it (two writes committed since this
        transaction began, so its meta page is gone, or it was caught being rewritten):
        ask a newer transaction."""
        if self.write:
            raise TransactionError("tree_problems reads a committed state: use a read transaction")
        # imported here, not with the module: only verify walks the trees, and the walker
        # (mmap, dataclasses) is a cost every store open would pay otherwise
        from .btree import tree_problems

        txn = self._require_open()
        return tree_problems(os.path.join(self._shared.path, DATA_FILE), txn.id(), txn.stat())

    def _require_open(self) -> lmdb.Transaction:
        if self._txn is None:
            raise TransactionClosedError("the transaction is already committed or aborted")
        return self._txn

    def _require_write(self, op: str, key: bytes) -> lmdb.Transaction:
        txn = self._require_open()
        if not self.write:
            raise ReadOnlyTransactionError(f"{op}({key!r:.60}) inside a read-only transaction")
        return txn

    # -- growth ---------------------------------------------------------------------

    def _log(self, entry: tuple, size: int) -> None:
        self._journal_bytes += size  # counted past the limit too: it sizes the growth
        if self._journal is None:
            return
        if self._journal_bytes > JOURNAL_LIMIT:
            self._journal = None
        else:
            self._journal.append(entry)

    def _replay_grown(self) -> None:
        """The map filled: abort, grow the map, and redo this transaction's writes."""
        journal = self._journal
        try:
            # Hold back new transactions before aborting: py-lmdb serialises every call
            # on one lock, and a stream of readers can starve this abort for seconds.
            with self._shared.holding_back():
                self._txn.abort()
                # Uncount it: the map cannot be resized while it counts as open. Keep the
                # write lock, so no writer of this process commits in between.
                self._end_txn()
                map_size = self._shared.env.info()["map_size"]
                if journal is None:
                    # Grow enough for a rerun to fit, as the message promises.
                    self._shared.grow(map_size + 2 * self._journal_bytes)
                    raise TransactionTooLargeError(
                        f"a write transaction of more than {JOURNAL_LIMIT >> 20} MiB filled the map "
                        f"of {self._shared.path}; it was aborted and the map grown: run it again"
                    )
                self._shared.grow(map_size)
            self._txn = self._shared.begin(True)
        except BaseException:
            self._close()
            raise
        self._generation += 1
        if self._txn.id() != self._base_id:
            self._txn.abort()
            self._close()
            raise TransactionError("another process committed while this transaction was replayed")
        for entry in journal:
            try:
                self._apply(entry)
            except lmdb.MapFullError:
                return self._replay_grown()

    def _apply(self, entry: tuple) -> None:
        op = entry[0]
        if op == "set":
            self._txn.put(entry[1], entry[2])
        elif op == "delete":
            self._txn.delete(entry[1])
        elif op == "many":
            self._put_many(entry[1], entry[2])
        else:
            self._remove_range(entry[1], entry[2])

    def _scratch_txn(self, create: bool) -> lmdb.Transaction | None:
        """The scratch table's LMDB transaction (None if this transaction has none and
        ``create`` is false)."""
        if self._scratch is None and create:
            self._require_open()
            self._scratch = _Scratch(self._shared.path)
        return None if self._scratch is None else self._scratch.txn

    def drop_scratch(self) -> None:
        """End the scratch table: its transaction aborted, its file removed."""
        if self._scratch is not None:
            scratch, self._scratch = self._scratch, None
            scratch.close()

    def _write(self, entry: tuple, size: int) -> None:
        # Journal a write only once LMDB took it (or ran out of map for it): a rejected
        # write must not be replayed, or the replay would fail on it again.
        try:
            self._apply(entry)
        except lmdb.MapFullError:
            self._log(entry, size)
            self._replay_grown()
        except (lmdb.BadValsizeError, TypeError) as exc:
            raise InvalidKeyError(f"okvs rejected a key or value: {exc}") from None
        else:
            self._log(entry, size)

    # -- reads ----------------------------------------------------------------------

    def get(self, key: bytes, default: bytes | None = None, *, scratch: bool = False) -> bytes | None:
        """The value at ``key``, or ``default`` (with ``scratch``: in the scratch table)."""
        txn = self._require_open()
        try:
            if scratch:
                scratch_txn = self._scratch_txn(False)
                return default if scratch_txn is None else scratch_txn.get(_check_key(key), default)
            return txn.get(_check_key(key), default)
        except _DAMAGE as exc:
            raise self._damaged(exc) from None

    def get_many(self, keys: Iterable[bytes]) -> list[bytes | None]:
        """The values at many keys (None where absent), in one loop: for bulk reads of keys
        the store made itself (their length is not checked again)."""
        txn = self._require_open()
        get = txn.get
        try:
            return [get(key) for key in keys]
        except _DAMAGE as exc:
            raise self._damaged(exc) from None

    def _damaged(self, exc: lmdb.Error) -> CorruptStoreError:
        return CorruptStoreError(f"the store at {self._shared.path} is damaged: LMDB says {exc}")

    def range(
        self,
        start: bytes | None = None,
        end: bytes | None = None,
        *,
        reverse: bool = False,
        offset: int = 0,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """Yield ``(key, value)`` for ``start <= key < end`` in key order (or reversed).

        Either bound may be None (open); ``offset`` skips that many pairs first and
        ``limit`` stops after that many.
        """
        self._require_open()
        if offset < 0 or (limit is not None and limit < 0):
            raise ValueError(f"offset and limit must be >= 0, not {offset}, {limit}")
        if not self.write and not reverse and not offset and limit is None:
            return self._scan_forward(start, end)
        return self._scan(start, end, reverse, offset, limit)

    def _scan_forward(self, start: bytes | None, end: bytes | None) -> Iterator[tuple[bytes, bytes]]:
        """The common read: forward, no offset or limit. A read transaction is never
        replayed into a grown map, so the cursor stays valid while the transaction is open."""
        if start is not None and end is not None and start >= end:
            return
        try:
            cursor = self._require_open().cursor()
            if not (cursor.set_range(start) if start is not None else cursor.first()):
                return
            for key, value in cursor.iternext():
                if end is not None and key >= end:
                    return
                yield key, value
        except lmdb.Error as exc:
            if self._txn is None:
                raise TransactionClosedError("iterator used after its transaction ended") from None
            if isinstance(exc, _DAMAGE):
                raise self._damaged(exc) from None
            raise

    def _scan(self, start, end, reverse, offset, limit) -> Iterator[tuple[bytes, bytes]]:
        if limit == 0 or (start is not None and end is not None and start >= end):
            return
        remaining = limit
        generation = -1
        last: bytes | None = None
        try:
            while True:
                txn = self._require_open()
                if generation != self._generation:
                    generation = self._generation
                    cursor = txn.cursor()
                    if last is None:
                        positioned = self._first(cursor, start, end, reverse)
                    else:  # replayed into a grown map: continue after the last key yielded
                        positioned = self._first(cursor, last, None, False) if not reverse else self._first(cursor, None, last, True)
                        if positioned and cursor.key() == last:
                            positioned = cursor.prev() if reverse else cursor.next()
                    if not positioned:
                        return
                key = cursor.key()
                if reverse:
                    if start is not None and key < start:
                        return
                elif end is not None and key >= end:
                    return
                if offset:
                    offset -= 1
                else:
                    last = key
                    yield key, cursor.value()
                    if remaining is not None:
                        remaining -= 1
                        if remaining == 0:
                            return
                    if self._txn is None:
                        raise TransactionClosedError("iterator used after its transaction ended")
                    if generation != self._generation:
                        continue
                if not (cursor.prev() if reverse else cursor.next()):
                    return
        except _DAMAGE as exc:
            raise self._damaged(exc) from None

    @staticmethod
    def _first(cursor: lmdb.Cursor, start, end, reverse) -> bool:
        if not reverse:
            return cursor.set_range(start) if start is not None else cursor.first()
        if end is None:
            return cursor.last()
        if cursor.set_range(end):
            return cursor.prev()
        return cursor.last()

    def floor(self, key: bytes, low: bytes) -> tuple[bytes, bytes] | None:
        """The pair with the greatest key ``k`` such that ``low <= k <= key``, or None: where
        a keyspace of blocks (:mod:`nstore.blocks`) finds the block that holds ``key``."""
        cursor = self._cursor()
        try:
            if cursor.set_range(key):
                found = cursor.key()
                if found == key:
                    return found, cursor.value()
                if not cursor.prev():
                    return None
            elif not cursor.last():
                return None
            found = cursor.key()
            return (found, cursor.value()) if found >= low else None
        except _DAMAGE as exc:
            raise self._damaged(exc) from None

    def floor_and_next(self, key: bytes, low: bytes, high: bytes | None) -> tuple[bytes, bytes, bytes | None] | None:
        """:meth:`floor` and the key after it (below ``high``, else None), in one walk of
        the cursor and without copying that next value: a keyspace of blocks reads a block
        and where the next one starts."""
        cursor = self._cursor()
        try:
            if cursor.set_range(key):
                if cursor.key() != key and not cursor.prev():
                    return None
            elif not cursor.last():
                return None
            found = cursor.key()
            if found < low:
                return None
            value = cursor.value()
            following = cursor.key() if cursor.next() else None
            return found, value, (following if following is not None and (high is None or following < high) else None)
        except _DAMAGE as exc:
            raise self._damaged(exc) from None

    def after(self, key: bytes, high: bytes | None) -> tuple[bytes, bytes] | None:
        """The pair with the least key ``k`` such that ``key < k < high`` (None: no upper
        bound), or None."""
        cursor = self._cursor()
        try:
            if not cursor.set_range(key):
                return None
            found = cursor.key()
            if found == key:
                if not cursor.next():
                    return None
                found = cursor.key()
            return (found, cursor.value()) if high is None or found < high else None
        except _DAMAGE as exc:
            raise self._damaged(exc) from None

    def seek_cursor(self) -> lmdb.Cursor:
        """The transaction's cursor for point seeks (:meth:`floor`, :meth:`after`), for a
        compiled reader that seeks itself (``nstore._blocks.block_keys``); valid until
        the transaction writes."""
        return self._cursor()

    def _cursor(self) -> lmdb.Cursor:
        """One cursor per transaction for point seeks, made again after a replay into a
        grown map (which invalidates the old one)."""
        txn = self._require_open()
        if self._seek_generation != self._generation:
            self._seek_cursor = txn.cursor()
            self._seek_generation = self._generation
        return self._seek_cursor

    def batch(self, start: bytes, end: bytes | None, limit: int, *, scratch: bool = False) -> list[tuple[bytes, bytes]]:
        """The first ``limit`` pairs of ``[start, end)`` as a list, read by one cursor walk in
        py-lmdb's C loop (:meth:`range` checks a write transaction's generation at every
        pair; nothing can be written while this list is made). With ``scratch``: of the
        scratch table."""
        if scratch:
            scratch_txn = self._scratch_txn(False)
            if scratch_txn is None:
                return []
            cursor = scratch_txn.cursor()
        else:
            cursor = self._cursor()
        try:
            if not cursor.set_range(start):
                return []
            pairs = list(islice(cursor.iternext(), limit))
        except _DAMAGE as exc:
            raise self._damaged(exc) from None
        if end is not None and pairs and pairs[-1][0] >= end:
            pairs = pairs[:bisect_left(pairs, (end,))]
        return pairs

    def prefix(self, prefix: bytes, **options) -> Iterator[tuple[bytes, bytes]]:
        """Like :meth:`range` over every key that starts with ``prefix``."""
        return self.range(prefix or None, prefix_end(prefix), **options)

    # -- writes ---------------------------------------------------------------------

    def set(self, key: bytes, value: bytes) -> None:
        """Map ``key`` to ``value``, replacing any previous value."""
        self._require_write("set", key)
        key = _check_key(key)
        if type(value) is not bytes:
            if not isinstance(value, (bytearray, memoryview)):
                raise TypeError(f"okvs values are bytes, not {type(value).__name__}")
            value = bytes(value)
        self._write(("set", key, value), len(key) + len(value))

    def set_many(
        self,
        items: Iterable[tuple[bytes, bytes]] | Iterable[bytes],
        *,
        ascending: bool = False,
        value: bytes | None = None,
        scratch: bool = False,
    ) -> None:
        """Set many pairs at once. With ``value`` given, ``items`` are keys only, each
        mapped to ``value`` (no pair is built per key). With ``ascending=True`` the caller
        promises the keys come in strictly ascending order; if they also sort after every
        stored key, LMDB appends pages instead of searching for them (the bulk-load fast
        path), and a key out of order raises InvalidKeyError. With ``scratch``, into the
        transaction's scratch table (:data:`SCRATCH_TABLE`; read by :meth:`get`, :meth:`batch`
        with ``scratch``, gone when the transaction ends)."""
        self._require_write("set_many", b"")
        if value is None:
            batch = items if isinstance(items, list) else list(items)
            if batch and scratch:
                self._put_scratch(batch, ascending)
            elif batch:
                first_key, first_value = batch[0]
                self._write(("many", batch, ascending), len(batch) * (len(first_key) + len(first_value) + 16))
            return
        if type(value) is not bytes:
            if not isinstance(value, (bytearray, memoryview)):
                raise TypeError(f"okvs values are bytes, not {type(value).__name__}")
            value = bytes(value)
        keys = items if isinstance(items, list) else list(items)
        if keys and scratch:
            self._put_scratch((keys, value), ascending)
        elif keys:
            # A (keys, value) tuple is the journal entry; _put_many pairs them lazily.
            self._write(("many", (keys, value), ascending), len(keys) * (len(keys[0]) + len(value) + 16))

    def _put_scratch(self, batch: list[tuple[bytes, bytes]] | tuple[list[bytes], bytes], ascending: bool) -> None:
        # Not journaled: a replay into a grown map leaves the scratch file as it is.
        try:
            self._put_many(batch, ascending, self._scratch_txn(True))
        except (lmdb.BadValsizeError, TypeError) as exc:
            raise InvalidKeyError(f"okvs rejected a key or value: {exc}") from None

    def _put_many(self, batch: list[tuple[bytes, bytes]] | tuple[list[bytes], bytes], ascending: bool,
                  txn: lmdb.Transaction | None = None) -> None:
        if type(batch) is tuple:
            keys, value = batch
            first = keys[0]
            pairs: Iterable[tuple[bytes, bytes]] = zip(keys, repeat(value))
        else:
            first = batch[0][0]
            pairs = batch
        with (txn if txn is not None else self._txn).cursor() as cursor:
            append = ascending and not cursor.set_range(first)
            # With append=True LMDB refuses (and py-lmdb silently skips) a key that does
            # not sort after the last one: count them rather than lose them unnoticed.
            consumed, added = cursor.putmulti(pairs, overwrite=True, append=append)
        if added != consumed:
            raise InvalidKeyError(
                f"set_many(ascending=True) got {consumed - added} key(s) out of order; "
                "the transaction holds a partial write and should be aborted"
            )

    def delete(self, key: bytes, *, scratch: bool = False) -> None:
        """Remove ``key`` if present (with ``scratch``: from the scratch table)."""
        self._require_write("delete", key)
        if scratch:
            scratch_txn = self._scratch_txn(False)
            if scratch_txn is not None:
                scratch_txn.delete(_check_key(key))
            return
        self._write(("delete", _check_key(key)), len(key))

    def remove_range(self, start: bytes | None, end: bytes | None) -> None:
        """Remove every key with ``start <= key < end`` (either bound may be None)."""
        self._require_write("remove_range", start or b"")
        self._write(("range", start, end), len(start or b"") + len(end or b""))

    def _remove_range(self, start, end) -> None:
        with self._txn.cursor() as cursor:
            found = cursor.set_range(start) if start is not None else cursor.first()
            while found:
                if end is not None and cursor.key() >= end:
                    break
                found = cursor.delete()

    def __repr__(self) -> str:
        mode = "write" if self.write else "read"
        return f"<okvs.Transaction {mode}{' closed' if self.closed else ''}>"


def prefix_end(prefix: bytes) -> bytes | None:
    """The first key after every key starting with ``prefix`` (None: no such key)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes((stripped[-1] + 1,))
