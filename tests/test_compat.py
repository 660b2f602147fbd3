"""Canaries: one per place byok-tui relies on Textual, Rich, httpx or httpx-sse internals
(byok_tui/compat.py).

After an upgrade, `pytest -m internals` says at once which reliance broke, by name, before the
behaviour tests that depend on it fail in less obvious ways.
"""

from __future__ import annotations

import contextlib
import inspect
import io
from collections.abc import Callable
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import Footer as TextualFooter
from textual.widgets import Static

from byok_tui.compat import (
    editing_keys_keep_their_order,
    footer_keys_styled_once,
    frames_write_only_what_changed,
    input_ends_with_the_terminal,
    layouts_ask_no_layout_for_the_sizes_they_set,
    layouts_draw_what_they_resize,
    layouts_keep_their_map,
    layouts_place_only_their_part,
    markdown_parsed_by_one_parser,
    new_stylesheets_parsed_alone,
    opaque_screens_hide_those_under_them,
    output_ends_with_the_terminal,
    page_keys_need_lines,
    partial_updates_draw_what_they_show,
    screens_lay_out_once_a_size,
    screens_styled_once_when_first_shown,
    screens_take_the_terminal_size_only,
    scroll_in_layout,
    sse_decoders,
    stop_after_crash,
    strips_kept_out_of_cycles,
    strips_make_their_caches_when_used,
    styles_caches_let_go,
    timers_tick_at_the_next_interval,
    virtual_size_set_by_layout,
    watchers_go_with_their_node,
    widgets_going_away_keep_their_styles,
    widgets_styled_as_they_mount,
    with_network_backend,
)
from byok_tui.widgets.following_scroll import FollowingScroll
from byok_tui.widgets.footer import Footer
from byok_tui.widgets.transcript import Transcript
from tests.support.pilot import wait_for

# Canaries: several check what a touch point changes in what frames draw.
pytestmark = [pytest.mark.internals, pytest.mark.draws]


def original_once(install: Callable[[], None], owner: type, name: str) -> Any:
    """Install a fix twice: `owner.name` is replaced once; what it replaced (the canary
    reads it)."""
    install()
    replaced = getattr(owner, name)
    install()
    assert getattr(owner, name) is replaced, f"{owner.__name__}.{name} was replaced twice"
    return replaced.replaced


def test_1_virtual_size_is_a_reactive_a_widget_may_redeclare() -> None:
    assert isinstance(Widget.__dict__.get("virtual_size") or Widget.virtual_size, Reactive)
    redeclared = virtual_size_set_by_layout()
    assert redeclared._layout is False and redeclared._repaint is False


