"""Where byok-tui keeps its state: config, data, the key file and logs.

`BYOK_TUI_HOME`, when set, puts everything under that one folder (portable installs, tests).
Otherwise platformdirs' per-user folders for `byok-tui` are used. Nothing is created here:
callers create the folder they are about to write to.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "byok-tui"
HOME_ENV = "BYOK_TUI_HOME"


@dataclass(frozen=True, slots=True)
class AppPaths:
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


def ensure_private_dir(path: Path) -> bool:
    """Create `path` (mode 0700) if missing; tighten it if group or others can read it.

    Returns True when an existing folder's permissions had to be tightened.
    """
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        path.chmod(0o700)
        return True
    return False
