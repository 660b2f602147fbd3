"""`byok-tui ask` in a real process, with a bug that crashes the provider call, as the reply's
body is about to be read, while the key sits in its locals (the request's headers) and in the
exception's text. Used by the crash-report tests."""

from __future__ import annotations

import sys
from typing import Any

from byok_tui.cli import main
from byok_tui.providers import client


def exploding_body(response: Any) -> Any:
    headers = dict(response.request.headers)  # holds the Authorization header, key and all
    raise RuntimeError(f"adapter bug while reading {response.request.url} with {headers}")


client.ResponseBody = exploding_body  # type: ignore[attr-defined,assignment]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
