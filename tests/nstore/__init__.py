"""Tests of the nstore package."""
