"""The ``datae`` commands by concern, one module each; :data:`datae.cli.COMMANDS` names
the module of every command.

A module declares command ``NAME``'s arguments in ``NAME_arguments(parser)`` next to its
handler ``cmd_NAME(args) -> int`` (the exit code). Its top level imports only the
standard library and :mod:`datae.context`, so that ``datae NAME --help`` stays light; a
handler imports what it needs of fstore, query and rich when it runs.

    store           init, status, stats, verify, gc, reflog
    data            import, export, query, repl
    history         log, show, diff, blame, revert, reset
    branches        branch, switch, tag
    merge           merge, conflicts, resolve
    remotes         remote, clone, fetch, push, pull
    merge_requests  request
    tables          table
    serve           serve
"""

__all__: list[str] = []
