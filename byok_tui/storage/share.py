"""Share links: `byok-tui://bot?v=1&c=<base64url of compact JSON>`.

A link encodes a bot's configuration only, never `k` or any key. Decoding is
strict because a link is untrusted input: size limits, exactly the expected shape, strict
base64url, one JSON object without duplicate fields, then `check_bot_fields`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from byok_tui.core.records import BotConfig
from byok_tui.core.redaction import redact_keys
from byok_tui.storage.bot_fields import BotInputError, CheckedBot, bot_fields, check_bot_fields

SCHEME = "byok-tui"
LINK_VERSION = "1"
MAX_LINK_CHARS = 32_768
MAX_PAYLOAD_BYTES = 24_576
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")


def encode_bot_link(config: BotConfig) -> str:
    """The link, with any key in its text replaced as in every document that leaves byok-tui
    (the keys the process knows: see services.remember_every_key)."""
    fields = {
        name: redact_keys(v) if isinstance(v, str) else v for name, v in bot_fields(config).items()
    }
    payload = json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
    encoded = base64.urlsafe_b64encode(payload.encode("utf-8")).decode("ascii").rstrip("=")
    return f"{SCHEME}://bot?v={LINK_VERSION}&c={encoded}"


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, value in pairs:
        if name in result:
            raise BotInputError(f"the link names the field {name!r} twice")
        result[name] = value
    return result


def decode_bot_link(link: str) -> CheckedBot:
    link = link.strip()
    if len(link) > MAX_LINK_CHARS:
        raise BotInputError(f"the link is longer than {MAX_LINK_CHARS} characters")
    parts = urlsplit(link)
    if parts.scheme != SCHEME or parts.netloc != "bot" or parts.path not in ("", "/"):
        raise BotInputError(f"not a byok-tui bot link (expected {SCHEME}://bot?v=1&c=…)")
    if parts.fragment:
        raise BotInputError("the link has a fragment; byok-tui links have none")
    try:
        query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise BotInputError("the link's query is malformed") from None
    if set(query) != {"v", "c"} or any(len(values) != 1 for values in query.values()):
        raise BotInputError("the link must carry exactly v and c")
    if query["v"][0] != LINK_VERSION:
        raise BotInputError(
            f"the link is version {query['v'][0]!r}; this byok-tui reads version {LINK_VERSION}"
        )
    encoded = query["c"][0]
    if not _BASE64URL.fullmatch(encoded) or len(encoded) % 4 == 1:
        raise BotInputError("the link's data is not valid base64url")
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except (binascii.Error, ValueError):
        raise BotInputError("the link's data is not valid base64url") from None
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise BotInputError("the link's data is too large to be a bot")
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BotInputError("the link's data is not a JSON object") from None
    return check_bot_fields(data)
