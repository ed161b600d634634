"""Every Kart test repository imported into datae with its whole history: at every commit
every row equals Kart's (blob for blob, and decoded); exporting each head as a V3 tree
reproduces Kart's files byte for byte; meta-updates' feature 77 reads through each later
schema; the conflicts/* repositories merge cell-wise and report exactly the conflicting
rows and cells; V2 datasets and Kart merge commits import too."""

from __future__ import annotations

import os

import pytest
import fstore
from fstore.tables import KartRepo, raw_feature
from fstore.tables.kart_export import export_kart_tree
from fstore.tables.kart_import import import_kart, kart_time
from fstore.tables.row_merge import RowConflict

from tests.kart_fixtures import (archive_id, archives, build_kart_repo, from_json_value, load_vectors, unpack_archive,
                                  v2_dataset_vector, v2_sno_dataset_files)

V = load_vectors()
ARCHIVES = archives()



@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """Each archive unpacked and imported once: {archive id: (kart dir, repo, import result)}."""
    root = tmp_path_factory.mktemp("tables-kart")
    out = {}
    for i, archive in enumerate(ARCHIVES):
        workdir = unpack_archive(archive, root / f"src{i}")
        repo = fstore.open(root / f"repo{i}")
        out[archive_id(archive)] = (workdir, repo, import_kart(repo, workdir))
    yield out
    for _, repo, _ in out.values():
        repo.close()


@pytest.mark.parametrize("archive", ARCHIVES, ids=archive_id)
def test_whole_history_imports(archive, imported):
    workdir, repo, result = imported[archive_id(archive)]
    with KartRepo(workdir) as kart:
        commits = list(kart.commits())
        assert set(result.commits) == {c.id for c in commits}
        for kc in commits:
            commit = repo.commit(result.commits[kc.id])
            # the original message, author and time; the same parents
            assert (commit.message, commit.author) == (kc.message, kc.author)
            assert commit.time == kart_time(kc.author_time, kc.author_tz)
            assert commit.parents == tuple(result.commits[p] for p in kc.parents)
            view = repo.at(commit.id)
            datasets = list(kart.datasets(kc.id))
            assert fstore.tables.list_tables(view) == sorted(ds.name for ds in datasets)
            for ds in datasets:
                table = view.table(ds.name)
                assert table.schema.dumps() == ds.schema_json
                assert table.title == ds.title and table.description == ds.description
                blobs = {f.path: f.blob for f in ds.features()}
                assert dict(table.features()) == blobs
                assert len(table) == len(blobs)
                # every row equals Kart's blob decoded, in stored and in Python values
                kart_rows = {f.pk_values: ds.schema.adapt(raw) for f, raw in ds.raw_features()}
                mine = {tuple(r[c.name] for c in table.schema.pk_columns): r for r in table.rows(python=False)}
                assert mine == kart_rows
                for pk, row in list(kart_rows.items())[:25]:
                    assert table.get(pk if len(pk) > 1 else pk[0], python=False) == row
                    assert table.get(pk if len(pk) > 1 else pk[0]) == ds.get_row(list(pk))
        # branches point at the mapped heads
        for name, kart_id in kart.refs().items():
            if not name.startswith("tags/"):
                assert repo.resolve(name) == result.commits[kart_id]
    assert repo.verify() == []


def _tree_files(kart, commit, name):
    """{path below the dataset's directory: bytes} for a dataset at a commit, plus its
    attachments (path relative to the dataset name)."""
    ds = kart.dataset(commit, name)
    files = {f".table-dataset/meta/{p}": data for p, data in ds.meta_items()}
    files.update({f".table-dataset/feature/{f.path}": f.blob for f in ds.features()})
    files.update(dict(ds.attachments()))
    return files


@pytest.mark.parametrize("archive", ARCHIVES, ids=archive_id)
def test_export_head_byte_for_byte(archive, imported, tmp_path):
    workdir, repo, result = imported[archive_id(archive)]
    with KartRepo(workdir) as kart:
        heads = {}
        for branch, kart_id in kart.refs().items():
            if not branch.startswith("tags/"):
                heads.setdefault(kart_id, branch)  # each distinct head once
        for kart_id, branch in heads.items():
            dest = tmp_path / branch
            written = export_kart_tree(repo.at(branch), dest)
            for ds in kart.datasets(kart_id):
                expected = _tree_files(kart, kart_id, ds.name)
                root = dest / ds.name
                found = {}
                for dirpath, _dirs, files in os.walk(root):
                    for f in files:
                        full = os.path.join(dirpath, f)
                        found[os.path.relpath(full, root).replace(os.sep, "/")] = open(full, "rb").read()
                assert found == expected
                assert written[ds.name] == ds.feature_count()


