"""Tests of the datae app: CLI, REPL, server."""
