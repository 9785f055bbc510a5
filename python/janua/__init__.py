"""An async client for janua's `janua run` session (docs/PROTOCOL.md).

```python
import asyncio, janua

async def main():
    async with janua.Session(cwd=".", allowed_tools=["Read"]) as session:
        result = await session.dispatch(
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "README.md"}}
        )
        print(result["content"])

asyncio.run(main())
```

Every call goes through janua's whole pipeline (rules, hooks, sandbox, output limits); the
`tool_result` blocks are exactly the ones `janua run` writes. A permission question goes to
`can_use_tool`; with no callback it is a denial that names what would allow the call.
`anthropic_tools()` and `openai_tools()` give the session's tools to the anthropic SDK's tool
runner and to the OpenAI Agents SDK; `mcp_stdio()` to MCP clients.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import subprocess
import sysconfig
from typing import Any, Awaitable, Callable, Mapping, Optional, Sequence, Union

__all__ = ["Session", "JanuaError", "PermissionAnswer", "find_janua"]

#: What a `can_use_tool` callback returns: True/False, or a dict such as
#: ``{"behavior": "deny", "message": "..."}`` or ``{"behavior": "allow", "always": True}``.
PermissionAnswer = Union[bool, Mapping[str, Any]]

#: ``can_use_tool(tool_name, input, reason, suggestions)``, sync or async.
CanUseTool = Callable[[str, Mapping[str, Any], str, Sequence[str]], Union[PermissionAnswer, Awaitable[PermissionAnswer]]]


class JanuaError(RuntimeError):
    """janua could not be started, or the session ended before a call was answered."""


def find_janua() -> str:
    """The `janua` binary: `$JANUA_BIN`, else the one the wheel installed beside this Python's
    scripts (found even when the environment is not activated), else the one on PATH."""
    explicit = os.environ.get("JANUA_BIN")
    if explicit:
        return explicit
    bundled = os.path.join(sysconfig.get_path("scripts"), "janua")
    if os.access(bundled, os.X_OK):
        return bundled
    found = shutil.which("janua")
    if found is None:
        raise JanuaError("no janua binary: install the wheel, put janua on PATH, or set JANUA_BIN")
    return found


class Session:
    """One `janua run` session. Use it as an async context manager, or call `start`/`close`."""

    def __init__(
        self,
        cwd: Union[str, os.PathLike[str]] = ".",
        *,
        settings: Optional[Union[str, os.PathLike[str], Mapping[str, Any]]] = None,
        permission_mode: Optional[str] = None,
        allowed_tools: Sequence[str] = (),
        disallowed_tools: Sequence[str] = (),
        can_use_tool: Optional[CanUseTool] = None,
        janua: Optional[str] = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.cwd = os.fspath(cwd)
        self._args = [janua or find_janua(), "--cwd", self.cwd]
        if settings is not None:
            self._args += [
                "--settings",
                json.dumps(settings) if isinstance(settings, Mapping) else os.fspath(settings),
            ]
        if permission_mode is not None:
            self._args += ["--permission-mode", permission_mode]
        for rule in allowed_tools:
            self._args += ["--allowedTools", rule]
        for rule in disallowed_tools:
            self._args += ["--disallowedTools", rule]
        self._args += list(extra_args)
        self._can_use_tool = can_use_tool
        self._process: Optional[asyncio.subprocess.Process] = None
        self._reader: Optional[asyncio.Task[None]] = None
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._write_lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self.init: dict[str, Any] = {}

    async def start(self) -> "Session":
        """Starts `janua run` and waits for its `init` line (the registry, limits, warnings)."""
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self._args, "run",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=64 << 20,
            )
        except OSError as error:
            raise JanuaError(f"cannot start {self._args[0]}: {error}") from error
        line = await self._process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            stderr = await self._process.stderr.read()  # type: ignore[union-attr]
            raise JanuaError(f"janua run ended before its init line: {stderr.decode(errors='replace').strip()}")
        self.init = json.loads(line)
        self._reader = asyncio.create_task(self._read())
        return self

    async def close(self) -> None:
        """Ends the session: janua finishes what it has, ends the session and exits."""
        if self._process is None:
            return
        if self._process.stdin is not None and not self._process.stdin.is_closing():
            self._process.stdin.close()
        await self._process.wait()
        if self._reader is not None:
            await self._reader
        self._process = None

    async def __aenter__(self) -> "Session":
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def dispatch(self, tool_use: Mapping[str, Any]) -> dict[str, Any]:
        """Runs one `tool_use` block; returns its `tool_result` block. Cancelling the awaiting task
        cancels the call in janua."""
        [result] = await self.dispatch_batch([tool_use])
        return result

    async def dispatch_batch(self, tool_uses: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Runs the blocks as one batch (concurrency-safe calls in parallel); their `tool_result`
        blocks in the same order."""
        if self._process is None:
            raise JanuaError("the session is not started")
        loop = asyncio.get_running_loop()
        futures = []
        blocks = []
        for tool_use in tool_uses:
            block = {"type": "tool_use", "id": tool_use["id"], "name": tool_use["name"],
                     "input": tool_use.get("input", {})}
            if block["id"] in self._waiting:
                raise JanuaError(f"tool_use id {block['id']!r} is already in flight")
            future: asyncio.Future[dict[str, Any]] = loop.create_future()
            self._waiting[block["id"]] = future
            futures.append(future)
            blocks.append(block)
        await self._send({"type": "assistant", "message": {"role": "assistant", "content": blocks}})
        try:
            return list(await asyncio.gather(*futures))
        except asyncio.CancelledError:
            for block in blocks:
                if self._waiting.pop(block["id"], None) is not None:
                    await asyncio.shield(self._send({"type": "cancel", "tool_use_id": block["id"]}))
            raise

    async def _send(self, line: Mapping[str, Any]) -> None:
        process = self._process
        if process is None or process.stdin is None or process.stdin.is_closing():
            raise JanuaError("the session has ended")
        async with self._write_lock:
            process.stdin.write((json.dumps(line) + "\n").encode())
            await process.stdin.drain()

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        while True:
            line = await self._process.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            kind = message.get("type")
            if kind == "control_request":
                asyncio.create_task(self._answer(message))
            elif kind == "user" and "parent_tool_use_id" not in message:
                for block in message.get("message", {}).get("content", []):
                    future = self._waiting.pop(block.get("tool_use_id"), None)
                    if future is not None and not future.done():
                        future.set_result(block)
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(JanuaError("janua run ended before answering the call"))
        self._waiting.clear()

    async def _answer(self, message: Mapping[str, Any]) -> None:
        request = message.get("request", {})
        tool, reason = request.get("tool_name", ""), request.get("reason", "")
        suggestions = list(request.get("permission_suggestions", []))
        if self._can_use_tool is None:
            hint = " or ".join(repr(rule) for rule in suggestions) or repr(tool)
            answer: PermissionAnswer = {
                "behavior": "deny",
                "message": f"{reason}. Nobody can approve it in this session (no can_use_tool "
                f"callback); to allow it, pass allowed_tools=[{hint}] or add the rule to settings.",
            }
        else:
            try:
                answer = self._can_use_tool(tool, request.get("input", {}), reason, suggestions)
                if asyncio.iscoroutine(answer) or isinstance(answer, asyncio.Future):
                    answer = await answer
            except Exception as error:  # the callback's failure is a denial, never an allow
                answer = {"behavior": "deny", "message": f"the can_use_tool callback failed: {error}"}
        if isinstance(answer, bool):
            answer = {"behavior": "allow" if answer else "deny"}
        response = {"subtype": "success", "request_id": message.get("request_id"), "response": dict(answer)}
        try:
            await self._send({"type": "control_response", "response": response})
        except JanuaError:
            pass

    def anthropic_tools(self) -> list[Any]:
        """The session's tools for the anthropic SDK's async tool runner
        (``AsyncAnthropic().beta.messages.tool_runner(tools=session.anthropic_tools(), ...)``): each
        call runs through this session, and a janua error becomes an ``is_error`` tool_result."""
        from ._adapters import anthropic_tools

        return anthropic_tools(self, self._definitions("anthropic"))

    def openai_tools(self) -> list[Any]:
        """The session's tools as OpenAI Agents SDK ``FunctionTool`` objects
        (``Agent(tools=session.openai_tools(), ...)``): each call runs through this session, the
        model's call id becoming janua's tool_use id; the output is janua's tool_result content."""
        from ._adapters import openai_tools

        return openai_tools(self, self._definitions("openai"))

    def _definitions(self, api: str) -> list[dict[str, Any]]:
        """The tool definitions of this session's registry in an API's format (`janua tools`)."""
        try:
            listed = subprocess.run(
                [*self._args, "tools", "--format", api], capture_output=True, text=True, check=False
            )
        except OSError as error:
            raise JanuaError(f"cannot start {self._args[0]}: {error}") from error
        if listed.returncode != 0:
            raise JanuaError(f"janua tools --format {api} failed: {listed.stderr.strip()}")
        return list(json.loads(listed.stdout))

    def _fresh_id(self) -> str:
        """A tool_use id for a call whose caller has none (unique within the session)."""
        return f"janua_{next(self._ids)}"

    def mcp_stdio(self) -> dict[str, Any]:
        """The stdio MCP server parameters (command, args) serving this session's tools through
        janua (`janua mcp serve`), for the Claude Agent SDK's `mcp_servers` and other MCP clients."""
        return {"type": "stdio", "command": self._args[0], "args": self._args[1:] + ["mcp", "serve"]}
