r"""What a statement other than a query returns: an update's commit, an EXPLAIN's plan.

Like :class:`query.Result` they have ``serialize(format)``, so ``datae query`` and the REPL
print any statement's outcome the same way.

>>> print(UpdateResult("main", "4f1c2a9e0b7d3c5a", 2, 1).serialize("table"), end="")
committed 4f1c2a9e0b on main: +2 -1
>>> UpdateResult("main", None).serialize("json")
'{"branch": "main", "commit": null, "added": 0, "removed": 0}'
>>> UpdateResult("main", None).serialize("csv")
'branch,commit,added,removed\r\nmain,,0,0\r\n'
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["UpdateResult", "PlanText"]


@dataclass(frozen=True)
class UpdateResult:
    """An update request's outcome: the branch, the new commit's id (None: nothing changed)
    and the quads it added and removed."""

    branch: str
    commit_id: str | None
    added: int = 0
    removed: int = 0
    form: str = "UPDATE"

    @property
    def changed(self) -> bool:
        return self.commit_id is not None

    def __str__(self) -> str:
        if self.commit_id is None:
            return f"no change on {self.branch}"
        return f"committed {self.commit_id[:10]} on {self.branch}: +{self.added} -{self.removed}"

    def serialize(self, format: str = "table") -> str:
        """``table`` (a line for people), ``json``, ``csv`` or ``tsv``."""
        record = {"branch": self.branch, "commit": self.commit_id, "added": self.added, "removed": self.removed}
        if format == "json":
            return json.dumps(record)
        if format in ("csv", "tsv"):
            sep, end = (",", "\r\n") if format == "csv" else ("\t", "\n")
            values = ["" if v is None else str(v) for v in record.values()]
            return sep.join(record) + end + sep.join(values) + end
        return str(self) + "\n"


@dataclass(frozen=True)
class PlanText:
    """The plan ``EXPLAIN`` prints (the same text in every format; ``json`` wraps it)."""

    text: str
    form: str = "EXPLAIN"

    def __str__(self) -> str:
        return self.text

    def serialize(self, format: str = "table") -> str:
        if format == "json":
            return json.dumps({"plan": self.text})
        return self.text + "\n"
