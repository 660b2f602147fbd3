"""The views of one stored or streaming message in the transcript: the user's message, a
reply (Markdown, its meta line and copy targets, Continue), an error block, and the marker of
alternatives, with the messages they send up.

Everything shown here came from the user or the network, so it is never parsed as Rich markup
(`[bold]`, `[@click=…]` stay text): user text goes through `Text`, replies through Rich's
Markdown renderable (which has no markup).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.events import Click
from textual.message import Message
from textual.widgets import Button, Collapsible, Static

from byok_tui.compat import virtual_size_set_by_layout
from byok_tui.core.bindings import REPLY_KEYS, USER_MESSAGE_KEYS, textual_bindings
from byok_tui.core.records import Message as StoredMessage
from byok_tui.core.sanitize import strip_terminal_controls
from byok_tui.spend.pricing import usage_line
from byok_tui.widgets.code_copies import ReplyMeta, copy_wanted
from byok_tui.widgets.markdown_blocks import code_blocks, collector_paused
from byok_tui.widgets.markdown_text import LARGE_CHARS, MarkdownText

CONTINUE_LABEL = "Continue ▸ c"


def reply_meta(
    provider: str | None, model: str | None, key_source: str | None, fallback: bool = False
) -> str:
    """Which provider, model and key source answered, and whether it was one of the bot's
    fallbacks: never any part of the key."""
    parts = [p for p in (provider, model) if p]
    if key_source:
        parts.append(key_source_words(key_source))
    if fallback:
        parts.append(f"answered by fallback {provider}:{model}")
    return " · ".join(parts)


# Said of a reply stopped before the provider stated its token counts.
PRICE_UNKNOWN = " · price unknown (its input was billed)"


def key_source_words(key_source: str) -> str:
    """A reply's key source as its line says it: `global key`, `key personal`, `global key
    from command sh`, `key from the environment`, `local runtime`."""
    base, command = key_source.partition(" from command ")[::2]
    if base.startswith("key ") or base in ("local runtime", "no key"):
        said = base  # a labelled key names itself: `key personal`
    elif base == "environment":
        said = "key from the environment"
    else:
        said = f"{base} key"
    return f"{said} from command {command}" if command else said


def stored_usage_line(message: StoredMessage) -> str:
    """What a stored reply was billed for: `1,204 in · 388 out · $0.0031`."""
    return usage_line(
        message.input_tokens,
        message.output_tokens,
        message.cost_usd,
        priced=message.price is not None,
    )


def joined(*parts: str) -> str:
    return " · ".join(part for part in parts if part)


class UserMessage(Static, can_focus=True):
    """What the user sent."""

    virtual_size = virtual_size_set_by_layout()
    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 0 8;
        padding: 0 1;
        background: $boost;
        border-left: thick $accent;
    }
    UserMessage:focus { background: $accent 30%; }
    """

    BINDINGS = textual_bindings(USER_MESSAGE_KEYS)

    def __init__(
        self, content: str, message_id: int | None = None, attached: Sequence[str] = ()
    ) -> None:
        shown = Text(strip_terminal_controls(content))
        for label in attached:  # the files sent with it, by name
            shown.append(f"\n📎 {strip_terminal_controls(label)}", style="italic")
        super().__init__(shown, markup=False)
        self.message_text = content
        self.message_id = message_id  # None: not stored yet (just sent)

    has_alternatives = False  # an n/m marker under it: left and right browse them

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """←/→ are offered only where there are alternatives to browse."""
        return self.has_alternatives if action == "alternative" else True

    def action_edit(self) -> None:
        if self.message_id is not None:
            self.post_message(EditWanted(self.message_id, self.message_text))

    def action_alternative(self, step: int) -> None:
        if self.message_id is not None:
            self.post_message(AlternativeWanted(self.message_id, step))


class ErrorBlock(Static):
    """An error in the conversation: what happened, what to do, what the provider said."""

    virtual_size = virtual_size_set_by_layout()

    DEFAULT_CSS = """
    ErrorBlock {
        margin: 1 8 0 0;
        padding: 0 1;
        border-left: thick $error;
        background: $error-muted;
    }
    """

    def __init__(self, title: str, remedy: str = "", provider_said: str | None = None) -> None:
        title, remedy = strip_terminal_controls(title), strip_terminal_controls(remedy)
        provider_said = strip_terminal_controls(provider_said) if provider_said else None
        text = Text()
        text.append(title, style="bold")
        if remedy:
            text.append("\n" + remedy)
        if provider_said:
            text.append("\nProvider said: ", style="italic")
            text.append(provider_said)
        super().__init__(text, markup=False)


class ReplyView(Vertical, can_focus=True):
    """One assistant reply; streams Markdown as it arrives."""

    virtual_size = virtual_size_set_by_layout()
    BLANK = True  # no border, no content of its own: what shows of it is its background

    DEFAULT_CSS = """
    ReplyView { height: auto; margin: 1 8 0 0; }
    ReplyView:focus { background: $boost; }
    ReplyView > .meta { color: $text-muted; text-style: italic; }
    ReplyView.partial > .meta { color: $warning; }
    ReplyView > .continue { margin: 0; }
    """

    BINDINGS = textual_bindings(REPLY_KEYS)

    def __init__(
        self,
        content: str = "",
        reasoning: str = "",
        meta: str = "",
        message_id: int | None = None,
        *,
        continuable: bool = False,
    ) -> None:
        super().__init__()
        self.content = strip_terminal_controls(content)
        self.reasoning = strip_terminal_controls(reasoning)
        self._meta = meta
        self.message_id = message_id  # None: streaming now
        self._continuable = continuable  # cut short, and the last: it offers to continue
        self._next_code = 0  # the code block `y` copies next

    has_alternatives = False  # an n/m marker under it: left and right browse them

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that would do nothing here are not offered in the footer: c on a reply that
        is whole, ←/→ on one with no alternatives."""
        if action == "continue_reply":
            return self._continuable
        if action == "alternative":
            return self.has_alternatives
        return True

    def action_regenerate(self) -> None:
        if self.message_id is not None:
            self.post_message(RegenerateWanted(self.message_id))

    def action_alternative(self, step: int) -> None:
        if self.message_id is not None:
            self.post_message(AlternativeWanted(self.message_id, step))

    def action_continue_reply(self) -> None:
        if self.message_id is None:
            return
        if not self._continuable:
            self.notify(
                "There is nothing to continue: only the last reply, cut short, can be "
                "continued. r answers this one again."
            )
            return
        self.post_message(ContinueWanted(self.message_id))

    def compose(self) -> ComposeResult:
        if self.reasoning:
            yield self._reasoning_view()
        yield MarkdownText(self.content, classes="body")
        # Stored: whole, so its code blocks are final (a large reply's are found as its
        # text is split, MarkdownText.CodeBlocksFound).
        stored = self.message_id is not None and len(self.content) <= LARGE_CHARS
        yield ReplyMeta(self._meta, code_blocks(self.content) if stored else [])
        if self._continuable:
            yield self._continue_button()

    def on_markdown_text_code_blocks_found(self, message: MarkdownText.CodeBlocksFound) -> None:
        message.stop()
        if message.control is self.query_one(".body", MarkdownText):  # not the reasoning's
            for meta in self.query(ReplyMeta):
                meta.set_blocks(message.blocks)

    def show_code_copies(self) -> None:
        """The reply has ended: its code blocks get their copy targets (found in a worker
        thread in a large reply: parsing a megabyte of Markdown takes ~0.1 s)."""
        if not self.query(ReplyMeta):
            return  # not composed yet: compose gives them
        if len(self.content) > LARGE_CHARS:
            self._find_code_blocks()
        else:
            self.query_one(ReplyMeta).set_blocks(code_blocks(self.content))

    def _find_code_blocks(self) -> None:
        content, body = self.content, self.query_one(".body", MarkdownText)

        def find() -> None:
            with collector_paused():
                found = code_blocks(content)
            self.post_message(MarkdownText.CodeBlocksFound(body, found))

        self.run_worker(find, thread=True, group="code-blocks")

    def action_copy_code(self) -> None:
        # Those already found (a megabyte's parse would hold the screen ~0.1 s), else now.
        found = [meta.blocks for meta in self.query(ReplyMeta) if meta.blocks]
        blocks = found[0] if found else code_blocks(self.content)
        if not blocks:
            self.notify("This reply has no code block.")
            return
        number = self._next_code % len(blocks)
        self._next_code = number + 1
        self.post_message(copy_wanted(blocks, number))

    @staticmethod
    def _continue_button() -> Button:
        return Button(CONTINUE_LABEL, classes="continue", compact=True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.has_class("continue"):
            event.stop()
            self.action_continue_reply()

    def offer_to_continue(self, offered: bool) -> None:
        """Show (or take away) the Continue button: a reply cut short that is the last."""
        offered = offered and self.message_id is not None and bool(self.content)
        self._continuable = offered
        if not self.children:
            return  # compose shows it
        shown = self.query(".continue")
        if offered and not shown:
            self.mount(self._continue_button())
        elif not offered:
            shown.remove()

    def resume(self, meta: str, text: str) -> None:
        """The reply is being continued from `text` (its stored text, which a prefill may
        have trimmed): no longer partial, and its new text follows."""
        self.offer_to_continue(False)
        if self.children:
            self.query_one(ReplyMeta).set_blocks([])  # back once it has ended
        self.set_meta(meta)
        if text != self.content:
            self.content = text
            if self.children:
                self.query_one(".body", MarkdownText).remove()
                self.mount(MarkdownText(text, classes="body"), before=self.query_one(".meta"))

    def _reasoning_view(self) -> Collapsible:
        # Made only for replies that have reasoning: a Collapsible is the costliest part of a
        # reply to mount, and most replies have none.
        return Collapsible(
            MarkdownText(self.reasoning, classes="reasoning"), title="Reasoning", collapsed=True
        )

    _billed = False  # its token counts or cost are on its line

    def add_usage(self, line: str) -> None:
        """What the reply was billed for, once it has ended, after who answered."""
        if line:
            self._billed = True
            meta = self._meta.removesuffix(PRICE_UNKNOWN)  # the figures came after all
            self.set_meta(joined(meta, line), partial=self.has_class("partial"))

    def mark_stopped(self, why: str = "stopped") -> None:
        """It stopped before its end (the user stopped it, the connection was cut, the length
        limit): what arrived is kept, the meta line says so, and it offers to continue. With
        no token counts yet, it says its price is not known: the input was billed all the
        same."""
        note = "" if self._billed else PRICE_UNKNOWN
        self.set_meta(f"{self._meta} · {why}, partial reply kept{note}", partial=True)
        self.offer_to_continue(True)

    def set_meta(self, meta: str, *, partial: bool = False) -> None:
        self._meta = meta
        self.query_one(ReplyMeta).set_meta(meta)
        self.set_class(partial, "partial")

    def append_text(self, text: str) -> None:
        """Add reply text; a stream hands it over at most once a frame (ReplyStream)."""
        self.content += text
        if self.children:  # not composed yet: compose shows all the text so far
            self.query_one(".body", MarkdownText).append(text)

    def grow_ahead(self, lines: int) -> None:
        """While the reply streams, its text grows into `lines` laid out ahead; 0 once it
        has ended (MarkdownText.grow_ahead)."""
        if self.children:
            self.query_one(".body", MarkdownText).grow_ahead(lines)

    def append_reasoning(self, text: str) -> None:
        self.reasoning += text
        if not self.children:
            return
        shown = self.query(".reasoning")
        if shown:
            shown.first(MarkdownText).append(text)
        else:  # the first reasoning of this reply: the view shows all of it so far
            self.mount(self._reasoning_view(), before=self.query_one(".body"))


@dataclass
class EditWanted(Message):
    """Edit a stored user message and send it again, as an alternative to it."""

    message_id: int
    text: str


@dataclass
class RegenerateWanted(Message):
    """Answer a stored reply's question again, as an alternative to it."""

    message_id: int


@dataclass
class ContinueWanted(Message):
    """Continue a stored reply cut short, where it stopped."""

    message_id: int


@dataclass
class AlternativeWanted(Message):
    """Show the alternative `step` places from this message (-1: the one before)."""

    message_id: int
    step: int


class Alternatives(Static):
    """Place and count under a message that has alternatives (`2/3` between two arrows): a
    click on the left half shows the one before, on the right half the one after."""

    DEFAULT_CSS = """
    Alternatives { width: auto; color: $text-muted; margin: 0 0 0 8; }
    Alternatives.reply { margin: 0; }
    """

    def __init__(self, message_id: int, place: int, count: int, *, reply: bool) -> None:
        super().__init__(f"‹ {place}/{count} ›", markup=False, classes="reply" if reply else "")
        self.message_id = message_id

    def on_click(self, event: Click) -> None:
        event.stop()
        step = -1 if event.x < self.size.width // 2 else 1
        self.post_message(AlternativeWanted(self.message_id, step))
