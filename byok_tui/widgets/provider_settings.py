"""One provider's part of Settings > API Keys. Only what is drawn: the screen reads and saves
(screens/settings.py), and fills in the lines each row keeps for it; no I/O here."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, Static

from byok_tui.core.registry import Provider
from byok_tui.widgets.key_field import KeyField


def models_brief(provider: Provider) -> str:
    names = [m.display_name for m in provider.models[:3]]
    more = len(provider.models) - len(names)
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


class ProviderSettings(Vertical):
    """One provider in Settings: its name and models, key field (a local runtime: whether it
    runs), key command and failover switch, and the lines the screen fills in: spend, and
    the key's warning, keys, limits, balance and test result, each hidden until it is set."""

    def __init__(self, provider: Provider) -> None:
        super().__init__(id=f"row-{provider.id}", classes="provider-row")
        self.provider = provider

    def compose(self) -> ComposeResult:
        provider = self.provider
        title = Text.assemble((provider.display_name, "bold"), "  ", (provider.id, "dim"))
        if provider.custom:
            with Horizontal(classes="title-line"):
                yield Label(title.append(f"  your own, at {provider.base_url}", "dim"))
                yield Button(
                    "Remove provider", classes="remove-provider", name=provider.id, compact=True
                )
        else:
            yield Label(title)
        if provider.models:
            yield Static(Text(models_brief(provider)), classes="models")
        if provider.needs_key:
            with Horizontal(classes="key-line"):
                yield KeyField(placeholder=f"{provider.display_name} API key", name=provider.id)
                yield Button("Test key", classes="test-key", name=provider.id, compact=True)
                if provider.balance_path:
                    yield Button(
                        "Check balance", classes="check-balance", name=provider.id, compact=True
                    )
            with Horizontal(classes="command-line"):
                yield Input(
                    placeholder="or from a command: pass show api/…, op://vault/item/field",
                    classes="key-command",
                    name=provider.id,
                    compact=True,
                )
                yield Checkbox(
                    "Failover between keys", classes="failover", name=provider.id, compact=True
                )
            yield Static(classes="warning")
            yield Static(classes="keys")
            yield Static(classes="spend")
            yield Static(classes="limits")
            yield Static(classes="balance")
            hint = f"Format: {provider.key_hint} · Get a key: {provider.console_url}"
            if provider.custom:
                hint = f"Its key is sent only to {provider.base_url}."
            if provider.key_optional:
                hint += " Optional: requests carry none until one is set here."
        else:
            # A server the user defined is asked only when they press Check (no hidden calls).
            status, check = (
                ("not checked", "Check") if provider.custom else ("checking…", "Check again")
            )
            with Horizontal(classes="key-line"):
                yield Static(Text(status), classes="local-status")
                yield Button(check, classes="test-key", name=provider.id, compact=True)
            hint = f"No key needed · Install: {provider.console_url}"
            if provider.custom:
                hint = "No key: requests to it carry no Authorization header."
        yield Static(Text(hint), classes="hint")
        if provider.free_tier:
            yield Static(Text(provider.free_tier), classes="hint")
        yield Static(classes="test-result")
