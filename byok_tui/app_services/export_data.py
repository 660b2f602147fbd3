"""Exports the user asks for, written to the data folder's `exports/`, readable by the user
alone, with no key in them (every key known is redacted first). Blocking: run in worker
threads."""

from __future__ import annotations

import time
from pathlib import Path

from byok_tui.app_services.data_part import DataPart
from byok_tui.core.errors import ByokError


class ExportData(DataPart):
    def export_markdown(self, conversation_id: int) -> Path:
        """Write the conversation (the branch on screen) as Markdown to the data folder's
        `exports/`, readable by the user alone, with no key; where it went."""
        from byok_tui.app_services.services import remember_every_key
        from byok_tui.storage.markdown_export import export_markdown

        self._settled()
        services, db = self._context.services, self._context.db
        remember_every_key(services, db)  # a copy of any key in a message is redacted too
        text = export_markdown(db, conversation_id)
        return self._write_export(f"byok-tui-conversation-{conversation_id}", ".md", text.encode())

    def export_all_data(self) -> Path:
        """Write bots, conversations, settings, budgets and the request log, no key, as JSON
        to the data folder's `exports/`, readable by the user alone; where it went."""
        from byok_tui.app_services.services import known_keys
        from byok_tui.providers.custom import provider_tables
        from byok_tui.storage.transfer import export_all

        self._settled()
        services, db = self._context.services, self._context.db
        data = export_all(db, known_keys(services), provider_tables(services.config))
        return self._write_export("byok-tui-export", ".json", data)

    def _write_export(self, name: str, suffix: str, data: bytes) -> Path:
        from byok_tui.core.paths import ensure_private_dir, write_private

        folder = self._context.services.paths.data_dir / "exports"
        path = folder / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}{suffix}"
        try:
            ensure_private_dir(folder)
            write_private(path, data, new=True)
        except OSError as error:
            raise ByokError(f"Could not write {path}: {error.strerror}") from None
        return path
