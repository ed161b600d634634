"""``datae request``: merge requests on the command line (``docs/versioning.md``, "Merge
requests").

    datae request open --from feature --into main -m "Add the 2024 figures"
    datae request list [--state open|merged|closed|all]
    datae request show 3
    datae request comment 3 -m "the units are wrong"
    datae request approve 3
    datae request merge 3
    datae request close 3

``--remote NAME`` acts on that remote's requests (``open`` pushes the branch there first);
``list`` and ``show`` with ``--cached`` read the copies the last fetch made, offline.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

from ..context import Fatal, author, open_repo, out, positive_int, token

__all__ = ["cmd_request", "requests_target", "format_summary", "format_request"]

# fstore.sync.merge_requests.STATES and fstore's DEFAULT_BRANCH, written here so that
# declaring the arguments (and --help) does not load the store; tests/datae/test_cli_table.py
# checks they agree.
STATES = ("open", "merged", "closed")
DEFAULT_BRANCH = "main"


def requests_target(args: argparse.Namespace) -> tuple[Any, Callable[[], None]]:
    """What a ``request`` command acts on, and how to let it go: this store, the store of
    ``--remote NAME``, or with ``--cached`` the copies of its requests the last fetch made.
    Every target answers the same methods (``requests``, ``request``, ``request_open``,
    ...), so an HTTP client with those names can be returned here for ``http://`` remotes."""
    remote = getattr(args, "remote", None)
    if remote is None and getattr(args, "cached", False):
        raise Fatal("--cached reads the copies of a remote's requests: name it with --remote NAME")
    repo = open_repo(args)
    if remote is None:
        return repo, repo.close
    if getattr(args, "cached", False):
        return repo.request_mirror(remote), repo.close
    try:
        url = repo.remote_url(remote)
    finally:
        repo.close()
    # The store and its sync client: loaded when the command runs.
    import fstore
    from fstore.sync.remotes import connect

    other = connect(url, fstore.Repository, token(args))
    return other, other.close


def format_summary(record: dict) -> str:
    """``#N [state] source -> target: title (K approvals)``."""
    count = len(record["approvals"])
    return (f"#{record['number']} [{record['state']}] {record['source']} -> {record['target']}: {record['title']} "
            f"({count} approval{'' if count == 1 else 's'})")


def format_request(record: dict) -> list[str]:
    """The lines of ``datae request show``: the request, its review, and its preview."""
    lines = [format_summary(record),
             f"opened by {record['author'] or '(unknown)'} at {record['created']} (source at {record['source_head'][:10]})"]
    preview = record.get("preview")
    current = preview["source_head"] if preview else None
    for approval in record["approvals"]:
        stale = " (before the source's last commits)" if current and approval["head"] != current else ""
        lines.append(f"approved by {approval['author']} at {approval['time']}{stale}")
    for comment in record["comments"]:
        lines.append(f"comment by {comment['author'] or '(unknown)'} at {comment['time']}: {comment['text']}")
    if record["state"] == "merged":
        lines.append(f"merged by {record['merged_by'] or '(unknown)'} as {record['merge_commit'][:10]}")
    elif record["state"] == "closed":
        lines.append(f"closed by {record['closed_by'] or '(unknown)'}")
    if preview is None:
        if record["state"] == "open":
            lines.append("no preview: a branch of the request is gone (or not fetched)")
        return lines
    return lines + _preview_lines(preview, record["state"] == "merged")


def _preview_lines(preview: dict, merged: bool) -> list[str]:
    quads = preview["quads"]
    tables = "".join(f", table {name}: {rows} row(s)" for name, rows in preview["tables"].items())
    lines = [f"{'merged' if merged else 'would merge'} ({preview['kind']}): +{quads['added']} -{quads['removed']} "
             f"quad(s){tables}"]
    lines += [f"  {line}" for line in preview["changes"]]
    if preview["more"]:
        lines.append(f"  ... and {preview['more']} more")
    if preview["conflicts"]:
        lines.append(f"{len(preview['conflicts'])} conflict(s): merge the target into the source and resolve them there")
        lines += [f"  CONFLICT {conflict['text']}" for conflict in preview["conflicts"]]
    elif not merged:
        lines.append("no conflicts")
    return lines


# -- handlers --------------------------------------------------------------------------------


