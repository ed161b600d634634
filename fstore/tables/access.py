"""Where table code reads and writes its tuples: the repository's tables space
(``fstore.core.layout.TABLES``), never the quads. Reads come from a view, or the committed state
under a write transaction, and legends from anywhere in history.

A table's tuples have the shape of quads (its graph, a path, META or FEATURE, a value: see
:mod:`.mapping`) and the same versioning, but no quad read, export, diff or statistic sees
them. Reads inside a write transaction go to the head the transaction started from, through
the transaction's own LMDB transaction (never a second one), and a table writer overlays its
own pending rows on top; this keeps a row lookup O(log n) however many rows are pending.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> list(view_source(repo.at("main"))((None, fstore.Var("s"), fstore.Var("p"), fstore.Var("o"))))
[]
>>> repo.close()
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from nstore import Var

from ..core.history import Quad
from ..transaction import Transaction
from ..patterns import prepare_quad
from .dataset import Table, find_dataset, load_dataset
from .mapping import META, dataset_graph, legend_item, object_bytes
from .schema import Legend

if TYPE_CHECKING:
    from ..core.storage import Snapshot, Storage
    from ..transaction import Transaction
    from ..view import View

__all__ = ["view_source", "committed_source", "seq_source", "legend_finder", "put",
    "put_many", "remove", "tuples", "following_table", "table_at"]


def tuples(view: View, name: str) -> Iterator[Quad]:
    """Every stored tuple ``(graph, path, kind, value)`` of table ``name`` at a view: the
    files of its Kart dataset tree (meta items and legends with kind META, one feature
    blob per row with kind FEATURE)."""
    return view.table_tuples((dataset_graph(name), Var("s"), Var("p"), Var("o")))


def put(tx: Transaction, graph: Any, subject: Any, predicate: Any, obj: Any) -> None:
    """Stage a table tuple in the transaction (a no-op if already there)."""
    tx.stage_table_tuple(prepare_quad((graph, subject, predicate, obj), "table tuple"), True)


def put_many(tx: Transaction, tuples: Iterable[tuple[Any, Any, Any, Any]], *, absent: bool = False) -> None:
    """Stage many table tuples (a bulk insert); ``absent``: the caller knows none of them
    is at the head (the commit then looks none up)."""
    tx.stage_table_tuples((prepare_quad(t, "table tuple") for t in tuples), True, False if absent else None)


def remove(tx: Transaction, graph: Any, subject: Any, predicate: Any, obj: Any) -> None:
    """Stage the removal of a table tuple (a no-op if absent)."""
    tx.stage_table_tuple(prepare_quad((graph, subject, predicate, obj), "table tuple"), False)


def remove_many(tx: Transaction, tuples: Iterable[tuple[Any, Any, Any, Any]], *, held: bool = False) -> None:
    """Stage the removal of many table tuples (a bulk update's old rows); ``held``: the
    caller knows all of them are at the head (the commit then looks none up)."""
    tx.stage_table_tuples((prepare_quad(t, "table tuple") for t in tuples), False, True if held else None)


def view_source(view: View) -> Callable[[tuple], Iterator[Quad]]:
    """The quads alive at a view's commit."""
    return view.table_tuples


def committed_source(tx: Transaction) -> Callable[[tuple], Iterator[Quad]]:
    """The quads alive at the head a write transaction started from (its own intents
    excluded)."""
    return tx.committed_table_tuples


def seq_source(snapshot: Snapshot, seq: int | None) -> Callable[[tuple], Iterator[Quad]]:
    """The table tuples alive at commit ``seq``, read in ``snapshot``."""
    return snapshot.tables.reader(snapshot.tx, seq).match


def legend_finder(storage: Storage, graph: Any, otx: Callable[[], Any] | None = None) -> Callable[[str], Legend]:
    """A lookup of any legend ever written in ``graph`` (legends are named by their hash,
    so one found in any commit is the right one). ``otx`` gives the LMDB transaction to
    read in; by default a read transaction of its own is opened per lookup."""
    history = storage.tables
    cache: dict[str, Legend] = {}

    def find(name: str) -> Legend:
        legend = cache.get(name)
        if legend is not None:
            return legend
        pattern = (graph, legend_item(name), META, Var("o"))
        if otx is not None:
            found = next(iter(history.match_records(otx(), pattern)), None)
        else:
            with storage.read() as snapshot:
                found = next(iter(history.match_records(snapshot.tx, pattern)), None)
        if found is None:
            raise KeyError(name)
        legend = Legend.loads(object_bytes(found[0][3]), name=name)
        cache[name] = legend
        return legend

    return find


def following_table(current: Callable[[], Any], name: str, state: Any = None) -> Any:
    """The table ``name`` read through whatever ``current()`` is when it reads: a view, a
    view pinned by ``reading()`` or a transaction (its own writes included), so one table
    object serves every read transaction of a query; None if there is no such table.
    Its schema and legends are read once, from the readable ``current()`` gives now, unless
    ``state`` gives them (a :class:`.dataset.DatasetState` read before at the same commit).

    >>> import tempfile, fstore, fstore.tables as tables
    >>> repo = fstore.open(tempfile.mkdtemp())
    >>> with repo.transaction("main", message="add") as tx:
    ...     t = tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0}])
    ...     t.insert({"k": 1})
    >>> view = repo.at("main")
    >>> following_table(lambda: view, "t").get(1), following_table(lambda: view, "u")
    ({'k': 1}, None)
    >>> repo.close()
    """
    def source(pattern: tuple) -> Iterator[Quad]:
        return current().table_tuples(pattern)

    def chunks(graph: Any, size: int) -> Iterator[tuple[Sequence[str], list[bytes]]] | None:
        """A view's bulk read (None in a transaction: its own writes are read with the rest)."""
        chunked = getattr(current(), "table_feature_chunks", None)
        return None if chunked is None else chunked(graph, size)

    if state is None:
        state = find_dataset(source, name)
    if state is None:
        return None
    now = current()
    # A write transaction reads legends in its own LMDB transaction (a second one in the
    # same thread would wait for it); a view opens a read transaction per legend lookup.
    otx = now._require_open if isinstance(now, Transaction) else None
    return Table(source, state, legend_finder(now.repo.storage, dataset_graph(name), otx), chunks)


def table_at(view: Any, name: str) -> Table:
    """``view.table(name)``: the table at a view's commit (TableNotFoundError if none)."""
    source = view_source(view)
    where = f"at {view.ref!r}" if getattr(view, "ref", None) else ""
    return Table(source, load_dataset(source, name, where), legend_finder(view.repo.storage, dataset_graph(name)),
                 getattr(view, "table_feature_chunks", None), getattr(view, "count_table_tuples", None))
