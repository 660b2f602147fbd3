"""Every place byok-tui relies on what Textual, httpx or httpx-sse do not document, in one module.

Each touch point says what it relies on and why, and has a canary test in
tests/test_compat.py (marked `internals`: after an upgrade, `pytest -m internals` shows at once
which ones broke). Checked against textual 8.2.8, httpx 0.28 (httpcore 1.0) and httpx-sse 0.4,
which pyproject.toml pins. Every point that replaces or wraps Textual's or httpcore's code
applies only on the exact version it was checked against (`CHECKED_AGAINST`): on another it is
skipped, the app runs on the library's own code, and `--log` says which points were skipped.
Not guarded, on purpose: point 4 (the crash report: skipping it would print local variables,
a key among them) and the read-only ones (5, 12), whose libraries are pinned.
docs/upstream/README.md holds, for each point, the problem and the fix to propose upstream,
and for 20 of them (7-9, 11, 13-18, 21-29, 31) a minimal reproduction against plain Textual
(run by tests/test_upstream_repros.py).

1. `virtual_size_set_by_layout`: redeclares a widget's `virtual_size` reactive so that a change
   asks for no second layout. Textual lays a widget out again whenever its virtual size
   changes, and it is the layout that changes it: each frame in which a streaming reply grew
   was laid out twice, the second time finding nothing new (~10 ms a frame).
2. `scroll_in_layout`: moves a scrollable widget during a layout, setting `scroll_y`,
   `scroll_target_y` and the scrollbar's `position` directly. `scroll_to` would clamp to the
   bottom as it was before the layout, and draw a frame at the old position first.
3. `FollowingScroll.arrange` (widgets/following_scroll.py: the chat's transcript and each
   compare column) overrides `Widget.arrange`, which Textual documents as best left alone
   (renamed in v7), to keep a reader who is at the bottom there in the very frame the
   content grows. Textual's own `anchor()` would do, but leaves a short conversation hanging
   at the bottom of the pane (textual#6652) and does not take up following again after the
   reader scrolls back down while text streams in (textual#6677).
   **Once #6677 is fixed upstream:** delete the override and `FollowingScroll._following`,
   call `anchor()` in `FollowingScroll.on_mount`, and keep the follow tests in
   tests/app/test_transcript_follow.py, which must pass unchanged.
4. `stop_after_crash`: the bookkeeping of `App._handle_exception` / `App._fatal_error`, which
   byok-tui replaces because Textual's crash report prints local variables (a key among them)
   and exits with status 0.
5. `sse_decoders`: httpx-sse's line and event decoders (`httpx_sse._decoders`), driven directly
   so that size bounds apply to comments and to a line or event that never ends; its public
   `EventSource` offers no such bound.
6. `recompose_footer_once`: replaces `Footer.bindings_changed` (and sets its `_bindings_ready`),
   which queues a whole recompose of the footer for every change of bindings: opening the
   chat screen queued five (focus moved, a reply's keys came and went), ~11 ms each with
   every key re-mounted and styled. Changes that arrive before the next refresh now make one,
   and none if the keys it would show are those it shows (focus moved between widgets with
   the same keys: three of a start's five recomposes, each with a layout of the screen).
   Each change still asks for its own (the first to run does the work): one asked while a
   dialog is current runs at that dialog's refresh, and is lost if the dialog closes first.
7. `screens_take_the_terminal_size_only`: wraps `Screen._on_resize` so that a screen passes
   over a Resize whose size is no longer the terminal's. Textual lays a screen out at the size
   of each Resize in its queue and posts it a Resize of its own when that changed its size;
   while layouts wait (`_batch_count`, as during shutdown) a refresh is queued between them,
   so a screen under another with two old sizes queued went back and forth between them for
   ever at 100% CPU (ctrl+q after dragging the terminal's edge hung the app). Not reported
   upstream yet; once Textual coalesces or drops such resizes, remove the wrapper and keep
   the test in tests/app/test_layout.py, which must pass unchanged.
8. `page_keys_need_lines`: wraps `OptionList._move_page` (PageDown, PageUp). An option list
   lays its options out in lines only once it has room; with none (the search's hits in a
   terminal five lines high) the page keys looked up a line never made and raised KeyError,
   a crash report. Textual guards the same lookup in `scroll_to_highlight`; wrapped here for
   every option list, the sidebar's, the search's and a Select's alike.
9. `timers_tick_at_the_next_interval`: replaces `Timer._run`. A timer that runs late drops
   the ticks it missed (`skip`), and Textual 8.2.8 then waits for the interval after the next
   one (`count = int((now - start) / interval + 1)`, one too many). The screen's update timer
   pauses at each frame and ticks late whenever it is resumed after an idle spell, so a key
   typed just after such a frame was drawn one to two frame intervals later instead of within
   one (at 120 frames a second, 14-31 ms echoes while a reply streamed, against 3.4 ms).
   Not reported upstream yet; once Textual waits for the next interval itself, remove this
   and keep the test in tests/app/test_frame_timing.py, which must pass unchanged.
10. `input_ends_with_the_terminal`: replaces `LinuxDriver.run_input_thread`. At the end of its
   input (a read of nothing, or a read error) Textual's input thread leaves its inner loop
   and selects again at once, for ever: a terminal that went away with no hang-up signal
   (one the app does not control, as a harness or `setsid` gives it) left the app spinning a
   core at ~100%, never ending. Ours asks the app to exit, as a hang-up does, and waits for
   it. Textual PR #6690 (open) ends the input thread at the end of input; once merged,
   remove this and keep the test in tests/faults/test_nothing_lost.py, which must pass
   unchanged.
11. `output_ends_with_the_terminal`: wraps `WriterThread.run` (textual/drivers/_writer_thread.py).
   Textual's writer thread dies at a failed write (the terminal gone: EIO), and the app's
   writes then wait for room in its queue of 30 for ever: a terminal that stopped reading
   (a stalled SSH link) and then went away left the app hung, its event loop stuck in a
   write, so it could neither quit nor store what a reply had brought. Ours takes in (and
   drops) what is written after such a failure until it is stopped. Not reported upstream
   yet; once Textual's writer survives a failed write, remove this and keep the test in
   tests/faults/test_nothing_lost.py, which must pass unchanged.
12. `markdown_parsed_by_one_parser`: a copy of a Rich `Markdown` whose `markup` and `parsed`
   are set to another text, parsed by one parser made once (a thread). Rich's
   `Markdown.__init__` makes a new markdown-it parser for every text (~0.2 ms: its rules, a
   linkifier compiling its patterns, a renderer inspecting its own methods), a third of what
   drawing a short block cost, and a reply's live block is drawn ten times a second. Rich
   offers no way to pass a parser; once it does, use it and keep the test in
   tests/app/test_markdown_text.py (a streamed reply draws what the whole reply draws),
   which must pass unchanged.
13. `layouts_keep_their_map`: wraps `Compositor.reflow` (textual/_compositor.py) to mark the
   compositor's full map fresh once a layout has made it. Textual marks the map stale after
   a scroll and when a widget off screen changes, and a layout, which makes the whole map,
   leaves the mark: the first widget whose place is asked for afterwards (a scrollbar moved
   in the layout, a size read while drawing) makes it all again. Opening the chat screen,
   most layouts placed every widget twice (~10 ms of a 57 ms frame). Not reported upstream
   yet; once `reflow` clears `_full_map_invalidated` itself, remove this and keep the test in
   tests/app/test_layout.py, which must pass unchanged.
14. `screens_lay_out_once_a_size`: wraps `Screen._screen_resized` (textual/screen.py) to pass
   over a size the screen was last laid out at (its compositor's `size`). A screen's first
   layout posts a Resize to every widget it showed, the screen itself among them, and the
   screen's Resize handler laid it out again at that same size, and every screen under it
   too: opening Settings (~200 widgets), ~50-60 ms more in the key that opened it. A layout
   something asks for later (a widget changed) still comes, through the screen's own update.
   Not reported upstream yet; once Textual passes over an unchanged size, remove this and
   keep the test in tests/app/test_layout.py, which must pass unchanged.
15. `screens_styled_once_when_first_shown`: wraps `Screen._compose` and
   `Screen._on_screen_resume` (textual/screen.py) so that a screen's first ScreenResume
   does not restyle the whole screen (`refresh_styles`) when the app's styles have not been
   refreshed since the screen was composed (`App._css_update_count`). Each widget was styled
   as it was mounted, and a refresh of the app's styles restyles every screen in the stack
   itself; the resume's restyle is for a screen coming back from under another. Opening
   Settings (~200 widgets), it restyled every widget a second time (~200 of ~650 restyles).
   Not reported upstream yet; once Textual restyles only a screen that comes back, remove
   this and keep the test in tests/app/test_layout.py, which must pass unchanged.
16. `partial_updates_draw_what_they_show`: replaces `Compositor._get_renders`
   (textual/_compositor.py) when it is given a crop (a partial update: the part of the
   screen that changed). Textual drew every widget whose clip (its container's visible
   area) overlapped the crop, not its own visible part: the header, the sidebar, the footer
   and the panes at every key typed and at every frame of a streaming reply (12-15 widgets
   drawn a frame for the 2-5 shown), the lines thrown away after. A widget whose visible
   part misses the crop covers none of the cells the update writes (each line is cut at
   every widget's edge), so leaving it out changes nothing on screen. The frames of a
   2,000-token paced reply (headless, 120x40): 591-625 -> 473-517 ms in all. And it asks
   each widget for the rows the update covers, not all its visible lines: the screen and
   the containers behind a growing reply are as tall as the terminal, and every frame of a
   paced reply drew their 31-40 lines for the few that changed (~80 ms of thread time in a
   2,000-token reply, in a terminal). Not reported upstream yet; once `_get_renders` tests
   the widget's own region and crops to the update, remove this and keep the tests in
   tests/app/test_layout.py, which must pass unchanged.
17. `strips_kept_out_of_cycles`: wraps `Strip.divide` and `Strip.crop_extend`
   (textual/strip.py) so that a strip that is its own result (divided at its own end, or
   cropped and extended to its own length) is returned without being cached in itself.
   Every frame divides each line it draws at the widgets' edges and crop-extends lines to
   their regions, and Textual cached `[self]` and `self`: cycles only the collector frees, a
   strip and its seven caches each. A 2,000-token paced reply (headless) left ~45,600
   objects of cyclic garbage, ~8,000 without them, and the collector ran 20 times rather
   than 27 (33-34 ms of pauses rather than 52-59). Not reported upstream yet; once Textual
   returns such a strip uncached, remove this and keep the test in
   tests/app/test_layout.py, which must pass unchanged.
18. `strips_make_their_caches_when_used`: replaces `Strip.__init__` (textual/strip.py) and
   puts, in place of each of its seven cache slots, a descriptor that makes the slot's
   FIFOCache the first time the strip reads it. Textual made all seven for every strip, and
   most strips (a line padded, cropped, cut at a widget's edge, drawn, dropped) use one or
   none. Strips that live a while (the lines widgets keep) carried them into the older
   generation, whose collections pause the app: in a 2,000-token paced reply (120x40)
   ~15,000 of the ~44,000 objects one such collection scanned were strips' caches, and the
   collector ran 23-24 times, 7 without them. Not reported upstream yet; once Textual makes
   a strip's caches lazily, remove this and keep the test in tests/app/test_layout.py, which
   must pass unchanged.
19. `layouts_draw_what_they_resize`: wraps `Widget._size_updated` (textual/widget.py). A
   layout that changes a scrolling container's size or length updates its scrollbars
   (`_scroll_update`), and their `refresh()` asks for a frame of its own once they are next
   idle, while the layout's own frame, which follows at once, already draws them afresh:
   the container's place in the compositor's map changed, so its whole visible region is
   redrawn. Each line a streaming reply gains did this: ~36 frames more in a 2,000-token
   paced reply, ~2 ms each, drawing only the scrollbar. A scrollbar whose whole region is in
   what that frame redraws (the compositor's dirty regions) has its request dropped; its
   drawn lines are still thrown away (`_set_dirty`). The same for the widget a layout
   resized: `_set_dirty` asks for its whole region to be drawn again, a request that waits
   for the widget's next refresh, so the flush after each layout of a streaming reply drew
   all of the reply on screen (~30 lines where 2-13 had changed; 14 of 29 flushes in the
   test). Not reported upstream yet; once Textual leaves a resized widget and its
   scrollbars to the layout's frame, remove this and keep the tests in
   tests/app/test_layout.py, which must pass unchanged.
20. `with_network_backend`: sets the network backend of an httpx transport's connection
   pool (`AsyncHTTPTransport._pool`, an httpcore `AsyncConnectionPool`, and its
   `_network_backend`, which each connection it makes is given). httpcore takes a backend
   (a public interface), httpx's transport offers no way to pass one. Ours
   (providers/network.py) reads a socket without anyio's cancel scope and pause/resume per
   read. Once httpx's transport takes a `network_backend`, pass it there and keep the tests
   in tests/providers/test_network.py, which must pass unchanged.
21. `opaque_screens_hide_those_under_them`: replaces the `App._background_screens` property
   (textual/app.py). Textual counts the screen just under the top one as seen through it
   whatever the top screen's background (it checks the opacity of the screens under, not of
   the top one), so a screen under an opaque one stays "current" (`Screen.is_current`): it
   is laid out and drawn whenever it changes, and every region it draws is drawn again on
   the top screen, its whole area once a frame later. Under the compare screen, each key
   typed there (the chat composer beneath takes the text) redrew the compare's columns whole:
   1.6-2.1 MB written to the terminal in a compare with typing, ~0.6 MB without. Ours: no
   screen shows under a top screen whose background is opaque; a translucent one (a dialog)
   keeps Textual's own list. A screen that comes back on top is laid out and drawn whole
   (`_on_screen_resume`). Not reported upstream yet; once Textual asks the top screen's
   opacity first, remove this and keep the test in tests/app/test_layout.py, which must pass
   unchanged.
22. `styles_caches_let_go`: replaces `StylesCache.get_inner_outer` (textual/_styles_cache.py),
   an instance method under a class-wide `functools.lru_cache(1024)`: its keys held the
   instance, so the styles cache of each widget drawn, with every line it had drawn, stayed
   alive after the widget was gone, up to 1,024 of them (the footer's keys at each change of
   focus, a transcript's pages, the panes of Settings). Ours caches the two colours' styles
   by the colours alone; what it returns is the same. Reported upstream as textual#6665;
   once fixed there, remove this and keep the test in tests/app/test_layout.py, which must
   pass unchanged.
23. `watchers_go_with_their_node`: wraps `DOMNode.watch` (textual/dom.py), to note on the
   watching node each watcher it sets on another object, and `Widget._message_loop_exit`
   (textual/widget.py), to take those watchers off when the node is removed. Textual keeps
   a watcher on the object watched until that attribute next changes, and it holds the
   node: each key of the footer (composed anew at every change of focus or of bindings,
   each bound to the footer's `compact`, which never changes) and each text area (bound to
   the app's theme) stayed alive with all it held: ~0.4 MB at each change of focus. Ours
   takes off only the removed node's own watchers. Reported upstream as textual#6666; once
   fixed there, remove this and keep the test in tests/app/test_layout.py, which must pass
   unchanged.
24. `footer_keys_styled_once`: replaces the `FooterKey` that Textual's `Footer.compose` makes
   (textual/widgets/_footer.py) with a subclass whose `compact` starts False, as the
   footer's own does. Textual's starts True: each key added the `-compact` class as it was
   set up, then took it off when bound to the footer's False, each change restyling it at
   once: two restyles a key, 19 keys at every change of focus (~34 of ~105 ms of a Tab
   press). The command palette's key, which Textual does not bind, starts compact as
   before; drawn the same, and a compact footer's keys still take the class. Not reported
   upstream yet; once FooterKey's default follows the footer's, remove this and keep the
   test in tests/app/test_layout.py, which must pass unchanged.
25. `layouts_place_only_their_part`: wraps `Screen._refresh_layout` (textual/screen.py) and,
   for the layout it runs, its compositor's `reflow` (textual/_compositor.py). When every
   change a layout waits for lies inside one widget of fixed size (Textual walks up from a
   changed widget only to the first ancestor whose size does not follow its content, and
   clears the arrangements it kept only up to there), the layout places that widget's part
   of the screen alone, with Textual's own `_arrange_root`, and keeps every other widget
   where the full map had it. Textual placed every widget of the screen: each step a
   streaming reply grew (a dozen lines) placed the sidebar, the config pane, the header and
   the footer again, ~70 widgets for the ~10 that can move, 3-5 ms (the part alone: 2.2-3.9
   ms) of a 10-19 ms frame in tmux in which a key typed waits. The part's map is moved to
   its place: its offset added to each region and clip, its painting order put after the
   part's own. The whole screen is laid out as before when the part is not wholly on
   screen, holds an overlay or a widget placed by offset or constraint (each placed against
   the whole screen), when the map is stale, or when a widget outside the part changed since
   the last layout (its children, the layouts asked of it, its styles, its scroll) without
   its layout asked for yet: a full layout takes in a widget mounted or removed before its
   Layout message reaches the screen. Not reported upstream yet; once Textual lays out only
   what changed, remove this and keep the test in tests/app/test_layout.py, which must pass
   unchanged.
26. `widgets_going_away_keep_their_styles`: wraps `Widget.watch_has_focus` (textual/widget.py),
   which restyles a widget and everything in it when it gains or loses the focus. A widget
   being removed (Textual marks it `_pruning`) loses the focus as it goes, and nothing of it
   is drawn again: its restyle is skipped. Closing Settings, whose scroll area holds the
   focus and ~200 widgets, restyled them all (~100 ms on two shared cores, with the chat
   screen back and keys typed waiting). Any other change of focus restyles as before. Not
   reported upstream yet; once Textual skips it, remove this and keep the test in
   tests/app/test_layout.py, which must pass unchanged.
27. `new_stylesheets_parsed_alone`: wraps `App._load_screen_css` (textual/app.py), and for
   that call its stylesheet's `reparse` and `update`. A screen whose CSS the app has not read
   yet made Textual parse every stylesheet again in a fresh `Stylesheet` (none from the
   cache of what it parsed) and restyle every widget of the app: opening Settings the first
   time, 35 stylesheets (~45 ms on two shared cores) and 82 widgets (~47 ms), with the key
   that opened it waiting. The stylesheet now parses in place, what it parsed before taken
   from its cache (same text, same variables: the same rules; a CSS error still raises and
   is left out, as before), and restyles only the widgets whose type, class or id a new
   rule's last selector names (Textual's own test of which rules may apply to a widget);
   any other widget's rules are unchanged, and so its styles. Not reported upstream yet;
   once Textual parses only new CSS, remove this and keep the test in
   tests/app/test_layout.py, which must pass unchanged.
28. `layouts_ask_no_layout_for_the_sizes_they_set`: wraps `Widget._size_updated`
   (textual/widget.py), beneath point 19, to tell it what Textual tells it for the widgets a
   scroll exposes: set the virtual size without asking for a layout. The screen's layout
   calls it for every widget it placed, and the virtual size it sets is what that layout
   worked out; assigned to a reactive declared `layout=True`, each change asked for the
   screen to be laid out again, which found nothing to move. Showing the config pane, ~40 of
   its widgets asked: two layouts where one placed everything, and the chat screen settled
   with 8-9 layouts rather than 9-11 (point 1 does the same for our own widgets whatever
   Textual's version). A container's scrollbars that appear or go still ask for the layout
   they need; a ScrollView, whose virtual size is its own, has its own `_size_updated`. The
   arrangements kept above the widget are still cleared, as the ask cleared them: kept by
   their children's version, an older one holds widgets removed since (the footer's keys of
   the last change of focus, with all they drew, ~0.4 MB each). Not reported upstream yet;
   once Textual sets a layout's virtual sizes quietly, remove this and keep the test in
   tests/app/test_layout.py, which must pass unchanged.
29. `editing_keys_keep_their_order`: wraps `Input._on_key` and `TextArea._on_key`
   (textual/widgets/_input.py, _text_area.py) to run the field's own bindings (ctrl+u,
   backspace, the arrows) as the key reaches it. Textual inserts a character there, but runs
   a bound key's action only once the key has bubbled up to the app, a queue a step: keys
   read together (a fast typist, a loaded machine, a paste without bracketed paste) were
   inserted before the key typed ahead of them, which then acted on them. ctrl+u and then
   the targets typed at once left the compare dialog empty (its Enter then asked for
   nothing), and `ba`, backspace, `c` left `ba`. A binding whose action does not run (a
   `check_action` that says no, a SkipAction) goes on up the chain as before. Reported as
   textual#6605, with a fix of the same shape proposed in PR #6631 (both open); once it is
   merged, remove this and keep tests/app/test_keys_in_order.py, which must pass unchanged.
30. `frames_write_only_what_changed`: wraps `App._display` (textual/app.py), reading the
   pieces a `ChopsUpdate` or `LayoutUpdate` (textual/_compositor.py) writes as their
   `render_segments` does, and wraps the driver's `start_application_mode`. Textual writes
   every line of every region it repaints, changed or not: while a 2,000-token reply streamed
   in tmux, 25,607 of the 32,734 runs of text the app wrote (47 % of the cells, 363 KiB)
   rewrote what the terminal already showed. Each piece now goes through the cells the app
   has written (core/written_cells.py), which leaves out a piece that changes nothing and
   cuts the others to their changed cells; what is written is a frame like any other (the
   cursor put back after it). Anything else written, an inline or headless app, a new size
   and application mode started again (after a suspend) make it forget what it wrote, so
   the next frame writes every cell. Not reported upstream yet; once Textual writes only the
   cells a frame changes, remove this and keep tests/app/test_frames_in_a_terminal.py, which
   must pass unchanged.
31. `widgets_styled_as_they_mount`: wraps `DOMNode.update_node_styles` (textual/dom.py), which
   every change of a widget's classes calls to restyle it and all it holds at once. A class
   set on a widget the app does not hold yet restyled it against the whole stylesheet for
   nothing: it is styled whole as it mounts (`App._register`). Textual's own widgets set a
   class in their constructor (`compact=True`, a Button's variant, a Select's parts): opening
   Settings restyled 59 widgets before they were mounted, a Button twice (24-48 ms of the
   key that opened it), and the chat screen 9-15 as it started. Now a widget not linked to
   the app (`is_attached`) is not restyled; one in the app is, as before. Not reported
   upstream yet; once Textual restyles only what it holds, remove this and keep the test in
   tests/app/test_layout.py, which must pass unchanged.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

log = logging.getLogger(__name__)

# The versions every touch point below was written against and checked with. A touch point
# that replaces or wraps a library's code applies only when that library is this version
# (its wheel's `<name>-<version>.dist-info` beside it: one stat, nothing read): with any
# other, it is skipped, the app runs on the library's own behaviour (slower, but what the
# library itself does), and the log says which points were skipped (`--log FILE`).
CHECKED_AGAINST = {"textual": "8.2.8", "httpcore": "1.0.9"}
SKIPPED: list[str] = []  # the touch points skipped in this process, by name


@functools.cache
def checked_version_installed(package: str) -> bool:
    """Whether `package` is the version its touch points were checked against (or, for
    Textual, the version .ci/try-textual has under trial: BYOK_TUI_TRY_TEXTUAL)."""
    import os

    module = sys.modules.get(package)
    if module is None:
        module = __import__(package)
    where = Path(module.__file__ or "").parent.parent
    trial = os.environ.get("BYOK_TUI_TRY_TEXTUAL") if package == "textual" else None
    return (where / f"{package}-{trial or CHECKED_AGAINST[package]}.dist-info").is_dir()


def _guarded(package: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A touch point that patches `package`, applied only on the version it was checked
    against; skipped (and said, once) otherwise."""

    def wrap(apply: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(apply)
        def guarded(*args: Any, **kwargs: Any) -> None:
            if checked_version_installed(package):
                apply(*args, **kwargs)
                return
            if apply.__name__ not in SKIPPED:
                SKIPPED.append(apply.__name__)
                log.warning(
                    "compat: %s skipped: checked against %s %s, another version is installed",
                    apply.__name__,
                    package,
                    CHECKED_AGAINST[package],
                )

        return guarded

    return wrap


if TYPE_CHECKING:  # imported where used: the UI-free core (providers/) reads point 5 too
    import asyncio
    from collections.abc import Callable, Iterable, Iterator, Sequence

    import httpcore
    import httpx
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown
    from rich.segment import Segment
    from rich.style import Style
    from textual.app import App
    from textual.color import Color
    from textual.events import Resize
    from textual.geometry import Size
    from textual.reactive import Reactive
    from textual.screen import Screen
    from textual.strip import Strip
    from textual.widget import Widget
    from textual.widgets import Footer


def virtual_size_set_by_layout() -> Reactive[Size]:
    """A `virtual_size` that does not ask for another layout when it changes (touch point 1).

    Only for widgets whose virtual size comes from the layout alone: containers and
    auto-height text, never a ScrollView that sets its own.
    """
    from textual.geometry import Size
    from textual.reactive import Reactive

    return Reactive(Size(0, 0), layout=False, repaint=False)


def scroll_in_layout(view: Widget, y: float) -> None:
    """Scroll `view` to `y` now, inside a layout, without a frame at the old place (point 2)."""
    from textual.scrollbar import ScrollBar
    from textual.widget import Widget

    view.set_reactive(Widget.scroll_y, y)
    view.set_reactive(Widget.scroll_target_y, y)
    # Set as Textual's own anchoring sets it, without a repaint now: a repaint asks where
    # the scrollbar is, and mid-layout that placed the whole screen a second time (point
    # 13). The layout that moved the view repaints the scrollbar: the content or the view's
    # height changed, and with them the scrollbar's window.
    view.vertical_scrollbar.set_reactive(ScrollBar.position, y)


def stop_after_crash(app: App[Any], error: Exception) -> None:
    """What Textual does when a handler or worker raises, but print nothing (point 4): exit
    status 1, the exception kept for `run_test` to re-raise, the message loop closed."""
    app._return_code = 1
    if app._exception is None:
        app._exception = error
        app._exception_event.set()
    app._close_messages_no_wait()


def sse_decoders() -> tuple[Any, Any]:
    """httpx-sse's (line decoder, event decoder), new for one stream (point 5)."""
    from httpx_sse._decoders import SSEDecoder, SSELineDecoder

    return SSELineDecoder(), SSEDecoder()


@_guarded("httpcore")
def with_network_backend(
    transport: httpx.AsyncHTTPTransport, backend: httpcore.AsyncNetworkBackend
) -> None:
    """`transport` makes its connections with `backend` (point 20)."""
    transport._pool._network_backend = backend


def recompose_footer_once(footer: Footer, screen: Screen[Any]) -> None:
    """`Footer.bindings_changed`, recomposing once for all the changes made before the next
    refresh (point 6)."""
    footer._bindings_ready = True
    if not screen.app.app_focus or not footer.is_attached or screen is not footer.screen:
        return

    # Each change asks for its own (the first to run recomposes for all): one that waits on
    # a dialog's refresh is lost if the dialog closes first, and must not hold back the rest.
    async def recompose() -> None:
        shown = _footer_keys_shown(footer)
        if shown == getattr(footer, "_keys_composed", None):
            return  # the keys it shows (focus moved between widgets with the same keys)
        footer._keys_composed = shown  # type: ignore[attr-defined]
        await footer.recompose()

    footer.call_after_refresh(recompose)


def _footer_keys_shown(footer: Footer) -> tuple[object, ...]:
    """All that `Footer.compose` reads to make its keys, as it reads it."""
    app = footer.app
    active = footer.screen.active_bindings
    keys = tuple(
        (binding, app.get_key_display(binding), enabled, tooltip)
        for _node, binding, enabled, tooltip in active.values()
        if binding.show
    )
    palette = active.get(app.COMMAND_PALETTE_BINDING)
    palette_key = None if palette is None else (*palette[1:], app.get_key_display(palette[1]))
    return keys, palette_key, footer.show_command_palette, app.ENABLE_COMMAND_PALETTE


@_guarded("textual")
def screens_take_the_terminal_size_only() -> None:
    """Every screen lays itself out at the terminal's size only (point 7); done once."""
    from textual.screen import Screen

    on_resize = Screen._on_resize
    if getattr(on_resize, "terminal_size_only", False):
        return

    async def _on_resize(self: Screen[Any], event: Resize) -> None:
        if event.size != self.app.size:  # an old size: the terminal's own follows it
            event.stop()
            return
        await on_resize(self, event)

    _on_resize.terminal_size_only = True  # type: ignore[attr-defined]
    Screen._on_resize = _on_resize  # type: ignore[method-assign]


@_guarded("textual")
def page_keys_need_lines() -> None:
    """PageDown and PageUp in an option list do nothing until it has lines (point 8); once."""
    from textual.widgets import OptionList

    move_page = OptionList._move_page
    if getattr(move_page, "needs_lines", False):
        return

    def _move_page(self: OptionList, direction: Literal[-1, 1]) -> None:
        if not self.scrollable_content_region:
            return  # no room: no lines made
        with contextlib.suppress(KeyError):  # a line not made yet, as Textual's own guard
            move_page(self, direction)

    _move_page.needs_lines = True  # type: ignore[attr-defined]
    OptionList._move_page = _move_page  # type: ignore[method-assign]


@_guarded("textual")
def timers_tick_at_the_next_interval() -> None:
    """A late timer ticks next at the first of its intervals still to come (point 9); once."""
    from textual import _time
    from textual.timer import EventTargetGone, Timer

    if getattr(Timer._run, "next_interval", False):
        return

    async def _run(self: Timer) -> None:
        count = 0
        repeat, interval = self._repeat, self._interval
        active = cast("asyncio.Event", self._active)  # paused while clear
        await active.wait()
        start = _time.get_time()
        while repeat is None or count <= repeat:
            next_timer = start + (count + 1) * interval
            now = _time.get_time()
            if self._skip and next_timer < now:
                # Ticks missed are dropped; the next is the first interval still to come.
                # (Always forward: a rounding that lands on `now` cannot loop.)
                count = max(count + 1, int((now - start) / interval))
                continue
            await _time.sleep(max(0.0, next_timer - _time.get_time()))
            count += 1
            await active.wait()
            if self._reset:
                start, count, self._reset = _time.get_time(), 0, False
                continue
            try:
                await self._tick(next_timer=next_timer, count=count)
            except EventTargetGone:
                break

    _run.next_interval = True  # type: ignore[attr-defined]
    _run.replaced = Timer._run  # type: ignore[attr-defined]  # for the canary
    Timer._run = _run  # type: ignore[method-assign]


@_guarded("textual")
def input_ends_with_the_terminal() -> None:
    """The terminal's input thread asks the app to exit at the end of its input (point 10)."""
    import os
    import selectors
    from codecs import getincrementaldecoder

    from textual._xterm_parser import XTermParser

    try:
        from textual.drivers.linux_driver import LinuxDriver
    except ImportError:  # no termios: Textual runs its Windows driver
        return

    if getattr(LinuxDriver.run_input_thread, "ends_with_input", False):
        return

    def run_input_thread(self: LinuxDriver) -> None:
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def read_and_dispatch(ready: bool, final: bool = False) -> bool:
            """False once the input has ended."""
            if ready:
                try:
                    data = os.read(self.fileno, 4096)
                except OSError:  # the terminal is gone (EIO)
                    return False
                if not data:  # the end of input; not a character's first bytes, decoding to ""
                    return False
                # Fed only with text: an empty feed tells the parser the input has ended.
                if text := decode(data, final=final):
                    for event in parser.feed(text):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)
            return True

        try:
            while not self.exit_event.is_set():
                if not read_and_dispatch(bool(selector.select(0.1))):
                    # Nothing more will come: end as a hang-up does, then wait to be stopped.
                    with contextlib.suppress(RuntimeError):  # the loop has closed already
                        self._loop.call_soon_threadsafe(self._app.exit)
                    self.exit_event.wait()
                    return
            selector.unregister(self.fileno)
            read_and_dispatch(bool(selector.select(0.1)), final=True)
        finally:
            selector.close()
            with contextlib.suppress(Exception):  # Textual's own: EOFError, ParseError
                for _event in parser.feed(""):
                    pass

    run_input_thread.ends_with_input = True  # type: ignore[attr-defined]
    run_input_thread.replaced = LinuxDriver.run_input_thread  # type: ignore[attr-defined]
    LinuxDriver.run_input_thread = run_input_thread  # type: ignore[method-assign]


