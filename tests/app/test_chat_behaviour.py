"""What a terminal user expects of the chat screen, beyond keys."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from typing import Any

import pytest
from textual.events import Paste
from textual.pilot import Pilot
from textual.widgets import Button, Collapsible, Input

from byok_tui.app import ByokApp
from byok_tui.app_services import app_data, chat_state
from byok_tui.app_services.chat_state import NEWEST_PAGE, PAGE, KeyInUse
from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.screens import chat_host
from byok_tui.storage.store import Store
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.key_field import KeyField
from byok_tui.widgets.markdown_text import STREAM_HEADROOM, MarkdownText
from byok_tui.widgets.message_views import ErrorBlock, ReplyView, UserMessage
from byok_tui.widgets.transcript import MOST_SHOWN, Transcript
from tests.support.fake_backend import FakeProviders
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    app_answered_by,
    chat,
    make_app,
    replies,
    replying,
    send,
    settle,
    type_into,
    wait_for,
)
from tests.support.provider_server import openai_reply, provider_server
from tests.support.stored import stored_messages

KEY = "sk-proj-" + "K" * 60


def with_key() -> dict[str, str]:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    return {}


def with_key_answering(*pieces: str, **reply: Any) -> tuple[ByokApp, FakeProviders]:
    """The app with an OpenAI key, its next reply queued (see FakeProviders.enqueue)."""
    with_key()
    fake = FakeProviders()
    fake.enqueue(*pieces, **reply)
    return app_answered_by(fake), fake


async def test_escape_stops_the_reply_and_keeps_what_arrived() -> None:
    app, _fake = with_key_answering("Partial ", "answer", pause=0.2, finish=False)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "Tell me everything")
        # While the reply pauses, a character or two that could begin one of the user's
        # keys waits for what follows; stopping shows everything that arrived.
        await wait_for(pilot, lambda: replies(app)[:1] != [] and "answ" in replies(app)[0])
        assert "Reply on its way" in str(app.screen.query_one("#activity").render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: not replying(app))
        assert replies(app) == ["Partial answer"]
        view = app.screen.query_one(Transcript).query(ReplyView).last()
        assert "stopped, partial reply kept" in view._meta
    assert [(m.content, m.status) for m in stored_messages()] == [
        ("Tell me everything", "complete"),
        ("Partial answer", "partial"),
    ]


async def test_escape_after_a_replys_end_leaves_it_whole() -> None:
    """Once a reply's end has come the app may still be reading after it (the rest of the
    body, so that its connection carries the next request): Escape then stops that, not the
    reply, which is neither marked stopped on screen nor stored partial."""
    app, _fake = with_key_answering("Whole ", "answer", held=True)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "Tell me")
        await wait_for(pilot, lambda: replies(app)[:1] == ["Whole answer"])
        await pilot.pause(0.2)
        assert replying(app), "still reading after the end"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not replying(app))
        view = app.screen.query_one(Transcript).query(ReplyView).last()
        assert "stopped" not in view._meta and not view.has_class("partial")
    assert [(m.content, m.status) for m in stored_messages()] == [
        ("Tell me", "complete"),
        ("Whole answer", "complete"),
    ]


@pytest.mark.parametrize("stopped", [False, True], ids=["ended", "stopped"])
async def test_a_reply_keeps_no_blank_lines_laid_out_ahead_once_it_ends(stopped: bool) -> None:
    """While a reply streams, its text grows into blank lines laid out ahead of it; once it
    has ended, or the user stopped it, it is exactly as tall as its text."""
    pieces = [f"Line {n} of a reply that streams in.\n\n" for n in range(12)]
    app, _fake = with_key_answering(*pieces, pause=0.05, finish=not stopped)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "Stream to me")
        await wait_for(pilot, lambda: replies(app)[:1] != [] and "Line 2" in replies(app)[0])
        body = app.screen.query_one(ReplyView).query_one(".body", MarkdownText)
        text_height = body.line_offsets(body.size.width)[-1]
        assert body.size.height > text_height, "blank lines laid out ahead while it streams"
        assert body.size.height % STREAM_HEADROOM == 0
        if stopped:
            await wait_for(pilot, lambda: "Line 11" in replies(app)[0])
            await pilot.press("escape")
        await wait_for(pilot, lambda: not replying(app))
        await pilot.pause()
        assert "Line 11" in replies(app)[0]
        assert body.size.height == body.line_offsets(body.size.width)[-1]


async def test_the_conversation_opens_even_if_loading_the_markdown_renderer_early_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Loading what drawing replies needs before they are composed is only a head start:
    should it fail, the conversation still opens with its replies drawn."""
    app, _fake = with_key_answering("The **answer**.")

    def broken() -> None:
        raise RuntimeError("a renderer that cannot load early")

    monkeypatch.setattr(chat_host, "warm_up", broken)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "A question")
        await wait_for(pilot, lambda: not replying(app) and replies(app) == ["The **answer**."])
    reopened = make_app()
    async with reopened.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: replies(reopened) == ["The **answer**."])
        assert reopened.is_running


