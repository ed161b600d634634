"""Progress lines on a terminal: quads (or table rows) read, staged and written by an import
or an export, rows per table of a Spark export, and commits and records moved by a
transfer, each with its rate.

They draw on stderr only when it is a terminal (a script's stderr stays clean), vanish
when done, and cost nothing otherwise: the context managers then yield None, which the
library functions take as "no progress wanted".

    with counting_progress("quads") as progress:
        load(tx, "schema.nq", progress=progress.phase if progress else None)
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import (BarColumn, Progress, ProgressColumn, SpinnerColumn, Task, TaskID, TextColumn,
                           TimeElapsedColumn)
from rich.text import Text

__all__ = ["CountingProgress", "counting_progress", "table_progress", "transfer_progress"]

# Seconds from some fixed moment: the real one is time.monotonic; a test passes a fake.
Clock = Callable[[], float]

# What each phase of fstore.progress is called on the line.
_PHASES = {"read": "reading", "stage": "staging", "write": "writing"}


class _RateColumn(ProgressColumn):
    """Items per second since the phase began (rich's own speed column counts bytes)."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f} {self.unit}/s" if speed else "", style="progress.data.speed")


class _CountColumn(ProgressColumn):
    """``done`` or ``done/total`` items, with thousands separators."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        if not task.fields.get("counted", True):
            return Text("")
        done = f"{int(task.completed):,}"
        return Text(f"{done}/{int(task.total):,} {self.unit}" if task.total is not None else f"{done} {self.unit}",
                    style="progress.download")


class CountingProgress:
    """One progress line: a file's name and phase, a bar when the total is known, the count
    of quads (or rows) and their rate. ``phase`` is a :data:`fstore.progress.Progress`."""

    def __init__(self, bar: Progress, unit: str) -> None:
        self._bar = bar
        self._unit = unit
        self._task: TaskID | None = None
        self._expected: int | None = None
        self._label = ""
        self._phase = ""

    def expect(self, total: int) -> None:
        """The number of items there will be (a bar, and the time left)."""
        self._expected = total

    def file(self, label: str) -> None:
        """Name what the next phases work on (a file's base name)."""
        self._label = label if len(label) <= 24 else label[:11] + "…" + label[-12:]
        self._phase = ""

    def phase(self, phase: str, done: int, total: int | None) -> None:
        """``done`` items of ``phase`` ("read", "stage", "write") so far, of ``total``;
        phase "commit" says the commit of ``done`` items has begun."""
        if phase == "commit":
            self.committing(done)
            return
        if phase != self._phase:
            verb = _PHASES.get(phase, phase)
            self._begin(phase, f"{verb} {self._label}" if self._label else verb,
                        total if total is not None else self._expected)
        assert self._task is not None
        self._bar.update(self._task, completed=done)

    def committing(self, items: int) -> None:
        """The commit writing ``items``, which reports no count of its own."""
        self._begin("commit", f"committing {items:,} {self._unit}", None)

    def _begin(self, phase: str, description: str, total: int | None) -> None:
        # A phase is a task of its own: its count starts at zero, its rate is its own, and
        # its total may be unknown (rich cannot take a known total back).
        # The last phase's final count is drawn before it goes: left to rich's timer (ten
        # times a second) a fast phase would vanish showing an earlier count.
        if self._task is not None:
            self._bar.refresh()
            self._bar.update(self._task, visible=False)
        self._phase = phase
        self._task = self._bar.add_task(description, total=total, counted=phase != "commit")


def _counting_bar(unit: str, clock: Clock | None) -> Progress:
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=14), _CountColumn(unit),
               _RateColumn(unit), TimeElapsedColumn())
    return Progress(*columns, transient=True, console=Console(stderr=True), get_time=clock)


@contextmanager
def counting_progress(unit: str = "quads", *, clock: Clock | None = None) -> Iterator[CountingProgress | None]:
    """A :class:`CountingProgress` of ``unit`` on a terminal's stderr, else None. Rates
    and times are read from ``clock`` (seconds; None: the real monotonic clock)."""
    if not sys.stderr.isatty():
        yield None
        return
    with _counting_bar(unit, clock) as bar:
        yield CountingProgress(bar, unit)


@contextmanager
def table_progress(verb: str, *, clock: Clock | None = None) -> Iterator[Callable[[str, int], None] | None]:
    """A line per table (``verb`` and its name, rows so far and their rate) on a terminal,
    told ``(table, rows)``; nothing when stderr is not a terminal. ``clock``: as for
    :func:`counting_progress`."""
    if not sys.stderr.isatty():
        yield None
        return
    with _counting_bar("rows", clock) as bar:
        tasks: dict[str, TaskID] = {}

        def told(table: str, rows: int) -> None:
            if table not in tasks:
                tasks[table] = bar.add_task(f"{verb} {table}", total=None)
            bar.update(tasks[table], completed=rows)

        yield told


@contextmanager
def transfer_progress(verb: str, *, clock: Clock | None = None) -> Iterator[Callable[[int, int], None] | None]:
    """A progress line on a terminal (commits and records so far, and their rate) for a
    transfer; nothing when stderr is not a terminal. ``clock``: as for
    :func:`counting_progress`."""
    if not sys.stderr.isatty():
        yield None
        return
    text = f"{verb} {{task.completed}} commits, {{task.fields[records]:,}} records ({{task.fields[rate]:,.0f}} records/s)"
    with Progress(SpinnerColumn(), TextColumn(text), TimeElapsedColumn(), transient=True,
                  console=Console(stderr=True), get_time=clock) as bar:
        task = bar.add_task(verb, total=None, records=0, rate=0.0)

        def told(commits: int, records: int) -> None:
            elapsed = bar.tasks[0].elapsed or 0.0
            bar.update(task, completed=commits, records=records, rate=records / elapsed if elapsed else 0.0)

        yield told