@_guarded("textual")
def output_ends_with_the_terminal() -> None:
    """The terminal's writer thread drops what is written once a write fails (point 11)."""
    from textual.drivers._writer_thread import WriterThread

    if getattr(WriterThread.run, "ends_with_output", False):
        return

    def run(self: WriterThread) -> None:
        write, flush, get, qsize = (
            self._file.write,
            self._file.flush,
            self._queue.get,
            self._queue.qsize,
        )
        gone = False  # a write failed: the terminal is gone, what follows can go nowhere
        while (text := get()) is not None:
            if gone:
                continue
            try:
                write(text)
                if qsize() == 0:  # flushed when there is a break, as Textual's
                    flush()
            except OSError:
                gone = True
        if not gone:
            with contextlib.suppress(OSError):
                flush()

    run.ends_with_output = True  # type: ignore[attr-defined]
    run.replaced = WriterThread.run  # type: ignore[attr-defined]  # for the canary
    WriterThread.run = run  # type: ignore[method-assign]


@_guarded("textual")
def layouts_keep_their_map() -> None:
    """A layout leaves the compositor's full map fresh, as it made it (point 13); once."""
    from textual._compositor import Compositor, ReflowResult

    if getattr(Compositor.reflow, "keeps_its_map", False):
        return
    reflow = Compositor.reflow

    def reflow_keeping_its_map(self: Compositor, parent: Widget, size: Size) -> ReflowResult:
        result = reflow(self, parent, size)
        self._full_map_invalidated = False  # what reflow just made is the full map
        return result

    reflow_keeping_its_map.keeps_its_map = True  # type: ignore[attr-defined]
    reflow_keeping_its_map.replaced = reflow  # type: ignore[attr-defined]  # for the canary
    Compositor.reflow = reflow_keeping_its_map  # type: ignore[method-assign]


