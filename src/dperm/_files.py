"""Output files that are never half-written: checks before the work, atomic writes after.

A private fit spends budget; losing its result to an unwritable path after the fit (or
leaving a truncated file behind) wastes that budget. The command line checks every output
path before it reads any data, and writes by temporary file then rename.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["OutputPathError", "check_output_file", "check_output_dir", "write_atomic", "write_text_atomic",
           "exclusive_lock"]


from .exceptions import OutputPathError  # defined in the leaf, re-exported here


def check_output_file(path) -> Path:
    """Raise OutputPathError unless a file can be created at ``path`` (its folder exists
    and is writable, and ``path`` is not a folder)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputPathError(f"output {str(path)!r} is a folder; give a file name")
    if not folder.is_dir():
        raise OutputPathError(f"cannot write {str(path)!r}: folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputPathError(f"cannot write {str(path)!r}: folder {str(folder)!r} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise OutputPathError(f"cannot write {str(path)!r}: the file is read-only")
    return path


def check_output_dir(path) -> Path:
    """Create the folder ``path`` (and parents) if needed; raise OutputPathError unless it
    is a writable folder."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputPathError(f"output folder {str(path)!r} is a file")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputPathError(f"cannot create output folder {str(path)!r}: {error.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputPathError(f"output folder {str(path)!r} is not writable")
    return path


def write_atomic(path, write: Callable[[Path], object]) -> Path:
    """Call ``write(temporary_path)``, then rename the temporary file onto ``path``: readers
    see the old file or the whole new one, never a partial one. An ``OSError`` names
    ``path`` as given, never the temporary file (an internal name the user never gave)."""
    path = Path(path)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix or ".tmp", dir=path.parent or ".")
    except OSError as error:
        raise _naming(error, path) from None
    os.close(fd)
    temporary = Path(name)
    try:
        write(temporary)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes 0600; a new file gets the usual mode
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise _naming(error, path) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


def _naming(error: OSError, path: Path) -> OSError:
    """The same error (type, errno, message) about ``path``."""
    return type(error)(error.errno, error.strerror or str(error), str(path)) if error.errno else \
        type(error)(f"cannot write {str(path)!r}: {error}")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomic(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return write_atomic(path, lambda p: p.write_text(text, encoding="utf-8"))


@contextlib.contextmanager
def exclusive_lock(path) -> Iterator[None]:
    """Hold an exclusive lock tied to ``path`` (on the side file ``path + ".lock"``, which
    atomic rewrites of ``path`` never replace) until the block ends; other processes and
    threads entering the same block wait. POSIX ``flock``; where it does not exist (Windows)
    the block runs unlocked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(f"{os.fspath(path)}.lock", "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
