"""Output files written whole or not at all (:func:`write_output`: a temp file in the same
directory, then a rename), so a failure never leaves a half-written file."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from ..errors import GraphvizTbError

__all__ = ["write_output"]

def write_output(path: str | os.PathLike[str], data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (or its pieces, made as they are written) to ``path`` atomically: temp
    file beside it, fsync, rename.

    A symlink stays a link: the file it names is the one replaced.  A target that is no
    regular file (``/dev/null``, a named pipe) or an open stream (``/dev/stdout``) is written
    into as it is, since renaming over it would replace the device, pipe or redirected file.

    Raises
    ------
    GraphvizTbError
        The file cannot be written (no such directory, a directory in the way, no permission,
        disk full); nothing is left behind, and an existing file keeps its old content.
    """
    if _is_special(path):
        _write_into(Path(path), data)
        return
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise GraphvizTbError(f"{target}: the directory {directory} does not exist")
    if target.is_dir():
        raise GraphvizTbError(f"{target} is a directory; give a file name to write")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise GraphvizTbError(f"{target}: cannot write it ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            _write_all(fh, data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise GraphvizTbError(f"{target}: cannot write it ({exc.strerror or exc})") from None
        raise


def _write_all(fh: BinaryIO, data: bytes | Iterable[bytes]) -> None:
    if isinstance(data, bytes):
        fh.write(data)
        return
    for piece in data:
        fh.write(piece)


def _is_special(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a link under /dev or /proc (``/dev/stdout``, ``/dev/fd/N``: open
    streams, whatever they lead to; a file in /dev/shm is a file), or is there (its links
    followed) and is neither a file nor a directory."""
    if os.path.islink(path) and os.path.abspath(path).startswith(("/dev/", "/proc/")):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _write_into(target: Path, data: bytes | Iterable[bytes]) -> None:
    """``data`` written into a device, pipe or stream.  Appended: ``/dev/stdout`` reopens the
    file the shell redirected to, and ``>> log`` asks to keep what the log holds.  Pieces are
    all made first: a failure making one leaves nothing written (no temp file guards a
    stream)."""
    whole = data if isinstance(data, bytes) else b"".join(data)
    try:
        with target.open("ab") as fh:
            fh.write(whole)
    except OSError as exc:
        raise GraphvizTbError(f"{target}: cannot write it ({exc.strerror or exc})") from None
