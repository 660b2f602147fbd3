"""Every key binding of the app, as data: read by the screens (footer and command palette)
and by `byok-tui --help`, so the two cannot disagree. Never imports Textual."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Key:
    keys: str  # Textual's key names, comma-separated for alternatives
    action: str
    description: str
    id: str
    show: bool = True
    priority: bool = False


APP_KEYS = (
    Key("ctrl+q", "quit", "Quit", "app.quit", priority=True),
    Key("ctrl+s", "open_settings", "Settings", "app.settings"),
    Key("f10", "export_all_data", "Export All Data", "app.export", show=False),
)

CHAT_KEYS = (
    Key("escape", "stop_reply", "Stop reply", "chat.stop", show=False),
    Key("ctrl+r", "retry", "Retry", "chat.retry"),
    Key("ctrl+n", "new_conversation", "New chat", "chat.new"),
    Key("ctrl+b", "toggle_sidebar", "Sidebar", "chat.sidebar"),
    Key("ctrl+o", "toggle_config", "Bot config", "chat.config"),
    # Copies the focused message (click it, or tab to it), else the last reply.
    Key("ctrl+t", "copy_message", "Copy", "chat.copy"),
    Key("f2", "rename_conversation", "Rename", "chat.rename", show=False),
    Key("f4", "edit_in_editor", "Edit in $EDITOR", "chat.editor", show=False),
    Key("ctrl+delete", "delete_conversation", "Delete chat", "chat.delete", show=False),
)

# Handled by the composer itself (a text area): listed for --help and the footer hint.
COMPOSER_KEYS = (
    Key("enter", "send", "Send", "composer.send"),
    Key("ctrl+j,shift+enter,alt+enter", "newline", "New line", "composer.newline"),
)

SETTINGS_KEYS = (Key("escape", "close", "Back", "settings.close"),)


def help_text() -> str:
    """The key list for `byok-tui --help`."""
    lines = ["keys in the app:"]
    for key in (*COMPOSER_KEYS, *CHAT_KEYS, *APP_KEYS):
        lines.append(f"  {key.keys.replace(',', ' or '):<30} {key.description}")
    lines.append(f"  {'ctrl+p':<30} command palette (every action, themes)")
    return "\n".join(lines)


def textual_bindings(keys: tuple[Key, ...]) -> list[object]:
    """Textual Binding objects for `keys` (imported here so this module stays Textual-free)."""
    from textual.binding import Binding

    return [
        Binding(k.keys, k.action, k.description, show=k.show, priority=k.priority, id=k.id)
        for k in keys
    ]