class Tall(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("\n".join(str(n) for n in range(200)))


async def test_2_a_scroll_set_in_layout_moves_the_view_and_its_scrollbar() -> None:
    app = Tall()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        view = app.query_one(VerticalScroll)
        scroll_in_layout(view, 50)
        assert view.scroll_y == 50 and view.scroll_target_y == 50
        assert view.vertical_scrollbar.position == 50
        await pilot.pause()
        assert view.scroll_y == 50


def test_3_arrange_is_still_the_layout_hook_the_transcript_overrides() -> None:
    """Should Textual rename `arrange` again, the override would silently stop following."""
    assert "arrange" in FollowingScroll.__dict__ and issubclass(Transcript, FollowingScroll)
    ours = list(inspect.signature(FollowingScroll.arrange).parameters)
    theirs = list(inspect.signature(Widget.arrange).parameters)
    assert ours == theirs == ["self", "size", "optimal"]


async def test_4_a_crash_stops_the_app_with_status_1_and_the_error_kept() -> None:
    app = Tall()
    error = RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom"):  # run_test re-raises what stopped it
        async with app.run_test() as pilot:
            await pilot.pause()
            for name in ("_return_code", "_exception", "_exception_event"):
                assert hasattr(app, name), name
            stop_after_crash(app, error)
            await pilot.pause()
    assert app.return_code == 1
    assert app._exception is error


def test_5_httpx_sse_decoders_split_lines_and_assemble_events() -> None:
    lines, events = sse_decoders()
    decoded = [
        event
        for line in [*lines.decode('event: a\ndata: {"x"\r\ndata: :1}\n\n'), *lines.flush()]
        if (event := events.decode(line)) is not None
    ]
    assert [(e.event, e.data) for e in decoded] == [("a", '{"x"\n:1}')]
    assert hasattr(lines, "buffer")


class WithFooter(App[None]):
    BINDINGS = [("ctrl+t", "app.bell", "Ring")]

    def compose(self) -> ComposeResult:
        yield Footer()


async def test_6_changes_of_bindings_before_a_refresh_recompose_the_footer_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Textual's Footer still learns of new bindings through `bindings_changed(screen)` and
    composes its keys only once `_bindings_ready` is set, from the screen's `active_bindings`
    (each a node, a binding, whether enabled, a tooltip); ours recomposes once for several,
    and not at all when the keys it would show are those it shows."""
    assert list(inspect.signature(TextualFooter.bindings_changed).parameters) == ["self", "screen"]
    assert "_bindings_ready" in inspect.getsource(TextualFooter.compose)
    recomposes: list[int] = []
    recompose = Footer.recompose

    async def counted(self: Footer) -> None:
        recomposes.append(1)
        await recompose(self)

    monkeypatch.setattr(Footer, "recompose", counted)
    app = WithFooter()
    async with app.run_test(size=(60, 5)) as pilot:
        await wait_for(pilot, lambda: bool(app.query("FooterKey")))  # the start's recompose
        await pilot.pause()
        assert "active_bindings" in inspect.getsource(TextualFooter.compose)
        recomposes.clear()
        shown = list(app.query("FooterKey"))
        app.screen.bindings_updated_signal.publish(app.screen)  # announced, nothing changed
        await pilot.pause()
        await pilot.pause()
        assert recomposes == [] and list(app.query("FooterKey")) == shown
        app.bind("ctrl+y", "app.quit", description="Again")
        for _ in range(4):  # four changes announced before the next refresh
            app.screen.bindings_updated_signal.publish(app.screen)
        await pilot.pause()
        await pilot.pause()
        assert len(recomposes) == 1
        drawn = " ".join(str(key.render()) for key in app.query("FooterKey"))
        assert "Ring" in drawn and "Again" in drawn


async def test_6_a_footer_whose_recompose_was_lost_with_a_closed_dialog_still_follows() -> None:
    """A footer's recompose waits for a refresh of the screen that is current when it is
    asked (`call_after_refresh`): a dialog over the footer's screen, closed before its next
    refresh, takes that recompose with it. The changes after it must still reach the footer,
    as they do with Textual's own. Ours waited for the lost one for ever: the chat's footer
    kept the keys it had before a tool's approval dialog, whatever held the focus after."""
    from textual.screen import ModalScreen

    class ClosedBeforeItsRefresh(ModalScreen[None]):
        def _invoke_later(self, callback: object, sender: object) -> None:
            pass  # what was left to its next refresh never runs

    app = WithFooter()
    async with app.run_test(size=(60, 5)) as pilot:
        await wait_for(pilot, lambda: bool(app.query("FooterKey")))  # the start's recompose
        under = app.screen
        await app.push_screen(ClosedBeforeItsRefresh())
        await pilot.pause()
        app.bind("ctrl+y", "app.quit", description="Again")
        under.refresh_bindings()  # asked while the dialog is current: lost with it
        await pilot.pause()
        await app.pop_screen()
        await wait_for(pilot, lambda: app.screen is under)
        app.bind("ctrl+e", "app.screenshot", description="Later")
        under.refresh_bindings()
        drawn = lambda: " ".join(str(key.render()) for key in under.query("FooterKey"))  # noqa: E731
        await wait_for(pilot, lambda: "Later" in drawn(), timeout=3)
        assert "Again" in drawn()


def test_7_a_screen_is_still_resized_by_its_own_on_resize_handler() -> None:
    """Textual still lays a screen out in `Screen._on_resize(self, event)` (through
    `_screen_resized`); ours passes over an old size first, and wraps it once."""
    from textual.screen import Screen

    screens_take_the_terminal_size_only()
    wrapped = Screen._on_resize
    screens_take_the_terminal_size_only()
    assert Screen._on_resize is wrapped
    assert inspect.iscoroutinefunction(wrapped)
    original = inspect.getclosurevars(wrapped).nonlocals["on_resize"]
    assert list(inspect.signature(original).parameters) == ["self", "event"]
    assert "_screen_resized(event.size)" in inspect.getsource(original)


def test_8_the_page_keys_of_an_option_list_still_move_through_move_page() -> None:
    """Textual's OptionList still pages in `_move_page(self, direction)`, looking up
    `_index_to_line`; ours does nothing while there are no lines, and wraps it once."""
    from textual.widgets import OptionList

    page_keys_need_lines()
    wrapped = OptionList._move_page
    page_keys_need_lines()
    assert OptionList._move_page is wrapped
    original = inspect.getclosurevars(wrapped).nonlocals["move_page"]
    assert list(inspect.signature(original).parameters) == ["self", "direction"]
    assert "_index_to_line[" in inspect.getsource(original)
    assert "_move_page(1)" in inspect.getsource(OptionList.action_page_down)


def test_9_a_timer_still_runs_its_ticks_in_run() -> None:
    """Textual's Timer still runs in `_run(self)`, ticking through `_tick(next_timer=,
    count=)`, paused by `_active`, with `_skip` and `_reset`; ours replaces it once."""
    from textual.timer import Timer

    original = original_once(timers_tick_at_the_next_interval, Timer, "_run")
    assert list(inspect.signature(original).parameters) == ["self"]
    source = inspect.getsource(original)
    for used in ("self._tick(next_timer=next_timer, count=count)", "self._active.wait()"):
        assert used in source
    for attribute in ("_repeat", "_interval", "_skip", "_reset"):
        assert f"self.{attribute}" in source
    assert list(inspect.signature(Timer._tick).parameters) == ["self", "next_timer", "count"]


def test_10_the_terminal_is_read_in_run_input_thread() -> None:
    """Textual's Linux driver still reads the terminal in `run_input_thread(self)`: `fileno`
    selected with a timeout until `exit_event` is set, fed to an `XTermParser(self._debug)`
    whose events go to `process_message`, and an empty read still only breaks the inner
    loop; ours replaces it once and can ask the app to exit from its thread (`_loop`)."""
    from textual.drivers.linux_driver import LinuxDriver

    original = original_once(input_ends_with_the_terminal, LinuxDriver, "run_input_thread")
    assert list(inspect.signature(original).parameters) == ["self"]
    source = inspect.getsource(original)
    for used in (
        "XTermParser(self._debug)",
        "self.exit_event.is_set()",
        "read(fileno, 1024 * 4)",
        "self.process_message(event)",
        "if not unicode_data:\n                        # This can occur if the stdin is piped\n"
        "                        break",
    ):
        assert used in source, used
    from textual.driver import Driver

    assert "self._loop = asyncio.get_running_loop()" in inspect.getsource(Driver.__init__)
    stopping = inspect.getsource(LinuxDriver.disable_input)
    assert stopping.index("self.exit_event.set()") < stopping.index("self._key_thread.join()")


def test_11_the_terminal_is_written_in_a_writer_thread_with_a_bounded_queue() -> None:
    """Textual's writer thread still writes in `run(self)` what it takes from `_queue` (a
    bounded Queue) to `_file` until it takes None, which `stop()` puts before it joins; ours
    replaces `run` once."""
    from queue import Queue

    from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread

    original = original_once(output_ends_with_the_terminal, WriterThread, "run")
    source = inspect.getsource(original)
    for used in ("self._file.write", "self._file.flush", "self._queue.get", "if text is None"):
        assert used in source, used
    assert "self._queue.put(None)" in inspect.getsource(WriterThread.stop)
    writer = WriterThread(io.StringIO())
    assert isinstance(writer._queue, Queue) and writer._queue.maxsize == MAX_QUEUED_WRITES


MARKDOWN_SAMPLE = (
    "# Title\n\nSome **bold**, ~~struck~~ and `code`, see https://example.com.\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n- item\n\n```python\nx = 1\n```\n"
)


def test_12_rich_markdown_keeps_its_text_and_parse_in_markup_and_parsed() -> None:
    """Rich's Markdown still parses its text in `__init__`, with the parser ours makes once
    (the same tokens: tables and strikethrough on), into `parsed`, and renders from that: a
    copy given another text and its parse draws what Rich's own Markdown of it draws."""
    from rich.console import Console
    from rich.markdown import Markdown

    own = Markdown(MARKDOWN_SAMPLE, code_theme="monokai", hyperlinks=False)
    ours = markdown_parsed_by_one_parser(MARKDOWN_SAMPLE, code_theme="monokai", hyperlinks=False)
    assert vars(ours).keys() == vars(own).keys()
    assert ours.markup == own.markup == MARKDOWN_SAMPLE
    assert [(t.type, t.content) for t in ours.parsed] == [(t.type, t.content) for t in own.parsed]
    assert "self.parsed" in inspect.getsource(Markdown.__rich_console__)

    def drawn(markdown: Markdown) -> str:
        console = Console(width=60, force_terminal=True, color_system="truecolor")
        with console.capture() as capture:
            console.print(markdown)
        return capture.get()

    assert drawn(ours) == drawn(own)


def test_12_each_thread_parses_with_a_parser_of_its_own() -> None:
    """markdown-it does not say its parser may be shared by threads (a reply is drawn on the
    event loop while a thread warms the renderer up): each thread has its own, made once."""
    import threading

    from byok_tui.compat import _rich_markdown_parser

    here = _rich_markdown_parser()
    assert _rich_markdown_parser() is here
    elsewhere: list[object] = []
    thread = threading.Thread(target=lambda: elsewhere.append(_rich_markdown_parser()))
    thread.start()
    thread.join(10)
    assert elsewhere and elsewhere[0] is not here


def test_13_a_layout_makes_the_full_map_and_leaves_it_marked_stale() -> None:
    """Textual's `reflow` still makes the whole map (`_arrange_root(..., visible_only=False)`
    into `_full_map`) without clearing `_full_map_invalidated`, which `full_map` and
    `find_widget` still read before making it all again; ours clears it, once. If Textual's
    reflow clears it itself, point 13 can go."""
    from textual._compositor import Compositor

    original = inspect.getsource(original_once(layouts_keep_their_map, Compositor, "reflow"))
    assert "visible_only=False" in original and "self._full_map = map" in original
    assert "_full_map_invalidated" not in original
    assert "self._full_map_invalidated" in inspect.getsource(Compositor.find_widget)
    full_map: property = vars(Compositor)["full_map"]
    assert full_map.fget is not None
    assert "_full_map_invalidated" in inspect.getsource(full_map.fget)


def test_14_a_screen_s_layout_still_posts_it_a_resize_its_handler_lays_out_again() -> None:
    """Textual's `_refresh_layout` still posts a Resize to every widget a layout showed or
    resized (the screen itself among them), and `_screen_resized` still lays the screen out
    whatever its size, from the screen's Resize handler and for the screens under it; ours
    passes over the size the compositor was last laid out at (`Compositor.size`), once. If
    `_screen_resized` compares sizes itself, point 14 can go."""
    from textual._compositor import Compositor
    from textual.screen import Screen

    original = inspect.getsource(
        original_once(screens_lay_out_once_a_size, Screen, "_screen_resized")
    )
    assert "self._refresh_layout(size)" in original and "_compositor" not in original
    layout = inspect.getsource(getattr(Screen._refresh_layout, "replaced", Screen._refresh_layout))
    assert "send_resize = shown | resized" in layout and "ResizeEvent(" in layout
    resize = inspect.getsource(Screen._on_resize)  # ours passes over old sizes first (7)
    original_resize = inspect.getclosurevars(Screen._on_resize).nonlocals.get("on_resize")
    if original_resize is not None:
        resize = inspect.getsource(original_resize)
    assert "screen._screen_resized(event.size)" in resize
    reflow = getattr(Compositor.reflow, "replaced", Compositor.reflow)  # point 13's wrapper
    assert "self.size = size" in inspect.getsource(reflow)


def test_15_a_screen_s_first_resume_restyles_it_whole_and_a_css_refresh_counts() -> None:
    """Textual's `_on_screen_resume` still restyles the whole screen when its event asks
    (`refresh_styles`, True unless a screen over it was transparent), `push_screen` still
    posts a plain ScreenResume, each widget is still styled as it is registered, and a
    refresh of the app's styles still counts itself (`_css_update_count`) and restyles every
    screen in the stack; ours passes `refresh_styles=False` on a screen's first resume when
    that count has not moved since its compose, once. If the first resume stops restyling,
    point 15 can go."""
    from textual.app import App
    from textual.events import ScreenResume
    from textual.screen import Screen

    original = inspect.getsource(
        original_once(screens_styled_once_when_first_shown, Screen, "_on_screen_resume")
    )
    assert "if event.refresh_styles:" in original and "self.update_node_styles(" in original
    assert "def _compose(self)" in inspect.getsource(Screen._compose.replaced)  # type: ignore[attr-defined]
    assert ScreenResume().refresh_styles is True
    assert "events.ScreenResume()" in inspect.getsource(App.push_screen)
    assert "self.stylesheet.apply" in inspect.getsource(App._register)
    refresh = inspect.getsource(App.refresh_css)
    assert "stylesheet.update(self.app" in refresh and "for screen in self.screen_stack" in refresh
    assert "self._css_update_count += 1" in inspect.getsource(App._invalidate_css)


def test_16_a_partial_update_draws_each_widget_whose_clip_it_touches() -> None:
    """Textual's `_get_renders` still picks the widgets to draw by their clip (`crop_overlaps
    (clip)`), not by their own visible part, and yields (region, clip, lines of region and
    clip's intersection); `_render_chops` still lays those lines over that intersection and
    keeps, for each cut of a line, the first widget's; a partial update still passes the
    union of the changed regions as the crop, and writes only its spans, passing over cuts
    no widget drew. Ours draws a widget only when its visible part meets the crop, once. If
    `_get_renders` tests the widget's own region, point 16 can go."""
    from textual._compositor import ChopsUpdate, Compositor

    original = inspect.getsource(
        original_once(partial_updates_draw_what_they_show, Compositor, "_get_renders")
    )
    assert "if crop_overlaps(clip)" in original and "widget.render_lines(" in original
    chops = inspect.getsource(Compositor._render_chops)
    assert "render_region = intersection(region, clip)" in chops
    assert "zip(render_region.line_range, strips)" in chops
    assert "if get_chops_line(cut) is None:" in chops
    partial = inspect.getsource(Compositor.render_partial_update)
    assert "Region.from_union(update_regions)" in partial
    assert "self._render_chops(crop, is_rendered_line)" in partial
    update = inspect.getsource(ChopsUpdate.__rich_console__)
    assert "if strip is None:" in update and "if x > x2 or end <= x1:" in update


def test_17_a_strip_that_is_its_own_division_or_extension_is_cached_in_itself() -> None:
    """Textual's `Strip.divide` still filters the cuts past the strip's end and caches
    `[self]` when the one cut left is its end, and `crop_extend` still caches what
    `extend_cell_length(end).crop(start, end)` gives, the strip itself when nothing changes:
    cycles only the collector frees. Ours returns those uncached. If Textual stops caching a
    strip in itself, point 17 can go."""
    from rich.segment import Segment
    from textual.strip import Strip

    divide = original_once(strips_kept_out_of_cycles, Strip, "divide")
    crop_extend = Strip.crop_extend.replaced  # type: ignore[attr-defined]
    strip = Strip([Segment("hello")])
    assert divide(strip, [5, 9]) == [strip] and strip._divide_cache.get((5,)) == [strip]
    assert crop_extend(strip, 0, 5, None) is strip
    assert strip._crop_extend_cache.get((0, 5, None)) is strip


def test_18_a_strip_makes_seven_caches_as_it_is_made() -> None:
    """Textual's `Strip.__init__` still sets the segments, the cell length, three values
    worked out later, and seven FIFOCaches of the sizes point 18 makes them at; and those
    slots are still the strip's own (`__slots__`). If it sets another slot, ours must too;
    if it makes its caches lazily itself, point 18 can go."""
    from rich.segment import Segment
    from textual.cache import FIFOCache
    from textual.strip import Strip

    from byok_tui.compat import STRIP_CACHES

    init = original_once(strips_make_their_caches_when_used, Strip, "__init__")
    made = object.__new__(Strip)
    init(made, [Segment("hello")], 5)
    slots = {name: Strip.__dict__[name] for name in Strip.__slots__}
    set_by_init = {}
    for name, slot in slots.items():
        descriptor = getattr(slot, "_slot", slot)  # point 18's, or Textual's own
        with contextlib.suppress(AttributeError):
            set_by_init[name] = descriptor.__get__(made, Strip)
    caches = {
        name: held._maxsize for name, held in set_by_init.items() if isinstance(held, FIFOCache)
    }
    assert caches == STRIP_CACHES
    others = {name: held for name, held in set_by_init.items() if name not in caches}
    assert others == {
        "_segments": [Segment("hello")],
        "_cell_length": 5,
        "_render_cache": None,
        "_link_ids": None,
        "_cell_count": None,
    }


def test_19_a_layout_refreshes_scrollbars_before_the_frame_that_draws_them() -> None:
    """Textual's `Widget._size_updated` still updates a scrolling widget's scrollbars when a
    layout changes its size or length, `_scroll_update` still refreshes them (a repaint
    asked for once idle: `_check_refresh` posts an Update for the next frame), the screen's
    layout still does so before the frame it draws at once, and that frame still redraws
    the clipped region of every widget whose place in the map changed. A widget resized
    still marks its whole region for a repaint (`_set_dirty`), which waits in
    `_repaint_regions` until the widget is next refreshed. If Textual stops asking for a
    second frame, and for a second drawing of what a layout resized, point 19 can go."""
    from textual._compositor import Compositor
    from textual.screen import Screen

    size_updated = original_once(layouts_draw_what_they_resize, Widget, "_size_updated")
    while hasattr(size_updated, "replaced"):  # point 28, beneath it once an app has started
        size_updated = size_updated.replaced
    assert "self._scroll_update(virtual_size)" in inspect.getsource(size_updated)
    assert "if self._size != size:\n                self._set_dirty()" in inspect.getsource(
        size_updated
    )
    set_dirty = inspect.getsource(Widget._set_dirty)
    assert "self._repaint_regions.add(outer_size.region)" in set_dirty
    assert "widget._exchange_repaint_regions()" in inspect.getsource(Compositor.update_widgets)
    assert "self.vertical_scrollbar.refresh()" in inspect.getsource(Widget._scroll_update)
    check = inspect.getsource(Widget._check_refresh)
    assert "if self._repaint_required:" in check and "messages.Update(self)" in check
    layout = inspect.getsource(getattr(Screen._refresh_layout, "replaced", Screen._refresh_layout))
    sized = layout.index("widget._size_updated(region.size, virtual_size, container_size)")
    assert sized < layout.index("self._compositor_refresh()")
    reflow = getattr(Compositor.reflow, "replaced", Compositor.reflow)  # point 13 wraps it
    assert "map_geometry.clip.intersection(map_geometry.region)" in inspect.getsource(reflow)


def test_21_the_screens_seen_under_the_top_one_are_still_app_background_screens() -> None:
    """Textual still decides which screens are seen under the top one in the
    `App._background_screens` property, which still lists the one just under the top whatever
    the top's background, and `Screen.is_current` still reads it (a screen listed there is
    laid out and drawn). If Textual asks the top screen's opacity first, point 21 can go."""
    from textual.app import App
    from textual.screen import Screen

    opaque_screens_hide_those_under_them()
    installed = App.__dict__["_background_screens"]
    opaque_screens_hide_those_under_them()
    assert App.__dict__["_background_screens"] is installed, "replaced twice"
    original = inspect.getsource(installed.fget.replaced)
    assert "for screen in reversed(self._screen_stack[:-1]):" in original
    assert original.index("screens.append(screen)") < original.index("background.a == 1")
    is_current = Screen.__dict__["is_current"].fget
    assert "self in self.app._background_screens" in inspect.getsource(is_current)


def test_30_a_frame_is_still_written_whole_by_app_display_from_its_render_segments() -> None:
    """`App._display` still writes a CompositorUpdate's `render_segments` (and puts the cursor
    back after it) when the app runs in a full-screen terminal, and nothing when it is
    headless or batching; a ChopsUpdate still writes each span's chops cut at the span's end
    and a LayoutUpdate its lines from the region's left edge, as point 30 reads them; a
    driver still starts application mode in `start_application_mode`. If Textual writes only
    the cells a frame changes, point 30 can go."""
    from textual._compositor import ChopsUpdate, LayoutUpdate
    from textual.app import App
    from textual.driver import Driver

    frames_write_only_what_changed()
    installed = App.__dict__["_display"]
    frames_write_only_what_changed()
    assert App.__dict__["_display"] is installed, "replaced twice"
    display = inspect.getsource(installed.replaced)
    for condition in ("self._batch_count", "self._running", "not self._closed"):
        assert condition in display
    assert "not self.is_headless" in display and "self._driver.is_inline" in display
    assert "terminal_sequence = renderable.render_segments(console)" in display
    chops = inspect.getsource(ChopsUpdate.render_segments)
    assert "for y, x1, x2 in self.spans:" in chops
    assert "for end, (x, strip) in zip(ends, line.items()):" in chops
    assert "strip = strip.crop(0, min(end, x2) - x)" in chops
    layout = inspect.getsource(LayoutUpdate.render_segments)
    assert "for last, (y, line) in loop_last(enumerate(self.strips, self.region.y)):" in layout
    assert "extend([strip.render(console) for strip in line])" in layout
    assert "self.start_application_mode()" in inspect.getsource(Driver.resume_application_mode)


def test_20_an_httpx_transport_s_pool_gives_its_connections_its_network_backend() -> None:
    """httpx's `AsyncHTTPTransport` still keeps its httpcore `AsyncConnectionPool` in `_pool`,
    which still hands its `_network_backend` to each connection it makes. If httpx's
    transport takes a `network_backend` of its own, point 20 can go."""
    import httpcore
    import httpx

    from byok_tui.providers.network import ProtocolBackend

    backend = ProtocolBackend()
    transport = httpx.AsyncHTTPTransport()
    assert isinstance(transport._pool, httpcore.AsyncConnectionPool)
    assert isinstance(transport._pool._network_backend, httpcore.AsyncNetworkBackend)
    with_network_backend(transport, backend)
    connection = transport._pool.create_connection(httpcore.Origin(b"https", b"example.org", 443))
    assert connection._network_backend is backend  # type: ignore[attr-defined]
    assert "network_backend" not in inspect.signature(httpx.AsyncHTTPTransport).parameters


def test_a_touch_point_is_skipped_on_a_version_it_was_not_checked_against(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Presented with a changed target (another Textual than the one checked), a touch point
    leaves the library's own code in place, says so in the log, and the app runs on it."""
    from textual.widgets import OptionList

    from byok_tui import compat

    assert compat.checked_version_installed("textual"), "this environment is the one checked"
    monkeypatch.delenv("BYOK_TUI_TRY_TEXTUAL", raising=False)  # .ci/try-textual's trial
    monkeypatch.setitem(compat.CHECKED_AGAINST, "textual", "8.2.7")
    compat.checked_version_installed.cache_clear()
    monkeypatch.setattr(compat, "SKIPPED", [])
    before = OptionList._move_page
    monkeypatch.setattr(OptionList, "_move_page", lambda *_a: None)  # as if never wrapped
    unwrapped = OptionList._move_page
    try:
        with caplog.at_level("WARNING", logger="byok_tui.compat"):
            compat.page_keys_need_lines()
        assert OptionList._move_page is unwrapped, "a changed Textual was patched anyway"
        assert compat.SKIPPED == ["page_keys_need_lines"]
        assert "page_keys_need_lines skipped: checked against textual 8.2.7" in caplog.text
    finally:
        compat.checked_version_installed.cache_clear()
    assert before is not None


async def test_the_app_runs_with_every_textual_touch_point_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The skip path end to end: an app whose Textual is not the one checked starts (each
    touch point its start applies takes the skip path and says so), takes a message and
    shows its reply. (Points applied by earlier tests in this process stay applied: that a
    skipped point leaves Textual's own code is the test above.)"""
    from byok_tui import compat
    from byok_tui.core.paths import app_paths
    from byok_tui.keys import entry_name, open_key_store
    from tests.support.fake_backend import FakeProviders
    from tests.support.pilot import app_answered_by, replies, send, settle, wait_for

    open_key_store(app_paths()).set(entry_name("openai"), "sk-proj-" + "S" * 60)
    monkeypatch.delenv("BYOK_TUI_TRY_TEXTUAL", raising=False)  # .ci/try-textual's trial
    monkeypatch.setitem(compat.CHECKED_AGAINST, "textual", "0.0.0")
    monkeypatch.setattr(compat, "SKIPPED", [])
    compat.checked_version_installed.cache_clear()
    try:
        fake = FakeProviders()
        fake.enqueue("Still here.")
        app = app_answered_by(fake)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "hello")
            await wait_for(pilot, lambda: replies(app) == ["Still here."])
        assert "timers_tick_at_the_next_interval" in compat.SKIPPED
    finally:
        compat.checked_version_installed.cache_clear()


def test_22_a_styles_cache_s_background_styles_are_cached_by_instance() -> None:
    """Textual's `StylesCache.get_inner_outer` is still an instance method under a class-wide
    `functools.lru_cache` (its keys hold each styles cache it was called on) and still reads
    only its two colours. If Textual caches them by the colours alone, point 22 can go."""
    from textual._styles_cache import StylesCache
    from textual.color import Color

    held = original_once(styles_caches_let_go, StylesCache, "get_inner_outer")
    assert hasattr(held, "cache_clear"), "no longer functools' lru_cache"
    made = held.__wrapped__
    assert list(inspect.signature(made).parameters) == ["cls", "base_background", "background"]
    source = inspect.getsource(made)
    assert "cls." not in source.split('"""')[-1]
    base, background = Color(10, 20, 30), Color(40, 50, 60, 0.5)
    assert StylesCache().get_inner_outer(base, background) == made(None, base, background)


def test_23_a_watcher_on_another_object_stays_until_that_attribute_changes() -> None:
    """Textual's `DOMNode.watch` still stores `(node, callback)` in the watched object's
    `__watchers[attribute]` list, data binding still watches through `DOMNode.watch`, only a
    change of that attribute takes off the watchers of closed nodes, and a widget's message
    loop still ends in `Widget._message_loop_exit`. If Textual takes a removed node's
    watchers off itself, point 23 can go."""
    from textual import reactive
    from textual.dom import DOMNode
    from textual.message_pump import MessagePump

    watch = original_once(watchers_go_with_their_node, DOMNode, "watch")
    assert "_watch(self, obj, attribute_name, callback, init=init)" in inspect.getsource(watch)
    stored = inspect.getsource(reactive._watch)
    assert 'watchers = getattr(obj, "__watchers")' in stored
    assert "watcher_list.append((node, callback))" in stored
    assert "self.watch(" in inspect.getsource(DOMNode._initialize_data_bind)
    assert "if not reactable._closing" in inspect.getsource(reactive.Reactive._check_watchers)
    exits = Widget._message_loop_exit.replaced  # type: ignore[attr-defined]
    assert "parent._nodes._remove(self)" in inspect.getsource(exits)
    processing = inspect.getsource(MessagePump._process_messages)
    assert "await self._message_loop_exit()" in processing


def test_24_footer_keys_start_compact_and_the_footer_binds_all_but_the_palette_s() -> None:
    """Textual's `FooterKey.compact` still starts True and its watcher still sets the
    `-compact` class (restyling at once); `Footer.compose` still makes its keys through the
    module's `FooterKey` name, binds every key to the footer's `compact` but the command
    palette's (classed `-command-palette`), and `Footer.compact` still starts False. If
    FooterKey's default follows the footer's, point 24 can go."""
    from textual.widgets import _footer

    footer_keys_styled_once()
    installed = _footer.FooterKey
    footer_keys_styled_once()
    assert _footer.FooterKey is installed, "replaced twice"
    original = installed.replaced  # type: ignore[attr-defined]
    assert original.__dict__["compact"]._default is True
    assert 'self.set_class(compact, "-compact")' in inspect.getsource(original._watch_compact)
    assert TextualFooter.__dict__["compact"]._default is False
    compose = inspect.getsource(TextualFooter.compose)
    assert compose.count("yield FooterKey(") == 3
    assert compose.count(").data_bind(compact=Footer.compact)") == 2
    palette = compose[compose.index('classes="-command-palette"') :]
    assert "data_bind" not in palette


def test_25_a_layout_places_every_widget_from_the_root_and_a_change_stops_at_a_fixed_size() -> None:
    """Textual's `_refresh_layout` still lays out through `Compositor.reflow(self, size)`,
    which still places every widget from the root (`_arrange_root`, the root at order
    `((0, 0, 0),)` and count 0, each child's order its parent's and `(layer, z, count)`, a
    scrollbar's virtual region its region); `_on_layout` still walks up from a changed
    widget to the first ancestor whose size does not follow its content; a widget's
    arrangement still changes with its node list's count. If Textual lays out only what
    changed, point 25 can go."""
    from textual._compositor import Compositor
    from textual.screen import Screen

    original = inspect.getsource(
        original_once(layouts_place_only_their_part, Screen, "_refresh_layout")
    )
    assert "self._compositor.reflow(self, size)" in original
    assert "self._layout_widgets.clear()" in original
    on_layout = inspect.getsource(Screen._on_layout)
    assert "if not ancestor.styles.auto_dimensions:" in on_layout
    assert "self._layout_widgets[ancestor].add(widget)" in on_layout
    arrange_root = inspect.getsource(Compositor._arrange_root)
    assert "((0, 0, 0),),\n            layer_order," in arrange_root
    assert "widget_order = order + ((layer_index, z, layer_order),)" in arrange_root
    assert "placement.process_offset(size.region, placement_scroll_offset)" in arrange_root
    assert "no_clip if overlay else sub_clip" in arrange_root
    assert "sub_clip = clip.intersection(child_region)" in arrange_root
    scrollbars = arrange_root[arrange_root.index("_arrange_scrollbars(") :]
    assert scrollbars[: scrollbars.index("map[widget._render_widget]")].count("chrome_region,") == 2
    assert "self._nodes._updates" in inspect.getsource(Widget.arrange)
    assert "self._layout_updates += 1" in inspect.getsource(Widget.refresh)


def test_26_a_widget_removed_loses_the_focus_and_its_focus_watcher_restyles_all_it_holds() -> None:
    """Textual's `Widget.watch_has_focus` still restyles the widget and everything in it
    (`update_node_styles`); removing widgets still marks every one `_pruning` and takes the
    focus off the screen's focused one among them (`_reset_focus`), whose Blur still sets
    `has_focus` False. If Textual skips restyling what is being removed, point 26 can go."""
    from textual.app import App
    from textual.dom import DOMNode

    original = inspect.getsource(
        original_once(widgets_going_away_keep_their_styles, Widget, "watch_has_focus")
    )
    assert "self.update_node_styles()" in original
    update_node_styles = DOMNode.update_node_styles  # Textual's own, beneath point 31
    update_node_styles = getattr(update_node_styles, "replaced", update_node_styles)
    assert "self.app.update_styles(self" in inspect.getsource(update_node_styles)
    assert "node.walk_children(with_self=True)" in inspect.getsource(App.update_styles)
    prune = inspect.getsource(App._prune)
    assert "node._pruning = True" in prune
    assert "screen._reset_focus(screen.focused, list(pruning_nodes))" in prune
    assert "self.has_focus = False" in inspect.getsource(Widget._on_blur)


def test_27_a_screen_s_new_css_is_parsed_with_every_other_and_restyles_the_whole_app() -> None:
    """Textual's `_load_screen_css` still reads a new screen's CSS into the app's stylesheet
    (`read`, `add_source`), then calls `self.stylesheet.reparse()` and
    `self.stylesheet.update(self)`; `reparse` still parses in a fresh `Stylesheet`;
    `parse` still takes each source from `_parse_rules` (cached by its text, place,
    defaults, tie-breaker and scope) and leaves out a source once it failed; `apply` still
    limits a widget's rules to those whose `selector_names` it has. If Textual parses only
    new CSS and restyles only what it may style, point 27 can go."""
    from textual.app import App
    from textual.css.stylesheet import Stylesheet

    original = inspect.getsource(
        original_once(new_stylesheets_parsed_alone, App, "_load_screen_css")
    )
    assert "self.stylesheet.read(path)" in original
    assert "self.stylesheet.reparse()\n            self.stylesheet.update(self)" in original
    assert "stylesheet = Stylesheet(variables=self._variables)" in inspect.getsource(
        Stylesheet.reparse
    )
    parse = inspect.getsource(Stylesheet.parse)
    assert "css_rules = self._parse_rules(" in parse
    assert "if css in self._invalid_css:" in parse
    parse_rules = inspect.getsource(  # Textual's, not the suite's cache of it (conftest.py)
        getattr(Stylesheet._parse_rules, "replaced", Stylesheet._parse_rules)
    )
    assert "cache_key = (css, read_from, is_default_rules, tie_breaker, scope)" in parse_rules
    assert "rules_map.keys() & node._selector_names" in inspect.getsource(Stylesheet.apply)


def test_28_a_layout_sets_each_widget_s_virtual_size_through_a_reactive_that_lays_out() -> None:
    """Textual's `Widget._size_updated` still assigns `virtual_size` (declared `layout=True`)
    when told it is a layout, and sets it quietly (`set_reactive`) when not; the screen's
    layout still calls it for each widget it placed without saying which; a ScrollView
    still has its own; a layout asked for still clears the arrangements kept above the
    widget, each kept by its children's version (an older one holds widgets gone since).
    Point 28 sits beneath point 19 once, whichever was installed first.
    If Textual sets a virtual size its layout worked out without asking for another, point
    28 can go."""
    from textual.screen import Screen
    from textual.scroll_view import ScrollView

    layouts_draw_what_they_resize()
    layouts_ask_no_layout_for_the_sizes_they_set()
    layouts_ask_no_layout_for_the_sizes_they_set()
    chain = [Widget._size_updated]
    while hasattr(chain[-1], "replaced"):
        chain.append(chain[-1].replaced)
    marks = [
        "left_to_the_layout" if hasattr(f, "left_to_the_layout") else
        "sets_sizes_quietly" if hasattr(f, "sets_sizes_quietly") else "textual"
        for f in chain
    ]  # fmt: skip
    assert marks == ["left_to_the_layout", "sets_sizes_quietly", "textual"]
    original = inspect.getsource(chain[-1])
    assert (
        "if layout:\n                self.virtual_size = virtual_size\n            else:\n"
        "                self.set_reactive(Widget.virtual_size, virtual_size)"
    ) in original
    assert Widget.virtual_size._layout is True
    assert "_size_updated" in ScrollView.__dict__
    layout = inspect.getsource(getattr(Screen._refresh_layout, "replaced", Screen._refresh_layout))
    assert "widget._size_updated(region.size, virtual_size, container_size)\n" in layout
    check = inspect.getsource(Widget._check_refresh)  # what a layout asked did, kept
    assert "ancestor._clear_arrangement_cache()" in check
    assert "if not ancestor.styles.auto_dimensions:\n                            break" in check
    assert "cache_key = (size, self._nodes._updates, optimal)" in inspect.getsource(Widget.arrange)


def test_29_a_field_s_bound_keys_run_only_once_the_key_has_bubbled_to_the_app() -> None:
    """Textual's Input and TextArea still insert a character in their own `_on_key` and
    leave every other key to bubble; the app still runs a binding found along the chain
    from the focused widget up with `run_action(action, namespace)`, and a message still
    says it was stopped or its default prevented in `_stop_propagation` and
    `_no_default_action`. Point 29 wraps each `_on_key` once, around Textual's own.
    If a field runs its own bindings as the key reaches it, point 29 can go."""
    from textual.app import App
    from textual.message import Message
    from textual.widgets import Input, TextArea

    editing_keys_keep_their_order()
    wrapped = {field: field.__dict__["_on_key"] for field in (Input, TextArea)}
    editing_keys_keep_their_order()
    for field, on_key in wrapped.items():
        assert field.__dict__["_on_key"] is on_key
        original = inspect.getsource(on_key.replaced)
        assert "if event.is_printable" in original
        assert "_check_bindings" not in original and "run_action" not in original
    assert "await self.run_action(binding.action, namespace)" in inspect.getsource(
        App._check_bindings
    )
    assert "if not (await self._check_bindings(event.key)):" in inspect.getsource(App._on_key)
    stop, prevent = inspect.getsource(Message.stop), inspect.getsource(Message.prevent_default)
    assert "self._stop_propagation = stop" in stop
    assert "self._no_default_action = prevent" in prevent


def test_31_a_class_set_on_a_widget_restyles_it_whether_or_not_the_app_holds_it() -> None:
    """Textual's `DOMNode.update_node_styles` still restyles the node and all it holds at
    once (`self.app.update_styles`), whether or not the node is in the app; `add_class`
    still calls it; the app still styles each widget it registers whole
    (`apply_stylesheet(widget, cache=cache)`), after linking it to its parent; Button,
    OptionList and Input still set `compact` (a class) as they are made. If Textual restyles
    only what the app holds, point 31 can go."""
    from textual.app import App
    from textual.dom import DOMNode
    from textual.widgets import Button, Input, OptionList

    original = inspect.getsource(
        original_once(widgets_styled_as_they_mount, DOMNode, "update_node_styles")
    )
    assert "self.app.update_styles(self, animate=animate)" in original
    assert "is_attached" not in original
    assert "self.update_node_styles()" in inspect.getsource(DOMNode.add_class)
    register = inspect.getsource(App._register)
    assert "self._register_child(parent, widget, before, after)" in register
    assert "apply_stylesheet(widget, cache=cache)" in register
    assert register.index("_register_child(") < register.index("apply_stylesheet(widget")
    for made_compact in (Button, OptionList, Input):
        assert "self.compact = compact" in inspect.getsource(made_compact.__init__)
