"""Every Kart test repository (conflicts/*.tgz included) read with dulwich at every commit:
rows decode, re-encoding each feature with its own legend gives Kart's blob byte for byte
(directly and via Python values), schema.json / legends / path-structure.json re-serialise
byte for byte, every feature sits at the path its primary key implies, and in meta-updates
feature 77 reads correctly through each later schema."""

from __future__ import annotations

import inspect

import pytest

from fstore.tables import (
    KartRepo,
    KartRepoError,
    Legend,
    PathStructure,
    Schema,
    decode_feature,
    decode_value,
    encode_raw,
    encode_value,
    raw_feature,
)

from tests.kart_fixtures import (archive_id, archives, build_kart_repo, from_json_value, load_vectors, unpack_archive,
                                  v2_dataset_vector, v2_sno_dataset_files)

V = load_vectors()
ARCHIVES = archives()
VECTOR_REPOS = {r["archive"].rsplit("/", 1)[1]: r for r in V["test_data_repos"] if "/upgrade/" not in r["archive"]}



@pytest.fixture(scope="module")
def workdirs(tmp_path_factory):
    """Each archive unpacked once for the module: {archive id: Kart working dir}."""
    root = tmp_path_factory.mktemp("kart")
    out = {}
    for i, archive in enumerate(ARCHIVES):
        out[archive_id(archive)] = unpack_archive(archive, root / str(i))
    return out


def test_all_archives_present():
    names = {archive_id(a) for a in ARCHIVES}
    assert {"points.tgz", "polygons.tgz", "table.tgz", "types.tgz", "string-pks.tgz", "pk-second.tgz",
            "empty-geometry.tgz", "meta-updates.tgz", "conflicts/points.tgz", "conflicts/string-pks.tgz",
            "conflicts/table.tgz"} <= names


def _check_dataset(ds):
    """Everything about one dataset at one commit; returns the number of features."""
    schema_bytes = ds.schema_json
    schema = Schema.from_json(schema_bytes, strict=False)
    assert schema.dumps() == schema_bytes
    assert Schema.from_json(schema_bytes).dumps() == schema_bytes  # strictly valid too
    legends = ds.legends
    for name, blob in ds.legend_blobs().items():
        assert Legend.loads(blob, name=name).dumps() == blob
    assert schema.legend.name in legends
    if ds.version == 3:
        ps_bytes = ds.path_structure_json
        assert PathStructure.from_json(ps_bytes).dumps() == ps_bytes
    meta = dict(ds.meta_items())
    assert meta["schema.json"] == schema_bytes
    for ident, wkt in ds.crs_definitions().items():
        assert meta[f"crs/{ident}.wkt"].decode() == wkt
        assert any(c.extra_type_info.get("geometryCRS") == ident for c in schema.geometry_columns)
    features = ds.features()
    assert inspect.isgenerator(features)
    n = 0
    for f in features:
        n += 1
        assert ds.path_structure.encode_path(f.pk_values) == f.path
        legend_name, values = decode_feature(f.blob)
        legend = legends[legend_name]
        raw = raw_feature(f.blob, f.pk_values, legends)
        # Re-encoding with the feature's own legend reproduces Kart's bytes...
        assert encode_raw(legend, raw) == (f.pk_values, f.blob)
        # ...also after a round trip through Python values and validation.
        python = {}
        for cid, value in raw.items():
            python[cid] = decode_value(schema.by_id(cid), value) if cid in schema else value
        back = {cid: encode_value(schema.by_id(cid), v) if cid in schema else v for cid, v in python.items()}
        assert encode_raw(legend, back) == (f.pk_values, f.blob)
        row = schema.adapt(raw)
        assert list(row) == schema.column_names
    return n


@pytest.mark.parametrize("archive", ARCHIVES, ids=archive_id)
def test_repository_every_commit(archive, workdirs):
    with KartRepo(workdirs[archive_id(archive)]) as repo:
        refs = repo.refs()
        assert refs and repo.head in refs.values()
        seen = set()
        commits = list(repo.commits())
        assert {c.id for c in commits} >= set(refs.values())
        total = 0
        for commit in commits:
            assert all(p in seen for p in commit.parents), "parents come first"
            seen.add(commit.id)
            assert commit.message.strip() and "@" in commit.author_email and commit.author_time > 0
            datasets = list(repo.datasets(commit.id))
            assert datasets
            for ds in datasets:
                assert ds.version == 3 and ds.dirname == ".table-dataset"
                assert ds.title
                total += _check_dataset(ds)
        assert total > 0
        vec = VECTOR_REPOS.get(archive.name) if archive.parent.name == "kart" else None
        if vec:
            assert repo.head == vec["head_commit"]
            for vds in vec["datasets"]:
                ds = repo.dataset(repo.head, vds["dataset_path"])
                assert ds.feature_count() == vds["feature_count"]
                assert ds.schema_json == vds["schema_json_bytes"].encode()
                for sample in vds["sample_features"]:
                    expected = {k: from_json_value(v) for k, v in sample["decoded_by_column_name"].items()}
                    assert ds.get_row(sample["pk_values"], python=False) == expected
                    assert ds.feature_blob(sample["pk_values"]) == bytes.fromhex(sample["blob_hex"])


