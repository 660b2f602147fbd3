"""byok-tui in a pseudo-terminal of its own, as a user's terminal runs it: what it draws is
read, keys are typed into it, and the terminal can be closed under it."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping


class InTerminal:
    """`python -m byok_tui ARGS` with a terminal of `size` (columns, rows) as its standard
    input, output and error, in a session of its own."""

    def __init__(
        self, *args: str, env: Mapping[str, str] | None = None, size: tuple[int, int] = (120, 40)
    ) -> None:
        self.leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "byok_tui", *args],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env=None if env is None else dict(env),
            start_new_session=True,
            close_fds=True,
        )
        os.close(follower)
        self.seen = b""  # everything drawn so far
        self._closed = False

    def __enter__(self) -> InTerminal:
        return self

    def __exit__(self, *_exception: object) -> None:
        self.end()

    def end(self) -> None:
        """However the test went: the terminal closed and the app gone (killed if it has not
        ended within 10 s of that), so that no test leaves a process behind."""
        self.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def read_until(self, marker: bytes, timeout: float = 30) -> bool:
        """Read what it draws until `marker` is among it (True), the time is up or the
        terminal is gone (False)."""
        deadline = time.monotonic() + timeout
        while marker not in self.seen and time.monotonic() < deadline:
            if select.select([self.leader], [], [], 0.1)[0]:
                try:
                    self.seen += os.read(self.leader, 65536)
                except OSError:
                    return False
        return marker in self.seen

    def drawn_whole(self, marker: bytes, timeout: float = 30) -> bool:
        """Whether `marker`, typed or received over several frames, is on screen: a frame
        writes only the cells it changes, so such text may reach the terminal in pieces; a
        redraw (ctrl+l), handled after what came before it, writes it whole."""
        self.type(b"\x0c")
        return self.read_until(marker, timeout)

    def drain(self) -> None:
        """Read what it has drawn meanwhile: a terminal nobody reads fills up, and the app's
        writes to it then wait (it could not even quit)."""
        self.read_until(b"\0never drawn\0", timeout=0.02)

    def has_ended(self) -> bool:
        return self.proc.poll() is not None

    def type(self, keys: bytes) -> None:
        os.write(self.leader, keys)

    def close(self) -> None:
        """The terminal goes away (its window closed, its SSH session dropped)."""
        if not self._closed:
            self._closed = True
            os.close(self.leader)
