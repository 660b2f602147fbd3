"""The bot's settings pane on the chat screen: saves what is edited there (the bot's
configuration, the provider's key, the bot's own key and where it comes from) through the
data service, and tells the screen what changed. A new provider is the screen's to save
(`ProviderChosen`): the sidebar chooses one too, and either may ask about the bot's own key.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from textual import work
from textual.message import Message

from byok_tui.app_services.app_data import AppData
from byok_tui.core.records import Bot, BotConfig
from byok_tui.core.redaction import REDACTED
from byok_tui.core.registry import get_provider
from byok_tui.screens.dialogs import TextDialog
from byok_tui.widgets.config_pane import ConfigPane
from byok_tui.widgets.tool_choice import ToolChoice


class BotSettingsPane(ConfigPane):
    @dataclass
    class BotSaved(Message):
        """The bot's configuration was saved (its provider unchanged)."""

        bot_id: int
        config: BotConfig

    @dataclass
    class ProviderChosen(Message):
        """Another provider was chosen for the bot (`config`: with its default model)."""

        config: BotConfig

    class KeysChanged(Message):
        """A key was saved or removed: the key the next message uses may have changed."""

    def __init__(self, data: AppData, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data = data

    def on_config_pane_config_edited(self, message: ConfigPane.ConfigEdited) -> None:
        message.stop()
        bot, config = self.bot, message.config
        if bot is None or config == bot.config:
            return
        if config.provider != bot.config.provider:
            default_model = get_provider(config.provider).default_model
            self.post_message(self.ProviderChosen(replace(config, model=default_model)))
            return
        self.data.save_bot_config(bot.id, config)
        self.saved(replace(bot, config=config))
        self.post_message(self.BotSaved(bot.id, config))

    def on_tool_choice_edited(self, message: ToolChoice.Edited) -> None:
        message.stop()
        if self.bot is not None:
            self.data.set_bot_tools(self.bot.id, message.chosen)

    def on_tool_choice_list_wanted(self, message: ToolChoice.ListWanted) -> None:
        message.stop()
        self._list_tools(message.servers)

    @work(exclusive=True, group="list-tools")
    async def _list_tools(self, servers: tuple[str, ...]) -> None:
        """Every server's tools, listed now (the user asked: it starts the servers)."""
        listed = await self.data.list_server_tools(servers)
        self.query_one(ToolChoice).show_listed(listed)

    def on_config_pane_model_id_wanted(self, message: ConfigPane.ModelIdWanted) -> None:
        message.stop()
        self.app.push_screen(
            TextDialog("Model id, as the provider names it", ""), self.model_id_typed
        )

    def on_config_pane_global_key_edited(self, message: ConfigPane.GlobalKeyEdited) -> None:
        message.stop()
        if not get_provider(message.provider_id).needs_key:
            return  # a local runtime has no key entry
        self.data.keys.save_provider_key(message.provider_id, message.value)  # empty removes it
        self.post_message(self.KeysChanged())

    def on_config_pane_bot_key_edited(self, message: ConfigPane.BotKeyEdited) -> None:
        message.stop()
        if (bot := self._keyed_bot()) is None:
            return
        self.data.keys.save_bot_key(bot.id, message.value)
        self.post_message(self.KeysChanged())

    def on_config_pane_bot_key_choice_edited(self, message: ConfigPane.BotKeyChoiceEdited) -> None:
        message.stop()
        if (bot := self._keyed_bot()) is None:
            return
        if message.command and REDACTED in message.command:
            self.notify("Not saved: the command holds a key ([REDACTED]).", severity="error")
            return
        self.data.keys.save_bot_key_choice(bot.id, command=message.command, label=message.label)
        self.notify(
            "Saved: the next message uses it." if message.command or message.label else "Removed."
        )
        self.post_message(self.KeysChanged())

    def _keyed_bot(self) -> Bot | None:
        """The bot shown, when its provider takes a key (a local runtime takes none)."""
        bot = self.bot
        return bot if bot is not None and get_provider(bot.config.provider).needs_key else None
