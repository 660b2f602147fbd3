"""`byok-tui search`: one line per hit, or JSON with at least conversation_id, title, role and
snippet; a bot's conversations only with --bot."""

from __future__ import annotations

import json

from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig
from byok_tui.storage.store import Store
from tests.support.cli import run_cli


def two_bots_talking() -> tuple[int, int]:
    store = Store(app_paths().data_dir / "byok-tui.sqlite3")
    writer = store.create_bot(BotConfig("Writer", "openai", "gpt-5.5"))
    coder = store.create_bot(BotConfig("Coder", "anthropic", "claude-sonnet-4-6"))
    poems = store.create_conversation(writer.id, "Poems")
    store.add_message(poems.id, "user", "A poem about retry after a 429, please")
    code = store.create_conversation(coder.id, "Backoff in Python")
    store.add_message(code.id, "user", "How long should I wait?")
    store.add_message(code.id, "assistant", "Use the Retry-After header:\nretry after it says.")
    return poems.id, code.id


def test_each_hit_is_one_line_with_its_conversation_role_time_and_snippet() -> None:
    poems, code = two_bots_talking()
    result = run_cli("search", '"retry after"')
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"#{code} Backoff in Python · assistant · 20")
    assert lines[0].endswith("· Use the Retry-After header: retry after it says.")
    assert lines[1].startswith(f"#{poems} Poems · user · ")


def test_json_lists_the_hits_with_where_the_match_is() -> None:
    poems, _code = two_bots_talking()
    result = run_cli("search", "poem*", "--json")
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert [(h["conversation_id"], h["role"], h["title"], h["bot"]) for h in hits] == [
        (poems, "title", "Poems", "Writer"),
        (poems, "user", "Poems", "Writer"),
    ]
    message = hits[1]
    assert message["snippet"] == "A poem about retry after a 429, please"
    assert message["matches"] == [[2, 6]]
    assert isinstance(message["message_id"], int) and message["created"].startswith("20")


def test_bot_keeps_to_that_bots_conversations_and_an_unknown_bot_is_an_error() -> None:
    _poems, code = two_bots_talking()
    result = run_cli("search", "retry", "--bot", "Coder", "--json")
    assert {h["conversation_id"] for h in json.loads(result.stdout)} == {code}
    missing = run_cli("search", "retry", "--bot", "Nobody")
    assert missing.returncode == 2 and "Nobody" in missing.stderr
    assert "bot list" in missing.stderr


def test_nothing_found_says_so_and_exits_1() -> None:
    two_bots_talking()
    result = run_cli("search", "kumquat")
    assert (result.returncode, result.stdout) == (1, "")
    assert "nothing found" in result.stderr
    assert json.loads(run_cli("search", "kumquat", "--json").stdout) == []


def test_help_says_how_words_prefixes_and_phrases_match() -> None:
    said = run_cli("search", "--help").stdout
    assert "word* is a prefix" in said and '"two words" is a phrase' in said
