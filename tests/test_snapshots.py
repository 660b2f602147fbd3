"""How the screens look. Deterministic: fixed data, no network (the local runtime's port is
closed), workers finished before the picture. Each is paired with Pilot assertions elsewhere
(tests/app/), because a snapshot alone happily records a wrong state."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, TextArea

import byok_tui.app
from byok_tui.app import ByokApp
from byok_tui.app_services.services import open_services, open_store
from byok_tui.compat import checked_version_installed
from byok_tui.core.paths import app_paths
from byok_tui.core.registry import providers
from byok_tui.keys import entry_name, open_key_store
from byok_tui.keys.overview import key_overview
from byok_tui.screens.start import StartScreen
from byok_tui.storage.store import Store
from tests.support.keys import FAKE_KEYS, PER_BOT_KEY
from tests.support.pilot import chat, make_app, settle, wait_for, workers_done
from tests.support.spend import some_spend

pytestmark = pytest.mark.draws  # the screen as a terminal shows it after its frames

MARKDOWN_REPLY = """# Reading a file in Python

Use a **context manager** so the file is closed:

```python
with open("notes.txt", encoding="utf-8") as file:
    text = file.read()
```

- `open` takes an *encoding*
- `read` returns a `str`
"""

ERRORS = [
    (
        "no_key",
        "No API key for OpenAI. Enter a key for the correct provider; check that the "
        "provider selected matches the key you set.",
    ),
    (
        "auth",
        "OpenAI: 401 Invalid API key. The key is invalid, revoked or expired: regenerate "
        "it in the provider's console. (provider said: Incorrect API key provided)",
    ),
    ("permission", "Anthropic: 403 The key lacks permission. Use a key with permission."),
    (
        "rate_limit",
        "Groq: 429 Rate limit reached. Wait 12 s and retry; free-tier limits are lower.",
    ),
    (
        "billing",
        "OpenRouter: 402 Insufficient credits or billing. Add credits, or switch to a "
        "free-tier model.",
    ),
    (
        "network",
        "Mistral: cannot reach the provider (ConnectError). Check your network "
        "connection and the provider's address.",
    ),
]


@pytest.fixture(autouse=True)
def cursors_that_never_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blink never turns a cursor off or on in a snapshot: the blink timers' ticks do
    nothing (a tick already on its way when `settled` stopped the blink drew the focused
    composer without its cursor, under load). A cursor is shown where the focus is. The
    ticks are Textual's private methods: replaced only on the version compat.py checked."""
    if checked_version_installed("textual"):
        monkeypatch.setattr(TextArea, "_toggle_cursor_blink_visible", lambda _self: None)
        monkeypatch.setattr(Input, "_toggle_cursor", lambda _self: None)


def store() -> Store:
    return open_store(open_services())


def a_conversation(title: str, pairs: list[tuple[str, str]]) -> None:
    data = store()
    bot = data.default_bot("openai", "gpt-5.4-mini")
    conversation = data.create_conversation(bot.id, title)
    for question, answer in pairs:
        data.add_message(conversation.id, "user", question)
        reply = data.add_message(
            conversation.id,
            "assistant",
            "",
            status="partial",
            provider="openai",
            model="gpt-5.4-mini",
            key_source="global",
        )
        data.save_reply(reply.id, content=answer, reasoning="", status="complete")


async def settled(pilot: Pilot[None]) -> None:
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, ByokApp)
    # The focus has come to rest once the config pane, mounted after the chat, is up (or
    # left to be made when first shown: hidden at this width).
    await wait_for(pilot, lambda: chat(app).started)
    await workers_done(app)
    # Cursors never blink here (cursors_that_never_blink): each is shown where the focus is.
    for field in pilot.app.screen.query("TextArea, Input"):
        field.cursor_blink = False  # type: ignore[attr-defined]
        field._cursor_visible = field.has_focus  # type: ignore[attr-defined]
        field.refresh()
    await pilot.pause()