def test_rows_stream_python_values(workdirs):
    import datetime as dt
    from decimal import Decimal

    from fstore.tables import Geometry, Interval

    with KartRepo(workdirs["types.tgz"]) as repo:
        ds = repo.dataset("main", "manytypes")
        rows = ds.rows()
        assert inspect.isgenerator(rows)
        by_pk = {r["PK"]: r for r in rows}
    assert set(by_pk) == {0, 1, 2, 3}
    assert all(v is None for k, v in by_pk[0].items() if k != "PK")
    r = by_pk[1]
    assert isinstance(r["geom"], Geometry) and r["geom"].geometry_type_name == "LINESTRING ZM"
    assert r["date"] == dt.date(2000, 1, 1)
    assert r["time"] == dt.time(18, 19, 20)
    assert r["timestamp"] == dt.datetime(2000, 1, 1, 11, 12, 13)
    assert r["timestampUTC"] == dt.datetime(2001, 1, 1, 18, 19, 20, tzinfo=dt.timezone.utc)
    assert r["numeric10_5"] == Decimal("123.45600") and str(r["numeric10_5"]) == "123.45600"
    assert r["interval"] == Interval(days=3)
    assert by_pk[3]["interval"] == Interval(days=4, hours=3, minutes=2, seconds=Decimal(1))
    assert r["blob"].startswith(b"\x89PNG") and r["boolean"] is True


def test_meta_updates_feature_77_through_later_schemas(workdirs):
    history = V["schema_evolution_history"]
    with KartRepo(workdirs["meta-updates.tgz"]) as repo:
        commits = list(repo.commits())
        assert [c.id for c in commits] == [c["commit"] for c in history["commits"]]
        snapshots = []
        for c, vc in zip(commits, history["commits"]):
            ds = repo.dataset(c.id, history["dataset"])
            assert c.message.strip() == vc["message"]
            assert sorted(ds.legend_blobs()) == vc["legend_files"]
            assert ds.feature_count() == vc["feature_count"]
            blob = ds.feature_blob([77])
            assert blob == bytes.fromhex(vc["feature_77_blob_hex"])
            expected = {k: from_json_value(v) for k, v in vc["feature_77_decoded_with_this_schema"].items()}
            assert ds.get_row([77], python=False) == expected
            snapshots.append((ds.schema, blob, ds.legends, expected))
    # Each blob, with the legends of the commit it was written at, reads through every
    # later schema exactly as that later commit's own feature 77.
    for i, (_s, blob, legends, _e) in enumerate(snapshots):
        raw = raw_feature(blob, [77], legends)
        for later_schema, _b, _l, later_expected in snapshots[i:]:
            assert later_schema.adapt(raw) == later_expected
    # The schema changes, by column id.
    s = [snap[0] for snap in snapshots]
    assert not s[0].diff(s[1])
    d = s[1].diff(s[2])
    assert d.dropped == ("d2a62351-a66d-bde2-ce3e-356fec9641e9",) and not d.added and not d.reordered
    d = s[2].diff(s[3])
    assert d.renamed == {"c3389414-a511-5385-7dcd-891c4ead1663": ("macronated", "is_macronated")}
    d = s[3].diff(s[4])
    (cid, (old, new)), = d.type_changed.items()
    assert (old.name, old.extra_type_info, new.extra_type_info) == ("t50_fid", {"size": 32}, {"size": 64})


# What each conflicts/* repository changes on each side, from the ancestor / ours / theirs
# data: {pk: (column changed on ours, column changed on theirs)} plus the insert-insert pk.
# Cell conflicts are the pks where both sides set the same column to different values.
CONFLICTS = {
    "conflicts/points.tgz": ("name", {(1,): "theirs", (2,): "both-same", (3,): "conflict", (4,): "conflict",
                                      (5,): "conflict", (6,): "ours", (98001,): "insert-insert"}),
    "conflicts/table.tgz": ("NAME", {(1,): "theirs", (2,): "both-same", (3,): "conflict", (4,): "conflict",
                                     (5,): "conflict", (6,): "ours", (98001,): "insert-insert"}),
    "conflicts/string-pks.tgz": ("survey_reference", {("POLY9999999",): "insert-insert"}),
}


@pytest.mark.parametrize("name", sorted(CONFLICTS))
def test_conflict_repos_three_way(name, workdirs):
    column, expected = CONFLICTS[name]
    with KartRepo(workdirs[name]) as repo:
        refs = repo.refs()
        ours, theirs = repo.commit(refs["ours_branch"]), repo.commit(refs["theirs_branch"])
        assert ours.parents == theirs.parents == (refs["ancestor_branch"],)
        sides = {}
        for side in ("ancestor_branch", "ours_branch", "theirs_branch"):
            (ds,) = repo.datasets(refs[side])
            sides[side] = {f.pk_values: ds.schema.adapt(raw) for f, raw in ds.raw_features()}
    a, o, t = sides["ancestor_branch"], sides["ours_branch"], sides["theirs_branch"]
    found = {}
    for pk in set(a) | set(o) | set(t):
        ra, ro, rt = a.get(pk), o.get(pk), t.get(pk)
        if ro == ra == rt:
            continue
        if ra is None:
            assert ro and rt and {k for k in ro if ro[k] != rt[k]} == {column}
            found[pk] = "insert-insert"
            continue
        changed_o = {k for k in ra if ro[k] != ra[k]}
        changed_t = {k for k in ra if rt[k] != ra[k]}
        assert changed_o | changed_t == {column}
        if changed_o and changed_t:
            found[pk] = "both-same" if ro == rt else "conflict"
        else:
            found[pk] = "ours" if changed_o else "theirs"
    assert found == expected


