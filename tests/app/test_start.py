"""Start-up: the providers and their key states, and the composer, are drawn first, before the
chat screen's modules load; nothing typed, sent or pasted meanwhile is lost; a database that
cannot be opened ends the app with one line, not a traceback."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from textual.events import Key, Paste
from textual.pilot import Pilot
from textual.widgets import OptionList
from textual.worker import WorkerFailed

import byok_tui.app
import byok_tui.cli
from byok_tui import launch
from byok_tui.app_services.opening import Opening
from byok_tui.core import startup
from byok_tui.core.paths import app_paths
from byok_tui.core.registry import providers
from byok_tui.keys import KeyStore, entry_name, open_key_store
from byok_tui.screens.start import StartScreen, StartSidebar
from byok_tui.widgets.composer import Composer
from tests.support.fake_backend import FakeProviders
from tests.support.keys import ENV_KEY, FAKE_KEYS
from tests.support.pilot import app_answered_by, chat, make_app, replies, settle, state, wait_for


def start_rows(screen: object) -> list[str]:
    """The provider rows the start screen's sidebar shows, as text (under its heading)."""
    assert isinstance(screen, StartScreen)
    lines = str(screen.query_one(StartSidebar).render()).splitlines()
    assert lines[:2] == ["", " Providers"]
    return [line.rstrip() for line in lines[2:]]


