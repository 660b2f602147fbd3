"""Every test runs isolated: its own BYOK_TUI_HOME, HOME and XDG folders, a test keyring, and
no provider keys from the developer's environment. Nothing touches the real user's files.

Fixtures only: helpers live in tests/support/, never imported from a conftest.
"""

from __future__ import annotations

import asyncio
import compileall
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import keyring
import pytest
import pytest_textual_snapshot

from byok_tui.compat import checked_version_installed
from byok_tui.core.paths import app_paths
from byok_tui.core.redaction import forget_secrets
from byok_tui.core.registry import use_custom_providers
from byok_tui.keys import KeyStore, open_key_store
from tests.support.background_run import benchmarks_smoke_argv, run_folder, start_once
from tests.support.isolated_keyring import IsolatedKeyring
from tests.support.isolation import isolated_variables
from tests.support.provider_server import ProviderServer, provider_server
from tests.support.snapshots import REPO_ROOT, SNAPSHOT_DIR

if TYPE_CHECKING:
    from textual.pilot import Pilot

BENCHMARKS_SMOKE_TEST = "tests/test_benchmarks_smoke.py::test_every_benchmark_runs_and_reports"


class TopLevelSVGExtension(pytest_textual_snapshot.SVGImageExtension):
    """Keep SVG snapshots in the top-level snapshots/ folder (syrupy has no option for it)."""

    @classmethod
    def dirname(cls, *, test_location):  # type: ignore[no-untyped-def, override]
        return str(SNAPSHOT_DIR / test_location.basename)


# snap_compare looks the extension up by this module-level name each time it runs.
pytest_textual_snapshot.SVGImageExtension = TopLevelSVGExtension  # type: ignore[misc]


def pytest_configure(config: pytest.Config) -> None:
    """The project's bytecode compiled once, before any worker starts, as an install has it.
    Where PYTHONDONTWRITEBYTECODE is set (as in CI), each of the ~150 processes the tests
    start compiled byok_tui again (~0.2 s of CPU each) until something compiled it."""
    if not hasattr(config, "workerinput"):  # in the process that starts the workers
        for package in ("byok_tui", "tests", "benchmarks"):
            compileall.compile_dir(REPO_ROOT / package, quiet=1)
        asserts_rewritten_once()


def asserts_rewritten_once() -> None:
    """The test modules' asserts rewritten once, before any worker starts, into pytest's own
    cache of rewritten modules, which every worker then reads. Where PYTHONDONTWRITEBYTECODE
    is set (as in CI), pytest writes no such cache, and each worker rewrote every test module
    as it collected them (~4 s of CPU each, a third of the time before the first test ran).
    Relies on pytest's private `_rewrite_test` and `_write_pyc`: on a pytest whose helpers
    differ, nothing is done here and each worker rewrites them as before."""
    import inspect
    import multiprocessing

    from _pytest.assertion import rewrite

    try:
        fits = list(inspect.signature(rewrite._rewrite_test).parameters) == ["fn", "config"]
        fits &= list(inspect.signature(rewrite._write_pyc).parameters) == [
            "state", "co", "source_stat", "pyc"
        ]  # fmt: skip
        fits &= list(inspect.signature(rewrite._read_pyc).parameters)[:2] == ["source", "pyc"]
    except AttributeError:
        return
    if not fits or "fork" not in multiprocessing.get_all_start_methods():
        return  # (without fork, as on Windows, the workers rewrite them as before)
    stale = [
        path
        for path in sorted((REPO_ROOT / "tests").rglob("*.py"))
        if (path.name.startswith("test_") or path.name == "conftest.py")
        and rewrite._read_pyc(path, _rewritten_path(path)) is None
    ]
    if not stale:
        return
    with multiprocessing.get_context("fork").Pool(2) as pool:  # both cores: ~2 s in all
        pool.map(_rewrite_into_cache, stale, chunksize=8)


def _rewritten_path(path: Path) -> Path:
    from _pytest.assertion import rewrite

    return rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)


class _Untraced:
    def trace(self, _message: str) -> None:
        pass


def _rewrite_into_cache(path: Path) -> None:
    from _pytest.assertion import rewrite

    source_stat, code = rewrite._rewrite_test(path, None)  # type: ignore[arg-type]  # no pass hook
    target = _rewritten_path(path)
    target.parent.mkdir(exist_ok=True)
    rewrite._write_pyc(_Untraced(), code, source_stat, target)  # type: ignore[arg-type]