def test_meta_updates_feature_77_through_later_schemas(imported):
    history = V["schema_evolution_history"]
    _, repo, result = imported["meta-updates.tgz"]
    name = history["dataset"]
    commits = [result.commits[c["commit"]] for c in history["commits"]]
    for i, vc in enumerate(history["commits"]):
        table = repo.at(commits[i]).table(name)
        expected = {k: from_json_value(v) for k, v in vc["feature_77_decoded_with_this_schema"].items()}
        assert table.get(77, python=False) == expected
        assert table.blob(77) == bytes.fromhex(vc["feature_77_blob_hex"])
        assert sorted(k[len("legend/"):] for k in table.meta if k.startswith("legend/")) == vc["legend_files"]
        assert len(table) == vc["feature_count"]
        # this commit's blob read through every later commit's schema (and legends)
        for j in range(i, len(commits)):
            later = repo.at(commits[j]).table(name)
            later_expected = {k: from_json_value(v) for k, v in
                              history["commits"][j]["feature_77_decoded_with_this_schema"].items()}
            raw = raw_feature(table.blob(77), [77], later.reader.legend)
            assert later.schema.adapt(raw) == later_expected
    # Kart rewrote every row when it dropped the column (commit 3), but the rename and the
    # type change (commits 4 and 5) change only meta items: no row quad
    for commit in commits[3:]:
        changed = {q[2] for op, q in fstore.tables.raw_diff(repo, repo.commit(commit).parents[0], commit)}
        assert changed == {fstore.tables.META}, changed


# Worked out from the ancestor / ours / theirs data (see test_kart_repos.CONFLICTS): rows
# 1 and 6 change on one side only, row 2 the same way on both, rows 3, 4 and 5 change the
# name cell differently on each side, and 98001 / POLY9999999 is inserted on both sides
# with different values in that column.
EXPECTED_CONFLICTS = {
    "conflicts/points.tgz": ("nz_pa_points_topo_150k", "name", {
        (3,): "update/update", (4,): "update/update", (5,): "update/update", (98001,): "insert/insert"}),
    "conflicts/table.tgz": ("countiestbl", "NAME", {
        (3,): "update/update", (4,): "update/update", (5,): "update/update", (98001,): "insert/insert"}),
    "conflicts/string-pks.tgz": ("nz_waca_adjustments", "survey_reference", {("POLY9999999",): "insert/insert"}),
}


@pytest.mark.parametrize("archive", sorted(EXPECTED_CONFLICTS))
def test_conflict_repos_merge_cell_wise(archive, imported):
    table, column, expected = EXPECTED_CONFLICTS[archive]
    workdir, repo, result = imported[archive]
    before = repo.branches()
    with pytest.raises(fstore.MergeConflict) as info:
        repo.merge("ours_branch", "theirs_branch")
    assert repo.branches() == before  # nothing written
    conflicts = info.value.conflicts
    assert all(isinstance(c, RowConflict) for c in conflicts)
    assert {c.pk: c.kind for c in conflicts} == expected
    assert all(c.table == table and list(c.cells) == [column] for c in conflicts)
    with KartRepo(workdir) as kart:
        sides = {side: {f.pk_values: ds.schema.adapt(raw) for ds in kart.datasets(side) for f, raw in ds.raw_features()}
                 for side in ("ancestor_branch", "ours_branch", "theirs_branch")}
    for c in conflicts:
        base, ours, theirs = c.cells[column]
        assert ours == sides["ours_branch"][c.pk][column] and theirs == sides["theirs_branch"][c.pk][column]
        assert base == (sides["ancestor_branch"][c.pk][column] if c.pk in sides["ancestor_branch"] else None)
    # "theirs" resolves conflicting cells their way and merges the rest cell-wise
    repo.branch("merge-theirs", "ours_branch")
    merged = repo.merge("merge-theirs", "theirs_branch", policy="theirs")
    rows = {tuple(r[c.name] for c in repo.at(merged).table(table).schema.pk_columns): r
            for r in repo.at(merged).table(table).rows(python=False)}
    a, o, t = sides["ancestor_branch"], sides["ours_branch"], sides["theirs_branch"]
    for pk in set(a) | set(o) | set(t):
        if pk in expected:
            assert rows[pk] == t[pk]
        elif o.get(pk) == a.get(pk):
            assert rows.get(pk) == t.get(pk)
        else:
            assert rows.get(pk) == o.get(pk)
    assert repo.verify() == []


