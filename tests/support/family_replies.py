"""A streamed answer in each protocol family's own shape, for tests that send the same
request to every family (continue, attachments) and read what each received."""

from __future__ import annotations

import json
from typing import Any

from tests.support.provider_server import Reply, openai_reply, sse

NDJSON = {"content-type": "application/x-ndjson"}
# One provider of each family, and a model of it.
FAMILIES = {
    "openai": "gpt-5.5",
    "anthropic": "claude-sonnet-4-6",
    "google": "gemini-2.5-flash",
    "ollama": "llama3.2",
}


def family_reply(provider_id: str, text: str, *, at_length_limit: bool = False) -> Reply:
    """`text` streamed in two pieces by `provider_id`'s family, ended normally or (with
    `at_length_limit`) at the length limit, in that family's words for it."""
    pieces = (text[: len(text) // 2], text[len(text) // 2 :])
    if provider_id == "anthropic":
        steps = sse(
            {"type": "message_start", "message": {"usage": {"input_tokens": 9}}},
            event="message_start",
        )
        for piece in pieces:
            delta = {"type": "text_delta", "text": piece}
            steps += sse(
                {"type": "content_block_delta", "index": 0, "delta": delta},
                event="content_block_delta",
            )
        stop = "max_tokens" if at_length_limit else "end_turn"
        steps += sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop},
                "usage": {"output_tokens": 4},
            },
            event="message_delta",
        )
        steps += sse({"type": "message_stop"}, event="message_stop")
        return Reply(steps=steps)
    if provider_id == "google":
        chunks: list[dict[str, Any]] = [
            {"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}}]}
            for piece in pieces
        ]
        chunks[-1]["candidates"][0]["finishReason"] = "MAX_TOKENS" if at_length_limit else "STOP"
        chunks[-1]["usageMetadata"] = {"promptTokenCount": 9, "candidatesTokenCount": 4}
        return Reply(steps=sse(*chunks))
    if provider_id == "ollama":
        lines = [
            {"message": {"role": "assistant", "content": piece}, "done": False} for piece in pieces
        ]
        lines.append(
            {
                "message": {"role": "assistant", "content": ""},
                "done": True,
                "done_reason": "length" if at_length_limit else "stop",
                "prompt_eval_count": 9,
                "eval_count": 4,
            }
        )
        return Reply(headers=NDJSON, steps=[(json.dumps(line) + "\n").encode() for line in lines])
    return openai_reply(*pieces, finish_reason="length" if at_length_limit else "stop")
