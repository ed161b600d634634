"""Shared helpers for the Kart tests: where the test material lives, loading the vectors,
unpacking the repository archives, and turning the vectors' JSON values into Python."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path
from typing import Any

from fstore.tables import Geometry

__all__ = ["KART_DIR", "load_vectors", "unpack_archive", "archives", "from_json_value"]


def _shared_dir() -> Path:
    env = os.environ.get("DATAE_SHARED")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared"


KART_DIR = _shared_dir() / "testdata" / "kart"


def load_vectors() -> dict[str, Any]:
    """``kart_vectors.json`` (a missing file fails collection loudly)."""
    with open(KART_DIR / "kart_vectors.json", encoding="utf-8") as f:
        return json.load(f)


def archives() -> list[Path]:
    """Every Kart repository archive, conflicts/*.tgz included, sorted."""
    return sorted(KART_DIR.glob("*.tgz")) + sorted((KART_DIR / "conflicts").glob("*.tgz"))


def archive_id(path: Path) -> str:
    """An archive's name for test ids: ``table.tgz``, or ``conflicts/polygons.tgz``."""
    return path.name if path.parent.name == "kart" else f"{path.parent.name}/{path.name}"


def unpack_archive(archive: Path, dest: Path) -> Path:
    """Unpack one ``.tgz`` into ``dest``; return the Kart working directory inside."""
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:  # Python < 3.11.4
            tar.extractall(dest)
    dirs = [p for p in dest.iterdir() if (p / ".kart").is_dir()]
    assert len(dirs) == 1, f"{archive} should hold one Kart repository, found {dirs}"
    return dirs[0]


def from_json_value(v: Any) -> Any:
    """The vectors' encoding of binary values: ``{"$bytes_hex": …}`` is bytes and
    ``{"$geom_gpkg_hex": …}`` a geometry."""
    if isinstance(v, dict) and "$geom_gpkg_hex" in v:
        return Geometry(bytes.fromhex(v["$geom_gpkg_hex"]))
    if isinstance(v, dict) and "$bytes_hex" in v:
        return bytes.fromhex(v["$bytes_hex"])
    return v
