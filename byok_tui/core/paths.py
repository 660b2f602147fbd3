"""Where byok-tui keeps its state: config, data, the key file and logs.

`BYOK_TUI_HOME`, when set, puts everything under that one folder (portable installs, tests).
Otherwise platformdirs' per-user folders for `byok-tui` are used. Nothing is created here:
callers create the folder they are about to write to.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

APP_NAME = "byok-tui"
HOME_ENV = "BYOK_TUI_HOME"


# A NamedTuple, not a dataclass: its module loads before the first frame (launch.py says why).
class AppPaths(NamedTuple):
    config_dir: Path
    data_dir: Path
    keys_dir: Path
    log_dir: Path

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def keys_file(self) -> Path:
        return self.keys_dir / "keys.json"

    @property
    def crash_dir(self) -> Path:
        return self.log_dir / "crashes"


def app_paths(environ: Mapping[str, str] | None = None) -> AppPaths:
    env = os.environ if environ is None else environ
    home = env.get(HOME_ENV, "").strip()
    if home:
        root = Path(home).expanduser()
        return AppPaths(
            config_dir=root,
            data_dir=root / "data",
            keys_dir=root / "keys",
            log_dir=root / "logs",
        )
    import platformdirs  # only paid for when BYOK_TUI_HOME is not set

    data_dir = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    return AppPaths(
        config_dir=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
        data_dir=data_dir,
        keys_dir=data_dir / "keys",
        log_dir=Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)),
    )


def make_private_dirs(path: Path) -> None:
    """Create `path` and every missing folder above it, each 0700 whatever the umask (mkdir's
    `parents` would give those the umask's mode: 0777 under umask 000). Folders that exist
    are left as they are."""
    missing = []
    while not path.exists():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile (another process)
            folder.mkdir(mode=0o700)
        folder.chmod(0o700)  # the umask may have taken bits away: exactly 0700


def ensure_private_dir(path: Path) -> bool:
    """One of byok-tui's own folders: created 0700 if missing, tightened to 0700 if group or
    others can use it. Returns True when an existing folder had to be tightened."""
    make_private_dirs(path)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)
        return True
    return False


class FileReadError(OSError):
    """A file refused: not a regular file (read or written), or larger than a reader's
    limit. Its message says which, and that nothing was done."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(errno.EINVAL, problem)
        self.filename = str(path)


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them, whatever `stat` says:
    a FIFO, a device or a folder is refused at once (opened without blocking, checked on the
    open descriptor), and a file that grows past `limit` while read is refused, never read
    whole. Raises FileReadError, or the OSError of the open (FileNotFoundError...)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as file:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise FileReadError(path, f"it is {_kind(mode)}, not a regular file")
        data = file.read(limit + 1)
    if len(data) > limit:
        raise FileReadError(path, f"it is larger than {_size(limit)}")
    return data


def open_private_append(path: Path) -> int:
    """A descriptor appending to the regular file at `path`, made 0600 if new; a symlink, a
    FIFO or a device is refused (FileReadError), never written through. Raises OSError."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags, 0o600)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileReadError(path, f"it is {_kind(mode)}, not a regular file; nothing was written")
    return fd


def _size(limit: int) -> str:
    return f"{limit >> 20} MB" if limit >= 1 << 20 else f"{limit >> 10} KB"


def write_private(path: Path, data: bytes, *, new: bool = False) -> None:
    """Write `data` to `path`, readable by the user alone (0600 from its first byte), whole
    or not at all: into a new temporary file beside it, renamed over it. A path that is a
    symlink (a planted one could point at the key file) or anything but a regular file is
    refused (FileReadError); the rename replaces a name, never follows a link. `new`:
    never replace a file already there. Raises OSError."""
    if new:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(path, flags, 0o600), "wb") as file:
            file.write(data)
        return
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise FileReadError(path, f"it is {_kind(mode)}, not a regular file; nothing was written")
    import tempfile  # not at start-up: only a write needs it

    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:  # mkstemp creates it 0600
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        Path(temp_name).replace(path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket or special file"
