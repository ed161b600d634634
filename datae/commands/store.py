"""The ``datae`` commands about the store itself: ``init``, ``status``, ``stats``,
``verify``, ``gc`` and ``reflog``.

    datae init [PATH]            # PATH/.datae (default: --repo, else the cwd)
    datae status                 # the current branch, a merge in progress, remotes ahead/behind
    datae verify [--quick]       # exit 1 when a problem is found
    datae gc --expire 0
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from ..context import EXIT_CONFLICT, Fatal, map_size, open_repo, out, store_path

__all__ = ["init_target", "cmd_init", "cmd_status", "cmd_stats", "cmd_verify", "cmd_gc", "cmd_reflog"]


def init_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?")


def cmd_init(args: argparse.Namespace) -> int:
    """``datae init [PATH]``."""
    import fstore  # the store layer, loaded when the command runs

    target = init_target(args.repo, args.path)
    existed = (target / "data.mdb").exists()
    fstore.open(target, map_size=map_size(args)).close()
    out(f"{'Reinitialized existing' if existed else 'Initialized empty'} datae repository in {target}")
    return 0


def init_target(repo: str | None, path: str | None) -> Path:
    """Where ``datae [--repo REPO] init [PATH]`` makes its store: where ``--repo`` (or PATH)
    later opens it. A store already there (as fstore.locate finds it) is that store; a
    directory named ``.datae`` is the store itself; any other is the project folder the
    store goes in (``PATH/.datae``). Naming two different places is refused.

    >>> init_target(None, "/work/project")
    PosixPath('/work/project/.datae')
    """
    import fstore  # the store layer, loaded when the command runs

    if repo and path and Path(repo).resolve() != Path(path).resolve():
        raise Fatal(f"init names the store twice: --repo {repo} and {path}; give one of them")
    given = Path(repo or path or ".").resolve()
    located = Path(fstore.locate(given))
    if (located / "data.mdb").exists() or given.name == fstore.STORE_DIR:
        return located
    return given / fstore.STORE_DIR


def status_arguments(p: argparse.ArgumentParser) -> None:
    """``datae status`` takes no arguments."""


def cmd_status(args: argparse.Namespace) -> int:
    """``datae status``."""
    with open_repo(args) as repo:
        status = repo.status()
        merging = repo.merge_state()
    head = status["head"]
    out(f"On branch {status['branch']} at {head[:10]}" if head else f"On branch {status['branch']}, no commits yet")
    if merging is not None:
        out(f"merging {merging.other} into {merging.into}: {merging.unresolved} unresolved conflict(s)")
    for name, counts in sorted(status["tracking"].items()):
        ahead, behind = counts["ahead"], counts["behind"]
        if not ahead and not behind:
            out(f"up to date with {name}")
        else:
            out(f"{ahead} commit(s) ahead of {name}, {behind} behind (as of the last fetch)")
    return 0


def stats_arguments(p: argparse.ArgumentParser) -> None:
    """``datae stats`` takes no arguments."""


def cmd_stats(args: argparse.Namespace) -> int:
    """``datae stats``."""
    import fstore  # the store layer, loaded when the command runs

    with open_repo(args) as repo:
        for key, value in repo.stats().items():
            out(f"{key:<12} {value:,}" if isinstance(value, int) else f"{key:<12} {value}")
        view = repo.at(repo.current_branch)
        out(f"{'quads':<12} {fstore.count(view, fstore.Var('g'), fstore.Var('s'), fstore.Var('p'), fstore.Var('o'))} "
            f"(at {repo.current_branch})")
    return 0


def verify_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help="check the commit chain only (every commit id)")


def cmd_verify(args: argparse.Namespace) -> int:
    """``datae verify [--quick]``: exit 1 when a problem is found."""
    with open_repo(args) as repo:
        problems = repo.verify(quick=args.quick)
    for problem in problems:
        out(f"error: {problem}")
    if problems:
        return EXIT_CONFLICT
    out("ok: the B-trees and every commit id verified" if args.quick else
        "ok: the B-trees, every commit id and its counts, every head and snapshot digest, index, ref, term and blob verified")
    return 0


def gc_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--expire", type=float, default=30.0, metavar="DAYS",
                   help="keep deleted branches' and tags' commits this many days (default 30; 0: drop them now)")


def cmd_gc(args: argparse.Namespace) -> int:
    """``datae gc [--expire DAYS]``."""
    repo = open_repo(args)
    try:
        report = repo.gc(expire=dt.timedelta(days=args.expire))
    finally:
        repo.close()
    out(f"dropped {report.commits} commit(s), {report.records} change record(s), {report.snapshots} snapshot(s), "
        f"{report.terms} term(s), {report.reflog_entries} reflog entr{'y' if report.reflog_entries == 1 else 'ies'}")
    out(f"data file: {report.bytes_before:,} -> {report.bytes_after:,} bytes")
    return 0


def upgrade_arguments(p: argparse.ArgumentParser) -> None:
    """``datae upgrade`` takes no arguments."""


def cmd_upgrade(args: argparse.Namespace) -> int:
    """``datae upgrade``: the store rewritten in this datae's format (or left as it is)."""
    import fstore  # the store layer, loaded when a command runs

    report = fstore.upgrade(store_path(args), map_size=map_size(args))
    if not report.upgraded:
        out(f"the store is in format {report.version} already: nothing to do")
    else:
        out(f"upgraded from format {report.version} to {fstore.FORMAT_VERSION} (verified); "
            f"data file: {report.bytes_before:,} -> {report.bytes_after:,} bytes")
    return 0


def reflog_arguments(p: argparse.ArgumentParser) -> None:
    """``datae reflog`` takes no arguments."""


def cmd_reflog(args: argparse.Namespace) -> int:
    """``datae reflog``."""
    repo = open_repo(args)
    try:
        entries = repo.reflog()
    finally:
        repo.close()
    for when, kind, name, commit in entries:
        out(f"{commit[:10]} {when.isoformat(timespec='seconds')} deleted {kind} {name}")
    return 0
