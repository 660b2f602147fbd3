"""The conversation transcript: the messages of the branch on screen, a page at a time, with
a reply streaming at its end (the views of each message are in message_views.py).

Everything shown here came from the user or the network, so it is never parsed as Rich markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Static

from byok_tui.core.records import Message as StoredMessage
from byok_tui.core.records import ShownToolCall, TranscriptPage
from byok_tui.core.redaction import redact_keys
from byok_tui.core.sanitize import strip_terminal_controls
from byok_tui.widgets.following_scroll import FollowingScroll
from byok_tui.widgets.message_views import (
    Alternatives,
    ErrorBlock,
    ReplyView,
    UserMessage,
    joined,
    reply_meta,
    stored_usage_line,
)
from byok_tui.widgets.tool_call import ToolCallView

EMPTY_HINT = "No messages yet. Type below and press Enter to send; F1 lists every key."
EARLIER_LABEL = "Show earlier messages"
LATER_LABEL = "Show the newest messages"
MOST_SHOWN = 300  # messages held at once: a reader going further back lets the newest go
Revealed = Literal["shown", "reading", "absent"]


class Transcript(FollowingScroll):
    """Shows a conversation's newest messages; earlier ones are read a page at a time when
    the reader scrolls to the top (or presses Show earlier), so a conversation of a million
    messages opens as fast as a short one and holds only what was shown."""

    DEFAULT_CSS = """
    Transcript { padding: 0 1; scrollbar-gutter: stable; }
    Transcript > .empty { color: $text-muted; margin: 1 2; }
    Transcript > .earlier { width: 100%; margin: 1 0 0 0; }
    Transcript > .notice { color: $text-muted; margin: 1 2 0 2; }
    Transcript > .found { outline-left: thick $warning; }
    """

    @dataclass
    class EarlierWanted(Message):
        """Earlier messages are to be shown: those before `before` (down to `down_to`, a
        message to reveal, when set)."""

        before: int
        down_to: int = 0
        reveal: int | None = None

    class NewestWanted(Message):
        """The newest messages are to be shown again (the transcript shows older ones)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._by_id: dict[int, Widget] = {}  # the widget showing each stored message
        self._earlier: Button | None = None  # shows earlier messages, while there are some
        self._later: Button | None = None  # back to the newest, while they are not shown
        self._first_id: int | None = None  # the oldest stored message shown
        self._asked_earlier = False  # earlier messages are on their way
        self._alternatives: dict[int, tuple[int, int]] = {}
        self._empty_hint = EMPTY_HINT
        self._last_id: int | None = None  # the last stored message shown
        self._attached: dict[int, list[str]] = {}  # the files of messages that have some
        self._tool_calls: dict[int, list[ShownToolCall]] = {}  # of replies that made some

    @property
    def at_end(self) -> bool:
        """Whether the newest messages are shown (not a page found far back)."""
        return self._later is None

    def show_page(self, page: TranscriptPage) -> None:
        """Show a conversation from its newest messages (`page`), or (`page.later`) a page
        of older ones with a way back to the newest; nothing else of it."""
        self.remove_children()
        self._by_id, self._earlier, self._asked_earlier = {}, None, False
        self._later = None
        self._alternatives, self._attached = dict(page.alternatives), dict(page.attached)
        self._tool_calls = dict(page.tool_calls)
        messages = page.messages
        if not messages:
            self._first_id = None
            self.mount(Static(self._empty_hint, classes="empty", markup=False))
            return
        # The conversation's last message (a reply cut short there offers to continue);
        # not known on a page found far back.
        self._first_id, self._last_id = messages[0].id, None if page.later else messages[-1].id
        widgets = self._widgets_for(messages)
        if page.earlier:
            # A class, not an id: the list it replaces may still be on its way out.
            self._earlier = Button(EARLIER_LABEL, classes="earlier", compact=True)
            widgets.insert(0, self._earlier)
        if page.later:
            self._later = Button(LATER_LABEL, classes="earlier", compact=True)
            widgets.append(self._later)
            self._following = False  # new text goes to the newest, not after these
        self.mount_all(widgets)
        if not page.later:
            self.scroll_end(animate=False)

    def set_empty_hint(self, hint: str) -> None:
        """What an empty conversation says (how to add a key, when there is none)."""
        if hint != self._empty_hint:
            self._empty_hint = hint
            for shown in self.query(".empty").results(Static):
                shown.update(hint)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button is self._later:
            event.stop()
            event.button.label = "Reading the newest messages…"
            self.post_message(self.NewestWanted())
            return
        if event.button is not self._earlier:
            return
        event.stop()
        self._want_earlier()

    def _want_earlier(self, down_to: int = 0, reveal: int | None = None) -> None:
        if self._first_id is None or self._earlier is None:
            return
        if self._asked_earlier and reveal is None:
            return  # one page at a time
        self._asked_earlier = True
        self._earlier.label = "Reading earlier messages…"
        self.post_message(self.EarlierWanted(self._first_id, down_to, reveal))

    async def show_earlier(self, page: TranscriptPage, before: int) -> None:
        """Mount `page`, the messages just before the one `before` (still the oldest shown),
        above those shown, keeping what the reader sees where it is."""
        self._asked_earlier = False
        button = self._earlier
        if button is None or before != self._first_id:
            return  # another conversation, or this page came already
        if page.later:  # a page found far back: shown on its own
            self.show_page(page)
            return
        self._alternatives.update(page.alternatives)
        self._attached.update(page.attached)
        self._tool_calls.update(page.tool_calls)
        anchor = self._by_id.get(before)
        offset = self.scroll_y - (anchor.virtual_region.y if anchor is not None else 0)
        widgets = self._widgets_for(page.messages)
        if widgets:
            await self.mount_all(widgets, after=button)
        if page.messages:
            self._first_id = page.messages[0].id
        if page.earlier:
            button.label = EARLIER_LABEL
        else:
            self._earlier = None
            await button.remove()
        await self._let_go_of_the_newest()
        if anchor is not None and not self._following:
            # The reader stays on the message they were reading, now lower in the list.
            self.call_after_refresh(
                lambda: self.scroll_to(y=anchor.virtual_region.y + offset, animate=False)
            )

    async def _let_go_of_the_newest(self) -> None:
        """Hold at most MOST_SHOWN messages: once the reader has gone further back, the
        newest go (Show the newest messages brings them back), so what is held is bounded by
        what is read, not by the conversation. Never while a message is on its way."""
        if len(self._by_id) <= MOST_SHOWN or self._following:
            return
        if any(view.message_id is None for view in self.query(ReplyView)) or any(
            message.message_id is None for message in self.query(UserMessage)
        ):
            return  # a message or reply not stored yet stays where it is
        first_gone = self._by_id[sorted(self._by_id)[MOST_SHOWN]]
        children = list(self.children)
        await self.remove_children(children[children.index(first_gone) :])
        self._by_id = {i: w for i, w in self._by_id.items() if w.parent is self}
        self._last_id = None  # the conversation's last message is not shown any more
        self._later = Button(LATER_LABEL, classes="earlier", compact=True)
        await self.mount(self._later)

    def reveal(self, message_id: int) -> Revealed:
        """Scroll to a stored message, marked and focused ("shown"). One older than those
        shown is read first, with every message after it ("reading": EarlierWanted names it
        to reveal); "absent" when it is not in the branch on screen."""
        if message_id not in self._by_id:
            if self._first_id is not None and message_id < self._first_id and self._earlier:
                self._want_earlier(down_to=message_id, reveal=message_id)
                return "reading"
            return "absent"
        for shown in self.query(".found"):
            shown.remove_class("found")
        found = self._by_id[message_id]
        found.add_class("found")
        self._following = False  # the reader is looking back: new text must not pull away
        found.focus(scroll_visible=False)
        self.call_after_refresh(self._scroll_to_found, found)
        return "shown"

    def _scroll_to_found(self, found: Widget, frames_left: int = 10) -> None:
        """Scroll `found` to the top of the view once it is laid out. Scrolled to before (a
        page just mounted, late under load) it would be at 0, and the view at the very top
        reads the page before it, which nobody asked for."""
        if found.parent is not self:
            return  # gone meanwhile (another page, another conversation)
        if not found.virtual_region.height:
            if frames_left:  # never laid out (hidden): left where it is
                self.call_after_refresh(self._scroll_to_found, found, frames_left - 1)
            return
        self.scroll_to_widget(found, animate=False, top=True)

    def _widgets_for(self, messages: list[StoredMessage]) -> list[Widget]:
        widgets: list[Widget] = []
        for message in messages:
            if message.role == "user":
                attached = self._attached.get(message.id, ())
                said = UserMessage(message.content, message.id, attached)
                said.has_alternatives = message.id in self._alternatives
                widgets.append(said)
                self._by_id[message.id] = said
                widgets += self._alternatives_of(message.id, reply=False)
                continue
            for call in self._tool_calls.get(message.id, ()):
                arguments = redact_keys(strip_terminal_controls(call.arguments))
                widgets.append(ToolCallView(call.name, arguments, call.result, error=call.error))
            if message.content or message.reasoning:
                view = ReplyView(
                    message.content,
                    message.reasoning,
                    joined(
                        reply_meta(
                            message.provider, message.model, message.key_source, message.fallback
                        ),
                        stored_usage_line(message),
                        "partial" if message.status == "partial" else "",
                    ),
                    message.id,
                    continuable=message.status == "partial" and message.id == self._last_id,
                )
                view.set_class(message.status == "partial", "partial")
                view.has_alternatives = message.id in self._alternatives
                widgets.append(view)
                self._by_id[message.id] = view
            if message.error_message:
                # Stored as one line: "What happened. What to do (provider said: …)".
                title, _, rest = message.error_message.partition(". ")
                widgets.append(ErrorBlock(title + ("." if rest else ""), rest))
                self._by_id.setdefault(message.id, widgets[-1])
            widgets += self._alternatives_of(message.id, reply=True)
        return widgets

    def _alternatives_of(self, message_id: int, *, reply: bool) -> list[Widget]:
        if message_id not in self._alternatives:
            return []
        place, count = self._alternatives[message_id]
        return [Alternatives(message_id, place, count, reply=reply)]

    async def cut_from(self, message_id: int) -> None:
        """Remove this message and all after it from the screen (they are kept, as another
        branch): an edit or a regeneration takes their place."""
        first = self._by_id.get(message_id)
        if first is None:
            return
        children = list(self.children)
        await self.remove_children(children[children.index(first) :])
        self._by_id = {i: w for i, w in self._by_id.items() if w.parent is self}
        # What follows it now is what the branch on screen holds: the newest, once more.
        self._later = None

    def add_user(self, content: str, attached: Sequence[str] = ()) -> None:
        self.query(".empty").remove()
        self._offer_no_continue()
        self.mount(UserMessage(content, attached=attached))
        self.scroll_end(animate=False)

    async def take_back_unsent(self) -> None:
        """The message just drawn was not stored (it is back in the composer): it goes."""
        sent = self.query(UserMessage)
        if sent and sent.last().message_id is None:
            await sent.last().remove()

    def _offer_no_continue(self) -> None:
        """A new message follows: no reply before it can be continued any more."""
        for view in self.query(ReplyView):
            view.offer_to_continue(False)

    def resume_reply(self, message_id: int, meta: str, text: str) -> ReplyView | None:
        """The reply `message_id`, continued from `text`: its new text follows, and what
        said why it stopped goes (None: it is not shown)."""
        view = self._by_id.get(message_id)
        if not isinstance(view, ReplyView):
            return None
        children = list(self.children)
        for after in children[children.index(view) + 1 :]:
            if isinstance(after, ErrorBlock):
                after.remove()
        view.resume(meta, text)
        self.scroll_end(animate=False)
        return view

    def identify_question(self, message_id: int | None) -> None:
        """The message just sent is stored as `message_id` (it can be edited now)."""
        sent = self.query(UserMessage)
        if message_id is not None and sent and sent.last().message_id is None:
            sent.last().message_id = message_id
            self._by_id[message_id] = sent.last()

    def start_reply(self, meta: str, message_id: int | None = None) -> ReplyView:
        self._offer_no_continue()
        view = ReplyView(meta=meta, message_id=message_id)
        if message_id is not None:
            self._by_id[message_id] = view
        self.mount(view)
        self.scroll_end(animate=False)
        return view

    def add_notice(self, text: str, before: Widget | None = None) -> None:
        """A line about the exchange it comes before (older messages left out of the
        request, tools not offered): above the reply `before`, while it is shown."""
        self.add_widget_before(Static(text, classes="notice", markup=False), before)

    def add_widget_before(self, widget: Widget, before: Widget | None) -> None:
        """`widget` above the reply `before` while it is shown (else last)."""
        if before is not None and before.parent is self:
            self.mount(widget, before=before)
        else:
            self.mount(widget)
        if self._following:
            self.scroll_end(animate=False)

    def add_error(self, title: str, remedy: str = "", provider_said: str | None = None) -> None:
        self.mount(ErrorBlock(title, remedy, provider_said))
        self.scroll_end(animate=False)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 < old and self._earlier_laid_out():
            self._want_earlier()  # the reader reached the top: earlier messages come next

    def _earlier_laid_out(self) -> bool:
        """Whether Show earlier is laid out at the top of what is shown. A page being
        replaced passes through the top with nothing laid out (the old one gone, the new one
        not yet placed, as under load): that is not the reader reaching the top."""
        button = self._earlier
        return button is not None and button.parent is self and bool(button.region.height)

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        arrangement = super().arrange(size, optimal)
        bottom = max(0, arrangement.total_region.bottom - size.height)
        button = self._earlier
        if not bottom and button in arrangement.widgets and not self._asked_earlier:
            # What is shown leaves room above it (short messages, a tall terminal): the
            # reader could not scroll up to ask for earlier messages, so they are read now.
            self.call_later(self._want_earlier_if_no_room, button)
        return arrangement

    def _want_earlier_if_no_room(self, button: Button) -> None:
        """Earlier messages for a page that leaves no room to scroll, if that page is still
        the one shown (its button still the one laid out) and still leaves no room now that
        the call has come round."""
        if button is self._earlier and not self.max_scroll_y:
            self._want_earlier()

    def text_to_copy(self) -> str | None:
        """The focused message's text, else the last reply's."""
        focused = self.screen.focused
        if isinstance(focused, UserMessage):
            return focused.message_text
        if isinstance(focused, ReplyView):
            return focused.content
        replies = self.query(ReplyView)
        return replies.last().content if replies else None
