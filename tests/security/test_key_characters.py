"""What a key may contain: printable ASCII and nothing else. A key with an invisible or
non-ASCII character inside is refused when it is saved, with where and what it is; one that
got in anyway is an 'invalid key' before any request, never a crash and never shown."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual.widgets import OptionList

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.key_text import KeyCharacterError, check_key
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.widgets.key_field import KeyField
from tests.support.cli import run_cli
from tests.support.pilot import chat, error_texts, make_app, send, settle, type_into, wait_for
from tests.support.provider_server import openai_reply, provider_server

HEAD, TAIL = "sk-ant-api03-", "WHOLEKEY" + "x" * 40
WITH_ZWSP = HEAD + "\u200b" + TAIL  # character 14 is the invisible one


def test_an_invisible_character_inside_a_key_is_named_with_its_position() -> None:
    with pytest.raises(KeyCharacterError) as raised:
        check_key(WITH_ZWSP)
    said = str(raised.value)
    assert "character 14 is an invisible U+200B" in said
    assert "copy the key again" in said.lower()
    assert TAIL not in said and HEAD not in said


@pytest.mark.parametrize(
    ("inside", "kind"),
    [
        ("\u00e9", "a non-ASCII character"),
        ("\u0430", "a non-ASCII character"),  # Cyrillic a: looks like 'a'
        (" ", "a space"),
        ("\n", "a line break"),
        ("\x07", "a control character"),
        ("\u00a0", "a non-breaking space"),
    ],
)
def test_every_character_that_is_not_printable_ascii_is_refused(inside: str, kind: str) -> None:
    with pytest.raises(KeyCharacterError, match=kind):
        check_key("gsk_abc" + inside + "def123456")


def test_surrounding_white_space_and_invisible_characters_are_trimmed_not_refused() -> None:
    assert check_key("\ufeff  gsk_abcdef123456 \u200b\n") == "gsk_abcdef123456"


@given(st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1))
def test_every_printable_ascii_key_is_accepted_as_it_is(key: str) -> None:
    assert check_key(key) == key


def test_keys_set_refuses_it_and_stores_nothing() -> None:
    result = run_cli("keys", "set", "anthropic", stdin=WITH_ZWSP + "\n")
    assert result.returncode == 2
    assert "character 14 is an invisible U+200B" in result.stderr
    assert TAIL not in result.stderr + result.stdout
    assert open_key_store(app_paths()).get(entry_name("anthropic")) is None


def test_bot_key_refuses_it_and_stores_nothing() -> None:
    assert run_cli("bot", "add", "Mine", "-p", "anthropic").returncode == 0
    result = run_cli("bot", "key", "Mine", stdin=WITH_ZWSP + "\n")
    assert result.returncode == 2
    assert "character 14 is an invisible U+200B" in result.stderr
    store = open_store(open_services())
    assert not store.bot("Mine").has_key


@pytest.mark.parametrize("field_id", ["global-key", "bot-key"])
async def test_the_config_pane_refuses_it_saying_why_and_stores_nothing(field_id: str) -> None:
    store = open_store(open_services())
    store.default_bot("anthropic", "claude-sonnet-5")
    app = make_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot)
        field = chat(app).query_one(f"#{field_id}", KeyField)
        await type_into(pilot, field, WITH_ZWSP)
        await settle(pilot)
        app.context.writer.wait_idle()
        warning = str(chat(app).query_one(f"#{field_id}-warning").render())
        assert "character 14 is an invisible U+200B" in warning
    assert open_key_store(app_paths()).get(entry_name("anthropic")) is None
    assert not store.bots()[0].has_key


async def test_settings_refuses_it_saying_why_and_stores_nothing() -> None:
    from byok_tui.screens.settings import SettingsScreen

    app = make_app()
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
        field = app.screen.query_one("#row-anthropic KeyField", KeyField)
        await type_into(pilot, field, WITH_ZWSP)
        await pilot.pause()
        warning = str(app.screen.query_one("#row-anthropic .warning").render())
        assert "character 14 is an invisible U+200B" in warning
        await pilot.press("escape")
        await settle(pilot)
    assert open_key_store(app_paths()).get(entry_name("anthropic")) is None


def store_raw_key(key: str) -> None:
    """A key that got into the key file some other way (an editor, an older byok-tui)."""
    keys_file = app_paths().keys_file
    keys_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    keys_file.write_text(json.dumps({"app-apikey-openai": key}))
    keys_file.chmod(0o600)


async def test_a_stored_key_with_such_a_character_is_an_invalid_key_error_not_a_crash() -> None:
    key = "sk-proj-" + "\u200b" + "Z" * 60
    store_raw_key(key)
    open_store(open_services()).default_bot("openai", "gpt-5.5")
    with provider_server() as server:
        server.reply_with(openai_reply("never"))
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            providers = chat(app).query_one("#providers", OptionList)
            row = str(providers.get_option("provider:openai").prompt)
            assert "invalid key" in row
            await send(pilot, "hello")
            await wait_for(pilot, lambda: bool(error_texts(app)))
            shown = error_texts(app)[0]
            assert "invalid" in shown.lower() and "U+200B" in shown
            assert "Z" * 20 not in shown
            assert app.is_running
        assert server.requests == []
    assert not list(app_paths().crash_dir.glob("*")) if app_paths().crash_dir.exists() else True


def test_ask_with_such_a_stored_key_exits_4_with_one_line_and_no_request() -> None:
    store_raw_key("sk-proj-" + "\u200b" + "Z" * 60)
    with provider_server() as server:
        server.reply_with(openai_reply("never"))
        env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
        result = run_cli("ask", "-p", "openai", "hi", env=env)
        assert server.requests == []
    assert result.returncode == 4
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "U+200B" in result.stderr
