"""A damaged LMDB data file at open: a typed error naming the file and what is wrong,
never a signal, and nothing written (issue 13, point 4: empty, truncated, garbage files)."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import struct
import subprocess
import sys
import textwrap

import pytest

import fstore
from fstore import IRI
from nstore.errors import StoreFileError

DATA = "data.mdb"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A small store with a few commits (a directory holding data.mdb)."""
    path = tmp_path_factory.mktemp("pristine") / "store"
    repo = fstore.open(path)
    for commit in range(3):
        with repo.transaction("main", message=f"c{commit}") as tx:
            fstore.add_many(tx, [(None, IRI(f"urn:s{i}"), IRI(f"urn:p{commit}"), i) for i in range(2000)])
    repo.close()
    return path


def damaged(pristine, tmp_path, damage) -> tuple[str, str]:
    path = tmp_path / "store"
    shutil.copytree(pristine, path)
    data = path / DATA
    damage(str(data))
    return str(path), hashlib.sha256(data.read_bytes()).hexdigest()


def unchanged(path: str, digest: str) -> bool:
    with open(os.path.join(path, DATA), "rb") as stream:
        return hashlib.sha256(stream.read()).hexdigest() == digest


def truncate_to(size: int):
    return lambda data: os.truncate(data, size)


def garbage(data: str) -> None:
    with open(data, "wb") as stream:
        stream.write(random.Random(7).randbytes(100_000))


def future_format(data: str) -> None:
    with open(data, "r+b") as stream:
        stream.seek(20)
        stream.write(struct.pack("=I", 2))


def meta_pages(stream) -> list[tuple[int, int]]:
    """``(transaction id, offset)`` of LMDB's two meta pages (4 KiB pages)."""
    metas = []
    for offset in (0, 4096):
        stream.seek(offset + 144)
        metas.append((struct.unpack("=Q", stream.read(8))[0], offset))
    return metas


def meta_damaged(which):
    """Zero the magic of the older (min) or newer (max) of LMDB's two meta pages: LMDB
    refuses the file if either is not one, and so does datae, saying which."""
    def damage(data: str) -> None:
        with open(data, "r+b") as stream:
            stream.seek(which(meta_pages(stream))[1] + 16)
            stream.write(b"\x00" * 4)

    return damage


TRUNCATED = r"data\.mdb (is truncated: [\d,]+ bytes( \([\d,]+ pages of 4,096\), but its data reaches page|, less than its two LMDB meta pages)|is not an LMDB file)"
DAMAGES = {
    "empty": (truncate_to(0), r"data\.mdb is empty \(0 bytes\), not an LMDB file"),
    **{f"truncated to {fraction}": (fraction, TRUNCATED) for fraction in (0.001, 0.1, 0.5, 0.9, 0.999)},
    "garbage": (garbage, r"data\.mdb is not an LMDB file \(no LMDB meta page"),
    "another LMDB data format": (future_format, "LMDB file of data format 2; this LMDB reads format 1"),
    "older meta page": (meta_damaged(min), r"data\.mdb (is damaged: its second LMDB meta page|is not an LMDB file)"),
    "newer meta page": (meta_damaged(max), r"data\.mdb (is damaged: its second LMDB meta page|is not an LMDB file)"),
}


@pytest.mark.parametrize("name", DAMAGES)
def test_a_damaged_file_is_refused_and_left_as_it_is(pristine, tmp_path, name):
    damage, message = DAMAGES[name]
    if isinstance(damage, float):  # a fraction of the file kept: never a SIGBUS
        damage = truncate_to(int(os.path.getsize(pristine / DATA) * damage))
    path, digest = damaged(pristine, tmp_path, damage)
    with pytest.raises(StoreFileError, match=message):
        fstore.open(path)
    assert unchanged(path, digest)  # an empty file stays empty: not made a new store