async def test_replies_render_as_markdown_with_code_blocks() -> None:
    app, _fake = with_key_answering(
        "# Title\n\n", "Some **bold** text.\n\n", "```python\n", "print('hi')\n", "```\n"
    )
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "markdown please")
        await wait_for(pilot, lambda: not replying(app) and len(replies(app)) == 1)
        await pilot.pause(0.2)
        lines = [
            strip
            for part in app.screen.query_one(ReplyView).query(MarkdownText)
            for strip in (part.render_line(y) for y in range(part.size.height))
        ]
        text = "\n".join(strip.text for strip in lines)
        assert "Title" in text and "# Title" not in text  # a heading, not the source
        assert "bold" in text and "**" not in text
        assert "print('hi')" in text and "```" not in text  # a code block
        code_line = next(strip for strip in lines if "print" in strip.text)
        colours = {seg.style.color for seg in code_line if seg.style and seg.style.color}
        assert len(colours) > 1, "the Python block is highlighted"
        assert not app.screen.query(Collapsible), "no reasoning, no Reasoning section"


async def test_markup_and_actions_in_a_reply_are_shown_as_text_never_run() -> None:
    with_key()
    hostile = "[bold]not bold[/bold] [@click=app.quit]quit?[/] [link=https://evil]x[/link]"
    with provider_server() as server:
        server.reply_with(openai_reply(hostile))
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "[@click=app.quit]me too[/]")
            await wait_for(pilot, lambda: replies(app) == [hostile])
            await pilot.click(ReplyView)
            await pilot.pause()
            assert app.is_running
            assert app.return_code is None


async def test_copy_puts_the_focused_message_or_the_last_reply_on_the_clipboard() -> None:
    app, _fake = with_key_answering("copy me")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "hi")
        await wait_for(pilot, lambda: replies(app) == ["copy me"] and not replying(app))
        await pilot.press("ctrl+t")
        assert app.clipboard == "copy me"
        app.screen.query_one(UserMessage).focus()
        await pilot.press("ctrl+t")
        assert app.clipboard == "hi"


async def test_a_message_typed_while_a_reply_streams_is_given_back_not_lost() -> None:
    app, fake = with_key_answering("slow", finish=False)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "first")
        await wait_for(pilot, lambda: replying(app))
        await send(pilot, "second, typed too early")
        assert app.screen.query_one(Composer).text == "second, typed too early"
        await pilot.press("escape")
    assert len(fake.requests) == 1, "the second message was not sent"


async def test_at_80_by_24_the_side_panes_collapse_and_the_chat_stays_usable() -> None:
    """Hidden at this width, the config pane is made only when first shown (a quarter of
    the start's CPU); ctrl+o shows it, filled with the bot's settings, and hides it again."""
    open_store(open_services()).default_bot("openai", "gpt-5.5")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: chat(app).started)
        assert not app.screen.query("#config"), "made at start though hidden"
        assert not app.screen.query_one("#sidebar").display
        transcript = app.screen.query_one(Transcript)
        assert transcript.size.width >= 70
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: app.screen.query_one("#config").display)
        assert app.screen.query_one("#bot-name", Input).value == "Default"
        await pilot.press("ctrl+o")
        assert not app.screen.query_one("#config").display