def pytest_collection_finish(session: pytest.Session) -> None:
    """The benchmarks' smoke run started as soon as the tests are known, if it is among
    them, to run beside the workers (tests/support/background_run.py)."""
    if session.config.option.collectonly:
        return
    if any(item.nodeid == BENCHMARKS_SMOKE_TEST for item in session.items):
        folder = run_folder("benchmarks-smoke", suite_run_id(session.config))
        start_once(folder, benchmarks_smoke_argv(folder))


@pytest.fixture
def benchmarks_smoke_run(request: pytest.FixtureRequest) -> Path:
    """The folder of this run's benchmarks smoke run (started at collection)."""
    return run_folder("benchmarks-smoke", suite_run_id(request.config))


def suite_run_id(config: pytest.Config) -> str:
    """The same in every worker of one run (xdist's), else this process's own."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return str(workerinput["testrunuid"])
    if not hasattr(config, "_byok_run_id"):
        import uuid

        config._byok_run_id = uuid.uuid4().hex  # type: ignore[attr-defined]
    return str(config._byok_run_id)  # type: ignore[attr-defined]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `long` first, the longest first (the order is otherwise kept): started
    last, a test of ten seconds kept one worker busy that long after the others had
    finished. (The benchmarks' smoke run, over a minute, runs beside the workers instead.)"""

    def seconds(item: pytest.Item) -> float:
        marker = item.get_closest_marker("long")
        return float(marker.args[0]) if marker is not None else 0.0

    items.sort(key=seconds, reverse=True)


@pytest.fixture(autouse=True, scope="session")
def quick_idle_checks() -> None:
    """Pilot's `press` and `pause` wait until the process looks idle: sleeps of 20 ms until one
    passes with under 1 ms of CPU (Textual's `_wait.wait_for_idle`). The suite makes thousands
    of such waits; sleeps of 5 ms tell the same sooner. A test must never rely on a pause's
    length: what a thread or a timer does is waited for by its condition (`wait_for`)."""
    if checked_version_installed("textual"):  # a module constant, read at each wait
        import textual._wait

        textual._wait.SLEEP_GRANULARITY = 0.005


