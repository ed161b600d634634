"""The ``datae`` commands of named refs: ``branch``, ``switch`` and ``tag``.

    datae branch feature         # from the current branch (or: datae branch NAME START)
    datae switch feature
    datae tag v1                 # the current branch's head (or: datae tag NAME REF)
    datae branch -d feature
"""

from __future__ import annotations

import argparse

from ..context import open_repo, out, short_head

__all__ = ["cmd_branch", "cmd_switch", "cmd_tag"]


def branch_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?")
    p.add_argument("start", nargs="?")
    p.add_argument("-d", "--delete", metavar="NAME", help="delete a branch another branch has merged")
    p.add_argument("-D", dest="force_delete", metavar="NAME", help="delete a branch even if nothing has merged it")
    p.add_argument("-a", "--all", action="store_true", help="list the remote-tracking branches too")


def cmd_branch(args: argparse.Namespace) -> int:
    """``datae branch [NAME [START]]``, ``-d NAME``, ``-D NAME``, ``-a``."""
    with open_repo(args) as repo:
        if args.delete or args.force_delete:
            name = args.delete or args.force_delete
            repo.delete_branch(name, force=bool(args.force_delete))
            out(f"Deleted branch {name}")
        elif args.name:
            repo.branch(args.name, args.start or repo.current_branch)
        else:
            current = repo.current_branch
            for name, head in sorted(repo.branches().items()):
                out(f"{'*' if name == current else ' '} {name:<20} {short_head(head)}")
            if args.all:
                for name, head in sorted(repo.remote_branches().items()):
                    out(f"  {'remotes/' + name:<20} {short_head(head)}")
    return 0


def switch_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("branch")


def cmd_switch(args: argparse.Namespace) -> int:
    """``datae switch BRANCH``."""
    with open_repo(args) as repo:
        repo.switch(args.branch)
        out(f"Switched to branch '{args.branch}'")
    return 0


def tag_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?")
    p.add_argument("ref", nargs="?")
    p.add_argument("-d", "--delete", metavar="NAME")


def cmd_tag(args: argparse.Namespace) -> int:
    """``datae tag [NAME [REF]]``, ``-d NAME``."""
    with open_repo(args) as repo:
        if args.delete:
            repo.delete_tag(args.delete)
            out(f"Deleted tag {args.delete}")
        elif args.name:
            repo.tag(args.name, args.ref or repo.current_branch)
        else:
            for name, commit in sorted(repo.tags().items()):
                out(f"{name:<20} {commit[:10]}")
    return 0
