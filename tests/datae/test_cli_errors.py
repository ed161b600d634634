"""Bad input through the `datae` command (issue 16): each case exits with its code, prints
exactly one ``datae: error:`` line that says what and where, no traceback, and leaves the
store as it was (its refs, whose commit ids cover every state digest, and its reflog)."""

from __future__ import annotations

import gzip
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import lmdb
import pytest

import fstore
from tests.cli_fixtures import checkout_env, initialised_workdir  # noqa: F401 (a fixture)
from datae import context
from datae.cli import main
from datae.commands import history
from tests.kart_fixtures import unpack_archive
from tests.locations import DEMO_DATA

SCHEMAORG = DEMO_DATA / "schemaorg"
V22 = SCHEMAORG / "schemaorg-current-https-22.0.nq.gz"

TOWNS = "code,name,pop\nNZ-AUK,Auckland,1700000\nNZ-WGN,Wellington,540000\n"

# Input files: name -> bytes.
INPUTS: dict[str, bytes] = {
    "towns.csv": TOWNS.encode(),
    "latin1.csv": b"code,name,pop\nNZ-AUK,Auckland,1\nNZ-TKI,Taranaki M\xe2ori,2\n",  # Latin-1's a-circumflex
    "latin1.csv.gz": gzip.compress(b"code,name,pop\nNZ-TKI,Taranaki M\xe2ori,2\n"),
    "cut_in_char.csv": b"code,name,pop\nNZ-NTL,Te Tai Tokerau,1\nNZ-TKI,M\xc4",  # the first byte of a two-byte \u0101
    "cut.csv.gz": gzip.compress(b"code,name,pop\n" + b"".join(b"NZ-%d,T%d,%d\n" % (i, i, i) for i in range(2000)))[:-30],
    "wrong_type.csv": b"code,name,pop\nNZ-CAN,Canterbury,many\n",
    "plain.nq.gz": b"<urn:a> <urn:b> <urn:c> .\n",
    "cut.nq.gz": V22.read_bytes()[:3000],
    "no_key.csv": b"code,name,pop\n,Nowhere,5\n",
    "unterminated.nq": b'<urn:a> <urn:b> "c" .\n<urn:a> <urn:b> "c .\n',
    "bad_object.nq": b'<urn:a> <urn:b> "c" .\n<urn:a> <urn:b> c .\n',
    "bad.ttl": b'@prefix ex: <http://ex/> .\nex:a ex:b ex:c ;\n  ex:d "x .\n',
    "undeclared.trig": b'GRAPH <urn:g> { ex:a <urn:p> <urn:o> }\n',
    "cut.jsonld": b'{"@id": "urn:a",\n "urn:p": [1, \n',
    "remote.jsonld": b'{"@context": "https://schema.org/", "name": "x"}',
    "bad.rdf": b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description>',
    "data.n3": b'<urn:a> <urn:b> <urn:c> .\n',
}

USAGE = 2
ERROR = 128

