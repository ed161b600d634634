"""Kart export benchmark: a table history written as a Kart V3 git repository by datae,
side by side with two peers measured in the same run writing the very same git objects.

The history: one commit creating a 10-column table of N rows (``bench.tables_bench``'s
rows), then C commits each updating 1% of the rows. Measured:

* datae: ``export_kart_repo`` (walk the commits, read each one's table records, edit the
  git trees with dulwich, pack): expected O(N + total rows changed), the rows written to
  git, independent of how many commits saw a row unchanged.
* dulwich floor: the same files per commit, already in memory as bytes, through the same
  dulwich calls (``Blob.from_string``, ``commit_tree_changes`` over a
  ``MemoryObjectStore``, ``write_pack``: one pack and its index): what the export costs
  without reading datae. Same complexity.
* git fast-import: the same files as a fast-import stream (built beforehand, not timed)
  piped into ``git fast-import`` (C); skipped if git is not installed.

Both peers' final trees are checked equal to the export's.

Usage: ``python -m bench.kart_bench [--sizes 10000,100000] [--commits 20] [--dir DIR]``;
prints one line per measurement and the ratios datae / peer (> 1: datae is slower).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from typing import Any

from dulwich.diff_tree import tree_changes
from dulwich.object_store import MemoryObjectStore, commit_tree_changes
from dulwich.objects import Blob, Commit, Tree
from dulwich.pack import write_pack
from dulwich.repo import Repo

import fstore
import fstore.tables as tables
from bench.tables_bench import SCHEMA, rows
from bench.timing import timed

Files = list[tuple[bytes, bytes | None]]  # (path, new bytes or None: deleted)


def build(path: str, n: int, commits: int) -> fstore.Repository:
    """A store whose main branch holds the history described in the module docstring."""
    repo = fstore.open(path, map_size=16 << 30)
    with repo.transaction("main", message="create", author="Bench <bench@example.org>") as tx:
        tables.create(tx, "bench", SCHEMA).insert_many(rows(n))
    step = max(1, n // 100)
    for c in range(commits):
        changed = [dict(r, note=f"edit {c}") for i, r in enumerate(rows(n)) if i % 100 == c % 100][:step]
        with repo.transaction("main", message=f"edit {c}", author="Bench <bench@example.org>") as tx:
            tx.table("bench").upsert_rows(changed)
    return repo


def history_files(git_dir: str) -> list[tuple[Commit, Files]]:
    """Each commit of an exported repository (oldest first) with the files it changed."""
    git = Repo(git_dir)
    try:
        walk = [e.commit for e in git.get_walker()][::-1]
        out = []
        parent_tree = None
        for commit in walk:
            files: Files = []
            for change in tree_changes(git.object_store, parent_tree, commit.tree):
                if change.new is not None and change.new.path is not None:
                    files.append((change.new.path, git[change.new.sha].as_raw_string()))
                elif change.old is not None and change.old.path is not None:
                    files.append((change.old.path, None))
            out.append((commit, files))
            parent_tree = commit.tree
        return out
    finally:
        git.close()


def dulwich_floor(history: list[tuple[Commit, Files]], dest: str) -> bytes:
    """The same objects through the same dulwich calls, from bytes in memory; one pack."""
    target = Repo.init_bare(dest, mkdir=True)
    store = MemoryObjectStore()
    tree = Tree()
    store.add_object(tree)
    tree_id, parent = tree.id, []
    for original, files in history:
        edits = []
        for path, data in files:
            if data is None:
                edits.append((path, None, None))
            else:
                blob = Blob.from_string(data)
                store.add_object(blob)
                edits.append((path, 0o100644, blob.id))
        tree_id = commit_tree_changes(store, tree_id, edits)
        c = original.copy()
        c.tree, c.parents = tree_id, parent
        store.add_object(c)
        parent = [c.id]
    pack = os.path.join(target.object_store.pack_dir, "pack-floor")
    write_pack(pack, [(store[sha], None) for sha in store if sha != Tree().id], target.object_store.object_format)
    target.refs[b"refs/heads/main"] = parent[0]
    target.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
    target.close()
    return tree_id


def fast_import_stream(history: list[tuple[Commit, Files]]) -> bytes:
    parts = []
    for i, (original, files) in enumerate(history, 1):
        ident = original.author + b" %d +0000" % original.author_time
        parts.append(b"commit refs/heads/main\nmark :%d\nauthor %s\ncommitter %s\ndata %d\n%s\n"
                     % (i, ident, ident, len(original.message), original.message))
        if i > 1:
            parts.append(b"from :%d\n" % (i - 1))
        for path, data in files:
            if data is None:
                parts.append(b"D %s\n" % path)
            else:
                parts.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path, len(data), data))
        parts.append(b"\n")
    return b"".join(parts)


def git_fast_import(stream: bytes, dest: str) -> bytes:
    subprocess.run(["git", "init", "-q", "--bare", dest], check=True)
    subprocess.run(["git", "fast-import", "--quiet"], input=stream, cwd=dest, check=True)
    out = subprocess.run(["git", "rev-parse", "main^{tree}"], cwd=dest, check=True, capture_output=True)
    return out.stdout.strip()


def bench_size(root: str, n: int, commits: int) -> dict[str, Any]:
    repo = build(os.path.join(root, f"store-{n}"), n, commits)
    try:
        dest = os.path.join(root, f"kart-{n}")
        seconds, result = timed(lambda: tables.export_kart_repo(repo, dest))
    finally:
        repo.close()
    out: dict[str, Any] = {"datae export_kart_repo": seconds, "git objects": result.objects}
    history = history_files(os.path.join(dest, ".kart"))
    git = Repo(dest)
    final_tree = git[git.head()].tree
    git.close()
    out["dulwich floor"], tree = timed(lambda: dulwich_floor(history, os.path.join(root, f"floor-{n}")))
    assert tree == final_tree, "the dulwich floor wrote another tree"
    if shutil.which("git"):
        stream = fast_import_stream(history)
        out["git fast-import"], tree = timed(lambda: git_fast_import(stream, os.path.join(root, f"fast-{n}")))
        assert tree == final_tree, "git fast-import wrote another tree"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="rows of the table, comma-separated")
    parser.add_argument("--commits", type=int, default=20, help="commits after the first, each updating 1%% of rows")
    parser.add_argument("--dir", help="work directory (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    root = args.dir or tempfile.mkdtemp(prefix="kart-bench-")
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    try:
        for n in sizes:
            results[n] = bench_size(root, n, args.commits)
            r = results[n]
            changed = n + args.commits * max(1, n // 100)
            print(f"{n:>9,} rows, {args.commits} commits of 1% ({changed:,} rows written, {r['git objects']:,} git objects):")
            for name, value in r.items():
                if name != "git objects":
                    print(f"    {name:<24} {value:8.3f} s   {value / changed * 1e6:7.1f} µs per row written")
            for peer in ("dulwich floor", "git fast-import"):
                if peer in r:
                    print(f"    datae / {peer:<16} {r['datae export_kart_repo'] / r[peer]:8.2f}")
        if len(sizes) > 1:
            a, b = sizes[0], sizes[-1]
            grow = results[b]["datae export_kart_repo"] / results[a]["datae export_kart_repo"]
            print(f"datae export time x{grow:.1f} for x{b / a:.0f} rows (O(rows written): expect ~x{b / a:.0f})")
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