@pytest.fixture
def held_at_start(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Keep the app on its start screen until the returned event is set."""
    release = threading.Event()
    open_context = byok_tui.app._open_context

    def held(*args: object) -> Opening:
        release.wait(10)
        return open_context(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(byok_tui.app, "_open_context", held)
    yield release
    release.set()


async def send_in_the_first_frame(pilot: Pilot[None], held_at_start: threading.Event) -> None:
    """ "hello" sent with Enter on the start screen, then the chat screen let come."""
    await pilot.press(*"hello", "enter")
    held_at_start.set()
    await wait_for(pilot, lambda: len(pilot.app.screen_stack) > 1)


async def test_the_first_frame_shows_every_provider_and_its_key_state(
    held_at_start: threading.Event,
) -> None:
    open_key_store(app_paths()).set(entry_name("anthropic"), FAKE_KEYS["anthropic"])
    app = make_app(GROQ_API_KEY=ENV_KEY)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        rows = start_rows(app.screen)
        assert [row[2:].split("  ")[0] for row in rows] == [p.display_name for p in providers()]
        by_name = {row[2:].split("  ")[0]: row for row in rows}
        assert by_name["Anthropic"] == "● Anthropic  key set"
        assert by_name["Groq"] == "◐ Groq  from GROQ_API_KEY"
        assert by_name["OpenAI"] == "○ OpenAI  no key"
        assert FAKE_KEYS["anthropic"] not in "".join(rows) and ENV_KEY not in "".join(rows)

        held_at_start.set()
        await settle(pilot)
        assert chat(app).is_current


async def test_the_first_frame_is_five_widgets_one_of_them_the_composer(
    held_at_start: threading.Event,
) -> None:
    """Each widget of the first frame is styled, placed and drawn before it reaches the
    terminal (~1 ms each on two shared cores): the header, the sidebar and the footer bar are
    one widget each."""
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        start = app.screen
        assert isinstance(start, StartScreen)
        assert [type(widget).__name__ for widget in start.walk_children()] == [
            "StartHeader",
            "Horizontal",
            "StartSidebar",
            "Composer",
            "Static",
        ]
        held_at_start.set()


@pytest.mark.parametrize("size", [(140, 40), (100, 30), (80, 12), (80, 9), (60, 20)])
async def test_the_composer_does_not_move_when_the_chat_screen_replaces_the_first_frame(
    size: tuple[int, int], held_at_start: threading.Event
) -> None:
    """Its place and height stay; only its right edge moves where the chat screen's config
    pane joins it (wide terminals)."""
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        first = app.screen.query_one(Composer).region
        held_at_start.set()
        await settle(pilot)
        then = chat(app).query_one(Composer).region
        assert (then.x, then.y, then.height) == (first.x, first.y, first.height)


async def test_with_the_keys_in_the_keyring_the_providers_come_first_and_their_states_next(
    held_at_start: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Loading a keyring takes a tenth of a second or more: the first frame does not wait.
    monkeypatch.setenv("BYOK_TUI_KEYSTORE", "keyring")
    open_key_store(app_paths()).set(entry_name("anthropic"), FAKE_KEYS["anthropic"])
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        rows = start_rows(app.screen)
        assert rows == [f"… {p.display_name}  reading keys" for p in providers()]

        held_at_start.set()
        await settle(pilot)
        sidebar_rows = [
            str(option.prompt) for option in chat(app).query_one("#providers", OptionList).options
        ]
        assert "● Anthropic  key set" in sidebar_rows
        assert FAKE_KEYS["anthropic"] not in "".join(sidebar_rows)


async def test_the_composer_takes_keys_in_the_first_frame_and_keeps_them(
    held_at_start: threading.Event,
) -> None:
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        start = app.screen
        assert isinstance(start, StartScreen)
        early = start.query_one(Composer)
        assert app.focused is early, "the first frame's composer takes keys"
        await pilot.press("h", "i", "space")
        start.set_focus(None)  # text typed with the composer unfocused goes into it
        await pilot.press("t")
        app.post_message(Paste("here "))
        await wait_for(pilot, lambda: early.text == "hi there ")
        assert app.focused is early
        assert early.cursor_location == (0, 9)
        # Keys still queued at the app while it mounts the chat screen land after them.
        held_at_start.set()
        await wait_for(pilot, lambda: not isinstance(app.screen, StartScreen))
        for character in "you":
            app.post_message(Key(character, character))
        await settle(pilot)
        await pilot.press("!")
        composer = chat(app).query_one(Composer)
        assert composer.text == "hi there you!"
        assert app.focused is composer


async def test_a_message_sent_in_the_first_frame_is_sent_once_the_conversation_is_open(
    held_at_start: threading.Event, tmp_path: Path
) -> None:
    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    fake = FakeProviders()
    fake.enqueue("Hello ", "back")
    notes = tmp_path / "notes.txt"
    notes.write_text("first line\n")
    app = app_answered_by(fake)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        app.post_message(Paste(str(notes)))  # a file's path: attached to the message
        await pilot.press(*"hello", "enter", *"next")
        assert app.screen.query_one(Composer).text == "next"
        assert not fake.requests, "nothing is sent before the chat screen is up"
        held_at_start.set()
        await settle(pilot)
        await wait_for(pilot, lambda: replies(app) == ["Hello back"])
        assert len(fake.requests) == 1
        sent = fake.requests[0].chat.messages[-1]
        assert sent.content.startswith("hello\n") and "first line" in sent.content, sent.content
        assert chat(app).query_one(Composer).text == "next", "what followed Enter stays"


async def test_a_message_sent_in_the_first_frame_leaves_before_the_config_pane_is_mounted(
    held_at_start: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mounting the config pane's fields takes 50-100 ms of the event loop: a message the
    user sent on the start screen goes first, then the pane comes, and the app's start ends
    (threads switch at Python's default again)."""
    import byok_tui.screens.chat_host
    from byok_tui.screens.bot_settings import BotSettingsPane

    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    fake = FakeProviders()
    fake.enqueue("Hello")
    requests_when_mounted: list[int] = []

    class Recorded(BotSettingsPane):
        def on_mount(self) -> None:
            requests_when_mounted.append(len(fake.requests))

    monkeypatch.setattr(byok_tui.screens.chat_host, "BotSettingsPane", Recorded)
    sys.setswitchinterval(startup.STARTING_SWITCH_INTERVAL)  # as the launcher leaves it
    try:
        app = app_answered_by(fake)
        async with app.run_test(size=(140, 40)) as pilot:
            await send_in_the_first_frame(pilot, held_at_start)
            await wait_for(pilot, lambda: replies(app) == ["Hello"])
            await wait_for(pilot, lambda: bool(requests_when_mounted))
            assert requests_when_mounted == [1], "the pane came before the request left"
            await wait_for(pilot, lambda: sys.getswitchinterval() == 0.005)
    finally:
        sys.setswitchinterval(startup.RUNNING_SWITCH_INTERVAL)


async def test_a_message_sent_in_the_first_frame_leaves_before_the_opened_page_is_drawn(
    held_at_start: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Drawing the conversation opened at start (every reply on its page rendered: 100-300 ms
    of the event loop in a terminal) waits for a message the user sent meanwhile: its request
    leaves first, then the page and the message under it are drawn."""
    from byok_tui.app_services.services import open_services, open_store
    from byok_tui.widgets import markdown_parts

    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.4-mini")
    conversation = store.create_conversation(bot.id, "long")
    stored = "A stored reply with `code` and **bold**.\n\n" * 40
    store.add_message(conversation.id, "user", "tell me")
    store.add_message(conversation.id, "assistant", stored, provider="openai", model="gpt-5.4-mini")
    store.set_last_opened(bot.id, conversation.id)
    fake = FakeProviders()
    fake.enqueue("Hello")
    requests_when_drawn: list[int] = []
    render_markdown = markdown_parts.render_markdown

    def recorded(text: str, *, continued: bool = False) -> object:
        if text == stored and not requests_when_drawn:
            requests_when_drawn.append(len(fake.requests))
        return render_markdown(text, continued=continued)

    monkeypatch.setattr(markdown_parts, "render_markdown", recorded)
    app = app_answered_by(fake)
    async with app.run_test(size=(140, 40)) as pilot:
        await send_in_the_first_frame(pilot, held_at_start)
        await wait_for(pilot, lambda: replies(app)[-1:] == ["Hello"])
        await wait_for(pilot, lambda: bool(requests_when_drawn))
        assert requests_when_drawn == [1], "the page was drawn before the request left"


@pytest.mark.parametrize("backend", ["file", "keyring"])
async def test_start_up_reads_each_stored_key_once(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each read can be slow (a keyring asks a daemon, which may ask the user): the keys read
    for the first frame are the keys the chat screen starts from, not read again."""
    monkeypatch.setenv("BYOK_TUI_KEYSTORE", backend)
    keys = open_key_store(app_paths())
    keys.set(entry_name("anthropic"), FAKE_KEYS["anthropic"])
    keys.set(entry_name("groq"), FAKE_KEYS["groq"])
    reads: Counter[str] = Counter()
    store_class = type(keys)
    read_one, read_many = store_class._read, store_class.get_many
    in_one_go = read_many is not KeyStore.get_many  # else get_many reads entry by entry

    def counted_read(self: KeyStore, entry: str) -> str | None:
        reads[entry] += 1
        return read_one(self, entry)

    def counted_many(self: KeyStore, entries: Iterable[str]) -> dict[str, str]:
        wanted = list(entries)
        if in_one_go:
            reads.update(wanted)
        return read_many(self, wanted)

    monkeypatch.setattr(store_class, "_read", counted_read)
    monkeypatch.setattr(store_class, "get_many", counted_many)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert state(app).bot.config.provider == "anthropic", "the Default bot follows the key"
    read_twice = {entry: times for entry, times in reads.items() if times > 1}
    assert not read_twice, f"read more than once at start-up: {read_twice}"


async def test_a_database_that_cannot_be_opened_ends_the_app_with_one_line() -> None:
    database = app_paths().data_dir / "byok-tui.sqlite3"
    database.parent.mkdir(parents=True, exist_ok=True)
    database.write_bytes(b"this is not a database at all" * 10)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause(0.5)
    assert app.return_code == 1
    assert app.said_after is not None
    assert app.said_after.startswith("byok-tui: ") and "\n" not in app.said_after
    assert str(database) in app.said_after
    assert app.crash_report is None
    assert database.read_bytes() == b"this is not a database at all" * 10


WARMED_UP = """
import asyncio, sys
from tests.support.pilot import make_app, settle, workers_done

async def main() -> None:
    assert "rich.markdown" not in sys.modules, "loaded before the first frame"
    app = make_app()
    needed = ("rich.markdown", "markdown_it", "pygments.lexers.python", "pygments.styles.monokai")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for _ in range(100):  # soon after: it runs in a thread once the chat screen is drawn
            await workers_done(pilot.app)
            if all(name in sys.modules for name in needed):
                break
            await pilot.pause(0.05)
    print(" ".join(name for name in needed if name not in sys.modules))

asyncio.run(main())
"""


def test_what_the_first_reply_needs_is_loaded_in_the_background_once_the_chat_is_up() -> None:
    # Loaded cold in the middle of the first reply, Markdown and the code highlighter held
    # the event loop for ~45 ms. A fresh process, so that no other test has loaded them.
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", WARMED_UP], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", f"not loaded: {done.stdout.strip()}"


FIRST_FRAME = """
import os, sys
import byok_tui.app

def drawn(app, message):
    print(" ".join(sorted(sys.modules)))
    app.exit()

byok_tui.app.ByokApp.on_start_screen_drawn = drawn
environ = {**os.environ, "OLLAMA_HOST": "127.0.0.1:9", "BYOK_TUI_KEYSTORE": "file"}
byok_tui.app.build_app(environ).run(headless=True)
"""


@pytest.fixture(scope="module")
def loaded_by_the_first_frame() -> set[str]:
    """The modules loaded once the first frame is drawn, in a fresh process, with the keys in
    the key file (read before the first frame) and no config file."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", FIRST_FRAME], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return set(done.stdout.split())


@pytest.mark.parametrize(
    "module",
    [
        "byok_tui.providers.custom",  # ~1.6 ms: read only when the config file defines one
        "byok_tui.core.attachments",  # ~0.7 ms: read when a path is pasted
        "byok_tui.core.records",  # bots, conversations, key health...: ~0.5 ms a record's class
    ],
)
def test_the_first_frame_loads_nothing_it_does_not_draw_with(
    module: str, loaded_by_the_first_frame: set[str]
) -> None:
    """Each module loaded before the first frame delays it (benchmark 1)."""
    assert "byok_tui.screens.start" in loaded_by_the_first_frame
    assert module not in loaded_by_the_first_frame


@pytest.mark.parametrize(
    ("argv", "collecting"), [(["byok-tui"], False), (["byok-tui", "ask"], True)]
)
def test_the_app_starts_with_the_collector_off_and_a_subcommand_with_it_on(
    argv: list[str], collecting: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(byok_tui.cli, "main", gc.isenabled)
    try:
        assert launch.run() is collecting
    finally:
        gc.enable()


async def test_the_collector_is_on_again_once_the_chat_screen_is_up() -> None:
    """Left off, every cycle of garbage would stay for the life of the app."""
    gc.disable()  # as the launcher leaves it
    try:
        app = make_app()
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            assert gc.isenabled()
    finally:
        gc.enable()


async def test_the_chat_screen_comes_without_every_stylesheet_parsed_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A screen's own CSS file read as it is pushed makes Textual parse every stylesheet
    again and restyle every widget: ~7 ms more while the chat screen comes, with the keys
    typed meanwhile waiting. Its styles are read with the app's instead."""
    from textual.css.stylesheet import Stylesheet

    app = make_app()
    reparse = Stylesheet.reparse
    parsed_again: list[str] = []  # the screen on top each time

    def counted(stylesheet: Stylesheet) -> None:
        parsed_again.append(" ".join(type(screen).__name__ for screen in app.screen_stack[-1:]))
        reparse(stylesheet)

    monkeypatch.setattr(Stylesheet, "reparse", counted)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
    assert parsed_again == [], "every stylesheet parsed again as the chat screen came"


def test_threads_switch_every_half_millisecond_while_the_app_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Textual's writer thread sends the first frame as soon as the busy event loop lets it
    run: at Python's 5 ms, ~5 ms later."""
    monkeypatch.setattr(sys, "argv", ["byok-tui"])
    monkeypatch.setattr(byok_tui.cli, "main", sys.getswitchinterval)
    before = sys.getswitchinterval()
    try:
        assert launch.run() == startup.STARTING_SWITCH_INTERVAL == 0.0005
    finally:
        gc.enable()
        sys.setswitchinterval(before)


async def test_threads_switch_at_python_s_default_once_the_chat_screen_is_up() -> None:
    sys.setswitchinterval(startup.STARTING_SWITCH_INTERVAL)  # as the launcher leaves it
    try:
        app = make_app()
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            assert sys.getswitchinterval() == startup.RUNNING_SWITCH_INTERVAL == 0.005
    finally:
        sys.setswitchinterval(startup.RUNNING_SWITCH_INTERVAL)


@pytest.mark.parametrize(
    ("key", "opens"),
    [("f1", "HelpScreen"), ("ctrl+s", "SettingsScreen"), ("ctrl+p", "CommandPalette")],
)
async def test_a_screen_asked_for_while_starting_opens_over_the_chat_screen(
    key: str, opens: str, held_at_start: threading.Event
) -> None:
    """Not under it (where it would stay, out of reach), and not never."""
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        await pilot.press(key)
        assert isinstance(app.screen, StartScreen), "nothing opens over the first frame"
        held_at_start.set()
        await settle(pilot)
        await wait_for(pilot, lambda: type(app.screen).__name__ == opens)
        assert [type(screen).__name__ for screen in app.screen_stack] == [
            "StartScreen",
            "ChatScreen",
            opens,
        ]


async def test_an_unexpected_error_while_opening_ends_the_app_with_a_crash_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not a start screen left waiting for ever, its composer taking keys it never sends."""

    def broken(*_args: object) -> None:
        raise RuntimeError("the disk said no")

    monkeypatch.setattr(byok_tui.app, "_open_context", broken)
    app = make_app()
    with pytest.raises(WorkerFailed):  # run_test re-raises what stopped the app
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause(0.5)
    assert app.return_code == 1
    assert app.crash_report is not None and "the disk said no" in app.crash_report


def test_the_app_draws_up_to_120_frames_a_second_unless_the_user_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key typed while a reply streams waits for the next frame: at Textual's 60 a
    second, up to ~32 ms."""
    monkeypatch.setattr(sys, "argv", ["byok-tui"])
    monkeypatch.setattr(byok_tui.cli, "main", lambda: os.environ.get("TEXTUAL_FPS"))
    monkeypatch.setenv("TEXTUAL_FPS", "")  # restored after the test, whatever run() sets
    monkeypatch.delenv("TEXTUAL_FPS")
    try:
        assert launch.run() == "120"  # type: ignore[comparison-overlap]
        monkeypatch.setenv("TEXTUAL_FPS", "30")
        assert launch.run() == "30"  # type: ignore[comparison-overlap]
    finally:
        gc.enable()


def test_the_app_started_with_options_is_prepared_as_without(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`byok-tui --log FILE` starts the app too: the collector off, 120 frames a second."""
    monkeypatch.setenv("TEXTUAL_FPS", "")  # restored after the test, whatever is set
    monkeypatch.delenv("TEXTUAL_FPS")
    monkeypatch.setattr(
        byok_tui.app, "run_app", lambda: (gc.isenabled(), os.environ.get("TEXTUAL_FPS"))
    )
    try:
        started = byok_tui.cli.main(["--log", str(tmp_path / "byok-tui.log")])
        assert started == (False, "120")  # type: ignore[comparison-overlap]
    finally:
        gc.enable()


async def test_export_all_data_asked_for_while_starting_is_written_once_the_chat_is_up(
    held_at_start: threading.Event,
) -> None:
    """F10 in the first frame is not dropped: nothing is open to export from yet, so the
    export waits for the chat screen."""
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        await pilot.press("f10")
        held_at_start.set()
        await settle(pilot)
        exports = app_paths().data_dir / "exports"
        await wait_for(pilot, lambda: exports.is_dir() and any(exports.glob("*.json")))


async def test_keys_on_their_way_to_the_first_frames_composer_as_the_chat_screen_comes_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key the app has handed to the composer waits in the composer's queue until it is
    taken; the chat screen arriving meanwhile must not leave it (or the message its Enter
    sends) behind on the start screen."""
    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    fake = FakeProviders()
    fake.enqueue("Hello ", "back")
    context_opened = byok_tui.app.ByokApp.on_context_opened

    async def with_keys_in_flight(self: byok_tui.app.ByokApp, message: object) -> None:
        composer = self.screen.query_one(Composer)
        for key in (Key("o", "o"), Key("k", "k"), Key("enter", None), Key("x", "x")):
            composer.post_message(key)  # forwarded by the app, not taken yet
        await context_opened(self, message)  # type: ignore[arg-type]

    monkeypatch.setattr(byok_tui.app.ByokApp, "on_context_opened", with_keys_in_flight)
    app = app_answered_by(fake)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: replies(app) == ["Hello back"])
        assert [request.chat.messages[-1].content for request in fake.requests] == ["ok"]
        assert chat(app).query_one(Composer).text == "x"


@pytest.mark.parametrize("how", ["exit", "ctrl+q"])
async def test_quitting_as_the_chat_screen_comes_ends_the_app_without_a_crash(how: str) -> None:
    """Quitting while the app starts: the chat screen torn down as it comes must not be taken
    for a crash when its handlers then miss their widgets (a crash report and status 1 for a
    user who only wanted out; in a terminal, ctrl+q 100-150 ms after the first frame did it
    in 15 of 40 tries)."""
    from byok_tui.screens.chat import ChatScreen

    app = make_app()
    async with app.run_test(size=(140, 40)):
        while not isinstance(app.screen, ChatScreen):
            await asyncio.sleep(0)
        if how == "exit":
            app.exit()  # what ctrl+q does, at the very moment the screen is pushed
        else:
            app.post_message(Key("ctrl+q", None))  # as the terminal sends it, handled next
        await asyncio.sleep(0.5)  # the app ends by itself, as it does in a terminal
    assert app.return_code == 0
    assert app.crash_report is None


async def test_a_worker_of_a_closed_screen_that_misses_its_widgets_is_no_crash() -> None:
    """A screen's widgets are removed before Textual stops its workers: a worker answering in
    between finds them gone (Textual's own command palette did, closed as it gathered
    commands: a crash report in 1 of 20 stress runs of keys and resizes). A screen closed is
    not a crash; a worker of an open screen missing a widget still is."""
    from textual.screen import ModalScreen
    from textual.widgets import Static as Panel

    closing = asyncio.Event()

    class Panelled(ModalScreen[None]):
        def compose(self) -> Iterable[Panel]:
            yield Panel("gathering", id="panel")

        def on_mount(self) -> None:
            self.run_worker(self.answer_late())

        async def answer_late(self) -> None:
            await closing.wait()  # the answer comes once the widgets are gone
            self.query_one("#panel", Panel).update("3 found")

        async def on_unmount(self) -> None:
            closing.set()  # widgets removed, workers not stopped yet
            await asyncio.sleep(0.2)

    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await app.push_screen(Panelled())
        await pilot.pause()
        app.pop_screen()
        await pilot.pause(0.5)
        assert app.crash_report is None
        assert isinstance(app.screen, type(chat(app)))


async def test_a_worker_of_an_open_screen_that_misses_a_widget_is_still_a_crash() -> None:
    """The rule above is for screens closed or a quit under way, never a blanket pardon."""

    async def looks_for_nothing() -> None:
        chat(app).query_one("#no-such-widget")

    app = make_app()
    with pytest.raises(WorkerFailed):  # run_test re-raises what stopped the app
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            chat(app).run_worker(looks_for_nothing())
            await pilot.pause(0.3)
    assert app.return_code == 1
    assert app.crash_report is not None and "no-such-widget" in app.crash_report


@pytest.mark.parametrize("not_a_terminal", ["input", "error"])
def test_the_app_without_a_terminal_says_so_instead_of_starting(not_a_terminal: str) -> None:
    """Started from a pipe or a script, the app would quit at once at the end of its input, or
    draw into a file (Textual draws on standard error): it says what it needs and what to use
    instead, with status 2. Standard output may be redirected: the app does not draw there."""
    import pty
    import subprocess

    leader, follower = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "byok_tui"],
            stdin=subprocess.DEVNULL if not_a_terminal == "input" else follower,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE if not_a_terminal == "error" else follower,
            timeout=60,
            check=False,
        )
        os.set_blocking(leader, False)
        drawn = b""
        with contextlib.suppress(OSError):
            drawn = os.read(leader, 65536)
    finally:
        os.close(follower)
        os.close(leader)
    said = (result.stderr or drawn).decode(errors="replace")
    assert result.returncode == 2, said
    assert f"its standard {not_a_terminal} is not one" in said, said
    assert "byok-tui ask" in said


