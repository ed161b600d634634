"""nstore: an ordered key-value store over LMDB and a generic n-tuple store on top of it.

>>> import tempfile
>>> from nstore import okvs, NStore, Var
>>> db = okvs.open(tempfile.mkdtemp())
>>> quads = NStore(db, ("q",), ("graph", "subject", "predicate", "object"))
>>> with db.transaction(write=True) as tx:
...     quads.add(tx, "g", "s", "p", 1)
True
>>> with db.transaction() as tx:
...     list(quads.from_(tx, "g", Var("s"), "p", Var("o")))
[{'s': 's', 'o': 1}]
"""

from . import okvs
from .errors import (
    CorruptBlobError,
    DataeError,
    FormatVersionError,
    PackError,
    PatternError,
    ReadOnlyTransactionError,
    TransactionClosedError,
    TransactionError,
    TransactionTooLargeError,
)
from .indices import minimal_permutations
from .okvs import InvalidKeyError, Okvs, Transaction
from .pack import BlobRef, pack, unpack
from .store import NStore, Var, select
from .terms import IRI, BNode, Literal

__all__ = [
    "okvs",
    "Okvs",
    "Transaction",
    "NStore",
    "Var",
    "select",
    "pack",
    "unpack",
    "BlobRef",
    "minimal_permutations",
    "IRI",
    "BNode",
    "Literal",
    "DataeError",
    "PackError",
    "PatternError",
    "TransactionError",
    "ReadOnlyTransactionError",
    "TransactionClosedError",
    "TransactionTooLargeError",
    "CorruptBlobError",
    "FormatVersionError",
    "InvalidKeyError",
]

FORMAT_VERSION = 1
