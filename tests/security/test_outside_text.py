"""Text from outside (provider answers, model lists, imports, share links, prompts piped in)
crosses one sanitising boundary before it is stored or shown: no escape sequence, C1 control
or bidi override reaches the terminal, and no widget parses it as markup."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from textual.widgets import OptionList, Select

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig
from byok_tui.keys import entry_name, open_key_store
from byok_tui.screens.dialogs import ConfirmDialog
from byok_tui.screens.settings import SettingsScreen
from byok_tui.storage.share import encode_bot_link
from byok_tui.widgets.message_views import ReplyView
from byok_tui.widgets.transcript import Transcript
from tests.support.cli import run_cli
from tests.support.pilot import chat, make_app, send, settle, wait_for
from tests.support.provider_server import Reply, Seen, provider_server, sse

# What a hostile answer carries: set the window title, write the clipboard (OSC 52), clear
# the screen, a C1 CSI and a C1 OSC, and a right-to-left override.
HOSTILE = "a\x1b]2;PWNED\x1b\\b\x1b]52;c;ZXZpbA==\x07c\x1b[2Jd\x9b31me\x9d0;t\x9cf\u202eg"
FORBIDDEN = re.compile("[\x1b\x80-\x9f\u202a-\u202e\u2066-\u2069]")
KEY = "sk-proj-" + "H" * 60
JSON = {"content-type": "application/json"}


def clean(text: str) -> bool:
    return FORBIDDEN.search(text) is None


def database_text() -> str:
    """Every text value in every table of the database, joined."""
    connection = sqlite3.connect(app_paths().data_dir / "byok-tui.sqlite3")
    tables = [
        row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
    ]
    texts = [
        value
        for table in tables
        for row in connection.execute(f"SELECT * FROM {table}")  # noqa: S608 (our own names)
        for value in row
        if isinstance(value, str)
    ]
    connection.close()
    return "\n".join(texts)


def hostile_models(request: Seen) -> Reply:
    if request.target.endswith("/models"):
        body = {"data": [{"id": f"gpt-{HOSTILE}"}, {"id": "plain-model"}]}
        return Reply(headers=JSON, steps=[json.dumps(body).encode()])
    return Reply(
        steps=sse(
            {"choices": [{"index": 0, "delta": {"content": HOSTILE}, "finish_reason": "stop"}]},
            done=True,
        )
    )


def test_models_prints_no_control_from_the_network_nor_from_its_cache() -> None:
    run_cli("keys", "set", "openai", stdin=KEY)
    with provider_server(hostile_models) as server:
        env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
        fresh = run_cli("models", "--refresh", "-p", "openai", env=env)
    assert fresh.returncode == 0, fresh.stderr
    cached = run_cli("models", "-p", "openai")  # no network: the cache
    for output in (fresh.stdout, cached.stdout):
        assert "gpt-a" in output and clean(output), output


def test_ask_prints_no_control_from_a_reply_and_stores_none_in_its_title() -> None:
    run_cli("keys", "set", "openai", stdin=KEY)
    with provider_server(hostile_models) as server:
        env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
        result = run_cli("ask", "-p", "openai", env=env, stdin=f"diff{HOSTILE}")
    assert result.returncode == 0, result.stderr
    assert clean(result.stdout) and clean(result.stderr)
    assert clean(database_text())
    store = open_store(open_services())
    titles = [c.title for b in store.bots() for c in store.conversations(b.id)]
    assert titles and all(clean(t) for t in titles)


def test_an_import_stores_no_control_and_bot_list_prints_none(tmp_path) -> None:
    """A conversation's text is cleaned; a bot's fields with a control in them are refused,
    as a share link's are (C1 and bidi controls included)."""
    bot = {
        "uuid": "b1",
        "name": "Imported",
        "provider": "openai",
        "model": "gpt-5.5",
        "system_prompt": "be\nkind",
        "temperature": None,
        "max_tokens": 100,
    }
    message = {
        "uuid": "m1",
        "role": "assistant",
        "content": f"reply{HOSTILE}",
        "reasoning": "",
        "provider": f"openai{HOSTILE}",
        "model": f"gpt{HOSTILE}",
        "key_source": f"global{HOSTILE}",
        "status": "complete",
        "error_kind": None,
        "error_message": None,
        "input_tokens": 1,
        "output_tokens": 1,
        "created": 1.0,
    }
    conversation = {
        "uuid": "c1",
        "bot_uuid": "b1",
        "title": f"t{HOSTILE}",
        "created": 1.0,
        "updated": 1.0,
        "messages": [message],
    }
    export = {
        "format": "byok-tui-export",
        "version": 1,
        "bots": [bot],
        "conversations": [conversation],
        "settings": {},
    }
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(export))
    assert run_cli("import", str(path)).returncode == 0
    assert run_cli("bot", "add", f"Typed{HOSTILE}", "-p", "openai").returncode == 0
    assert clean(database_text())
    listed = run_cli("bot", "list")
    assert listed.returncode == 0 and clean(listed.stdout)
    assert "Typedabcdefg" in listed.stdout  # what is left of the name is all there
    for name in ("C1\x9b31m", "Bidi\u202eevil", f"Esc{HOSTILE}"):
        refused = run_cli("bot", "import", encode_bot_link(BotConfig(name, "openai", "m")))
        assert refused.returncode == 2 and "control" in refused.stderr, name
    path.write_text(json.dumps({**export, "bots": [{**bot, "model": "m\u202e"}]}))
    assert run_cli("import", str(path)).returncode == 2


