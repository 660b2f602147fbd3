"""Export All Data never carries a key; import merges and never touches keys."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig, Cost, Draft
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.types import Usage
from byok_tui.storage.bot_fields import BotInputError
from byok_tui.storage.export_checks import EXPORT_VERSION, ExportFormatError
from byok_tui.storage.store import Store
from byok_tui.storage.transfer import export_all, import_all
from tests.support.cli import run_cli
from tests.support.keys import ENV_KEY, FAKE_KEYS, PER_BOT_KEY
from tests.support.spend import a_chat_request

ODD_GLOBAL = "odd-global-key-no-shape-1"


def fill(store: Store) -> None:
    bot = store.create_bot(BotConfig("Coder", "groq", "llama-3.3-70b-versatile", "Be terse.", 0.2))
    store.set_bot_key(bot.id, PER_BOT_KEY)
    conversation = store.create_conversation(bot.id, "Pasted my key by mistake")
    store.add_message(conversation.id, "user", f"my key is {FAKE_KEYS['groq']} and {ODD_GLOBAL}")
    reply = store.add_message(conversation.id, "assistant", "", status="partial")
    store.save_reply(
        reply.id,
        content="Never paste keys ✓",
        reasoning="hm",
        status="complete",
        usage=Usage(3, 4),
    )
    store.set_setting("theme", "nord")


def all_secrets() -> list[str]:
    return [*FAKE_KEYS.values(), PER_BOT_KEY, ENV_KEY, ODD_GLOBAL]


def test_the_export_contains_no_key_of_any_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = open_key_store(app_paths())
    for provider_id, key in FAKE_KEYS.items():
        keys.set(entry_name(provider_id), key)
    keys.set(entry_name("mistral"), ODD_GLOBAL)
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    store = Store(app_paths().data_dir / "byok-tui.sqlite3")
    fill(store)
    store.close()
    result = run_cli("export")
    assert result.returncode == 0, result.stderr
    exported = result.stdout
    assert '"format": "byok-tui-export"' in exported
    for secret in all_secrets():
        assert secret not in exported
    assert '"k"' not in exported
    assert "Never paste keys ✓" in exported  # the data itself is all there


def test_export_to_a_file_is_private_and_says_no_keys(tmp_path) -> None:
    Store(app_paths().data_dir / "byok-tui.sqlite3").close()
    target = tmp_path / "all.json"
    result = run_cli("export", str(target))
    assert result.returncode == 0
    assert "no keys included" in result.stderr
    assert (target.stat().st_mode & 0o777) == 0o600


def test_export_then_import_round_trips_everything_but_keys(tmp_path, monkeypatch) -> None:
    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    exported = export_all(source, [ODD_GLOBAL])
    target = Store(tmp_path / "target.sqlite3")
    summary = import_all(target, exported)
    assert (summary.bots_added, summary.conversations_added, summary.messages_added) == (1, 1, 2)
    bot = target.bot("Coder")
    assert bot.config == source.bot("Coder").config
    assert not bot.has_key
    assert target.bot_key(bot.id) is None
    got = target.messages(target.conversations(bot.id)[0].id)
    want = source.messages(source.conversations(source.bot("Coder").id)[0].id)
    assert [(m.role, m.status, m.reasoning, m.output_tokens) for m in got] == [
        (m.role, m.status, m.reasoning, m.output_tokens) for m in want
    ]
    assert got[1].content == want[1].content
    assert ODD_GLOBAL not in got[0].content  # a key pasted into a message was scrubbed
    assert target.settings() == {"theme": "nord"}


def test_a_draft_is_neither_exported_nor_taken_in(tmp_path) -> None:
    """A run's draft names files on its machine by path: an export leaves it out, and an
    import (a hostile file, say) never brings one in, so no file is attached on its word."""
    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    source.keep_draft("a-run", Draft("half a thought", ("/home/me/notes.md",)))
    exported = export_all(source, [])
    assert b"half a thought" not in exported and b"notes.md" not in exported
    document = json.loads(exported)
    document["settings"]["composer-draft:planted"] = json.dumps(
        {"text": "send this", "files": ["/home/me/.ssh/id_ed25519"]}
    )
    target = Store(tmp_path / "target.sqlite3")
    import_all(target, json.dumps(document).encode())
    assert target.drafts() == {}
    assert target.settings() == {"theme": "nord"}


def test_importing_the_same_file_twice_duplicates_nothing(tmp_path) -> None:
    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    exported = export_all(source, [])
    target = Store(tmp_path / "target.sqlite3")
    import_all(target, exported)
    again = import_all(target, exported)
    assert (again.bots_added, again.conversations_added, again.messages_added) == (0, 0, 0)
    assert len(target.bots()) == 1


def test_a_bot_name_clash_keeps_both_bots(tmp_path) -> None:
    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    target = Store(tmp_path / "target.sqlite3")
    target.create_bot(BotConfig("Coder", "openai", "gpt-5.5"))
    import_all(target, export_all(source, []))
    assert sorted(b.name for b in target.bots()) == ["Coder", "Coder (2)"]


def test_an_import_never_reads_a_key_from_the_file(tmp_path) -> None:
    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    document = json.loads(export_all(source, []))
    document["bots"][0]["k"] = "sk-injected-" + "i" * 40
    document["bots"][0]["base_url"] = "https://evil.example/v1"
    target = Store(tmp_path / "target.sqlite3")
    summary = import_all(target, json.dumps(document).encode())
    assert summary.dropped_fields == ("base_url", "k")
    assert target.bot_key(target.bot("Coder").id) is None


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"not json", "not JSON"),
        (b'{"format": "something-else"}', "not a byok-tui export"),
        (
            json.dumps(
                {
                    "format": "byok-tui-export",
                    "version": EXPORT_VERSION + 1,
                    "bots": [],
                    "conversations": [],
                }
            ).encode(),
            "newer",
        ),
        (
            json.dumps(
                {
                    "format": "byok-tui-export",
                    "version": 1,
                    "bots": [{"uuid": "b1", "name": "x", "provider": "nosuch", "model": "m"}],
                    "conversations": [],
                }
            ).encode(),
            "unknown provider",
        ),
    ],
)
def test_a_file_that_is_not_a_valid_export_changes_nothing(
    tmp_path, content: bytes, words: str
) -> None:
    target = Store(tmp_path / "target.sqlite3")
    target.create_bot(BotConfig("Existing", "openai", "gpt-5.5"))
    with pytest.raises((ExportFormatError, BotInputError)) as raised:
        import_all(target, content)
    assert words in str(raised.value)
    assert [b.name for b in target.bots()] == ["Existing"]


def test_a_bad_message_deep_in_the_file_changes_nothing(tmp_path) -> None:
    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    document = json.loads(export_all(source, []))
    document["conversations"][0]["messages"][1]["role"] = "system"
    target = Store(tmp_path / "target.sqlite3")
    with pytest.raises(ExportFormatError, match="role"):
        import_all(target, json.dumps(document).encode())
    assert target.bots() == []


def test_import_cli_reports_what_it_did(tmp_path) -> None:
    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    path = tmp_path / "export.json"
    path.write_bytes(export_all(source, []))
    result = run_cli("import", str(path))
    assert result.returncode == 0, result.stderr
    assert "Imported 1 bots, 1 conversations, 2 messages" in result.stdout
    broken = tmp_path / "broken.json"
    broken.write_text("{]")
    failed = run_cli("import", str(broken))
    assert failed.returncode == 2
    assert "not a byok-tui export" in failed.stderr


def test_what_each_reply_cost_survives_export_and_import_and_unknown_stays_unknown(
    tmp_path,
) -> None:
    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    bot = source.bot("Coder")
    conversation = source.conversations(bot.id)[0]
    priced, unpriced = (
        source.add_message(conversation.id, "assistant", "", status="partial") for _ in range(2)
    )
    source.save_reply(
        priced.id,
        content="a",
        reasoning="",
        status="complete",
        usage=Usage(900, 120, 40, cached_input_tokens=512),
        cost=Cost(0.0031, "genai-prices 0.2.3: $1/input MTok"),
    )
    source.save_reply(
        unpriced.id, content="b", reasoning="", status="complete", cost=Cost(None, "unknown")
    )
    target = Store(tmp_path / "target.sqlite3")
    import_all(target, export_all(source, []))
    got = target.messages(target.conversations(target.bot("Coder").id)[0].id)
    first, second = got[-2], got[-1]
    assert (first.cached_input_tokens, first.reasoning_tokens) == (512, 40)
    assert (first.cost_usd, first.price) == (0.0031, "genai-prices 0.2.3: $1/input MTok")
    assert (second.cost_usd, second.price) == (None, "unknown")  # never made $0


@pytest.mark.parametrize("cost", [-1, "0.5", float("inf"), 10_000_000, True])
def test_a_cost_that_is_not_a_cost_changes_nothing(tmp_path, cost: object) -> None:
    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    document = json.loads(export_all(source, []))
    document["conversations"][0]["messages"][1]["cost_usd"] = cost
    target = Store(tmp_path / "target.sqlite3")
    with pytest.raises(ExportFormatError, match="cost"):
        import_all(target, json.dumps(document).encode())
    assert target.bots() == []


def a_logged_request(store: Store, **changes: object) -> None:
    record = a_chat_request(
        started=1_790_000_000.0,
        provider="groq",
        host="api.groq.com",
        path="/openai/v1/chat/completions",
        key_last4=FAKE_KEYS["groq"][-4:],
        model="llama-3.3-70b-versatile",
    )
    store.ledger.record_request(replace(record, **changes), 0.0002)  # type: ignore[arg-type]


def test_the_request_log_and_budgets_survive_export_and_import_merged_by_uuid(tmp_path) -> None:
    from byok_tui.core.records import Budget

    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    a_logged_request(source)
    a_logged_request(source, purpose="models", status=401, outcome="auth", model=None)
    source.ledger.set_budget(Budget("groq", 0.5, "day"))
    exported = export_all(source, all_secrets())
    for secret in all_secrets():
        assert secret not in exported.decode()

    target = Store(tmp_path / "target.sqlite3")
    target.ledger.set_budget(Budget("groq", 2.0, "month"))  # the target's own is kept
    assert import_all(target, exported).requests_added == 2
    assert import_all(target, exported).requests_added == 0  # merged by uuid
    assert target.ledger.requests() == source.ledger.requests()
    assert target.ledger.budgets() == [Budget("groq", 2.0, "month")]
    fresh = Store(tmp_path / "fresh.sqlite3")
    import_all(fresh, exported)
    assert fresh.ledger.budgets() == [Budget("groq", 0.5, "day")]


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("status", 9000, "status"),
        ("key_last4", FAKE_KEYS["groq"], "key_last4"),
        ("duration_ms", -1, "duration"),
        ("cost_usd", float("inf"), "cost"),
        ("host", 7, "host"),
    ],
)
def test_a_request_row_that_byok_tui_would_not_record_changes_nothing(
    tmp_path, field: str, value: object, words: str
) -> None:
    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    a_logged_request(source)
    document = json.loads(export_all(source, []))
    document["requests"][0][field] = value
    target = Store(tmp_path / "target.sqlite3")
    with pytest.raises(ExportFormatError, match=words):
        import_all(target, json.dumps(document).encode())
    assert target.bots() == [] and target.ledger.requests() == []


def test_an_imported_request_is_cleaned_and_carries_no_key(tmp_path) -> None:
    source = Store(tmp_path / "source.sqlite3")
    fill(source)
    a_logged_request(source)
    document = json.loads(export_all(source, []))
    document["requests"][0]["path"] = f"/v1/x\x1b[2J?key={FAKE_KEYS['google']}"
    document["requests"][0]["host"] = "[bold]evil\nhost"
    target = Store(tmp_path / "target.sqlite3")
    import_all(target, json.dumps(document).encode())
    (row,) = target.ledger.requests()
    assert FAKE_KEYS["google"] not in row["path"] and "\x1b" not in row["path"]
    assert row["host"] == "[bold]evil host"  # one line; shown as text, never as markup
