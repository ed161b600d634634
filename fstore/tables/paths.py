"""Feature paths: where a row lives in a dataset's ``feature/`` tree, from its primary key.

The file name is ``urlsafe_b64encode(msgpack(pk_values))`` with ``=`` padding, so it
decodes back to the primary key. The directories above it follow the dataset's
``path-structure.json``:

* ``"scheme": "int"`` (one integer key): the key divided by ``branches``, modulo
  ``branches ** levels``, written in the encoding's alphabet with one directory per
  level, so neighbouring keys share a directory and negative keys wrap around;
* ``"scheme": "msgpack/hash"`` (any keys): the first characters of the hex or URL-safe
  base64 encoding of ``sha256(msgpack(pk_values))`` (20 bytes of it for base64).

``"encoding": "hex"`` (lower-case) allows 16, 256, 4096… branches, ``"base64"``
(URL-safe alphabet) 64, 4096…; ``levels`` is the directory depth. V2 datasets store no
path structure: they imply ``msgpack/hash``, 256 branches, 2 levels, hex
(:data:`LEGACY`).

>>> INT_PK.encode_path([77])
'A/A/A/B/kU0='
>>> GENERAL.encode_path([77]), LEGACY.encode_path([77])
('P/F/e/O/kU0=', '3c/57/kU0=')
>>> decode_filename("kc5JlgLS")
[1234567890]
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.rowcodec import ENCODINGS, HASH_CHARS, PathRule, directories, filename, filename_bytes
from .errors import FeatureError, PathStructureError, PrimaryKeyError
from .packing import pack, unpack

__all__ = [
    "SCHEMES",
    "ENCODINGS",
    "PathStructure",
    "LEGACY",
    "INT_PK",
    "GENERAL",
    "encode_filename",
    "decode_filename",
    "default_path_structure",
]

SCHEMES = ("int", "msgpack/hash")
_MAX_INT_LEVELS = 64


def encode_filename(pk_values: Sequence[Any]) -> str:
    """``urlsafe_b64encode(msgpack(pk_values))``, padded, as Kart names feature files."""
    return filename(pack(list(pk_values)))


def decode_filename(name: str) -> list[Any]:
    """The primary-key values a feature file name encodes."""
    try:
        raw = filename_bytes(name)
    except (binascii.Error, ValueError, UnicodeEncodeError) as e:
        raise FeatureError(f"file name {name!r} is not URL-safe base64 ({e})", path=name) from None
    value = unpack(raw, where=name)
    if not isinstance(value, list):
        raise FeatureError(f"file name {name!r} decodes to {value!r}, not a list of primary-key values", path=name)
    return value


@dataclass(frozen=True)
class PathStructure(PathRule):
    """A validated ``path-structure.json``."""

    def __post_init__(self) -> None:
        where = f"path-structure {self.to_dict()!r}"
        if self.scheme not in SCHEMES:
            raise PathStructureError(f"{where}: unknown scheme {self.scheme!r} (one of {', '.join(SCHEMES)})")
        if self.encoding not in ENCODINGS:
            raise PathStructureError(f"{where}: unknown encoding {self.encoding!r} (one of {', '.join(ENCODINGS)})")
        for key in ("branches", "levels"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int):
                raise PathStructureError(f"{where}: {key} must be an integer, not {v!r}")
        base = len(ENCODINGS[self.encoding])
        group, power = 0, 1
        while power < self.branches:
            power *= base
            group += 1
        if group == 0 or power != self.branches:
            raise PathStructureError(
                f"{where}: {self.encoding} encoding and {self.branches} branches are incompatible "
                f"(branches must be a power of {base})"
            )
        if self.levels < 1:
            raise PathStructureError(f"{where}: levels must be at least 1, not {self.levels}")
        if self.scheme == "msgpack/hash" and self.levels * group > HASH_CHARS[self.encoding]:
            raise PathStructureError(
                f"{where}: {self.levels} levels of {self.branches} branches need more than the "
                f"{HASH_CHARS[self.encoding]} {self.encoding} characters the hash provides"
            )
        if self.scheme == "int" and self.levels * group > _MAX_INT_LEVELS:
            raise PathStructureError(f"{where}: too many levels ({self.levels})")

    # -- (de)serialisation --------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "PathStructure":
        """From the parsed JSON object; unknown or missing keys are errors."""
        if not isinstance(d, Mapping):
            raise PathStructureError(f"path-structure.json must be a JSON object, not {d!r}")
        keys = {"scheme", "branches", "levels", "encoding"}
        missing, extra = keys - set(d), set(d) - keys
        if missing:
            raise PathStructureError(f"path-structure.json {dict(d)!r} lacks {', '.join(sorted(missing))}")
        if extra:
            raise PathStructureError(f"path-structure.json {dict(d)!r} has unknown key(s) {', '.join(sorted(extra))}")
        return cls(d["scheme"], d["branches"], d["levels"], d["encoding"])

    @classmethod
    def from_json(cls, data: bytes | str) -> "PathStructure":
        """Parse ``path-structure.json``."""
        try:
            d = json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise PathStructureError(f"path-structure.json is not valid JSON ({e})") from None
        return cls.from_dict(d)

    def to_dict(self) -> dict[str, Any]:
        return {"scheme": self.scheme, "branches": self.branches, "levels": self.levels, "encoding": self.encoding}

    def dumps(self) -> bytes:
        """``path-structure.json`` bytes as Kart writes them."""
        return json.dumps(self.to_dict()).encode("utf-8")

    # -- encoding -----------------------------------------------------------------------
    def tree_path(self, pk_values: Sequence[Any]) -> str:
        """The directories (``A/A/A/B``) a feature with these primary-key values lives in."""
        pk_values = list(pk_values)
        if self.scheme == "int":
            if len(pk_values) != 1:
                raise PrimaryKeyError(pk_values, "the int path scheme takes exactly one integer primary key value")
            pk = pk_values[0]
            if isinstance(pk, bool) or not isinstance(pk, int):
                raise PrimaryKeyError(
                    pk_values, f"the int path scheme needs an integer, not {type(pk).__name__} {pk!r}"
                )
        try:
            packed = b"" if self.scheme == "int" else pack(pk_values)
        except TypeError as e:
            raise PrimaryKeyError(pk_values, f"cannot be packed ({e})") from None
        dirs = directories(self, pk_values, packed)
        assert dirs is not None  # the int scheme's key was checked above
        return dirs

    def encode_path(self, pk_values: Sequence[Any]) -> str:
        """The feature's path below ``feature/``, e.g. ``A/A/A/B/kU0=``."""
        try:
            filename = encode_filename(pk_values)
        except TypeError as e:
            raise PrimaryKeyError(list(pk_values), f"cannot be packed ({e})") from None
        return f"{self.tree_path(pk_values)}/{filename}"

    def decode_path(self, path: str, *, check: bool = False) -> list[Any]:
        """The primary-key values of a feature path (only its file name is needed). With
        ``check``, also verify that the directories are where this structure puts them."""
        name = path.rsplit("/", 1)[-1]
        pk_values = decode_filename(name)
        if check:
            want = self.encode_path(pk_values)
            if not path.endswith(want) or (len(path) > len(want) and path[-len(want) - 1] != "/"):
                raise FeatureError(f"expected this feature at {want}", path=path)
        return pk_values


LEGACY = PathStructure("msgpack/hash", 256, 2, "hex")
"""The structure V2 datasets (``.sno-dataset``) imply; V3 datasets without a
``path-structure.json`` use it too."""
INT_PK = PathStructure("int", 64, 4, "base64")
"""What Kart writes for a single integer primary key."""
GENERAL = PathStructure("msgpack/hash", 64, 4, "base64")
"""What Kart writes for every other primary key."""


def default_path_structure(pk_data_types: Sequence[str]) -> PathStructure:
    """The structure Kart picks for a new V3 dataset: :data:`INT_PK` for one integer
    primary-key column, :data:`GENERAL` otherwise."""
    return INT_PK if list(pk_data_types) == ["integer"] else GENERAL
