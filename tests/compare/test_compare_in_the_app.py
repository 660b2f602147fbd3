"""Compare in the app, against loopback providers (one slow, one refusing with 429, one fine):
F5 asks for the targets (remembered per bot), one column a target streams at once, each
headed by provider · model · key and its figures; the 429 is that column's error with its
remedy while the others go on; `s` stops one column, Escape every one; `k` keeps a reply,
which the conversation then shows, the others its alternatives (n/3). Every request carries
the same history."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input, Static

from byok_tui.app import ByokApp
from byok_tui.screens.compare import CompareScreen
from byok_tui.screens.dialogs import TextDialog
from byok_tui.widgets.compare_column import CompareColumn
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.message_views import ErrorBlock, ReplyView
from tests.compare.test_ask_compare import FINE, KEYS, LIMITED, SLOW, by_model, store, words
from tests.support.pilot import chat, make_app, replies, send, settle, wait_for
from tests.support.provider_server import ProviderServer, Reply, Seen, provider_server

TARGETS = f"{SLOW}, {LIMITED}, {FINE}"


def app_on(server: ProviderServer) -> ByokApp:
    from byok_tui.core.paths import app_paths
    from byok_tui.keys import entry_name, open_key_store

    for provider, key in KEYS.items():
        open_key_store(app_paths()).set(entry_name(provider), key)
    return make_app(
        BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1",
        BYOK_TUI_GROQ_BASE_URL=f"{server.base_url}/openai/v1",
        BYOK_TUI_MISTRAL_BASE_URL=f"{server.base_url}/v1",
    )


async def compare(pilot: Pilot[None], app: ByokApp, text: str = "2+2?") -> CompareScreen:
    """Type `text`, press F5, name the targets, and wait for the compare screen."""
    await settle(pilot)
    chat(app).query_one(Composer).text = text
    await pilot.press("f5")
    await wait_for(pilot, lambda: isinstance(app.screen, TextDialog), timeout=15)
    app.screen.query_one(Input).value = TARGETS
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen), timeout=15)
    assert isinstance(app.screen, CompareScreen)
    return app.screen


async def all_ended(pilot: Pilot[None], screen: CompareScreen) -> None:
    """Wait until no column is waiting or streaming."""
    await wait_for(pilot, lambda: not any(c.running for c in screen.columns), 30)


def columns(screen: CompareScreen) -> dict[str, CompareColumn]:
    return {column.outcome.provider: column for column in screen.columns}


def figures(column: CompareColumn) -> str:
    return str(column.query_one(".figures", Static).render())


async def test_three_targets_stream_side_by_side_and_a_refusal_stays_in_its_column() -> None:
    with provider_server(by_model) as server:
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            screen = await compare(pilot, app)
            shown = columns(screen)
            await all_ended(pilot, screen)
            assert shown["openai"].state == shown["mistral"].state == "done"
            assert "The slow answer is four." in shown["openai"].query_one(ReplyView).content
            assert shown["groq"].state == "failed"
            error = str(shown["groq"].query_one(ErrorBlock).render())
            assert "429" in error or "rate limit" in error.lower(), error
            head = str(shown["mistral"].query_one(".head", Static).render())
            assert "mistral · mistral-small-latest" in head and "key" in head, head
            assert "first token" in figures(shown["mistral"])
            assert "12 in, 3 out" in figures(shown["mistral"]), figures(shown["mistral"])
            assert "$" in figures(shown["mistral"])
        bodies = [request.json["messages"] for request in server.requests]
    assert len(bodies) == 3 and bodies[0] == bodies[1] == bodies[2], bodies
    assert bodies[0][-1]["content"] == "2+2?"


async def keep_mistral_s_reply(pilot: Pilot[None], app: ByokApp) -> None:
    """Compare, keep the third column's reply (Mistral's), and wait until the chat shows it."""
    screen = await compare(pilot, app)
    await all_ended(pilot, screen)
    await pilot.press("3", "k")
    await wait_for(pilot, lambda: not isinstance(app.screen, CompareScreen), 15)
    await wait_for(pilot, lambda: replies(app)[-1:] == ["Four. "], 15)


async def test_keep_makes_a_reply_the_conversation_s_and_the_others_its_alternatives() -> None:
    with provider_server(by_model) as server:
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            await keep_mistral_s_reply(pilot, app)
            bot = store().bot("Default")
            assert store().settings().get(f"compare.targets.{bot.id}") == TARGETS
            # The conversation goes on with the model kept; the bot's own is unchanged.
            await send(pilot, "And 3+3?")
            await wait_for(pilot, lambda: len(server.requests) == 4, 15)
            assert server.requests[-1].json["model"] == "mistral-small-latest"
            assert store().bot("Default").config.model == bot.config.model != "mistral-small-latest"
    conversation = store().conversations(store().bot("Default").id)[0]
    shown = store().messages(conversation.id)
    assert [m.role for m in shown] == ["user", "assistant", "user", "assistant"]
    kept = shown[1]
    assert (kept.provider, kept.content) == ("mistral", "Four. ")
    assert (shown[3].provider, shown[3].model) == ("mistral", "mistral-small-latest")
    assert store().branch.alternatives_of([kept.id]) == {kept.id: (3, 3)}


async def test_the_kept_model_holds_for_the_conversation_after_a_restart() -> None:
    """The conversation goes on with the model kept in a later run of the app too; the bot's
    own model is still the bot's (its other conversations use it)."""
    with provider_server(by_model) as server:
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            await keep_mistral_s_reply(pilot, app)
        again = app_on(server)
        async with again.run_test(size=(150, 40)) as pilot:
            await settle(pilot)
            await wait_for(pilot, lambda: replies(again)[-1:] == ["Four. "], 15)
            await send(pilot, "And 3+3?")
            await wait_for(pilot, lambda: len(server.requests) == 4, 15)
        assert server.requests[-1].json["model"] == "mistral-small-latest"


