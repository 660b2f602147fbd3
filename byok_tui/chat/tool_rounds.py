"""The rounds of a reply that calls tools: what is offered, a call run (or refused), and the
request that carries its results back. No I/O of its own: the toolbox's runner runs a call,
and asks the user first or refuses (never the model)."""

from __future__ import annotations

from dataclasses import replace

from byok_tui.chat.outgoing import ToolBox
from byok_tui.chat.tool_history import without_tool_turns
from byok_tui.core.registry import Provider
from byok_tui.providers.types import ChatMessage, ChatRequest, ToolCall, ToolResult


def offered(
    provider: Provider, request: ChatRequest, toolbox: ToolBox
) -> tuple[ChatRequest, ToolBox | None]:
    """The request with the tools offered, and the toolbox; none to a model the registry says
    takes no tools (the request goes without them)."""
    if provider.model(request.model).takes_tools is False or not toolbox.specs:
        return without_tools(request), None
    return replace(request, tools=toolbox.specs), toolbox


async def run_call(toolbox: ToolBox, call: ToolCall) -> ToolResult:
    """A call as the toolbox's runner answers it; one the model got wrong is not run, and the
    model is told why."""
    if call.problem is not None:
        return ToolResult(call.id, call.name, f"The call was not run: {call.problem}.", True)
    return await toolbox.run(call)


def with_round(
    request: ChatRequest, said: str, calls: tuple[ToolCall, ...], results: tuple[ToolResult, ...]
) -> ChatRequest:
    """The next request: the conversation as sent, the model's turn that called the tools,
    and the turn carrying what they gave back. A reply being continued was sent as its
    last turn: `said` holds its words now."""
    earlier = request.messages[:-1] if request.continues else request.messages
    return replace(
        request,
        messages=(
            *earlier,
            ChatMessage("assistant", said, tool_calls=calls),
            ChatMessage("user", "", tool_results=results),
        ),
        continues=False,
    )


def without_tools(request: ChatRequest) -> ChatRequest:
    """The request offering no tools, and carrying earlier tool rounds as their words only."""
    return replace(request, tools=(), messages=without_tool_turns(request.messages))
