"""Files a command reads and writes: gzip-compressed when the name ends in ``.gz`` (any
case), and written beside the target then renamed onto it once whole, so a failed
export leaves nothing, nor half a file, under that name.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "out.nq.gz")
>>> with open_output(path) as stream:
...     _ = stream.write(b"<urn:s> <urn:p> <urn:o> .\\n")
>>> import gzip; gzip.open(path).read()
b'<urn:s> <urn:p> <urn:o> .\\n'
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from contextlib import contextmanager
from typing import IO, Any, Iterator

from .errors import ExportError

__all__ = ["open_output", "open_input", "is_gzipped", "without_gz", "GZIP_DAMAGE"]

# What reading a damaged ``.gz`` file raises: a file cut short is an EOFError, which is
# no OSError, and gzip's own errors do not name the file.
GZIP_DAMAGE = (EOFError, gzip.BadGzipFile, zlib.error)


def is_gzipped(name: str) -> bool:
    """Whether a file of this name is (to be) gzip-compressed.

    >>> is_gzipped("towns.csv.GZ"), is_gzipped("towns.csv")
    (True, False)
    """
    return name.lower().endswith(".gz")


def without_gz(name: str) -> str:
    """``name`` less a ``.gz`` suffix: the name that says what the content is.

    >>> without_gz("schema.nq.GZ"), without_gz("schema.nq")
    ('schema.nq', 'schema.nq')
    """
    return name[:-3] if is_gzipped(name) else name


def open_input(path: str | os.PathLike[str], *, encoding: str | None = None) -> IO[Any]:
    """``path`` for reading, decompressed on the way when it is named ``.gz``: bytes, or
    text in ``encoding`` (line ends as written, as the csv module wants them)."""
    path = os.fspath(path)
    if encoding is None:
        return gzip.open(path, "rb") if is_gzipped(path) else open(path, "rb")
    if is_gzipped(path):
        return gzip.open(path, "rt", newline="", encoding=encoding)
    return open(path, newline="", encoding=encoding)


@contextmanager
def open_output(path: str | os.PathLike[str], *, text: bool = False) -> Iterator[IO[Any]]:
    """A binary stream (``text``: UTF-8 text, line ends as written) onto ``path``, made
    whole when the ``with`` block ends and not at all if it raises. ``ExportError`` when
    the directory is missing."""
    path = os.fspath(path)
    directory, name = os.path.split(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ExportError(f"cannot write {path}: no directory {directory}")
    partial, raw = _create_beside(directory, name)
    try:
        with raw:
            compressed = gzip.GzipFile(filename=name[:-3], mode="wb", fileobj=raw) if is_gzipped(name) else None
            binary: IO[bytes] = compressed or raw
            stream = io.TextIOWrapper(binary, encoding="utf-8", newline="") if text else binary
            yield stream
            if text:
                stream.detach()  # flushes, and leaves the closing to the binary streams
            if compressed is not None:
                compressed.close()  # writes the gzip trailer into raw
        os.replace(partial, path)
    except BaseException:
        os.unlink(partial)
        raise


def _create_beside(directory: str, name: str) -> tuple[str, IO[bytes]]:
    """A new file ``.NAME.<random>.partial`` in ``directory``, made with the mode any new
    file gets (0666 less the umask, applied by ``open``: reading the umask would mean
    setting it, for every thread of the process)."""
    partial = os.path.join(directory, f".{name}.{os.urandom(8).hex()}.partial")
    return partial, open(partial, "xb")