def test_empty_chat(snap_compare: Any) -> None:
    """First start with a key for OpenAI: the sidebar shows each provider's key state
    (OpenAI set, the rest without, Ollama not running), an empty transcript inviting a first
    message, the config pane with the masked OpenAI key, and the footer's bindings."""
    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    assert snap_compare(make_app(), terminal_size=(140, 40), run_before=settled)


def test_conversation_with_markdown_and_code(snap_compare: Any) -> None:
    """A reply rendered as Markdown: heading, bold, a highlighted Python block, a list; the
    reply's provider, model and key source under it, and no part of the key; under that,
    the code block's copy target (`⧉ python · 2 lines`)."""
    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    a_conversation("Reading files", [("How do I read a file?", MARKDOWN_REPLY)])
    assert snap_compare(make_app(), terminal_size=(140, 40), run_before=settled)


def test_each_error_block(snap_compare: Any) -> None:
    """Every kind of error as its own block: no key, 401, 403, 429 with the wait,
    402, network; each with what to do. The user's messages are all still there."""
    data = store()
    bot = data.default_bot("openai", "gpt-5.4-mini")
    conversation = data.create_conversation(bot.id, "Errors")
    for kind, text in ERRORS:
        data.add_message(conversation.id, "user", f"Message that met {kind}")
        reply = data.add_message(conversation.id, "assistant", "", status="error")
        data.save_reply(
            reply.id, content="", reasoning="", status="error", error_kind=kind, error_message=text
        )
    assert snap_compare(make_app(), terminal_size=(110, 50), run_before=settled)


def test_settings_with_some_keys_set(snap_compare: Any) -> None:
    """Settings > API Keys opens on the keys: every provider with its models, key fields
    masked (no key text in the picture), what each key provider cost today and this month ($0
    here), format hints and where to get a key, the local runtime's status; Check balance
    beside Test key for the providers that state a balance (OpenRouter, DeepSeek). The
    budgets come after the providers, below the fold here."""
    keys = open_key_store(app_paths())
    for provider_id in ("anthropic", "openai", "google"):
        keys.set(entry_name(provider_id), FAKE_KEYS[provider_id])

    async def open_settings(pilot: Pilot[None]) -> None:
        await settled(pilot)
        await pilot.press("ctrl+s")
        await settled(pilot)

    assert snap_compare(make_app(), terminal_size=(120, 60), run_before=open_settings)


def test_settings_with_providers_of_your_own(snap_compare: Any) -> None:
    """Settings scrolled to its foot: two providers the user defined, each titled "your own,
    at <base URL>" with a Remove provider button; Together takes a key (masked in its field,
    the hint that it goes only there); LM Studio takes none (no key field, "not checked" and
    a Check button: it is not asked anything unasked); then the Add provider form (id, name,
    base URL, models, the key choice and the button), then the budgets (none yet) with the
    line to set one."""
    from byok_tui.providers.custom import CustomDefinition, add_definition

    config = app_paths().config_file
    add_definition(
        config,
        CustomDefinition(
            "together",
            "https://api.together.xyz/v1",
            "Together",
            (("meta-llama/Llama-3.3-70B-Instruct-Turbo",) * 2,),
        ),
    )
    add_definition(
        config, CustomDefinition("lmstudio", "http://127.0.0.1:9/v1", "LM Studio", key="none")
    )
    open_key_store(app_paths()).set(entry_name("together"), "tgp_v1_" + "t" * 40)

    async def open_settings(pilot: Pilot[None]) -> None:
        await settled(pilot)
        await pilot.press("ctrl+s")
        await settled(pilot)
        pilot.app.screen.query_one("#settings").scroll_end(animate=False)
        await settled(pilot)

    assert snap_compare(make_app(), terminal_size=(120, 50), run_before=open_settings)


