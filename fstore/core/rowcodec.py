"""The mapping between a table's feature tuple and the row the store keeps for it.

A feature tuple is ``(<urn:datae:dataset:NAME>, path, <urn:datae:table:feature>, blob)``
(``docs/tables.md``, "The mapping"): ``path`` is Kart's feature path (directories from the
dataset's path structure, then ``urlsafe_b64(msgpack(pk))``) and ``blob`` is Kart's feature
blob ``msgpack([legend name, [values…]])``. The row store keeps such a tuple as its primary
key packed order-preserving (``nstore.pack(*pk)``), a legend ordinal and the blob's bytes after
the legend name, verbatim. :func:`split_feature` tells whether a tuple can be kept so (it is
*regular*: the path is exactly the one its key and the table's path rule give back, the blob
is framed as Kart frames it) and :func:`join_feature` gives the tuple back, byte for byte.

This module is the storage's (``fstore.core``): verify, gc and upgrade rebuild tuples without
the tables plug-in, so the path rule lives here and ``fstore.tables.paths`` builds on it.

>>> rule = PathRule("int", 64, 4, "base64")
>>> feature_path(rule, (77,))
'A/A/A/B/kU0='
>>> feature_path(PathRule("msgpack/hash", 256, 2, "hex"), (77,))
'3c/57/kU0='
>>> split = split_feature(rule, "A/A/A/B/kU0=", bytes.fromhex("92a3616263") + b"\\x91\\x05")
>>> split.key, split.header, split.values, split.count
(b'\\x15M', b'\\xa3abc', b'\\x91\\x05', 1)
>>> join_feature(rule, split.key, split.header, split.values)
('A/A/A/B/kU0=', b'\\x92\\xa3abc\\x91\\x05')
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
from dataclasses import dataclass
from typing import Any, NamedTuple, Sequence

import msgpack

from nstore._pack import pack_column
from nstore.pack import pack_value
from nstore.pack import unpack as unpack_key

from ._rows import PathCodec

__all__ = ["PathRule", "SplitFeature", "ENCODINGS", "FEATURE_IRI", "DATASET_PREFIX", "KEY_LIMIT",
           "filename", "filename_bytes", "feature_path", "keys_of", "key_of", "directories", "split_feature", "join_feature", "legend_header"]

FEATURE_IRI = "urn:datae:table:feature"
DATASET_PREFIX = "urn:datae:dataset:"
KEY_LIMIT = 400
"""The longest packed primary key a row keeps (bytes); a longer one stays a generic tuple,
so that a row's keys (prefix, table, key, commit) fit LMDB's 511-byte limit."""
ENCODINGS = {"hex": "0123456789abcdef",
             "base64": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"}
# Usable hash characters: 40 hex digits; base64 of 20 bytes is 27 characters + "=".
HASH_CHARS = {"hex": 40, "base64": 27}
_URLSAFE_TO_STANDARD = bytes.maketrans(b"-_", b"+/")
_SCALARS = frozenset({int, float, str, bytes, bool, type(None)})


@dataclass(frozen=True)
class PathRule:
    """How a dataset's ``path-structure.json`` places features: ``scheme`` ``"int"`` (one
    integer key divided by ``branches``, modulo ``branches ** levels``, one directory a
    level) or ``"msgpack/hash"`` (the first characters of ``sha256(msgpack(pk))``), written
    in ``encoding`` (``"hex"`` or ``"base64"``). Checked by ``fstore.tables.paths``."""

    scheme: str
    branches: int
    levels: int
    encoding: str

    @property
    def alphabet(self) -> str:
        return ENCODINGS[self.encoding]

    @functools.cached_property
    def codec(self) -> PathCodec:
        """The rule in C (:class:`~._rows.PathCodec`): paths of keys of integers and
        strings, and the keys of their paths."""
        return PathCodec(self.scheme, self.branches, self.levels, self.alphabet, self.group_length, KEY_LIMIT)

    @functools.cached_property
    def group_length(self) -> int:
        """Characters per directory name (1 for 16 hex or 64 base64 branches, 2 for 256…)."""
        n, power = 0, 1
        while power < self.branches:
            power *= len(self.alphabet)
            n += 1
        return n


@functools.lru_cache(maxsize=1 << 16)
def _int_directories(rule: PathRule, n: int) -> str:
    """The directories of the int scheme for ``n``; cached because consecutive keys share
    them (``branches`` keys a directory)."""
    alphabet, g = rule.alphabet, rule.group_length
    base = len(alphabet)
    digits = []
    for _ in range(rule.levels * g):
        n, r = divmod(n, base)
        digits.append(alphabet[r])
    chars = "".join(reversed(digits))
    return "/".join(chars[i * g : (i + 1) * g] for i in range(rule.levels))


def directories(rule: PathRule, pk_values: Sequence[Any], packed: bytes) -> str | None:
    """The directories (``A/A/A/B``) of the feature whose key is ``pk_values`` (``packed``
    is their msgpack, which only the hash scheme reads), or None when the int scheme meets
    anything but one integer."""
    if rule.scheme == "int":
        if len(pk_values) != 1 or isinstance(pk_values[0], bool) or not isinstance(pk_values[0], int):
            return None
        return _int_directories(rule, (pk_values[0] // rule.branches) % (rule.branches ** rule.levels))
    digest = hashlib.sha256(packed).digest()
    chars = digest.hex() if rule.encoding == "hex" else base64.urlsafe_b64encode(digest[:20]).decode("ascii")
    g = rule.group_length
    return "/".join(chars[i * g : (i + 1) * g] for i in range(rule.levels))


def filename(packed: bytes) -> str:
    """A feature's file name from its key's msgpack: URL-safe base64, padded."""
    return base64.urlsafe_b64encode(packed).decode("ascii")


def filename_bytes(name: str) -> bytes:
    """The msgpack bytes a feature file name encodes (``base64.urlsafe_b64decode`` without
    its per-call checks: a scan decodes every name); raises ``ValueError`` (``binascii.Error``)
    or ``UnicodeEncodeError`` for a name that is not URL-safe base64."""
    return binascii.a2b_base64(name.encode("ascii").translate(_URLSAFE_TO_STANDARD))


def _packed_pk(pk_values: Sequence[Any]) -> bytes:
    # Kart's msgpack of a key (packing.pack): keys hold no geometry, so no extension types.
    return msgpack.packb(list(pk_values), use_bin_type=True, strict_types=True)


def feature_path(rule: PathRule, pk_values: Sequence[Any]) -> str | None:
    """The path below ``feature/`` of the feature keyed ``pk_values``, or None when the rule
    cannot place it (see :func:`directories`)."""
    packed = _packed_pk(pk_values)
    dirs = directories(rule, pk_values, packed)
    return None if dirs is None else f"{dirs}/{filename(packed)}"


def keys_of(rule: PathRule, paths: list[str]) -> list[tuple[int, bytes] | None]:
    """:func:`key_of` of many paths: in C for keys of integers and strings, the others
    in Python."""
    keys = rule.codec.keys(paths)
    for i, key in enumerate(keys):
        if key is None:
            keys[i] = key_of(rule, paths[i])
    return keys


def legend_header(blob: bytes) -> int:
    """The length of ``92 ‖ str header ‖ legend name`` at the start of a Kart feature blob,
    or 0 when the blob does not start so (an array of two whose first item is a string)."""
    if len(blob) < 2 or blob[0] != 0x92:
        return 0
    b = blob[1]
    if 0xA0 <= b <= 0xBF:
        size, start = b - 0xA0, 2
    elif b == 0xD9 and len(blob) >= 3:
        size, start = blob[2], 3
    elif b == 0xDA and len(blob) >= 4:
        size, start = int.from_bytes(blob[2:4], "big"), 4
    elif b == 0xDB and len(blob) >= 6:
        size, start = int.from_bytes(blob[2:6], "big"), 6
    else:
        return 0
    end = start + size
    return end if end <= len(blob) else 0


class SplitFeature(NamedTuple):
    """A regular feature tuple's parts: its key packed order-preserving, the blob's legend
    (its string header and name, without the leading ``92``), the rest of the blob, and
    how many values the key holds."""

    key: bytes
    header: bytes
    values: bytes
    count: int


def key_of(rule: PathRule, path: str) -> tuple[int, bytes] | None:
    """``(count of values, packed key)`` of the row at ``path`` under ``rule``, or None when
    no row can be there: the file name is not Kart's encoding (URL-safe base64, padded, of
    the key's msgpack: no wider number, no float32) of a list of scalars whose packed key
    fits :data:`KEY_LIMIT` bytes, or the directories are not the rule's for that key."""
    directory, _, name = path.rpartition("/")
    try:
        raw = filename_bytes(name)
        pk = msgpack.unpackb(raw, raw=False)
    except (ValueError, UnicodeEncodeError, msgpack.UnpackException):
        return None
    # Only scalars come back from the packed key as they went in (a nested array would
    # come back a tuple).
    if type(pk) is not list or not _SCALARS.issuperset(map(type, pk)):
        return None
    key = b"".join(pack_column(pk, pack_value, {}, {}, KEY_LIMIT, 0))
    if len(key) > KEY_LIMIT or _packed_pk(pk) != raw or filename(raw) != name \
            or directories(rule, pk, raw) != directory:
        return None
    return len(pk), key


def split_feature(rule: PathRule, path: str, blob: bytes) -> SplitFeature | None:
    """The row of a feature tuple under ``rule``, or None when the tuple is not regular:
    no row can be at its path (:func:`key_of`: so a row's key names one path), or the blob
    is not ``92 ‖ legend name ‖ values``. Pure: the same tuple and rule always give the
    same answer."""
    head = legend_header(blob)
    found = key_of(rule, path) if head else None
    if found is None:
        return None
    return SplitFeature(found[1], blob[1:head], blob[head:], found[0])


def join_feature(rule: PathRule, key: bytes, header: bytes, values: bytes) -> tuple[str, bytes]:
    """The feature tuple's path and blob from its row (the inverse of :func:`split_feature`)."""
    path = feature_path(rule, unpack_key(key))
    if path is None:  # split_feature never makes such a row
        raise ValueError(f"row key {key.hex()} has no path under {rule}")
    return path, b"\x92" + header + values
