"""Builds datae's compiled modules (everything else is in pyproject.toml)."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize([
    Extension("nstore._blocks", ["nstore/_blocks.pyx"]),
    Extension("nstore._pack", ["nstore/_pack.pyx"]),
    Extension("nstore._btree", ["nstore/_btree.pyx"]),
    Extension("nstore._terms", ["nstore/_terms.pyx"]),
    Extension("nstore._ntriples", ["nstore/_ntriples.pyx"]),
    Extension("fstore.core._rows", ["fstore/core/_rows.pyx"]),
    Extension("fstore.tables._columns", ["fstore/tables/_columns.pyx"]),
], language_level=3))
