"""Settings > API Keys: every provider from the registry, each key saved on input, and the
providers the user defines (added and removed here).

Saving never asks the provider (no hidden calls); "Test key" is an explicit request to its model
list (and, where the provider states one, its balance); "Check balance" asks for the balance.
The local runtime has no key field: its address, whether it runs, and its models.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Header, Input, Label, Static

from byok_tui.app_services.app_data import AppData
from byok_tui.core.bindings import SETTINGS_KEYS, textual_bindings
from byok_tui.core.errors import ByokError
from byok_tui.core.records import Budget, Spend
from byok_tui.core.redaction import REDACTED
from byok_tui.core.registry import Provider, get_provider, key_mismatch_warning, providers
from byok_tui.screens.dialogs import ConfirmDialog
from byok_tui.spend.key_report import KeyRow
from byok_tui.spend.pricing import spend_lines
from byok_tui.widgets.budget_editor import BudgetEditor
from byok_tui.widgets.footer import Footer
from byok_tui.widgets.key_field import KeyField
from byok_tui.widgets.provider_form import ProviderForm
from byok_tui.widgets.provider_settings import ProviderSettings


@dataclass
class KeysRead(Message):
    """Each provider's stored key ("" when none) and what it has cost."""

    stored: dict[str, str]
    spends: list[Spend]
    budgets: list[str]  # every budget in words
    limits: dict[str, list[str]]  # per provider, the rate limits last stated
    keys: list[KeyRow]  # every key of every provider, with its health
    failover: set[str]  # providers whose failover between keys is on


class KeysNotRead(Message):
    """The keys could not be read (the user was told why)."""


@dataclass
class KeyRowsRead(Message):
    """Every key of every provider, with its health, after a key was changed."""

    keys: list[KeyRow]
    failover: set[str]


@dataclass
class ProviderAdded(Message):
    """A provider the user defined is now one of the providers (or why it is not)."""

    provider: Provider | None
    problem: str = ""


@dataclass
class ProviderRemoved(Message):
    provider_id: str
    problem: str = ""


@dataclass
class BudgetsRead(Message):
    """The budgets after one was set or removed, and each provider's spend against them."""

    budgets: list[str]
    spends: list[Spend]
    said: str  # what was done, or why it could not be
    failed: bool = False


def _gone(line: Static) -> bool:
    """Whether `line` left the screen (Settings closed, or its provider removed) while what
    it is to show was being asked: the answer is then dropped, not shown on a row that is no
    longer there."""
    return not line.is_attached


