"""Read-only views of the store as it was at one commit.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="first") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), 1)
>>> view = repo.at("main")
>>> fstore.ask(view, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), 1)
True
>>> repo.close()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Sequence

from nstore import Var
from nstore.errors import PatternError

from .history import Quad
from .values import ALREADY_CANONICAL as _CANONICAL
from .values import check_value

if TYPE_CHECKING:
    from .repository import Repository

__all__ = ["View", "prepare_pattern", "prepare_quad"]


def prepare_quad(values: Sequence[Any], what: str = "quad") -> Quad:
    """Check a quad's arity and put each value in canonical form (typed errors otherwise)."""
    if len(values) != 4:
        raise PatternError(f"a {what} has 4 items (graph, subject, predicate, object), not {len(values)}: {tuple(values)!r:.200}")
    g, s, p, o = values
    if type(g) in _CANONICAL and type(s) in _CANONICAL and type(p) in _CANONICAL and type(o) in _CANONICAL:
        return (g, s, p, o)  # the common case, without a call per value
    names = ("graph", "subject", "predicate", "object")
    return tuple(check_value(v, f"{what} {name}") for v, name in zip(values, names))  # type: ignore[return-value]


def prepare_pattern(values: Sequence[Any]) -> tuple:
    """Like :func:`prepare_quad`, letting any position be a ``Var``."""
    if len(values) != 4:
        raise PatternError(f"a pattern has 4 items (graph, subject, predicate, object), not {len(values)}: {tuple(values)!r:.200}")
    names = ("graph", "subject", "predicate", "object")
    return tuple(v if type(v) is Var else check_value(v, f"pattern {name}") for v, name in zip(values, names))


class View:
    """The state at one commit (``commit`` is None for a branch with no commits yet).

    Obtain one with :meth:`Repository.at`; read it with ``fstore.from_``, ``fstore.ask``...
    Commits never change, so a view stays consistent however the branches move on.
    """

    def __init__(self, repo: Repository, seq: int | None, ref: str) -> None:
        self.repo = repo
        self.seq = seq
        self.ref = ref
        with repo._okvs.transaction() as tx:
            self._ancestors = repo._commits.ancestors(tx, seq)
            self.commit = repo._commits.get(tx, seq) if seq is not None else None

    @property
    def commit_id(self) -> str | None:
        return self.commit.id if self.commit else None

    def _match(self, pattern: Sequence[Any]) -> Iterator[Quad]:
        with self.repo._okvs.transaction() as tx:
            yield from self.repo._history.match(tx, pattern, self._ancestors)

    def _count(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        with self.repo._okvs.transaction() as tx:
            return self.repo._history.count(tx, pattern, self._ancestors, cap)

    def _graphs(self) -> list[Any]:
        with self.repo._okvs.transaction() as tx:
            return self.repo._history.graphs(tx, self._ancestors)

    def table(self, name: str):
        """The table (Kart dataset) ``name`` at this commit, read-only: ``schema``,
        ``get(pk)``, ``rows()``, ``len()``. See :mod:`fstore.tables`."""
        from .tables.dataset import table_at

        return table_at(self, name)

    def __repr__(self) -> str:
        commit = self.commit.short_id if self.commit else "no commits"
        return f"<fstore.View {self.ref!r} at {commit}>"