@pytest.fixture(autouse=True, scope="session")
def pilot_waits_for_the_widgets_still_busy() -> None:
    """Each Pilot `press`, `click` and `pause` first waits until every widget of the screen has
    handled what was queued for it (`Pilot._wait_for_screen`): it queues a callback to each of
    the widgets (~75 on the chat screen) and waits for them all, ~11 ms of CPU a wait. A
    widget idle in its message loop (nothing queued, the loop waiting for a message, no
    refresh or callback pending) has nothing to handle: it is left out, and the wait is the
    same for every widget that still had something to do (tests/test_pilot_waits.py). The
    app and the screen are always waited for. A wait then takes ~1.5 ms; the app tests wait
    mostly on conditions (`wait_for`), so the suite gains ~3 % of its CPU."""
    if not checked_version_installed("textual"):  # Pilot._wait_for_screen, as checked
        return
    from textual.pilot import Pilot, WaitForScreenTimeout

    async def wait_for_the_busy(pilot: Pilot[Any], timeout: float = 30.0) -> bool:
        # Textual's own method, but for the `busy` filter
        try:
            screen = pilot.app.screen
        except Exception:
            return False
        nodes = [pilot.app, screen, *filter(_busy, screen.walk_children())]
        count = 0
        count_zero_event = asyncio.Event()

        def decrement_counter() -> None:
            nonlocal count
            count -= 1
            if count == 0:
                count_zero_event.set()

        for node in nodes:
            if node.call_later(decrement_counter):
                count += 1
        if count:
            wait_for: list[asyncio.Task[Any]] = [
                asyncio.create_task(count_zero_event.wait()),
                asyncio.create_task(cast(asyncio.Event, pilot.app._exception_event).wait()),
            ]
            _, pending = await asyncio.wait(
                wait_for, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            for task in pending:
                task.cancel()
            if len(wait_for) == len(pending):
                raise WaitForScreenTimeout(
                    "Timed out while waiting for widgets to process pending messages."
                )
            if count > 0:
                return False
        return True

    Pilot._wait_for_screen = wait_for_the_busy  # type: ignore[method-assign, assignment]


def _busy(node: Any) -> bool:
    """Whether a widget may still have something to handle: queued messages or callbacks, a
    refresh asked for, or a handler running (its loop not waiting for the next message)."""
    queue = node._message_queue
    if queue.values or not queue.ready_event._waiters or node._next_callbacks:
        return True
    return bool(
        node._repaint_required
        or node._layout_required
        or node._scroll_required
        or node._recompose_required
        or node._refresh_styles_required
    )


@pytest.fixture(autouse=True, scope="session")
def css_parsed_once_a_process() -> None:
    """Each app a test starts parsed Textual's CSS again, every widget's default CSS included
    (~85 ms a start, about a tenth of the suite's CPU). The same text parsed with the same
    variables gives the same rules, which are only read once parsed: they are kept for the
    worker's whole run. A CSS error still raises each time (it is never kept)."""
    if not checked_version_installed("textual"):  # Stylesheet._parse_rules, as checked
        return
    from textual.css.model import RuleSet
    from textual.css.stylesheet import Stylesheet
    from textual.css.types import CSSLocation

    parse_rules = Stylesheet._parse_rules
    parsed: dict[tuple[object, ...], list[RuleSet]] = {}

    def parsed_once(
        stylesheet: Stylesheet,
        css: str,
        read_from: CSSLocation,
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> list[RuleSet]:
        variables = tuple(stylesheet._variables.items())
        key = (css, read_from, is_default_rules, tie_breaker, scope, variables)
        rules = parsed.get(key)
        if rules is None:
            rules = parse_rules(stylesheet, css, read_from, is_default_rules, tie_breaker, scope)
            parsed[key] = rules
        return rules

    parsed_once.replaced = parse_rules  # type: ignore[attr-defined]  # for a test of parsing
    Stylesheet._parse_rules = parsed_once  # type: ignore[method-assign, assignment]


@pytest.fixture(autouse=True)
def frames_drawn_where_looked_at(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A headless app (every app a test starts in-process) composes each frame, drawing every
    changed line of every widget, and Textual then drops it unwritten (`App._display` writes
    nothing when headless): about a quarter of the CPU of a test that runs the app. Here such
    frames are not composed, unless the test is marked `draws` (it looks at what frames draw:
    what a frame redraws, what a terminal shows, how a screen looks). A test still draws the
    screen it leaves: once it is done, the whole screen is drawn, so a widget that cannot
    draw the state a test left it in fails that test. Layouts, refreshes and what waits for a
    refresh (`call_after_refresh`) run as before."""
    if request.node.get_closest_marker("draws") or not checked_version_installed("textual"):
        return
    from textual.app import App
    from textual.screen import Screen

    compose_frame = Screen._compositor_refresh

    def frame_not_composed(screen: Screen[Any]) -> None:
        app = screen.app
        if not app.is_headless or app.is_inline or screen is not app.screen:
            compose_frame(screen)
            return
        screen._compositor._dirty_regions.clear()  # as composing the frame leaves them
        screen._dirty_widgets.clear()
        app._update_mouse_over(screen)

    run_test = App.run_test

    @contextlib.asynccontextmanager
    async def run_test_drawing_its_end(
        app: App[Any], *args: Any, **kwargs: Any
    ) -> AsyncIterator[Pilot[Any]]:
        async with run_test(app, *args, **kwargs) as pilot:
            yield pilot
            if app.is_running and app._screen_stack:  # not if the test ended the app
                app.screen._compositor.render_update(
                    full=True, screen_stack=app._background_screens
                )

    monkeypatch.setattr(Screen, "_compositor_refresh", frame_not_composed)
    monkeypatch.setattr(App, "run_test", run_test_drawing_its_end)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    variables, unset = isolated_variables(tmp_path)
    for variable, value in variables.items():
        monkeypatch.setenv(variable, value)
    for variable in unset:
        monkeypatch.delenv(variable, raising=False)
    home = Path(variables["BYOK_TUI_HOME"])
    previous_keyring = keyring.get_keyring()
    keyring.set_keyring(IsolatedKeyring())
    forget_secrets()
    use_custom_providers(())  # no provider defined by another test's config file
    yield home
    keyring.set_keyring(previous_keyring)
    forget_secrets()
    use_custom_providers(())


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    """A provider's API on 127.0.0.1: real sockets, so headers, streams and disconnects are
    exercised. Tell it what to answer with `reply_with`."""
    with provider_server() as running:
        yield running


@pytest.fixture
def store() -> KeyStore:
    """The test's own key store (a module may declare its own `store`: the database)."""
    return open_key_store(app_paths())
