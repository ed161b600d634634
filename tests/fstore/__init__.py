"""Tests of the fstore package."""
