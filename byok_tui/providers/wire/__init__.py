"""Protocol families: how a chat or a model list is asked for, and how answers are read.

Each family module satisfies `WireFamily` (mypy checks it in `family()`): it builds plain
`HttpCall` descriptions and reads a response's body (`StreamBody`); it never opens a
connection (the client does) and never knows about Textual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from byok_tui.core.registry import Provider
    from byok_tui.providers.wire.common import WireFamily


def family(provider: Provider) -> WireFamily:
    """The protocol family that speaks to `provider` (the registry's `family`)."""
    from byok_tui.providers.wire import anthropic, gemini, ollama, openai_compat

    families: dict[str, WireFamily] = {
        "openai-chat": openai_compat,
        "anthropic-messages": anthropic,
        "gemini-generate": gemini,
        "ollama-chat": ollama,
    }
    return families[provider.family]