async def test_a_terminal_widened_past_the_narrow_width_shows_the_config_pane_it_did_not_make() -> (
    None
):
    """Not made at 100 columns, the pane is made and shown once the terminal is 140 wide,
    beside the sidebar and a conversation still 48 columns wide or more."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: chat(app).started)
        assert not app.screen.query("#config")
        await pilot.resize_terminal(140, 40)
        await wait_for(pilot, lambda: app.screen.query_one("#config").display)
        assert app.screen.query_one("#sidebar").display
        assert app.screen.query_one(Transcript).size.width >= 48


async def test_a_key_shaped_for_another_provider_warns_but_is_saved() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        groq_key = "gsk_" + "w" * 52
        await type_into(pilot, app.screen.query_one("#row-openai KeyField", KeyField), groq_key)
        warning = app.screen.query_one("#row-openai .warning")
        assert "looks like a Groq key, but the provider is OpenAI" in str(warning.render())
        keys = open_key_store(app_paths())
        await wait_for(pilot, lambda: keys.get(entry_name("openai")) == groq_key)


async def test_the_command_palette_offers_the_chat_actions() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        for title in ("Settings", "Retry", "New chat", "Bot config", "Copy", "Export All Data"):
            assert title in titles


async def test_export_all_data_from_the_app_writes_a_file_without_keys() -> None:
    with_key()
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f10")
        await settle(pilot)
    [exported] = (app_paths().data_dir / "exports").glob("*.json")
    text = exported.read_text()
    assert '"format": "byok-tui-export"' in text
    assert KEY not in text
    assert (exported.stat().st_mode & 0o777) == 0o600


def questions(count: int) -> None:
    """A conversation of `count` messages, `question 0` first."""
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.4-mini")
    conversation = store.create_conversation(bot.id, "long")
    for number in range(count):
        store.add_message(conversation.id, "user", f"question {number}")


async def settled_transcript(pilot: Pilot[None]) -> Transcript:
    await settle(pilot)
    return pilot.app.screen.query_one(Transcript)


def shown_in(transcript: Transcript) -> list[str]:
    return [m.message_text for m in transcript.query(UserMessage)]


async def test_a_long_conversation_opens_at_its_end_and_loads_earlier_messages_on_demand() -> None:
    """Only the newest messages (NEWEST_PAGE, a few screens) are read on opening; Show
    earlier (or scrolling to the top) reads the page before them, until the first message,
    and the button goes."""
    total = NEWEST_PAGE + PAGE + 10
    questions(total)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        transcript = await settled_transcript(pilot)
        shown = functools.partial(shown_in, transcript)

        assert shown()[-1] == f"question {total - 1}"
        assert len(shown()) == NEWEST_PAGE
        transcript.scroll_home(animate=False)  # reaching the top reads the page before
        await wait_for(pilot, lambda: len(shown()) == NEWEST_PAGE + PAGE)
        # the reader stays where they were, above it (moved there once it is laid out)
        await wait_for(pilot, lambda: transcript.scroll_y > 0)
        transcript.query_one(".earlier", Button).press()  # the button reads the next
        await wait_for(pilot, lambda: len(shown()) == total)
        assert shown() == [f"question {n}" for n in range(total)]
        await wait_for(pilot, lambda: not transcript.query(".earlier"))


async def test_a_reader_far_back_holds_at_most_300_messages_and_can_return_to_the_newest() -> None:
    """Memory is bounded by what is read: past MOST_SHOWN messages, the newest go, and Show
    the newest messages brings them back."""
    questions(400)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        transcript = await settled_transcript(pilot)
        shown = functools.partial(shown_in, transcript)

        def oldest_is(text: str) -> bool:
            return shown()[0] == text

        read = NEWEST_PAGE
        while read <= MOST_SHOWN:  # pages until the newest have to go
            read += PAGE
            transcript.scroll_home(animate=False)
            await wait_for(pilot, functools.partial(oldest_is, f"question {400 - read}"))
            transcript.scroll_to(y=5, animate=False)  # away from the top again
            await pilot.pause()
        assert read > MOST_SHOWN
        assert shown() == [f"question {n}" for n in range(400 - read, 400 - read + MOST_SHOWN)]
        back = transcript.query(Button).last()
        assert str(back.label) == "Show the newest messages"
        back.press()
        await wait_for(pilot, lambda: shown()[-1] == "question 399")
        assert len(shown()) == NEWEST_PAGE


async def test_opening_a_conversation_reads_only_its_newest_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the transcript holds is what it shows: opening never reads the whole branch,
    or all its files (a test double fails if it does)."""
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.4-mini")
    conversation = store.create_conversation(bot.id, "long")
    for number in range(NEWEST_PAGE + 10):
        store.add_message(conversation.id, "user", f"question {number}")

    def whole(self: Store, conversation_id: int) -> None:
        raise AssertionError("opening read the whole conversation")

    for name in ("messages", "all_messages", "attachment_labels"):
        monkeypatch.setattr(Store, name, whole)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        shown = [m.message_text for m in app.screen.query_one(Transcript).query(UserMessage)]
        assert shown == [f"question {n}" for n in range(10, NEWEST_PAGE + 10)]


