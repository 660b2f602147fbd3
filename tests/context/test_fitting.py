"""The rule that cuts a history to the model's room, for any history (property tests), and
the database walk that reads only the newest messages of the branch on screen."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from byok_tui.app_services.services import open_services, open_store
from byok_tui.chat.history import ContextRoom, fit_to_context, turn_tokens
from byok_tui.core.records import BotConfig
from byok_tui.providers.types import ChatMessage

turns = st.lists(
    st.builds(
        ChatMessage,
        st.sampled_from(["user", "assistant"]),
        st.text(max_size=300),
    ),
    min_size=1,
    max_size=40,
)


@given(turns, st.integers(min_value=0, max_value=3_000))
def test_what_is_sent_is_the_newest_turns_within_the_room(
    history: list[ChatMessage], room: int
) -> None:
    sent = fit_to_context(history, room)
    assert sent, "the last turn is always sent"
    assert list(sent) == history[-len(sent) :], "a run of the newest turns, in order"
    if len(sent) > 1:
        assert sum(turn_tokens(t) for t in sent) <= room, "never more than the room"
        assert sent[0].role == "user", "the user speaks first"


@given(turns, st.integers(min_value=0, max_value=3_000))
def test_nothing_that_fits_is_left_out(history: list[ChatMessage], room: int) -> None:
    """One turn more would not fit, or would put a reply first with no question before it."""
    sent = fit_to_context(history, room)
    if len(sent) == len(history):
        return
    more = history[-len(sent) - 1 :]
    cost = sum(turn_tokens(t) for t in more)
    assert cost > room or more[0].role != "user" or len(sent) == 1


def test_the_room_is_the_context_less_the_reply_and_the_system_prompt() -> None:
    room = ContextRoom.of("m", 10_000, 1_000, "x" * 400)
    assert room.tokens == int(9_000 * 0.85) - 104
    assert ContextRoom.of("m", 1_000, 4_096, "").tokens == 0, "never below nothing"


def test_the_walk_back_reads_the_branch_on_screen_and_stops_once_past_the_room() -> None:
    store = open_store(open_services())
    bot = store.create_bot(BotConfig("B", "openai", "gpt-5.5"))
    conversation = store.create_conversation(bot.id, "c")
    ids = [store.add_message(conversation.id, "user", f"{n:03d}" + "x" * 96).id for n in range(30)]
    store.branch_from(conversation.id, ids[19])  # an alternative to message 21 onwards
    other = store.add_message(conversation.id, "user", "the other branch").id

    newest, whole = store.branch.recent_messages(conversation.id, 250)
    assert [m.id for m in newest] == [*ids[17:20], other]
    assert not whole
    everything, whole = store.branch.recent_messages(conversation.id, 1_000_000)
    assert [m.id for m in everything] == [*ids[:20], other] and whole
    assert store.branch.branch_length(conversation.id) == 21