async def test_the_chat_screen_keeps_drawing_while_its_config_pane_is_mounted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The config pane is mounted just after the chat screen's first frame; its selects,
    inputs and text area take tens of milliseconds to mount. Meanwhile the screen goes on
    handling its own messages (the refreshes that draw keys typed into the composer): with
    the mount awaited in the screen's own queue, nothing was drawn until it ended."""
    from byok_tui.screens.bot_settings import BotSettingsPane
    from byok_tui.screens.chat import ChatScreen

    mounting, release = asyncio.Event(), asyncio.Event()

    async def held_mount(self: BotSettingsPane) -> None:
        mounting.set()
        await release.wait()

    monkeypatch.setattr(BotSettingsPane, "_on_mount", held_mount, raising=False)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        # Not pilot.pause(): it waits for every widget's queue, the held pane's too.
        await asyncio.wait_for(mounting.wait(), timeout=10)
        screen = app.screen
        assert isinstance(screen, ChatScreen) and screen.config_pane is None
        handled = asyncio.Event()
        screen.call_later(handled.set)  # behind whatever the screen has queued
        try:
            await asyncio.wait_for(handled.wait(), timeout=2)
        except TimeoutError:
            pytest.fail("the chat screen handled nothing while its config pane was mounted")
        finally:
            release.set()
        await settle(pilot)
        assert screen.config_pane is not None, "mounted once its mount could go on"


