"""The Textual application: wiring the services into screens; crash reports without keys.

Textual's own crash report prints local variables (a key in a local, a headers dict or a URL
would be shown) and the process would exit 0. `ByokApp` replaces it with a redacted report
without locals, saved to the crash folder, and `run_until_exit` prints it and returns the
non-zero return code.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App, SystemCommand
from textual.events import AppFocus
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widget import Widget

from byok_tui.app_services.services import Backend, Services, open_services
from byok_tui.compat import every_touch_point_of_the_app, forget_written_cells, stop_after_crash
from byok_tui.core.bindings import (
    APP_KEYS,
    BOT_COMMANDS,
    CHAT_KEYS,
    SETTINGS_TOPICS,
    textual_bindings,
)
from byok_tui.core.crash import report_crash
from byok_tui.core.errors import ByokError
from byok_tui.core.key_records import KeyOverview
from byok_tui.core.paths import app_paths
from byok_tui.core.registry import providers
from byok_tui.core.startup import run_as_started
from byok_tui.core.system import forget_signal_handlers, on_hang_up, on_terminate
from byok_tui.keys import key_file_chosen
from byok_tui.keys.overview import KeySnapshot, read_keys
from byok_tui.screens.start import StartScreen

if TYPE_CHECKING:  # loaded after the first frame (screens/start.py)
    from rich.console import RenderableType

    from byok_tui.app_services.app_data import AppData
    from byok_tui.app_services.opening import Opening
    from byok_tui.app_services.services import AppContext
    from byok_tui.screens.chat import ChatScreen


def _open_context(*args: Any) -> Opening:
    """Load the chat screen's modules, then open what it shows (open_app's arguments), in
    the opening thread."""
    import byok_tui.screens.chat  # noqa: F401  (the import is most of the work)
    from byok_tui.app_services.opening import open_app

    return open_app(*args)


TERMINATED = 128 + signal.SIGTERM  # the exit status of a process ended by SIGTERM, as `ask`'s


@dataclass
class ContextOpened(Message):
    """The database and clients are open, the chat screen's modules loaded and what it opens
    on read."""

    opening: Opening


@dataclass
class WriteFailed(Message):
    """A write nobody waited for failed: the user is told."""

    said: str


class ByokApp(App[None]):
    # The chat screen's styles are read with the app's, before the first frame (351 bytes;
    # the first frame came no later), not as the screen is pushed: a screen's CSS_PATH read
    # then makes Textual parse every stylesheet again and restyle every widget, ~7 ms more
    # with the keys typed meanwhile waiting.
    CSS_PATH = ["screens/start.tcss", "screens/chat.tcss"]
    TITLE = "byok-tui"
    SUB_TITLE = "bring your own key"
    BINDINGS = textual_bindings(APP_KEYS)

    def __init__(
        self,
        services: Services | None,
        *,
        keys_read: tuple[KeyOverview, KeySnapshot] | None = None,
        environ: Mapping[str, str] | None = None,
        crash_dir: Path | None = None,
        backend: Backend | None = None,
    ) -> None:
        """`services` None: opened after the first frame (the key store may be a keyring,
        which is slow to load; see build_app). `backend`: what makes the provider client."""
        super().__init__()
        every_touch_point_of_the_app()  # byok_tui/compat.py: points 7-11, 13-19, 21-23, 25-31
        self._services = services
        if services is not None:
            environ = services.environ
        self._environ = os.environ if environ is None else environ
        self._opened: AppContext | None = None
        self._data: AppData | None = None
        self._keys_read = keys_read  # what the first frame and the first chat state show
        self._backend = backend
        self._crash_dir = crash_dir or app_paths(self._environ).crash_dir
        self.crash_report: str | None = None
        self.quitting = False  # exit() was called: the screens are being torn down
        # What countdowns (a rate limit's retry) read; a test sets its own before the run.
        self.clock: Callable[[], float] = time.monotonic
        # Printed after the app ends: why it could not open, or that it was stopped.
        self.said_after: str | None = None
        self._when_started: list[Callable[[], object]] = []  # asked for before the chat screen
        self.ends_the_process = False  # run by run_until_exit: the process ends with it

    @property
    def context(self) -> AppContext:
        """The database and clients, open once the first frame is drawn."""
        if self._opened is None:
            raise RuntimeError("the chat screen is not open yet")
        return self._opened

    def get_default_screen(self) -> Screen[None]:
        return StartScreen(self._keys_read[0] if self._keys_read else None)

    def on_mount(self) -> None:
        # A closed terminal or a dropped SSH session hangs the app up (SIGHUP), and `kill` or
        # a shutting-down system terminates it (SIGTERM): either would kill it mid-write, and
        # SIGTERM leave the terminal in the app's modes. It ends as ctrl+q ends it instead,
        # storing what a reply brought and giving the terminal back.
        # Neither where the loop takes no signal handlers (Windows): it ends as it ends there.
        loop = asyncio.get_running_loop()
        on_hang_up(loop, self.exit)
        on_terminate(loop, self._terminated)

    def _terminated(self) -> None:
        self.said_after = "byok-tui: stopped (SIGTERM); nothing typed or received is lost"
        self.exit(return_code=TERMINATED)

    def on_start_screen_drawn(self, _message: StartScreen.Drawn) -> None:
        self._open_chat()

    @work(exclusive=True, group="open-chat")
    async def _open_chat(self) -> None:
        """Open the database and load the chat screen's modules in a thread, while the start
        screen's composer takes keys."""
        start = self.screen

        def progress(done: int, total: int) -> None:  # from the opening thread
            if isinstance(start, StartScreen):
                self.call_from_thread(start.show_progress, done, total)

        try:
            opening = await asyncio.to_thread(
                _open_context,
                self._services,
                self._environ,
                self._backend,
                progress,
                self._keys_read,
            )
        except ByokError as error:  # e.g. a damaged database: one line, as the CLI prints it
            self.said_after = f"byok-tui: {error.one_line()}"
            self.exit(return_code=1)
            return
        self.post_message(ContextOpened(opening))

    async def on_context_opened(self, message: ContextOpened) -> None:
        # Awaited in the app's own handler: keys pressed while the chat screen is being
        # mounted wait in the app's queue and reach its composer once it is up.
        opening = message.opening
        self._opened = opening.context
        from byok_tui.screens.chat import ChatScreen

        data = self._data = opening.data

        # From the writer's thread, without waiting for the UI (which may be waiting for it).
        def tell(said: str) -> None:
            self.post_message(WriteFailed(said))

        data.on_failure = tell

        start = self.screen_stack[0]
        early = await start.early_input() if isinstance(start, StartScreen) else None
        # Pushed over the start screen: Textual cannot switch away from the default screen.
        screen = ChatScreen(
            data, opening.overview, early, first_state=opening.first_state, clock=self.clock
        )
        await self.push_screen(screen)
        asked, self._when_started = self._when_started, []
        for action in asked:  # a screen asked for while starting: over the chat screen
            action()

    def on_chat_screen_started_up(self, _message: ChatScreen.StartedUp) -> None:
        # Not before: threads switching every 0.5 ms let a message sent on the start screen
        # read and store in its threads while the chat screen is drawn (at 5 ms it waited
        # ~5 ms at each of a dozen reads).
        run_as_started()

    def on_write_failed(self, message: WriteFailed) -> None:
        self.notify(message.said, severity="error", timeout=15)

    async def on_unmount(self) -> None:
        if self._data is not None:
            self._data.close()  # every key typed is saved before we go
        if self._opened is not None:
            await self._opened.client.aclose()
            await self._opened.tool_servers.close()  # each stdio server's whole tree ends
        # Last: a hang-up meanwhile still ends the app as a quit does.
        forget_signal_handlers(asyncio.get_running_loop(), ending=self.ends_the_process)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Notifications carry outside text (titles, names, a provider's message): shown as
        the text they are, never parsed as markup, whatever the caller asked (Textual's own
        Screen.notify asks for markup)."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def action_help_quit(self) -> None:
        """ctrl+c, which many try first: how to quit, in words (Textual's own says it with
        markup, which notify above shows as it is)."""
        for key, active in self.active_bindings.items():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(f"Press {key} to quit the app.", title="Do you want to quit?")
                return

    def _started(self, action: Callable[[], object]) -> AppData | None:
        """The data service once the chat screen is up; before, None, and `action` runs once
        it is: a screen opened over the first frame would end up under the chat screen."""
        if self._data is None:
            self._when_started.append(action)
        return self._data

    def action_command_palette(self) -> None:
        if self._started(self.action_command_palette) is not None:
            super().action_command_palette()

    def action_redraw(self) -> None:
        """Every cell written again, as after a resize: frames write only the cells they
        change (compat point 30), so what another program wrote over the screen stays until
        the cells under it change."""
        forget_written_cells(self)
        self.screen.refresh(layout=True)

    def action_help(self) -> None:
        from byok_tui.screens.help import HelpScreen

        if self._started(self.action_help) is not None and not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_open_settings(self) -> None:
        data = self._started(self.action_open_settings)
        if data is None:
            return
        from byok_tui.screens.chat import ChatScreen
        from byok_tui.screens.settings import SettingsScreen

        if isinstance(self.screen, SettingsScreen):
            return

        def back(_result: None) -> None:
            if isinstance(self.screen, ChatScreen):
                self.screen.refresh_keys()

        self.push_screen(SettingsScreen(data), back)

    def action_open_usage(self) -> None:
        from byok_tui.screens.spend import UsageScreen

        data = self._started(self.action_open_usage)
        if data is not None and not isinstance(self.screen, UsageScreen):
            self.push_screen(UsageScreen(data))

    def action_open_requests(self) -> None:
        from byok_tui.screens.spend import RequestsScreen

        data = self._started(self.action_open_requests)
        if data is not None and not isinstance(self.screen, RequestsScreen):
            self.push_screen(RequestsScreen(data))

    def action_export_all_data(self) -> None:
        """Export All Data: bots, conversations, settings, budgets and the request log; no key."""
        data = self._started(self.action_export_all_data)
        if data is not None:
            self._export_all_data(data)

    @work(thread=True, exclusive=True, group="export")
    def _export_all_data(self, data: AppData) -> None:
        try:
            path = data.exports.export_all_data()
        except ByokError as error:
            self.call_from_thread(self.notify, f"Export failed: {error}", severity="error")
            return
        self.call_from_thread(self.notify, f"Exported (no keys included) to {path}", timeout=10)

    def on_app_focus(self, _event: AppFocus) -> None:
        """Back from another window or terminal: the chat screen reads again what may have
        changed there (from disk, never a request)."""
        from byok_tui.screens.chat import ChatScreen

        if isinstance(self.screen, ChatScreen):
            self.screen.catch_up()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        from byok_tui.screens.chat import ChatScreen

        # Textual's 'Keys' panel lists mostly text-editing keys: our Help replaces it.
        yield from (c for c in super().get_system_commands(screen) if c.title != "Keys")
        chat = isinstance(screen, ChatScreen)
        app_keys = (*APP_KEYS, *SETTINGS_TOPICS)
        keys = (*app_keys, *CHAT_KEYS, *BOT_COMMANDS) if chat else app_keys
        for key in keys:
            target = self if key in app_keys else screen
            action = getattr(target, f"action_{key.action}", None)
            if action is not None and key.action != "quit":
                said = f"{key.does} ({key.spoken})" if key.keys else key.does
                yield SystemCommand(key.description, said, action)

    def exit(
        self,
        result: None = None,
        return_code: int = 0,
        message: RenderableType | None = None,
    ) -> None:
        self.quitting = True
        super().exit(result, return_code, message)

    def _handle_exception(self, error: Exception) -> None:
        if self._met_removed_widgets(error):
            return
        # Replaces App._handle_exception / App._fatal_error (textual 8.2): same bookkeeping,
        # but the report has no locals and is redacted before it reaches the screen or a file.
        # Printed by run_until_exit once the terminal is restored, as plain text: Rich would
        # wrap and crop it (breaking the saved report's path) and interpret markup in it.
        self.crash_report = report_crash(error, self._crash_dir)
        stop_after_crash(self, error)  # byok_tui/compat.py, point 4

    def _met_removed_widgets(self, error: Exception) -> bool:
        """A handler or worker found its widgets already removed, or mounted into them: the
        user quit as a screen came (its queued messages are still handled while it goes),
        or a worker of a screen just closed answered (Textual removes a screen's widgets
        before it stops its workers). Not a crash: nothing is written or lost by a widget
        not found. A worker of a screen still open that misses a widget is still one."""
        from textual.css.query import NoMatches
        from textual.widget import MountError
        from textual.worker import NoActiveWorker, WorkerFailed, get_current_worker

        cause = error.error if isinstance(error, WorkerFailed) else error
        if not isinstance(cause, NoMatches | MountError):
            return False
        if self.quitting:
            return True
        try:
            node = get_current_worker().node
        except NoActiveWorker:
            return False
        if isinstance(node, Widget) and not isinstance(node, Screen):
            if not node.is_attached:
                return True  # the widget itself was removed
            node = node.screen
        return isinstance(node, Screen) and node not in self.screen_stack  # not the app's own


def build_app(environ: Mapping[str, str] | None = None, backend: Backend | None = None) -> ByokApp:
    """Open the services and read every key before the first frame, so that it
    already shows which providers are usable; unless the keys are in the system keyring,
    which takes a tenth of a second or more to load: the first frame then shows the providers
    while their keys are read."""
    env = os.environ if environ is None else environ
    if not key_file_chosen(app_paths(env), env):
        return ByokApp(None, environ=env, backend=backend)
    services = open_services(env)
    # Read every key now (and register each with the redaction layer).
    keys_read = read_keys(providers(), services.keys, services.environ)
    return ByokApp(services, keys_read=keys_read, backend=backend)


def run_until_exit(app: ByokApp, *, headless: bool = False) -> int:
    """Run `app`; print its crash report or failure, if any; return the process exit status."""
    app.ends_the_process = True
    app.run(headless=headless)
    for report in (app.crash_report, app.said_after):
        if report is not None:
            sys.stderr.write(report + "\n")
    return app.return_code or 0


def run_app() -> int:
    """The app, once it has a terminal to read keys from and draw on (status 2 if not)."""
    for name, stream in (("input", sys.stdin), ("error", sys.__stderr__)):
        if stream is None or not stream.isatty():  # Textual reads keys and draws there
            if sys.stderr is not None:  # None: no console at all, nowhere to say it
                sys.stderr.write(
                    f"byok-tui: the app needs a terminal, and its standard {name} is not one. "
                    'To ask from a script or a pipe: byok-tui ask "..." (byok-tui ask --help).\n'
                )
            return 2
    return run_until_exit(build_app())
