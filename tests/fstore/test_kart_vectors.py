"""Every input -> output pair of kart_vectors.json (taken from Kart's tests and docs) is one
test case: feature paths, GeoPackage geometry, dataset names, schema primary-key rules,
msgpack examples, path-structure errors, the test repositories' legends / schemas / sample
features, and the schema-evolution history of meta-updates (feature 77)."""

from __future__ import annotations

import hashlib
import json

import pytest

from fstore.tables import (
    GENERAL,
    INT_PK,
    LEGACY,
    DatasetNameError,
    Geometry,
    Legend,
    PathStructure,
    Schema,
    SchemaError,
    decode_feature,
    encode_raw,
    encode_row,
    from_python_row,
    pack,
    raw_feature,
    to_python_row,
    unpack,
    validate_dataset_names,
)
from fstore.tables.geometry import ENVELOPE_NONE, ENVELOPE_XY, normalise_gpkg
from fstore.tables.paths import decode_filename, encode_filename
from fstore.tables.wkb import write_wkb
from fstore.tables.wkt import parse_wkt

from tests.kart_fixtures import from_json_value, load_vectors

V = load_vectors()


def cases(key, id_of=None):
    items = V[key]
    return [
        pytest.param(v, id=f"{key}-{i}" + (f"-{id_of(v)}" if id_of and id_of(v) else ""))
        for i, v in enumerate(items)
    ]


# -- feature paths --------------------------------------------------------------------


@pytest.mark.parametrize("v", cases("feature_paths", lambda v: v["path"]))
def test_feature_path(v):
    ps = PathStructure.from_dict(v["path_structure"])
    assert ps.encode_path(v["pk_values"]) == v["path"]
    assert ps.decode_path(v["path"], check=True) == v["pk_values"]


@pytest.mark.parametrize("v", cases("path_structure_errors", lambda v: repr(v["pk_values"])))
def test_path_structure_error(v):
    ps = PathStructure.from_dict(v["path_structure"])
    expected = {"TypeError": TypeError, "ValueError": ValueError}[v["error"]]
    with pytest.raises(expected):
        ps.encode_path(v["pk_values"])


def test_filename_listing_order():
    """Git sorts tree entries bytewise: the first blobs of tree A/A/A/B (pks 64..127)."""
    v = V["filename_listing_from_tests"]
    names = {INT_PK.encode_path([pk]).rsplit("/", 1)[1] for pk in range(64, 128)}
    assert {INT_PK.tree_path([pk]) for pk in range(64, 128)} == {v["tree"]}
    assert sorted(names, key=lambda n: n.encode())[:5] == v["first_5_blob_names"]


# -- msgpack ---------------------------------------------------------------------------


@pytest.mark.parametrize("v", cases("doc_msgpack_examples"))
def test_doc_msgpack_example(v):
    packed = pack(v["value"])
    if "msgpack_hex" in v:
        assert packed.hex() == v["msgpack_hex"]
        assert unpack(packed) == v["value"]
    if "sha256_prefix_hex" in v:
        assert hashlib.sha256(packed).hexdigest().startswith(v["sha256_prefix_hex"])


# -- dataset names ---------------------------------------------------------------------


@pytest.mark.parametrize("v", cases("dataset_path_validation", lambda v: v["id"]))
def test_dataset_names(v):
    if v["is_okay"]:
        assert validate_dataset_names(v["names"]) == v["names"]
    else:
        with pytest.raises(DatasetNameError) as e:
            validate_dataset_names(v["names"])
        assert e.value.rule and e.value.name in v["names"]


# -- schema ----------------------------------------------------------------------------


def _pk_pattern_cases():
    out = []
    for i, v in enumerate(V["schema_json"]):
        for pattern in v["valid_pk_index_patterns"]:
            out.append(pytest.param(pattern, True, id=f"schema_json-{i}-valid-{pattern}"))
        for pattern in v["invalid_pk_index_patterns"]:
            out.append(pytest.param(pattern, False, id=f"schema_json-{i}-invalid-{pattern}"))
    return out


