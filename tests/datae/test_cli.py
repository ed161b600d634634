"""The `datae` command line: git-like commands, messages and exit codes."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fstore

from tests.cli_fixtures import checkout_env
from tests.locations import DEMO_DATA
from tests.cli_fixtures import run_cli

SCHEMAORG = DEMO_DATA / "schemaorg"
V22 = str(SCHEMAORG / "schemaorg-current-https-22.0.nq.gz")
V30 = str(SCHEMAORG / "schemaorg-current-https-30.0.nq.gz")


run = run_cli


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATAE_AUTHOR", "tester")
    return tmp_path


def test_no_store_is_fatal(workdir, capsys):
    code, _, err = run(capsys, "log")
    assert code == 128
    assert err.startswith("datae: error: not a datae repository")


def test_import_log_tag_diff_export(workdir, capsys):
    assert run(capsys, "init")[0] == 0
    code, out, _ = run(capsys, "import", V22, "--graph", "https://schema.org/", "-m", "release 22")
    assert code == 0 and "16376 quads read, 16376 added, 0 removed" in out
    assert run(capsys, "tag", "v22")[0] == 0
    code, out, _ = run(capsys, "import", V30, "--graph", "https://schema.org/", "-m", "release 30", "--replace")
    assert "17949 quads read" in out
    code, out, _ = run(capsys, "log", "--oneline")
    lines = out.splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == ["release 30", "release 22 (tag: v22)"]
    code, out, _ = run(capsys, "diff", "v22")
    plus = [line for line in out.splitlines() if line.startswith("+ ")]
    minus = [line for line in out.splitlines() if line.startswith("- ")]
    code, log_out, _ = run(capsys, "log", "-n", "1")
    assert f"Changes: +{len(plus)} -{len(minus)}" in log_out and "Author: tester" in log_out

    exported = workdir / "v22.nq"
    assert run(capsys, "export", "--at", "v22", "-o", str(exported))[0] == 0
    # re-importing the export into a fresh store gives the same quads (a round trip)
    code, out, _ = run(capsys, "--repo", str(workdir / "other"), "log")
    assert code == 128
    assert run(capsys, "init", str(workdir / "other"))[0] == 0
    code, out, _ = run(capsys, "--repo", str(workdir / "other"), "import", str(exported), "-m", "copy")
    assert "16376 quads read, 16376 added" in out
    assert run(capsys, "--repo", str(workdir / "other"), "verify")[1].startswith("ok")


def test_branch_switch_merge_conflict_and_blame(workdir, capsys):
    run(capsys, "init")
    (workdir / "a.nt").write_text('<urn:s> <urn:p> "one" .\n')
    run(capsys, "import", "a.nt", "-m", "first")
    assert run(capsys, "branch", "dev")[0] == 0
    code, out, _ = run(capsys, "branch")
    assert out.splitlines()[0].startswith("  dev") and out.splitlines()[1].startswith("* main")
    (workdir / "b.nt").write_text('<urn:s> <urn:p> "two" .\n')
    (workdir / "c.nt").write_text('<urn:s> <urn:p> "three" .\n')
    run(capsys, "import", "b.nt", "-m", "main side")
    assert run(capsys, "switch", "dev")[1] == "Switched to branch 'dev'\n"
    run(capsys, "import", "c.nt", "-m", "dev side")
    run(capsys, "switch", "main")
    code, out, _ = run(capsys, "merge", "dev", "--policy", "abort")
    assert code == 1
    assert "<urn:s> <urn:p>" in out.splitlines()[0] and "nothing was written" in out
    code, out, _ = run(capsys, "merge", "dev")  # stops as the merge in progress
    assert code == 1 and out.startswith("CONFLICT ") and "datae merge --continue" in out
    assert run(capsys, "merge", "--abort")[0] == 0
    code, out, _ = run(capsys, "merge", "dev", "--policy", "theirs")
    assert code == 0 and out.startswith("Merge made: [main ")
    code, out, _ = run(capsys, "merge", "dev")
    assert out == "Already up to date.\n"
    code, out, _ = run(capsys, "blame", "urn:s", "urn:p", '"three"')
    assert "added in the default graph: dev side" in out
    code, out, _ = run(capsys, "blame", "urn:s", "urn:p", '"nope"')
    assert out == "no commit ever touched this quad\n"
    code, _, err = run(capsys, "branch", "-d", "main")
    assert code == 128 and "current branch" in err
    code, _, err = run(capsys, "branch", "bad..name")
    assert code == 128 and "invalid ref name" in err


def test_bad_input_is_fatal_with_file_and_line(workdir, capsys):
    run(capsys, "init")
    (workdir / "bad.ttl").write_text("@prefix ex: <http://example.org/> .\nex:a ex:b ex:c .\nex:a ex:b .\n")
    code, _, err = run(capsys, "import", "bad.ttl")
    assert code == 128
    assert err.startswith("datae: error: bad.ttl: ") and "line 3 column 11" in err
    assert run(capsys, "log")[1] == ""
    code, _, err = run(capsys, "diff", "nope")
    assert code == 128 and "unknown ref 'nope'" in err
    code, _, err = run(capsys, "blame", "urn:s", "urn:p", '"unterminated')
    assert code == 128 and "invalid object" in err


def test_console_script_exit_codes(workdir):
    script = Path(sys.executable).with_name("datae")
    result = subprocess.run([str(script), "log"], capture_output=True, text=True, env=checkout_env())
    assert result.returncode == 128 and "datae: error:" in result.stderr
    result = subprocess.run([str(script), "frobnicate"], capture_output=True, text=True, env=checkout_env())
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_table_commands_and_ancestry_refs(workdir, capsys):
    run(capsys, "init")
    (workdir / "towns.csv").write_text("code,name,pop\nNZ-AUK,Auckland,1700000\nNZ-WGN,Wellington,540000\n")
    code, out, _ = run(capsys, "table", "import", "towns.csv", "--pk", "code", "-m", "towns")
    assert code == 0 and out == "towns: 2 inserted, 0 updated, 0 deleted, 0 unchanged\n"
    (workdir / "towns.csv").write_text("code,name,pop\nNZ-AUK,Auckland,1800000\nNZ-CAN,Canterbury,650000\n")
    run(capsys, "table", "import", "towns.csv", "--pk", "code", "--replace", "-m", "towns 2")
    code, out, _ = run(capsys, "table", "diff", "HEAD~", "towns")
    assert out.splitlines()[0] == "table towns: 1 inserted, 1 updated, 1 deleted"
    assert '~ {"code": "NZ-AUK", "pop": [1700000, 1800000]}' in out
    code, out, _ = run(capsys, "table", "blame", "towns", "NZ-AUK", "pop")
    assert "towns 2" in out
    code, out, _ = run(capsys, "table", "show", "towns", "--at", "HEAD^")
    assert "Wellington" in out and "Canterbury" not in out
    code, out, _ = run(capsys, "table", "list")
    assert out == "towns\n"
    exported = workdir / "out.csv"
    run(capsys, "table", "export", str(exported), "--name", "towns", "--at", "main~1")
    assert "NZ-WGN,Wellington,540000" in exported.read_text()
    code, _, err = run(capsys, "log", "HEAD~5")
    assert code == 128 and "no such ancestor" in err


def test_table_export_gzips_a_csv_and_refuses_a_gzipped_database(workdir, capsys):
    run(capsys, "init")
    (workdir / "towns.csv").write_text("code,name\nNZ-AUK,Auckland\nNZ-OTA,Ōtaki\n")
    assert run(capsys, "table", "import", "towns.csv", "--pk", "code", "-m", "towns")[0] == 0
    assert run(capsys, "table", "export", "plain.csv")[0] == 0
    plain = (workdir / "plain.csv").read_bytes()
    assert plain.decode("utf-8").splitlines() == ["code,name", "NZ-AUK,Auckland", "NZ-OTA,Ōtaki"]
    for argv in (["all.csv.gz"], ["-o", "all.csv.gz"], ["all.gz", "--format", "csv"]):
        target = workdir / next(a for a in argv if a.endswith(".gz"))
        code, out, _ = run(capsys, "table", "export", *argv)
        assert code == 0 and out == f"towns: 2 rows written to {target.name}\n"
        assert target.read_bytes()[:2] == b"\x1f\x8b"  # gzip's magic number
        assert gzip.decompress(target.read_bytes()) == plain
        target.unlink()
    # and datae reads it back, as it reads any .csv.gz
    run(capsys, "table", "export", "-o", "all.csv.gz")
    assert run(capsys, "table", "import", "all.csv.gz", "--name", "copy", "--pk", "code", "-m", "copy")[0] == 0
    assert run(capsys, "table", "show", "copy")[1] == run(capsys, "table", "show", "towns")[1]
    # a database is written in place, not streamed: one typed error line, no file
    for argv in (["towns.sqlite.gz"], ["towns.gpkg.gz"], ["-o", "towns.db.gz"], ["towns.gz", "--format", "sqlite"]):
        code, out, err = run(capsys, "table", "export", *argv)
        name = next(a for a in argv if a.endswith(".gz"))
        assert code == 128 and out == "" and err.count("\n") == 1
        assert err.startswith(f"datae: error: cannot export to {name}: ") and "cannot be gzip-compressed" in err
        assert not (workdir / name).exists()
    code, _, err = run(capsys, "table", "export", "a.csv", "-o", "b.csv")
    assert code == 128 and "DEST or -o, not both" in err


def test_table_import_says_what_it_did_and_shows_rows_on_a_terminal(workdir, capsys):
    from tests.cli_fixtures import on_a_terminal
    from tests.kart_fixtures import unpack_archive

    assert run(capsys, "init")[0] == 0
    kart = unpack_archive(DEMO_DATA / "kart" / "points.tgz", workdir / "kart")
    code, out, _ = run(capsys, "table", "import", str(kart))
    assert code == 0 and re.fullmatch(r"\d+ commits imported \(main [0-9a-f]{10}(, [\w.-]+ [0-9a-f]{10})*\)\n", out), out
    (workdir / "many.csv").write_text("id,name\n" + "".join(f"{n},name {n}\n" for n in range(20_000)))
    stdout, seen = on_a_terminal(["table", "import", "many.csv", "--pk", "id"], workdir)
    assert stdout == b"many: 20,000 inserted, 0 updated, 0 deleted, 0 unchanged\n"
    assert re.search(r"reading many\.csv .*\b20,000 rows [\d,]+ rows/s", seen)
    assert "committing 20,000 rows" in seen


def test_init_honours_repo(workdir, capsys):
    """``datae --repo DIR init`` makes the store ``--repo DIR`` then opens, as ``datae init
    DIR`` does; never one in the current directory."""
    code, out, _ = run(capsys, "--repo", str(workdir / "project"), "init")
    assert code == 0 and str(workdir / "project" / ".datae") in out
    assert not (workdir / ".datae").exists()
    assert run(capsys, "--repo", str(workdir / "project"), "log")[0] == 0  # found where --repo looks
    # a store directory named outright, new or existing, is that store (no .datae inside it)
    assert run(capsys, "--repo", str(workdir / "bare" / ".datae"), "init")[0] == 0
    assert (workdir / "bare" / ".datae" / "data.mdb").exists() and not (workdir / "bare" / ".datae" / ".datae").exists()
    fstore.open(str(workdir / "plain")).close()
    code, out, _ = run(capsys, "--repo", str(workdir / "plain"), "init")
    assert code == 0 and out.startswith("Reinitialized existing") and not (workdir / "plain" / ".datae").exists()
    # the store named twice, differently: which one is meant cannot be guessed
    code, _, err = run(capsys, "--repo", str(workdir / "one"), "init", str(workdir / "two"))
    assert code == 128 and err.startswith("datae: error: ") and "--repo" in err
    assert not (workdir / "one").exists() and not (workdir / "two").exists()


def test_serve_help_names_every_service(capsys):
    """``datae serve --help`` lists what the server serves, the graph store and the service
    description too, and which writes the token guards."""
    from datae.cli import main

    with pytest.raises(SystemExit) as info:
        main(["serve", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for served in ("/sparql", "service description", "/store", "graph store", "/requests", "http:// remotes"):
        assert served in text, served
    options = text[text.index("options:"):]
    token = options[options.index("--token-file FILE"):options.index("--read-only")]
    assert "graph store writes" in token and "SPARQL update" in token and "push" in token