async def test_newest_messages_that_do_not_fill_the_transcript_are_joined_by_earlier_ones() -> None:
    """A conversation of short messages in a tall terminal: the newest page leaves room
    above it, so earlier pages are read until the transcript is full (or the conversation
    read), and the reader stays at the newest message."""
    questions(300)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 120)) as pilot:
        transcript = await settled_transcript(pilot)
        shown = functools.partial(shown_in, transcript)
        await wait_for(pilot, lambda: len(shown()) > NEWEST_PAGE)
        await settle(pilot)

        assert len(shown()) == NEWEST_PAGE + PAGE  # a message is two lines: 160 > 110
        assert transcript.max_scroll_y > 0
        assert transcript.scroll_y == transcript.max_scroll_y
        assert shown()[-1] == "question 299"


async def test_reasoning_streams_into_a_folded_section_above_the_answer() -> None:
    app, _fake = with_key_answering("The answer.", reasoning=("Wei", "gh it."), pause=0.1)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "think first")
        await wait_for(pilot, lambda: not replying(app) and replies(app) == ["The answer."])
        view = app.screen.query_one(ReplyView)
        folded = view.query_one(Collapsible)
        assert folded.collapsed and folded.title == "Reasoning"
        assert view.query_one(".reasoning", MarkdownText).text == "Weigh it."
        assert list(view.children).index(folded) < list(view.children).index(
            view.query_one(".body")
        )


async def test_a_message_whose_request_cannot_be_sent_is_shown_before_its_error() -> None:
    with_key()
    app = make_app(BYOK_TUI_OPENAI_BASE_URL="http://127.0.0.1:9/v1")  # nothing listens there
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "anyone?")
        await wait_for(pilot, lambda: not replying(app) and bool(app.screen.query(ErrorBlock)))
        shown = [type(child).__name__ for child in app.screen.query_one(Transcript).children]
        assert shown[-2:] == ["UserMessage", "ErrorBlock"]
        assert [m.message_text for m in app.screen.query(UserMessage)] == ["anyone?"]


async def test_palette_entries_say_what_they_do_not_their_title_twice() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        wanted = {"Bot config", "Copy", "Retry"}
        ours = [c for c in app.get_system_commands(app.screen) if c.title in wanted]
        assert len(ours) == 3
        for command in ours:
            said, _, key = command.help.rpartition(" (")
            assert len(said.split()) > len(command.title.split()) + 2, command.help
            assert key.startswith("ctrl+")  # and the key that does it


