"""A real writer in another process, committing in a bounded loop, for tests of reads that
must hold while another process writes (LMDB: one writer, many readers, each reader on
its own state).

>>> import tempfile
>>> directory = tempfile.mkdtemp()
>>> setup = "def commit(n):\\n    open(f'{path}/{n}', 'w').close()".replace("{path}", directory)
>>> with committing(setup, directory, pause=0.0, limit=3) as writer:
...     pass
>>> 1 <= writer.commits <= 3
True
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

__all__ = ["committing", "Writer"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LOOP = """
import os, sys, time
sys.path.insert(0, {root!r})
{setup}
done = 0
while done < {limit} and not os.path.exists({stop!r}):
    commit(done)
    done += 1
    if done == 1:
        print("ready", flush=True)
    time.sleep({pause!r})
print(done, flush=True)
"""


@dataclass
class Writer:
    """The writing process, and once it has stopped, how many commits it made."""

    process: subprocess.Popen
    commits: int = 0


@contextmanager
def committing(setup: str, directory: str | os.PathLike, *, pause: float, limit: int) -> Iterator[Writer]:
    """Run ``setup`` (Python that defines ``commit(n)``, making the n-th commit) in a new
    process, then ``commit(0)``, ``commit(1)``, ... with ``pause`` seconds between them,
    until ``limit`` commits or the end of the ``with`` block; the block starts after the
    first commit. ``directory`` holds the stop file (not the store's own directory)."""
    stop = os.path.join(directory, "stop-writing")
    code = _LOOP.format(root=ROOT, setup=setup, limit=limit, stop=stop, pause=pause)
    # Unbuffered bytes: a buffered readline could take the final count with "ready", out of
    # communicate()'s sight (it reads the pipes themselves).
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               bufsize=0, cwd=ROOT)
    writer = Writer(process)
    try:
        first = process.stdout.readline().decode() if process.stdout else ""
        if first.strip() != "ready":  # it ended before its first commit
            raise AssertionError(f"the writer did not start: {first!r} {process.stderr.read().decode()[-2000:]}")
        yield writer
    finally:
        open(stop, "w").close()
        out, err = (data.decode() for data in process.communicate(timeout=120))
    assert process.returncode == 0, f"the writer ended with {process.returncode}: {err[-2000:]}"
    writer.commits = int(out.split()[-1])
