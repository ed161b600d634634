"""Dataset names by Kart's rules: hierarchical paths that check out on any OS.

A name is a ``/``-separated path. It may hold most Unicode, but no ASCII control
characters and none of ``: < > " | ? *``; it may not start or end with ``/``; no component
may be empty, start or end with ``.``, end with a space, or be a reserved Windows device
name (``CON``, ``PRN``, ``AUX``, ``NUL``, ``COM1``–``COM9``, ``LPT1``–``LPT9``, any case).
Within one repository no two names may differ only by case (Unicode case folding, so
``K`` and the Kelvin sign ``K`` clash). Backslashes become slashes on import.

>>> validate_dataset_name("hydro/soundings")
'hydro/soundings'
>>> normalise_dataset_name("hydro\\\\soundings")
'hydro/soundings'
>>> validate_dataset_names(["a", "A"])
Traceback (most recent call last):
...
fstore.tables.errors.DatasetNameError: invalid dataset name 'A' (case-conflict): differs only by case from 'a'
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import DatasetNameError

__all__ = [
    "RESERVED_WINDOWS_NAMES",
    "FORBIDDEN_CHARACTERS",
    "normalise_dataset_name",
    "validate_dataset_name",
    "validate_dataset_names",
    "is_valid_dataset_name",
]

RESERVED_WINDOWS_NAMES = frozenset(
    ["CON", "PRN", "AUX", "NUL"]
    + [f"COM{i}" for i in range(1, 10)]
    + [f"LPT{i}" for i in range(1, 10)]
)
FORBIDDEN_CHARACTERS = ':<>"|?*'


def normalise_dataset_name(name: str) -> str:
    """Convert backslashes to forward slashes, as Kart does when importing."""
    return name.replace("\\", "/")


def validate_dataset_name(name: str) -> str:
    """Return ``name`` if it is a valid dataset name, else raise :class:`DatasetNameError`
    naming the first rule it breaks."""
    if not isinstance(name, str):
        raise DatasetNameError(repr(name), "not-text", "a dataset name must be a str")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise DatasetNameError(name, "not-utf8", "cannot be encoded as UTF-8") from None
    if not name:
        raise DatasetNameError(name, "empty", "may not be empty")
    for ch in name:
        if ord(ch) < 0x20:
            raise DatasetNameError(
                name, "control-character", f"may not contain ASCII control character U+{ord(ch):04X}"
            )
        if ch in FORBIDDEN_CHARACTERS:
            raise DatasetNameError(
                name, "forbidden-character", f"may not contain {ch!r} (none of {FORBIDDEN_CHARACTERS})"
            )
    if name.startswith("/"):
        raise DatasetNameError(name, "leading-slash", "may not start with '/'")
    if name.endswith("/"):
        raise DatasetNameError(name, "trailing-slash", "may not end with '/'")
    for component in name.split("/"):
        if not component:
            raise DatasetNameError(name, "empty-component", "may not contain an empty component ('//')")
        if component.upper() in RESERVED_WINDOWS_NAMES:
            raise DatasetNameError(
                name, "reserved-name", f"component {component!r} is a reserved Windows file name"
            )
        if component.startswith(".") or component.endswith("."):
            raise DatasetNameError(
                name, "dot-component", f"component {component!r} may not start or end with '.'"
            )
        if component.endswith(" "):
            raise DatasetNameError(name, "trailing-space", f"component {component!r} may not end with a space")
    return name


def validate_dataset_names(names: Iterable[str]) -> list[str]:
    """Validate every name and check that no two differ only by case (Unicode
    ``casefold``). Returns the names as a list."""
    seen: dict[str, str] = {}
    result = []
    for name in names:
        validate_dataset_name(name)
        folded = name.casefold()
        if folded in seen:
            if seen[folded] == name:
                raise DatasetNameError(name, "duplicate", "appears more than once")
            raise DatasetNameError(name, "case-conflict", f"differs only by case from {seen[folded]!r}")
        seen[folded] = name
        result.append(name)
    return result


def is_valid_dataset_name(name: str) -> bool:
    """``True`` if :func:`validate_dataset_name` accepts ``name``."""
    try:
        validate_dataset_name(name)
    except DatasetNameError:
        return False
    return True
