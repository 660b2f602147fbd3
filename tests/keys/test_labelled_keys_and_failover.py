"""Several keys per provider: labelled keys, their health from the answers they got, and
opt-in failover between them (both directions, its notice, never on 400 or 403), against a
loopback server that answers each key its own way."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest

from byok_tui.chat.outgoing import Outgoing
from byok_tui.core.paths import app_paths
from byok_tui.keys import open_key_store
from byok_tui.providers.client import ProviderClient
from tests.support.cli import run_cli
from tests.support.provider_server import (
    ProviderServer,
    Reply,
    Seen,
    openai_reply,
    provider_server,
)

DEFAULT_KEY = "gsk_" + "D" * 48 + "dF4u"
WORK_KEY = "gsk_" + "W" * 48 + "wK7e"
SPARE_KEY = "gsk_" + "S" * 48 + "sP2r"
JSON = {"content-type": "application/json"}


def refusal(status: int, code: str = "", headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps({"error": {"message": f"refused {status}", "code": code}}).encode()
    return Reply(status, {**JSON, **(headers or {})}, [body])


def answers(by_key: dict[str, Reply]) -> Callable[[Seen], Reply]:
    """A server that answers each key as `by_key` says (any other key: 401)."""

    def answer(seen: Seen) -> Reply:
        sent = seen.header("authorization") or ""
        return by_key.get(sent.removeprefix("Bearer "), refusal(401))

    return answer


def keys_sent(server: ProviderServer) -> list[str]:
    sent = [seen.header("authorization") or "" for seen in server.requests]
    names = {f"Bearer {DEFAULT_KEY}": "default", f"Bearer {WORK_KEY}": "work"}
    return [names.get(value, "spare") for value in sent]


def set_keys(*, failover: bool) -> None:
    assert run_cli("keys", "set", "groq", stdin=DEFAULT_KEY).returncode == 0
    assert run_cli("keys", "set", "groq", "--label", "work", stdin=WORK_KEY).returncode == 0
    if failover:
        assert run_cli("keys", "failover", "groq", "on").returncode == 0


def ask(server: ProviderServer, *extra: str) -> tuple[int, str]:
    env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1"}
    result = run_cli("ask", "-p", "groq", *extra, "hi", env=env)
    return result.returncode, result.stderr


def test_a_labelled_key_is_stored_under_its_own_entry_and_chosen_with_ask_key() -> None:
    set_keys(failover=False)
    stored = open_key_store(app_paths())
    assert stored.get("app-apikey-groq") == DEFAULT_KEY
    assert stored.get("app-apikey-groq:work") == WORK_KEY
    listed = run_cli("keys", "list").stdout
    assert "work" in listed and "gsk_…wK7e" in listed and WORK_KEY not in listed
    with provider_server(answers({WORK_KEY: openai_reply("ok")})) as server:
        code, stderr = ask(server, "--key", "work")
        assert code == 0, stderr
        assert keys_sent(server) == ["work"]
        code, stderr = ask(server, "--key", "nope")
        assert code == 3
        assert "no key labelled 'nope'" in stderr
        assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("refused", "words"),
    [
        (refusal(429, headers={"retry-after": "30"}), "rate-limited"),
        (refusal(402), "no credit"),
        (refusal(429, code="insufficient_quota"), "no credit"),
        (refusal(401), "invalid (401)"),
    ],
)
def test_with_failover_on_a_refused_key_is_replaced_by_the_next_with_a_notice(
    refused: Reply, words: str
) -> None:
    set_keys(failover=True)
    with provider_server(answers({DEFAULT_KEY: refused, WORK_KEY: openai_reply("ok")})) as server:
        code, stderr = ask(server)
        assert code == 0, stderr
        assert keys_sent(server) == ["default", "work"]
    assert f"groq default key: {words}; sent with key work" in stderr
    logged = json.loads(run_cli("requests", "--json").stdout)
    assert [row["key_source"] for row in logged] == ["key work", "global"]


def test_failover_goes_the_other_way_too_from_a_labelled_key_to_the_default() -> None:
    set_keys(failover=True)
    assert run_cli("bot", "key", "Default", "--label", "work").returncode == 0
    by_key = {WORK_KEY: refusal(401), DEFAULT_KEY: openai_reply("ok")}
    with provider_server(answers(by_key)) as server:
        code, stderr = ask(server, "--bot", "Default")
        assert code == 0, stderr
        assert "groq key work: invalid (401); sent with default key" in stderr
        # An invalid key is skipped until it is changed.
        code, stderr = ask(server, "--bot", "Default")
        assert code == 0, stderr
        assert keys_sent(server) == ["work", "default", "default"]
        assert "groq key work: skipped (invalid (401))" in stderr
        # Changed: it is tried again.
        assert run_cli("keys", "set", "groq", "--label", "work", stdin=SPARE_KEY).returncode == 0
        ask(server, "--bot", "Default")
        assert keys_sent(server)[3] == "spare"


def test_a_key_named_with_ask_key_is_pinned_failover_or_not() -> None:
    """`ask --key default` asks for that key: refused, it is the error; no other key goes."""
    set_keys(failover=True)
    by_key = {DEFAULT_KEY: refusal(401), WORK_KEY: openai_reply("ok")}
    with provider_server(answers(by_key)) as server:
        code, _stderr = ask(server, "--key", "default")
        assert code == 4
        assert keys_sent(server) == ["default"]


def test_no_failover_notice_when_every_key_is_unhealthy_and_the_send_goes_as_it_is() -> None:
    """With no usable key left, the send goes with the first: nothing failed over, so no
    notice lists keys as skipped (the one it used among them)."""
    set_keys(failover=True)
    with provider_server(answers({})) as server:  # both refused: both invalid now
        code, _stderr = ask(server)
        assert code == 4
    with provider_server(answers({DEFAULT_KEY: openai_reply("ok")})) as server:
        code, stderr = ask(server)
        assert code == 0, stderr
        assert keys_sent(server) == ["default"]
    assert "skipped" not in stderr and "failover" not in stderr.lower()


def test_with_failover_off_a_refused_key_is_the_error_and_nothing_else_is_sent() -> None:
    set_keys(failover=False)
    by_key = {DEFAULT_KEY: refusal(429, headers={"retry-after": "30"}), WORK_KEY: openai_reply()}
    with provider_server(answers(by_key)) as server:
        code, _stderr = ask(server)
        assert code == 5
        assert keys_sent(server) == ["default"]


@pytest.mark.parametrize(("status", "exit_code"), [(400, 8), (403, 4)])
def test_failover_never_follows_a_400_or_a_403(status: int, exit_code: int) -> None:
    set_keys(failover=True)
    with provider_server(answers({DEFAULT_KEY: refusal(status), WORK_KEY: openai_reply()})) as s:
        code, _stderr = ask(s)
        assert code == exit_code
        assert keys_sent(s) == ["default"]


def test_every_key_shows_its_health_after_401_402_and_429() -> None:
    set_keys(failover=True)
    run_cli("keys", "set", "groq", "--label", "spare", stdin=SPARE_KEY)
    by_key = {
        DEFAULT_KEY: refusal(429, headers={"retry-after": "120"}),
        WORK_KEY: refusal(402),
        SPARE_KEY: openai_reply("ok"),
    }
    with provider_server(answers(by_key)) as server:
        code, stderr = ask(server)
        assert code == 0, stderr
        assert keys_sent(server) == ["default", "work", "spare"]
    rows = {
        line.split()[1]: line
        for line in run_cli("keys", "list").stdout.splitlines()
        if line.startswith("groq ")
    }
    assert "cooling for 1" in rows["default"]  # 120 s less the time the test took
    assert "no credit" in rows["work"]
    assert " ok " in rows["spare"]
    assert "s ago" in rows["spare"]  # last used
    # No piece of any of the three keys in any file but the key store: not in the database
    # (health is kept by fingerprint), the request log, the logs.
    written = [p for p in app_paths().config_dir.rglob("*") if p.is_file()]
    for key in (DEFAULT_KEY, WORK_KEY, SPARE_KEY):
        pieces = [key[i : i + 8] for i in range(len(key) - 7)]
        for path in written:
            if path.name != "keys.json":
                text = path.read_bytes().decode("utf-8", errors="replace")
                assert not [piece for piece in pieces if piece in text], path


def test_a_conversation_stays_on_the_key_that_last_answered_it() -> None:
    """In one conversation, once key work answered, the next message goes to work first."""
    from byok_tui.app_services.services import open_services, open_store
    from byok_tui.chat.conversation import ConversationService
    from byok_tui.core.records import BotConfig

    set_keys(failover=True)
    environ: dict[str, str] = {}
    services = open_services()
    store = open_store(services)
    bot = store.create_bot(BotConfig("Cached", "groq", "llama-3.1-8b-instant"))
    conversation = store.create_conversation(bot.id, "t")

    async def talk() -> list[str]:
        async with ProviderClient(services.keys, environ=environ) as client:
            service = ConversationService(store, client)
            sources = []
            for _ in range(2):
                async for event in service.send(bot, conversation, Outgoing("hi")):
                    del event
                sources.append(store.messages(conversation.id)[-1].key_source or "")
            return sources

    first = {DEFAULT_KEY: refusal(429, headers={"retry-after": "1"}), WORK_KEY: openai_reply()}
    with provider_server(answers(first)) as loop:
        environ["BYOK_TUI_GROQ_BASE_URL"] = f"{loop.base_url}/openai/v1"
        sources = asyncio.run(talk())
        assert keys_sent(loop) == ["default", "work", "work"]
    assert sources == ["key work", "key work"]


def test_a_key_replaced_by_a_command_starts_afresh() -> None:
    """The README's promise: a key that is changed starts afresh. A command's key is not
    known until it runs, so the old key's health must not be shown as the command's."""
    set_keys(failover=False)
    with provider_server(answers({})) as server:  # the default key: 401
        code, _stderr = ask(server)
        assert code == 4
    assert "invalid (401)" in run_cli("keys", "list").stdout
    failing = 'sh -c "echo gpg: decryption failed >&2; exit 2"'
    assert run_cli("keys", "set", "groq", "--command", failing).returncode == 0
    (row,) = [
        line
        for line in run_cli("keys", "list").stdout.splitlines()
        if "default" in line and line.startswith("groq")
    ]
    assert "invalid (401)" not in row and "not used yet" in row, row
