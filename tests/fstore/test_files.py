"""fstore.files: what an export writes is whole or absent; gzip by suffix (any case) both ways."""

from __future__ import annotations

import csv
import gzip
import io
import os

import pytest

import fstore
import fstore.tables as tables
from fstore.errors import ExportError
from fstore.files import GZIP_DAMAGE, open_input, open_output
from fstore.rdf import RdfSyntaxError, parse


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_failed_write_leaves_no_file(tmp_path):
    target = tmp_path / "out.nq.gz"
    with pytest.raises(RuntimeError):
        with open_output(target) as stream:
            stream.write(b"half a file")
            raise RuntimeError("the store went away")
    assert os.listdir(tmp_path) == []


def test_a_whole_write_replaces_the_target_with_the_usual_mode(tmp_path):
    target = tmp_path / "out.nq.gz"
    target.write_bytes(b"old")
    with open_output(target) as stream:
        stream.write(b"whole\n")
    assert os.listdir(tmp_path) == ["out.nq.gz"] and gzip.decompress(target.read_bytes()) == b"whole\n"
    assert target.stat().st_mode & 0o777 == 0o666 & ~current_umask()


def test_text_is_utf8_with_line_ends_as_written(tmp_path):
    with open_output(tmp_path / "t.csv", text=True) as stream:
        stream.write("é\r\nx\n")
    assert (tmp_path / "t.csv").read_bytes() == "é\r\nx\n".encode()


def test_a_missing_directory_is_an_export_error(tmp_path):
    with pytest.raises(ExportError, match=r"cannot write .*no/out.nq: no directory .*no$"):
        with open_output(tmp_path / "no" / "out.nq"):
            pass


def test_export_csv_to_a_gz_name_compresses(tmp_path):
    repo = fstore.open(str(tmp_path / "store"))
    with repo.transaction("main", message="t") as tx:
        tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
                                {"id": "v", "name": "v", "dataType": "text"}]).insert_many(
            [{"k": 1, "v": "a"}, {"k": 2, "v": "b,c"}])
    assert tables.export_csv(repo.at("main").table("t"), str(tmp_path / "t.csv.gz")) == 2
    rows = list(csv.reader(io.StringIO(gzip.decompress((tmp_path / "t.csv.gz").read_bytes()).decode())))
    assert rows == [["k", "v"], ["1", "a"], ["2", "b,c"]]
    repo.close()


@pytest.mark.parametrize("name", ["out.nq.gz", "OUT.NQ.GZ", "out.nq.Gz"])
def test_gz_in_any_case_is_compressed_and_read_back(tmp_path, name):
    with open_output(tmp_path / name) as stream:
        stream.write(b"<urn:s> <urn:p> <urn:o> .\n")
    assert gzip.decompress((tmp_path / name).read_bytes()) == b"<urn:s> <urn:p> <urn:o> .\n"
    with open_input(tmp_path / name) as stream:
        assert stream.read() == b"<urn:s> <urn:p> <urn:o> .\n"
    assert len(list(parse(tmp_path / name))) == 1


def test_a_cut_short_gz_is_an_rdf_syntax_error_naming_the_file(tmp_path):
    whole = gzip.compress(b"".join(b"<urn:s%d> <urn:p> <urn:o> .\n" % n for n in range(5000)))
    (tmp_path / "cut.nq.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(GZIP_DAMAGE):
        with open_input(tmp_path / "cut.nq.gz") as stream:
            stream.read()
    with pytest.raises(RdfSyntaxError, match=r"cut\.nq\.gz: is not a whole gzip file"):
        list(parse(tmp_path / "cut.nq.gz"))
