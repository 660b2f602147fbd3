"""The fake backend (tests/support/fake_backend.py) answers as the wire does: screen tests that
use it see what a user would see from a real provider."""

from __future__ import annotations

from byok_tui.app_services.services import open_services
from byok_tui.keys import KeyStore
from byok_tui.providers.types import StreamEvent, Usage
from tests.support.fake_backend import FakeProviders
from tests.support.provider_client import chat, client_for, collect
from tests.support.provider_server import ProviderServer, openai_reply


def without_usage(events: list[StreamEvent]) -> list[StreamEvent]:
    return [event for event in events if not isinstance(event, Usage)]


async def test_the_fake_streams_what_the_wire_streams(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(openai_reply("Hello", " world"))
    from_the_wire = await collect(client_for("openai", server, store), "openai")
    fake = FakeProviders()
    fake.enqueue("Hello", " world")
    from_the_fake = await collect(fake(open_services()), "openai")
    assert without_usage(from_the_fake) == without_usage(from_the_wire)
    assert [type(e) for e in from_the_fake].count(Usage) == 1


async def test_the_fake_records_the_request_and_where_its_key_came_from(
    server: ProviderServer, store: KeyStore
) -> None:
    client_for("openai", server, store)  # stores a global key
    fake = FakeProviders()
    fake.enqueue("ok")
    await collect(fake(open_services()), "openai")
    (request,) = fake.requests
    assert request.provider_id == "openai"
    assert request.texts == [m.content for m in chat().messages]
    assert request.key_source.value == "global"
