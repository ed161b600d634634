"""Builds datae's one compiled module (everything else is in pyproject.toml)."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize([Extension("nstore._keysort", ["nstore/_keysort.pyx"]),
                                 Extension("nstore._ntriples", ["nstore/_ntriples.pyx"])], language_level=3))