# (id, argv ({dir} is the inputs' directory), exit code, what the error line must say)
CASES: list[tuple[str, list[str], int, list[str]]] = [
    ("csv-not-utf8", ["table", "import", "{dir}/latin1.csv", "--name", "towns", "--upsert"], ERROR,
     ["latin1.csv, line 3", "byte 0xe2 at byte offset", "not utf-8"]),
    ("csv-gz-not-utf8", ["table", "import", "{dir}/latin1.csv.gz", "--name", "towns", "--upsert"], ERROR,
     ["latin1.csv.gz, line 2", "byte 0xe2 at byte offset 31", "not utf-8"]),
    ("csv-cut-inside-a-character", ["table", "import", "{dir}/cut_in_char.csv", "--name", "towns", "--upsert"], ERROR,
     ["cut_in_char.csv, line 3", "byte 0xc4 at byte offset 46", "not utf-8"]),
    ("csv-gz-cut-short", ["table", "import", "{dir}/cut.csv.gz", "--name", "towns", "--upsert"], ERROR,
     ["cut.csv.gz: is not a whole gzip file"]),
    ("csv-wrong-type", ["table", "import", "{dir}/wrong_type.csv", "--name", "towns", "--upsert"], ERROR,
     ["wrong_type.csv, line 2, column 'pop'", "'many' is not a valid integer"]),
    ("csv-missing-key", ["table", "import", "{dir}/no_key.csv", "--name", "towns", "--upsert"], ERROR,
     ["column 'code'", "primary key", "no_key.csv, line 2"]),
    ("csv-missing-file", ["table", "import", "{dir}/absent.csv"], ERROR, ["absent.csv: No such file or directory"]),
    ("pk-mismatch", ["table", "import", "{dir}/towns.csv", "--pk", "name", "--upsert"], ERROR,
     ["table 'towns' has primary key code, not name"]),
    ("bad-table-name", ["table", "import", "{dir}/towns.csv", "--name", "bad/../name", "--pk", "code"], ERROR,
     ["invalid dataset name 'bad/../name'"]),
    ("unknown-table", ["table", "show", "nope"], ERROR, ["no table named 'nope'"]),
    ("nquads-unterminated", ["import", "{dir}/unterminated.nq"], ERROR, ["unterminated.nq", "line 2 column 17"]),
    ("nquads-bad-object", ["import", "{dir}/bad_object.nq"], ERROR, ["bad_object.nq", "line 2 column 17"]),
    ("turtle-unterminated", ["import", "{dir}/bad.ttl"], ERROR, ["bad.ttl", "line 3 column"]),
    ("trig-undeclared-prefix", ["import", "{dir}/undeclared.trig"], ERROR, ["undeclared.trig", "line 1", "ex"]),
    ("jsonld-cut-short", ["import", "{dir}/cut.jsonld"], ERROR, ["cut.jsonld", "line 3"]),
    ("jsonld-remote-context", ["import", "{dir}/remote.jsonld"], ERROR,
     ["remote.jsonld: a JSON-LD @context given by IRI is not fetched"]),
    ("rdfxml-cut-short", ["import", "{dir}/bad.rdf"], ERROR, ["bad.rdf: not well-formed XML at line 1", "no element found"]),
    ("rdf-unknown-syntax", ["import", "{dir}/data.n3"], ERROR,
     ["data.n3: unknown RDF format 'n3'; use one of nq, trig, jsonld, nt, ttl, rdf"]),
    ("rdf-format-not-offered", ["import", "{dir}/data.n3", "--format", "n3"], USAGE, ["invalid choice: 'n3'"]),
    ("import-graph-not-an-iri", ["import", "{dir}/unterminated.nq", "--graph", "not an iri"], ERROR, ["graph"]),
    ("bad-branch-name", ["branch", "two words"], ERROR, ["two words"]),
    ("nquads-gz-not-gzip", ["import", "{dir}/plain.nq.gz"], ERROR, ["plain.nq.gz: is not a whole gzip file"]),
    ("nquads-gz-cut-short", ["import", "{dir}/cut.nq.gz"], ERROR, ["cut.nq.gz: is not a whole gzip file"]),
    ("kart-truncated-pack", ["table", "import", "{dir}/kart-truncated"], ERROR,
     ["kart-truncated/.kart", "is damaged", "truncated pack"]),
    ("kart-corrupt-pack", ["table", "import", "{dir}/kart-corrupt"], ERROR, ["kart-corrupt/.kart", "is damaged"]),
    ("kart-empty-pack", ["table", "import", "{dir}/kart-empty"], ERROR, ["kart-empty/.kart", "missing git object"]),
    ("unknown-ref-log", ["log", "nope"], ERROR, ["unknown ref 'nope'"]),
    ("unknown-ref-diff", ["diff", "nope"], ERROR, ["unknown ref 'nope'"]),
    ("unknown-ref-query", ["query", "--at", "nope", "SELECT * WHERE { ?s ?p ?o }"], ERROR, ["unknown ref 'nope'"]),
    ("query-syntax", ["query", "SELECT * WHERE {\n  ?s ?p }"], ERROR, ["line 2, column 9: unexpected '}'"]),
    ("export-to-missing-dir", ["export", "-o", "{dir}/no/such/dir/out.nq"], ERROR,
     ["cannot write", "no/such/dir/out.nq: no directory"]),
    ("log-negative-n", ["log", "-n", "-1"], USAGE, ["log: argument -n: -1 is not a positive number"]),
    ("show-negative-limit", ["table", "show", "towns", "--limit", "-5"], USAGE,
     ["table show: argument --limit: -5 is not a positive number"]),
    ("log-n-not-a-number", ["log", "-n", "many"], USAGE, ["log: argument -n: 'many' is not a whole number"]),
    ("unknown-command", ["frobnicate"], USAGE, ["invalid choice: 'frobnicate'"]),
]


