"""Reading what a provider answered: a response checked before it is read, a body read to a
bound, a stream whose transport failures become ProviderErrors. Never re-raises or chains an
httpx exception: its text holds the request URL, which for Gemini holds the key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from byok_tui.core.errors import ErrorKind
from byok_tui.core.registry import Provider
from byok_tui.providers.errors import ProviderError, classify_http_error, protocol_error
from byok_tui.providers.types import ReasoningDelta, StreamEvent, TextDelta

if TYPE_CHECKING:
    import httpx

MAX_ERROR_BODY = 64 * 1024


async def guard(
    provider: Provider, events: AsyncIterator[StreamEvent]
) -> AsyncIterator[StreamEvent]:
    """Translate transport failures mid-stream into ProviderErrors."""
    import httpx

    from byok_tui.providers.wire import common as wire

    characters = 0
    try:
        async for event in events:
            if isinstance(event, TextDelta | ReasoningDelta):
                characters += len(event.text)
                if characters > wire.MAX_REPLY_CHARS:
                    raise wire.too_large(provider, "the reply is far longer than any real one")
            yield event
    except httpx.TimeoutException:
        raise timeout_error(provider) from None
    except (httpx.RemoteProtocolError, httpx.ReadError):
        raise ProviderError(
            ErrorKind.TRUNCATED,
            f"{provider.display_name}: the connection dropped in the middle of the reply",
            provider=provider,
        ) from None
    except httpx.HTTPError as error:
        raise network_error(provider, error) from None


async def read_body(
    provider: Provider, response: httpx.Response, *, limit: int = MAX_ERROR_BODY
) -> str:
    import httpx

    data = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) > limit:
                break
    except httpx.TimeoutException:
        raise timeout_error(provider) from None
    except httpx.HTTPError as error:
        raise network_error(provider, error) from None
    return bytes(data[:limit]).decode("utf-8", errors="replace")


async def check_response(provider: Provider, response: httpx.Response) -> None:
    """Refuse a redirect (the key is never sent elsewhere), an error status (its body
    read, bounded) and an HTML page where the API should answer."""
    status = response.status_code
    if 300 <= status < 400:
        target = urlsplit(response.headers.get("location", "")).hostname or "another address"
        raise ProviderError(
            ErrorKind.PROTOCOL,
            f"{provider.display_name}: the server redirected the request ({status}) to "
            f"{target}; byok-tui never follows redirects, so your key was not sent there",
            provider=provider,
            status=status,
        )
    if status >= 400:
        body = await read_body(provider, response)
        raise classify_http_error(provider, status, dict(response.headers), body)
    content_type = response.headers.get("content-type", "").lower()
    if "text/html" in content_type:
        raise protocol_error(
            provider, "the server answered with an HTML page instead of the provider's API"
        )


def timeout_error(provider: Provider) -> ProviderError:
    message = f"{provider.display_name}: the server stopped answering"
    return ProviderError(ErrorKind.TIMEOUT, message, provider=provider)


def network_error(provider: Provider, error: Exception) -> ProviderError:
    # The class name says what went wrong (ConnectError, ...); str(error) may hold the URL.
    return ProviderError(
        ErrorKind.NETWORK,
        f"{provider.display_name}: cannot reach the provider ({type(error).__name__})",
        provider=provider,
    )