def test_errors(tmp_path, workdirs):
    with pytest.raises(KartRepoError):
        KartRepo(tmp_path)
    with KartRepo(workdirs["points.tgz"]) as repo:
        with pytest.raises(KartRepoError):
            repo.resolve("no-such-branch")
        with pytest.raises(KartRepoError):
            repo.dataset("main", "no/such/dataset")
        ds = repo.dataset("main", "nz_pa_points_topo_150k")
        assert ds.get_row([999999]) is None
        assert repo.read_blob("main", ".kart.repostructure.version") == b"3\n"
        assert dict(ds.attachments())["metadata.xml"].startswith(b"<")


# -- repositories built here: V2 datasets, nested names, merge commits --------------------


def test_v2_sno_dataset(tmp_path):
    """A V2 ``.sno-dataset`` (schema with ``"primaryKeyIndex": null``, legacy hashed paths, no
    path-structure.json) built from the V2 vectors, read back exactly."""
    from fstore.tables import LEGACY

    ds = v2_dataset_vector()
    files = v2_sno_dataset_files(ds)
    files[".sno.repository.version"] = b"2\n"
    build_kart_repo(tmp_path, [("main", [], files, 1_600_000_000)])
    with KartRepo(tmp_path) as repo:
        (dataset,) = repo.datasets("main")
        assert (dataset.name, dataset.version, dataset.dirname) == ("nz_pa_points_topo_150k", 2, ".sno-dataset")
        assert dataset.path_structure == LEGACY and dataset.path_structure_json is None
        assert dataset.schema_json == ds["schema_json_bytes"].encode()
        assert dataset.schema.dumps() == dataset.schema_json  # explicit nulls kept
        assert dataset.schema["geom"].pk_index is None
        assert _check_dataset(dataset) == len(ds["sample_features"])
        rows = {r["fid"]: r for r in dataset.rows(python=False)}
        for f in ds["sample_features"]:
            assert rows[f["pk_values"][0]] == {k: from_json_value(v) for k, v in f["decoded_by_column_name"].items()}
            assert dataset.get_row(f["pk_values"], python=False) == rows[f["pk_values"][0]]


def test_nested_names_and_merge_order(tmp_path):
    """Dataset names are tree paths; commits come parents-first through a merge."""
    points = v2_dataset_vector()
    schema = points["schema_json_bytes"].encode()
    legend = points["legends"][0]
    feat = points["sample_features"][0]

    def dataset_files(name, dirname=".table-dataset", with_feature=True):
        p = f"{name}/{dirname}/"
        files = {
            p + "meta/schema.json": Schema.from_json(schema).normalised().dumps(),
            p + "meta/path-structure.json": b'{"scheme": "msgpack/hash", "branches": 256, "levels": 2, "encoding": "hex"}',
            p + "meta/title": name.encode(),
            p + "meta/legend/" + legend["filename"]: bytes.fromhex(legend["blob_hex"]),
        }
        if with_feature:
            files[p + "feature/" + feat["path"]] = bytes.fromhex(feat["blob_hex"])
        return files

    base = dataset_files("hydro/soundings", with_feature=False)
    left = {**base, **dataset_files("hydro/soundings")}
    right = {**base, **dataset_files("roads")}
    merged = {**left, **right}
    ids = build_kart_repo(
        tmp_path,
        [
            ("base", [], base, 100),
            ("right", ["base"], right, 200),  # older than "left": order still respects parents
            ("left", ["base"], left, 300),
            ("merge", ["left", "right"], merged, 400),
        ],
    )
    with KartRepo(tmp_path) as repo:
        order = [c.id for c in repo.commits()]
        assert order == [ids["base"], ids["right"], ids["left"], ids["merge"]]
        assert repo.commit(ids["merge"]).parents == (ids["left"], ids["right"])
        assert [d.name for d in repo.datasets(ids["merge"])] == ["hydro/soundings", "roads"]
        assert [d.feature_count() for d in repo.datasets(ids["merge"])] == [1, 1]
        assert [d.feature_count() for d in repo.datasets(ids["base"])] == [0]
        assert [c.id for c in repo.commits(["left"])] == [ids["base"], ids["left"]]
        ds = repo.dataset("merge", "hydro/soundings")
        assert ds.title == "hydro/soundings"
        assert ds.get_row(feat["pk_values"], python=False)["fid"] == feat["pk_values"][0]