async def test_the_bot_s_model_can_be_chosen_again_for_the_conversation() -> None:
    """The config pane names the kept model as the next message's; "Use the bot's model
    again" (palette) sends the conversation's next message to the bot's own model."""

    def next_message(app: ByokApp) -> str:
        return str(chat(app).query_one("#key-in-use", Static).render())

    with provider_server(by_model) as server:
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            await keep_mistral_s_reply(pilot, app)
            await wait_for(pilot, lambda: "mistral-small-latest" in next_message(app), 15)
            chat(app).action_use_bot_model()
            await wait_for(pilot, lambda: "mistral" not in next_message(app), 15)
            await send(pilot, "And 3+3?")
            await wait_for(pilot, lambda: len(server.requests) == 4, 15)
        assert server.requests[-1].json["model"] == store().bot("Default").config.model


def slow_everywhere(seen: Seen) -> Reply:
    return words("one two three four five six seven eight nine ten", pause=0.4)


async def test_s_stops_one_column_and_escape_stops_every_other() -> None:
    with provider_server(slow_everywhere) as server:
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            screen = await compare(pilot, app)
            shown = columns(screen)
            await wait_for(pilot, lambda: all(c.has_text for c in screen.columns), 30)
            await pilot.press("1")
            await pilot.press("s")
            await wait_for(pilot, lambda: shown["openai"].state == "stopped", 15)
            assert shown["mistral"].running, "stopping one stopped another"
            await pilot.press("escape")
            await wait_for(pilot, lambda: not any(c.running for c in screen.columns), 15)
            assert {c.state for c in screen.columns} == {"stopped"}
            assert "stopped" in figures(shown["groq"])
            await pilot.press("escape")  # nothing runs: back to the chat
            await wait_for(pilot, lambda: not isinstance(app.screen, CompareScreen), 15)
    kept = (
        store()
        .connection()
        .execute("SELECT status, content FROM messages WHERE role = 'assistant'")
    )
    replies_kept = [tuple(row) for row in kept]
    assert len(replies_kept) == 3
    assert all(status == "partial" and text for status, text in replies_kept), replies_kept


async def test_narrow_columns_become_tabs_switched_by_their_number() -> None:
    with provider_server(by_model) as server:
        app = app_on(server)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await compare(pilot, app)
            from textual.widgets import TabbedContent

            tabs = screen.query_one(TabbedContent)
            await pilot.press("2")
            assert tabs.active == "tab-2"
            await all_ended(pilot, screen)


