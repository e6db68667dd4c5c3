"""Files written atomically and read only when regular: the one home of both, for every
weight, model and checkpoint file ferrotape writes.

``_write_atomically(path, data)`` writes to a hidden temporary file beside the target, syncs it
and renames it over the target, so a reader sees the old file or the new one, never a mix.
"""

import contextlib
import os
import re
import stat
import tempfile
from pathlib import Path


def _open_regular_file(path):
    """``path`` opened for binary reading, which must be a regular file: a FIFO would block for
    ever and a device such as /dev/zero never ends. Opened without blocking, then checked on
    the open descriptor, so a file swapped for a FIFO after a first look is caught too."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except IsADirectoryError:
        raise IsADirectoryError(f"{path}: is a directory, not a weights file") from None
    file = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
        file.close()
        raise ValueError(f"{path}: not a regular file (a device, FIFO or socket)")
    return file


def _read_regular_file(path):
    """The bytes of ``path``, which must be a regular file (see ``_open_regular_file``)."""
    with _open_regular_file(path) as file:
        return file.read()


def _write_atomically(path, data):
    """Writes ``data`` to ``path`` so that a reader sees the old file or the new one, never a
    mix, and an interrupted write leaves the old file as it was.

    The data goes to a hidden temporary file beside the target (the target of a symbolic
    link: the link itself stays), is synced, and is renamed over the target. The new file gets
    the mode of the file it replaces, or 0666 less the umask as ``open`` would give. A
    temporary left by a save that was killed outright is removed by the next save of the same
    file (its name holds the writer's process id, which is then no longer alive).
    """
    path = Path(os.path.realpath(path))
    prefix = f".{path.name}.{os.getpid()}."
    _remove_stale_temporaries(path)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            os.fchmod(file.fileno(), _mode_for(path))
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    _sync_directory(path.parent)


def _mode_for(path):
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask():
    """The process's umask, read without changing it where Linux reports it."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)  # elsewhere: set and restore (not atomic, but nothing better exists)
    os.umask(mask)
    return mask


def _remove_stale_temporaries(path):
    """Removes ``.NAME.PID.*.tmp`` files of ``path`` whose writer process is gone."""
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.(\d+)\.[^.]+\.tmp$")
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            match = pattern.match(entry.name)
            if match and not _process_alive(int(match.group(1))):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists but belongs to someone else
    return True


def _sync_directory(directory):
    """Makes the rename durable where the platform allows syncing a directory."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