@pytest.mark.parametrize("pattern,valid", _pk_pattern_cases())
def test_pk_index_patterns(pattern, valid):
    cols = [
        {"id": f"id{i}", "name": f"c{i}", "dataType": "integer", "primaryKeyIndex": pk}
        for i, pk in enumerate(pattern)
    ]
    if valid:
        schema = Schema.from_dicts(cols)
        by_pk = sorted((pk, f"id{i}") for i, pk in enumerate(pattern) if pk is not None)
        assert schema.legend.pk_columns == tuple(cid for _, cid in by_pk)
        assert json.loads(schema.dumps()) == cols
    else:
        with pytest.raises(SchemaError):
            Schema.from_dicts(cols)


# -- geometry --------------------------------------------------------------------------


def _geometry_id(v):
    return v["test"].split("::")[1] + "-" + (v["id"] or v.get("wkt", ""))


@pytest.mark.parametrize("v", cases("geometry", _geometry_id))
def test_geometry(v):
    test = v["test"].split("::")[1]
    if test == "test_wkt_gpkg_wkt_roundtrip":
        geom, srid = parse_wkt(v["wkt"])
        srs_id = srid if srid and srid > 0 else 0
        gpkg = Geometry.from_wkb(write_wkb(geom), srs_id=srs_id)
        assert gpkg.parse() == geom
        assert gpkg.srs_id == srs_id
        assert gpkg.is_empty == (gpkg.to_wkt().endswith("EMPTY"))
        # Kart's envelope rules hold, and the text round-trips.
        kind, has_z, _ = gpkg.geometry_type()
        if gpkg.is_empty or kind == 1:
            assert gpkg.envelope_type == ENVELOPE_NONE
        else:
            assert gpkg.envelope_type == (2 if has_z else 1)
        assert parse_wkt(gpkg.to_wkt())[0] == geom
    elif test == "test_wkb_gpkg_wkb_roundtrip":
        gpkg = Geometry.from_hex_wkb(v["input_wkb"])
        assert gpkg.hex() == v["expected_gpkg_geom"]
        assert gpkg.to_hex_wkb() == v["expected_wkb"]
    elif test == "test_normalise_geometry":
        assert normalise_gpkg(bytes.fromhex(v["input"])).hex() == v["expected"]
    elif test == "test_gpkg_wkb_gpkg_roundtrip":
        _gpkg_wkb_gpkg_roundtrip(bytes.fromhex(v["input"]), v["input_has_envelope"])
    else:  # pragma: no cover - a new kind of vector
        pytest.fail(f"unknown geometry vector {test}")


def _gpkg_wkb_gpkg_roundtrip(data: bytes, input_has_envelope: bool) -> None:
    """Kart's test: every LE/BE header x LE/BE WKB x envelope/no-envelope variant
    normalises back to the input, and WKB -> GPKG gives the input again."""
    assert normalise_gpkg(data) == data
    hex_wkb = Geometry(data).to_hex_wkb()
    assert hex_wkb.startswith("01")
    for little_endian in (False, True):
        for little_endian_wkb in (False, True):
            for with_envelope in (False, True):
                inter = Geometry.from_hex_wkb(
                    hex_wkb,
                    little_endian=little_endian,
                    little_endian_wkb=little_endian_wkb,
                    envelope_type=ENVELOPE_XY if with_envelope else ENVELOPE_NONE,
                )
                assert normalise_gpkg(inter) == data
                if little_endian and little_endian_wkb and with_envelope == input_has_envelope:
                    assert inter == data
                    continue
                if with_envelope and not input_has_envelope:
                    assert len(inter) > len(data)
                elif input_has_envelope and not with_envelope:
                    assert len(inter) < len(data)
                else:
                    assert len(inter) == len(data)
                assert Geometry.from_hex_wkb(inter.to_hex_wkb()) == data


# -- the test repositories' schemas, legends and sample features -------------------------


