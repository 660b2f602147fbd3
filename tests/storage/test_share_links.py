"""Share links carry a bot's configuration only; hostile links are refused or stripped."""

from __future__ import annotations

import base64
import contextlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig
from byok_tui.core.registry import Provider, providers
from byok_tui.core.sanitize import has_terminal_controls
from byok_tui.storage.bot_fields import BotInputError
from byok_tui.storage.share import MAX_LINK_CHARS, decode_bot_link, encode_bot_link
from byok_tui.storage.store import Store
from tests.support.cli import run_cli
from tests.support.keys import FAKE_KEYS, PER_BOT_KEY


def link_of(payload: object) -> str:
    raw = json.dumps(payload).encode()
    return "byok-tui://bot?v=1&c=" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


GOOD: dict[str, Any] = {
    "name": "Coder",
    "provider": "groq",
    "model": "llama-3.3-70b-versatile",
    "system_prompt": "Be terse.",
    "temperature": 0.2,
    "max_tokens": 2048,
}

# Everything from space upwards, short of the surrogates (which UTF-8 cannot carry).
# What a bot's text can hold: printable characters, not the controls (DEL, C1, bidi) that a
# link refuses and the store removes.
PRINTABLE = st.characters(min_codepoint=32, max_codepoint=0xD7FF).filter(
    lambda c: not has_terminal_controls(c)
)


def _configs_for(provider: Provider) -> st.SearchStrategy[BotConfig]:
    """Any bot the provider can be sent: its temperature and max tokens within its ranges."""
    return st.builds(
        BotConfig,
        name=st.text(PRINTABLE, min_size=1, max_size=100).filter(
            lambda s: s.strip() == s and s.strip()
        ),
        provider=st.just(provider.id),
        model=st.text(PRINTABLE, min_size=1, max_size=200).filter(
            lambda s: s.strip() == s and s.strip()
        ),
        system_prompt=st.text(PRINTABLE | st.sampled_from("\n\t"), max_size=500),
        temperature=st.none() | st.floats(*provider.temperature_range, allow_nan=False),
        max_tokens=st.integers(*provider.max_tokens_range),
    )


configs = st.sampled_from(providers()).flatmap(_configs_for)


@settings(max_examples=200)
@given(configs)
def test_any_bot_survives_a_round_trip_through_a_link(config: BotConfig) -> None:
    checked = decode_bot_link(encode_bot_link(config))
    assert checked.config == config
    assert checked.dropped == ()


@settings(max_examples=300)
@given(st.text(max_size=400))
def test_arbitrary_text_never_crashes_the_decoder(text: str) -> None:
    with contextlib.suppress(BotInputError):
        decode_bot_link(text)


@settings(max_examples=300)
@given(st.binary(max_size=400))
def test_arbitrary_payload_bytes_never_crash_the_decoder(raw: bytes) -> None:
    link = "byok-tui://bot?v=1&c=" + base64.urlsafe_b64encode(raw).decode().rstrip("=")
    with contextlib.suppress(BotInputError):
        decode_bot_link(link)


def test_a_link_never_contains_a_key(tmp_path) -> None:
    store = Store(app_paths().data_dir / "byok-tui.sqlite3")
    bot = store.create_bot(BotConfig("Mine", "openai", "gpt-5.5"))
    store.set_bot_key(bot.id, PER_BOT_KEY)
    store.close()
    result = run_cli("bot", "share", "Mine")
    assert result.returncode == 0
    link = result.stdout.strip()
    assert link.startswith("byok-tui://bot?v=1&c=")
    decoded = base64.urlsafe_b64decode(link.split("c=")[1] + "==").decode()
    assert PER_BOT_KEY not in link + decoded
    assert '"k"' not in decoded


@pytest.mark.parametrize("field", ["k", "base_url", "headers", "host", "api_key", "url"])
def test_fields_that_could_carry_or_redirect_a_key_are_dropped(field: str) -> None:
    checked = decode_bot_link(link_of({**GOOD, field: "https://evil.example or sk-x"}))
    assert checked.config == BotConfig(**GOOD)
    assert checked.dropped_key_fields == (field,)


def test_unknown_fields_are_dropped_and_reported() -> None:
    checked = decode_bot_link(link_of({**GOOD, "colour": "red"}))
    assert checked.dropped == ("colour",)
    assert checked.dropped_key_fields == ()


