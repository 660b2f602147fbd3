"""The chat screen at any size: the transcript and composer are never squeezed out by the side
panes, no label is cut, and the line that says which key answers stays in view. And what a
frame does: a screen laid out, styled and drawn where something changed, not again as a
whole, with what reaches the terminal the same."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from rich.segment import Segment
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from byok_tui.app import ByokApp
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.screens.chat_column import ChatColumn
from byok_tui.widgets.activity_line import ActivityLine
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.config_pane import ConfigPane
from byok_tui.widgets.transcript import Transcript
from tests.support.fake_backend import FakeProviders
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    app_answered_by,
    chat,
    make_app,
    replies,
    replying,
    send,
    settings_opened,
    settle,
    wait_for,
)

pytestmark = pytest.mark.draws  # what each frame redraws and writes

USABLE_TRANSCRIPT = 40  # columns: narrower, and replies wrap every few words


def widgets_drawn(monkeypatch: pytest.MonkeyPatch) -> list[Widget]:
    """Every widget asked for lines from now on, in order (once per drawing)."""
    from textual.geometry import Region
    from textual.strip import Strip

    drawn: list[Widget] = []
    render_lines = Widget.render_lines

    def counted(self: Widget, crop: Region) -> list[Strip]:
        drawn.append(self)
        return render_lines(self, crop)

    monkeypatch.setattr(Widget, "render_lines", counted)
    return drawn


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_both_panes_shown_never_squeeze_out_the_chat(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for key in ("ctrl+b", "ctrl+o"):
            await pilot.press(key)
            await pilot.pause()
            screen = chat(app)
            transcript, composer = screen.query_one(Transcript), screen.query_one(Composer)
            assert transcript.region.width >= min(USABLE_TRANSCRIPT, size[0] - 4), key
            assert composer.region.width >= min(USABLE_TRANSCRIPT, size[0] - 4), key
            assert composer.region.height > 0 and transcript.region.height > 0, key
        # The pane just asked for is on screen; at most one pane covers the conversation.
        pane = chat(app).query_one(ConfigPane)
        assert pane.display and pane.region.width > 0
        floating = [p for p in chat(app).query(".floating") if p.display]
        assert len(floating) <= 1
        if floating:
            assert not chat(app).query_one("#sidebar").display
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not pane.display


async def test_at_full_size_the_panes_sit_beside_the_chat_not_over_it() -> None:
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        screen = chat(app)
        sidebar, pane = screen.query_one("#sidebar"), screen.query_one(ConfigPane)
        transcript = screen.query_one(Transcript)
        assert sidebar.region.right <= transcript.region.x
        assert transcript.region.right <= pane.region.x


async def test_at_120_by_40_no_label_of_the_config_pane_is_cut() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pane = chat(app).query_one(ConfigPane)
        for label in pane.query(Label):
            text = str(label.render())
            room = label.content_region.width * label.content_region.height
            assert len(text) <= room, f"cut: {text!r}"
            assert label.region.right <= pane.content_region.right, f"cut: {text!r}"
        for field in pane.query(Input):
            assert len(field.placeholder) <= field.content_region.width, field.placeholder
        # The line saying which key the next message uses is in view without scrolling.
        line = pane.query_one("#key-in-use", Static)
        assert line.region.height > 0
        assert pane.region.contains_region(line.region)
        assert "Next message:" in str(line.render())


async def test_at_120_by_40_the_activity_line_is_never_cut() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        activity = chat(app).query_one(ActivityLine)
        for show in (activity.show_retry_countdown, activity.show_rate_wait):
            show(88)
            text = str(activity.render())
            assert text and len(text) <= activity.content_region.width, f"cut: {text!r}"
        activity.show_working("Opening the conversation", 3)
        text = str(activity.render())
        assert len(text) <= activity.content_region.width, f"cut: {text!r}"
        # A fallback's countdown takes the lines it needs: long names still fit.
        column = chat(app).query_one(ChatColumn)
        schedule = column._schedule
        schedule.fallback_at = column._clock() + 5
        schedule.fallback_what = "openrouter: server error (503)"
        schedule.fallback_to = "openrouter:meta-llama/llama-3.3-70b-instruct"
        column._tick_activity()
        await pilot.pause()
        text = str(activity.render())
        room = activity.content_region.width * activity.content_region.height
        assert "Switching to openrouter:meta-llama" in text
        assert activity.content_region.height >= 2 and len(text) <= room, f"cut: {text!r}"


@pytest.mark.parametrize("below", ["the start screen", "the chat screen"])
async def test_a_screen_under_another_settles_after_resizes_it_could_not_keep_up_with(
    below: str,
) -> None:
    """While layouts wait (as they do once the app shuts down), Textual lays a screen out at
    the size of each Resize in its queue and posts it a Resize of its own whenever that
    changed its size, with a refresh queued between them: a screen under another (the start
    screen under the chat screen, the chat screen under Settings) that had two old sizes
    queued went back and forth between them for ever, at 100% CPU (ctrl+q after dragging the
    terminal's edge hung the app in 5 of 8 random runs). A screen now takes only the
    terminal's own size."""
    from textual.events import Resize
    from textual.geometry import Size

    old_sizes = (Size(100, 30), Size(90, 25))  # what a dragged edge left queued
    sizes: list[Size] = []  # the old sizes handled, in turn

    def count(message: object) -> None:
        if isinstance(message, Resize) and message.size in old_sizes:
            sizes.append(message.size)
            if len(sizes) > 20:  # stops the loop, which would starve the test too
                raise AssertionError(f"resized back and forth: {sizes[-4:]}")

    app = make_app()
    async with app.run_test(size=(140, 40), message_hook=count) as pilot:
        await settle(pilot)
        if below == "the chat screen":
            await pilot.press("ctrl+s")  # Settings over the chat screen
            await settle(pilot)
        screen = app.screen_stack[-2]
        with app.batch_update():  # layouts wait, as while the app shuts down
            for old in old_sizes:
                screen.post_message(Resize(old, old))
                screen.call_later(lambda: None)
            await pilot.pause(0.3)
        await settle(pilot)
        assert len(sizes) <= 4
        assert screen.size == Size(140, 40)


async def test_a_layout_does_not_place_the_screen_again_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opening a conversation longer than the screen, and scrolling it: once a layout has
    placed the screen's widgets, nothing in the same frame places them all again. Textual's
    layout made the whole map but left it marked stale whenever a scroll or a widget off
    screen had marked it so, and the first widget whose place was asked for afterwards made
    it all again (~10 ms of a 57 ms frame as the chat screen opened)."""
    from textual._compositor import Compositor
    from textual.screen import Screen

    from tests.support.keys import FAKE_KEYS
    from tests.support.stored import one_exchange

    store, conversation = one_exchange(FAKE_KEYS["openai"], "Long")
    for number in range(40):
        store.add_message(conversation.id, "user", f"question {number}\n\nin two paragraphs")
        store.add_message(conversation.id, "assistant", f"answer {number} with **bold**")
    store.close()
    placed: list[str] = []  # in the layout in progress: "layout" when it placed them all
    again: list[int] = []  # layouts after which they were all placed again
    arrange_root, reflow = Compositor._arrange_root, Compositor.reflow
    refresh_layout = Screen._refresh_layout

    def counted_arrange(self: Compositor, *args: object, **kwargs: object) -> object:
        if not kwargs.get("visible_only", args[2] if len(args) > 2 else True):
            placed.append("again")
        return arrange_root(self, *args, **kwargs)  # type: ignore[arg-type]

    def counted_reflow(self: Compositor, *args: object) -> object:
        result = reflow(self, *args)  # type: ignore[arg-type]
        placed.append("layout")
        return result

    def counted_layout(self: Screen[object], *args: object, **kwargs: object) -> None:
        placed.clear()
        refresh_layout(self, *args, **kwargs)  # type: ignore[arg-type]
        if "layout" in placed and "again" in placed[placed.index("layout") :]:
            again.append(len(placed))

    monkeypatch.setattr(Compositor, "_arrange_root", counted_arrange)
    monkeypatch.setattr(Compositor, "reflow", counted_reflow)
    monkeypatch.setattr(Screen, "_refresh_layout", counted_layout)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        transcript = chat(app).query_one(Transcript)
        transcript.scroll_home(animate=False)
        await pilot.pause()
        transcript.scroll_end(animate=False)
        await pilot.pause()
        chat(app).query_one(Composer).text = "a draft"
        await pilot.pause()
    assert not again, f"{len(again)} layouts placed the screen twice"


async def test_a_screen_opened_is_not_laid_out_again_at_the_size_it_was_laid_out_at(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opening Settings (~200 widgets) over the chat screen: Textual laid the new screen out,
    then again in the handler of the Resize its own layout had posted it, at the same size,
    and the screens under it too (~50-60 ms more in the key that opened Settings). A layout
    that something asks for later still happens."""
    from textual._compositor import Compositor
    from textual.geometry import Size
    from textual.screen import Screen

    resizing = [False]  # inside a screen's Resize handling
    again: list[str] = []  # screens laid out again there, at the size they had
    reflow, screen_resized = Compositor.reflow, Screen._screen_resized

    def counted_reflow(self: Compositor, parent: object, size: Size) -> object:
        if resizing[0] and size == self.size:
            again.append(type(parent).__name__)
        return reflow(self, parent, size)  # type: ignore[arg-type]

    def tracked(self: Screen[object], size: Size) -> None:
        resizing[0] = True
        try:
            screen_resized(self, size)
        finally:
            resizing[0] = False

    monkeypatch.setattr(Compositor, "reflow", counted_reflow)
    monkeypatch.setattr(Screen, "_screen_resized", tracked)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        again.clear()
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert type(app.screen).__name__ == "SettingsScreen"
        assert again == []
        await pilot.resize_terminal(120, 36)
        await wait_for(pilot, lambda: app.screen.size == Size(120, 36))  # a new size is laid out


async def test_settings_lays_its_rows_out_once_all_there_filled_in_and_at_one_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opening Settings: its ~200 widgets are laid out when they are all mounted and hold
    what was read (the keys stored), at the width they keep. They were mounted empty and
    filled once the keys were read, and a layout placed them at each step: part mounted,
    unfilled, then again 2 cells narrower once the scrollbar came (~100-200 ms more before
    Settings was drawn filled in, on two shared cores)."""
    from textual.screen import Screen

    from byok_tui.widgets.key_field import KeyField
    from byok_tui.widgets.provider_settings import ProviderSettings
    from tests.support.keys import FAKE_KEYS

    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    placed: list[tuple[int, bool, int]] = []  # each layout with rows: rows, filled, width
    refresh_layout = Screen._refresh_layout

    def counted(self: Screen[object], *args: object, **kwargs: object) -> None:
        refresh_layout(self, *args, **kwargs)  # type: ignore[arg-type]
        if type(self).__name__ != "SettingsScreen" or not self.query(ProviderSettings):
            return
        field = self.query_one("#row-openai").query_one(KeyField)
        placed.append((len(self.query(ProviderSettings)), bool(field.value), field.size.width))

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settings_opened(pilot)
        await pilot.pause(0.3)
    assert placed, "Settings showed no rows"
    rows = max(count for count, _, _ in placed)
    assert all(count == rows for count, _, _ in placed), f"rows part mounted: {placed}"
    assert all(filled for _, filled, _ in placed), f"rows laid out unfilled: {placed}"
    assert len({width for _, _, width in placed}) == 1, f"rows placed at widths: {placed}"


async def test_a_screen_opened_styles_each_of_its_widgets_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opening Settings (~200 widgets) over the chat screen: each widget is styled as it is
    mounted, and not again as a whole, neither when its scroll area takes the focus nor when
    the screen is first shown (~400 restyles, a third of the key that opened Settings). The
    scroll area still has the focus, the rows still take their styles, and a theme changed
    later still restyles them."""
    styled = styled_from_now(monkeypatch)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for _ in range(2):  # the first opening loads the screen's stylesheet, the next not
            styled.clear()
            await pilot.press("ctrl+s")
            await settle(pilot)
            screen = app.screen
            assert type(screen).__name__ == "SettingsScreen"
            rows = list(screen.query(".provider-row"))
            assert len(rows) >= 9
            assert [styled.count(row) for row in rows] == [1] * len(rows)
            assert app.focused is screen.query_one("#settings")
            border = rows[0].styles.border_left
            assert border[0] == "tall", "the rows keep the screen's own stylesheet"
            await pilot.press("escape")
            await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        styled.clear()
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        row = app.screen.query_one(".provider-row")
        assert styled.count(row) >= 1, "a theme changed restyles the rows"


async def test_widgets_given_a_class_as_they_are_made_are_styled_once_as_they_mount(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Textual's own widgets set a class as they are made (`compact=True`, a Button's
    variant), and each change of class restyled the widget at once against the whole
    stylesheet, though the app did not hold it yet (a Button twice before its mounting).
    Through byok_tui/compat.py (point 31) each is styled once, as it mounts: the sidebar's
    compact lists and buttons, and Settings' ~40 compact buttons, fields and checkboxes,
    each in its compact style. A class changed on a widget the app holds restyles it."""
    from textual.widgets import Button, Checkbox, OptionList

    styled = styled_from_now(monkeypatch)

    def styled_more_than_once(kinds: tuple[type, ...]) -> list[str]:
        made = [node for node in app.screen.walk_children() if isinstance(node, kinds)]
        assert len(made) >= 6
        return [f"{node!r}: {styled.count(node)}" for node in made if styled.count(node) != 1]

    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert styled_more_than_once((OptionList, Button)) == []
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert type(app.screen).__name__ == "SettingsScreen"
        assert styled_more_than_once((Button, Input, Checkbox)) == []
        compact = app.screen.query(Button).filter(".-textual-compact").first()
        assert compact.outer_size.height == 1, "in its compact style"
        compact.add_class("shown")
        assert styled.count(compact) == 2, "a widget the app holds is restyled"


def styled_from_now(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every node Textual styles from now on, in order (each `Stylesheet.apply`). The nodes
    themselves, kept: counted by `id()`, a node made where a freed one had been took on its
    count (a Settings button "styled twice" in one CI run)."""
    from textual.css.stylesheet import Stylesheet

    styled: list[Any] = []
    apply = Stylesheet.apply

    def counted(self: Stylesheet, node: Any, *args: object, **kwargs: object) -> None:
        styled.append(node)
        apply(self, node, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Stylesheet, "apply", counted)
    return styled


async def test_a_screen_s_new_stylesheet_is_parsed_alone_and_restyles_only_what_it_can_style(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Settings opened the first time reads its stylesheet: Textual parsed every stylesheet
    of the app again (35, ~45 ms on two shared cores) and restyled every widget of the app
    (~47 ms), with the key that opened it waiting. Only what is new is parsed (its file and
    its widgets' default CSS), and only the widgets its rules name (by type, class or id)
    are styled again: each widget of the chat screen holds the styles a full restyle gives
    it."""
    from textual.css import stylesheet as stylesheets
    from textual.css.stylesheet import Stylesheet
    from textual.css.types import CSSLocation

    parsed: list[tuple[CSSLocation, str]] = []  # (where it was read from, the CSS)
    parse = stylesheets.parse  # type: ignore[attr-defined]  # what `_parse_rules` calls

    def counted_parse(scope: str, css: str, read_from: CSSLocation, **kwargs: object) -> Any:
        parsed.append((read_from, css))
        return parse(scope, css, read_from, **kwargs)  # type: ignore[arg-type]

    styled = styled_from_now(monkeypatch)
    monkeypatch.setattr(stylesheets, "parse", counted_parse)
    # Textual's own parsing, not the suite's cache of it (tests/conftest.py)
    own = getattr(Stylesheet._parse_rules, "replaced", Stylesheet._parse_rules)
    monkeypatch.setattr(Stylesheet, "_parse_rules", own)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        chat_screen = app.screen
        held = list(chat_screen.walk_children(with_self=True))
        known = dict(app.stylesheet.source)
        parsed.clear()
        styled.clear()
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert type(app.screen).__name__ == "SettingsScreen"
        sources = app.stylesheet.source
        # Parsed though unchanged (a source's tie-breaker may change as new widgets come)
        again = [place for place, _css in parsed if known.get(place) == sources.get(place)]
        assert not again, f"{len(again)} stylesheets parsed again"
        assert any(".provider-row" in css for _read_from, css in parsed)
        restyled = {id(node) for node in styled} & {id(node) for node in held}
        assert len(restyled) < len(held) // 2, f"{len(restyled)} of {len(held)} restyled"
        await pilot.press("escape")
        await settle(pilot)
        kept = [node.styles.base.get_rules() for node in held]
        app.stylesheet.update(chat_screen)
        assert [node.styles.base.get_rules() for node in held] == kept


async def test_a_screen_closed_restyles_none_of_the_widgets_going_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Closing Settings: its scroll area, which holds the focus and ~200 widgets, loses the
    focus as the screen is removed. Textual restyled all it holds then (~100 ms on two
    shared cores, after the key that closed it), though none of it is drawn again. A widget
    that stays still takes its styles again when it loses the focus."""

    styled = styled_from_now(monkeypatch)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        settings = app.screen
        assert app.focused is settings.query_one("#settings")
        held = set(settings.query("*"))
        assert len(held) > 150
        styled.clear()
        await pilot.press("escape")
        await settle(pilot)
        assert type(app.screen).__name__ == "ChatScreen"
        restyled = [node for node in styled if node in held]
        assert not restyled, f"{len(restyled)} widgets of the closed screen styled again"
        composer = app.screen.query_one(Composer)
        composer.focus()
        await pilot.pause()
        styled.clear()
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is not composer
        assert composer in styled, "a widget that stays is styled again as it loses the focus"


async def test_a_pane_shown_is_laid_out_once_not_again_for_the_sizes_its_layout_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Showing the config pane again (ctrl+o): one layout places it. Textual asked for a
    second one from within the first, for every widget whose virtual size that layout had
    set (each of the pane's ~40 widgets), and the second found nothing to move. What the one
    layout leaves is what a layout asked for afterwards leaves."""
    from textual.screen import Screen

    layouts: list[Screen[object]] = []
    refresh_layout = Screen._refresh_layout

    def counted(self: Screen[object], *args: object, **kwargs: object) -> None:
        layouts.append(self)
        refresh_layout(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pane = chat(app).query_one(ConfigPane)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: not pane.display)
        await pilot.pause(0.2)
        layouts.clear()
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: pane.display)
        await pilot.pause(0.3)
        assert len(layouts) == 1, f"showing the pane took {len(layouts)} layouts"
        placed = {w: (w.region, w.virtual_size) for w in pane.query("*")}
        assert len(placed) > 30
        chat(app).refresh(layout=True)
        await pilot.pause(0.2)
        assert len(layouts) == 2
        moved = [w for w, was in placed.items() if (w.region, w.virtual_size) != was]
        assert not moved, f"a layout after it moved {len(moved)} widgets: {moved[:3]}"


async def test_the_config_pane_s_first_layout_already_has_its_scrollbar(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The config pane holds more than a screenful (~72 lines): its scrollbar belongs in its
    first layout. Textual shows a scrollbar once a layout has found the content too tall,
    and lays the pane out again at the width left (~25 ms of the start at 120 columns and
    more, every label and field placed again); now the first layout places the pane as it
    stays."""
    from textual.screen import Screen

    widths: list[int] = []  # of the pane's first field, at each layout with the pane shown
    refresh_layout = Screen._refresh_layout

    def counted(self: Screen[object], *args: object, **kwargs: object) -> None:
        refresh_layout(self, *args, **kwargs)  # type: ignore[arg-type]
        pane = next(iter(self.query(ConfigPane)), None)
        if pane is not None and pane.display:
            widths.append(pane.query_one("#bot-name").region.width)

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: bool(widths), 10)
        await pilot.pause(0.3)
        pane = chat(app).query_one(ConfigPane)
        assert pane.show_vertical_scrollbar
    assert len(set(widths)) == 1, f"the pane's fields were placed at widths {widths}"


async def test_a_key_typed_redraws_the_composer_not_the_whole_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A frame that updates part of the screen (a key typed, a reply growing) draws the
    widgets shown in that part. Textual drew every widget whose container overlapped it: the
    header, the sidebar and the footer at each key and at each frame of a streaming reply,
    lines it then threw away (~15 widgets drawn a frame for the 2-5 it showed). What the
    frame shows is unchanged: the key typed is on screen."""
    from textual.widgets import Footer, Header

    from byok_tui.widgets.sidebar import Sidebar

    drawn = widgets_drawn(monkeypatch)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.pause(0.5)
        drawn.clear()
        await pilot.press("x")
        await pilot.pause()
        composer = chat(app).query_one(Composer)
        assert composer.text == "x"
        assert any(isinstance(w, type(composer)) or composer in w.ancestors for w in drawn)
        elsewhere = [type(w).__name__ for w in drawn if isinstance(w, Header | Footer | Sidebar)]
        assert elsewhere == [], "a key typed redrew widgets far from the composer"


async def test_a_partial_update_draws_only_the_rows_it_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A frame that updates a few lines (a key typed into the composer) asks each widget
    under them for those rows only: the screen, the chat column and the other containers
    behind the composer are as tall as the terminal, and drawing all their visible lines
    for every frame of a streaming reply was ~80 ms of a paced reply's CPU, thrown away."""
    from textual._compositor import Compositor
    from textual.geometry import Region
    from textual.strip import Strip
    from textual.widget import Widget

    asked: list[tuple[Widget, Region]] = []
    render_lines = Widget.render_lines

    def counted(self: Widget, crop: Region) -> list[Strip]:
        asked.append((self, crop))
        return render_lines(self, crop)

    crops: list[Region] = []
    render_partial_update = Compositor.render_partial_update

    def noted(self: Compositor) -> object:
        if self._dirty_regions:
            crops.append(Region.from_union(list(self._dirty_regions)))
        return render_partial_update(self)

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.pause(0.5)
        monkeypatch.setattr(Widget, "render_lines", counted)
        monkeypatch.setattr(Compositor, "render_partial_update", noted)
        await pilot.press("x")
        await pilot.pause()
        assert chat(app).query_one(Composer).text == "x"
    assert crops and asked
    tallest_crop = max(crop.height for crop in crops)
    assert tallest_crop < 20, "a key typed changed only the composer's lines"
    too_many = {
        type(widget).__name__: crop.height for widget, crop in asked if crop.height > tallest_crop
    }
    assert too_many == {}, "widgets were asked for rows the update does not change"


async def test_a_partial_update_writes_what_drawing_every_widget_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every partial update while keys are typed and a reply streams in (the sidebar, the
    transcript, the composer and the activity line changing) writes to the terminal exactly
    what Textual's own drawing of every widget under it would: drawing fewer widgets leaves
    nothing out."""
    from textual._compositor import ChopsUpdate, Compositor

    from byok_tui.compat import partial_updates_draw_what_they_show

    partial_updates_draw_what_they_show()
    textual_own = Compositor._get_renders.replaced  # type: ignore[attr-defined]
    render_partial_update = Compositor.render_partial_update
    compared: list[bool] = []

    def checked(self: Compositor) -> ChopsUpdate | None:
        changed = set(self._dirty_regions)
        ours = render_partial_update(self)
        self._dirty_regions.update(changed)
        with monkeypatch.context() as textual:
            textual.setattr(Compositor, "_get_renders", textual_own)
            theirs = render_partial_update(self)
        if ours is not None and theirs is not None:
            console = app.console
            compared.append(ours.render_segments(console) == theirs.render_segments(console))
        return ours

    monkeypatch.setattr(Compositor, "render_partial_update", checked)
    open_key_store(app_paths()).set(entry_name("openai"), "sk-proj-" + "K" * 60)
    fake = FakeProviders()
    fake.enqueue(*[f"word {n} " for n in range(120)], "\n\n```py\nx = 1\n```\n", pause=0.01)
    app = app_answered_by(fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "Tell me a lot")
        for key in "typed meanwhile":
            await pilot.press(key)
        await wait_for(pilot, lambda: "x = 1" in "".join(replies(app)))
        await pilot.pause(0.3)
    assert len(compared) >= 10
    assert all(compared), f"{compared.count(False)} of {len(compared)} updates differed"


def test_a_strip_that_is_its_own_division_or_extension_is_freed_without_the_collector() -> None:
    """Each frame cuts every line it draws at the widgets' edges (`Strip.divide`) and crops
    or extends it to its region (`crop_extend`). Textual caches the result in the strip even
    when it is the strip itself, a cycle only the collector frees: a 2,000-token paced reply
    left ~45,000 such objects (~3,000 strips with their seven caches each) for it. Through
    byok_tui/compat.py (point 17), a strip that is its own result is not cached in itself."""
    import gc

    from rich.segment import Segment
    from textual.strip import Strip

    from byok_tui.compat import strips_kept_out_of_cycles

    strips_kept_out_of_cycles()
    gc.collect()
    gc.disable()
    try:
        for _ in range(100):
            strip = Strip([Segment("hello "), Segment("world")])
            assert strip.divide([11]) == [strip]
            assert strip.crop_extend(0, 11, None) is strip
            assert strip.divide([6, 11])[1].text == "world"  # a real cut: cached as before
        left_for_the_collector = gc.collect()
    finally:
        gc.enable()
    assert left_for_the_collector == 0


def test_a_strip_makes_only_the_caches_it_uses() -> None:
    """Textual makes seven caches for every strip as it is made, and most strips (a line
    padded, cropped, cut at a widget's edge, then dropped) use one or none: a 2,000-token
    paced reply made ~15,000 of them, a third of what each collection of the older generation
    scanned while the reply streamed. Through byok_tui/compat.py (point 18), a strip makes a
    cache the first time it uses it, and its caches keep working as before."""
    import gc

    from rich.segment import Segment
    from textual.cache import FIFOCache
    from textual.strip import Strip

    from byok_tui.compat import strips_make_their_caches_when_used

    def caches(strip: Strip) -> int:
        return sum(isinstance(held, FIFOCache) for held in gc.get_referents(strip))

    strips_make_their_caches_when_used()
    strip = Strip([Segment("hello "), Segment("world")])
    assert caches(strip) == 0
    cropped = strip.crop(0, 5)
    assert cropped.text == "hello" and strip.crop(0, 5) is cropped  # cached, as before
    assert caches(strip) == 1 and caches(cropped) == 0
    assert [part.text for part in strip.divide([6, 11])] == ["hello ", "world"]
    assert strip.divide([6, 11]) is strip.divide([6, 11])
    assert caches(strip) == 2


async def test_the_footer_keys_a_change_of_focus_replaced_are_freed_with_what_they_drew() -> None:
    """Each change of focus composes the footer's keys anew (~0.4 MB). Textual kept each key
    alive in a watcher of the footer's `compact`, and the styles cache of every widget it
    drew (with each line drawn) in a class-wide cache of 1,024 entries, long after the
    widget was gone. Through byok_tui/compat.py (points 23 and 22), a removed widget is freed
    with what it drew."""
    import gc
    import weakref

    from textual.widgets._footer import FooterKey

    def footer_keys_replaced(keys: list[weakref.ref[FooterKey]]) -> Callable[[], bool]:
        return lambda: not any((key := ref()) is not None and key.is_attached for ref in keys)

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        # The keys the start drew were frozen with it (what the start made lives as long as
        # the app, byok_tui/core/startup.py): those composed at a change of focus are not.
        first = [weakref.ref(key) for key in app.screen.query(FooterKey)]
        await pilot.press("tab")
        await wait_for(pilot, footer_keys_replaced(first))
        await pilot.pause()
        shown = list(app.screen.query(FooterKey))
        assert shown and all(key._styles_cache._cache for key in shown), "keys not drawn"
        keys = [weakref.ref(key) for key in shown]
        drawn = [weakref.ref(key._styles_cache) for key in shown]
        del shown
        await pilot.press("shift+tab")
        await wait_for(pilot, footer_keys_replaced(keys))
        await pilot.pause()
        gc.collect()  # while the app runs: the footer, which watched them, is still there
        alive = sum(key() is not None for key in keys)
        assert alive == 0, f"{alive} of {len(keys)} removed keys are still alive"
        kept = sum(cache() is not None for cache in drawn)
        assert kept == 0, f"{kept} of {len(drawn)} removed keys' drawn lines are still held"


async def test_a_change_of_focus_styles_each_new_footer_key_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each change of focus composes the footer's keys anew. Textual's keys started compact,
    then were bound to the footer's own (not compact): each restyled twice more than its
    mounting (~a third of a Tab press). Through byok_tui/compat.py (point 24), each new key
    is styled once, and the footer is drawn as before."""
    from collections import Counter

    from textual.css.stylesheet import Stylesheet
    from textual.dom import DOMNode
    from textual.widgets._footer import FooterKey

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = set(app.screen.query(FooterKey))
        styled: Counter[DOMNode] = Counter()
        apply = Stylesheet.apply

        def counted(self: Stylesheet, node: DOMNode, *args: Any, **options: Any) -> None:
            styled[node] += 1
            apply(self, node, *args, **options)

        def composed_anew_and_bound() -> bool:
            keys = set(app.screen.query(FooterKey))
            bound = [key for key in keys if not key.has_class("-command-palette")]
            # Bound to the footer's own `compact`: not compact, as the footer is.
            return not before & keys and not any(key.has_class("-compact") for key in bound)

        monkeypatch.setattr(Stylesheet, "apply", counted)
        await pilot.press("tab")
        await wait_for(pilot, composed_anew_and_bound)
        await pilot.pause()
        monkeypatch.undo()
        new_keys = list(app.screen.query(FooterKey))
        assert new_keys
        assert [styled[key] for key in new_keys] == [1] * len(new_keys)


async def test_the_chat_screen_s_focus_starts_in_the_composer_and_nowhere_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Textual gives a new screen's focus to its first focusable widget, the sidebar, and
    the composer took it in `on_mount`: at every start the sidebar was restyled twice (~11
    ms) and the footer's keys changed twice. Only the composer gains the focus."""
    app = make_app()  # made first: byok_tui/compat.py wraps what is recorded here
    watch_has_focus = Widget.watch_has_focus
    changes: list[tuple[str, bool]] = []

    def recorded(self: Widget, has_focus: bool) -> None:
        changes.append((type(self).__name__, has_focus))
        watch_has_focus(self, has_focus)

    monkeypatch.setattr(Widget, "watch_has_focus", recorded)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: chat(app).started)
        assert chat(app).query_one(Composer).has_focus
    gained = [name for name, has_focus in changes if has_focus]
    assert "Sidebar" not in gained, changes
    assert gained[:1] == ["Composer"], changes


def answering_under_a_screenful(words: int) -> ByokApp:
    """An app on a conversation of ten exchanges, taller than the screen, that answers
    the next message with `words` words, 4 ms apart."""
    from tests.support.keys import FAKE_KEYS
    from tests.support.stored import one_exchange

    store, conversation = one_exchange(FAKE_KEYS["openai"], "Taller than the screen")
    for number in range(10):
        store.add_message(conversation.id, "user", f"question {number}")
        store.add_message(conversation.id, "assistant", f"answer {number}")
    store.close()
    fake = FakeProviders()
    fake.enqueue(*[f"word {n} " for n in range(words)], pause=0.004)
    return app_answered_by(fake)


async def test_a_reply_s_end_asks_to_draw_only_the_lines_it_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reply's last flush, which takes the lines laid out ahead away, asked for the whole
    reply to be drawn again besides a layout. A flush of the lines the stream had just
    changed, waiting for its frame, took that whole repaint with it when its frame came
    before the layout: the whole visible reply drawn at its old height, then again by the
    layout's frame (1 in ~40 runs of
    test_a_reply_a_layout_drew_is_not_drawn_whole_again_at_its_next_flush, under load). The
    end asks for the lines its text changed and for a layout, whose frame draws what it
    resizes."""
    from byok_tui.widgets.markdown_text import MarkdownText
    from byok_tui.widgets.reply_stream import ReplyStream

    whole_repaints: list[str] = []
    ending: list[bool] = []
    refresh, flush = MarkdownText.refresh, ReplyStream.flush

    def recorded_refresh(self: MarkdownText, *regions: Any, **how: bool) -> MarkdownText:
        if ending and not regions and how.get("repaint", True):
            whole_repaints.append(f"layout={how.get('layout', False)}")
        return refresh(self, *regions, **how)

    def recorded_flush(self: ReplyStream, *, final: bool = False) -> None:
        if final:
            ending.append(final)
        try:
            flush(self, final=final)
        finally:
            ending.clear()

    app = answering_under_a_screenful(120)
    async with app.run_test(size=(60, 40)) as pilot:
        await settle(pilot)
        monkeypatch.setattr(MarkdownText, "refresh", recorded_refresh)
        monkeypatch.setattr(ReplyStream, "flush", recorded_flush)
        await send(pilot, "Tell me a lot")
        await wait_for(pilot, lambda: not replying(app) and "word 119" in "".join(replies(app)))
    assert whole_repaints == [], "the reply's end asked for the whole reply to be drawn again"


@pytest.mark.long(7)
async def test_a_scrollbar_a_layout_drew_is_not_drawn_again_in_a_frame_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each line a streaming reply gains lays the transcript out, and that layout's frame
    draws the transcript's scrollbar at its new length. Textual then drew the scrollbar again
    in a frame of its own a few ms later (the layout's refresh of it asked for the next
    frame): ~36 frames more in a 2,000-token paced reply, ~2 ms each. Through
    byok_tui/compat.py (point 19) it is left to the layout's frame; and what the terminal
    last got for the scrollbar is what drawing it afresh gives."""
    from textual.app import App
    from textual.geometry import Region
    from textual.scrollbar import ScrollBar
    from textual.strip import Strip
    from textual.widget import Widget

    drawn: set[str] = set()  # what the frame being made drew
    frames: list[set[str]] = []
    bar_drawn: list[list[Strip]] = []  # the transcript's scrollbar, as last drawn
    render_lines, display = Widget.render_lines, App._display

    def recorded_render(self: Widget, crop: Region) -> list[Strip]:
        lines = render_lines(self, crop)
        drawn.add(type(self).__name__)
        if isinstance(self, ScrollBar) and isinstance(self.parent, Transcript):
            bar_drawn[:] = [lines]
        return lines

    def recorded_display(self: App[None], screen: object, renderable: object) -> None:
        if renderable is not None:
            frames.append(set(drawn))
        drawn.clear()
        display(self, screen, renderable)  # type: ignore[arg-type]

    monkeypatch.setattr(Widget, "render_lines", recorded_render)
    monkeypatch.setattr(App, "_display", recorded_display)
    app = answering_under_a_screenful(600)  # the scrollbar is there before the reply
    async with app.run_test(size=(60, 16)) as pilot:
        await settle(pilot)
        # Counted once the scrollbar is there (its first appearance is a layout of its own)
        transcript = chat(app).query_one(Transcript)
        await wait_for(pilot, lambda: transcript.show_vertical_scrollbar and bool(bar_drawn))
        await send(pilot, "Tell me a lot")
        # ... and once it streams: sending redraws the column (the activity line) as a whole.
        await wait_for(pilot, lambda: "word 20 " in "".join(replies(app)[-1:]))
        frames.clear()
        # 600 words 4 ms apart, each frame recorded: over 10 s on a slow, loaded host.
        await wait_for(pilot, lambda: "word 599" in "".join(replies(app)), timeout=30)
        await pilot.pause(0.3)
        bar = transcript.vertical_scrollbar
        bar._styles_cache.clear()
        afresh = bar.render_lines(Region(0, 0, bar.size.width, bar.size.height))
    grew = [frame for frame in frames if "MarkdownText" in frame and "ScrollBar" in frame]
    bar_alone = [frame for frame in frames if "ScrollBar" in frame and "ReplyView" not in frame]
    assert len(grew) >= 5, "the reply never grew the transcript past the screen"
    assert not bar_alone, f"{len(bar_alone)} frames drew the scrollbar alone"
    assert bar_drawn and [line.text for line in bar_drawn[0]] == [line.text for line in afresh]
    assert bar_drawn[0] == afresh


@pytest.mark.long(11)
async def test_a_reply_a_layout_drew_is_not_drawn_whole_again_at_its_next_flush(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When a streaming reply outgrows the lines laid out for it, the layout's frame draws
    all of it that is on screen at its new height. Textual also marked the whole reply for a
    repaint (its size changed), and that request waited for the reply's next refresh: the
    flush after every layout drew the whole visible reply again, ~30 lines where 2-13
    changed (a third of a paced reply's frames). Through byok_tui/compat.py (point 19) the
    layout's frame is enough; and what is on screen is the whole reply."""
    from textual.app import App
    from textual.geometry import Region
    from textual.scrollbar import ScrollBar
    from textual.strip import Strip
    from textual.widget import Widget

    from byok_tui.widgets.markdown_text import STREAM_HEADROOM, MarkdownText
    from tests.support.screen_model import ScreenModel, drawn_afresh

    rows: list[int] = []  # the rows of the reply the frame being made asked for
    frames: list[tuple[bool, int]] = []  # (a layout's frame, most rows of the reply asked)
    render_lines, display = Widget.render_lines, App._display
    terminal = ScreenModel(60, 40)
    comparing: list[bool] = []  # drawing afresh to compare: not a frame's drawing
    differs: list[bool] = []  # after each frame: the terminal's transcript is not as drawn afresh

    def recorded_render(self: Widget, crop: Region) -> list[Strip]:
        if comparing:
            pass
        elif isinstance(self, ScrollBar):
            rows.append(-1)  # drawn in a layout's frame only (point 19)
        elif isinstance(self, MarkdownText):
            rows.append(crop.height)
        return render_lines(self, crop)

    def afresh_now() -> list[str]:
        comparing.append(True)
        for widget in app.screen.walk_children(Widget, with_self=True):
            widget._styles_cache.clear()  # what each widget draws now, not kept lines
        lines = drawn_afresh(app.screen._compositor.render_strips())
        comparing.clear()
        return lines

    def recorded_display(self: App[None], screen: object, renderable: object) -> None:
        if renderable is not None and rows:
            frames.append((-1 in rows, max(rows)))
        rows.clear()
        if renderable is not None:
            terminal.apply(renderable, self.console, self.console.options)
            shown = self.screen._compositor.visible_widgets
            # Else what changed since is drawn in a frame still to come. (A scrollbar keeps the
            # repaint its first layout asked for until it is next refreshed.)
            settled = not self.screen._layout_widgets and not any(
                widget._layout_required
                or widget._repaint_required
                or (widget._repaint_regions and not isinstance(widget, ScrollBar))
                for widget in shown
            )
            if settled:
                top, bottom = transcript.region.y, transcript.region.bottom
                differs.append(terminal.lines()[top:bottom] != afresh_now()[top:bottom])
        display(self, screen, renderable)  # type: ignore[arg-type]

    app = answering_under_a_screenful(600)
    async with app.run_test(size=(60, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "Tell me a lot")
        await wait_for(pilot, lambda: "word 20 " in "".join(replies(app)[-1:]))
        transcript = chat(app).query_one(Transcript)
        terminal.cells = [list(line) for line in afresh_now()]  # as the terminal shows it
        monkeypatch.setattr(Widget, "render_lines", recorded_render)
        monkeypatch.setattr(App, "_display", recorded_display)
        # 600 words, each frame drawn afresh to compare: 10-12 layouts and 20-60 flushes (more
        # on a loaded host), ~4 s of CPU.
        await wait_for(pilot, lambda: "word 599" in "".join(replies(app)), timeout=40)
        await pilot.pause(0.3)
        assert transcript.scroll_y == transcript.max_scroll_y
    layouts = [asked for layout, asked in frames if layout]
    flushes = [asked for layout, asked in frames if not layout]
    assert len(layouts) >= 5 and len(flushes) >= 10, "the reply never grew past the screen"
    assert max(layouts) > 2 * STREAM_HEADROOM, "a layout's frame draws all that is on screen"
    too_many = [asked for asked in flushes if asked > STREAM_HEADROOM + 1]
    assert not too_many, f"{len(too_many)} of {len(flushes)} flushes drew the whole reply again"
    assert "word 599" in "".join(terminal.lines()), "the reply's end is on screen"
    assert len(differs) >= 10 and not any(differs), (
        f"after {differs.count(True)} of {len(differs)} frames the terminal did not show "
        "the transcript as it was"
    )


async def test_a_screen_under_an_opaque_one_draws_nothing_until_it_is_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A change on a screen that an opaque screen covers (the chat composer taking what is
    typed in a compare) draws nothing: Textual laid the screen under out and drew it, then
    drew its regions again on the top screen, and that screen whole a frame later (the
    compare's columns at each key). Once it is back on top it shows the change."""
    from textual.screen import Screen

    drawn = widgets_drawn(monkeypatch)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = chat(app)
        await app.push_screen(Screen())
        await pilot.pause(0.3)
        drawn.clear()
        for typed in ("t", "ty", "typ", "typed"):
            screen.query_one(Composer).text = typed
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        assert drawn == [], (
            f"a covered screen's change drew {sorted({type(w).__name__ for w in drawn})}"
        )
        app.pop_screen()
        # Back on top, it is drawn, its composer with what was typed meanwhile.
        await wait_for(pilot, lambda: any(isinstance(w, Composer) for w in drawn), 5)
        assert screen.query_one(Composer).text == "typed"


async def test_a_conversation_opened_at_start_is_rendered_at_one_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The config pane comes just after the first frame; the transcript is laid out at its
    final width from the start, so each reply shown is rendered once, not first at the
    width the pane would leave and again when the pane comes (ten replies of 12 KB cost
    ~0.65 s more at 120x40)."""
    from byok_tui.widgets.markdown_text import MarkdownText
    from tests.support.keys import FAKE_KEYS
    from tests.support.stored import one_exchange

    store, conversation = one_exchange(FAKE_KEYS["openai"], "Long replies")
    for n in range(3):
        store.add_message(conversation.id, "user", f"Question {n}")
        store.add_message(conversation.id, "assistant", f"Answer {n}. " + "Words go on. " * 300)
    widths: dict[int, set[int]] = {}
    render_part = MarkdownText._render_part

    def counted(self: MarkdownText, part: object, width: int) -> object:
        if len(self.text) > 1000:
            widths.setdefault(id(self), set()).add(width)
        return render_part(self, part, width)  # type: ignore[arg-type]

    monkeypatch.setattr(MarkdownText, "_render_part", counted)
    request_left = ChatColumn.request_left

    async def late(self: ChatColumn, longest: float) -> None:
        await asyncio.sleep(0.5)  # a slower machine: the pane comes after the transcript
        await request_left(self, longest)

    monkeypatch.setattr(ChatColumn, "request_left", late)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: bool(chat(app).query(ConfigPane)), 10)
        await pilot.pause(0.3)
        assert chat(app).query_one(ConfigPane).display
    assert widths, "no long reply was drawn"
    assert all(len(seen) == 1 for seen in widths.values()), f"rendered at widths {widths}"


async def test_a_growing_reply_lays_out_only_the_transcript_and_places_all_as_a_whole_layout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each step a streaming reply grows is a layout whose every change lies inside the
    transcript. Textual placed every widget of the screen at each one (the sidebar, the
    config pane, the header and the footer, ~70 widgets for the ~10 that can move); through
    byok_tui/compat.py (point 25) only the transcript's part is placed. After each such
    layout every widget is where a layout of the whole screen puts it, and which are shown
    is the same."""
    from textual._compositor import Compositor

    import byok_tui.compat as compat

    parts: list[str] = []  # the part each partial layout placed
    differences: list[str] = []
    reflow_part = compat.reflow_part

    def compared(compositor: Compositor, part: Widget) -> object:
        result = reflow_part(compositor, part)
        if result is not None and compositor.root is not None:
            parts.append(type(part).__name__)
            whole, shown = compositor._arrange_root(
                compositor.root, compositor.size, visible_only=False
            )
            placed = compositor._full_map
            moved = [w for w in whole.keys() | placed.keys() if whole.get(w) != placed.get(w)]
            if moved or shown != compositor.widgets:
                differences.append(f"{part!r}: {moved!r}, {shown ^ compositor.widgets!r}")
        return result

    monkeypatch.setattr(compat, "reflow_part", compared)
    app = answering_under_a_screenful(300)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "Tell me a lot")
        await wait_for(pilot, lambda: "word 299" in "".join(replies(app)), timeout=30)
        await pilot.pause()
    assert parts.count("ConversationTranscript") >= 3, f"placed alone: {parts}"
    assert not differences, differences


async def test_a_reply_drawn_as_a_blank_draws_what_styling_it_draws_focused_or_not() -> None:
    """A reply has no border and no content of its own (`BLANK`): each of its lines is one
    blank strip of its background, not a line styled cell by cell, ~1 ms a frame in which a
    streaming reply grows (drawn under what it holds). What shows of it, beside a narrow
    line of its own (its alternatives) or around text, is the same either way, focused
    (another background) or not."""
    from textual.geometry import Region

    from byok_tui.widgets.message_views import ReplyView
    from tests.support.keys import FAKE_KEYS
    from tests.support.stored import one_exchange

    store, conversation = one_exchange(FAKE_KEYS["openai"], "Two answers")
    question = store.add_message(conversation.id, "user", "What is a kumquat?")
    store.add_message(conversation.id, "assistant", "A fruit.")
    store.branch_from(conversation.id, question.id)
    store.add_message(conversation.id, "assistant", "A small citrus fruit.\n\nEaten whole.")
    store.close()
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        reply = chat(app).query(ReplyView).last()
        assert ReplyView.BLANK
        for focused in (False, True):
            if focused:
                reply.focus()
                await pilot.pause()
            whole = Region(0, 0, reply.size.width, reply.size.height)
            blank = reply.render_lines(whole)
            reply._styles_cache.clear()
            ReplyView.BLANK = False
            try:
                styled = reply._styles_cache.render_widget(reply, whole)
            finally:
                ReplyView.BLANK = True
            assert [cells(strip) for strip in blank] == [cells(strip) for strip in styled], (
                f"focused={focused}: a blank line of the reply shows otherwise"
            )


def cells(strip: Iterable[Segment]) -> list[tuple[object, ...]]:
    """What a line shows: each cell's character, background, and the styles a blank shows
    (a foreground colour shows nothing on a space)."""
    return [
        (character, style.bgcolor, *(bool(getattr(style, name)) for name in SHOWN_ON_A_SPACE))
        for text, style, _ in strip
        if style is not None
        for character in text
    ]


SHOWN_ON_A_SPACE = ("underline", "strike", "reverse", "overline")