class SettingsScreen(Screen[None]):
    CSS_PATH = "settings.tcss"
    BINDINGS = textual_bindings(SETTINGS_KEYS)

    def __init__(self, data: AppData) -> None:
        super().__init__()
        self.data = data
        self._rows_made = False

    def compose(self) -> ComposeResult:
        yield Header()
        # Filled in once the keys are read, after it has the focus: a container that takes
        # the focus restyles everything in it (~200 widgets here, each styled a second time).
        yield VerticalScroll(id="settings")
        yield Footer()

    def _sections(self) -> list[Widget]:
        return [
            Label("API Keys", id="section-title"),
            Static(
                Text(
                    "Each key is saved as you type it, on this machine only, and sent only to "
                    "its provider. Saving never checks a key: use Test key, or send a message."
                ),
                id="section-help",
            ),
            # The keys first, as the panel's name says: budgets after the providers.
            Label("Providers", classes="subsection-title"),
            *[ProviderSettings(provider) for provider in providers()],
            Label("Add provider", classes="subsection-title", id="add-provider-title"),
            ProviderForm(id="provider-form"),
            Label("Budgets", classes="subsection-title"),
            BudgetEditor(id="budgets"),
        ]

    def on_mount(self) -> None:
        self.app.sub_title = "Settings"
        self._load_keys()

    async def _make_rows(self) -> None:
        """The sections, mounted once the keys are read and filled in the same batch: one
        layout of the ~200 widgets. Mounted first and filled after, they were laid out part
        mounted, then unfilled, then filled (~0.1 s more CPU before Settings was drawn)."""
        if self._rows_made:
            return
        self._rows_made = True
        await self.query_one("#settings", VerticalScroll).mount_all(self._sections())
        for provider in providers():
            if not provider.needs_key and not provider.custom:
                self._test(provider.id)

    @work(thread=True, exclusive=True, group="settings-load")
    def _load_keys(self) -> None:
        keyed = [p for p in providers() if p.needs_key]
        try:
            stored = self.data.keys.stored_keys(keyed)
            spends = [self.data.spending.spend(p.id) for p in keyed]
            budgets, limits = self.data.spending.budget_lines(), self.data.spending.stated_limits()
            keys, failover = self.data.keys.key_rows()
        except ByokError as error:
            self.app.call_from_thread(self.notify, error.one_line(), severity="error")
            self.post_message(KeysNotRead())  # the rows shown all the same, unfilled
            return
        # A message, not call_from_thread: handled in order with the screen's own teardown,
        # so what is read while Settings closes never meets half-removed widgets.
        self.post_message(KeysRead(stored, spends, budgets, limits, keys, failover))

    @work(thread=True, exclusive=True, group="key-rows")
    def _refresh_key_rows(self) -> None:
        """Each key's line read again (after the save queued before it)."""
        try:
            keys, failover = self.data.keys.key_rows()
        except ByokError as error:
            self.app.call_from_thread(self.notify, error.one_line(), severity="error")
            return
        self.post_message(KeyRowsRead(keys, failover))

    def on_key_rows_read(self, message: KeyRowsRead) -> None:
        self._show_key_rows(message.keys, message.failover)

    async def on_keys_not_read(self, message: KeysNotRead) -> None:
        with self.app.batch_update():
            await self._make_rows()

    async def on_keys_read(self, message: KeysRead) -> None:
        with self.app.batch_update():  # no layout of the rows half mounted or unfilled
            await self._make_rows()
            self._show_read(message)

    def _show_read(self, message: KeysRead) -> None:
        self._show_keys(message.stored)
        self._show_key_rows(message.keys, message.failover)
        self.query_one(BudgetEditor).show_budgets(message.budgets)
        self._show_spends(message.spends)
        for provider_id, lines in message.limits.items():
            if provider_id not in {p.id for p in providers() if p.needs_key}:
                continue
            shown = self._row(provider_id).query_one(".limits", Static)
            shown.update(Text("Rate limits: " + "\n             ".join(lines)))
            shown.add_class("shown")

    def _show_spends(self, spends: list[Spend]) -> None:
        for spend in spends:
            provider = get_provider(spend.provider_id)
            shown = self._row(provider.id).query_one(".spend", Static)
            shown.update(Text("\n".join(spend_lines(spend, provider.display_name))))
            shown.set_class(spend.warning, "near")

    def _show_keys(self, stored: dict[str, str]) -> None:
        for field in self.query(KeyField):
            value = stored.get(field.name or "", "")
            field.set_value(value)
            self._warn(field.name or "", value)

    def _show_key_rows(self, rows: list[KeyRow], failover: set[str]) -> None:
        """Each provider's keys (the default and labelled ones), their health, last use and
        when they were set; its command in the command field; its failover switch."""
        for provider in providers():
            if not provider.needs_key:
                continue
            row = self._row(provider.id)
            own = [r for r in rows if r.provider_id == provider.id]
            with self.prevent(Input.Changed, Checkbox.Changed):
                default = next((r for r in own if r.label == "default"), None)
                command = (
                    default.key.removeprefix("command: ")
                    if default is not None and default.stored == "command"
                    else ""
                )
                row.query_one(".key-command", Input).value = command  # as shown: redacted
                row.query_one(".failover", Checkbox).value = provider.id in failover
            lines = [
                " · ".join(
                    [f"{r.label}: {r.key}", r.health]
                    + ([f"used {r.last_used}"] if r.last_used != "-" else [])
                    + ([f"set {r.set_at}"] if r.set_at != "-" else [])
                )
                for r in own
                if r.stored != "unset"
            ]
            shown = row.query_one(".keys", Static)
            shown.update(Text("Keys: " + "\n      ".join(lines) if lines else ""))
            shown.set_class(bool(lines), "shown")

    @on(Input.Submitted, ".key-command")
    def _command_submitted(self, event: Input.Submitted) -> None:
        provider_id = event.input.name or ""
        if REDACTED in event.value:
            self.notify(
                "Not saved: the command holds a key (shown as [REDACTED]). Type the command "
                "without it.",
                severity="error",
            )
            return
        self.data.keys.save_key_command(provider_id, event.value)
        name = get_provider(provider_id).display_name
        if event.value.strip():
            self.notify(f"The command for the {name} key is saved; the key it prints is not.")
        else:
            self.notify(f"The command for the {name} key is removed.")
        self._load_keys()

    @on(Checkbox.Changed, ".failover")
    def _failover_changed(self, event: Checkbox.Changed) -> None:
        provider_id = event.checkbox.name or ""
        self.data.keys.set_failover(provider_id, event.value)
        state = "on" if event.value else "off"
        self.notify(f"Failover between {get_provider(provider_id).display_name}'s keys is {state}.")

    def on_provider_form_submitted(self, message: ProviderForm.Submitted) -> None:
        self._add_provider(message)

    @work(thread=True, group="providers")
    def _add_provider(self, asked: ProviderForm.Submitted) -> None:
        try:
            provider = self.data.add_provider(
                asked.provider_id,
                name=asked.name,
                base_url=asked.base_url,
                models=asked.models,
                key=asked.key,
            )
        except ByokError as error:
            self.post_message(ProviderAdded(None, error.one_line()))
            return
        self.post_message(ProviderAdded(provider))

    async def on_provider_added(self, message: ProviderAdded) -> None:
        form = self.query_one(ProviderForm)
        if message.provider is None:
            form.show_problem(f"✗ Not added: {message.problem}")
            return
        form.show_problem("")
        provider = message.provider
        await self.query_one("#settings").mount(
            ProviderSettings(provider), before=self.query_one("#add-provider-title")
        )
        said = "it takes no key" if not provider.needs_key else "set its key in its row"
        self.notify(f"{provider.display_name} is added: {said}.")
        self._load_keys()
        self._row(provider.id).scroll_visible()

    @on(Button.Pressed, ".remove-provider")
    def _remove_pressed(self, event: Button.Pressed) -> None:
        provider_id = event.button.name or ""

        def decided(remove: bool | None) -> None:
            if remove:
                self._remove_provider(provider_id)

        question = (
            f"Remove the provider {provider_id}? Its definition leaves the config file; its "
            f"key, if one is stored, stays (`byok-tui keys rm {provider_id}` removes it)."
        )
        self.app.push_screen(ConfirmDialog(question, yes="Remove"), decided)

    @work(thread=True, group="providers")
    def _remove_provider(self, provider_id: str) -> None:
        try:
            self.data.remove_provider(provider_id)
        except ByokError as error:
            self.post_message(ProviderRemoved(provider_id, error.one_line()))
            return
        self.post_message(ProviderRemoved(provider_id))

    async def on_provider_removed(self, message: ProviderRemoved) -> None:
        if message.problem:
            self.notify(f"Not removed: {message.problem}", severity="error")
            return
        await self._row(message.provider_id).remove()
        self.notify(f"{message.provider_id} is removed.")

    def _row(self, provider_id: str) -> ProviderSettings:
        return self.query_one(f"#row-{provider_id}", ProviderSettings)

    def _warn(self, provider_id: str, key: str, problem: str | None = None) -> None:
        warning = problem or key_mismatch_warning(get_provider(provider_id), key.strip())
        shown = self._row(provider_id).query_one(".warning", Static)
        shown.update(Text(warning or ""))
        shown.set_class(warning is not None, "shown")

    def on_key_field_changed(self, event: KeyField.Changed) -> None:
        provider_id = event.field.name or ""
        self._warn(provider_id, event.value, event.problem)
        if event.problem:
            return  # not saved: the warning says why
        self.data.keys.save_provider_key(provider_id, event.value)  # saved as it is typed
        self._refresh_key_rows()  # its line names the key now stored, not the one before

    @on(Button.Pressed, ".test-key")
    def _test_pressed(self, event: Button.Pressed) -> None:
        self._test(event.button.name or "")

    @work(group="test-key")
    async def _test(self, provider_id: str) -> None:

        provider = get_provider(provider_id)
        row = self._row(provider_id)
        result = row.query_one(".test-result", Static)
        # Found now: once the answer comes, the row may be going (Settings closed meanwhile).
        status = None if provider.needs_key else row.query_one(".local-status", Static)
        result.update(Text("Testing…"))
        result.add_class("shown")
        try:
            purpose = "key test" if provider.needs_key else "probe"
            models = await self.data.list_models(provider, purpose)  # with the key just typed
        except ByokError as error:
            if _gone(result):
                return
            result.update(Text(f"✗ {error.one_line()}"))
            result.set_class(True, "failed")
            if status is not None:
                status.update(Text(f"○ not running at {self.data.base_url(provider)}"))
            return
        if _gone(result):
            return
        result.set_class(False, "failed")
        if status is None:  # a key test
            count = f"{len(models)} model{'' if len(models) == 1 else 's'}"
            result.update(Text(f"✓ The key works: {count} available, now in the model list."))
            if provider.balance_path:
                self._check_balance(provider_id)  # part of the test: what is left on it
            return
        status.update(Text(f"● running at {self.data.base_url(provider)}"))
        names = ", ".join(m.id for m in models[:8]) or "none pulled yet"
        result.update(Text(f"Models detected: {names}"))

    @on(Button.Pressed, ".check-balance")
    def _balance_pressed(self, event: Button.Pressed) -> None:
        self._check_balance(event.button.name or "")

    @work(group="balance")
    async def _check_balance(self, provider_id: str) -> None:
        provider = get_provider(provider_id)
        shown = self._row(provider_id).query_one(".balance", Static)
        shown.update(Text("Checking the balance…"))
        shown.add_class("shown")
        try:
            balance = await self.data.balance(provider)
        except ByokError as error:
            if _gone(shown):
                return
            shown.update(Text(f"✗ Balance: {error.one_line()}"))
            shown.add_class("failed")
            return
        if _gone(shown):
            return
        shown.remove_class("failed")
        when = time.strftime("%H:%M:%S", time.localtime(balance.checked))
        shown.update(Text(f"Balance: {balance.summary} (as of {when})"))

    def on_budget_editor_submitted(self, message: BudgetEditor.Submitted) -> None:
        self._change_budget(message.budget, None)

    def on_budget_editor_remove_asked(self, message: BudgetEditor.RemoveAsked) -> None:
        self._change_budget(None, message.scope)

    @work(thread=True, group="budgets")
    def _change_budget(self, budget: Budget | None, remove: str | None) -> None:
        try:
            if budget is not None:
                self.data.spending.set_budget(budget)
                said = "Budget set."
            elif remove is not None and self.data.spending.remove_budget(remove):
                said = "Budget removed."
            else:
                said = f"There was no budget for {remove}: nothing was removed."
            budgets = self.data.spending.budget_lines()
            spends = [self.data.spending.spend(p.id) for p in providers() if p.needs_key]
        except ByokError as error:
            said = f"Could not change the budget: {error.one_line()}"
            self.post_message(BudgetsRead([], [], said, failed=True))
            return
        self.post_message(BudgetsRead(budgets, spends, said))

    def on_budgets_read(self, message: BudgetsRead) -> None:
        if message.spends:
            self.query_one(BudgetEditor).show_budgets(message.budgets)
            self._show_spends(message.spends)
        self.notify(
            message.said, severity="error" if message.said.startswith("✗") else "information"
        )

    def action_close(self) -> None:
        self.dismiss(None)  # not pop_screen: the chat screen's callback reads the keys again
