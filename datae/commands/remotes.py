"""The ``datae`` commands between stores: ``remote``, ``clone``, ``fetch``, ``push`` and
``pull``. A remote's URL is a path to a store or ``http://HOST:PORT`` of ``datae serve``
(bearer token: ``--token``, ``--token-file`` or ``$DATAE_TOKEN``).

    datae clone http://host:8000 copy
    datae remote add origin ../other
    datae fetch origin
    datae push origin main --tags
    datae pull                   # conflicts stop it as datae merge does
"""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import urlsplit

from ..context import author, open_repo, out, token, token_options
from .merge import print_stopped  # pull stops on conflicts as merge does

__all__ = ["cmd_remote", "cmd_clone", "cmd_fetch", "cmd_push", "cmd_pull", "clone_directory"]


def remote_arguments(p: argparse.ArgumentParser) -> None:
    remotes = p.add_subparsers(dest="remote_command", required=True, metavar="REMOTE_COMMAND")
    r = remotes.add_parser("add", help="add a remote (URL: a path to a store, or http://HOST:PORT of datae serve)")
    r.add_argument("name")
    r.add_argument("url")
    r = remotes.add_parser("remove", help="remove a remote and its remote-tracking branches")
    r.add_argument("name")
    remotes.add_parser("list", help="every remote and its URL")


def cmd_remote(args: argparse.Namespace) -> int:
    """``datae remote add NAME URL``, ``remove NAME``, ``list``."""
    with open_repo(args) as repo:
        if args.remote_command == "add":
            repo.remote_add(args.name, args.url)
        elif args.remote_command == "remove":
            repo.remote_remove(args.name)
        else:
            for name, url in sorted(repo.remotes().items()):
                out(f"{name}\t{url}")
    return 0


def clone_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", help="a path to a store, or http://HOST:PORT of datae serve")
    p.add_argument("directory", nargs="?")
    p.add_argument("--no-local", action="store_true",
                   help="send and check every commit, as a fetch does, rather than copying the store's file")
    token_options(p)


def cmd_clone(args: argparse.Namespace) -> int:
    """``datae clone URL [DIRECTORY]``."""
    import fstore  # the store layer, loaded when the command runs

    from ..progress import transfer_progress  # rich, loaded when the command runs

    target = Path(args.directory or clone_directory(args.url)).resolve() / fstore.STORE_DIR
    with transfer_progress("receiving") as progress:
        repo = fstore.clone(args.url, target, local=not args.no_local, token=token(args), progress=progress)
    with repo:
        commits = len(list(repo.log(repo.current_branch)))
        out(f"Cloned {args.url} into {target.parent}: {commits} commit(s) on {repo.current_branch}")
    return 0


def clone_directory(url: str) -> str:
    """The directory ``datae clone URL`` makes by default: the last part of the URL's
    path, else its host (``http://host:8000`` -> ``host``).

    >>> clone_directory("http://host:8000"), clone_directory("../stores/schema")
    ('host', 'schema')
    """
    parts = urlsplit(url) if "://" in url else None
    path = (parts.path if parts else url).rstrip("/")
    return Path(path).name or (parts.hostname if parts and parts.hostname else "clone")


def fetch_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("remote", nargs="?", default="origin")
    token_options(p)


def cmd_fetch(args: argparse.Namespace) -> int:
    """``datae fetch [REMOTE]``: a line per remote-tracking branch that moved."""
    from ..progress import transfer_progress  # rich, loaded when the command runs

    with open_repo(args) as repo:
        before = repo.remote_branches()
        with transfer_progress("receiving") as progress:
            fetched = repo.fetch(args.remote, token=token(args), progress=progress)
        for name, head in sorted(fetched.items()):
            if before.get(name) != head:
                out(f"{(before.get(name) or 'new')[:10]}..{(head or 'empty')[:10]}  {name}")
    return 0


def push_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("remote", nargs="?", default="origin")
    p.add_argument("branch", nargs="?")
    p.add_argument("--force", action="store_true", help="move the remote's branch even if it drops commits (they stay in its reflog)")
    p.add_argument("--tags", action="store_true", help="push every tag too (a tag there is moved only with --force)")
    token_options(p)


def cmd_push(args: argparse.Namespace) -> int:
    """``datae push [REMOTE [BRANCH]] [--force] [--tags]``."""
    from ..progress import transfer_progress  # rich, loaded when the command runs

    with open_repo(args) as repo:
        branch = args.branch or repo.current_branch
        with transfer_progress("sending") as progress:
            pushed = repo.push(args.remote, branch, force=args.force, tags=args.tags, token=token(args),
                               progress=progress)
    out(f"{branch} -> {args.remote}/{branch} ({(pushed or '')[:10]})")
    return 0


def pull_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("remote", nargs="?", default="origin")
    p.add_argument("branch", nargs="?")
    p.add_argument("--author", help="the merge commit's author (default: $DATAE_AUTHOR, else $USER)")
    token_options(p)


def cmd_pull(args: argparse.Namespace) -> int:
    """``datae pull [REMOTE [BRANCH]]``: conflicts stop it as ``datae merge`` does."""
    import fstore  # the store layer (its merge errors), loaded when the command runs

    with open_repo(args) as repo:
        try:
            head = repo.pull(args.remote, args.branch, token=token(args), author=author(args))
        except fstore.ConflictsRecorded as stopped:
            return print_stopped(stopped)
        out(f"{repo.current_branch} is at {(head or '')[:10]}")
    return 0
