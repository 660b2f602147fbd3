"""The per-bot config pane, right of the conversation.

Bot name, provider, model, system prompt, temperature, fallbacks, the MCP servers whose tools
the bot may use (none by default); at the bottom the **API Key** field
(the selected provider's global key) and the **Per-Bot API Key** field, and one line saying
which key the next message will use. Reports edits as messages; the screen saves them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Select, Static, TextArea

from byok_tui.core.errors import ByokError
from byok_tui.core.records import Bot, BotConfig, Spend
from byok_tui.core.redaction import model_id_problem, redact
from byok_tui.core.registry import Provider, get_provider, key_mismatch_warning, providers
from byok_tui.providers.fallbacks import parse_fallbacks
from byok_tui.spend.pricing import spend_lines
from byok_tui.widgets.key_field import KeyField
from byok_tui.widgets.tool_choice import ToolChoice

# The model list's last entry: not a model, but a way to type any model id (people run
# models no registry has heard of). No model id can hold a NUL.
TYPE_A_MODEL_ID = "\0type-a-model-id"
ModelChoices = list[tuple[Text, str]]


class ConfigPane(VerticalScroll):
    WIDTH = 42  # cells, its border included
    # Its scrollbar always shown: it holds ~72 lines, more than most terminals are high, and
    # a scrollbar that came with the first layout laid every field out again, narrower.
    DEFAULT_CSS = (
        f"ConfigPane {{ width: {WIDTH}; border-left: vkey $foreground 20%; padding: 0 1; "
        "overflow-y: scroll; }"
        + """
    ConfigPane Label { width: 100%; }  /* wraps in a narrow pane, never cut */
    ConfigPane > Label { margin-top: 1; color: $text-muted; }
    ConfigPane > #bot-system { height: 6; }
    ConfigPane #keys { height: auto; }
    ConfigPane #keys > Label { margin-top: 1; color: $text-muted; }
    ConfigPane.keyless #keys { display: none; }  /* a local runtime takes no key */
    ConfigPane .warning { color: $warning; display: none; }
    ConfigPane .warning.shown { display: block; }
    ConfigPane > #spend { margin-top: 1; color: $text-muted; }
    ConfigPane > #spend.near { color: $warning; }
    /* Always in view, however far the pane is scrolled: which key the next message uses. */
    ConfigPane > #key-in-use {
        dock: bottom; padding: 0 1; text-style: bold;
        background: $panel; border-top: hkey $foreground 20%;
    }
    """
    )

    @dataclass
    class ConfigEdited(Message):
        config: BotConfig

    @dataclass
    class GlobalKeyEdited(Message):
        provider_id: str
        value: str

    class ModelIdWanted(Message):
        """The user chose to type a model id: the screen asks, then calls `model_id_typed`."""

    @dataclass
    class BotKeyEdited(Message):
        value: str

    @dataclass
    class BotKeyChoiceEdited(Message):
        """The bot's own key is to come from a command, or be a labelled key (Enter in one
        of the two fields; empty: none). One of the two is set."""

        command: str | None = None
        label: str | None = None

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._bot: Bot | None = None
        self._models: ModelChoices = []
        self._model = ""  # the model chosen, to go back to if typing one is cancelled
        self._taken_names: set[str] = set()  # the other bots' names: a name is not shared
        self._provider_choices = [(p.display_name, p.id) for p in providers()]

    def compose(self) -> ComposeResult:
        yield Label("Bot name")
        yield Input(id="bot-name")
        yield Static(id="bot-name-warning", classes="warning")
        yield Label("Provider")
        yield Select(self._provider_choices, id="bot-provider", allow_blank=False)
        yield Label("Model")
        yield Select([], id="bot-model", allow_blank=True, prompt="choose a model")
        yield Label("System prompt")
        yield TextArea(id="bot-system", soft_wrap=True, tab_behavior="focus")
        yield Label("Temperature (empty: model's default)")
        yield Input(id="bot-temperature", placeholder="e.g. 0.7")
        yield Static(id="bot-temperature-warning", classes="warning")
        with Vertical(id="keys"):
            yield Label("API Key", id="global-key-label")
            yield KeyField(placeholder="paste the key here", id="global-key")
            yield Static(id="global-key-warning", classes="warning")
            yield Label("Per-Bot API Key (this bot only)")
            yield KeyField(placeholder="empty: the key above", id="bot-key")
            yield Static(id="bot-key-warning", classes="warning")
            yield Label("or from a command (Enter saves)")
            yield Input(placeholder="pass show api/work, op://…", id="bot-key-command")
            yield Label("or the provider's key labelled (Enter saves)")
            yield Input(placeholder="e.g. work", id="bot-key-label")
        # Below the keys: asked, each with its own provider's key, when this one cannot answer.
        yield Label("Fallbacks, in order (provider:model, comma-separated)")
        yield Input(id="bot-fallbacks", placeholder="groq:llama-3.3-70b-versatile")
        yield Static(id="bot-fallbacks-warning", classes="warning")
        yield ToolChoice(id="tool-choice")
        yield Static(id="spend")
        yield Static(id="key-in-use")

    @property
    def bot(self) -> Bot | None:
        """The bot shown (None until `show`)."""
        return self._bot

    def saved(self, bot: Bot) -> None:
        """The bot shown, as saved now (its fields already say so)."""
        self._bot = bot

    @property
    def provider(self) -> Provider:
        return get_provider(str(self.query_one("#bot-provider", Select).value))

    def show(
        self,
        bot: Bot,
        models: ModelChoices,
        global_key: str,
        bot_key: str,
        taken_names: set[str],
    ) -> None:
        """Fill every field from saved state, without reporting the fills as edits."""
        self._bot = bot
        self._taken_names = taken_names
        config = bot.config
        self.set_class(not get_provider(config.provider).needs_key, "keyless")
        with self.prevent(Input.Changed, Select.Changed, TextArea.Changed, KeyField.Changed):
            self.query_one("#bot-name", Input).value = config.name
            choices = [(p.display_name, p.id) for p in providers()]
            if choices != self._provider_choices:  # one was defined or removed in Settings
                self._provider_choices = choices
                self.query_one("#bot-provider", Select).set_options(choices)
            self.query_one("#bot-provider", Select).value = config.provider
            self.show_models(models, config.model)
            self.query_one("#bot-system", TextArea).text = config.system_prompt
            self.query_one("#bot-temperature", Input).value = (
                "" if config.temperature is None else f"{config.temperature:g}"
            )
            self.query_one("#bot-fallbacks", Input).value = ", ".join(config.fallbacks)
        self.show_global_key(global_key)
        self.query_one("#bot-key", KeyField).set_value(bot_key)
        with self.prevent(Input.Changed):
            self.query_one("#bot-key-command", Input).value = redact(bot.key_command or "")
            self.query_one("#bot-key-label", Input).value = bot.key_label or ""
        self._warn("#bot-key-warning", bot_key)
        self._temperature()  # a saved value out of its provider's range is said at once

    def show_tools(self, servers: tuple[str, ...], chosen: tuple[str, ...], note: str = "") -> None:
        """The servers configured, those the bot may use ticked (ToolChoice.show)."""
        self.query_one(ToolChoice).show(servers, chosen, note)

    def show_models(self, models: ModelChoices, current: str) -> None:
        ids = [model_id for _label, model_id in models]
        if current and current not in ids:
            models = [*models, (Text(current), current)]
        self._models, self._model = models, current
        select = self.query_one("#bot-model", Select)
        with self.prevent(Select.Changed):
            select.set_options(
                [*models, (Text("✎ Type a model id…", style="italic"), TYPE_A_MODEL_ID)]
            )
            select.value = current if current else Select.NULL  # no model yet: none chosen

    def model_id_typed(self, model_id: str | None) -> None:
        """Use the model id the user typed; None (cancelled) keeps the model as it was, and so
        does one that looks like a key (it would be sent and stored in clear)."""
        problem = model_id_problem(model_id) if model_id else None
        if problem is not None:
            self.notify(problem, severity="error", timeout=8)
            model_id = None
        self.show_models(self._models, model_id or self._model)
        if model_id:
            self._report()

    def show_global_key(self, value: str) -> None:
        self.query_one("#global-key-label", Label).update(
            f"API Key ({self.provider.display_name}, global)"
        )
        self.query_one("#global-key", KeyField).set_value(value)
        self._warn("#global-key-warning", value)

    def show_spend(self, spend: Spend) -> None:
        """What the provider cost today and this month, and its budgets (in the warning
        colour from 80 % of one)."""
        lines = spend_lines(spend, get_provider(spend.provider_id).display_name)
        shown = self.query_one("#spend", Static)
        shown.update(Text("\n".join(lines)))
        shown.set_class(spend.warning, "near")

    def show_key_in_use(self, description: str) -> None:
        self.query_one("#key-in-use", Static).update(Text(f"Next message: {description}"))

    def _warn(self, selector: str, key: str, problem: str | None = None) -> None:
        warning = problem or key_mismatch_warning(self.provider, key.strip())
        shown = self.query_one(selector, Static)
        shown.update(Text(warning or ""))
        shown.set_class(warning is not None, "shown")

    def _edited(self) -> BotConfig | None:
        if self._bot is None:
            return None
        chosen = self.query_one("#bot-model", Select).value
        # The list's blank entry chooses no model: the bot keeps the one it has.
        model = self._model if chosen == Select.NULL else str(chosen)
        sendable, temperature = self._temperature()
        fallbacks = self._fallbacks()
        if not sendable or fallbacks is None:
            return None
        name = self.query_one("#bot-name", Input).value.strip()
        taken = name in self._taken_names
        warning = self.query_one("#bot-name-warning", Static)
        said = f"Another bot is named {name!r}: choose another name." if taken else ""
        warning.update(Text(said))
        warning.set_class(taken, "shown")
        if taken:
            return None
        return BotConfig(
            name=name or self._bot.config.name,
            provider=self.provider.id,
            model=model,
            system_prompt=self.query_one("#bot-system", TextArea).text,
            temperature=temperature,
            max_tokens=self._bot.config.max_tokens,
            fallbacks=fallbacks,
        )

    def _fallbacks(self) -> tuple[str, ...] | None:
        """The fallbacks typed, checked; None (and the field's message says why) when they
        cannot be saved."""
        text = self.query_one("#bot-fallbacks", Input).value
        problem = None
        found: tuple[str, ...] = ()
        try:
            found = tuple(str(f) for f in parse_fallbacks(text.split(",")))
        except ByokError as error:
            problem = f"{error.one_line()} Not saved."
        warning = self.query_one("#bot-fallbacks-warning", Static)
        warning.update(Text(problem or ""))
        warning.set_class(problem is not None, "shown")
        return found if problem is None else None

    def _temperature(self) -> tuple[bool, float | None]:
        """The temperature typed, and whether the provider takes it; the field's message
        says why not (a value is never changed into one that fits)."""
        text = self.query_one("#bot-temperature", Input).value.strip()
        temperature: float | None = None
        problem: str | None = None
        try:
            temperature = float(text) if text else None
        except ValueError:
            problem = "Temperature must be a number, like 0.7: not saved."
        low, high = self.provider.temperature_range
        if problem is None and self.provider.temperature_problem(temperature):
            problem = f"{self.provider.display_name} accepts {low:g} to {high:g}: not saved."
        warning = self.query_one("#bot-temperature-warning", Static)
        warning.update(Text(problem or ""))
        warning.set_class(problem is not None, "shown")
        return problem is None, temperature

    def _report(self) -> None:
        config = self._edited()
        if config is not None:
            self.post_message(self.ConfigEdited(config))

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._report()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self._report()

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.value == TYPE_A_MODEL_ID:
            self.post_message(self.ModelIdWanted())
            return
        if event.select.id == "bot-model" and event.value != Select.NULL:
            self._model = str(event.value)
        self._report()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "bot-key-command":
            event.stop()
            self.post_message(self.BotKeyChoiceEdited(command=event.value))
        elif event.input.id == "bot-key-label":
            event.stop()
            self.post_message(self.BotKeyChoiceEdited(label=event.value))

    def on_key_field_changed(self, event: KeyField.Changed) -> None:
        event.stop()
        global_key = event.field.id == "global-key"
        self._warn(f"#{event.field.id}-warning", event.value, event.problem)
        if event.problem:
            return  # not saved: the warning says why
        if global_key:
            self.post_message(self.GlobalKeyEdited(self.provider.id, event.value))
        else:
            self.post_message(self.BotKeyEdited(event.value))
