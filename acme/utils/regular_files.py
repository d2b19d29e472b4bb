"""Reading a file of a checkpoint, snapshot or dataset that may have been tampered with: regular files only,
of bounded size, within a deadline.

A file the library wrote is a plain file of known kind. Whoever can write into a checkpoint directory can put
something else in its place: a link to ``/dev/zero`` (endless), a FIFO (``open`` waits for a writer that never
comes), a device, or a file of many gigabytes. ``read_regular_file`` refuses each of them before reading: the
file is opened without following a link and without blocking (``O_NOFOLLOW | O_NONBLOCK``), must be a regular
file by ``fstat``, and no larger than the caller's limit; it is read in blocks against a deadline, so a file that
grows while it is read or a file system that slows to a crawl ends in an error rather than a hang.
"""

from __future__ import annotations

import os
import stat
import time

BLOCK_BYTES = 1 << 20
DEFAULT_DEADLINE_SECONDS = 300.0  # long enough for tens of gigabytes from a slow disk


class FileRefusedError(OSError):
    """A file that is not a regular file, is larger than allowed, or could not be read in time."""


class FileTooLargeError(FileRefusedError):
    """A file larger than its limit (or one that grew past it while it was read)."""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _size_text(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def open_regular_file(path: str, max_bytes: int, follow_links: bool = False) -> int:
    """A read-only descriptor of ``path``, checked to be a regular file (not a link) of at most ``max_bytes``.

    Raises ``FileNotFoundError`` for a missing file and ``FileRefusedError`` for a link, FIFO, device, socket or
    directory, or a file over the limit. With ``follow_links`` (a file the user names, which may be a link to their
    own file) a link is followed and what it leads to must be a regular file. The caller closes the descriptor.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow_links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if not follow_links and os.path.islink(path):
            raise FileRefusedError(
                f"{path} is a symbolic link (to {os.readlink(path)!r}); only regular files are read here."
            ) from None
        raise error
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefusedError(f"{path} is {_kind(info.st_mode)}; only regular files are read here.")
        if info.st_size > max_bytes:
            raise FileTooLargeError(
                f"{path} is {_size_text(info.st_size)}, more than the {_size_text(max_bytes)} such a file may be."
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_regular_file(path: str, max_bytes: int) -> None:
    """Raises as ``open_regular_file`` does unless ``path`` is a regular file of at most ``max_bytes``: for a
    file another library opens by its name (an HDF5 file, say)."""
    os.close(open_regular_file(path, max_bytes))


def read_regular_file(
    path: str, max_bytes: int, deadline_seconds: float = DEFAULT_DEADLINE_SECONDS, follow_links: bool = False
) -> bytes:
    """The whole content of the regular file ``path``, of at most ``max_bytes``, read within ``deadline_seconds``
    (``follow_links``: as ``open_regular_file``).

    Raises ``FileNotFoundError`` for a missing file, ``FileRefusedError`` for anything but a regular file, a file
    over the limit (also one that grows past it while read) or a read that outlasts the deadline, and
    ``OSError`` for other read errors.
    """
    fd = open_regular_file(path, max_bytes, follow_links)
    deadline = time.monotonic() + deadline_seconds
    blocks, total = [], 0
    try:
        while True:
            block = os.read(fd, BLOCK_BYTES)
            if not block:
                return b"".join(blocks)
            total += len(block)
            if total > max_bytes:
                raise FileTooLargeError(
                    f"{path} grew past {_size_text(max_bytes)} while it was read; such a file may be at most that."
                )
            blocks.append(block)
            if time.monotonic() > deadline:
                raise FileRefusedError(
                    f"Reading {path} took more than {deadline_seconds:.0f} s ({_size_text(total)} read); the file "
                    "system is too slow or the file is not what it should be."
                )
    finally:
        os.close(fd)
