"""Choosing a bot's tools one by one in the config pane: the servers are listed only when the
user asks ("List tools"), each server's tools then shown under it; a server ticked is all
its tools, a tool unticked from it leaves the others, every tool ticked one by one is the
server again. A server that cannot be listed says why under the list."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from textual.widgets import Button, SelectionList, Static

from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.storage.store import Store
from byok_tui.widgets.tool_choice import toggled
from tests.support.cli import run_cli
from tests.support.pilot import chat, make_app, settle, wait_for
from tests.tools.test_tools_in_the_app import KEY, REPO, SERVER

TOOLS = ("weather", "today", "slow")
entries = st.sampled_from(["test", *(f"test:{t}" for t in TOOLS), "other", "other:x"])


@given(st.lists(st.tuples(entries, st.booleans()), max_size=12))
def test_a_choice_never_holds_a_server_with_its_own_tools_or_one_twice(
    steps: list[tuple[str, bool]],
) -> None:
    chosen: tuple[str, ...] = ()
    for entry, on in steps:
        chosen = toggled(chosen, TOOLS if entry.startswith("test") else ("x",), entry, on)
        assert len(chosen) == len(set(chosen)), chosen
        for server in ("test", "other"):
            assert not (server in chosen and any(e.startswith(f"{server}:") for e in chosen))


def test_unticking_a_tool_of_a_whole_server_keeps_the_others_and_ticking_it_back_is_whole() -> None:
    less = toggled(("test",), TOOLS, "test:today", on=False)
    assert less == ("test:weather", "test:slow")
    assert toggled(less, TOOLS, "test:today", on=True) == ("test",)
    assert toggled(("other", "test:today"), TOOLS, "test", on=False) == ("other",)


def store() -> Store:
    return Store(app_paths().data_dir / "byok-tui.sqlite3")


def options(app: object) -> list[tuple[str, str, bool]]:
    listed = chat(app).query_one("#bot-tools", SelectionList)  # type: ignore[arg-type]
    found = []
    for index in range(listed.option_count):
        option = listed.get_option_at_index(index)
        found.append((str(option.prompt), str(option.value), option.value in listed.selected))
    return found


async def test_list_tools_shows_each_tool_to_choose_one_by_one() -> None:
    open_key_store(app_paths()).set(entry_name("groq"), KEY)
    assert run_cli("mcp", "add", "test", "--cwd", str(REPO), "--", *SERVER).returncode == 0
    assert run_cli("mcp", "add", "gone", "--", "/nonexistent/server").returncode == 0
    assert run_cli("bot", "tools", "Default", "test").returncode == 0
    app = make_app()
    async with app.run_test(size=(160, 60)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: chat(app).config_pane is not None)
        assert options(app) == [("test", "test", True), ("gone", "gone", False)]
        button = chat(app).query_one("#list-tools", Button)
        button.press()
        await wait_for(pilot, lambda: len(options(app)) > 2, timeout=30)
        shown = options(app)
        assert ("  └ weather", "test:weather", True) in shown  # the whole server: all ticked
        note = str(chat(app).query_one("#bot-tools-note", Static).render())
        assert note.startswith("gone: MCP server gone"), note
        listed = chat(app).query_one("#bot-tools", SelectionList)
        listed.toggle("test:weather")  # all of test but weather
        await wait_for(pilot, lambda: "test" not in store().bot_tools(store().bot("Default").id))
        chosen = store().bot_tools(store().bot("Default").id)
        assert "test:weather" not in chosen and "test:today" in chosen, chosen
        assert ("test", "test", True) in options(app)  # partly chosen: still ticked
        listed.toggle("test:weather")  # every tool again: the server
        await wait_for(pilot, lambda: store().bot_tools(store().bot("Default").id) == ("test",))
