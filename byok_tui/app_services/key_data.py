"""The app's keys, as the screens read and save them: each provider's global key, or the command
that prints it, failover, every key with its health, and a bot's own key or key choice. Saved
as typed, through the data service's writer; never logged, never in a failure's words."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from byok_tui.app_services.data_part import DataPart
from byok_tui.core.registry import providers
from byok_tui.keys import entry_name

if TYPE_CHECKING:
    from byok_tui.core.registry import Provider
    from byok_tui.spend.key_report import KeyRow


class KeyData(DataPart):
    def save_provider_key(self, provider_id: str, value: str) -> None:
        """Save (empty: remove) a provider's global key, as it is typed."""
        keys, entry = self._context.services.keys, entry_name(provider_id)
        db = self._context.db

        def write() -> None:
            if keys.set(entry, value):
                db.key_health.mark_set(provider_id, "default")

        self._submit(f"key:{entry}", "save the key", write)

    def save_key_command(self, provider_id: str, command: str) -> None:
        """Save the command that prints a provider's default key (it replaces a stored key);
        empty: remove the command (a stored key is left as it is)."""
        from byok_tui.keys.index import read_index, remove_key, save_key

        keys, entry = self._context.services.keys, entry_name(provider_id)
        db = self._context.db

        def write() -> None:
            if command.strip():
                save_key(keys, entry, provider_id, "default", command=command)
                db.key_health.mark_set(provider_id, "default")
            elif read_index(keys).command(provider_id):
                remove_key(keys, entry, provider_id, "default")

        self._submit(f"key:{entry}", "save the key command", write)

    def set_failover(self, provider_id: str, on: bool) -> None:
        from byok_tui.keys.index import set_failover

        keys = self._context.services.keys
        self._submit(
            f"failover:{provider_id}", "save failover", lambda: set_failover(keys, provider_id, on)
        )

    def key_rows(self) -> tuple[list[KeyRow], set[str]]:
        """Every key of every provider with its health, as `keys list` shows them, and the
        providers whose failover is on."""
        from byok_tui.keys.overview import key_overview
        from byok_tui.spend.key_report import key_rows

        self._settled()
        services, book = self._context.services, self._context.db.key_health
        overview = key_overview(providers(), services.keys, services.environ)
        reminder = services.config.key_reminder_days()
        rows = key_rows(overview, book.all(), book.set_times(), time.time(), reminder)
        return rows, set(overview.failover)

    def save_bot_key_choice(
        self, bot_id: int, *, command: str | None = None, label: str | None = None
    ) -> None:
        """The command that prints the bot's own key, or the labelled key it uses (None or
        empty: none)."""
        db = self._context.db

        def write() -> None:
            if command is not None:
                db.set_bot_key_command(bot_id, command.strip() or None)
            if label is not None:
                db.set_bot_key_label(bot_id, label.strip().lower() or None)

        self._submit(f"bot-key:{bot_id}", "save the bot's key", write)

    def save_bot_key(self, bot_id: int, value: str | None) -> None:
        """Save (empty or None: remove) a bot's own key."""
        db = self._context.db
        self._submit(
            f"bot-key:{bot_id}", "save the bot's key", lambda: db.set_bot_key(bot_id, value)
        )

    def stored_keys(self, providers: list[Provider]) -> dict[str, str]:
        """Each provider's stored global key by provider id ("" when none)."""
        self._settled()
        stored = self._context.services.keys.get_many(entry_name(p.id) for p in providers)
        return {p.id: stored.get(entry_name(p.id), "") for p in providers}