def cmd_request_open(args: argparse.Namespace) -> int:
    source = args.source
    if source is None or args.remote is not None:
        with open_repo(args) as repo:
            source = source or repo.current_branch
            if args.remote is not None:  # the remote must hold the branch it is asked to merge
                repo.push(args.remote, source, token=token(args))
    target, close = requests_target(args)
    try:
        number = target.request_open(source, args.into, args.message or "", author(args))
    finally:
        close()
    where = "" if args.remote is None else f" on {args.remote}"
    out(f"Opened merge request #{number}{where}: {source} -> {args.into}")
    return 0


def cmd_request_list(args: argparse.Namespace) -> int:
    target, close = requests_target(args)
    try:
        records = target.requests(None if args.state == "all" else args.state)
    finally:
        close()
    for record in records:
        out(format_summary(record))
    if not records:
        out("no merge requests" if args.state == "all" else f"no {args.state} merge requests")
    return 0


def cmd_request_show(args: argparse.Namespace) -> int:
    target, close = requests_target(args)
    try:
        record = target.request(args.number, limit=args.limit)
    finally:
        close()
    for line in format_request(record):
        out(line)
    return 0


def _act(args: argparse.Namespace, act: Callable[[Any], Any], done: str) -> int:
    target, close = requests_target(args)
    try:
        act(target)
    finally:
        close()
    out(done)
    return 0


def cmd_request_comment(args: argparse.Namespace) -> int:
    return _act(args, lambda t: t.request_comment(args.number, args.message, author(args)),
                f"Commented on merge request #{args.number}")


def cmd_request_approve(args: argparse.Namespace) -> int:
    return _act(args, lambda t: t.request_approve(args.number, author(args)), f"Approved merge request #{args.number}")


def cmd_request_close(args: argparse.Namespace) -> int:
    return _act(args, lambda t: t.request_close(args.number, author(args)), f"Closed merge request #{args.number}")


def cmd_request_merge(args: argparse.Namespace) -> int:
    target, close = requests_target(args)
    try:
        into = target.request(args.number, limit=0)["target"]
        head = target.request_merge(args.number, author(args), args.message)
    finally:
        close()
    out(f"Merged request #{args.number} into {into}: {into} is at {(head or '')[:10]}")
    return 0


# -- arguments -------------------------------------------------------------------------------


def cmd_request(args: argparse.Namespace) -> int:
    """``datae request ACTION ...``: the action's handler."""
    return args.request_handler(args)



def request_arguments(p: argparse.ArgumentParser) -> None:
    """``datae request ACTION``: each action's parser names its handler (``request_handler``)."""
    sub = p.add_subparsers(dest="request_command", required=True, metavar="REQUEST_COMMAND")

    def action(name: str, handler: Callable[[argparse.Namespace], int], help: str, *, number: bool = True,
               cached: bool = False) -> argparse.ArgumentParser:
        q = sub.add_parser(name, help=help, description=help)
        q.set_defaults(request_handler=handler)
        if number:
            q.add_argument("number", type=int)
        q.add_argument("--remote", metavar="NAME", help="act on the requests of remote NAME, on its store")
        if cached:
            q.add_argument("--cached", action="store_true",
                           help="with --remote: the copies the last fetch made (offline, read-only)")
        q.add_argument("--author", help="who acts (default: DATAE_AUTHOR, else USER)")
        q.add_argument("--token", help="with --remote on http://: the server's bearer token (default: $DATAE_TOKEN)")
        q.add_argument("--token-file", metavar="FILE", help="read the bearer token from FILE's first line")
        return q

    q = action("open", cmd_request_open, "propose merging a branch (with --remote: pushed there first)", number=False)
    q.add_argument("--from", dest="source", metavar="BRANCH", help="the branch to merge (default: the current one)")
    q.add_argument("--into", default=DEFAULT_BRANCH, metavar="BRANCH", help="the target (default: main)")
    q.add_argument("-m", "--message", metavar="TITLE")
    q = action("list", cmd_request_list, "#N [state] source -> target: title (approvals)", number=False, cached=True)
    q.add_argument("--state", default="open", choices=[*STATES, "all"])
    q = action("show", cmd_request_show, "a request, its review, the changes it would apply and its conflicts",
               cached=True)
    q.add_argument("--limit", type=positive_int, default=20, help="show at most this many changes (default 20)")
    q = action("comment", cmd_request_comment, "comment on a request")
    q.add_argument("-m", "--message", required=True, metavar="TEXT")
    action("approve", cmd_request_approve, "approve an open request (not your own)")
    q = action("merge", cmd_request_merge, "merge an open request into its target (refused if it conflicts)")
    q.add_argument("-m", "--message", help="the merge commit's message")
    action("close", cmd_request_close, "close an open request without merging it")