_parsers = threading.local()


def _rich_markdown_parser() -> MarkdownIt:
    # The parser Rich's Markdown makes for itself, made once a thread: markdown-it does not
    # say that threads may share one (a reply is drawn on the event loop while a thread warms
    # the renderer up).
    parser: MarkdownIt | None = getattr(_parsers, "parser", None)
    if parser is None:
        from markdown_it import MarkdownIt

        parser = _parsers.parser = MarkdownIt().enable("strikethrough").enable("table")
    return parser


@functools.lru_cache(maxsize=4)
def _rich_markdown_template(code_theme: str, hyperlinks: bool) -> Markdown:
    from rich.markdown import Markdown

    return Markdown("", code_theme=code_theme, hyperlinks=hyperlinks)


def markdown_parsed_by_one_parser(markup: str, *, code_theme: str, hyperlinks: bool) -> Markdown:
    """Rich's `Markdown(markup, code_theme=..., hyperlinks=...)`, without making a parser of
    its own (point 12)."""
    markdown = copy.copy(_rich_markdown_template(code_theme, hyperlinks))
    markdown.markup = markup
    markdown.parsed = _rich_markdown_parser().parse(markup)
    return markdown


@_guarded("textual")
def screens_lay_out_once_a_size() -> None:
    """A screen is not laid out again at the size it was last laid out at (point 14); once."""
    from textual.screen import Screen

    if getattr(Screen._screen_resized, "once_a_size", False):
        return
    screen_resized = Screen._screen_resized

    def _screen_resized(self: Screen[Any], size: Size) -> None:
        if size == self._compositor.size:
            return  # laid out at this size: what changed since asks for a layout of its own
        screen_resized(self, size)

    _screen_resized.once_a_size = True  # type: ignore[attr-defined]
    _screen_resized.replaced = screen_resized  # type: ignore[attr-defined]  # for the canary
    Screen._screen_resized = _screen_resized  # type: ignore[method-assign]


