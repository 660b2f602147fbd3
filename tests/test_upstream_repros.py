"""The minimal reproductions in docs/upstream/ show what they say, and byok-tui's fix ends it.

Each script runs against plain Textual and must print REPRODUCED: the day one prints NOT
REPRODUCED on a new Textual, upstream has fixed it and the touch point in byok_tui/compat.py
can go (its note in docs/upstream/README.md says what to keep). Run again after the touch
point is applied, the same script must print NOT REPRODUCED: the fix does what its note says.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import runpy
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import cast

import pytest

pytestmark = pytest.mark.internals

UPSTREAM = Path(__file__).resolve().parent.parent / "docs" / "upstream"

# Each reproduction and the compat touch point that fixes it.
FIXED_BY = {
    "07_screen_resize_loop.py": "screens_take_the_terminal_size_only",
    "08_option_list_page_keys.py": "page_keys_need_lines",
    "09_timer_late_tick.py": "timers_tick_at_the_next_interval",
    "11_writer_thread_dies.py": "output_ends_with_the_terminal",
    "13_layout_leaves_map_stale.py": "layouts_keep_their_map",
    "14_screen_laid_out_twice.py": "screens_lay_out_once_a_size",
    "15_screen_restyled_when_first_shown.py": "screens_styled_once_when_first_shown",
    "16_partial_update_draws_far_widgets.py": "partial_updates_draw_what_they_show",
    "17_strip_cached_in_itself.py": "strips_kept_out_of_cycles",
    "18_strip_makes_seven_caches.py": "strips_make_their_caches_when_used",
    "21_opaque_screen_redraws_the_one_under_it.py": "opaque_screens_hide_those_under_them",
    "22_styles_cache_kept_by_lru_cache.py": "styles_caches_let_go",
    "23_watcher_keeps_removed_widget.py": "watchers_go_with_their_node",
    "24_footer_key_restyled_twice.py": "footer_keys_styled_once",
    "25_layout_places_every_widget.py": "layouts_place_only_their_part",
    "26_removed_widget_restyled_on_blur.py": "widgets_going_away_keep_their_styles",
    "27_screen_css_restyles_the_app.py": "new_stylesheets_parsed_alone",
    "28_layout_asks_for_another_layout.py": "layouts_ask_no_layout_for_the_sizes_they_set",
    "29_editing_key_overtaken.py": "editing_keys_keep_their_order",
    "31_widget_restyled_before_it_mounts.py": "widgets_styled_as_they_mount",
}


# What the scripts import, loaded once in a fork server of plain Textual (never byok_tui:
# nothing of compat.py is in it, so each script meets Textual as it ships). Each run is a
# process forked from it: a fresh interpreter spent ~0.3 s of a run's ~0.5 s of CPU importing.
PRELOADED = ["asyncio", "textual.app", "textual.screen", "textual.widget", "textual.containers",
             "textual.widgets", "textual.widgets._footer", "textual.widgets._input",
             "textual.widgets._label", "textual.widgets._static", "textual.widgets._header",
             "textual.widgets._option_list", "textual.widgets._text_area",
             "textual.drivers._writer_thread"]  # fmt: skip


def _run_script(script: str, fix: str | None, answer: Connection) -> None:
    """In the forked process: the script run as `__main__`, what it printed sent back."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            if fix:
                import byok_tui.compat as compat

                getattr(compat, fix)()
            runpy.run_path(str(UPSTREAM / script), run_name="__main__")
        answer.send((printed.getvalue(), ""))
    except BaseException:  # whatever it was, the test says it
        answer.send((printed.getvalue(), traceback.format_exc()))
    finally:
        answer.close()
        os._exit(0)  # a thread a script left blocked (as 11's is) must not hold the exit


def verdict(script: str, fix: str | None) -> str:
    """The last line the script prints, run with `fix` applied first (or none)."""
    forks = multiprocessing.get_context("forkserver")
    forks.set_forkserver_preload(PRELOADED)  # read when the server first starts
    ours, theirs = forks.Pipe(duplex=False)
    run = forks.Process(target=_run_script, args=(script, fix, theirs))
    run.start()
    theirs.close()
    try:
        if not ours.poll(120):
            run.kill()  # as subprocess's timeout did: no script left running after its test
            raise AssertionError(f"{script} ran over two minutes")
        printed, failure = cast(tuple[str, str], ours.recv())
    except EOFError:
        printed, failure = "", "it ended without a word"
    finally:
        run.join(10)
    lines = printed.strip().splitlines()
    assert lines, f"{script} printed nothing (exit {run.exitcode}): {failure[-2000:]}"
    return lines[-1]


def test_every_reproduction_is_listed_with_its_fix_and_its_note() -> None:
    scripts = sorted(path.name for path in UPSTREAM.glob("*.py"))
    assert scripts == sorted(FIXED_BY)
    notes = (UPSTREAM / "README.md").read_text(encoding="utf-8")
    for script in scripts:
        assert f"({script})" in notes, f"docs/upstream/README.md does not link {script}"


@pytest.mark.parametrize("script", sorted(FIXED_BY))
def test_plain_textual_shows_the_problem(script: str) -> None:
    shown = verdict(script, None)
    assert shown.startswith("REPRODUCED"), (
        f"{script} no longer reproduces on this Textual ({shown}): if upstream fixed it, "
        f"remove compat.{FIXED_BY[script]} as its note in docs/upstream/README.md says"
    )


@pytest.mark.parametrize("script", sorted(FIXED_BY))
def test_the_touch_point_ends_the_problem(script: str) -> None:
    shown = verdict(script, FIXED_BY[script])
    assert shown.startswith("NOT REPRODUCED"), f"compat.{FIXED_BY[script]} did not fix it"
