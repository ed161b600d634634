"""Counts for people: commits, branches, tags, reflog entries, and the data file's size,
the bytes its live pages hold, and what compaction (gc) would give back.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.storage.read() as snapshot:
...     found = stats(snapshot)
>>> found["commits"], found["branches"], found["live bytes"] <= found["bytes"]
(0, 1, True)
>>> repo.close()
"""

from __future__ import annotations

import os
from typing import Any

from nstore.lmdbfile import DATA_FILE

from ..core.storage import Snapshot
from ..core.refs import BRANCH, TAG

__all__ = ["stats"]


def stats(snapshot: Snapshot) -> dict[str, Any]:
    """The counts of the module doc: refs as ``snapshot`` reads them, sizes as the file
    is now."""
    commits = sum(1 for _ in snapshot.all_commits())
    branches = sum(1 for _ in snapshot.refs(BRANCH))
    tags = sum(1 for _ in snapshot.refs(TAG))
    reflog = len(snapshot.reflog())
    size = os.path.getsize(os.path.join(snapshot.storage.path, DATA_FILE))
    live = snapshot.storage.okvs.live_bytes()
    return {"commits": commits, "branches": branches, "tags": tags, "reflog": reflog, "bytes": size,
            "live bytes": live, "reclaimable": max(size - live, 0)}