@_guarded("textual")
def screens_styled_once_when_first_shown() -> None:
    """A screen shown for the first time is not restyled as a whole (point 15); once."""
    from textual import events
    from textual.screen import Screen

    if getattr(Screen._on_screen_resume, "styled_once", False):
        return
    compose, on_screen_resume = Screen._compose, Screen._on_screen_resume

    async def _compose(self: Screen[Any]) -> None:
        self._byok_styles_at_compose = self.app._css_update_count  # type: ignore[attr-defined]
        await compose(self)

    def _on_screen_resume(self: Screen[Any], event: events.ScreenResume) -> None:
        composed_with = self.__dict__.pop("_byok_styles_at_compose", None)
        if event.refresh_styles and composed_with == self.app._css_update_count:
            event = events.ScreenResume(refresh_styles=False)  # styled as it was mounted
        on_screen_resume(self, event)

    _on_screen_resume.styled_once = True  # type: ignore[attr-defined]
    _on_screen_resume.replaced = on_screen_resume  # type: ignore[attr-defined]  # for the canary
    _compose.replaced = compose  # type: ignore[attr-defined]
    Screen._compose = _compose  # type: ignore[method-assign]
    Screen._on_screen_resume = _on_screen_resume  # type: ignore[method-assign]


@_guarded("textual")
def partial_updates_draw_what_they_show() -> None:
    """A partial update draws only the widgets whose visible part it covers, and only the
    rows of them it covers (point 16); once."""
    from textual._compositor import Compositor
    from textual.geometry import Region

    if getattr(Compositor._get_renders, "what_they_show", False):
        return
    get_renders = Compositor._get_renders

    def _get_renders(
        self: Compositor, crop: Region | None = None
    ) -> Iterator[tuple[Region, Region, list[Strip]]]:
        if crop is None:  # the whole screen: every visible widget
            yield from get_renders(self, crop)
            return
        overlaps = crop.overlaps
        for widget, (region, clip) in self.visible_widgets.items():  # front to back
            shown = region.intersection(clip)
            if overlaps(shown):
                # The rows of it the update covers, each whole (every cut of a line stays
                # where it was); given as the clip, `_render_chops` lays them over those rows.
                top = max(shown.y, crop.y)
                bottom = min(shown.bottom, crop.bottom)
                drawn = Region(shown.x, top, shown.width, bottom - top)
                lines = Region(drawn.x - region.x, top - region.y, drawn.width, drawn.height)
                yield region, drawn, widget.render_lines(lines)

    _get_renders.what_they_show = True  # type: ignore[attr-defined]
    _get_renders.replaced = get_renders  # type: ignore[attr-defined]  # for the canary
    Compositor._get_renders = _get_renders  # type: ignore[method-assign]


