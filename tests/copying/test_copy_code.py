"""Each code block of a reply can be copied on its own: a copy target under the reply for
each (a click on it; or Tab to the targets, ←/→ and Enter), and `y` on the focused reply
for one block after the other. The clipboard gets the block's code exactly, through the
terminal's clipboard sequence, with any key in it replaced."""

from __future__ import annotations

from typing import Any

import pytest
from textual.events import Click
from textual.geometry import Offset
from textual.pilot import Pilot
from textual.widget import Widget

from byok_tui.app import ByokApp
from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.widgets import markdown_blocks
from byok_tui.widgets.code_copies import GAP, ReplyMeta
from byok_tui.widgets.markdown_blocks import CodeBlock, code_blocks
from byok_tui.widgets.markdown_text import LARGE_CHARS
from byok_tui.widgets.message_views import ReplyView
from tests.support.fake_backend import FakeProviders
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    app_answered_by,
    replying,
    send,
    settle,
    wait_for,
)

KEY = "sk-proj-" + "Y" * 60
REPLY = """Install it, then run it:

```bash
pip install thing
```

1. In a list:

   ```python
   import thing
   thing.run(key="KEY")
   ```

~~~
plain
~~~
""".replace("KEY", KEY)


def targets(app: ByokApp) -> list[str]:
    """The copy targets drawn under each reply: the lines after its meta line."""
    return [
        str(meta.render()).partition("\n")[2] for meta in app.screen.query(ReplyMeta) if meta.blocks
    ]


async def laid_out(pilot: Pilot[None], widget: Widget) -> None:
    """Wait until `widget` stays where it is from one frame to the next."""
    for _frame in range(50):
        where = (widget.region, widget.size)
        await pilot.pause()
        if (widget.region, widget.size) == where:
            return
    raise AssertionError(f"{widget} never settled")


async def copied(pilot: Pilot[None], app: ByokApp, text: str) -> None:
    try:
        await wait_for(pilot, lambda: app.clipboard == text, timeout=5)
    except AssertionError:
        said = [n.message for n in app._notifications]
        raise AssertionError(
            f"not copied: {app.clipboard!r}; focused {app.focused}; {said}"
        ) from None


def label_at(row: ReplyMeta, number: int) -> Offset:
    """Where the label of block `number` is drawn (its second cell), under the meta line."""
    lines = row.lines(row.size.width)
    y = next(y for y, numbers in enumerate(lines) if number in numbers)
    before = lines[y][: lines[y].index(number)]
    x = sum(len(row.blocks[n].label) + len(GAP) for n in before)
    y += row.meta_height(row.size.width)
    assert row.at(x + 1, y) == number
    return Offset(x + 1, y)


def test_code_blocks_are_found_in_lists_and_with_either_fence() -> None:
    assert code_blocks(REPLY) == [
        CodeBlock("bash", "pip install thing\n"),
        CodeBlock("python", f'import thing\nthing.run(key="{KEY}")\n'),
        CodeBlock("", "plain\n"),
    ]
    assert code_blocks("no code, just `inline`") == []
    assert CodeBlock("python", "a\nb\n").label == "⧉ python · 2 lines"
    assert CodeBlock("", "x\n").label == "⧉ code · 1 line"


async def test_each_code_block_of_a_stored_reply_has_a_copy_target_and_y_copies_in_turn() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "Code")
    store.add_message(conversation.id, "user", "How?")
    store.add_message(conversation.id, "assistant", REPLY)
    app = app_answered_by(FakeProviders())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        row = app.screen.query_one(ReplyMeta)
        # The labels are whole, as many to a line as fit (36 columns here: two, then one).
        assert targets(app) == [
            GAP.join(["⧉ bash · 1 line", "⧉ python · 2 lines"]) + "\n⧉ code · 1 line"
        ]

        # Each step copies something other than the step before: a copy that did not happen
        # cannot pass for one (a copy travels up as a message, a turn or two later).
        await pilot.click(row, offset=label_at(row, 0))
        await copied(pilot, app, "pip install thing\n")
        await pilot.click(row, offset=label_at(row, 2))
        await copied(pilot, app, "plain\n")

        reply = app.screen.query_one(ReplyView)
        reply.focus()
        await pilot.press("y")
        await copied(pilot, app, "pip install thing\n")
        await pilot.press("y")
        # The key the reply echoed does not go on to the clipboard.
        await copied(pilot, app, 'import thing\nthing.run(key="[REDACTED]")\n')
        await pilot.press("y")
        await copied(pilot, app, "plain\n")
        await pilot.press("y")
        await copied(pilot, app, "pip install thing\n")  # after the last, the first again

        row.focus()  # the block last clicked (the third) is chosen
        await pilot.press("left", "enter")
        await copied(pilot, app, 'import thing\nthing.run(key="[REDACTED]")\n')
        await pilot.press("right", "right", "enter")  # after the last, the first
        await copied(pilot, app, "pip install thing\n")


