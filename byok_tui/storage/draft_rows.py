"""Drafts: what a composer held, unsent, kept under the name of the run that kept it, for a
later start to give back. Text and file paths only; a key in the text is kept redacted, as in
a message. A row written by anything else reads as text, never as a crash.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Sequence

from byok_tui.core.records import Draft
from byok_tui.core.redaction import redact_known_secrets
from byok_tui.storage.database import Database

DRAFT_SETTING = "composer-draft:"
# A message the user sent while its conversation was still opening, kept here until it is
# stored in that conversation, so that a kill meanwhile loses nothing.
UNSENT_MESSAGE_SETTING = "unsent-message"


class DraftRows(Database):
    def unsent_message(self) -> str:
        return self.settings().get(UNSENT_MESSAGE_SETTING, "")

    def set_unsent_message(self, text: str) -> None:
        """Keep `text` until it is stored in its conversation; "" when it has been."""
        self.set_setting(UNSENT_MESSAGE_SETTING, redact_known_secrets(text))

    def drafts(self) -> dict[str, Draft]:
        """Every composer's draft kept, by the run that kept it."""
        rows = self.connection().execute(
            "SELECT name, value FROM settings WHERE substr(name, 1, ?) = ? ORDER BY rowid",
            (len(DRAFT_SETTING), DRAFT_SETTING),
        )
        return {row["name"][len(DRAFT_SETTING) :]: _draft(row["value"]) for row in rows}

    def keep_draft(self, run: str, draft: Draft, replacing: Sequence[str] = ()) -> None:
        """Keep `run`'s draft (empty: none; a key in it redacted, as in a message) instead of
        the drafts of `replacing` (those it took over, its own under its name before), at
        once."""
        with self.transaction() as db:
            db.executemany(
                "DELETE FROM settings WHERE name = ?",
                [(DRAFT_SETTING + name,) for name in (*replacing, run)],
            )
            if draft:
                kept = {"text": redact_known_secrets(draft.text), "files": list(draft.files)}
                db.execute(
                    "INSERT INTO settings (name, value) VALUES (?, ?)",
                    (DRAFT_SETTING + run, json.dumps(kept, ensure_ascii=False)),
                )

    def claim_drafts(self, run: str, ended: Callable[[str], bool]) -> dict[str, Draft]:
        """The drafts of runs that have `ended`, taken for `run` alone: each is renamed as
        `run`'s (`<run>+<part of its own>`) in the one transaction that reads it, so that a
        start at the same moment cannot give it back too. A draft `run` claimed before (a
        read that failed after) is its still. A run killed after claiming has ended: its
        claims go to the next start."""
        claimed: dict[str, Draft] = {}
        with self.transaction() as db:
            rows = db.execute(
                "SELECT name, value FROM settings WHERE substr(name, 1, ?) = ? ORDER BY rowid",
                (len(DRAFT_SETTING), DRAFT_SETTING),
            ).fetchall()
            for name, value in rows:
                owner = name[len(DRAFT_SETTING) :]
                if owner.startswith(run + "+"):
                    claimed[owner] = _draft(value)
                elif ended(owner):
                    mine = f"{run}+{uuid.uuid4().hex[:8]}"
                    db.execute(
                        "UPDATE settings SET name = ? WHERE name = ?", (DRAFT_SETTING + mine, name)
                    )
                    claimed[mine] = _draft(value)
        return claimed


def _draft(value: str) -> Draft:
    """A draft as kept; text that is not one (written by hand, say) is kept as its text."""
    with contextlib.suppress(ValueError, RecursionError):  # as an export's parse is
        kept = json.loads(value)
        if isinstance(kept, dict) and isinstance(kept.get("text", ""), str):
            files = kept.get("files", [])
            paths = tuple(f for f in files if isinstance(f, str)) if isinstance(files, list) else ()
            return Draft(kept.get("text", ""), paths)
    return Draft(value)
