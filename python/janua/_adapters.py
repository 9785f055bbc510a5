"""A Session's tools as agent SDKs' tool objects. Each SDK is imported only when its adapter is
asked for, so the package needs neither."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping, Sequence, Union

if TYPE_CHECKING:
    from . import Session


def anthropic_tools(session: "Session", definitions: Sequence[Mapping[str, Any]]) -> list[Any]:
    """One `BetaAsyncBuiltinFunctionTool` per definition (`janua tools --format anthropic`)."""
    from anthropic.lib.tools import BetaAsyncBuiltinFunctionTool, ToolError

    class JanuaTool(BetaAsyncBuiltinFunctionTool):
        """A janua tool for the anthropic SDK's async tool runner."""

        def __init__(self, definition: Mapping[str, Any]) -> None:
            self._definition = dict(definition)

        def to_dict(self) -> Any:
            return dict(self._definition)

        async def call(self, input: object) -> Any:
            # The runner passes only the input, so janua's block gets an id of the session's own;
            # the runner writes the model's id, janua's content and (on an error) is_error.
            result = await session._dispatch_gathered(
                {"id": session._fresh_id(), "name": self._definition["name"], "input": input}
            )
            if result.get("is_error"):
                raise ToolError(result["content"])
            return result["content"]

    return [JanuaTool(definition) for definition in definitions]


def openai_tools(session: "Session", definitions: Sequence[Mapping[str, Any]]) -> list[Any]:
    """One OpenAI Agents SDK `FunctionTool` per definition (`janua tools --format openai`)."""
    from agents import FunctionTool, ToolOutputImage, ToolOutputText

    def output(content: Union[str, Sequence[Mapping[str, Any]]]) -> Any:
        # Function outputs carry no error flag: janua's error text (it starts with the error
        # kind, e.g. "permission_denied: ...") is what the model reads, as from `janua run`.
        if isinstance(content, str):
            return content
        parts: list[Any] = []
        for block in content:
            if block.get("type") == "text":
                parts.append(ToolOutputText(text=block["text"]))
            elif block.get("type") == "image" and block.get("source", {}).get("type") == "base64":
                source = block["source"]
                parts.append(ToolOutputImage(image_url=f"data:{source['media_type']};base64,{source['data']}"))
            else:
                parts.append(ToolOutputText(text=json.dumps(block)))
        return parts

    def tool(function: Mapping[str, Any]) -> Any:
        async def invoke(context: Any, arguments: str) -> Any:
            try:
                tool_input: Any = json.loads(arguments) if arguments else {}
            except ValueError:
                tool_input = arguments  # janua answers with its typed invalid_input error
            result = await session._dispatch_gathered(
                {"id": context.tool_call_id or session._fresh_id(), "name": function["name"], "input": tool_input}
            )
            return output(result["content"])

        return FunctionTool(
            name=function["name"],
            description=function.get("description", ""),
            params_json_schema=dict(function.get("parameters", {"type": "object"})),
            on_invoke_tool=invoke,
            # janua's schemas are JSON Schema as the tools declare them, not OpenAI's strict subset;
            # janua validates (and coerces) every input itself.
            strict_json_schema=False,
        )

    return [tool(entry["function"]) for entry in definitions]
