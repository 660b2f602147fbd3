"""A budget stops a send before any request leaves: `ask` exits 9 and the app offers a one-off
"send anyway"; at 80 % the user is told; spend is counted from the priced replies."""

from __future__ import annotations

import time
from datetime import datetime

import pytest
from textual.widgets import Static

from byok_tui.app_services.services import open_services, open_store
from byok_tui.chat.outgoing import Outgoing
from byok_tui.core.money import format_usd
from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig, Budget, Cost
from byok_tui.keys import entry_name, open_key_store
from byok_tui.screens.dialogs import ConfirmDialog
from byok_tui.screens.settings import SettingsScreen
from byok_tui.spend.budgets import period_start, standings
from byok_tui.storage.store import Store
from tests.support.cli import run_cli
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    error_texts,
    make_app,
    replies,
    send,
    settle,
    wait_for,
)
from tests.support.provider_server import ProviderServer, openai_reply

KEY = "sk-proj-" + "B" * 60


def spent(store: Store, provider: str, usd: float | None, when: float | None = None) -> None:
    """A reply of `provider` that cost `usd`, as byok-tui would have stored it."""
    bot = store.default_bot(provider, "gpt-5.5")
    conversation = store.create_conversation(bot.id, "earlier")
    reply = store.add_message(conversation.id, "assistant", "", provider=provider)
    store.save_reply(
        reply.id, content="x", reasoning="", status="complete", cost=Cost(usd, "test price")
    )
    if when is not None:
        with store.transaction() as db:
            db.execute("UPDATE messages SET created = ? WHERE id = ?", (when, reply.id))


@pytest.fixture
def db() -> Store:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    return open_store(open_services())


def test_a_period_starts_at_local_midnight_and_on_the_first_of_the_month() -> None:
    now = datetime(2026, 11, 23, 15, 30).timestamp()
    assert datetime.fromtimestamp(period_start("day", now)) == datetime(2026, 11, 23)
    assert datetime.fromtimestamp(period_start("month", now)) == datetime(2026, 11, 1)


def test_spend_counts_this_periods_priced_replies_only(db: Store) -> None:
    spent(db, "openai", 1.25)
    spent(db, "openai", 0.005)  # sub-cent amounts add up exactly enough
    spent(db, "openai", None)  # price unknown: counts for nothing, never a guess
    spent(db, "groq", 2.0)
    spent(db, "openai", 100.0, when=period_start("month") - 60)  # last month
    db.ledger.set_budget(Budget("openai", 5.0, "month"))
    db.ledger.set_budget(Budget("all", 3.0, "month"))
    (all_providers, openai) = standings(db, "openai")
    assert openai.spent == pytest.approx(1.255)
    assert all_providers.spent == pytest.approx(3.255) and all_providers.reached
    assert all_providers.describe() == "$3.25 of $3.00 this month for all providers"
    assert [s.budget.scope for s in standings(db, "mistral")] == ["all"]


def ask(server: ProviderServer, *extra: str) -> tuple[int, str]:
    done = run_cli(
        "ask",
        "-p",
        "openai",
        *extra,
        "hello",
        env={"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"},
    )
    return done.returncode, done.stderr


def test_ask_sends_nothing_and_exits_9_once_a_budget_is_reached(
    db: Store, server: ProviderServer
) -> None:
    spent(db, "openai", 5.0)
    assert run_cli("budget", "set", "openai", "5", "--per", "month").returncode == 0
    status, said = ask(server)
    assert status == 9
    assert "Budget reached: $5.00 of $5.00 this month for openai" in said
    assert server.requests == []

    server.reply_with(openai_reply("over it"))
    status, said = ask(server, "--over-budget")
    assert status == 0 and len(server.requests) == 1
    assert "budget: $5.00 of $5.00 this month for openai" in said


def test_ask_warns_at_80_percent_and_still_sends(db: Store, server: ProviderServer) -> None:
    spent(db, "openai", 0.85)
    run_cli("budget", "set", "all", "1", "--per", "day")
    server.reply_with(openai_reply("fine"))
    status, said = ask(server)
    assert status == 0 and len(server.requests) == 1
    assert "budget: $0.850 of $1.00 today for all providers" in said


def test_budget_commands_set_list_and_remove(db: Store) -> None:
    assert run_cli("budget", "list").stdout.startswith("No budgets.")
    run_cli("budget", "set", "openai", "0.005", "--per", "day")
    listed = run_cli("budget", "list").stdout
    assert "openai" in listed and "$0.005 today for openai" in listed
    assert db.ledger.budgets() == [Budget("openai", 0.005, "day")]
    assert run_cli("budget", "rm", "openai").returncode == 0
    assert run_cli("budget", "rm", "openai").returncode == 2
    assert run_cli("budget", "set", "nosuch", "1", "--per", "day").returncode == 2
    assert run_cli("budget", "set", "openai", "-1", "--per", "day").returncode == 2
    assert db.ledger.budgets() == []


async def test_the_app_refuses_a_send_over_budget_then_sends_it_once_if_asked(
    db: Store, server: ProviderServer
) -> None:
    spent(db, "openai", 2.0, when=time.time())
    db.ledger.set_budget(Budget("openai", 2.0, "day"))
    server.reply_with(openai_reply("sent anyway"))
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "one more please")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert server.requests == [], "refused before any request"
        assert any("Budget reached: $2.00 of $2.00 today for openai" in e for e in error_texts(app))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: replies(app)[-1:] == ["sent anyway"])
    assert len(server.requests) == 1
    assert server.requests[0].json["messages"][-1]["content"] == "one more please"


