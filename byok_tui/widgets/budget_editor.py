"""Settings' budgets: every budget set with what was spent against it, and a line to set or
remove one (all providers, or one provider; per day or per month). Posts what the user asked
for; the screen writes it (a widget never reaches a store)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Select, Static

from byok_tui.core.records import ALL_PROVIDERS, Budget, BudgetPeriod, budget_amount
from byok_tui.core.registry import key_providers


class BudgetEditor(Vertical):
    DEFAULT_CSS = """
    BudgetEditor { height: auto; }
    BudgetEditor .budget-line { height: auto; }
    /* Shares of the line, not fixed widths: at 80 columns the buttons stay on screen. */
    BudgetEditor #budget-scope { width: 1fr; max-width: 24; }
    BudgetEditor #budget-amount { width: 1fr; max-width: 28; }
    BudgetEditor #budget-per { width: 1fr; max-width: 18; }
    BudgetEditor #budget-list { color: $text-muted; }
    BudgetEditor #budget-problem { color: $error; display: none; }
    BudgetEditor #budget-problem.shown { display: block; }
    """

    @dataclass
    class Submitted(Message):
        """Set (or change) this budget."""

        budget: Budget

    @dataclass
    class RemoveAsked(Message):
        """Remove the budget of this scope (a provider id, or `all`)."""

        scope: str

    def compose(self) -> ComposeResult:
        yield Static(Text("Reading…"), id="budget-list")
        scopes = [("All providers", ALL_PROVIDERS)]
        scopes += [(p.display_name, p.id) for p in key_providers()]
        with Horizontal(classes="budget-line"):
            yield Select(scopes, value=ALL_PROVIDERS, allow_blank=False, id="budget-scope")
            yield Input(placeholder="USD, e.g. 5 or 0.25", id="budget-amount")
            periods = [("per day", "day"), ("per month", "month")]
            yield Select(periods, value="month", allow_blank=False, id="budget-per")
            yield Button("Set budget", id="set-budget", compact=True)
            yield Button("Remove", id="remove-budget", compact=True)
        yield Static(id="budget-problem")

    def show_budgets(self, lines: list[str]) -> None:
        """Each budget in words, with what was spent against it."""
        said = "\n".join(lines) or "No budgets: nothing stops a send. Set one below."
        self.query_one("#budget-list", Static).update(Text(said))

    def _scope(self) -> str:
        return str(self.query_one("#budget-scope", Select).value)

    def _say_problem(self, problem: str | None) -> None:
        shown = self.query_one("#budget-problem", Static)
        shown.update(Text(problem or ""))
        shown.set_class(problem is not None, "shown")

    @on(Button.Pressed, "#set-budget")
    @on(Input.Submitted, "#budget-amount")
    def _set(self) -> None:
        try:
            amount = budget_amount(self.query_one("#budget-amount", Input).value)
        except ValueError as error:
            self._say_problem(f"✗ {error}")
            return
        self._say_problem(None)
        per: BudgetPeriod = (
            "day" if self.query_one("#budget-per", Select).value == "day" else "month"
        )
        self.post_message(self.Submitted(Budget(self._scope(), amount, per)))

    @on(Button.Pressed, "#remove-budget")
    def _remove(self) -> None:
        self._say_problem(None)
        self.post_message(self.RemoveAsked(self._scope()))
