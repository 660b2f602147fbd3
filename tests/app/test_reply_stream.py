"""The buffer between a send and its reply on screen: once the reply has ended, its height is
its text's, whatever flush was still on its way."""

from __future__ import annotations

from textual.app import App, ComposeResult

from byok_tui.widgets.markdown_text import MarkdownText
from byok_tui.widgets.message_views import ReplyView
from byok_tui.widgets.reply_stream import ReplyStream


class OneReply(App[None]):
    def compose(self) -> ComposeResult:
        yield ReplyView()


async def test_a_reply_that_arrives_and_ends_in_one_read_has_no_blank_lines_under_it() -> None:
    """A short reply comes whole with its end (one read): the flush its text asked for is
    still queued when the end flushes everything. Run after the end, it must not lay out
    blank lines ahead again: a compare's column showed its reply scrolled out of view, under
    a scrollbar, above 16 empty lines."""
    app = OneReply()
    async with app.run_test(size=(60, 30)) as pilot:
        view = app.query_one(ReplyView)
        stream = ReplyStream(view, headroom=16)
        stream.show_in(view)
        await pilot.pause()
        stream.write_text("The slow answer is four.")
        stream.flush(final=True)  # the end, in the same turn as the text
        await pilot.pause()
        await pilot.pause()
        body = view.query_one(".body", MarkdownText)
        assert body.size.height == 1, f"{body.size.height} lines for one line of text"
