"""Where the data set files are looked for, and how a missing one is downloaded.

The search order, first match wins:

1. ``$FERROTAPE_DATA/<name>/``, then ``$FERROTAPE_DATA`` itself;
2. ``~/.ferrotape/datasets/<name>/`` (where downloads go);
3. system directories given by the data set (Debian's ``/usr/share/datasets/fashion-mnist``).
"""

import contextlib
import os
import sys
import tempfile
import urllib.request
from pathlib import Path

DATA_ENV = "FERROTAPE_DATA"
# Module attribute, looked up at call time, so tests can put a fake opener in its place.
urlopen = urllib.request.urlopen
DOWNLOAD_TIMEOUT_S = 60


def cache_dir(name):
    """``~/.ferrotape/datasets/<name>``: where downloaded files are kept."""
    return Path.home() / ".ferrotape" / "datasets" / name


def search_dirs(name, system_dirs=()):
    """The directories searched for the files of data set ``name``, in order."""
    dirs = []
    root = os.environ.get(DATA_ENV)
    if root:
        dirs += [Path(root) / name, Path(root)]
    dirs.append(cache_dir(name))
    dirs += [Path(d) for d in system_dirs]
    return dirs


def find_dir(dirs, filenames):
    """The first directory of ``dirs`` that holds every file of ``filenames``, else ``None``."""
    for directory in dirs:
        if all((directory / f).is_file() for f in filenames):
            return directory
    return None


def describe_dirs(dirs):
    """The directories as an indented list for an error message, noting an unset variable."""
    lines = [f"  {d}" for d in dirs]
    if not os.environ.get(DATA_ENV):
        lines.insert(0, f"  ${DATA_ENV} (not set)")
    return "\n".join(lines)


def download(url, destination, check=None):
    """Downloads ``url`` to ``destination`` atomically and returns the destination.

    The bytes go to a temporary file in the destination's directory; ``check(path)``, when
    given, validates it (raising on a bad file); then it is flushed, synced and renamed into
    place. On any error the temporary file is removed, so no partial file is ever left under
    the final name, and an existing file there stays as it was.
    """
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    print(f"Downloading data from {url}", file=sys.stderr)
    handle, temp_name = tempfile.mkstemp(
        dir=destination.parent, prefix=f".{destination.name}.", suffix=".part"
    )
    try:
        with os.fdopen(handle, "wb") as out, urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response:
            while chunk := response.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if check is not None:
            check(Path(temp_name))
        os.replace(temp_name, destination)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    return destination
