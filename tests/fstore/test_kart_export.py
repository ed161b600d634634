"""Kart export: every Kart test repository (conflicts/*.tgz included) imported, then
exported with ``export_kart_repo``, gives every commit the same git trees (root and each
dataset's) and the same commit graph; histories made here (merges, commits without table
changes, a V2-style dataset, a dropped table) export as ``export_kart_tree`` writes each
commit; the typed errors leave nothing behind; Kart import into a non-empty store grafts;
and the ``datae table`` command line."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from dulwich.objects import Tree
from dulwich.repo import Repo

import fstore
import fstore.tables as tables
from fstore.errors import UnknownRefError
from fstore.tables import (
    ExportTargetError,
    KartExport,
    KartRepo,
    KartRepoError,
    KartVersionError,
    NoTablesError,
    export_kart_repo,
    export_kart_tree,
    import_kart,
)
from fstore.tables.access import remove
from fstore.tables.kart_import import KartImport
from fstore.tables.kart_repo_export import KART_INDEX
from fstore.tables.mapping import META, PATH_STRUCTURE_ITEM, dataset_graph
from fstore.tables.paths import LEGACY

from tests.kart_fixtures import archive_id, archives, unpack_archive
from tests.cli_fixtures import run_cli

ARCHIVES = archives()
COLUMNS = [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
           {"id": "v", "name": "v", "dataType": "text"}]



@dataclass
class RoundTrip:
    kart: Path
    out: Path
    store: fstore.Repository
    imported: KartImport
    exported: KartExport

    def git_id(self, kart_id: str) -> str:
        datae_id = self.imported.commits[kart_id]
        git_id = self.exported.commits[datae_id]
        assert git_id is not None, f"Kart commit {kart_id} was not exported"
        return git_id


@pytest.fixture(scope="module", params=ARCHIVES, ids=archive_id)
def trip(request, tmp_path_factory):
    """One archive unpacked, imported into a new store and exported (once per module)."""
    root = tmp_path_factory.mktemp("kart-export")
    kart = unpack_archive(request.param, root / "src")
    store = fstore.open(root / "store")
    imported = import_kart(store, kart)
    exported = export_kart_repo(store, root / "out")
    yield RoundTrip(kart, root / "out", store, imported, exported)
    store.close()


def test_all_eleven_archives():
    assert len(ARCHIVES) == 11


def _assert_same_trees(kart_dir: Path, out: Path, git_id) -> None:
    with KartRepo(kart_dir) as a, KartRepo(out) as b:
        commits = list(a.commits())
        assert commits
        for commit in commits:
            mine = b.commit(git_id(commit.id))
            assert mine.tree == commit.tree, f"root tree of {commit.id}"
            theirs = {ds.name: ds for ds in a.datasets(commit.id)}
            ours = {ds.name: ds for ds in b.datasets(mine.id)}
            assert ours.keys() == theirs.keys()
            for name, ds in theirs.items():
                assert ours[name].tree_id == ds.tree_id, f"{name} at {commit.id}"
                assert ours[name].parent_tree_id == ds.parent_tree_id


def _assert_same_graph(kart_dir: Path, out: Path, git_id, exported: KartExport) -> None:
    with KartRepo(kart_dir) as a, KartRepo(out) as b:
        commits = list(a.commits())
        assert len(list(b.commits())) == len(commits)
        for commit in commits:
            mine = b.commit(git_id(commit.id))
            assert mine.parents == tuple(git_id(p) for p in commit.parents)
            assert mine.message == commit.message
            assert (mine.author, mine.author_time) == (commit.author, commit.author_time)
        heads = {name: sha for name, sha in a.refs().items() if not name.startswith("tags/")}
        assert exported.branches == {name: git_id(sha) for name, sha in heads.items()}
        assert b.refs() == {name: git_id(sha) for name, sha in a.refs().items()}
        assert b.structure_version == "3"


def test_every_commit_has_the_same_trees(trip):
    _assert_same_trees(trip.kart, trip.out, trip.git_id)


def test_commit_graph_and_metadata(trip):
    _assert_same_graph(trip.kart, trip.out, trip.git_id, trip.exported)


def test_kart_merges_import_and_export_as_merges(tmp_path):
    """Kart merge commits (made here with dulwich on conflicts/points: one resolved as
    "ours", one ``--no-ff`` whose first parent is an ancestor of the second) import as
    merge commits holding exactly Kart's state, and export with Kart's trees and graph."""
    by_name = {archive_id(a): a for a in ARCHIVES}
    kart = unpack_archive(by_name["conflicts/points.tgz"], tmp_path / "src")
    git = Repo(str(kart / ".kart"))
    try:
        def merge(parents: list[bytes], tree_of: bytes, message: bytes, when: int) -> bytes:
            from dulwich.objects import Commit

            c = Commit()
            c.tree, c.parents = git[tree_of].tree, parents
            c.author = c.committer = b"Kim <kim@example.org>"
            c.author_time = c.commit_time = when
            c.author_timezone = c.commit_timezone = 0
            c.message = message
            git.object_store.add_object(c)
            return c.id

        ours, theirs = git.refs[b"refs/heads/ours_branch"], git.refs[b"refs/heads/theirs_branch"]
        resolved = merge([ours, theirs], ours, b"Merge theirs, keeping ours\n", 1_700_000_000)
        git.refs[b"refs/heads/resolved"] = resolved
        base = git.refs[b"refs/heads/ancestor_branch"]
        git.refs[b"refs/heads/no-ff"] = merge([base, theirs], theirs, b"Merge --no-ff", 1_700_000_100)
    finally:
        git.close()
    store = fstore.open(tmp_path / "store")
    try:
        imported = import_kart(store, kart)
        for branch in ("resolved", "no-ff"):
            assert len(store.commit(branch).parents) == 2
        assert store.verify() == []
        exported = export_kart_repo(store, tmp_path / "out")

        def git_id(kart_id: str) -> str:
            return exported.commits[imported.commits[kart_id]]

        _assert_same_trees(kart, tmp_path / "out", git_id)
        _assert_same_graph(kart, tmp_path / "out", git_id, exported)
    finally:
        store.close()


def test_layout_is_kart_s(trip):
    names = {p.name for p in trip.out.iterdir()}
    assert names == {".kart", ".git", "KART_README.txt"}
    assert (trip.out / ".git").read_text() == "gitdir: .kart\n"
    assert (trip.out / ".kart" / "index").read_bytes() == KART_INDEX == (trip.kart / ".kart" / "index").read_bytes()
    git = Repo(str(trip.out))
    try:
        assert git.refs.read_ref(b"HEAD") == b"ref: refs/heads/main"
        assert git.get_config().get((b"kart", b"repostructure"), b"version") == b"3"
        assert git.get_config().get((b"kart", b"workingcopy"), b"location") == b"out.gpkg"
        assert not git.bare
    finally:
        git.close()
    assert list((trip.out / ".kart" / "objects" / "pack").glob("*.pack"))


def test_export_imports_back_to_the_same_states(trip, tmp_path):
    again = fstore.open(tmp_path / "again")
    try:
        import_kart(again, trip.out)
        for name, head in trip.exported.branches.items():
            assert again.commit(name).digest == trip.store.commit(name).digest
        # UTC times and committer = author: a second export has the very same commit ids
        assert export_kart_repo(again, tmp_path / "out").branches == trip.exported.branches
    finally:
        again.close()


# -- histories made here ---------------------------------------------------------------

def _files(git: Repo, tree_id: bytes, prefix: str = "") -> dict[str, bytes]:
    out = {}
    for entry in git[tree_id].iteritems():
        path = prefix + entry.path.decode()
        if isinstance(git[entry.sha], Tree):
            out.update(_files(git, entry.sha, path + "/"))
        else:
            out[path] = git[entry.sha].as_raw_string()
    return out


def _dir_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _assert_like_tree_export(store, result: KartExport, out: Path, tmp_path: Path) -> None:
    """Every exported commit holds what export_kart_tree writes for its datae commit."""
    git = Repo(str(out))
    try:
        for i, (datae_id, git_id) in enumerate(result.commits.items()):
            if git_id is None:
                continue
            d = tmp_path / f"tree{i}"
            d.mkdir()
            export_kart_tree(store.at(datae_id), d)
            files = _files(git, git[git_id.encode()].tree)
            assert files.pop(".kart.repostructure.version") == b"3\n"
            assert files == _dir_files(d), datae_id
    finally:
        git.close()


@pytest.fixture
def store(tmp_path):
    repo = fstore.open(tmp_path / "store")
    yield repo
    repo.close()


def _rdf(store, branch: str, n: int) -> str:
    with store.transaction(branch, message=f"rdf {n}", author="Ann <ann@example.org>") as tx:
        fstore.add(tx, None, fstore.IRI(f"urn:s{n}"), fstore.IRI("urn:p"), n)
    return tx.commit_id


def test_merges_and_commits_without_tables(store, tmp_path):
    first_rdf = _rdf(store, "main", 0)
    with store.transaction("main", message="create", author="Ann <ann@example.org>") as tx:
        t = tables.create(tx, "t", COLUMNS)
        t.insert_many([{"k": i, "v": f"v{i}"} for i in range(10)])
    create = tx.commit_id
    store.branch("b", "main")
    store.branch("rdf-only", "main")
    with store.transaction("main", message="main edits", author="Ann <ann@example.org>") as tx:
        tx.table("t").update({"k": 1, "v": "main"})
    rdf = _rdf(store, "b", 1)
    with store.transaction("b", message="b edits", author="Bob <bob@example.org>") as tx:
        tx.table("t").update({"k": 2, "v": "b"})
        tx.table("t").delete(3)
    _rdf(store, "rdf-only", 2)
    merge = store.merge("main", "b", message="merge b")
    simplified = store.merge("main", "rdf-only", message="merge rdf-only")
    result = export_kart_repo(store, tmp_path / "out")
    assert result.commits[first_rdf] is None  # before the first table
    git = Repo(str(tmp_path / "out"))
    try:
        merged = git[result.commits[merge].encode()]
        assert len(merged.parents) == 2
        assert len(store.commit(simplified).parents) == 2
        assert result.commits[simplified] == merged.id.decode()  # merged only RDF: left out
        assert result.commits[rdf] == result.commits[create]  # RDF only: its parent's
        assert len(list(git.get_walker())) == 4  # create, main edits, b edits, merge
    finally:
        git.close()
    _assert_like_tree_export(store, result, tmp_path / "out", tmp_path)


def test_v2_style_dataset_gets_the_legacy_structure_and_a_drop_empties_the_tree(store, tmp_path):
    with store.transaction("main", message="create") as tx:
        tables.create(tx, "t", COLUMNS).insert({"k": 1, "v": "a"})
    ps = next(store.at("main").table_tuples((dataset_graph("t"), PATH_STRUCTURE_ITEM, META, fstore.Var("o"))))[3]
    with store.transaction("main", message="like a V2 import") as tx:
        remove(tx, dataset_graph("t"), PATH_STRUCTURE_ITEM, META, ps)
    with store.transaction("main", message="drop") as tx:
        tables.drop(tx, "t")
    result = export_kart_repo(store, tmp_path / "out")
    git = Repo(str(tmp_path / "out"))
    try:
        create, v2, dropped = [git[result.commits[c.id].encode()] for c in reversed(list(store.log("main")))]
        assert _files(git, v2.tree)["t/.table-dataset/meta/path-structure.json"] == LEGACY.dumps()
        assert _files(git, dropped.tree) == {".kart.repostructure.version": b"3\n"}
        assert dropped.parents == [v2.id] and v2.parents == [create.id]
    finally:
        git.close()


def test_ref_exports_one_history(store, tmp_path):
    with store.transaction("main", message="create") as tx:
        tables.create(tx, "t", COLUMNS).insert({"k": 1, "v": "a"})
    store.branch("dev", "main")
    with store.transaction("dev", message="dev") as tx:
        tx.table("t").insert({"k": 2, "v": "b"})
    store.tag("v1", "main")
    everything = export_kart_repo(store, tmp_path / "all")
    assert sorted(everything.branches) == ["dev", "main"] and list(everything.tags) == ["v1"]
    (tmp_path / "empty").mkdir()  # an empty directory is a fine target
    only = export_kart_repo(store, tmp_path / "empty", ref="dev")
    assert list(only.branches) == ["dev"] and only.head == "dev" and not only.tags
    assert only.branches["dev"] == everything.branches["dev"]  # same content, same ids
    by_id = export_kart_repo(store, tmp_path / "by-id", ref=store.commit("main").id)
    assert list(by_id.branches) == ["main"]


# -- errors ----------------------------------------------------------------------------

def _made(store) -> None:
    with store.transaction("main", message="create") as tx:
        tables.create(tx, "t", COLUMNS).insert({"k": 1, "v": "a"})


def test_target_errors(store, tmp_path):
    _made(store)
    (tmp_path / "file").write_text("x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(ExportTargetError, match="is a file") as e:
        export_kart_repo(store, tmp_path / "file")
    assert e.value.path == str(tmp_path / "file")
    with pytest.raises(ExportTargetError, match="not empty"):
        export_kart_repo(store, tmp_path / "full")
    with pytest.raises(ExportTargetError, match="does not exist"):
        export_kart_repo(store, tmp_path / "no" / "such")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "full", "store"]


def test_ref_errors(store, tmp_path):
    with pytest.raises(NoTablesError):  # main has no commits yet
        export_kart_repo(store, tmp_path / "out", ref="main")
    _rdf(store, "main", 1)
    with pytest.raises(NoTablesError, match="'main'") as e:
        export_kart_repo(store, tmp_path / "out", ref="main")
    assert e.value.ref == "main"
    with pytest.raises(NoTablesError):
        export_kart_repo(store, tmp_path / "out")
    with pytest.raises(UnknownRefError, match="nope"):
        export_kart_repo(store, tmp_path / "out", ref="nope")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]


def test_failure_mid_export_leaves_nothing(store, tmp_path, monkeypatch):
    from fstore.tables import kart_repo_export

    _made(store)
    with store.transaction("main", message="more") as tx:
        tx.table("t").insert({"k": 2, "v": "b"})
    real = kart_repo_export._Exporter.commit
    calls = []

    def failing(self, tx, commit):
        calls.append(commit.id)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(self, tx, commit)

    monkeypatch.setattr(kart_repo_export._Exporter, "commit", failing)
    with pytest.raises(OSError, match="disk full"):
        export_kart_repo(store, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]


# -- import into a non-empty store -----------------------------------------------------

@pytest.fixture(scope="module")
def kart_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("kart-src")
    by_name = {archive_id(a): a for a in ARCHIVES}
    return {name: unpack_archive(by_name[name], root / name.replace("/", "-"))
            for name in ("points.tgz", "types.tgz")}


def test_unsupported_version_is_refused(store, kart_dirs, tmp_path):
    copy = tmp_path / "v9"
    shutil.copytree(kart_dirs["types.tgz"], copy)
    config = copy / ".kart" / "config"
    config.write_text(config.read_text().replace("version = 3", "version = 9"))
    with pytest.raises(KartVersionError, match="version '9'") as e:
        import_kart(store, copy)
    assert e.value.version == "9" and str(copy) in str(e.value)
    assert store.branches() == {"main": None}


def test_import_grafts_onto_the_current_branch(store, kart_dirs, tmp_path):
    _made(store)
    before = store.commit("main").id
    result = import_kart(store, kart_dirs["types.tgz"], onto="main")
    assert set(result.branches) == {"main", "2d-geometry-only", "unconstrained-numerics"}
    root = store.commit(result.commits["95f0296215c107e649ffaad7b2ead832ca6ba13e"])
    assert root.parents == (before,)
    for branch in result.branches:
        assert tables.list_tables(store.at(branch)) == ["manytypes", "t"]
    # the export keeps the graft: the store's table first, Kart's history on top
    exported = export_kart_repo(store, tmp_path / "out")
    with KartRepo(tmp_path / "out") as out, KartRepo(kart_dirs["types.tgz"]) as kart:
        for kart_id, datae_id in result.commits.items():
            ours = {ds.name: ds.tree_id for ds in out.datasets(exported.commits[datae_id])}
            theirs = {ds.name: ds.tree_id for ds in kart.datasets(kart_id)}
            assert ours.pop("t") and ours == theirs


def test_import_refusals_leave_the_store_unchanged(store, kart_dirs):
    _made(store)
    import_kart(store, kart_dirs["points.tgz"], onto="main")
    head = store.commit("main").id
    with pytest.raises(KartRepoError, match="'nz_pa_points_topo_150k' is in the Kart repository and at 'main'"):
        import_kart(store, kart_dirs["points.tgz"], onto="main")
    with pytest.raises(KartRepoError, match="branch 'main' already has commits"):
        import_kart(store, kart_dirs["types.tgz"])  # not grafted: main cannot take it
    assert store.commit("main").id == head
    result = import_kart(store, kart_dirs["points.tgz"], branch_prefix="kart/")  # a history of its own
    assert store.commit("kart/main").parents and store.log("kart/main")
    assert head not in {c.id for c in store.log("kart/main")} and result.branches["kart/main"]


# -- the command line --------------------------------------------------------------------

run = run_cli


def test_cli_export_and_import(tmp_path, capsys, monkeypatch, kart_dirs):
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "init")[0] == 0
    (tmp_path / "towns.csv").write_text("fid,name\n1,a\n2,b\n")
    assert run(capsys, "table", "import", "towns.csv", "--pk", "fid")[0] == 0
    code, out, err = run(capsys, "table", "import", str(kart_dirs["types.tgz"]))  # grafted onto main
    assert code == 0, err
    code, out, err = run(capsys, "table", "export", "--kart", "out")
    assert code == 0, err
    assert out.startswith("4 commits written to Kart repository out (branches: ")
    with KartRepo(tmp_path / "out") as kart:
        assert [ds.name for ds in kart.datasets("main")] == ["manytypes", "towns"]
        assert len(list(kart.commits(["main"]))) == 2
    code, out, err = run(capsys, "table", "export", "--kart", "dev-only", "--ref", "unconstrained-numerics")
    assert code == 0 and "unconstrained-numerics" in out
    code, out, err = run(capsys, "table", "import", str(kart_dirs["points.tgz"]), "--branch-prefix", "kart/")
    assert code == 0, err
    assert "kart/main" in run(capsys, "branch")[1]
    for argv, message in [(("--kart", "out"), "not empty"), (("--kart", "towns.csv"), "is a file"),
                          (("--kart", "x", "--ref", "nope"), "unknown ref 'nope'"), ((), "name a destination")]:
        code, out, err = run(capsys, "table", "export", *argv)
        assert code != 0 and out == ""
        assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "x").exists()
    code, out, err = run(capsys, "table", "import", str(kart_dirs["types.tgz"]))  # its branches moved on
    assert code != 0 and err.count("\n") == 1 and "'2d-geometry-only' already has commits" in err
    assert os.path.isdir(tmp_path / "dev-only" / ".kart")