def test_pages_counted_but_never_written_are_not_a_truncation(pristine, tmp_path):
    """LMDB counts pages a transaction allocated and freed again in its meta's last page
    without writing them, so a whole file may end before that page: what matters is that
    every page its trees point at is inside (found by the okvs model test)."""
    def counted_beyond_the_end(data: str) -> None:
        size = os.path.getsize(data)
        with open(data, "r+b") as stream:
            stream.seek(max(meta_pages(stream))[1] + 136)
            stream.write(struct.pack("=Q", size // 4096 + 3))

    path, _ = damaged(pristine, tmp_path, counted_beyond_the_end)
    with fstore.open(path) as repo:
        assert fstore.count(repo.at("main"), None, fstore.Var("s"), fstore.Var("p"), fstore.Var("o")) == 6000


def test_what_lmdb_refuses_at_open_is_a_typed_error(tmp_path, monkeypatch):
    """Whatever else LMDB refuses at open (a directory it may not write, a lock file it
    cannot map) comes back as StoreFileError naming the store, not an lmdb.Error."""
    import lmdb

    def refuse(path, **options):
        raise lmdb.ReadonlyError(f"{path}: Permission denied")

    monkeypatch.setattr(lmdb, "open", refuse)
    with pytest.raises(StoreFileError, match=r"cannot open the store at .*locked: .*Permission denied"):
        fstore.open(tmp_path / "locked")


def test_the_cli_says_one_line_and_exits_non_zero(pristine, tmp_path):
    path, digest = damaged(pristine, tmp_path, truncate_to(50_000))
    os.makedirs(tmp_path / "repo")
    os.rename(path, tmp_path / "repo" / ".datae")
    for command in (["log"], ["stats"], ["verify"], ["query", "SELECT * { ?s ?p ?o }"]):
        result = subprocess.run([sys.executable, "-m", "datae", "--repo", str(tmp_path / "repo"), *command],
                                capture_output=True, text=True)
        assert result.returncode > 0, (command, result)  # an exit status, not a signal (< 0)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "data.mdb is truncated: 50,000 bytes (12 pages of 4,096), but its data reaches page" in lines[0], (command, result.stderr)
    assert unchanged(str(tmp_path / "repo" / ".datae"), digest)


LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))  # 6 GiB of address space, as ulimit -v does
from datae.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_limited_address_space_gets_a_smaller_map_or_a_clear_error(pristine, tmp_path):
    """The default map (256 GiB of address space) halves until it fits; a map asked for
    explicitly that does not fit is a one-line error naming the setting."""
    os.makedirs(tmp_path / "repo")
    shutil.copytree(pristine, tmp_path / "repo" / ".datae")
    run = [sys.executable, "-c", LIMITED, "--repo", str(tmp_path / "repo")]
    result = subprocess.run([*run, "log", "-n", "1"], capture_output=True, text=True)
    assert result.returncode == 0 and "c2" in result.stdout, result.stderr
    result = subprocess.run([*run, "--map-size", "64G", "log"], capture_output=True, text=True)
    assert result.returncode > 0 and len(result.stderr.strip().splitlines()) == 1
    assert "68,719,476,736 bytes of address space are not available" in result.stderr and "--map-size" in result.stderr
    env = {**os.environ, "DATAE_MAP_SIZE": "2G"}
    result = subprocess.run([*run, "log", "-n", "1"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    result = subprocess.run([*run, "log"], capture_output=True, text=True, env={**os.environ, "DATAE_MAP_SIZE": "lots"})
    assert result.returncode > 0 and "DATAE_MAP_SIZE: 'lots' is not a size" in result.stderr


def test_map_sizes_are_read_as_people_write_them():
    from nstore.errors import SettingError
    from nstore.okvs import parse_size

    assert parse_size("1G") == parse_size("1GiB") == parse_size("1024M") == 1 << 30
    assert parse_size("1.5g") == 3 << 29
    for wrong in ("", "G", "-1G", "12 apples", "100"):
        with pytest.raises(SettingError):
            parse_size(wrong)


def test_a_full_disk_at_commit_is_a_typed_error_and_loses_nothing(tmp_path):
    """A disk that fills while LMDB writes a commit: StoreWriteError, the last commit
    intact. The file is kept from growing with RLIMIT_FSIZE, which makes write() fail
    (EFBIG) where a full disk makes it fail with ENOSPC: the same path in LMDB."""
    script = textwrap.dedent('''
        import resource, signal, sys
        import fstore
        from fstore import IRI
        from nstore.errors import StoreWriteError
        repo = fstore.open(sys.argv[1])
        with repo.transaction("main", message="small") as tx:
            fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 1)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG
        size = __import__("os").path.getsize(sys.argv[1] + "/data.mdb")
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 8192, hard))
        try:
            with repo.transaction("main", message="big") as tx:
                fstore.add_many(tx, [(None, IRI(f"urn:s{i}"), IRI("urn:p"), "x" * 100) for i in range(20000)])
        except StoreWriteError as exc:
            print("refused:", exc)
        resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
        print("quads", fstore.count(repo.at("main"), None, fstore.Var("s"), fstore.Var("p"), fstore.Var("o")))
        print("verify", repo.verify())
    ''')
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path / "r")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "refused: cannot commit to the store at" in result.stdout, result.stdout  # LMDB reports a short write as EIO
    assert "quads 1" in result.stdout and "verify []" in result.stdout
