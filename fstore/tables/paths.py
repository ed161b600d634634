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

import base64
import binascii
import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
HEX_ALPHABET = "0123456789abcdef"
BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
ENCODINGS = {"hex": HEX_ALPHABET, "base64": BASE64_ALPHABET}
# Usable hash characters: 40 hex digits; base64 of 20 bytes is 27 characters + "=".
_HASH_CHARS = {"hex": 40, "base64": 27}
_MAX_INT_LEVELS = 64


@functools.lru_cache(maxsize=1 << 16)
def _int_directories(structure: "PathStructure", n: int) -> str:
    """The directories of the int scheme for ``n``; cached because consecutive keys share
    them (``branches`` keys a directory)."""
    alphabet, g = structure.alphabet, structure.group_length
    base = len(alphabet)
    digits = []
    for _ in range(structure.levels * g):
        n, r = divmod(n, base)
        digits.append(alphabet[r])
    chars = "".join(reversed(digits))
    return "/".join(chars[i * g : (i + 1) * g] for i in range(structure.levels))


def encode_filename(pk_values: Sequence[Any]) -> str:
    """``urlsafe_b64encode(msgpack(pk_values))``, padded, as Kart names feature files."""
    return base64.urlsafe_b64encode(pack(list(pk_values))).decode("ascii")


_URLSAFE_TO_STANDARD = bytes.maketrans(b"-_", b"+/")


def decode_filename(name: str) -> list[Any]:
    """The primary-key values a feature file name encodes."""
    try:
        # base64.urlsafe_b64decode, without its per-call checks (a scan decodes every key)
        raw = binascii.a2b_base64(name.encode("ascii").translate(_URLSAFE_TO_STANDARD))
    except (binascii.Error, ValueError, UnicodeEncodeError) as e:
        raise FeatureError(f"file name {name!r} is not URL-safe base64 ({e})", path=name) from None
    value = unpack(raw, where=name)
    if not isinstance(value, list):
        raise FeatureError(f"file name {name!r} decodes to {value!r}, not a list of primary-key values", path=name)
    return value


@dataclass(frozen=True)
class PathStructure:
    """A validated ``path-structure.json``."""

    scheme: str
    branches: int
    levels: int
    encoding: str

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
        if self.scheme == "msgpack/hash" and self.levels * group > _HASH_CHARS[self.encoding]:
            raise PathStructureError(
                f"{where}: {self.levels} levels of {self.branches} branches need more than the "
                f"{_HASH_CHARS[self.encoding]} {self.encoding} characters the hash provides"
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
    @property
    def alphabet(self) -> str:
        return ENCODINGS[self.encoding]

    @property
    def group_length(self) -> int:
        """Characters per directory name (1 for 16 hex or 64 base64 branches, 2 for 256…)."""
        n, power = 0, 1
        while power < self.branches:
            power *= len(self.alphabet)
            n += 1
        return n

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
            return _int_directories(self, (pk // self.branches) % (self.branches**self.levels))
        digest = hashlib.sha256(pack(pk_values)).digest()
        chars = digest.hex() if self.encoding == "hex" else base64.urlsafe_b64encode(digest[:20]).decode("ascii")
        g = self.group_length
        return "/".join(chars[i * g : (i + 1) * g] for i in range(self.levels))

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