async def test_the_config_pane_toggled_before_it_is_mounted_comes_as_chosen() -> None:
    """The config pane is mounted just after the chat screen's first frame: its key pressed
    before then is no crash, and the pane comes shown or hidden as that key asked."""
    from textual.app import App, ComposeResult
    from textual.screen import Screen
    from textual.widgets import Static

    from byok_tui.screens.side_panes import NARROW, SidePanes

    class PaneComing(Screen[None]):
        def compose(self) -> ComposeResult:
            yield Static(id="sidebar")

    class OneScreen(App[None]):
        def on_mount(self) -> None:
            self.push_screen(PaneComing())

    app = OneScreen()
    async with app.run_test(size=(NARROW + 20, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PaneComing)
        panes = SidePanes(screen)
        assert panes.shown_at("#config", app.size.width), "shown at this width, unless asked"
        panes.toggle("#config")
        assert not panes.shown_at("#config", app.size.width), "hidden, as the key asked"
        panes.toggle("#config")
        assert panes.shown_at("#config", app.size.width)


async def test_the_chat_screen_opens_on_what_the_opening_thread_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Read by the chat screen's own thread while the screen was drawn, its two dozen reads
    each waited for the busy event loop (~300 ms in all), and a message sent on the start
    screen waited for them: the opening thread reads it, before the chat screen exists."""
    from byok_tui.app_services.app_data import AppData

    app = make_app()
    read_with_screens: list[int] = []
    chat_state = AppData.chat_state

    def counted(data: AppData, *args: int | None) -> object:
        read_with_screens.append(len(app.screen_stack))
        return chat_state(data, *args)

    monkeypatch.setattr(AppData, "chat_state", counted)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert chat(app).state is not None
    assert read_with_screens == [1], "the chat state read again, or read by the chat screen"