def test_v2_sno_dataset_imports(tmp_path):
    """A V2 ``.sno-dataset`` (legacy paths, ``"primaryKeyIndex": null``) imports and
    exports as a V3 tree with the legacy path structure written out."""
    ds = v2_dataset_vector()
    files = v2_sno_dataset_files(ds)
    (tmp_path / "kart").mkdir()
    build_kart_repo(tmp_path / "kart", [("main", [], files, 1_600_000_000)])
    repo = fstore.open(tmp_path / "repo")
    import_kart(repo, tmp_path / "kart")
    table = repo.at("main").table("nz_pa_points_topo_150k")
    assert table.schema.dumps() == ds["schema_json_bytes"].encode()
    for f in ds["sample_features"]:
        expected = {k: from_json_value(v) for k, v in f["decoded_by_column_name"].items()}
        assert table.get(f["pk_values"][0], python=False) == expected
    export_kart_tree(repo.at("main"), tmp_path / "out")
    meta = tmp_path / "out" / "nz_pa_points_topo_150k" / ".table-dataset" / "meta"
    assert (meta / "path-structure.json").read_bytes() == fstore.tables.LEGACY.dumps()
    repo.close()


def test_kart_merge_commit_becomes_a_merge(tmp_path, imported):
    """A Kart history with a merge commit (built here from the conflicts/table data: the
    merge takes theirs for every conflicting row) imports as a datae merge with the same
    parents, and every commit reads as Kart's."""
    workdir, _, _ = imported["conflicts/table.tgz"]
    with KartRepo(workdir) as kart:
        refs = kart.refs()
        trees = {}
        for side in ("ancestor_branch", "ours_branch", "theirs_branch"):
            (ds,) = kart.datasets(refs[side])
            trees[side] = _tree_files(kart, refs[side], ds.name)
        name = ds.name
    a, o, t = trees["ancestor_branch"], trees["ours_branch"], trees["theirs_branch"]
    merged = dict(o)  # a three-way merge where theirs wins every conflict
    for path in set(a) | set(t):
        if t.get(path) != a.get(path):
            if path in t:
                merged[path] = t[path]
            else:
                merged.pop(path, None)

    def files(tree):
        return {f"{name}/{p}": data for p, data in tree.items()}

    (tmp_path / "kart").mkdir()
    ids = build_kart_repo(tmp_path / "kart", [
        ("base", [], files(a), 100),
        ("ours", ["base"], files(o), 200),
        ("theirs", ["base"], files(t), 300),
        ("merge", ["ours", "theirs"], files(merged), 400),
    ])
    repo = fstore.open(tmp_path / "repo")
    result = import_kart(repo, tmp_path / "kart")
    merge = repo.commit(result.commits[ids["merge"]])
    assert merge.parents == (result.commits[ids["ours"]], result.commits[ids["theirs"]])
    with KartRepo(tmp_path / "kart") as kart:
        for cid in ids.values():
            (ds,) = kart.datasets(cid)
            table = repo.at(result.commits[cid]).table(name)
            assert dict(table.features()) == {f.path: f.blob for f in ds.features()}
    assert repo.verify() == []
    repo.close()


def test_import_refuses_branches_with_commits(tmp_path, imported):
    workdir, _, _ = imported["points.tgz"]
    repo = fstore.open(tmp_path / "repo")
    with repo.transaction("main", message="mine") as tx:
        fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("urn:b"), 1)
    before = repo.branches()
    with pytest.raises(fstore.tables.KartRepoError, match="already has commits"):
        import_kart(repo, workdir)
    assert repo.branches() == before
    result = import_kart(repo, workdir, branch_prefix="kart/")
    assert set(result.branches) == {"kart/main"}
    assert len(repo.at("kart/main").table("nz_pa_points_topo_150k")) == 2143
    repo.close()
