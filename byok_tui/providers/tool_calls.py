"""A model's tool calls, assembled from the pieces its stream sends and checked before anything
runs: arguments that are not a JSON object, a tool that was not offered, or arguments the
tool's own JSON Schema refuses make a call with a `problem`, which goes back to the model as
an error result. Never raises for what a model sent: a malformed call is never a crash.

Names and arguments came from the network: a name is cleaned to one line and bounded, and the
arguments of one call are bounded in size.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from byok_tui.core.sanitize import clean_line
from byok_tui.providers.types import ToolCall, ToolSpec

LONGEST_NAME = 128
LONGEST_ARGUMENTS = 256 * 1024  # characters of one call's arguments
LONGEST_PROBLEM = 300  # a schema's complaint quotes the arguments: said briefly


def tool_name(raw: Any) -> str:
    return clean_line(raw if isinstance(raw, str) else "")[:LONGEST_NAME]


def checked_call(
    call_id: str,
    name: str,
    raw_arguments: str,
    offered: Sequence[ToolSpec],
    *,
    arguments: Any = None,
    signature: str | None = None,
) -> ToolCall:
    """The call as it may be run, or with the problem that stops it. `arguments`: already
    parsed (a family that sends them as an object); else `raw_arguments` is parsed."""
    name = tool_name(name)
    call_id = clean_line(call_id)[:LONGEST_NAME] or "call"

    def refused(problem: str) -> ToolCall:
        return ToolCall(call_id, name, raw_arguments, None, problem, signature)

    if len(raw_arguments) > LONGEST_ARGUMENTS:
        return refused(f"the arguments are longer than {LONGEST_ARGUMENTS:,} characters")
    spec = next((tool for tool in offered if tool.name == name), None)
    if spec is None:
        return refused(f"there is no tool named {name!r}")
    if arguments is None:
        try:
            arguments = json.loads(raw_arguments) if raw_arguments.strip() else {}
        except (ValueError, RecursionError) as error:
            reason = error.msg if isinstance(error, json.JSONDecodeError) else "too deeply nested"
            return refused(f"the arguments are not valid JSON ({reason})")
    if not isinstance(arguments, dict):
        return refused("the arguments are not a JSON object")
    problem = schema_problem(spec.input_schema, arguments)
    if problem is not None:
        return refused(problem)
    return ToolCall(call_id, name, raw_arguments, arguments, None, signature)


def schema_problem(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """What the tool's JSON Schema refuses in `arguments`, in a line; None when it takes them."""
    import jsonschema  # loaded with the first tool call, not at start-up

    try:
        validator = jsonschema.validators.validator_for(schema)(schema)
        validator.check_schema(schema)
        errors = validator.iter_errors(arguments)
        error = jsonschema.exceptions.best_match(errors)  # type: ignore[no-untyped-call]
    except jsonschema.exceptions.SchemaError:
        return "the tool's own schema is not valid JSON Schema"
    except (RecursionError, ValueError, TypeError):
        return "the arguments could not be checked against the tool's schema"
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    said = clean_line(f"{where}: {error.message}" if where else error.message)
    return f"the arguments do not match the tool's schema: {said[:LONGEST_PROBLEM]}"


@dataclass
class _Pieces:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    size: int = 0


class CallPieces:
    """Calls streamed in pieces, each piece saying which call it belongs to (an index):
    an id and a name once, the arguments in any number of parts."""

    def __init__(self) -> None:
        self._calls: dict[int, _Pieces] = {}

    def add(
        self, index: int, *, call_id: Any = None, name: Any = None, arguments: Any = None
    ) -> None:
        pieces = self._calls.setdefault(index, _Pieces())
        if isinstance(call_id, str) and call_id:
            pieces.call_id = call_id
        if isinstance(name, str) and name:
            pieces.name += name
        if isinstance(arguments, str) and arguments and pieces.size <= LONGEST_ARGUMENTS:
            pieces.arguments.append(arguments)
            pieces.size += len(arguments)

    def __bool__(self) -> bool:
        return bool(self._calls)

    def calls(self, offered: Sequence[ToolSpec]) -> tuple[ToolCall, ...]:
        """Every call whole, in the order of their indexes, each checked."""
        return tuple(
            checked_call(
                pieces.call_id or f"call_{index}", pieces.name, "".join(pieces.arguments), offered
            )
            for index, pieces in sorted(self._calls.items())
        )