async def test_f5_with_an_empty_composer_says_what_to_do_and_asks_nothing() -> None:
    with provider_server(by_model) as server:
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            await settle(pilot)
            await pilot.press("f5")
            await pilot.pause()
            assert not isinstance(app.screen, TextDialog)
            assert any("Type the message to compare" in str(n.message) for n in app._notifications)
        assert server.requests == []


async def test_a_budget_blocks_its_own_target_and_the_others_go_on() -> None:
    """The budget is checked per target before its request: the blocked column says so with
    its remedy; the others answer."""
    from tests.compare.test_ask_compare import ask
    from tests.support.cli import run_cli

    with provider_server(by_model) as server:
        server.reply_with(words("Expensive.", usage=(400_000, 100_000)))
        assert ask(server, "-p", "openai", "-m", "gpt-5.5", "Costly")[0] == 0
        assert run_cli("budget", "set", "openai", "0.01", "--per", "day").returncode == 0
        server.replies.clear()
        asked_before = len(server.requests)
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            screen = await compare(pilot, app)
            shown = columns(screen)
            await all_ended(pilot, screen)
            assert shown["openai"].state == "failed"
            said = str(shown["openai"].query_one(ErrorBlock).render())
            assert "budget" in said.lower(), said
            assert shown["mistral"].state == "done"
        sent_to = [r.json["model"] for r in server.requests[asked_before:]]
    assert "gpt-5.5" not in sent_to, "a request went past its budget"
    assert "mistral-small-latest" in sent_to


def cut_at_the_limit(seen: Seen) -> Reply:
    """Every target's reply stops at its length limit (finish_reason "length")."""
    from tests.support.provider_server import sse

    steps: list[bytes | float] = []
    steps += sse({"choices": [{"index": 0, "delta": {"content": "Four, because "}}]})
    steps += sse({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}})
    done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
    return Reply(steps=[*steps, *sse(done, done=True)])


async def test_a_reply_cut_at_its_length_limit_says_so_in_its_column() -> None:
    """A reply stopped by its length limit is not "done": its column shows the length-limit
    notice with its remedy, as the chat and `ask --compare` do; it can still be kept."""
    with provider_server(cut_at_the_limit) as server:
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            screen = await compare(pilot, app)
            await all_ended(pilot, screen)
            column = columns(screen)["mistral"]
            said = str(column.query_one(ErrorBlock).render())
            assert "length limit" in said and "Continue" in said, said
            assert "length limit" in figures(column), figures(column)
            await pilot.press("3")
            await pilot.press("k")
            await wait_for(pilot, lambda: not isinstance(app.screen, CompareScreen), 15)


def drafts_kept() -> str:
    from byok_tui.storage.draft_rows import DRAFT_SETTING

    settings = store().settings()
    return " ".join(value for name, value in settings.items() if name.startswith(DRAFT_SETTING))


async def test_the_next_message_is_written_while_the_replies_come_and_waits_in_the_chat() -> None:
    """The compare has a composer: what is typed there shows at once, is the chat composer's
    text meanwhile (kept as a draft is: a kill loses at most a second of it), Enter keeps it
    rather than sending, and after the compare the chat's composer holds it, in focus."""
    with provider_server(slow_everywhere) as server:
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            screen = await compare(pilot, app)
            await pilot.press("c")
            await pilot.press(*"next one", "enter")
            typed = screen.query_one(Composer)
            assert typed.has_focus and typed.text == "next one"
            assert chat(app).query_one(Composer).text == "next one"
            await wait_for(pilot, lambda: "next one" in drafts_kept(), 15)
            assert any("Your message waits" in str(n.message) for n in app._notifications)
            await pilot.press("escape")  # stops every reply; focus stays in the composer
            await wait_for(pilot, lambda: not any(c.running for c in screen.columns), 15)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, CompareScreen), 15)
            composer = chat(app).query_one(Composer)
            assert composer.text == "next one" and composer.has_focus
            requests = len(server.requests)
        assert requests == 3, "Enter in the compare's composer sent a message"


def long_replies(seen: Seen) -> Reply:
    reply = words(" ".join(f"word{n}" for n in range(600)), pause=0.001)
    reply.steps = [0.5, *reply.steps]  # the columns are drawn before the first word comes
    return reply