async def test_the_config_pane_shows_todays_and_this_months_spend_and_warns_near_a_budget(
    db: Store, server: ProviderServer
) -> None:
    spent(db, "openai", 0.5, when=time.time())
    earlier = max(period_start("month"), time.time() - 86_400 * 2)  # today on the 1st
    spent(db, "openai", 3.5, when=earlier)
    today = format_usd(0.5 + (3.5 if earlier >= period_start("day") else 0.0))
    db.ledger.set_budget(Budget("openai", 5.0, "month"))
    server.reply_with(openai_reply("ok", usage={"prompt_tokens": 200_000, "completion_tokens": 2}))
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: bool(app.screen.query("#spend")))

        def shown() -> str:
            return str(app.screen.query_one("#spend", Static).render())

        await wait_for(pilot, lambda: "Spent on OpenAI" in shown())
        lines = shown().splitlines()
        assert lines[0].startswith(f"Spent on OpenAI: {today} today · $4.00 this month")
        assert lines[1] == "⚠ Budget: $4.00 of $5.00 this month for openai"
        assert app.screen.query_one("#spend").has_class("near")
        await send(pilot, "a priced one")
        await wait_for(pilot, lambda: f"{today} today" not in shown())  # re-read after the reply
        assert "⛔ Budget reached: $5.00 of $5.00 this month for openai" in shown().splitlines()


async def test_settings_shows_each_providers_spend_by_key_and_its_budgets(db: Store) -> None:
    spent(db, "openai", 0.25, when=time.time())
    bot = db.default_bot("openai", "gpt-5.5")
    conversation = db.create_conversation(bot.id, "per-bot")
    reply = db.add_message(
        conversation.id, "assistant", "", provider="openai", key_source="per-bot"
    )
    db.save_reply(reply.id, content="y", reasoning="", status="complete", cost=Cost(0.5, "p"))
    with db.transaction() as sql:  # the first reply's key source
        sql.execute("UPDATE messages SET key_source = 'global' WHERE key_source IS NULL")
    db.ledger.set_budget(Budget("all", 0.9, "day"))
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 60)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))

        def shown(provider: str) -> list[str]:
            row = app.screen.query_one(f"#row-{provider} .spend", Static)
            return str(row.render()).splitlines()

        await wait_for(pilot, lambda: bool(shown("openai")))
        assert shown("openai") == [
            "Spent on OpenAI: $0.750 today · $0.750 this month",
            "This month by key: global $0.250 · per-bot $0.500",
            "⚠ Budget: $0.750 of $0.900 today for all providers",
        ]
        assert shown("groq")[0] == "Spent on Groq: $0 today · $0 this month"


async def test_the_local_runtime_is_never_blocked_by_a_budget(db: Store) -> None:
    from byok_tui.chat.conversation import ConversationService
    from tests.support.fake_backend import FakeProviders

    spent(db, "openai", 9.0, when=time.time())
    db.ledger.set_budget(Budget("all", 1.0, "day"))
    fake = FakeProviders()
    fake.enqueue("local and free")
    service = ConversationService(db, fake(open_services()))
    bot = db.create_bot(BotConfig("Local", "ollama", "llama3.2"))
    conversation = db.create_conversation(bot.id, "local")
    events = [event async for event in service.send(bot, conversation, Outgoing("hi"))]
    assert len(fake.requests) == 1 and fake.requests[0].provider_id == "ollama"
    assert events, "it answered"


def test_ask_refused_by_a_budget_names_over_budget_not_the_apps_button() -> None:
    from byok_tui.core.paths import app_paths
    from byok_tui.keys import entry_name, open_key_store
    from tests.support.cli import run_cli

    open_key_store(app_paths()).set(entry_name("openai"), "sk-proj-" + "B" * 60)
    assert run_cli("budget", "set", "openai", "0", "--per", "day").returncode == 0
    asked = run_cli("ask", "-p", "openai", "hi")
    assert asked.returncode == 9
    assert "--over-budget" in asked.stderr and "Send anyway" not in asked.stderr


def test_budget_set_says_when_it_replaces_one_and_refuses_the_local_runtime() -> None:
    from tests.support.cli import run_cli

    assert run_cli("budget", "set", "openai", "0.5", "--per", "day").returncode == 0
    replaced = run_cli("budget", "set", "openai", "3", "--per", "month")
    assert replaced.returncode == 0
    assert "Budget replaced" in replaced.stdout and "today" in replaced.stdout
    assert "this month for openai" in replaced.stdout
    local = run_cli("budget", "set", "ollama", "1", "--per", "day")
    assert local.returncode == 2 and "never blocked" in local.stderr


async def test_each_budget_is_marked_on_its_own_in_the_providers_lines(db: Store) -> None:
    """A $5 monthly budget for all, hardly used, beside a $0 daily one for openai, reached:
    only the second is marked, and it says reached."""
    from byok_tui.app_services.chat_state import read_spend
    from byok_tui.app_services.services import AppContext, open_services
    from byok_tui.spend.pricing import spend_lines

    spent(db, "openai", 0.00005, when=time.time())
    db.ledger.set_budget(Budget("all", 5.0, "month"))
    db.ledger.set_budget(Budget("openai", 0.0, "day"))
    context = AppContext.open(open_services())
    lines = spend_lines(read_spend(context, "openai"), "OpenAI")
    (for_all,) = [line for line in lines if "all providers" in line]
    (own,) = [line for line in lines if "for openai" in line]
    assert for_all.startswith("Budget: ") and "⚠" not in for_all, lines
    assert own.startswith("⛔ Budget reached: "), lines
