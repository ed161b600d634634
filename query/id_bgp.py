"""Basic graph patterns evaluated on ids: the store's key items, not RDF terms.

A source that offers ``ids()`` (fstore's, inside ``reading()``: :class:`fstore.query_source.
ItemReads`) lets a BGP run on the items its keys hold: a row is a list with one item per
variable of the BGP, a step's lookup takes the items of its bound variables as they came
out of an earlier read (no term is encoded back into the dictionary for it), a hash join's
table is keyed by items, and terms are decoded only for a step's filters and for the
solutions the BGP gives out. Equal items are the same stored term, so joining on items is
joining on terms.

The steps are the planner's (:class:`query.planner.Step`), in its order, and adaptive as
the executor's term-level steps are (see :mod:`query.executor`): a lookup step may read
its whole pattern alongside its lookups and switch to probing a hash table of it. A BGP
whose graph is a variable or a table graph, or a source without ``ids()``, is evaluated on
terms by the executor.

>>> import tempfile, fstore
>>> from query import execute
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="m") as tx:
...     for who, age in (("a", 30), ("b", 41)):
...         fstore.add(tx, None, fstore.IRI("urn:" + who), fstore.IRI("urn:age"), age)
>>> [r["who"] for r in execute(repo.at("main"), "SELECT ?who { ?who <urn:age> ?n FILTER(?n > 40) }")]
[IRI('urn:b')]
>>> repo.close()
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from fstore import Param

from .algebra import Var, expr_vars
from .expressions import filter_passes
from .limits import VALUE_OVERHEAD

__all__ = ["ItemStep", "bgp_layout", "item_row_size", "run_steps"]

Row = list  # one key item (bytes) per variable of the BGP, None while unbound


def item_row_size(row: Row) -> int:
    """The bytes a row of items is counted as holding (as :func:`query.limits.row_size`
    counts a solution's values)."""
    return VALUE_OVERHEAD * len(row) + sum(len(item) for item in row if item is not None)


def bgp_layout(steps: list) -> tuple[str, ...]:
    """The variables of a BGP's steps, in order of first appearance: the row's slots."""
    names: dict[str, None] = {}
    for step in steps:
        for item in (step.triple.s, step.triple.p, step.triple.o):
            if type(item) is Var:
                names.setdefault(item.name, None)
    return tuple(names)


class ItemStep:
    """One step of a BGP on items, planned for the slots bound before it.

    ``read(row)`` gives the matches of the step's pattern with the row's bound items put
    in: each a list of items at ``positions`` (0-based quad positions); ``fill`` says
    which slot each of those items goes to (the bound ones are left out). ``filters`` are
    compiled expressions that need the row as terms."""

    __slots__ = ("read", "fill", "params", "filters", "needs")

    def __init__(self, ids: Any, step: Any, graph: Any, slots: dict[str, int], bound: frozenset[int],
                 filters: list) -> None:
        triple = step.triple
        mentioned: set[str] = set()
        for expr, _ in step.filters:
            mentioned |= expr_vars(expr)
        # The variables the filters read, as (name, slot): the only ones decoded for them.
        self.needs = [(name, slot) for name, slot in slots.items() if name in mentioned]
        pattern: list = [graph]
        self.params: list[int] = []  # the slots whose items a lookup takes, in pattern order
        for item in (triple.s, triple.p, triple.o):
            if type(item) is Var and slots[item.name] in bound:
                pattern.append(Param())
                self.params.append(slots[item.name])
            else:
                pattern.append(item)
        self.filters = filters
        if self.params:
            positions, run = ids.prepare(tuple(pattern))
            params = self.params
            if len(params) == 1:
                (only,) = params
                self.read: Callable[[Row], Iterable[list]] = lambda row: run((row[only],))
            else:
                self.read = lambda row: run([row[i] for i in params])
        else:
            positions, scan = ids.scan(tuple(pattern), step.object_range)
            rows_once = [scan]  # the first row reads the scan made for planning it

            def read(row: Row) -> Iterable[list]:
                if rows_once:
                    return rows_once.pop()
                return ids.scan(tuple(pattern), step.object_range)[1]

            self.read = read
        self.fill = _fill(positions, pattern, slots)

    def adaptive_scan(self, ids: Any, step: Any, graph: Any, slots: dict[str, int], state: Any) -> Iterator[list]:
        """The scan an adaptive step's ``state`` reads to switch to a hash join: the rows
        of the step's pattern with only its constants bound, made when first read (most
        steps never switch). It then sets ``state.keys`` (the indices of the lookup items
        in a scan row, the table's key) and ``state.fill`` (where the others go)."""
        triple = step.triple
        pattern = (graph, triple.s, triple.p, triple.o)
        positions, rows = ids.scan(pattern, None)
        at = {position: index for index, position in enumerate(positions)}
        by_slot = {slots[item.name]: at[position] for position, item in enumerate(pattern)
                   if type(item) is Var and position in at}
        state.keys = tuple(by_slot[slot] for slot in self.params)
        state.fill = [(index, slot) for slot, index in by_slot.items() if slot not in self.params]
        yield from rows


def _fill(positions: tuple[int, ...], pattern: list, slots: dict[str, int]) -> list[tuple[int, int]]:
    """(index in a read's row, slot) for each variable a read binds."""
    return [(index, slots[pattern[position].name]) for index, position in enumerate(positions)
            if type(pattern[position]) is Var]


def run_steps(steps: list[ItemStep], states: list[Any], start: Row, decode: Callable[[bytes], Any],
              hint: dict) -> Iterator[Row]:
    """The rows of a BGP's steps from the row ``start`` (the hint's items in place):
    each step extends each row of the one before with the matches of its pattern, read
    by lookup, by scan, or (``states[i]``, an adaptive step's state, see
    :meth:`ItemStep.adaptive_scan`) from its hash table."""
    stream: Iterable[Row] = (start,)
    for step, state in zip(steps, states):
        stream = _step_rows(step, state, stream, decode, hint)
    return iter(stream)


def _step_rows(step: ItemStep, state: Any, stream: Iterable[Row], decode: Callable[[bytes], Any],
               hint: dict) -> Iterator[Row]:
    read, fill, filters, needs, params = step.read, step.fill, step.filters, step.needs, step.params
    single = len(params) == 1
    for row in stream:
        table = None
        if state is not None and (state.table is not None or state.lookup()):
            table = state.table
        if table is not None:
            key = row[params[0]] if single else tuple([row[i] for i in params])
            matches: Iterable[list] = table.get(key, ())
            places = state.fill
        else:
            matches = read(row)
            places = fill
        for found in matches:
            new = row.copy()
            for index, slot in places:
                new[slot] = found[index]
            if filters:
                solution = hint.copy()
                for name, slot in needs:
                    item = new[slot]
                    if item is not None:
                        solution[name] = decode(item)
                for f in filters:
                    if not filter_passes(f, solution):
                        break
                else:
                    yield new
            else:
                yield new

