"""`byok-tui ask` in a real process, with a provider adapter that crashes while the key sits
in its locals and in the exception's text. Used by the crash-report tests."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

from byok_tui.cli import main
from byok_tui.providers.wire import openai_compat


async def exploding_parse(provider: Any, body: Any) -> AsyncIterator[Any]:
    request = body._response.request  # a buggy adapter may reach the request through the body
    headers = dict(request.headers)  # holds the Authorization header, key and all
    raise RuntimeError(f"adapter bug while reading {request.url} with {headers}")
    yield  # type: ignore[unreachable]  # an async generator, like the real one


openai_compat.parse_stream = exploding_parse  # type: ignore[assignment]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
