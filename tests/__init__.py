"""Tests of the datae project, mirroring its packages (nstore, fstore, query, datae)."""