async def test_a_streamed_reply_gets_its_copy_targets_once_it_has_ended() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    fake = FakeProviders()
    fake.enqueue("Run:\n\n```sh\n", "make test\n", "```\n")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "How do I test?")
        await wait_for(pilot, lambda: not replying(app) and targets(app) == ["⧉ sh · 1 line"])
        row = app.screen.query_one(ReplyMeta)
        # Once what it cost is on the meta line (which can move the targets down a line).
        await wait_for(pilot, lambda: " out" in row.meta)
        await laid_out(pilot, row)  # the longer line moves the targets: aim once it is still
        # A click given to the targets themselves: where the screen sends a click is the
        # stored reply's test above; here, that the targets a stream ends with answer one.
        aim = label_at(row, 0)
        row.post_message(Click(row, aim.x, aim.y, 0, 0, 1, False, False, False))
        await copied(pilot, app, "make test\n")


async def test_a_large_stored_replys_code_blocks_are_found_and_get_their_targets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reply of megabytes has its code blocks found in a worker thread, in the same parse
    that splits it into parts: the targets come once they are found, the same as for a
    short reply."""
    parser = markdown_blocks.block_parser()
    parsed_large: list[int] = []
    parse = parser.parse

    def counted(text: str, env: Any = None) -> Any:
        if len(text) > LARGE_CHARS:
            parsed_large.append(len(text))
        return parse(text, env)

    monkeypatch.setattr(parser, "parse", counted)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "Code")
    store.add_message(conversation.id, "user", "How?")
    padding = "A paragraph of prose that says a little about the code.\n\n" * 400
    assert len(padding + REPLY) > LARGE_CHARS
    store.add_message(conversation.id, "assistant", padding + REPLY)
    app = app_answered_by(FakeProviders())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: bool(targets(app)))
        assert targets(app) == [
            GAP.join(["⧉ bash · 1 line", "⧉ python · 2 lines"]) + "\n⧉ code · 1 line"
        ]
        assert len(parsed_large) == 1, "the large reply was parsed more than once"


async def test_a_large_streamed_replys_code_blocks_get_their_targets_when_it_ends() -> None:
    """A reply of megabytes that has just streamed in has its code blocks found in a worker
    thread once it ends: the same targets as for a short reply."""
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    fake = FakeProviders()
    padding = "A paragraph of prose that says a little about the code.\n\n" * 400
    assert len(padding + REPLY) > LARGE_CHARS
    fake.enqueue(padding, REPLY)
    app = app_answered_by(fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "Show me")
        await wait_for(pilot, lambda: not replying(app))
        await wait_for(pilot, lambda: bool(targets(app)))
        assert targets(app) == [
            GAP.join(["⧉ bash · 1 line", "⧉ python · 2 lines"]) + "\n⧉ code · 1 line"
        ]


async def test_a_reply_with_many_code_blocks_ends_in_one_row_not_a_wall_of_targets() -> None:
    """1,297 blocks took row after row of targets at the end of the conversation, filling
    the screen: past two rows of targets they are one row that counts them and says how to
    copy them; ←/→ choose one there and Enter copies it."""
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "Code")
    store.add_message(conversation.id, "user", "How?")
    many = "".join(f"Step {n}:\n\n```python\nprint({n})\nprint()\n```\n\n" for n in range(300))
    store.add_message(conversation.id, "assistant", many + "The end.")
    app = app_answered_by(FakeProviders())
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: bool(targets(app)))
        (shown,) = targets(app)
        assert shown.count("\n") == 0, shown
        assert "300 code blocks" in shown and "y copies the next" in shown
        meta = app.screen.query(ReplyMeta).last()
        meta.focus()
        await pilot.press("right", "right")
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign, assignment]
        await pilot.press("enter")
        await settle(pilot)
        assert copied == ["print(2)\nprint()\n"]