async def test_f2_and_delete_with_no_conversation_say_why_nothing_happens() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        for key in ("f2", "ctrl+delete"):
            await pilot.press(key)
            await pilot.pause()
        said = [n.message for n in app._notifications]
        assert len([m for m in said if "No conversation yet" in m]) == 2


async def test_copying_a_message_that_held_a_key_says_the_key_was_replaced() -> None:
    from byok_tui.widgets.message_views import UserMessage

    app, _fake = with_key_answering("fine")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "plain words")
        await wait_for(pilot, lambda: replies(app) == ["fine"])
        message = app.screen.query_one(Transcript).query(UserMessage).first()
        message.message_text = f"my key is {KEY}"  # as a message from before the key was set
        message.focus()
        await pilot.press("ctrl+t")
        assert KEY not in app.clipboard
        said = [n.message for n in app._notifications]
        assert any("replaced by [REDACTED]" in m for m in said), said


async def test_a_pasted_key_is_shown_as_it_is_saved_trimmed() -> None:
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        field = app.screen.query_one("#global-key", KeyField)
        await type_into(pilot, field, f"   {KEY}\n")
        await settle(pilot)
        assert field.value == KEY
    assert open_key_store(app_paths()).get(entry_name("google")) == KEY


@pytest.mark.parametrize("late_by", [0.0, 0.001, 0.005, 0.02])
async def test_a_key_line_found_while_the_app_closes_is_dropped_not_a_crash(
    monkeypatch: pytest.MonkeyPatch, late_by: float
) -> None:
    """The line saying which key answers is worked out in a thread; when it comes back while
    the app is closing (its widgets half removed), the app still quits cleanly."""
    found_it = chat_state.key_in_use
    quitting = threading.Event()

    def found_as_the_app_quits(*args: Any, **kwargs: Any) -> KeyInUse:
        key = found_it(*args, **kwargs)
        quitting.wait(5)
        time.sleep(late_by)
        return key

    monkeypatch.setattr(app_data, "key_in_use", found_as_the_app_quits)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await type_into(pilot, chat(app).query_one("#bot-key", KeyField), "sk-proj-" + "b" * 40)
        quitting.set()
    # Leaving the block raised nothing: no WorkerFailed, no crash report.
    crash_dir = app_paths().crash_dir
    assert not crash_dir.exists() or not list(crash_dir.iterdir())


async def test_text_received_is_stored_when_the_app_quits_between_two_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing received is lost on quitting: the app may close while the screen, not the
    stream, is waiting (here for the first words to be drawn), and the text that arrived is
    still in the database when the app has gone."""
    from byok_tui.widgets.reply_stream import ReplyStream

    drawing = threading.Event()

    async def never_drawn(self: ReplyStream, timeout: float) -> None:
        drawing.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(ReplyStream, "first_words_drawn", never_drawn)
    app, _fake = with_key_answering("kept ", "on quit")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "Tell me")
        await wait_for(pilot, drawing.is_set)
    store = open_store(open_services())
    conversation = store.conversations(store.bots()[0].id)[0]
    assert [(m.role, m.content) for m in store.messages(conversation.id)] == [
        ("user", "Tell me"),
        ("assistant", "kept "),
    ]


async def test_pasted_text_lands_in_the_composer_once() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer = chat(app).query_one(Composer)
        composer.text = "Say "
        composer.move_cursor((0, 4))
        app.post_message(Paste("hello\nworld"))  # as the terminal delivers a paste
        await pilot.pause()
        assert composer.text == "Say hello\nworld"


async def test_a_terminal_made_taller_reads_earlier_messages_into_the_room() -> None:
    """The newest page filled the transcript; made taller, it does not: earlier messages are
    read as if the reader had scrolled to the top."""
    questions(300)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        transcript = await settled_transcript(pilot)
        assert len(shown_in(transcript)) == NEWEST_PAGE
        await pilot.resize_terminal(140, 120)
        await wait_for(pilot, lambda: len(shown_in(transcript)) == NEWEST_PAGE + PAGE)
        await settle(pilot)
        assert transcript.scroll_y == transcript.max_scroll_y > 0