def test_the_fallback_countdown(snap_compare: Any) -> None:
    """OpenAI refused with a 429 and the bot has a fallback: under the message, the error
    block (Rate limit reached, its remedy); on the activity line above the composer, wrapped
    onto a second line rather than cut, "openai: rate-limited. Switching to
    groq:llama-3.3-70b-versatile in 5 s (Esc to stay)"."""
    from byok_tui.core.errors import ErrorKind
    from byok_tui.core.registry import get_provider
    from byok_tui.providers.errors import ProviderError
    from tests.support.fake_backend import FakeProviders
    from tests.support.pilot import FakeClock, app_answered_by, send, wait_for

    keys = open_key_store(app_paths())
    keys.set(entry_name("openai"), FAKE_KEYS["openai"])
    keys.set(entry_name("groq"), FAKE_KEYS["groq"])
    data = store()
    bot = data.default_bot("openai", "gpt-5.4-mini")
    fallback = "groq:llama-3.3-70b-versatile"
    data.update_bot(bot.id, replace(bot.config, fallbacks=(fallback,)))
    fake = FakeProviders()
    limited = ProviderError(
        ErrorKind.RATE_LIMIT,
        "OpenAI: 429 Rate limit reached",
        provider=get_provider("openai"),
        status=429,
    )
    fake.enqueue(error=limited)
    app = app_answered_by(fake)
    app.clock = FakeClock()

    async def countdown(pilot: Pilot[None]) -> None:
        await settled(pilot)
        await send(pilot, "Are you there?")
        line = pilot.app.screen.query_one("#activity")
        await wait_for(pilot, lambda: "Switching to" in str(line.render()))
        await settled(pilot)

    assert snap_compare(app, terminal_size=(140, 44), run_before=countdown)