def damaged_kart_copy(dest: Path, how: str) -> Path:
    """A copy of Kart's `points` test repository (shipped for the demo) whose one pack
    file is cut in half, overwritten in the middle, or empty."""
    work = unpack_archive(DEMO_DATA / "kart" / "points.tgz", dest.parent / f"unpack-{how}")
    work = work.rename(dest)
    pack = next((work / ".kart" / "objects" / "pack").glob("*.pack"))
    pack.chmod(0o644)
    data = pack.read_bytes()
    if how == "truncated":
        data = data[: len(data) // 2]
    elif how == "corrupt":
        data = data[:2000] + b"garbage" * 3 + data[2021:]
    else:
        data = b""
    pack.write_bytes(data)
    return work


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    """A store with a table and some quads, and the bad inputs beside it."""
    base = tmp_path_factory.mktemp("cli-errors")
    inputs = base / "in"
    inputs.mkdir()
    for name, data in INPUTS.items():
        (inputs / name).write_bytes(data)
    for how in ("truncated", "corrupt", "empty"):
        damaged_kart_copy(inputs / f"kart-{how}", how)
    store = base / "store"
    assert main(["init", str(store)]) == 0
    repo = ["--repo", str(store)]
    assert main([*repo, "table", "import", str(inputs / "towns.csv"), "--pk", "code", "-m", "towns"]) == 0
    assert main([*repo, "import", str(V22), "--graph", "https://schema.org/", "-m", "schema.org 22"]) == 0
    assert main([*repo, "tag", "v22"]) == 0
    return {"store": store, "dir": inputs}


def store_state(store: Path) -> tuple[Any, ...]:
    """What a failed command must not change: the current branch, every ref (a commit
    id covers its state digest, so the heads cover the data) and the reflog."""
    with fstore.open(store / ".datae") as repo:
        return (repo.current_branch, repo.branches(), repo.tags(), repo.remote_branches(), repo.reflog(),
                repo.merge_state(), repo.stats()["commits"])


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("datae: error:")]