@pytest.mark.parametrize(
    ("link", "words"),
    [
        ("https://example.com/bot?v=1&c=abc", "not a byok-tui bot link"),
        ("byok-tui://bot?v=2&c=abc", "version '2'"),
        ("byok-tui://bot?v=1", "exactly v and c"),
        ("byok-tui://bot?v=1&c=abc&c=def", "exactly v and c"),
        ("byok-tui://bot?v=1&c=***", "not valid base64url"),
        ("byok-tui://bot?v=1&c=a", "not valid base64url"),
        ("byok-tui://bot?v=1&c=" + "A" * (MAX_LINK_CHARS + 1), "longer than"),
        (link_of(["a list"]), "JSON object"),
        (link_of({**GOOD, "provider": "chatgpt"}), "unknown provider 'chatgpt'"),
        (link_of({**GOOD, "temperature": "hot"}), "temperature must be a number"),
        (link_of({**GOOD, "temperature": 9}), "temperature 9 is outside Groq's range, 0 to 2"),
        (link_of({**GOOD, "max_tokens": 0}), "max tokens 0 is outside Groq's range"),
        (link_of({**GOOD, "max_tokens": 1.5}), "whole number"),
        (link_of({**GOOD, "name": "x" * 101}), "longer than 100"),
        (link_of({**GOOD, "name": "bad\x1b[31m"}), "control characters"),
        (link_of({k: v for k, v in GOOD.items() if k != "model"}), "model must be text"),
        (
            "byok-tui://bot?v=1&c="
            + base64.urlsafe_b64encode(b'{"name":"a","name":"b"}').decode().rstrip("="),
            "twice",
        ),
    ],
)
def test_hostile_links_are_refused_with_a_clear_reason(link: str, words: str) -> None:
    with pytest.raises(BotInputError) as raised:
        decode_bot_link(link)
    assert words in str(raised.value)


def test_bot_import_uses_the_recipients_own_keys() -> None:
    link = link_of({**GOOD, "k": PER_BOT_KEY})
    result = run_cli("bot", "import", link)
    assert result.returncode == 0, result.stderr
    assert "tried to carry or redirect a key (k)" in result.stderr
    assert "uses your own groq key" in result.stdout
    store = Store(app_paths().data_dir / "byok-tui.sqlite3")
    bot = store.bot("Coder")
    assert store.bot_key(bot.id) is None
    listing = run_cli("bot", "list").stdout
    assert "Coder" in listing
    assert "global" in listing
    assert run_cli("bot", "rm", "Coder").returncode == 0
    assert "Coder" not in run_cli("bot", "list").stdout


def test_a_hostile_link_changes_nothing_and_exits_2() -> None:
    result = run_cli("bot", "import", link_of({**GOOD, "provider": "evil"}))
    assert result.returncode == 2
    assert "unknown provider 'evil'" in result.stderr


def test_a_link_copies_no_key_out_of_the_system_prompt_as_the_export_does() -> None:
    """Every document that leaves byok-tui (share link, export, clipboard) redacts alike."""
    key = "my-own-gateway-key-" + "7" * 30  # stored, of no known shape
    assert run_cli("keys", "set", "openai", stdin=key).returncode == 0
    shaped = FAKE_KEYS["groq"]  # stored nowhere: only its shape tells
    prompt = f"Use {key} for the gateway and {shaped} for Groq."
    assert run_cli("bot", "add", "Leaky", "-p", "openai", "--system", prompt).returncode == 0
    link = run_cli("bot", "share", "Leaky").stdout.strip()
    decoded = base64.urlsafe_b64decode(link.split("c=")[1] + "==").decode()
    exported = run_cli("export").stdout
    for document in (decoded, exported):
        assert key[:12] not in document and shaped[:12] not in document
        assert "Use [REDACTED] for the gateway and [REDACTED] for Groq." in document.replace(
            "\\\\", "\\"
        )


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_tokens", 10**30), ("max_tokens", -5), ("temperature", 10**400), ("temperature", -1)],
)
def test_a_links_number_out_of_range_is_a_clear_error(field: str, value: int) -> None:
    fields = {"name": "N", "provider": "openai", "model": "m", field: value}
    payload = base64.urlsafe_b64encode(json.dumps(fields).encode()).decode().rstrip("=")
    result = run_cli("bot", "import", f"byok-tui://bot?v=1&c={payload}")
    assert result.returncode == 2, result.stderr
    said = field.replace("_", " ")  # "max tokens -5 is outside OpenAI's range, 1 to 1,000,000"
    assert f"{said} " in result.stderr and "outside OpenAI's range" in result.stderr
    assert "Traceback" not in result.stderr
