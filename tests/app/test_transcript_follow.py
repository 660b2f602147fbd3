"""The transcript follows a streaming reply while the reader is at the bottom, in the very frame
the text arrives, and never moves a reader who scrolled up to read something else; it reads
earlier messages when the reader reaches the top, and only then."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widget import AwaitMount, Widget

from byok_tui.core.records import Message, TranscriptPage
from byok_tui.widgets import markdown_text
from byok_tui.widgets.markdown_text import BURST_CHARS, MarkdownText
from byok_tui.widgets.message_views import ReplyView, UserMessage
from byok_tui.widgets.transcript import Transcript
from tests.support.pilot import wait_for, wheel

pytestmark = pytest.mark.draws  # where each frame drew the reply

PARAGRAPH = "A line of a long reply that keeps on streaming in.\n\n"


class OneTranscript(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")


class PaintLog(list[tuple[float, float]]):
    """(scroll_y, max_scroll_y) of the transcript at every frame drawn."""

    def __init__(self, app: App[None]) -> None:
        super().__init__()
        screen = app.screen
        paint = screen._compositor_refresh
        transcript = app.query_one(Transcript)

        def logged() -> None:
            paint()
            self.append((transcript.scroll_y, transcript.max_scroll_y))

        screen._compositor_refresh = logged  # type: ignore[method-assign]


async def stream(reply: ReplyView, pilot: Pilot[None], pieces: int) -> None:
    for _ in range(pieces):
        reply.append_text(PARAGRAPH * 3)
        await pilot.pause(0.06)


async def test_a_streaming_reply_is_followed_in_the_frame_it_grows() -> None:
    app = OneTranscript()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_user("Tell me a long story")
        reply = transcript.start_reply("openai · gpt")
        await pilot.pause()
        frames = PaintLog(app)
        await stream(reply, pilot, 12)
        assert transcript.max_scroll_y > 0, "the reply outgrew the screen"
        assert frames and all(y == bottom for y, bottom in frames if bottom > 0), (
            "a frame was drawn above the newest text"
        )
        assert transcript.scroll_y == transcript.max_scroll_y
        # The scrollbar as drawn (its cached lines): the thumb at the bottom of its track.
        bar = transcript.vertical_scrollbar
        rows = [line.text + str(line) for line in bar.render_lines(bar.size.region)]
        track = max(set(rows), key=rows.count)  # most of its rows are bare track
        assert rows[-1] != track, "the scrollbar's thumb was left where it was"


async def test_a_reader_who_scrolled_up_stays_put_then_follows_again_from_the_bottom() -> None:
    app = OneTranscript()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        reply = transcript.start_reply("openai · gpt")
        await stream(reply, pilot, 6)
        transcript.scroll_relative(y=-10, animate=False)
        await pilot.pause()
        reading = transcript.scroll_y
        assert reading < transcript.max_scroll_y
        await stream(reply, pilot, 4)
        assert transcript.scroll_y == reading, "the reader was moved while reading"
        assert transcript.max_scroll_y > reading + 10

        transcript.scroll_end(animate=False)
        await pilot.pause()
        await stream(reply, pilot, 4)
        assert transcript.scroll_y == transcript.max_scroll_y, "back at the bottom: follows"


async def test_a_short_conversation_starts_at_the_top() -> None:
    app = OneTranscript()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_user("Hi")
        reply = transcript.start_reply("openai · gpt")
        reply.append_text("Hello!")
        await pilot.pause()
        assert transcript.scroll_y == 0
        assert transcript.query_one(ReplyView).region.y < 8, "not pushed to the bottom"


async def test_text_rendered_late_above_the_reader_does_not_move_what_they_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Markup makes each source line longer than it is drawn: estimates for the parts a burst
    # skipped are off, and they change height when they are rendered.
    paragraph = "**ab** " * 12 + "\n\n"
    # The skipped parts wait a second, not a quarter: on a loaded host they were rendered
    # before the reader's scroll was drawn (the test then waited for a place never reached).
    monkeypatch.setattr(markdown_text, "BURST_QUIET", 1.0)
    app = OneTranscript()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        reply = transcript.start_reply("openai · gpt")
        await pilot.pause()
        for _ in range(3):
            reply.append_text(paragraph * (BURST_CHARS // len(paragraph) + 1))
        await pilot.pause()
        body = reply.query_one(MarkdownText)
        reading = reply.query_one(".meta")
        # Followed to its end: the meta line on the transcript's last line.
        await wait_for(
            pilot,
            lambda: (
                transcript.scroll_y == transcript.max_scroll_y
                and reading.region.bottom == transcript.content_region.bottom
            ),
        )
        assert any(part.deferred for part in body.frozen), "the burst left parts to render later"
        # The reader is a few lines above the end of the reply: its last lines, and the meta
        # line under it, must stay where they are on screen.
        at_the_end = reading.region.y
        transcript.scroll_relative(y=-4, animate=False)
        await wait_for(pilot, lambda: reading.region.y == at_the_end + 4)  # the scroll drawn
        where = reading.region.y
        assert any(part.deferred for part in body.frozen), "rendered before the reader scrolled"
        await pilot.pause(markdown_text.BURST_QUIET)  # skipped parts rendered after a quiet spell
        await wait_for(pilot, lambda: not any(part.deferred for part in body.frozen))
        await pilot.pause()
        assert reading.region.y == where, "what the reader was reading moved"


async def test_each_growth_of_a_reply_is_laid_out_once() -> None:
    # Textual lays a widget out again when the layout changed its virtual size; for the
    # transcript's widgets that second layout found nothing new and cost a frame's work.
    app = OneTranscript()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        reply = transcript.start_reply("openai · gpt")
        await stream(reply, pilot, 6)  # past a screenful: the scrollbar has appeared
        layouts = 0
        screen = app.screen
        lay_out = screen._refresh_layout

        def counted(*args: object, **kwargs: object) -> None:
            nonlocal layouts
            layouts += 1
            lay_out(*args, **kwargs)  # type: ignore[arg-type]

        def laid_out(times: int) -> Callable[[], bool]:
            return lambda: layouts >= times

        screen._refresh_layout = counted  # type: ignore[method-assign]
        for grown in range(1, 6):
            reply.append_text(PARAGRAPH)
            await wait_for(pilot, laid_out(grown))
            await pilot.pause(0.1)
            assert layouts == grown, "a frame was laid out twice"


async def test_one_notch_of_the_wheel_up_leaves_the_end_at_a_human_pace() -> None:
    """Ten notches a tenth of a second apart, as a hand turns a wheel: each one moves the
    view up, idle or while a reply streams; none snaps back to the end."""
    app = OneTranscript()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_user("Tell me a long story")
        reply = transcript.start_reply("openai · gpt")
        await stream(reply, pilot, 8)
        await wait_for(pilot, lambda: transcript.max_scroll_y > 40)
        assert transcript.scroll_y == transcript.max_scroll_y
        for streaming in (False, True):
            transcript.scroll_end(animate=False)
            await pilot.pause()
            positions = []
            for _ in range(10):
                await wheel(pilot, transcript)
                if streaming:
                    reply.append_text(PARAGRAPH)
                await pilot.pause(0.1)
                positions.append(transcript.scroll_y)
            assert positions[0] < transcript.max_scroll_y, "the first notch snapped back"
            assert positions == sorted(positions, reverse=True), f"moved back down: {positions}"
            assert positions[-1] <= transcript.max_scroll_y - 10, f"streaming={streaming}"


def a_page(first: int, count: int, *, earlier: bool, later: bool = False) -> TranscriptPage:
    messages = [
        Message(
            id=number,
            uuid=f"u{number}",
            conversation_id=1,
            role="user",
            content=f"message {number}",
            reasoning="",
            provider=None,
            model=None,
            key_source=None,
            status="complete",
            error_kind=None,
            error_message=None,
            input_tokens=None,
            output_tokens=None,
            created=0.0,
        )
        for number in range(first, first + count)
    ]
    return TranscriptPage(messages, {}, {}, earlier=earlier, later=later)


class TranscriptAskingEarlier(OneTranscript):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[Transcript.EarlierWanted] = []  # what the transcript asked to read

    def on_transcript_earlier_wanted(self, message: Transcript.EarlierWanted) -> None:
        self.asked.append(message)


async def test_a_page_found_far_back_reads_no_earlier_page_on_its_own() -> None:
    """Earlier messages are read when the reader reaches the top, not when a page found far
    back replaces the one shown and its first message is revealed, even when its messages
    are mounted late (as under load: the old page gone, the view passes through the top
    with nothing laid out, and that is not the reader reaching it)."""
    app = TranscriptAskingEarlier()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.show_page(a_page(900, 60, earlier=True))
        await wait_for(pilot, lambda: transcript.scroll_y > 0 and transcript.at_end)
        mount_all = transcript.mount_all

        def once_at_the_top(widgets: Iterable[Widget], **where: Widget | None) -> AwaitMount:
            if transcript.scroll_y:  # the old page is still laid out
                transcript.call_after_refresh(once_at_the_top, widgets, **where)
            else:
                mount_all(widgets, **where)
            return AwaitMount(transcript, [])

        transcript.mount_all = once_at_the_top  # type: ignore[method-assign,assignment]
        # What the screen does with the page read for a search hit far back (message 4).
        await transcript.show_earlier(a_page(4, 60, earlier=True, later=True), before=900)
        assert transcript.reveal(4) == "shown"
        await wait_for(pilot, lambda: len(transcript.query(UserMessage)) == 60)
        for _ in range(5):
            await pilot.pause(0.02)
        assert app.asked == [], "an earlier page was read without the reader asking"
        transcript.scroll_home(animate=False)
        await wait_for(pilot, lambda: len(app.asked) == 1)  # the reader reached the top
