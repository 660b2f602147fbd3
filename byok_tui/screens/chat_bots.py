"""The chat screen's bot actions: create, delete, rename, and change a bot's provider.

Storage is reached only through the data service, in workers; what they find comes back as
messages (BotCreated, BotDeleted) that the screen hands back here, on the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from byok_tui.core.errors import ByokError
from byok_tui.core.records import BotConfig
from byok_tui.core.registry import get_provider
from byok_tui.screens.chat_messages import BotCreated, BotDeleted
from byok_tui.screens.dialogs import ConfirmDialog, TextDialog
from byok_tui.widgets.sidebar import Sidebar

if TYPE_CHECKING:
    from byok_tui.screens.chat_host import ChatHost


class BotActions:
    def __init__(self, screen: ChatHost) -> None:
        self._screen = screen

    def new(self) -> None:
        """Ask for a name; the new bot starts from this bot's provider and model."""
        screen = self._screen

        def named(name: str | None) -> None:
            if name and screen.state is not None:
                config = screen.state.bot.config
                self._run(self._create, BotConfig(name, config.provider, config.model))

        taken = {bot.name for bot in screen.state.bots} if screen.state is not None else set()

        def free(name: str) -> str | None:
            return (
                f"A bot named {name!r} exists already: choose another name."
                if (name in taken)
                else None
            )

        screen.app.push_screen(TextDialog("Name of the new bot", "", check=free), named)

    def _create(self, config: BotConfig) -> None:
        screen = self._screen
        try:
            bot = screen.data.create_bot(config)
        except ByokError as error:
            screen.app.call_from_thread(screen.notify, error.one_line(), severity="error")
            return
        screen.post_message(BotCreated(bot.id))

    def created(self, bot_id: int) -> None:
        """Open the new bot, with its editor shown at the name."""
        screen = self._screen
        screen.show_chat(bot_id, None)
        screen.show_config_pane(focus="#bot-name")

    def delete(self, bot_id: int | None = None) -> None:
        """Ask, then delete the bot `bot_id` (None: the one on screen) and its conversations."""
        screen = self._screen
        if screen.state is None:
            return
        bot = next((b for b in screen.state.bots if b.id == bot_id), screen.state.bot)
        if screen.column.busy and bot.id == screen.state.bot.id:
            screen.notify("A reply is on its way: stop it (Escape) before deleting its bot.")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._run(self._delete, bot.id, bot.name)

        question = f"Delete the bot “{bot.name}” and all its conversations?"
        screen.app.push_screen(ConfirmDialog(question), confirmed)

    def _delete(self, bot_id: int, name: str) -> None:
        screen = self._screen
        try:
            screen.data.delete_bot(bot_id)
        except ByokError as error:
            screen.app.call_from_thread(screen.notify, error.one_line(), severity="error")
            return
        screen.post_message(BotDeleted(bot_id, name))

    def deleted(self, bot_id: int, name: str) -> None:
        screen = self._screen
        screen.notify(f"Deleted the bot “{name}” and its conversations.")
        if screen.state is not None and screen.state.bot.id == bot_id:
            screen.show_chat(None, None)  # the bot last used, else the default bot
        else:
            screen.read_again()

    def save_config(self, config: BotConfig) -> None:
        """Save the bot's new settings (from the sidebar or the config pane) and show them."""
        screen = self._screen
        if screen.state is None:
            return
        before = screen.state.bot
        if config.provider != before.config.provider and before.has_key:
            self._ask_about_kept_key(before.id, before.config.provider, config.provider)
        screen.data.save_bot_config(before.id, config)
        screen.read_again()

    def saved(self, bot_id: int, config: BotConfig) -> None:
        """The config pane saved the bot's settings: a new name shows at once."""
        screen, state = self._screen, self._screen.state
        if state is None or state.bot.id != bot_id:
            return
        renamed = config.name != state.bot.config.name
        state.bot = replace(state.bot, config=config)  # what is saved now
        screen.column.draft_goes_elsewhere()  # another model or system prompt costs otherwise
        if renamed:
            state.bots = [state.bot if b.id == bot_id else b for b in state.bots]
            screen.query_one(Sidebar).show_bots(state.bots, bot_id)
            screen.show_title()

    def _ask_about_kept_key(self, bot_id: int, was: str, now: str) -> None:
        """The bot's own key stays with the provider it was set under (the store never gives
        it for another): remove it, or keep it for when the bot goes back."""
        screen = self._screen
        was_name, now_name = get_provider(was).display_name, get_provider(now).display_name

        def answered(remove: bool | None) -> None:
            if remove:
                screen.data.keys.save_bot_key(bot_id, None)
                screen.read_again()

        question = (
            f"This bot's own key is for {was_name}: it is never sent to {now_name}. Remove "
            f"it, or keep it for when the bot uses {was_name} again?"
        )
        dialog = ConfirmDialog(question, yes="Remove it", no=f"Keep it for {was_name}")
        screen.app.push_screen(dialog, answered)

    def _run(self, work: Callable[..., None], *args: object) -> None:
        self._screen.run_worker(partial(work, *args), thread=True, group="bots")