def test_the_search_panel(snap_compare: Any, monkeypatch: Any) -> None:
    """ctrl+f over the chat: the field holding "kumquat", the hit count and how to search,
    then each hit on two lines: title, bot, role and time (dim), and the words around the
    match with "kumquat" marked; the title hit first, then the messages newest first."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    data = store()
    bot = data.default_bot("openai", "gpt-5.4-mini")
    fruit = data.create_conversation(bot.id, "Kumquat facts")
    data.add_message(fruit.id, "user", "Tell me about the kumquat, the small citrus fruit")
    data.add_message(
        fruit.id,
        "assistant",
        "The kumquat is eaten whole, peel and all: the peel is sweet and the flesh is sour.",
    )
    data.create_conversation(bot.id, "Something else")
    with data.transaction() as db:  # fixed times: the picture must not depend on the day
        db.execute("UPDATE messages SET created = 1795000000 + id * 60")
        db.execute("UPDATE conversations SET updated = 1795000000")

    async def searched(pilot: Pilot[None]) -> None:
        from tests.support.pilot import wait_for

        await settled(pilot)
        await pilot.press("ctrl+f", *"kumquat")
        status = pilot.app.screen.query_one("#search-status")
        await wait_for(pilot, lambda: "3 found" in str(status.render()))
        await settled(pilot)

    try:
        assert snap_compare(make_app(), terminal_size=(120, 30), run_before=searched)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_message_with_alternatives(snap_compare: Any) -> None:
    """A question asked twice (edited) and its reply regenerated: under the question "2/2"
    between two arrows (the edit is the second of two), under the reply the same (the second
    answer), and only the branch on screen: the first question and its answer are not
    shown."""
    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    data = store()
    bot = data.default_bot("openai", "gpt-5.4-mini")
    chat = data.create_conversation(bot.id, "Alternatives")
    first = data.add_message(chat.id, "user", "What is a kumquat?")
    data.add_message(chat.id, "assistant", "A fruit.")
    data.branch_from(chat.id, first.parent_id)
    edited = data.add_message(chat.id, "user", "What is a kumquat, in two sentences?")
    data.add_message(chat.id, "assistant", "A small citrus fruit. You eat it whole.")
    data.branch_from(chat.id, edited.id)
    data.add_message(chat.id, "assistant", "A tiny orange-like fruit. Its peel is sweet.")
    assert snap_compare(make_app(), terminal_size=(120, 30), run_before=settled)


def test_config_pane_with_a_per_bot_key_and_a_mismatch_warning(snap_compare: Any) -> None:
    """The config pane with a per-bot key set (masked): the line says the next message uses
    the per-bot key (first and last four characters only), at the foot of the pane, in view
    without scrolling; the global field holds a Groq-shaped key under OpenAI, so the mismatch
    warning shows; every label is whole (wrapped, not cut)."""
    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["groq"])
    data = store()
    bot = data.default_bot("openai", "gpt-5.4-mini")
    data.set_bot_key(bot.id, PER_BOT_KEY)
    assert snap_compare(make_app(), terminal_size=(140, 44), run_before=settled)


def test_80_by_24(snap_compare: Any) -> None:
    """At 80x24 the sidebar and config pane are hidden; the transcript and composer fill the
    screen and the footer still lists the bindings."""
    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    a_conversation("Short", [("Hello?", "Hello! How can I help?")])
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=settled)


def test_help_screen_at_80_by_24(snap_compare: Any) -> None:
    """F1 at 80x24: the help over the chat, every key of 'Anywhere' (ctrl+l's Redraw among
    them) in two columns (the keys, then what they do, wrapped in its own column), and at the
    bottom the heading of 'Chat', whose keys follow below the fold."""

    async def open_help(pilot: Pilot[None]) -> None:
        await settled(pilot)
        await pilot.press("f1")
        await pilot.pause(0.3)

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=open_help)


def test_usage_screen(snap_compare: Any) -> None:
    """F8: spend per day for the last 30 days, one chart line per provider with spend (OpenAI
    first: it cost most; its total says one reply had no known price), days ago on the left and
    today on the right; under it the totals per model. Its Pilot twin is
    tests/app/test_spend_screens.py."""
    some_spend()

    async def open_usage(pilot: Pilot[None]) -> None:
        await settled(pilot)
        await pilot.press("f8")
        await pilot.pause(0.5)

    assert snap_compare(make_app(), terminal_size=(120, 30), run_before=open_usage)


def test_no_snapshot_holds_a_key() -> None:
    """Runs after the snapshots above (file order): none of their SVGs holds any test key."""
    from tests.support.snapshots import SNAPSHOT_DIR

    svgs = list(SNAPSHOT_DIR.rglob("*.svg"))
    assert svgs
    for svg in svgs:
        text = svg.read_text()
        for key in (*FAKE_KEYS.values(), PER_BOT_KEY):
            assert key not in text, svg.name
            assert key.replace(" ", "&#160;") not in text


def test_start_screen(snap_compare: Any) -> None:
    """The first frame, drawn before the chat screen loads: the header, every provider with
    its key state where the chat screen's sidebar shows it, and an empty footer bar. Compare
    with test_empty_chat: nothing may move when the chat screen replaces it."""
    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    services = open_services()
    overview = key_overview(providers(), services.keys, services.environ)

    class StartOnly(App[None]):
        """The start screen alone: its Drawn message goes nowhere."""

        CSS_PATH = [Path(byok_tui.app.__file__).parent / path for path in ByokApp.CSS_PATH]
        TITLE, SUB_TITLE = ByokApp.TITLE, ByokApp.SUB_TITLE

        def get_default_screen(self) -> Screen[None]:
            return StartScreen(overview)

    assert snap_compare(StartOnly(), terminal_size=(140, 40))


def test_a_reply_with_a_tool_call_and_its_result(snap_compare: Any) -> None:
    """A reply that called a tool of an MCP server (allowed once in the approval dialog):
    above the reply, the call as one line, "▾ Tool test_weather: 30 characters back",
    expanded (Enter on it) to show its arguments ({"city": "Oslo"}) and the result the
    server gave ("Oslo: snow for 1 day(s), -4 C."); then the reply, whose second round
    used that result, in a paragraph of its own. The call has the focus: the footer names
    its key first ("⏎ Show/hide")."""
    from textual.widgets._footer import FooterKey

    from byok_tui.widgets.tool_call import ToolCallView
    from tests.support.provider_server import provider_server
    from tests.tools.test_ask_with_tools import calls_weather
    from tests.tools.test_tools_in_the_app import TOLD, dialog, ready

    ready()
    with provider_server(calls_weather) as server:
        app = make_app(BYOK_TUI_GROQ_BASE_URL=f"{server.base_url}/openai/v1")

        async def called_and_expanded(pilot: Pilot[None]) -> None:
            from tests.support.pilot import replies, replying, send, wait_for

            await settled(pilot)
            await send(pilot, "Weather in Oslo?")
            await wait_for(pilot, lambda: dialog(app) is not None, timeout=30)
            await pilot.press("a")
            # The reply over, and all it set off (a focus moved as it ends included): then
            # the call is focused, and nothing takes the focus from it.
            await wait_for(
                pilot,
                lambda: any(TOLD in r for r in replies(app)) and not replying(app),
                timeout=30,
            )
            await settled(pilot)
            view = pilot.app.screen.query_one(ToolCallView)
            view.focus()
            await pilot.press("enter")
            await settled(pilot)
            # The footer is made again a frame or two after the focus moves: the snapshot is of
            # the focused call's keys, never of those before (under load, in CI, it once was).
            keys = lambda: [key.description for key in app.screen.query(FooterKey)]  # noqa: E731
            try:
                await wait_for(pilot, lambda: app.focused is view and "Show/hide" in keys())
            except AssertionError:
                raise AssertionError(f"focus on {app.focused!r}, footer {keys()}") from None

        # Under 120 columns the config pane (which names the loopback server's port) is hidden.
        assert snap_compare(app, terminal_size=(110, 32), run_before=called_and_expanded)


def _compare_snapshot(snap_compare: Any, size: tuple[int, int]) -> bool:
    from tests.compare.test_ask_compare import by_model
    from tests.compare.test_compare_in_the_app import app_on, compare
    from tests.support.pilot import wait_for
    from tests.support.provider_server import provider_server

    with provider_server(by_model) as server:
        app = app_on(server)

        async def compared(pilot: Pilot[None]) -> None:
            screen = await compare(pilot, app, "What is 2+2? One line.")
            await wait_for(pilot, lambda: not any(c.running for c in screen.columns), 30)
            for number, column in enumerate(screen.columns, 1):  # timings vary: fixed here
                if column.outcome.first_token_s is not None:
                    column.outcome.first_token_s = 0.25 * number
                column.outcome.total_s = 0.5 * number + 1
                column.show_figures()
            await pilot.pause(0.3)  # the chat screen's settle() would wait for itself on top

        return bool(snap_compare(app, terminal_size=size, run_before=compared))


def test_compare_three_models_side_by_side(snap_compare: Any) -> None:
    """Compare at 120x40: the message on top, three columns side by side, each headed by its
    number, provider, model and key (openai gpt-5.5, groq llama-3.3-70b-versatile, mistral
    mistral-small-latest, each "key: global"), then its figures (first token, tokens in and
    out, cost); openai's and mistral's replies, groq's 429 as an error block with its
    remedy; below them the composer for the next message; the footer's Stop all / Back, Stop
    this, Keep and Write."""
    assert _compare_snapshot(snap_compare, (120, 40))


def test_compare_as_tabs_at_80_by_24(snap_compare: Any) -> None:
    """Compare at 80x24, where three columns would be narrower than 40 cells: tabs "1
    openai", "2 groq", "3 mistral", the first open with its header, figures and reply; the
    composer for the next message below."""
    assert _compare_snapshot(snap_compare, (80, 24))
