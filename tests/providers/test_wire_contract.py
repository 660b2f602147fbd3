"""Where a key goes is one fact, the registry's `key_carrier`, and the wire code reads it."""

from __future__ import annotations

import pytest

from byok_tui.core.registry import Provider, get_provider, providers
from byok_tui.providers.types import ChatMessage, ChatRequest
from byok_tui.providers.wire import family
from byok_tui.providers.wire.common import HttpCall

KEY = "K" * 24


def chat_call(provider: Provider) -> HttpCall:
    chat = ChatRequest(model="m", messages=(ChatMessage("user", "hi"),))
    return family(provider).chat_call(provider, "https://x.example", KEY, chat, provider.model("m"))


@pytest.mark.parametrize("provider", providers(), ids=lambda p: p.id)
def test_the_key_goes_where_the_registry_says_and_nowhere_else(provider: Provider) -> None:
    for call in (chat_call(provider), family(provider).models_call(provider, "https://x", KEY)):
        place, _, name = provider.key_carrier.partition(":")
        carried = {**call.headers, **call.params}
        where = [field for field, value in carried.items() if KEY in value]
        if place == "none":
            assert where == []
        elif place == "query":
            assert where == [name] and call.params[name] == KEY
        elif name == "authorization-bearer":
            assert where == ["authorization"] and call.headers["authorization"] == f"Bearer {KEY}"
        else:
            assert where == [name] and call.headers[name] == KEY
        assert KEY not in call.url


def test_the_wire_code_reads_key_carrier_rather_than_knowing_it() -> None:
    moved = get_provider("groq")._replace(key_carrier="header:x-api-key")
    call = chat_call(moved)
    assert call.headers["x-api-key"] == KEY
    assert "authorization" not in call.headers


def test_a_key_carrier_the_wire_code_cannot_follow_is_refused_when_the_registry_loads() -> None:
    from byok_tui.core.registry import _key_carrier

    for bad in ("cookie:session", "header:", "header:X Key", "body"):
        with pytest.raises(ValueError, match="key_carrier"):
            _key_carrier(bad)
