"""Plans kept per source (query.plan_cache): the same text over the same view is planned
once, each run gets a plan and context of its own (its NOW, blank nodes, deadline and
memory budget), and runs at once never share one."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any, Iterator

import pytest

import fstore
import query.engine as engine_module
from query import execute
from query.errors import QueryTimeoutError
from query.limits import MemoryLimitError
from nstore.terms import IRI, BNode

EX = "http://ex/"
TEXT = f"SELECT ?s ?o WHERE {{ ?s <{EX}p> ?o . ?o <{EX}p> ?z }}"


@pytest.fixture
def repo() -> Iterator[Any]:
    folder = tempfile.mkdtemp(prefix="datae-plans-")
    repository = fstore.open(folder)
    with repository.transaction("main", message="m", author="tests") as tx:
        for i in range(50):
            fstore.add(tx, None, IRI(f"{EX}n{i}"), IRI(EX + "p"), IRI(f"{EX}n{i + 1}"))
    yield repository
    repository.close()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def plans_made(monkeypatch: pytest.MonkeyPatch) -> list:
    made: list = []
    original = engine_module.Planner.plan

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(args[0])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(engine_module.Planner, "plan", counting)
    return made


def test_the_same_text_on_the_same_view_is_planned_once(repo: Any, plans_made: list) -> None:
    view = repo.at("main")
    first = list(execute(view, TEXT))
    assert list(execute(view, TEXT)) == first and len(first) == 49
    assert len(plans_made) == 1
    list(execute(repo.at("main"), TEXT))  # another view: its own plans
    assert len(plans_made) == 2


def test_runs_at_once_get_plans_of_their_own(repo: Any, plans_made: list) -> None:
    view = repo.at("main")
    expected = list(execute(view, TEXT))
    one, two = iter(execute(view, TEXT)), iter(execute(view, TEXT))
    interleaved = [(a, b) for a, b in zip(one, two)]
    assert [a for a, _ in interleaved] == expected == [b for _, b in interleaved]
    assert len(plans_made) == 2  # the first run's plan, then one more for the second of two at once


def test_a_kept_plan_runs_under_the_new_runs_limits(repo: Any) -> None:
    view = repo.at("main")
    list(execute(view, TEXT))
    with pytest.raises(QueryTimeoutError):
        list(execute(view, TEXT, timeout=0))
    ordered = "SELECT (CONCAT(STR(?s), STR(?o)) AS ?c) WHERE { ?s ?p ?o } ORDER BY ?c"
    assert len(list(execute(view, ordered))) == 50
    with pytest.raises(MemoryLimitError):
        list(execute(view, ordered, max_held_bytes=10))
    assert len(list(execute(view, TEXT))) == 49 and len(list(execute(view, ordered))) == 50  # no limits again


def test_each_run_has_its_own_blank_nodes(repo: Any, plans_made: list) -> None:
    view = repo.at("main")
    text = "SELECT (BNODE() AS ?b) WHERE { }"
    first, second = (list(execute(view, text))[0]["b"] for _ in range(2))
    assert type(first) is BNode and first != second
    assert len(plans_made) == 1


def test_a_views_statistics_stay_bounded(repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Queries with ever new constants at one view (a server at one head) do not grow its
    estimates and plans without end."""
    import fstore.query_source as query_source

    monkeypatch.setattr(query_source, "STATISTICS_KEPT", 20)
    view = repo.at("main")
    source = view.query_source()
    for i in range(45):
        assert len(list(execute(view, f"SELECT ?o WHERE {{ <{EX}n{i}> <{EX}p> ?o . ?o <{EX}p> ?z }}"))) == 1
        assert len(source.statistics) <= 20
