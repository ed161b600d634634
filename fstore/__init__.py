"""fstore: the versioned quad store — commits over a DAG of branches, time travel, merge,
diff, blame, and verification of a Merkle history.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="hello") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), "o")
>>> [c.message for c in repo.log("main")]
['hello']
>>> repo.close()
"""

from nstore import Var, select
from nstore.errors import DataeError, InvalidTermError

from . import tables  # loads none of its modules until a name is used; stores plug tables in at open
from .api import Param, add, add_many, ask, count, estimate, from_, graphs, prepare, quads, rm, rm_many, where
from .core.commits import Commit
from .errors import (
    AmbiguousRefError,
    AmbiguousStoreError,
    ConflictsRecorded,
    FstoreError,
    InvalidRefNameError,
    MergeConflict,
    MergeError,
    MergeInProgressError,
    MergeStaleError,
    NoMergeInProgressError,
    ReadOnlyViewError,
    RefExistsError,
    RefInUseError,
    ResetRefusedError,
    ResolutionError,
    RevertConflict,
    UnknownConflictError,
    UnknownRefError,
    UnresolvedConflictsError,
)
from .ops.conflicts import ConflictItem, MergeState
from .ops.three_way import Conflict
from .core.ranges import NumericRange
from .repository import FORMAT_VERSION, STORE_DIR, Repository, clone, locate, open, upgrade
from .sync.protocol import AuthenticationError, NotFastForwardError, SyncError, TamperedError
from .sync.merge_requests import RequestConflictError, RequestError, RequestRefusedError, RequestStateError, UnknownRequestError
from .transaction import Transaction
from nstore.terms import DEFAULT_GRAPH, IRI, BNode, Literal, canonical, to_rdf
from .view import View

__all__ = [
    "tables",
    "open",
    "clone",
    "upgrade",
    "locate",
    "STORE_DIR",
    "Repository",
    "Transaction",
    "View",
    "Commit",
    "Conflict",
    "ConflictItem",
    "MergeState",
    "add",
    "add_many",
    "rm_many",
    "rm",
    "ask",
    "from_",
    "quads",
    "prepare",
    "Param",
    "NumericRange",
    "where",
    "select",
    "count",
    "estimate",
    "graphs",
    "Var",
    "IRI",
    "BNode",
    "Literal",
    "DEFAULT_GRAPH",
    "canonical",
    "to_rdf",
    "FORMAT_VERSION",
    "DataeError",
    "InvalidTermError",
    "FstoreError",
    "UnknownRefError",
    "AmbiguousRefError",
    "InvalidRefNameError",
    "RefExistsError",
    "RefInUseError",
    "ReadOnlyViewError",
    "MergeError",
    "MergeConflict",
    "SyncError",
    "TamperedError",
    "NotFastForwardError",
    "AuthenticationError",
    "RequestError",
    "UnknownRequestError",
    "RequestStateError",
    "RequestRefusedError",
    "RequestConflictError",
    "ConflictsRecorded",
    "RevertConflict",
    "MergeInProgressError",
    "NoMergeInProgressError",
    "UnresolvedConflictsError",
    "UnknownConflictError",
    "MergeStaleError",
    "ResolutionError",
    "ResetRefusedError",
    "AmbiguousStoreError",
]
