"""Tool calls on the wire, for all four families, against a real loopback server: the tools
offered and a conversation's tool turns go out in each family's own shape; a call streamed
back is assembled whole, and a malformed one (bad JSON, a tool never offered, arguments its
schema refuses) becomes a call with a problem, never a crash; a model the registry says takes
no tools is sent none."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from byok_tui.core.registry import get_provider
from byok_tui.keys import KeyStore
from byok_tui.providers.tool_calls import CallPieces, checked_call
from byok_tui.providers.types import (
    ChatMessage,
    ChatRequest,
    Done,
    StreamEvent,
    ToolCall,
    ToolCalls,
    ToolResult,
    ToolSpec,
)
from byok_tui.providers.wire import family
from tests.support.provider_client import client_for, collect
from tests.support.provider_server import ProviderServer, Reply, sse

WEATHER = ToolSpec(
    "weather",
    "The weather in a city today.",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
ASKED = ToolCall("call_1", "weather", '{"city": "Oslo"}', {"city": "Oslo"}, signature="sig-1")
ANSWERED = ToolResult("call_1", "weather", "Snow, -4 C.")
MODELS = {
    "openai": "gpt-5.5",
    "anthropic": "claude-sonnet-4-6",
    "google": "gemini-3.8-flash",
    "ollama": "qwen3:8b",
}


def request(model: str, *, tools: tuple[ToolSpec, ...] = (WEATHER,)) -> ChatRequest:
    return ChatRequest(
        model=model,
        messages=(
            ChatMessage("user", "Weather in Oslo?"),
            ChatMessage("assistant", "Let me look.", tool_calls=(ASKED,)),
            ChatMessage("user", "", tool_results=(ANSWERED,)),
        ),
        tools=tools,
    )


def body_for(provider_id: str, chat: ChatRequest, *, takes_tools: bool | None = None) -> Any:
    provider = get_provider(provider_id)
    model = provider.model(chat.model)
    if takes_tools is not None:
        model = model._replace(takes_tools=takes_tools)
    return family(provider).chat_call(provider, "https://x.example", "K" * 40, chat, model).json


def test_openai_compatible_sends_functions_the_assistant_s_calls_and_a_tool_message_each() -> None:
    body = body_for("openai", request(MODELS["openai"]))
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "description": WEATHER.description,
                "parameters": WEATHER.input_schema,
            },
        }
    ]
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Snow, -4 C."},
    ]


def test_anthropic_sends_input_schemas_tool_use_blocks_and_tool_result_blocks() -> None:
    body = body_for("anthropic", request(MODELS["anthropic"]))
    assert body["tools"] == [
        {
            "name": "weather",
            "description": WEATHER.description,
            "input_schema": WEATHER.input_schema,
        }
    ]
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Oslo"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "Snow, -4 C."}],
        },
    ]


def test_gemini_sends_function_declarations_calls_with_their_signature_and_responses() -> None:
    body = body_for("google", request(MODELS["google"]))
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "weather",
                    "description": WEATHER.description,
                    "parametersJsonSchema": WEATHER.input_schema,
                }
            ]
        }
    ]
    assert body["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"text": "Let me look."},
                {
                    "functionCall": {"name": "weather", "args": {"city": "Oslo"}},
                    "thoughtSignature": "sig-1",
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "weather", "response": {"content": "Snow, -4 C."}}}
            ],
        },
    ]


def test_ollama_sends_functions_calls_with_object_arguments_and_tool_messages_by_name() -> None:
    body = body_for("ollama", request(MODELS["ollama"]))
    assert body["tools"][0]["function"]["name"] == "weather"
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [{"function": {"name": "weather", "arguments": {"city": "Oslo"}}}],
        },
        {"role": "tool", "content": "Snow, -4 C.", "tool_name": "weather"},
    ]


@pytest.mark.parametrize("provider_id", sorted(MODELS))
def test_a_model_the_registry_says_takes_no_tools_is_sent_none(provider_id: str) -> None:
    chat = request(MODELS[provider_id])
    assert "tools" in json.dumps(body_for(provider_id, chat))
    refused = body_for(provider_id, chat, takes_tools=False)
    assert "tools" not in refused and "functionDeclarations" not in json.dumps(refused)


@pytest.mark.parametrize("provider_id", sorted(MODELS))
def test_a_chat_with_no_tools_sends_no_tools_field(provider_id: str) -> None:
    assert "tools" not in body_for(provider_id, request(MODELS[provider_id], tools=()))


# Streams that call the tool -----------------------------------------------------------------


def openai_calls(*argument_parts: str, name: str = "weather") -> Reply:
    first = {"index": 0, "id": "call_9", "function": {"name": name, "arguments": ""}}
    chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [first]}}]}]
    chunks += [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": part}}]},
                }
            ]
        }
        for part in argument_parts
    ]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return Reply(steps=sse(*chunks, done=True))


def anthropic_calls(*argument_parts: str, name: str = "weather") -> Reply:
    steps = sse({"type": "message_start", "message": {"usage": {"input_tokens": 5}}})
    steps += sse(
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_9", "name": name, "input": {}},
        }
    )
    for part in argument_parts:
        steps += sse(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": part},
            }
        )
    steps += sse({"type": "content_block_stop", "index": 1})
    steps += sse({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}})
    steps += sse({"type": "message_stop"})
    return Reply(steps=steps)


def gemini_calls(args: dict[str, Any], name: str = "weather") -> Reply:
    part = {"functionCall": {"name": name, "args": args}, "thoughtSignature": "sig-9"}
    candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}
    chunk = {"candidates": [candidate]}
    return Reply(steps=sse(chunk))


def ollama_calls(arguments: Any, name: str = "weather") -> Reply:
    message = {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": name, "arguments": arguments}}
    ]}  # fmt: skip
    lines = [
        json.dumps({"message": message, "done": False}).encode() + b"\n",
        json.dumps({"message": {"content": ""}, "done": True, "done_reason": "stop"}).encode()
        + b"\n",
    ]
    return Reply(steps=list(lines))


STREAMS = {
    "openai": lambda: openai_calls('{"ci', 'ty": "Os', 'lo", "days": 2}'),
    "anthropic": lambda: anthropic_calls('{"city"', ': "Oslo", ', '"days": 2}'),
    "google": lambda: gemini_calls({"city": "Oslo", "days": 2}),
    "ollama": lambda: ollama_calls({"city": "Oslo", "days": 2}),
}


async def calls_from(
    provider_id: str, reply: Reply, server: ProviderServer, store: KeyStore
) -> tuple[tuple[ToolCall, ...], list[StreamEvent]]:
    server.reply_with(reply)
    key = "sk-ant-api03-" + "T" * 40 if provider_id == "anthropic" else "k" * 40
    events = await collect(
        client_for(provider_id, server, store, key=key),
        provider_id,
        request(MODELS[provider_id]),
    )
    found = [event for event in events if isinstance(event, ToolCalls)]
    assert len(found) == 1, events
    assert isinstance(events[-1], Done)
    return found[0].calls, events


@pytest.mark.parametrize("provider_id", sorted(MODELS))
async def test_a_streamed_call_is_assembled_whole(
    provider_id: str, server: ProviderServer, store: KeyStore
) -> None:
    calls, _ = await calls_from(provider_id, STREAMS[provider_id](), server, store)
    (call,) = calls
    assert call.name == "weather" and call.problem is None
    assert call.arguments == {"city": "Oslo", "days": 2}
    assert json.loads(call.raw_arguments) == {"city": "Oslo", "days": 2}
    if provider_id == "google":
        assert call.signature == "sig-9"


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (lambda: openai_calls('{"city": "Oslo"'), "not valid JSON"),
        (lambda: openai_calls('["Oslo"]'), "not a JSON object"),
        (lambda: openai_calls('{"city": "Oslo"}', name="rm_rf"), "no tool named 'rm_rf'"),
        (lambda: openai_calls('{"city": 7}'), "do not match the tool's schema: city"),
        (lambda: openai_calls('{"town": "Oslo"}'), "do not match the tool's schema"),
    ],
    ids=["cut-json", "not-an-object", "unknown-tool", "wrong-type", "missing-required"],
)
async def test_a_malformed_call_comes_back_with_its_problem_never_a_crash(
    reply: Any, problem: str, server: ProviderServer, store: KeyStore
) -> None:
    calls, _ = await calls_from("openai", reply(), server, store)
    (call,) = calls
    assert call.arguments is None
    assert call.problem is not None and problem in call.problem


async def test_ollama_arguments_given_as_text_are_parsed_and_checked(
    server: ProviderServer, store: KeyStore
) -> None:
    calls, _ = await calls_from("ollama", ollama_calls('{"city": "Oslo"}'), server, store)
    assert calls[0].arguments == {"city": "Oslo"}


def test_escape_sequences_in_a_tool_name_are_cleaned_and_bounded() -> None:
    call = checked_call("id\x1b[2J", "\x1b]0;evil\x07weather" + "x" * 500, "{}", (WEATHER,))
    assert "\x1b" not in call.name and "\x1b" not in call.id
    assert len(call.name) <= 128 and call.problem is not None  # no tool of that name


@settings(max_examples=150, deadline=None)
@given(
    arguments=st.dictionaries(
        st.sampled_from(["city", "days"]),
        st.one_of(st.text(max_size=30), st.integers(-5, 50)),
    ).map(lambda found: {"city": str(found.get("city", "Oslo")), **found} | {"days": 3}),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_arguments_cut_anywhere_assemble_to_the_same_object(
    arguments: dict[str, Any], cuts: list[int]
) -> None:
    """However a stream cuts the arguments' JSON (mid-string, mid-escape, mid-number),
    the pieces assemble to the arguments sent."""
    arguments["city"] = str(arguments["city"])
    text = json.dumps(arguments)
    points = sorted({0, len(text), *(cut % (len(text) + 1) for cut in cuts)})
    pieces = CallPieces()
    pieces.add(0, call_id="call_1", name="weather")
    for start, end in itertools.pairwise(points):
        pieces.add(0, arguments=text[start:end])
    (call,) = pieces.calls((WEATHER,))
    assert call.problem is None, call.problem
    assert call.arguments == arguments
