"""The datae application: the ``datae`` command (:mod:`datae.cli`, a table of the
commands in :mod:`datae.commands`), the REPL
(:mod:`datae.repl`) and the HTTP server (:mod:`datae.server`).

It sits above the query language (``query``), the versioned store (``fstore``) and the
n-tuple store (``nstore``), and nothing below imports it.
"""

__all__: list[str] = []
