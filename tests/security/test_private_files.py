"""Every folder byok-tui creates is private (0700) whatever the umask, a wider one is
tightened with a notice, and the database's companion files are refused unless they are
plain files of the user's own (another user could plant them in a folder left open)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from byok_tui.core.paths import app_paths
from tests.support.provider_server import Reply, provider_server

KEY = "sk-proj-" + "U" * 60


def run_with_umask(
    *args: str, umask: int = 0, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """byok-tui in a process whose umask is `umask` (000: everything it creates world-open)."""
    return subprocess.run(
        [sys.executable, "-m", "byok_tui", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
        preexec_fn=lambda: os.umask(umask),  # a fresh child process, no threads yet
    )


def modes_under(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")]
    }


def test_under_umask_000_every_folder_is_0700_and_every_file_0600(isolated: Path) -> None:
    home = isolated
    file_store = {"BYOK_TUI_KEYSTORE": "file"}
    assert run_with_umask("keys", "set", "openai", stdin=KEY, env=file_store).returncode == 0
    with provider_server() as server:
        models = b'{"data": [{"id": "gpt-x"}]}'
        server.reply_with(Reply(headers={"content-type": "application/json"}, steps=[models]))
        env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
        assert run_with_umask("models", "--refresh", "-p", "openai", env=env).returncode == 0
    assert run_with_umask("bot", "add", "B", "-p", "openai").returncode == 0
    assert run_with_umask("export", str(home / "data" / "all.json")).returncode == 0
    modes = modes_under(home)
    folders = {name: mode for name, mode in modes.items() if (home / name).is_dir() or name == "."}
    files = {name: mode for name, mode in modes.items() if name not in folders}
    assert set(folders.values()) == {0o700}, folders
    assert all(mode & 0o077 == 0 for mode in files.values()), files
    assert "data/byok-tui.sqlite3" in files and "data/models-cache.json" in files


def test_a_data_folder_left_open_is_tightened_and_the_user_told() -> None:
    data = app_paths().data_dir
    data.mkdir(parents=True)
    data.chmod(0o777)
    result = run_with_umask("bot", "list", umask=0o022)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert "tightened" in result.stderr and str(data) in result.stderr


def plant(companion: Path, how: str) -> None:
    if how == "a link to another file":
        target = companion.with_name("elsewhere")
        target.write_bytes(b"")
        companion.symlink_to(target)
    elif how == "a file with a second name":
        companion.write_bytes(b"")
        os.link(companion, companion.with_name("second-name"))
    elif how == "a folder":
        companion.mkdir()
    else:  # another user's file
        companion.write_bytes(b"")
        os.chown(companion, 65534, 65534)


@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
@pytest.mark.parametrize(
    "how",
    ["a link to another file", "a file with a second name", "a folder", "another user's file"],
)
def test_a_planted_companion_file_is_refused_with_a_clear_message(suffix: str, how: str) -> None:
    if how == "another user's file" and os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    data = app_paths().data_dir
    data.mkdir(parents=True, mode=0o700)
    database = data / "byok-tui.sqlite3"
    companion = data / f"byok-tui.sqlite3{suffix}"
    plant(companion, how)
    result = run_with_umask("bot", "list", umask=0o077)
    assert result.returncode == 1
    assert f"byok-tui.sqlite3{suffix}" in result.stderr and "Traceback" not in result.stderr
    assert f"byok-tui.sqlite3{suffix} aside" in result.stderr and "did not make it" in result.stderr
    assert not database.exists()  # nothing was opened or created


async def test_the_app_says_so_too_when_it_tightens_the_data_folder() -> None:
    from tests.support.pilot import make_app, settle

    data = app_paths().data_dir
    data.mkdir(parents=True)
    data.chmod(0o755)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        said = [n.message for n in app._notifications]
        assert any("tightened" in m and str(data) in m for m in said), said
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
