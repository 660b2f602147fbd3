"""Every key binding of the app, as data: read by the screens (footer and command palette)
and by `byok-tui --help`, so the two cannot disagree. Never imports Textual."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from textual.binding import BindingType


# A NamedTuple, not a dataclass: its module loads before the first frame (launch.py says why).
class Key(NamedTuple):
    keys: str  # Textual's key names, comma-separated for alternatives
    action: str
    description: str  # the footer's and the palette's word for it
    id: str
    does: str  # what it does, in a sentence: the palette, --help and the help screen
    show: bool = True
    priority: bool = False

    @property
    def spoken(self) -> str:
        """The keys as a person reads them: 'ctrl+j or shift+enter', '?' (question_mark)."""
        return self.keys.replace("question_mark", "?").replace(",", " or ")


# Not f6 or f7: the message box (a text area) selects a line and all with them.
APP_KEYS = (
    Key(
        "f1,question_mark",
        "help",
        "Help",
        "app.help",
        "Every key, by where it works, and the mouse",
    ),
    Key(
        "ctrl+q",
        "quit",
        "Quit",
        "app.quit",
        "Leave byok-tui (keys typed are saved first)",
        priority=True,
    ),
    Key(
        "ctrl+s",
        "open_settings",
        "Settings",
        "app.settings",
        "Settings > API Keys: every provider's key, saved as you type",
    ),
    Key(
        "f8",
        "open_usage",
        "Usage",
        "app.usage",
        "Usage: spend per day for 30 days per provider, and totals per model",
        show=False,
    ),
    Key(
        "f9",
        "open_requests",
        "Requests",
        "app.requests",
        "Requests: every request made with a key, its status, tokens and cost",
        show=False,
    ),
    Key(
        "ctrl+l",
        "redraw",
        "Redraw",
        "app.redraw",
        "Draw the whole screen again",
        show=False,
    ),
    Key(
        "f10",
        "export_all_data",
        "Export All Data",
        "app.export",
        "Write every bot and conversation to a JSON file, with no keys",
        show=False,
    ),
)

CHAT_KEYS = (
    Key(
        "escape",
        "stop_reply",
        "Stop reply",
        "chat.stop",
        "Stop the reply on its way; what arrived is kept, marked partial",
        show=False,
    ),
    Key(
        "ctrl+r",
        "retry",
        "Retry",
        "chat.retry",
        "Send the last message again (after fixing its key, say)",
    ),
    Key(
        "ctrl+f",
        "search",
        "Search",
        "chat.search",
        'Search every conversation: words, word* prefixes, "phrases"; Enter opens the hit',
        show=False,  # the sidebar's Search button says it; the footer keeps Quit at 80 columns
        priority=True,
    ),
    # ctrl+a is the message box's Home key too: the priority binding takes it for attaching.
    Key(
        "ctrl+a",
        "attach_file",
        "Attach",
        "chat.attach",
        "Attach a file to the next message: a text file, or an image for a model that takes "
        "them (a path pasted or dropped into the message box does the same)",
        show=False,
        priority=True,
    ),
    Key(
        "ctrl+g",
        "regenerate",
        "Regenerate",
        "chat.regenerate",
        "Answer the focused reply (else the last) again; the earlier answer is kept",
        show=False,
    ),
    Key(
        "ctrl+n",
        "new_conversation",
        "New chat",
        "chat.new",
        "Start a new conversation with this bot",
    ),
    Key(
        "ctrl+b",
        "toggle_sidebar",
        "Sidebar",
        "chat.sidebar",
        "Show or hide the providers, bots and conversations",
    ),
    Key(
        "ctrl+o",
        "toggle_config",
        "Bot config",
        "chat.config",
        "Show or hide the bot's provider, model, prompt and keys",
    ),
    # Copies the focused message (click it, or tab to it), else the last reply.
    Key(
        "ctrl+t",
        "copy_message",
        "Copy",
        "chat.copy",
        "Copy the focused message, else the last reply (keys replaced)",
    ),
    Key(
        "f2", "rename_conversation", "Rename", "chat.rename", "Rename this conversation", show=False
    ),
    Key(
        "f4",
        "edit_in_editor",
        "Edit in $EDITOR",
        "chat.editor",
        "Write the message in your $VISUAL or $EDITOR",
        show=False,
    ),
    Key(
        "f5",
        "compare",
        "Compare",
        "chat.compare",
        "Send the message in the composer to 2-4 models at once, side by side, and keep the "
        "best answer (the others stay as its alternatives)",
    ),
    Key(
        "ctrl+delete",
        "delete_conversation",
        "Delete chat",
        "chat.delete",
        "Delete this conversation and its messages (asks first)",
        show=False,
    ),
)

# Handled by the composer itself (a text area): listed for --help and the footer hint.
COMPOSER_KEYS = (
    Key("enter", "send", "Send", "composer.send", "Send the message"),
    Key(
        "ctrl+j,shift+enter,alt+enter",
        "newline",
        "New line",
        "composer.newline",
        "A new line in the message (which one works depends on the terminal)",
    ),
)

# On a message of the transcript, once focused (click it, or tab to it).


def _alternative_keys(scope: str) -> tuple[Key, Key]:
    """← and → on a focused message or reply: the alternative before and after it."""
    return (
        Key(
            "left",
            "alternative(-1)",
            "‹",
            f"{scope}.previous",
            "Show the alternative before this one (‹)",
        ),
        Key("right", "alternative(1)", "›", f"{scope}.next", "Show the alternative after (›)"),
    )


USER_MESSAGE_KEYS = (
    Key(
        "e",
        "edit",
        "Edit",
        "message.edit",
        "Edit this message and send it again; what followed it is kept as an alternative",
    ),
    *_alternative_keys("message"),
)
REPLY_KEYS = (
    Key(
        "r",
        "regenerate",
        "Regenerate",
        "reply.regenerate",
        "Answer this again (with the bot's model now); this reply is kept as an alternative",
    ),
    Key(
        "y",
        "copy_code",
        "Copy code",
        "reply.copy_code",
        "Copy this reply's code blocks, one per press: the first, then the next",
    ),
    Key(
        "c",
        "continue_reply",
        "Continue",
        "reply.continue",
        "Continue this reply where it stopped (one cut short: stopped, cut off, or at the "
        "length limit)",
    ),
    *_alternative_keys("reply"),
)

# In the sidebar's lists (bots, conversations).
SIDEBAR_KEYS = (
    Key(
        "delete",
        "delete_highlighted",
        "Delete",
        "sidebar.delete",
        "Delete the bot or conversation highlighted in the sidebar (asks first)",
        show=False,
    ),
)

# In the command palette (and the sidebar's buttons), with no key of their own.
BOT_COMMANDS = (
    Key("", "new_bot", "New bot", "chat.new_bot", "Create a bot; the config pane is its editor"),
    Key(
        "",
        "edit_last",
        "Edit last message",
        "chat.edit_last",
        "Put your last message in the composer; sending it keeps the earlier one as an alternative",
    ),
    Key(
        "",
        "continue_last",
        "Continue the reply",
        "chat.continue",
        "Continue the last reply where it stopped, when it was cut short (stopped, cut off, "
        "or at the length limit); the new text is added to it",
    ),
    Key(
        "",
        "use_bot_model",
        "Use the bot's model again",
        "chat.use_bot_model",
        "After a compare's reply was kept: this conversation's next messages go to the "
        "bot's own model again",
    ),
    Key(
        "",
        "export_markdown",
        "Export conversation as Markdown",
        "chat.export_markdown",
        "Write this conversation as Markdown (no keys) to the data folder's exports/",
    ),
    Key(
        "",
        "delete_bot",
        "Delete bot",
        "chat.delete_bot",
        "Delete this bot and its conversations (asks first)",
    ),
)

# What Settings holds, by name, so that the palette finds it: it matches names only, and
# 'budget', 'key' or 'provider' found nothing when Settings was listed as Settings alone.
SETTINGS_TOPICS = (
    Key(
        "",
        "open_settings",
        "API keys, key commands and failover",
        "app.settings_keys",
        "Settings > API Keys: set, test or remove a provider's key",
    ),
    Key(
        "",
        "open_settings",
        "Budgets: set or remove a spending cap",
        "app.settings_budgets",
        "Settings > Budgets: cap what replies cost per day or month",
    ),
    Key(
        "",
        "open_settings",
        "Add provider (any OpenAI-compatible server)",
        "app.settings_providers",
        "Settings > Add provider: LM Studio, vLLM, LiteLLM, Together…",
    ),
)

# On a tool call shown in the transcript.
TOOL_CALL_KEYS = (
    Key(
        "enter,space",
        "show_or_hide",
        "Show/hide",
        "tool_call.toggle",
        "Show or hide a tool call's arguments and what it gave back",
    ),
)

# The dialog that asks before a tool runs.
TOOL_APPROVAL_KEYS = (
    Key("a", "decide('once')", "Allow once", "tool.allow_once", "Run this tool call, this once"),
    Key(
        "l",
        "decide('always')",
        "Always allow",
        "tool.allow_always",
        "Run this call and every later call of this tool by this bot, without asking",
    ),
    Key(
        "d,escape",
        "decide('deny')",
        "Deny",
        "tool.deny",
        "Do not run it: the model is told, and its reply goes on",
    ),
)

# The compare screen: one column a target.
COMPARE_KEYS = (
    Key(
        "escape",
        "stop_or_close",
        "Stop all / Back",
        "compare.stop_all",
        "Stop every reply still coming; once none is, back to the chat",
    ),
    Key("s", "stop_one", "Stop this", "compare.stop_one", "Stop the reply of the column in focus"),
    Key(
        "k",
        "keep",
        "Keep",
        "compare.keep",
        "Keep the reply of the column in focus as the conversation's; the others stay as its "
        "alternatives",
    ),
    Key(
        "c",
        "write",
        "Write",
        "compare.write",
        "Write the next message while the replies come: it waits in the chat's composer "
        "(Tab and shift+Tab move between the columns and it)",
    ),
    *(
        Key(
            str(number),
            f"focus_target({number - 1})",
            f"Column {number}",
            f"compare.column_{number}",
            f"Go to column (or tab) {number}",
            show=False,
        )
        for number in range(1, 5)
    ),
)
SETTINGS_KEYS = (Key("escape", "close", "Back", "settings.close", "Back to the chat"),)
SEARCH_KEYS = (Key("escape", "close", "Close", "search.close", "Back to the chat"),)
SPEND_SCREEN_KEYS = (Key("escape", "close", "Back", "spend.close", "Back to the chat"),)

PALETTE = Key(
    "ctrl+p",
    "command_palette",
    "Palette",
    "app.palette",
    "Command palette: every action above, and themes",
)


def help_text() -> str:
    """The key list for `byok-tui --help`: one aligned column of what each key does."""
    keys = (*COMPOSER_KEYS, *CHAT_KEYS, *APP_KEYS, PALETTE)
    width = max(len(key.spoken) for key in keys) + 2
    lines = ["keys in the app:"]
    lines += [f"  {key.spoken:<{width}}{key.does}" for key in keys]
    return "\n".join(lines)


def textual_bindings(keys: tuple[Key, ...]) -> list[BindingType]:
    """Textual Binding objects for `keys` (imported here so this module stays Textual-free)."""
    from textual.binding import Binding

    return [
        Binding(k.keys, k.action, k.description, show=k.show, priority=k.priority, id=k.id)
        for k in keys
        if k.keys  # a palette command has none
    ]
