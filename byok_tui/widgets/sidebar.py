"""The left sidebar: providers with their key state, bots, and the bot's conversations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Button, Label, OptionList
from textual.widgets.option_list import Option, OptionDoesNotExist

from byok_tui.core.bindings import SIDEBAR_KEYS, textual_bindings
from byok_tui.core.records import KeyOverview
from byok_tui.widgets.provider_rows import provider_label

if TYPE_CHECKING:  # the first frame draws the sidebar before the database module is loaded
    from byok_tui.core.records import Bot, Conversation


class Sidebar(VerticalScroll):
    # A conversation a row, its title cut with an ellipsis: measuring a row left unwrapped is
    # about half the cost of a wrapped one. The list takes the rows the sidebar has left and
    # scrolls within them, so that Search and Settings stay in view; the sidebar scrolls only
    # on a terminal too short for it all. A list as tall as the sidebar made the sidebar
    # scroll too (two scrollbars), and its scrollbar coming made the opening of a bot with
    # 10,000 conversations lay the sidebar out again: 1.17-1.23x the opening of one with
    # 10, against 1.10x now (15 alternated rounds, twice).
    DEFAULT_CSS = """
    Sidebar { width: 30; border-right: vkey $foreground 20%; }
    Sidebar > Label { margin: 1 0 0 1; color: $text-muted; text-style: bold; }
    Sidebar > OptionList { height: auto; max-height: 12; }
    Sidebar > #conversations {
        height: 1fr; min-height: 5; max-height: 100%; text-wrap: nowrap; text-overflow: ellipsis;
    }
    Sidebar > Button { width: 100%; margin-top: 1; }
    Sidebar > #new-bot { margin-top: 0; }
    """
    BINDINGS = textual_bindings(SIDEBAR_KEYS)

    @dataclass
    class ProviderChosen(Message):
        provider_id: str

    @dataclass
    class BotChosen(Message):
        bot_id: int

    @dataclass
    class ConversationChosen(Message):
        conversation_id: int

    @dataclass
    class OlderConversationsWanted(Message):
        """Show older conversations was chosen: those after `last` are wanted."""

        last: Conversation

    @dataclass
    class DeleteWanted(Message):
        """Delete was pressed on a bot or a conversation: the screen asks, then deletes."""

        kind: str  # "bot" or "conv"
        item_id: int

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._conversations: list[Conversation] = []  # the newest of the bot's, newest first
        self._older = 0  # how many more the bot has
        self._asked_for_older = False  # the next page is being read

    def compose(self) -> ComposeResult:
        # Compact: no border, focused or not. A border drawn on focus would move every row
        # down a line between the press that focuses a list and the release that picks a
        # row, and the row above the one clicked would be picked.
        yield Label("Providers")
        yield OptionList(id="providers", compact=True)
        yield Label("Bots")
        yield OptionList(id="bots", compact=True)
        yield Button("+ New bot", id="new-bot", compact=True)
        yield Label("Conversations")
        yield OptionList(id="conversations", compact=True)
        yield Button("⌕ Search  ctrl+f", id="open-search", compact=True)
        yield Button("⚙ Settings", id="open-settings", compact=True)

    def show_providers(
        self,
        overview: KeyOverview,
        current: str,
        local_running: Mapping[str, bool],
        limits: Mapping[str, str] | None = None,
    ) -> None:
        """`local_running`: per local runtime probed, whether it answered; `limits`: per
        provider, what its rate limits say when it matters."""
        notes = limits or {}
        options = [
            Option(
                provider_label(
                    status,
                    current,
                    local_running.get(status.provider_id),
                    notes.get(status.provider_id, ""),
                ),
                id=f"provider:{status.provider_id}",
            )
            for status in overview.statuses
        ]
        self._replace("#providers", options, f"provider:{current}")

    def show_bots(self, bots: list[Bot], current: int) -> None:
        options = [
            Option(
                Text.assemble(bot.name, ("  own key" if bot.has_key else "", "dim")),
                id=f"bot:{bot.id}",
            )
            for bot in bots
        ]
        self._replace("#bots", options, f"bot:{current}")

    def show_conversations(
        self, conversations: list[Conversation], current: int | None, older: int
    ) -> None:
        """The newest conversations (as far back as `current`), and an option that asks for
        the `older` ones, a page at a time (the screen reads them)."""
        self._conversations = list(conversations)
        self._older = older
        self._asked_for_older = False  # a page asked for another bot's list is not wanted
        self._fill_conversations(f"conv:{current}" if current else None)

    def add_older(self, conversations: list[Conversation], older: int) -> None:
        """The next page of older conversations, read (`older`: how many the bot has after
        them): listed, the first of them highlighted."""
        self._asked_for_older = False
        if not conversations:
            return
        self._conversations += conversations
        self._older = older
        self._fill_conversations(f"conv:{conversations[0].id}")

    def _fill_conversations(self, highlight: str | None) -> None:
        options = [
            Option(Text(c.title or "Untitled"), id=f"conv:{c.id}") for c in self._conversations
        ]
        if not options:
            options = [Option(Text("(none yet)", style="dim"), id="conv:none", disabled=True)]
        if self._older > 0:
            # On two rows: the list's rows are cut to its width, and the count must show.
            label = Text(f"Show older conversations\n({self._older:,} more)", style="dim italic")
            options.append(Option(label, id="conv:older"))
        self._replace("#conversations", options, highlight)

    def _replace(self, selector: str, options: list[Option], highlight: str | None) -> None:
        option_list = self.query_one(selector, OptionList)
        option_list.clear_options()
        option_list.add_options(options)
        if highlight is not None:
            try:
                option_list.highlighted = option_list.get_option_index(highlight)
            except OptionDoesNotExist:
                option_list.highlighted = None

    def action_delete_highlighted(self) -> None:
        focused = self.screen.focused
        if not isinstance(focused, OptionList) or focused.highlighted is None:
            return
        kind, _, value = (focused.get_option_at_index(focused.highlighted).id or "").partition(":")
        if kind in ("bot", "conv") and value.isdigit():
            self.post_message(self.DeleteWanted(kind, int(value)))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        kind, _, value = (event.option.id or "").partition(":")
        if kind == "provider":
            self.post_message(self.ProviderChosen(value))
        elif kind == "bot":
            self.post_message(self.BotChosen(int(value)))
        elif kind == "conv" and value == "older":
            if self._conversations and not self._asked_for_older:
                self._asked_for_older = True  # one page at a time, however often pressed
                self.post_message(self.OlderConversationsWanted(self._conversations[-1]))
        elif kind == "conv" and value != "none":
            self.post_message(self.ConversationChosen(int(value)))
