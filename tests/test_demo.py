"""`make demo` (bench/demo.py): its data ships with the repository, and without that data
it stops with one line and a non-zero status instead of reporting 0 of anything.

The whole demo (Spark included) is run by ``.ci/run`` in a fresh clone, not here."""

from __future__ import annotations

import gzip
import tarfile
from pathlib import Path

import pytest

from bench import demo
from tests.locations import PROJECT


def test_the_demo_data_is_in_the_repository():
    """The data sits below bench/ (not ../shared), with real releases and a README naming
    the sources and licences."""
    assert demo.DATA == PROJECT / "bench" / "demo_data"
    files = demo.release_files()
    assert len(files) >= demo.MIN_RELEASES
    releases = [demo.release_of(f) for f in files]
    assert releases == sorted(releases, key=lambda r: [int(x) for x in r.split(".")])
    first_lines = []
    for path in files:
        with gzip.open(path, "rt", encoding="utf-8") as stream:
            first_lines.append(stream.readline())
        assert f"<https://schema.org/{demo.release_of(path)}>" in first_lines[-1]  # the release's own graph
    with tarfile.open(demo.KART_POINTS) as archive:
        assert any(name.startswith("points/.kart/") for name in archive.getnames())
    readme = (demo.DATA / "README.md").read_text(encoding="utf-8")
    for licence in ("CC BY-SA 3.0", "GPL-2.0", "CC BY 4.0"):
        assert licence in readme
    assert sum(f.stat().st_size for f in demo.DATA.rglob("*") if f.is_file()) < 5_000_000  # a few MB at most


@pytest.mark.parametrize("kept", [0, 1])
def test_missing_data_stops_the_demo_with_one_line(tmp_path, monkeypatch, capsys, kept):
    """With no release files (or too few), the demo exits 1 with one ``demo: error:`` line
    naming the folder, and writes no store."""
    folder = tmp_path / "schemaorg"
    folder.mkdir()
    for path in demo.release_files()[:kept]:
        (folder / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(demo, "SCHEMAORG", folder)
    store = tmp_path / "store"
    assert demo.main(["--store", str(store)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("demo: error: ") and str(folder) in err[0], err
    assert f"found {kept} schema.org release file(s)" in err[0]
    assert not store.exists()


def test_an_empty_release_stops_the_demo(tmp_path, monkeypatch, capsys):
    """A release file that holds no quads ends the demo at once; the release is not
    committed."""
    folder = tmp_path / "schemaorg"
    folder.mkdir()
    for path in demo.release_files()[:1]:
        (folder / path.name).write_bytes(path.read_bytes())
    empty = folder / "schemaorg-current-https-99.0.nq.gz"
    with gzip.open(empty, "wb"):
        pass
    monkeypatch.setattr(demo, "SCHEMAORG", folder)
    store = tmp_path / "store"
    assert demo.main(["--store", str(store)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("demo: error: ") and str(empty) in err[0], err
    import fstore

    repo = fstore.open(store)
    try:
        assert [c.message for c in repo.log("main")] == [f"schema.org release {demo.release_of(path)}"
                                                         for path in demo.release_files(folder)[:1]]
    finally:
        repo.close()