async def test_the_app_shows_no_control_from_any_field() -> None:
    """An imported conversation's title and metadata, a reply, Ollama's model names."""
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, f"title{HOSTILE}")
    reply = store.add_message(
        conversation.id, "assistant", f"stored{HOSTILE}", provider="openai", model=f"m{HOSTILE}"
    )
    assert clean(store.message(reply.id).model or "")
    open_key_store(app_paths()).set(entry_name("openai"), KEY)

    def ollama(request: Seen) -> Reply:
        tags = {"models": [{"name": f"llama{HOSTILE}"}]}
        return Reply(headers=JSON, steps=[json.dumps(tags).encode()])

    with provider_server(hostile_models) as server, provider_server(ollama) as local:
        app = make_app(
            BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1",
            OLLAMA_HOST=local.base_url.removeprefix("http://"),
        )
        async with app.run_test(size=(140, 44)) as pilot:
            await settle(pilot)
            await send(pilot, "hello")
            await wait_for(pilot, lambda: len(chat(app).query(ReplyView)) == 2)
            await settle(pilot)
            screen = chat(app)
            titles = screen.query_one("#conversations", OptionList)
            shown = [str(titles.get_option_at_index(i).prompt) for i in range(titles.option_count)]
            shown += [
                view.content + view._meta for view in screen.query_one(Transcript).query(ReplyView)
            ]
            assert all(clean(text) for text in shown), shown
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
            result = "#row-ollama .test-result"
            await wait_for(pilot, lambda: "llama" in str(app.screen.query_one(result).render()))
            assert clean(str(app.screen.query_one(result).render()))
    assert clean(database_text())


@pytest.mark.parametrize("title", ["what lives in [/usr/bin]?", "[@click=app.quit]Quit[/]"])
async def test_a_title_with_markup_in_it_can_be_deleted(title: str) -> None:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    store.create_conversation(bot.id, title)
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause()
        await pilot.click("#yes")
        await settle(pilot)
        assert app.is_running
    assert store.conversations(bot.id) == []


async def test_a_bot_with_markup_in_its_name_and_model_is_shown_as_text() -> None:
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    odd = store.create_bot(BotConfig("[@click=app.quit]Odd[/]", "openai", "[/x]"))
    app = make_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot)
        bots = chat(app).query_one("#bots", OptionList)
        bots.focus()
        bots.highlighted = bots.get_option_index(f"bot:{odd.id}")
        await pilot.press("enter")
        await settle(pilot)
        model = chat(app).query_one("#bot-model", Select)
        assert model.value == "[/x]"
        model.focus()
        await pilot.press("enter")  # open the list: every label is text
        await pilot.pause()
        await pilot.press("escape")
        # A notification naming it is text too: deleting it says its name as it is.
        chat(app).action_delete_bot(odd.id)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause()
        await pilot.click("#yes")
        await settle(pilot)
        assert app.is_running
        toast = next(n for n in app._notifications if "Deleted the bot" in n.message)
        assert toast.markup is False
