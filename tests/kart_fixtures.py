"""Shared helpers for the Kart tests: where the test material lives, loading the vectors,
unpacking the repository archives, and turning the vectors' JSON values into Python."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

from fstore.tables import Geometry

from tests.locations import SHARED, shared

__all__ = ["KART_DIR", "load_vectors", "unpack_archive", "archives", "archive_id", "from_json_value", "build_kart_repo",
           "v2_dataset_vector", "v2_sno_dataset_files"]


KART_DIR = SHARED / "testdata" / "kart"


def load_vectors() -> dict[str, Any]:
    """``kart_vectors.json`` (a missing file fails collection loudly)."""
    with open(shared("testdata", "kart", "kart_vectors.json"), encoding="utf-8") as f:
        return json.load(f)


def archives() -> list[Path]:
    """Every Kart repository archive, conflicts/*.tgz included, sorted."""
    kart = shared("testdata", "kart")
    return sorted(kart.glob("*.tgz")) + sorted((kart / "conflicts").glob("*.tgz"))


def archive_id(path: Path) -> str:
    """An archive's name for test ids: ``table.tgz``, or ``conflicts/polygons.tgz``."""
    return path.name if path.parent.name == "kart" else f"{path.parent.name}/{path.name}"


def unpack_archive(archive: Path, dest: Path) -> Path:
    """Unpack one ``.tgz`` into ``dest``; return the Kart working directory inside."""
    if not archive.exists() and archive.is_relative_to(SHARED):
        shared(*archive.relative_to(SHARED).parts)  # skips (fails under CI) naming what is missing
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


def build_kart_repo(root: Path, commits: list[tuple[str, list[str], dict[str, bytes], int]]) -> dict[str, str]:
    """Write a bare git dir ``root/.kart`` holding ``commits``: a list of
    ``(name, parent names, {path: bytes}, time)``; returns ``{name: commit id}``."""
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    repo = Repo.init_bare(str(root / ".kart"), mkdir=True)
    store = repo.object_store

    def tree_of(files):
        subdirs, blobs = {}, {}
        for path, data in files.items():
            head, _, rest = path.partition("/")
            if rest:
                subdirs.setdefault(head, {})[rest] = data
            else:
                blobs[head] = data
        tree = Tree()
        for name, data in blobs.items():
            blob = Blob.from_string(data)
            store.add_object(blob)
            tree.add(name.encode(), 0o100644, blob.id)
        for name, sub in subdirs.items():
            tree.add(name.encode(), 0o040000, tree_of(sub).id)
        store.add_object(tree)
        return tree

    ids, raw_ids = {}, {}
    for name, parents, files, when in commits:
        c = Commit()
        c.tree = tree_of(files).id
        c.parents = [raw_ids[p] for p in parents]
        c.author = c.committer = b"Test <test@example.com>"
        c.author_time = c.commit_time = when
        c.author_timezone = c.commit_timezone = 0
        c.message = name.encode() + b"\n"
        store.add_object(c)
        ids[name] = c.id.decode()
        raw_ids[name] = c.id
        repo.refs[b"refs/heads/" + name.encode()] = c.id
    repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/" + commits[-1][0].encode())
    repo.close()
    return ids


def v2_dataset_vector() -> dict[str, Any]:
    """The V2 dataset (``nz_pa_points_topo_150k``) of the vectors' upgrade repository."""
    (repo,) = [r for r in load_vectors()["test_data_repos"] if "/upgrade/" in r["archive"]]
    (ds,) = repo["datasets"]
    return ds


def v2_sno_dataset_files(ds: dict[str, Any]) -> dict[str, bytes]:
    """The files of a V2 ``.sno-dataset`` holding ``ds`` (legacy hashed feature paths, no
    path-structure.json), for :func:`build_kart_repo`."""
    prefix = "nz_pa_points_topo_150k/.sno-dataset/"
    files = {prefix + "meta/schema.json": ds["schema_json_bytes"].encode(), prefix + "meta/title": b"V2 points"}
    for leg in ds["legends"]:
        files[prefix + "meta/legend/" + leg["filename"]] = bytes.fromhex(leg["blob_hex"])
    for f in ds["sample_features"]:
        files[prefix + "feature/" + f["path"]] = bytes.fromhex(f["blob_hex"])
    return files
