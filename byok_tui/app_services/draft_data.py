"""The composer's draft as this run keeps it, and the drafts of ended runs it gives back: what
a quit, a kill or a closed terminal must not lose of a message not sent yet (runs.py says
whose draft is whose)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from byok_tui.app_services.data_part import DataPart, Runs, Submits
from byok_tui.core.runs import ENDED, new_run

if TYPE_CHECKING:
    from byok_tui.app_services.services import AppContext
    from byok_tui.core.records import Draft


class DraftData(DataPart):
    def __init__(
        self, context: AppContext, submit: Submits, run: Runs, settled: Callable[[], None]
    ) -> None:
        super().__init__(context, submit, run, settled)
        self._run_name = new_run()  # what this run keeps its composer's draft under
        self._taken_over: tuple[str, ...] = ()
        self._given_back = False

    @property
    def claiming_for(self) -> str | None:
        """The run the chat state's read claims the drafts of ended runs for, until the
        composer has given them back (None from then on)."""
        return None if self._given_back else self._run_name

    def take_over(self, runs: Sequence[str]) -> None:
        """The drafts of these ended runs (claimed for this run as the chat state was read)
        are in this run's composer now: its next keep replaces them."""
        self._taken_over = (*self._taken_over, *runs)
        self._given_back = True

    def keep(self, draft: Draft, *, ending: bool = False) -> None:
        """Keep what the composer holds, unsent, for the next start (empty: nothing). `ending`:
        the app is quitting, so a later start takes it over although this process lives on
        a moment (or, in tests, runs the app again)."""
        db, run = self._context.db, self._run_name + (ENDED if ending else "")
        # Each write says it all, as the writer runs only the latest.
        replacing = (*self._taken_over, self._run_name)
        self._submit(
            "draft", "keep the message being written", lambda: db.keep_draft(run, draft, replacing)
        )
