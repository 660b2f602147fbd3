"""Settings' "Add provider": a form that defines an OpenAI-compatible provider (id, name, base
URL, models, whether it takes a key). Posts what the user asked for; the screen writes it and
says why it could not be (a widget never reaches the config file)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Select, Static

from byok_tui.core.registry import KEY_USES, KeyUse

KEY_CHOICES: tuple[tuple[str, KeyUse], ...] = (
    ("takes a key", "required"),
    ("key optional", "optional"),
    ("no key", "none"),
)
assert tuple(value for _, value in KEY_CHOICES) == KEY_USES


class ProviderForm(Vertical):
    DEFAULT_CSS = """
    ProviderForm { height: auto; padding: 0 1; }
    ProviderForm Horizontal { height: auto; }
    ProviderForm #new-provider-id { width: 24; }
    ProviderForm #new-provider-name { width: 1fr; }
    ProviderForm #new-provider-url { width: 1fr; }
    ProviderForm #new-provider-models { width: 1fr; }
    ProviderForm #new-provider-key { width: 20; }
    ProviderForm #new-provider-help { color: $text-muted; }
    ProviderForm #new-provider-problem { color: $error; display: none; }
    ProviderForm #new-provider-problem.shown { display: block; }
    """

    @dataclass
    class Submitted(Message):
        """Define this provider."""

        provider_id: str
        """Its id: what `ask -p` and its key's entry name use."""
        name: str
        """The name shown (the id when empty)."""
        base_url: str
        """Where `/chat/completions` and `/models` are found."""
        models: tuple[str, ...]
        """Models it serves, the first the default (its own list adds the rest)."""
        key: KeyUse
        """Whether it takes a key."""

    def compose(self) -> ComposeResult:
        yield Static(
            Text(
                "Any server that speaks OpenAI's chat API (LM Studio, vLLM, llama.cpp, LiteLLM, "
                "Together...). Its key, set in its row once added, goes only to its base URL; "
                "https unless it is on this machine or takes no key."
            ),
            id="new-provider-help",
        )
        with Horizontal():
            # Bordered, as every other field: compact ones read as plain text.
            yield Input(placeholder="id, e.g. lmstudio", id="new-provider-id")
            yield Input(placeholder="name shown", id="new-provider-name")
        with Horizontal():
            yield Input(
                placeholder="base URL, e.g. http://127.0.0.1:1234/v1", id="new-provider-url"
            )
        with Horizontal():
            yield Input(placeholder="models, comma-separated (optional)", id="new-provider-models")
            yield Select(KEY_CHOICES, value="required", allow_blank=False, id="new-provider-key")
            yield Button("Add provider", id="add-provider")
        yield Static(id="new-provider-problem")

    def show_problem(self, problem: str) -> None:
        """Why the provider was not added ("": it was, and the form is cleared)."""
        shown = self.query_one("#new-provider-problem", Static)
        shown.update(Text(problem))
        shown.set_class(bool(problem), "shown")
        if not problem:
            for field in self.query(Input):
                field.value = ""

    @on(Button.Pressed, "#add-provider")
    @on(Input.Submitted)
    def _submit(self, event: Button.Pressed | Input.Submitted) -> None:
        event.stop()

        def value(selector: str) -> str:
            return self.query_one(selector, Input).value.strip()

        models = tuple(m.strip() for m in value("#new-provider-models").split(",") if m.strip())
        key = self.query_one("#new-provider-key", Select).value
        self.post_message(
            self.Submitted(
                provider_id=value("#new-provider-id"),
                name=value("#new-provider-name"),
                base_url=value("#new-provider-url"),
                models=models,
                key=key if key in KEY_USES else "required",
            )
        )
