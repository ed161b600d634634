"""Files a command writes: gzip-compressed when the name ends in ``.gz`` (as the readers
take them), and written beside the target then renamed onto it once whole, so a failed
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
import tempfile
from contextlib import contextmanager
from typing import IO, Any, Iterator

from .errors import ExportError

__all__ = ["open_output"]


@contextmanager
def open_output(path: str | os.PathLike[str], *, text: bool = False) -> Iterator[IO[Any]]:
    """A binary stream (``text``: UTF-8 text, line ends as written) onto ``path``, made
    whole when the ``with`` block ends and not at all if it raises. ``ExportError`` when
    the directory is missing."""
    path = os.fspath(path)
    directory, name = os.path.split(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ExportError(f"cannot write {path}: no directory {directory}")
    fd, partial = tempfile.mkstemp(prefix=f".{name}.", suffix=".partial", dir=directory)
    try:
        with os.fdopen(fd, "wb") as raw:
            compressed = gzip.GzipFile(filename=name[:-3], mode="wb", fileobj=raw) if name.endswith(".gz") else None
            binary: IO[bytes] = compressed or raw
            stream = io.TextIOWrapper(binary, encoding="utf-8", newline="") if text else binary
            yield stream
            if text:
                stream.detach()  # flushes, and leaves the closing to the binary streams
            if compressed is not None:
                compressed.close()  # writes the gzip trailer into raw
        os.chmod(partial, 0o666 & ~_umask())  # mkstemp's 0600 is for the unfinished file only
        os.replace(partial, path)
    except BaseException:
        os.unlink(partial)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