async def test_each_column_keeps_its_newest_text_in_view_as_it_streams() -> None:
    """A reply taller than its column follows its newest text, as the chat does (the reader
    who scrolls up is left where they are: tests/app/test_transcript_follow.py). Its text
    keeps its width when it outgrows the column: the scrollbar's place is kept from the
    start, or every line would be drawn again, at once, when the scrollbar appears."""
    from byok_tui.widgets.following_scroll import FollowingScroll

    with provider_server(long_replies) as server:
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            screen = await compare(pilot, app)
            await pilot.pause()
            scrolls = [column.query_one(FollowingScroll) for column in screen.columns]
            outgrown = any(scroll.max_scroll_y for scroll in scrolls)
            assert not outgrown, "a reply outgrew its column already: the test shows nothing"
            widths = [column.query_one(ReplyView).size.width for column in screen.columns]
            await all_ended(pilot, screen)
            after = [column.query_one(ReplyView).size.width for column in screen.columns]
            assert after == widths, "a reply's text was drawn again at a new width"
            await pilot.pause(0.2)
            for column in screen.columns:
                if column.state != "done":
                    continue
                view = column.query_one(FollowingScroll)
                assert view.max_scroll_y > 0, "the reply fits: the test shows nothing"
                assert view.scroll_y == view.max_scroll_y, "the newest text is out of view"
            assert "word599" in str(app.export_screenshot())


async def test_what_is_typed_before_the_targets_are_asked_is_kept() -> None:
    """Keys typed after F5 but before the targets dialog has the focus land in the chat
    composer, after the message compared: they are kept there, not erased with it."""
    with provider_server(by_model) as server:
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            await settle(pilot)
            composer = chat(app).query_one(Composer)
            composer.text = "2+2?"
            await pilot.press("f5")
            await wait_for(pilot, lambda: isinstance(app.screen, TextDialog), timeout=15)
            composer.text = "2+2? and then"  # typed while the dialog was on its way
            app.screen.query_one(Input).value = TARGETS
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen), timeout=15)
            assert composer.text == " and then"
            assert app.screen.query_one(Composer).text == " and then"
            await wait_for(pilot, lambda: len(server.requests) == 3, 15)
        assert server.requests[0].json["messages"][-1]["content"] == "2+2?"


async def test_quitting_while_the_replies_come_ends_cleanly_and_keeps_them() -> None:
    """The app ending during a compare (ctrl+q, or a hang-up, which ends it the same way):
    no crash report (the columns, being taken down, are not drawn), and every reply so far
    is kept, partial."""
    from byok_tui.core.paths import app_paths

    with provider_server(slow_everywhere) as server:
        app = app_on(server)
        async with app.run_test(size=(150, 40)) as pilot:
            screen = await compare(pilot, app)
            await wait_for(pilot, lambda: all(c.has_text for c in screen.columns), 30)
            app.exit()
    assert app.return_code in (0, None)
    crash_dir = app_paths().crash_dir
    assert not crash_dir.exists() or not list(crash_dir.iterdir()), "a crash report was written"
    kept = store().connection().execute("SELECT status FROM messages WHERE role = 'assistant'")
    assert [row[0] for row in kept] == ["partial"] * 3, "a reply was not kept"


async def test_keys_typed_the_moment_a_compare_closes_land_in_the_chat_composer() -> None:
    """Escape closes the compare, and keys typed at once, before the chat has read its
    conversation again, are in the chat composer and on screen with their estimate: none
    goes to the compare on its way out, none is wiped by the conversation read after it."""
    import html

    with provider_server(by_model) as server:
        app = app_on(server)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await compare(pilot, app)
            await all_ended(pilot, screen)
            await pilot.press("escape", *"hello")
            composer = chat(app).query_one(Composer)
            await wait_for(pilot, lambda: composer.text == "hello", 15)
            await pilot.pause(0.5)  # the conversation read again meanwhile, the estimate made
            shown = html.unescape(app.export_screenshot()).replace("\xa0", " ")
            assert composer.text == "hello" and composer.has_focus
            assert "hello" in shown and "tokens in" in shown, "the keys typed are not on screen"