@pytest.mark.parametrize("argv, code, says", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input_is_one_line_and_changes_nothing(world, capsys, argv, code, says):
    before = store_state(world["store"])
    args = ["--repo", str(world["store"] / ".datae"), *(a.replace("{dir}", str(world["dir"])) for a in argv)]
    try:
        got = main(args)
    except SystemExit as exc:  # argparse's usage errors leave by exit
        got = exc.code
    err = capsys.readouterr().err
    assert got == code, err
    assert "Traceback" not in err
    lines = error_lines(err)
    assert len(lines) == 1 and err.splitlines()[-1] == lines[0], err
    if code != USAGE:  # a usage error prints the usage first; every other error only its line
        assert err.count("\n") == 1, err
    for fragment in says:
        assert fragment in lines[0], lines[0]
    assert store_state(world["store"]) == before


def test_no_store(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["log"]) == ERROR
    assert capsys.readouterr().err == "datae: error: not a datae repository (or any of the parent directories): .datae\n"


def test_pk_that_agrees_is_fine(world, capsys):
    repo = ["--repo", str(world["store"] / ".datae")]
    assert main([*repo, "table", "import", str(world["dir"] / "towns.csv"), "--pk", "code", "--upsert"]) == 0
    assert "towns: 0 inserted, 0 updated, 0 deleted, 2 unchanged" in capsys.readouterr().out


# -- errors raised inside a command: the one path, --debug, and what is not datae's -----


def failing(monkeypatch, exc: BaseException) -> None:
    """Make `datae log` raise ``exc``."""

    def cmd_log(args):
        raise exc

    monkeypatch.setattr(history, "cmd_log", cmd_log)


@pytest.mark.parametrize("exc, code, line", [
    (lmdb.MapFullError("mdb_put: MDB_MAP_FULL: Environment mapsize limit reached"), ERROR,
     "datae: error: the store's map is full (mdb_put: MDB_MAP_FULL: Environment mapsize limit reached): "
     "give a larger --map-size"),
    (lmdb.DiskError("mdb_txn_commit: No space left on device"), ERROR,
     "datae: error: the store's LMDB file: mdb_txn_commit: No space left on device"),
    (OSError(28, "No space left on device", "out.nq"), ERROR, "datae: error: out.nq: No space left on device"),
    (RuntimeError("boom"), context.EXIT_INTERNAL, "datae: error: unexpected RuntimeError: boom "
     "(rerun with --debug for the traceback)"),
], ids=["map-full", "disk-full", "os-error", "unexpected"])
def test_errors_inside_a_command(world, monkeypatch, capsys, exc, code, line):
    failing(monkeypatch, exc)
    assert main(["--repo", str(world["store"]), "log"]) == code
    assert capsys.readouterr().err == line + "\n"


def test_debug_shows_the_traceback(world, monkeypatch, capsys):
    failing(monkeypatch, RuntimeError("boom"))
    assert main(["--debug", "--repo", str(world["store"]), "log"]) == context.EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "RuntimeError: boom" in err
    assert err.splitlines()[-1] == "datae: error: unexpected RuntimeError: boom"


def test_keyboard_interrupt_is_quiet(world, monkeypatch, capsys):
    failing(monkeypatch, KeyboardInterrupt())
    assert main(["--repo", str(world["store"]), "log"]) == context.EXIT_INTERRUPTED
    assert capsys.readouterr().err == ""


def test_ctrl_c_during_a_query_exits_130(world):
    """A real SIGINT to a running `datae query`: 130, no traceback, nothing written."""
    before = store_state(world["store"])
    query = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?a ?b ?c . ?d ?e ?f } }"  # 16k x 16k rows: minutes
    # `python -m datae` but saying when main() starts: a SIGINT during the imports
    # before it is Python's to report, and a loaded machine can take seconds to get there.
    script = "import sys; from datae.cli import main; print('ready', file=sys.stderr, flush=True); sys.exit(main())"
    process = subprocess.Popen([sys.executable, "-c", script, "--repo", str(world["store"]), "query", query],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=checkout_env())
    assert process.stderr.readline() == "ready\n"
    time.sleep(1.0)  # into the query
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert err == "" and out == ""
    assert store_state(world["store"]) == before


def test_version(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out.startswith("datae ")


def test_a_failed_command_leaves_no_handle_open(initialised_workdir, capsys):
    """Each command closes its store whether it succeeds or not: in one process, gc (which
    needs every handle closed) still runs after commands that failed."""
    from datae.cli import main

    assert main(["branch", "b"]) == 0
    for failing in (["switch", "nope"], ["log", "nope"], ["blame", "--at", "nope", "<urn:s>", "<urn:p>", "x"], ["tag", "v", "nope"]):
        assert main(failing) == 128, failing
    assert main(["branch", "-D", "b"]) == 0
    assert main(["gc", "--expire", "0"]) == 0, capsys.readouterr().err
