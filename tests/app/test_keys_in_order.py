"""Keys read from the terminal together act in the order they were typed: a field's own
editing keys (ctrl+u, backspace) act on what was typed before them, never on what follows
(compat.editing_keys_keep_their_order). The keys are posted to the app in one burst, none
handled before the next arrives, as a fast typist or a loaded machine delivers them."""

from __future__ import annotations

from textual import events
from textual.pilot import Pilot
from textual.widgets import Input

from byok_tui.app import ByokApp
from byok_tui.screens.dialogs import TextDialog
from byok_tui.widgets.composer import Composer
from tests.compare.test_ask_compare import by_model
from tests.compare.test_compare_in_the_app import TARGETS, app_on
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, chat, make_app, settle, wait_for
from tests.support.provider_server import provider_server


async def typed_at_once(pilot: Pilot[None], app: ByokApp, keys: list[str]) -> None:
    for name in keys:
        app.post_message(events.Key(name, name if len(name) == 1 else None))
    await pilot.pause()


async def test_ctrl_u_then_the_targets_typed_at_once_leave_the_targets_in_the_dialog() -> None:
    """The compare dialog proposes a target; ctrl+u and the three targets, read in one
    burst, leave the three (ctrl+u acting after them left the field empty, and its Enter
    then compared nothing)."""
    with provider_server(by_model) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            chat(app).query_one(Composer).text = "2+2?"
            await pilot.press("f5")
            await wait_for(pilot, lambda: isinstance(app.screen, TextDialog), timeout=15)
            await pilot.pause()  # the field has the focus
            field = app.screen.query_one(Input)
            assert field.value, "the dialog proposes a target"
            await typed_at_once(pilot, app, ["ctrl+u", *TARGETS])
            assert field.value == TARGETS


async def test_a_backspace_between_characters_typed_at_once_removes_the_one_before_it() -> None:
    """`b a backspace c` in the chat composer, read together, leaves `bc` (the backspace
    acting last left `ba`)."""
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer = chat(app).query_one(Composer)
        assert composer.has_focus
        await typed_at_once(pilot, app, ["b", "a", "backspace", "c"])
        assert composer.text == "bc"
