"""``datae serve``: the store over HTTP (:mod:`datae.server`, ``docs/server.md``).

    datae serve --port 8000 --token-file token.txt
    datae serve --host 0.0.0.0 --read-only
    datae serve --workers 4                   # four server processes (default: one per core)
"""

from __future__ import annotations

import argparse
import sys

from ..context import Fatal, held_rows_option, memory_limits, read_token_file, store_path

__all__ = ["cmd_serve"]


def serve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="default 8000; 0 picks a free port")
    p.add_argument("--token-file", metavar="FILE", help="writes (push, SPARQL update, graph store writes, merge requests) need "
                   "Authorization: Bearer with the token on FILE's first line")
    p.add_argument("--read-only", action="store_true", help="refuse every write")
    p.add_argument("--workers", type=int, metavar="N",
                   help="server processes, each answering on its own core (default: the cores this machine lets it "
                   "use); writes from any of them take turns, and one's write is seen by the next request on any "
                   "other; 1: one process, no supervisor")
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS", help="stop a query after this long (default 30)")
    p.add_argument("--max-results", type=int, default=100_000, metavar="ROWS",
                   help="refuse a query result larger than this (default 100000)")
    held_rows_option(p)


def cmd_serve(args: argparse.Namespace) -> int:
    """``datae serve``: until interrupted."""
    from query.limits import Limits  # the query layer, loaded when the command runs

    from ..server import ServerConfig, default_workers, serve  # starlette and uvicorn, loaded when the command runs

    if args.timeout <= 0 or args.max_results <= 0 or args.max_held_rows <= 0:
        raise Fatal("--timeout, --max-results and --max-held-rows must be positive")
    if args.workers is not None and args.workers < 1:
        raise Fatal("--workers must be at least 1")
    path = store_path(args)
    config = ServerConfig(str(path), token=read_token_file(args.token_file) if args.token_file else None,
                          read_only=args.read_only,
                          limits=Limits(args.timeout, args.max_results, args.max_held_rows, **memory_limits(args)))
    if config.token is None and not config.read_only and args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"datae serve: warning: anyone who reaches {args.host} can write (give --token-file or --read-only)",
              file=sys.stderr)
    workers = default_workers() if args.workers is None else args.workers
    # AddressInUseError names host:port
    serve(config, args.host, args.port, workers=workers, announce=lambda line: print(line, flush=True))
    return 0