def _dataset_cases():
    out = []
    for i, repo in enumerate(V["test_data_repos"]):
        for ds in repo["datasets"]:
            out.append(pytest.param(repo, ds, id=f"test_data_repos-{i}-{repo['archive'].split('/')[-1]}-{ds['dataset_path']}"))
    return out


@pytest.mark.parametrize("repo,ds", _dataset_cases())
def test_repo_dataset_vector(repo, ds):
    schema_bytes = ds["schema_json_bytes"].encode()
    schema = Schema.from_json(schema_bytes)
    assert schema.dumps() == schema_bytes
    assert schema.legend.name == ds["legend_from_schema"]
    if ds["dataset_dir"] == ".sno-dataset":
        assert ds["path_structure_json"] is None
        ps = LEGACY
    else:
        ps = PathStructure.from_dict(ds["path_structure_json"])
        assert ps.dumps() == json.dumps(ds["path_structure_json"]).encode()
        pk_types = [c.data_type for c in schema.pk_columns]
        assert ps == (INT_PK if pk_types == ["integer"] else GENERAL)
    legends = {}
    for leg in ds["legends"]:
        blob = bytes.fromhex(leg["blob_hex"])
        legend = Legend.loads(blob, name=leg["filename"])
        assert [list(legend.pk_columns), list(legend.non_pk_columns)] == leg["decoded"]
        assert legend.dumps() == blob
        legends[leg["filename"]] = legend
    for f in ds["sample_features"]:
        blob = bytes.fromhex(f["blob_hex"])
        assert ps.encode_path(f["pk_values"]) == f["path"]
        assert decode_filename(f["path"].rsplit("/", 1)[1]) == f["pk_values"]
        raw = raw_feature(blob, f["pk_values"], legends)
        row = schema.adapt(raw)
        expected = {k: from_json_value(v) for k, v in f["decoded_by_column_name"].items()}
        assert row == expected
        assert list(row) == list(expected)  # schema order
        # Re-encoding with the feature's legend reproduces Kart's blob...
        legend_name_, _ = decode_feature(blob)
        assert encode_raw(legends[legend_name_], raw) == (tuple(f["pk_values"]), blob)
        # ...and so does a round trip through Python values (dates, Decimals, ...).
        python_row = to_python_row(schema, row)
        assert encode_row(schema, from_python_row(schema, python_row)) == (tuple(f["pk_values"]), blob)


# -- meta-updates: feature 77 through every schema ---------------------------------------

HISTORY = V["schema_evolution_history"]


def _history_cases():
    return [pytest.param(i, c, id=f"schema_evolution_history-{i}-{c['message']}") for i, c in enumerate(HISTORY["commits"])]


def _legend_for(commit):
    schema = Schema.from_json(commit["schema_json_bytes"].encode())
    assert schema.legend.name in commit["legend_files"]
    return schema, {schema.legend.name: schema.legend}


@pytest.mark.parametrize("i,commit", _history_cases())
def test_feature_77_history(i, commit):
    schema, legends = _legend_for(commit)
    assert schema.dumps() == commit["schema_json_bytes"].encode()
    blob = bytes.fromhex(commit["feature_77_blob_hex"])
    expected = {k: from_json_value(v) for k, v in commit["feature_77_decoded_with_this_schema"].items()}
    raw = raw_feature(blob, [77], legends)
    assert schema.adapt(raw) == expected
    assert encode_raw(schema.legend, raw) == ((77,), blob)
    assert INT_PK.encode_path([77]) == "A/A/A/B/kU0="
    assert encode_filename([77]) == "kU0="
    # The blob written at the first commit reads through this (later) schema by column id.
    first = HISTORY["commits"][0]
    first_schema, first_legends = _legend_for(first)
    old_raw = raw_feature(bytes.fromhex(first["feature_77_blob_hex"]), [77], first_legends)
    assert schema.adapt(old_raw) == expected
    if i:
        diff = Schema.from_json(HISTORY["commits"][i - 1]["schema_json_bytes"]).diff(schema)
        assert diff or commit["schema_json_bytes"] == HISTORY["commits"][i - 1]["schema_json_bytes"]