@_guarded("textual")
def strips_kept_out_of_cycles() -> None:
    """A strip that is its own division or crop-extension is not cached in itself (point
    17); once."""
    from textual.strip import Strip

    if getattr(Strip.divide, "kept_out_of_cycles", False):
        return
    divide, crop_extend = Strip.divide, Strip.crop_extend

    def _divide(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        length = self.cell_length
        cuts = [cut for cut in cuts if cut <= length]  # as Textual's divide filters them
        if cuts == [length]:
            return [self]
        return divide(self, cuts)

    def _crop_extend(self: Strip, start: int, end: int, style: Style | None) -> Strip:
        if start <= 0 and end == self.cell_length:  # extended to its length and not cropped
            return self
        return crop_extend(self, start, end, style)

    _divide.kept_out_of_cycles = True  # type: ignore[attr-defined]
    _divide.replaced = divide  # type: ignore[attr-defined]  # for the canary
    _crop_extend.replaced = crop_extend  # type: ignore[attr-defined]
    Strip.divide = _divide  # type: ignore[method-assign]
    Strip.crop_extend = _crop_extend  # type: ignore[method-assign]


# Each cache Textual's `Strip.__init__` makes, and its size (point 18).
STRIP_CACHES = {
    "_divide_cache": 4,
    "_crop_cache": 16,
    "_style_cache": 16,
    "_filter_cache": 4,
    "_line_length_cache": 4,
    "_crop_extend_cache": 4,
    "_offsets_cache": 4,
}


class _CacheMadeWhenRead:
    """One of a strip's cache slots, whose FIFOCache is made the first time it is read."""

    __slots__ = ("_make", "_slot")

    def __init__(self, slot: Any, make: Callable[[], Any]) -> None:
        self._slot = slot  # the slot's own descriptor, which holds the cache once made
        self._make = make

    def __get__(self, strip: Strip | None, owner: type | None = None) -> Any:
        if strip is None:
            return self
        try:
            return self._slot.__get__(strip, owner)
        except AttributeError:  # not read before
            cache = self._make()
            self._slot.__set__(strip, cache)
            return cache

    def __set__(self, strip: Strip, value: Any) -> None:
        self._slot.__set__(strip, value)


@_guarded("textual")
def strips_make_their_caches_when_used() -> None:
    """A strip makes each of its caches the first time it uses it (point 18); once."""
    from textual.cache import FIFOCache
    from textual.strip import Strip

    if getattr(Strip.__init__, "caches_when_used", False):
        return
    init = Strip.__init__
    for name, size in STRIP_CACHES.items():
        made = functools.partial(FIFOCache, size)
        setattr(Strip, name, _CacheMadeWhenRead(Strip.__dict__[name], made))

    def __init__(self: Strip, segments: Iterable[Segment], cell_length: int | None = None) -> None:
        self._segments = list(segments)
        self._cell_length = cell_length
        self._render_cache = None
        self._link_ids = None
        self._cell_count = None

    __init__.caches_when_used = True  # type: ignore[attr-defined]
    __init__.replaced = init  # type: ignore[attr-defined]  # for the canary
    Strip.__init__ = __init__  # type: ignore[method-assign]


@_guarded("textual")
def layouts_ask_no_layout_for_the_sizes_they_set() -> None:
    """A widget's virtual size, set by a layout, asks for no other layout (point 28); once.
    Beneath point 19, which reads whether a layout is what sized the widget."""
    from textual.widget import Widget

    current: Any = Widget._size_updated
    point_19 = getattr(current, "left_to_the_layout", False)
    if getattr(current.replaced if point_19 else current, "sets_sizes_quietly", False):
        return
    if point_19:  # installed already, around Textual's own: this goes in beneath it
        Widget._size_updated = current.replaced  # type: ignore[method-assign]
    size_updated = Widget._size_updated

    # Textual's own, told what it is told for a scroll's exposed widgets: set the virtual
    # size without asking for a layout; all else it does the same. (A ScrollView, whose
    # virtual size is its own, has its own `_size_updated`: left as it is.) What the ask did
    # to the arrangements kept above the widget is still done: they may hold widgets gone
    # since (the footer's keys of the last change of focus, with all they drew), and a new
    # list of children is arranged anew beside them, not in their place.
    def _size_updated(
        self: Widget, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        if layout and type(self).virtual_size._layout and virtual_size != self.virtual_size:
            for ancestor in self.ancestors:
                if not isinstance(ancestor, Widget):
                    break
                ancestor._clear_arrangement_cache()
                if not ancestor.styles.auto_dimensions:
                    break
        return size_updated(self, size, virtual_size, container_size, False)

    _size_updated.sets_sizes_quietly = True  # type: ignore[attr-defined]
    _size_updated.replaced = size_updated  # type: ignore[attr-defined]  # for the canary
    Widget._size_updated = _size_updated  # type: ignore[method-assign]
    if point_19:
        layouts_draw_what_they_resize()


@_guarded("textual")
def layouts_draw_what_they_resize() -> None:
    """A widget resized by a layout, and its scrollbars, ask for no repaint of their own
    when the layout's frame redraws them (point 19); once."""
    from textual.widget import Widget

    if getattr(Widget._size_updated, "left_to_the_layout", False):
        return
    size_updated = Widget._size_updated

    def _size_updated(
        self: Widget, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        resized = layout and size != self._size
        changed = size_updated(self, size, virtual_size, container_size, layout)
        if changed and layout and (resized or self.is_scrollable):
            _drawn_by_the_layout(self, resized)
        return changed

    _size_updated.left_to_the_layout = True  # type: ignore[attr-defined]
    _size_updated.replaced = size_updated  # type: ignore[attr-defined]  # for the canary
    Widget._size_updated = _size_updated  # type: ignore[method-assign]


def _drawn_by_the_layout(widget: Widget, resized: bool) -> None:
    """Drop the repaints `widget` (when `resized`) and its scrollbars asked for in this
    layout when the frame that follows it redraws their whole region (a layout of the top
    screen, drawn at once)."""
    from textual.errors import NoWidget

    screen = widget.screen
    app = widget.app
    if app.is_inline or app._batch_count or screen is not app.screen:
        return
    redrawn = screen._compositor._dirty_regions

    def shown_and_redrawn(shown: Widget) -> bool:
        try:
            placed = screen.find_widget(shown)
        except NoWidget:  # not placed: nothing of it on screen
            return False
        visible = placed.region.intersection(placed.clip)
        return any(dirty.contains_region(visible) for dirty in redrawn)

    if resized and widget._repaint_regions and shown_and_redrawn(widget):
        widget._repaint_regions.clear()
    for bar in (widget._vertical_scrollbar, widget._horizontal_scrollbar):
        if bar is not None and bar._repaint_required and shown_and_redrawn(bar):
            bar._repaint_required = False


@_guarded("textual")
def opaque_screens_hide_those_under_them() -> None:
    """No screen shows under a top screen whose background is opaque (point 21); once."""
    from textual.app import App

    listed = cast(property, App.__dict__["_background_screens"])
    if getattr(listed.fget, "opaque_hides", False):
        return
    background_screens = cast("Callable[[App[Any]], list[Screen[Any]]]", listed.fget)

    def _background_screens(self: App[Any]) -> list[Screen[Any]]:
        stack = self._screen_stack
        if stack and stack[-1].styles.background.a == 1:
            return []  # nothing under it is seen: it is neither laid out nor drawn
        return background_screens(self)

    _background_screens.opaque_hides = True  # type: ignore[attr-defined]
    _background_screens.replaced = background_screens  # type: ignore[attr-defined]
    App._background_screens = property(_background_screens)  # type: ignore[method-assign,assignment]


@_guarded("textual")
def styles_caches_let_go() -> None:
    """The styles cache of a widget that is gone is not kept by Textual's class-wide cache
    of background styles (point 22); once."""
    from textual._styles_cache import StylesCache

    held_by_instance = StylesCache.__dict__["get_inner_outer"]
    if getattr(held_by_instance, "lets_go", False):
        return
    make_styles = held_by_instance.__wrapped__  # reads only its two colours

    @functools.lru_cache(1024)
    def by_colours(base_background: Color, background: Color) -> tuple[Style, Style]:
        return cast("tuple[Style, Style]", make_styles(None, base_background, background))

    def get_inner_outer(
        self: StylesCache, base_background: Color, background: Color
    ) -> tuple[Style, Style]:
        return by_colours(base_background, background)

    get_inner_outer.lets_go = True  # type: ignore[attr-defined]
    get_inner_outer.replaced = held_by_instance  # type: ignore[attr-defined]  # for the canary
    StylesCache.get_inner_outer = get_inner_outer  # type: ignore[method-assign,assignment]
    held_by_instance.cache_clear()  # the caches held so far go too


@_guarded("textual")
def watchers_go_with_their_node() -> None:
    """The watchers a node set on other objects go when it is removed (point 23); once."""
    from textual.dom import DOMNode
    from textual.widget import Widget

    if getattr(DOMNode.watch, "forgotten_with_node", False):
        return
    watch, message_loop_exit = DOMNode.watch, Widget._message_loop_exit

    def _watch(
        self: DOMNode, obj: DOMNode, attribute_name: str, callback: Any, init: bool = True
    ) -> None:
        watch(self, obj, attribute_name, callback, init)
        if obj is not self:  # its own watchers go with it (`Reactive._clear_watchers`)
            self.__dict__.setdefault("_watching", []).append((obj, attribute_name, callback))

    async def _message_loop_exit(self: Widget) -> None:
        await message_loop_exit(self)
        for watched, attribute_name, callback in self.__dict__.pop("_watching", ()):
            held = getattr(watched, "__watchers", {}).get(attribute_name)
            if held:
                held[:] = [
                    (node, kept) for node, kept in held if node is not self or kept != callback
                ]

    _watch.forgotten_with_node = True  # type: ignore[attr-defined]
    _watch.replaced = watch  # type: ignore[attr-defined]  # for the canary
    _message_loop_exit.replaced = message_loop_exit  # type: ignore[attr-defined]
    DOMNode.watch = _watch  # type: ignore[method-assign]
    Widget._message_loop_exit = _message_loop_exit  # type: ignore[method-assign]


@_guarded("textual")
def footer_keys_styled_once() -> None:
    """The footer's keys start as the footer does, not compact (point 24); once."""
    from textual.reactive import reactive
    from textual.widgets import _footer

    if getattr(_footer.FooterKey, "styled_once", False):
        return

    class FooterKey(_footer.FooterKey):  # the same name: CSS and queries read it alike
        compact = reactive(False)
        styled_once = True
        replaced = _footer.FooterKey  # for the canary

        def __init__(
            self,
            key: str,
            key_display: str,
            description: str,
            action: str,
            disabled: bool = False,
            tooltip: str = "",
            classes: str = "",
        ) -> None:
            # The command palette's key is the one Textual does not bind to the footer's
            # `compact`: it stays compact, as Textual's default made it, class and all.
            unbound = "-command-palette" in classes.split()
            classes = f"{classes} -compact" if unbound else classes
            super().__init__(key, key_display, description, action, disabled, tooltip, classes)
            if unbound:
                self.set_reactive(FooterKey.compact, True)

    _footer.FooterKey = FooterKey  # type: ignore[misc]


@_guarded("textual")
def widgets_going_away_keep_their_styles() -> None:
    """A widget being removed is not restyled as it loses the focus (point 26); once."""
    from textual.widget import Widget

    if getattr(Widget.watch_has_focus, "skips_the_removed", False):
        return
    watch_has_focus = Widget.watch_has_focus

    def _watch_has_focus(self: Widget, has_focus: bool) -> None:
        if not self._pruning:  # going: none of it is drawn again
            watch_has_focus(self, has_focus)

    _watch_has_focus.skips_the_removed = True  # type: ignore[attr-defined]
    _watch_has_focus.replaced = watch_has_focus  # type: ignore[attr-defined]  # for the canary
    Widget.watch_has_focus = _watch_has_focus  # type: ignore[method-assign,assignment]


@_guarded("textual")
def new_stylesheets_parsed_alone() -> None:
    """A screen's CSS read as it is pushed is parsed alone, and restyles only the widgets its
    rules may style (point 27); once."""
    from textual.app import App
    from textual.dom import DOMNode

    if getattr(App._load_screen_css, "parses_alone", False):
        return
    load_screen_css = App._load_screen_css

    def _load_screen_css(self: App[Any], screen: Screen[Any]) -> None:
        stylesheet = self.stylesheet
        known = set(stylesheet.source)

        def restyle_what_it_names(root: DOMNode, animate: bool = False) -> None:
            names: set[str] = set()
            for read_from, (css, is_default, tie_breaker, scope) in stylesheet.source.items():
                if read_from not in known and css not in stylesheet._invalid_css:
                    rules = stylesheet._parse_rules(css, read_from, is_default, tie_breaker, scope)
                    names.update(*(rule.selector_names for rule in rules))
            named = [
                node
                for node in root.walk_children(with_self=True)
                if not names.isdisjoint(node._selector_names)
            ]
            stylesheet.update_nodes(named, animate=animate)

        stylesheet.reparse = stylesheet.parse  # type: ignore[method-assign]  # from its cache
        stylesheet.update = restyle_what_it_names  # type: ignore[method-assign]
        try:
            load_screen_css(self, screen)
        finally:
            del stylesheet.reparse, stylesheet.update

    _load_screen_css.parses_alone = True  # type: ignore[attr-defined]
    _load_screen_css.replaced = load_screen_css  # type: ignore[attr-defined]  # for the canary
    App._load_screen_css = _load_screen_css  # type: ignore[method-assign]


@_guarded("textual")
def layouts_place_only_their_part() -> None:
    """A layout whose changes all lie inside one widget of fixed size places that widget's
    part of the screen alone (point 25); once."""
    from textual.screen import Screen

    if getattr(Screen._refresh_layout, "only_their_part", False):
        return
    layouts_keep_their_map()  # a part is placed into a full map that a layout left fresh
    refresh_layout = Screen._refresh_layout

    def _refresh_layout(self: Screen[Any], size: Size | None = None, scroll: bool = False) -> None:
        # A size given (a resize, a screen resumed, new styles) or a scroll waiting: whole.
        part = None if size is not None or scroll else _the_part_laid_out(self)
        # This layout's reflow, on this compositor alone (Textual's own stays as it is); a
        # layout within it (a handler it calls) has its own, and gives this one back.
        held = self._compositor.__dict__
        outer = held.get("reflow")
        held["reflow"] = functools.partial(_reflow, self._compositor, part)
        try:
            refresh_layout(self, size, scroll)
        finally:
            if outer is None:
                held.pop("reflow", None)
            else:
                held["reflow"] = outer

    _refresh_layout.only_their_part = True  # type: ignore[attr-defined]
    _refresh_layout.replaced = refresh_layout  # type: ignore[attr-defined]  # for the canary
    Screen._refresh_layout = _refresh_layout  # type: ignore[method-assign]


def _reflow(compositor: Any, part: Widget | None, parent: Widget, size: Size) -> Any:
    """`Compositor.reflow` for a layout of `part` alone where that can be done (point 25),
    else Textual's (point 13's); what each widget placed was placed from, kept for the next."""
    placed = None
    if part is not None and parent is compositor.root and size == compositor.size:
        placed = reflow_part(compositor, part)
    if placed is None:
        placed = type(compositor).reflow(compositor, parent, size)
    compositor.__dict__["_byok_placed_from"] = (
        compositor._full_map,
        _placed_from(compositor._full_map),
    )
    return placed


def _the_part_laid_out(screen: Screen[Any]) -> Widget | None:
    """The one widget of fixed size that every change waiting for a layout lies inside
    (where Textual stopped walking up from each), or None: the whole screen."""
    from textual.widget import Widget

    waiting = screen._layout_widgets  # each ancestor walked up to, and what it holds
    tops = [node for node in waiting if not any(up in waiting for up in node.ancestors)]
    if len(tops) != 1:
        return None
    top = tops[0]
    if top is screen or not isinstance(top, Widget) or top.styles.auto_dimensions:
        return None
    return top


def _placed_from(placed: dict[Widget, Any]) -> dict[Widget, tuple[object, ...]]:
    """What each widget's place was worked out from: its children (Textual counts each change
    of them, and of their children, on the node list), the layouts asked of it, its styles,
    its scroll offset. A widget outside the part whose figures changed since means that a
    change there has not asked for its layout yet: the whole screen is laid out."""
    return {
        widget: (
            widget._nodes._updates,
            widget._layout_updates,
            widget.styles._cache_key,
            widget._is_mounted,
            widget._parent,
            widget.scroll_offset,
        )
        for widget in placed
    }


def _inside(widget: Widget, part: Widget) -> bool:
    node: Any = widget
    while node is not None:
        if node is part:
            return True
        node = node._parent
    return False


def reflow_part(compositor: Any, part: Widget) -> Any:
    """`Compositor.reflow` for `part` alone (point 25): its widgets placed by Textual's
    `_arrange_root` as if it were the screen, then moved to where it is. None where that
    cannot be the same as a full layout (the caller lays out the whole screen)."""
    from textual._compositor import ReflowResult
    from textual.map_geometry import MapGeometry
    from textual.scrollbar import ScrollBar, ScrollBarCorner

    chrome = (ScrollBar, ScrollBarCorner)

    old_map = compositor._full_map
    placed = old_map.get(part)
    if compositor._full_map_invalidated or placed is None or part not in compositor.widgets:
        return None
    map_then, figures_then = compositor.__dict__.get("_byok_placed_from", (None, {}))
    if map_then is not old_map:  # made since by `full_map`, from what we never saw
        return None
    region, order, clip, _, _, virtual_region, dock_gutter = placed
    if len(order) < 2 or not clip.contains_region(region):  # an overlay, or partly hidden
        return None
    depth = len(order)  # each widget of the part, and its scrollbars, painted after its order
    old_part = {w: geometry for w, geometry in old_map.items() if geometry.order[:depth] == order}
    figures_now = _placed_from({widget: None for widget in old_map if widget not in old_part})
    if any(figures_then.get(widget) != figures for widget, figures in figures_now.items()):
        return None
    part_map, part_widgets = compositor._arrange_root(part, region.size, visible_only=False)
    offset = region.offset
    shift = order[-1][2]  # the part's place among its siblings, counted down from there
    new: dict[Widget, Any] = {}
    for widget, geometry in part_map.items():
        at, painted, clipped, virtual_size, container_size, virtual, gutter = geometry
        styles = widget.styles
        if painted[0] != (0, 0, 0) or widget.absolute_offset is not None:
            return None  # an overlay or an offset: placed against the whole screen
        if styles.has_any_rules("constrain_x", "constrain_y"):
            return None
        if isinstance(widget, chrome):  # a scrollbar's virtual region is its region
            virtual = virtual.translate(offset)
        elif widget is part:
            virtual = virtual_region
        elif len(painted) == 1:
            return None
        if len(painted) == 1:  # the part itself and its scrollbars, as their parent had them
            painted, clipped, gutter = order, clip, dock_gutter
        else:
            painted = order + tuple((layer, z, count + shift) for layer, z, count in painted[1:])
            clipped = clipped.translate(offset)  # the part wholly in its clip: theirs is its own
        new[widget] = MapGeometry(
            at.translate(offset), painted, clipped, virtual_size, container_size, virtual, gutter
        )
    was_shown = {
        widget
        for widget in compositor.widgets
        if widget in old_part or (widget not in old_map and _inside(widget, part))
    }
    compositor._cuts = compositor._layers = compositor._layers_visible = None
    compositor._visible_widgets = compositor._visible_map = None
    for widget in old_part:
        del old_map[widget]
    old_map.update(new)  # the full map: every other widget where it was
    compositor.widgets = (compositor.widgets - was_shown) | part_widgets
    changes = new.items() ^ old_part.items()
    if compositor.size.region not in compositor._dirty_regions:
        compositor._dirty_regions.update(
            shown
            for shown in (geometry.clip.intersection(geometry.region) for _, geometry in changes)
            if shown
        )
    resized = {
        widget
        for widget, geometry in changes
        if widget in old_part
        and widget in new
        and old_part[widget].region.size != geometry.region.size
    }
    return ReflowResult(
        hidden=was_shown - part_widgets, shown=new.keys() - old_part.keys(), resized=resized
    )


@_guarded("textual")
def editing_keys_keep_their_order() -> None:
    """A field's own bound keys act as they reach it, in order with the characters typed
    around them (point 29); once."""
    from textual import events
    from textual.widgets import Input, TextArea

    for field in (Input, TextArea):
        on_key = field.__dict__["_on_key"]
        if getattr(on_key, "in_order", False):
            continue

        # Textual's own first (a character, Enter, Tab); a key it leaves is one of the field's
        # bindings here, as the app would find it first in the chain once the key bubbled.
        async def _on_key(
            self: Widget, event: events.Key, on_key: Callable[..., Any] = on_key
        ) -> None:
            await on_key(self, event)
            if event._stop_propagation or event._no_default_action:
                return
            for binding in self._bindings.key_to_bindings.get(event.key, ()):
                if not binding.priority and await self.app.run_action(binding.action, self):
                    event.stop()
                    event.prevent_default()
                    return

        _on_key.in_order = True  # type: ignore[attr-defined]
        _on_key.replaced = on_key  # type: ignore[attr-defined]  # for the canary
        field._on_key = _on_key  # type: ignore[method-assign]


@_guarded("textual")
def widgets_styled_as_they_mount() -> None:
    """A class set on a widget not yet in the app restyles nothing (point 31); once."""
    from textual.dom import DOMNode

    if getattr(DOMNode.update_node_styles, "waits_for_the_dom", False):
        return
    update_node_styles = DOMNode.update_node_styles

    def _update_node_styles(self: DOMNode, animate: bool = True) -> None:
        if self.is_attached:  # else it is styled whole as it mounts
            update_node_styles(self, animate=animate)

    _update_node_styles.waits_for_the_dom = True  # type: ignore[attr-defined]
    _update_node_styles.replaced = update_node_styles  # type: ignore[attr-defined]  # canary
    DOMNode.update_node_styles = _update_node_styles  # type: ignore[method-assign]


@_guarded("textual")
def frames_write_only_what_changed() -> None:
    """Each frame written to a terminal writes only the cells it changes (point 30); once."""
    from textual.app import App

    display = App.__dict__["_display"]
    if getattr(display, "writes_changes_only", False):
        return

    def _display(self: App[Any], screen: Screen[Any], renderable: Any) -> None:
        if not _written_as_it_is(self, renderable):
            renderable = _changes_only(self, renderable)
        display(self, screen, renderable)

    _display.writes_changes_only = True  # type: ignore[attr-defined]
    _display.replaced = display  # type: ignore[attr-defined]  # for the canary
    App._display = _display  # type: ignore[method-assign]


def _written_as_it_is(app: Any, renderable: Any) -> bool:
    """Whether `App._display` writes `renderable` whole: anything but a frame of the
    compositor written to a full-screen terminal (and whatever it writes but such a frame,
    the cells it knows are forgotten). None, a batch under way, a headless or stopped app
    write nothing: what they leave is kept."""
    from textual._compositor import ChopsUpdate, LayoutUpdate

    driver = app._driver
    if (
        renderable is None
        or app._batch_count
        or not app._running
        or app._closed
        or app.is_headless
        or driver is None
    ):
        return True
    if driver.is_inline or not isinstance(renderable, ChopsUpdate | LayoutUpdate):
        forget_written_cells(app)
        return True
    return False


def _changes_only(app: Any, update: Any) -> Any:
    """`update` (a ChopsUpdate or LayoutUpdate), as the pieces of it that change cells."""
    from textual._compositor import LayoutUpdate

    from byok_tui.core.written_cells import WrittenCells

    cells = app.__dict__.get("_written_cells")
    if cells is None or (cells.width, cells.height) != tuple(app.size):
        cells = app._written_cells = WrittenCells(*app.size)
        _forget_when_the_terminal_starts_again(app._driver)
    pieces = _pieces(update) if isinstance(update, LayoutUpdate) else _chops(update)
    written: list[tuple[int, int, Strip]] = []
    for x, y, strip in pieces:
        width = strip.cell_length
        changed = cells.changed(x, y, *_cells_of(strip), width)
        if changed is None:
            continue
        start, end = changed
        written.append(
            (x + start, y, strip if (start, end) == (0, width) else strip.crop(start, end))
        )
    return _changes_only_update()(written)


# The cells of the strips read lately, by the strip's id (the strip kept, so the id is its
# own): a widget hands the same strip for a line it has not changed, frame after frame.
_cells_read: dict[int, tuple[Strip, str | None, list[object]]] = {}


def _cells_of(strip: Strip) -> tuple[str | None, list[object]]:
    """The characters of `strip`, one a cell, and each cell's style; None for the text when
    a character is not one cell wide or a segment is a control (written whole, never
    judged: a width the terminal may see otherwise)."""
    read = _cells_read.get(id(strip))
    if read is not None and read[0] is strip:
        return read[1], read[2]
    if len(_cells_read) >= 512:  # a frame writes ~100-300 pieces at 120x40
        _cells_read.clear()
    text, styles = _cells_read_from(strip)
    _cells_read[id(strip)] = (strip, text, styles)
    return text, styles


def _cells_read_from(strip: Strip) -> tuple[str | None, list[object]]:
    from rich.cells import get_character_cell_size

    texts: list[str] = []
    styles: list[object] = []
    for text, style, control in strip:
        if control or not (text.isascii() or all(get_character_cell_size(c) == 1 for c in text)):
            return None, styles
        texts.append(text)
        styles += [style] * len(text)
    return "".join(texts), styles


@functools.cache
def _changes_only_update() -> type[Any]:
    """The frame `_changes_only` gives `App._display`: a CompositorUpdate, so that the cursor
    is put back after it as after any frame. Made once, when first needed (the UI-free core
    imports this module too)."""
    from rich.control import Control
    from textual._compositor import CompositorUpdate

    move_to = Control.move_to

    class ChangesOnly(CompositorUpdate):
        def __init__(self, written: list[tuple[int, int, Strip]]) -> None:
            self.written = written

        def render_segments(self, console: Any) -> str:
            return "".join(
                move_to(x, y).segment.text + strip.render(console) for x, y, strip in self.written
            )

    return ChangesOnly


def _pieces(update: Any) -> Iterator[tuple[int, int, Strip]]:
    """What a LayoutUpdate writes: each line's strips, one after the other from its region's
    left edge (`LayoutUpdate.render_segments`)."""
    for y, line in enumerate(update.strips, update.region.y):
        x = update.region.x
        for strip in line:
            yield x, y, strip
            x += strip.cell_length


def _chops(update: Any) -> Iterator[tuple[int, int, Strip]]:
    """What a ChopsUpdate writes: the chops within each line's span, the last cut at the
    span's end (`ChopsUpdate.render_segments`)."""
    for y, x1, x2 in update.spans:
        for end, (x, strip) in zip(update.chop_ends[y], update.chops[y].items(), strict=False):
            if strip is None or x > x2 or end <= x1:
                continue
            if x2 > x >= x1 and end <= x2:
                yield x, y, strip
            else:
                yield x, y, strip.crop(0, min(end, x2) - x)


def forget_written_cells(app: App[Any]) -> None:
    """The next frame writes every cell it draws (point 30): the terminal may show something
    else (ctrl+l, Redraw)."""
    cells = app.__dict__.get("_written_cells")
    if cells is not None:
        cells.forget()


def _forget_when_the_terminal_starts_again(driver: Any) -> None:
    """Application mode started again (after a suspend, or SIGCONT) may leave the terminal
    showing anything: what the app wrote before is forgotten."""
    kind = type(driver)
    start = kind.start_application_mode
    if getattr(start, "forgets_cells", False):
        return

    def start_application_mode(self: Any) -> None:
        forget_written_cells(self._app)
        start(self)

    start_application_mode.forgets_cells = True  # type: ignore[attr-defined]
    start_application_mode.replaced = start  # type: ignore[attr-defined]
    kind.start_application_mode = start_application_mode


def every_touch_point_of_the_app() -> None:
    """Every touch point the app applies as it is made, in the order they must go; each
    applies once a process (and only on the version it was checked against)."""
    screens_take_the_terminal_size_only()
    page_keys_need_lines()
    timers_tick_at_the_next_interval()
    input_ends_with_the_terminal()
    output_ends_with_the_terminal()
    layouts_keep_their_map()
    screens_lay_out_once_a_size()
    screens_styled_once_when_first_shown()
    partial_updates_draw_what_they_show()
    strips_kept_out_of_cycles()
    strips_make_their_caches_when_used()
    layouts_ask_no_layout_for_the_sizes_they_set()  # before point 19, which wraps it
    layouts_draw_what_they_resize()
    opaque_screens_hide_those_under_them()
    styles_caches_let_go()
    watchers_go_with_their_node()
    layouts_place_only_their_part()
    widgets_going_away_keep_their_styles()
    new_stylesheets_parsed_alone()
    widgets_styled_as_they_mount()
    frames_write_only_what_changed()
    editing_keys_keep_their_order()
