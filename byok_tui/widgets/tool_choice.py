"""Where a bot's tools are chosen: the MCP servers configured, each ticked when the bot may
use it, and, once the user asks for them ("List tools", which starts or contacts every
server), each server's tools under it, to choose one by one. A server ticked is all its
tools (those it adds later too); tools ticked one by one are those only. Never lists a
server by itself: listing is the user's action, done by whoever handles `ListWanted`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Button, Label, SelectionList, Static
from textual.widgets.selection_list import Selection

# A server's tools as listed: their names, or why they could not be listed.
Listed = Mapping[str, "tuple[str, ...] | str"]


def server_of(entry: str) -> str:
    return entry.partition(":")[0]


def toggled(
    chosen: tuple[str, ...], tools: tuple[str, ...], entry: str, on: bool
) -> tuple[str, ...]:
    """The bot's choice once `entry` (a server, or `server:tool`) was ticked (`on`) or
    not; `tools`: the server's tools as listed (none: not listed). Every tool of a server
    ticked one by one is the server; a tool unticked from a whole server leaves the others."""
    server, _, tool = entry.partition(":")
    others = tuple(e for e in chosen if server_of(e) != server)
    own = [e for e in chosen if server_of(e) == server]
    if not tool:
        return (*others, server) if on else others
    if server in own:  # the whole server: all its tools but this one
        own = [f"{server}:{name}" for name in tools]
    own = [e for e in own if e != entry] + ([entry] if on else [])
    if tools and {f"{server}:{name}" for name in tools} <= set(own):
        own = [server]
    return (*others, *own)


class ToolChoice(Vertical):
    DEFAULT_CSS = """
    ToolChoice { height: auto; }
    ToolChoice > Label { margin-top: 1; color: $text-muted; width: 100%; }
    ToolChoice > SelectionList { height: auto; max-height: 12; }
    ToolChoice > #list-tools { margin-top: 1; min-width: 14; }
    ToolChoice > #bot-tools-note { color: $text-muted; }
    """

    @dataclass
    class Edited(Message):
        """The bot's tools as now chosen: servers (all their tools) and `server:tool`."""

        chosen: tuple[str, ...]

    @dataclass
    class ListWanted(Message):
        """The user asked for these servers' tools (listing starts them)."""

        servers: tuple[str, ...]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._servers: tuple[str, ...] = ()
        self._chosen: tuple[str, ...] = ()
        self._listed: dict[str, tuple[str, ...] | str] = {}
        self._note = ""

    def compose(self) -> ComposeResult:
        yield Label("Tools: the MCP servers this bot may use (each call asks first)")
        yield SelectionList[str](id="bot-tools")
        yield Button("List tools", id="list-tools", compact=True, tooltip="Starts each server")
        yield Static(id="bot-tools-note")

    @property
    def chosen(self) -> tuple[str, ...]:
        return self._chosen

    def show(self, servers: tuple[str, ...], chosen: tuple[str, ...], note: str = "") -> None:
        """The servers configured, the bot's choice ticked; `note`: said under them (a model
        that takes no tools, none configured, a config file that cannot be read). Tools
        listed before stay shown while their server is configured."""
        self._servers, self._chosen, self._note = servers, chosen, note
        self._listed = {name: tools for name, tools in self._listed.items() if name in servers}
        self._fill()

    def show_listed(self, listed: Listed) -> None:
        """Each server's tools, as listed now (or why not)."""
        self._listed.update(listed)
        self._fill()

    def listing(self) -> None:
        """Say that the servers are being listed, until `show_listed`."""
        count = len(self._servers)
        self._say(f"Listing the tools of {count} server{'s' if count != 1 else ''}…")

    def _fill(self) -> None:
        options = self.query_one("#bot-tools", SelectionList)
        highlighted = options.highlighted
        problems: list[str] = []
        with self.prevent(SelectionList.SelectedChanged, SelectionList.SelectionToggled):
            options.clear_options()
            for name in self._servers:
                own = [e for e in self._chosen if server_of(e) == name]
                tools = self._listed.get(name)
                partly = [e.partition(":")[2] for e in own if e != name]
                label = name
                if partly and name not in own and not isinstance(tools, tuple):
                    label = f"{name} ({', '.join(partly)} only)"
                options.add_option(Selection(Text(label), name, bool(own)))
                if isinstance(tools, str):
                    problems.append(f"{name}: {tools}")
                    continue
                for tool in tools or ():
                    entry = f"{name}:{tool}"
                    options.add_option(Selection(Text(f"  └ {tool}"), entry, self._ticked(entry)))
        if highlighted is not None and options.option_count:
            options.highlighted = min(highlighted, options.option_count - 1)
        self.query_one("#list-tools", Button).display = bool(self._servers)
        note = self._note
        if not self._servers and not note:
            note = "None configured: add one with `byok-tui mcp add NAME -- COMMAND`."
        self._say("\n".join([note, *problems]).strip())

    def _say(self, text: str) -> None:
        self.query_one("#bot-tools-note", Static).update(Text(text))

    def on_selection_list_selection_toggled(
        self, event: SelectionList.SelectionToggled[str]
    ) -> None:
        event.stop()
        entry = event.selection.value
        # A toggle flips what the choice says, not what the list shows when it is handled:
        # two toggles queued before the first is handled each flip one thing.
        on = not self._ticked(entry)
        tools = self._listed.get(server_of(entry))
        names = tools if isinstance(tools, tuple) else ()
        self._chosen = toggled(self._chosen, names, entry, on)
        self._fill()
        self.post_message(self.Edited(self._chosen))

    def _ticked(self, entry: str) -> bool:
        server = server_of(entry)
        if entry == server:
            return any(server_of(e) == server for e in self._chosen)
        return server in self._chosen or entry in self._chosen

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged[str]) -> None:
        event.stop()  # a toggle says what changed; this only says that something did

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "list-tools":
            self.listing()
            self.post_message(self.ListWanted(self._servers))
