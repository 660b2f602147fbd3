"""Nothing the user typed or received is ever lost: not on errors, cancels, kills."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from byok_tui.chat.conversation import ConversationService
from byok_tui.chat.outgoing import Outgoing
from byok_tui.chat.reply_recorder import ReplyRecorder
from byok_tui.core.paths import app_paths
from byok_tui.core.records import Message
from byok_tui.keys import KeyStore, NoApiKeyError, entry_name, open_key_store
from byok_tui.providers.client import ProviderClient, Timeouts
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.types import TextDelta
from byok_tui.storage.store import Store
from tests.support.provider_server import ProviderServer, Reply, provider_server, sse
from tests.support.terminal import InTerminal

KEY = "sk-proj-" + "N" * 60


def piece(text: str) -> dict:
    return {"choices": [{"index": 0, "delta": {"content": text}}]}


FINISH = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


@pytest.fixture
def store() -> Store:
    return Store(app_paths().data_dir / "byok-tui.sqlite3")


@pytest.fixture
def keys() -> KeyStore:
    keystore = open_key_store(app_paths())
    keystore.set(entry_name("openai"), KEY)
    return keystore


def service_for(store: Store, keys: KeyStore, server: ProviderServer) -> ConversationService:
    client = ProviderClient(
        keys,
        environ={"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"},
        timeouts=Timeouts(connect=2, read=5),
    )
    return ConversationService(store, client)


async def run(service: ConversationService, store: Store, text: str | None = "Hello?") -> str:
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = (store.conversations(bot.id) or [store.create_conversation(bot.id, "t")])[0]
    received = []
    async for event in service.send(bot, conversation, Outgoing(text)):
        if isinstance(event, TextDelta):
            received.append(event.text)
    return "".join(received)


def only_conversation(store: Store) -> list:
    bot = store.bots()[0]
    return store.messages(store.conversations(bot.id)[0].id)


async def test_a_complete_exchange_is_stored_with_provider_model_and_key_source(
    store: Store, keys: KeyStore
) -> None:
    with provider_server() as server:
        server.reply_with(Reply(steps=sse(piece("Hi "), piece("there"), FINISH, done=True)))
        assert await run(service_for(store, keys, server), store) == "Hi there"
    user, reply = only_conversation(store)
    assert (user.role, user.content, user.status) == ("user", "Hello?", "complete")
    assert (reply.content, reply.status) == ("Hi there", "complete")
    assert (reply.provider, reply.model, reply.key_source) == ("openai", "gpt-5.5", "global")
    assert KEY not in repr(reply)


async def test_a_dropped_connection_keeps_the_message_the_partial_reply_and_the_error(
    store: Store, keys: KeyStore
) -> None:
    with provider_server() as server:
        server.reply_with(Reply(steps=sse(piece("Half a "), piece("reply")), abort=True))
        with pytest.raises(ProviderError):
            await run(service_for(store, keys, server), store)
    user, reply = only_conversation(store)
    assert user.content == "Hello?"
    assert (reply.content, reply.status, reply.error_kind) == (
        "Half a reply",
        "partial",
        "truncated",
    )
    assert "dropped" in (reply.error_message or "")


async def test_an_error_before_any_text_is_stored_as_an_error_with_its_message(
    store: Store, keys: KeyStore
) -> None:
    with provider_server() as server:
        server.reply_with(
            Reply(401, {"content-type": "application/json"}, [b'{"error":{"message":"bad key"}}'])
        )
        with pytest.raises(ProviderError):
            await run(service_for(store, keys, server), store)
    user, reply = only_conversation(store)
    assert user.content == "Hello?"
    assert (reply.status, reply.error_kind) == ("error", "auth")
    assert "bad key" in (reply.error_message or "")


async def test_no_key_stores_the_message_and_the_error_and_sends_nothing(
    store: Store, keys: KeyStore
) -> None:
    keys.delete(entry_name("openai"))
    with provider_server() as server:
        with pytest.raises(NoApiKeyError):
            await run(service_for(store, keys, server), store)
        assert server.requests == []
    user, reply = only_conversation(store)
    assert user.content == "Hello?"
    assert (reply.status, reply.error_kind) == ("error", "no_key")


async def test_retry_after_fixing_the_key_resends_the_same_message_once(
    store: Store, keys: KeyStore
) -> None:
    keys.delete(entry_name("openai"))
    with provider_server() as server:
        server.reply_with(Reply(steps=sse(piece("Fixed"), FINISH, done=True)))
        service = service_for(store, keys, server)
        with pytest.raises(NoApiKeyError):
            await run(service, store)
        keys.set(entry_name("openai"), KEY)
        assert await run(service, store, text=None) == "Fixed"
        sent = server.requests[0].json["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["Hello?"]
    assert [m.status for m in only_conversation(store)] == ["complete", "error", "complete"]


async def test_stopping_a_reply_keeps_what_arrived_marked_partial(
    store: Store, keys: KeyStore
) -> None:
    with provider_server() as server:
        server.reply_with(Reply(steps=[*sse(piece("Kept")), 5.0, *sse(FINISH, done=True)]))
        service = service_for(store, keys, server)
        bot = store.default_bot("openai", "gpt-5.5")
        conversation = store.create_conversation(bot.id, "t")

        async def consume() -> None:
            async for _event in service.send(bot, conversation, Outgoing("Hello?")):
                pass

        task = asyncio.create_task(consume())
        for _ in range(100):
            await asyncio.sleep(0.02)
            if any(m.content == "Kept" for m in store.messages(conversation.id)) or (
                len(server.requests) and task.done()
            ):
                break
        await asyncio.sleep(0.2)
        task.cancel()  # what Escape does
        with pytest.raises(asyncio.CancelledError):
            await task
    reply = store.messages(conversation.id)[-1]
    assert (reply.content, reply.status) == ("Kept", "partial")


async def test_a_reply_whose_end_came_stays_complete_when_stopped_after_it(
    store: Store, keys: KeyStore
) -> None:
    """Once the reply's end has come, what is read after it (the rest of the body, kept for
    the next request's connection) is no part of the reply: Escape then does not mark it
    partial."""
    from byok_tui.providers.types import Done

    held = [*sse(piece("Whole"), FINISH, done=True), 5.0]  # the body held open after [DONE]
    with provider_server(keep_alive=True) as server:
        server.reply_with(Reply(steps=held))
        service = service_for(store, keys, server)
        bot = store.default_bot("openai", "gpt-5.5")
        conversation = store.create_conversation(bot.id, "t")
        ended = asyncio.Event()

        async def consume() -> None:
            async for event in service.send(bot, conversation, Outgoing("Hello?")):
                if isinstance(event, Done):
                    ended.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(ended.wait(), 5)
        await asyncio.sleep(0.2)
        task.cancel()  # what Escape does
        with pytest.raises(asyncio.CancelledError):
            await task
    reply = store.messages(conversation.id)[-1]
    assert (reply.content, reply.status) == ("Whole", "complete")


def test_the_recorder_flushes_at_least_once_a_second(store: Store) -> None:
    now = [0.0]
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "t")
    reply = store.add_message(conversation.id, "assistant", "", status="partial")
    recorder = ReplyRecorder(store, reply, clock=lambda: now[0])
    recorder.add(TextDelta("a"))
    assert store.message(reply.id).content == ""  # not yet: less than a second
    now[0] = 1.0
    recorder.add(TextDelta("b"))
    assert store.message(reply.id).content == "ab"


SLOW_STREAM = [
    *sse(piece("First part. ")),
    0.3,
    *sse(piece("Second part. ")),
    30.0,
    *sse(FINISH, done=True),
]


def start_ask(server: ProviderServer) -> subprocess.Popen[str]:
    env = dict(os.environ, BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1", OPENAI_API_KEY=KEY)
    return subprocess.Popen(
        [sys.executable, "-m", "byok_tui", "ask", "-p", "openai", "Tell me a long story"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def the_story_kept_partial(db: Path) -> Message:
    """The message asked and the reply as far as it came (SLOW_STREAM's first two parts)."""
    store = Store(db)
    bot = store.bots()[0]
    user, reply = store.messages(store.conversations(bot.id)[0].id)
    assert user.content == "Tell me a long story"
    assert reply.content == "First part. Second part. "
    assert reply.status == "partial"
    return reply


def wait_for_reply_text(path: Path, text: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        if path.exists():
            store = Store(path)
            try:
                for bot in store.bots():
                    for conversation in store.conversations(bot.id):
                        if any(text in m.content for m in store.messages(conversation.id)):
                            return
            finally:
                store.close()
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never reached the database")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_process_killed_mid_reply_leaves_the_message_and_the_partial_reply(
    sig: signal.Signals,
) -> None:
    db = app_paths().data_dir / "byok-tui.sqlite3"
    with provider_server() as server:
        server.reply_with(Reply(steps=SLOW_STREAM))
        proc = start_ask(server)
        try:
            wait_for_reply_text(db, "Second part.", time.monotonic() + 30)
        finally:
            proc.send_signal(sig)
            proc.wait(timeout=30)
    reply = the_story_kept_partial(db)
    if sig is signal.SIGTERM:
        assert proc.returncode == 143
        assert reply.error_kind == "truncated"


@pytest.mark.parametrize(
    "hang_up", [True, False], ids=["with-a-hang-up-signal", "with-only-the-end-of-its-input"]
)
def test_a_terminal_closed_mid_reply_ends_the_app_as_a_quit_does(hang_up: bool) -> None:
    """Closing the terminal (or a dropped SSH session) hangs it up: the app then ends as ctrl+q
    ends it, with what arrived and what was being typed stored, rather than being killed by
    SIGHUP. A terminal that goes with no signal (the app's input was a terminal it does not
    control) ends its input instead, and the app ends the same way rather than spinning a
    core for ever."""
    db = app_paths().data_dir / "byok-tui.sqlite3"
    with provider_server() as server:
        terminal = a_story_and_a_draft(server, db, b"and-a-draft")
        # and the terminal goes at once, well within the second a draft may wait
        the_terminal_goes(terminal, hang_up=hang_up)
    the_story_kept_partial(db)
    assert [d.text for d in Store(db).drafts().values()] == ["and-a-draft"]


def test_a_terminated_app_stores_what_it_had_and_gives_the_terminal_back() -> None:
    """`kill` (SIGTERM: a system shutting down, a session manager) ends the app as a quit
    does, with status 143: the reply so far and the draft are stored, and the terminal is
    left as it was found (out of the alternate screen, mouse reporting off, cursor shown)."""
    db = app_paths().data_dir / "byok-tui.sqlite3"
    with provider_server() as server:
        terminal = a_story_and_a_draft(server, db, b"a-draft-too")
        try:
            drawn = len(terminal.seen)
            terminal.proc.terminate()
            wait_until(terminal.has_ended, terminal, said="SIGTERM did not end the app")
            terminal.drain()
        finally:
            terminal.end()
    assert terminal.proc.returncode == 143, f"ended by signal {-terminal.proc.returncode}"
    the_story_kept_partial(db)
    assert [d.text for d in Store(db).drafts().values()] == ["a-draft-too"]
    given_back = terminal.seen[drawn:]
    for restore in (b"\x1b[?1049l", b"\x1b[?1000l", b"\x1b[?25h"):
        assert restore in given_back, f"the terminal was not restored ({restore!r})"
    assert b"stopped (SIGTERM)" in given_back


def asked_in_a_terminal(
    server: ProviderServer, db: Path, steps: list[bytes | float], question: bytes, stored: str
) -> InTerminal:
    """byok-tui in a terminal of its own, `question` sent and answered with `steps`, once
    the reply holds `stored` in the database."""
    server.reply_with(Reply(steps=steps))
    env = dict(os.environ, BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1", OPENAI_API_KEY=KEY)
    terminal = InTerminal(env=env)
    try:
        assert terminal.read_until(b"New chat"), "the chat screen was never drawn"
        terminal.type(question + b"\r")
        wait_for_reply_text(db, stored, time.monotonic() + 30)
    except BaseException:
        terminal.proc.kill()
        terminal.end()
        raise
    return terminal


def a_story_and_a_draft(server: ProviderServer, db: Path, draft: bytes) -> InTerminal:
    """A story asked for (SLOW_STREAM: two parts, then a long wait) and `draft` typed in the
    composer once the second part is stored."""
    terminal = asked_in_a_terminal(server, db, SLOW_STREAM, b"Tell me a long story", "Second part.")
    terminal.type(draft)
    if not terminal.drawn_whole(draft):
        the_terminal_goes(terminal, hang_up=True)
        pytest.fail("the keys typed were never drawn")
    return terminal


def the_terminal_goes(terminal: InTerminal, *, hang_up: bool) -> None:
    """Close the app's terminal (and, with `hang_up`, hang it up as the kernel does for a
    controlling terminal): the app must then end as a quit ends it."""
    proc = terminal.proc
    terminal.close()
    if hang_up:
        proc.send_signal(signal.SIGHUP)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("the app went on running (or hung) with its terminal gone")
    assert proc.returncode == 0, f"ended by signal {-proc.returncode}, not by quitting"


# A reply long and fast enough to fill a terminal nobody reads: ~15 s of a word every 5 ms.
FLOOD = [step for n in range(3000) for step in (*sse(piece(f"Word {n}. ")), 0.005)]


@pytest.mark.long(5)
@pytest.mark.parametrize(
    "hang_up", [True, False], ids=["with-a-hang-up-signal", "with-only-the-end-of-its-input"]
)
def test_a_terminal_that_stopped_reading_then_went_away_ends_the_app(hang_up: bool) -> None:
    """A stalled link (an SSH session whose network stops) leaves the app's writes waiting
    for the terminal; when it then goes away, the app still ends as a quit does, with what
    the reply brought stored, instead of hanging for ever in a write."""
    db = app_paths().data_dir / "byok-tui.sqlite3"
    with provider_server() as server:
        steps = [*FLOOD, *sse(FINISH, done=True)]
        terminal = asked_in_a_terminal(server, db, steps, b"Flood me", "Word 5.")
        time.sleep(3)  # nothing read meanwhile: the terminal fills, the app's writes wait
        the_terminal_goes(terminal, hang_up=hang_up)
    store = Store(db)
    user, reply = store.messages(store.conversations(store.bots()[0].id)[0].id)
    assert user.content == "Flood me"
    assert reply.status == "partial" and reply.content.startswith("Word 0. Word 1. ")


def test_a_draft_typed_a_second_before_a_kill_is_back_on_the_next_start() -> None:
    """What is typed and not sent is kept within a second: a kill -9 then loses no more than
    that second, and the next start puts it back in the composer."""
    db = app_paths().data_dir / "byok-tui.sqlite3"
    env = dict(os.environ, OPENAI_API_KEY=KEY)
    with InTerminal(env=env) as terminal:
        assert terminal.read_until(b"New chat"), "the chat screen was never drawn"
        terminal.type(b"an-unsent-thought")
        deadline = time.monotonic() + 10
        while [d.text for d in Store(db).drafts().values()] != ["an-unsent-thought"]:
            assert time.monotonic() < deadline, "the draft was not kept within a second"
            time.sleep(0.05)
        terminal.proc.kill()
    with InTerminal(env=env) as again:
        assert again.read_until(b"an-unsent-thought"), "the draft did not come back"


@pytest.mark.long(5)
def test_two_byok_tui_at_once_keep_each_its_own_draft() -> None:
    """Two byok-tui open at once (two terminals) never overwrite each other's draft: the one
    still running keeps its own, and a start after both quit gives back both."""
    db = app_paths().data_dir / "byok-tui.sqlite3"
    env = dict(os.environ, OPENAI_API_KEY=KEY)

    def kept() -> list[str]:
        return sorted(d.text for d in Store(db).drafts().values()) if db.exists() else []

    with InTerminal(env=env) as first:
        assert first.read_until(b"New chat"), "the first one's chat screen was never drawn"
        first.type(b"typed-in-the-first")
        wait_until(lambda: kept() == ["typed-in-the-first"], first, said="the draft not kept")
        with InTerminal(env=env) as second:
            assert second.read_until(b"New chat"), "the second one's chat screen was never drawn"
            second.type(b"typed-in-the-second")
            wait_until(
                lambda: kept() == ["typed-in-the-first", "typed-in-the-second"],
                first,
                second,
                said="one draft overwrote the other",
            )
            assert b"typed-in-the-first" not in second.seen, "a running one's draft was taken"
            for quitting in (second, first):
                quitting.type(b"\x11")  # ctrl+q
                wait_until(quitting.has_ended, first, second, said="ctrl+q did not end it")
                assert quitting.proc.returncode == 0
    with InTerminal(env=env) as third:
        assert third.read_until(b"typed-in-the-first"), "the first one's draft is lost"
        assert third.read_until(b"typed-in-the-second"), "the second one's draft is lost"


def wait_until(
    check: Callable[[], bool], *terminals: InTerminal, said: str, timeout: float = 30
) -> None:
    """Wait for `check`, reading what the apps in `terminals` draw meanwhile; `said`: what
    went wrong if it never holds."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, said
        for terminal in terminals:
            terminal.drain()
        time.sleep(0.02)


def test_a_character_split_across_two_reads_is_typed_not_taken_for_the_end_of_input() -> None:
    """A slow link can deliver the bytes of one character (here the two of é) in two reads:
    the first decodes to nothing yet, which is not the end of the input: the app runs on and
    the character lands whole."""
    with InTerminal(env=dict(os.environ, OPENAI_API_KEY=KEY)) as terminal:
        assert terminal.read_until(b"New chat"), "the chat screen was never drawn"
        character = "é".encode()
        terminal.type(character[:1])
        time.sleep(0.5)  # read on its own
        assert not terminal.has_ended(), "half a character was taken for the end of input"
        terminal.type(character[1:] + b"-whole")
        assert terminal.drawn_whole("é-whole".encode()), "the character did not land whole"
        assert not terminal.has_ended()
