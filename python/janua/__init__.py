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
import inspect
import json
import os
import shutil
import subprocess
import sysconfig
import uuid
from typing import Any, Awaitable, Callable, Mapping, Optional, Sequence, Union

__all__ = ["Session", "JanuaError", "RunStopped", "PermissionAnswer", "find_janua"]

#: What a `can_use_tool` callback returns: True/False, or a dict such as
#: ``{"behavior": "deny", "message": "..."}`` or ``{"behavior": "allow", "always": True}``.
PermissionAnswer = Union[bool, Mapping[str, Any]]

#: ``can_use_tool(tool_name, input, reason, suggestions)``, sync or async.
CanUseTool = Callable[[str, Mapping[str, Any], str, Sequence[str]], Union[PermissionAnswer, Awaitable[PermissionAnswer]]]


class JanuaError(RuntimeError):
    """janua could not be started, or the session ended before a call was answered."""


class RunStopped(BaseException):
    """Raised by the SDK adapters' tools when a hook or monitor asked the agent loop to stop
    (``continue: false``). A ``BaseException``, so the runners' ``except Exception``, which turns
    a tool's failure into an error result for the model, lets it through and the run ends.
    ``reason`` is janua's ``stop``; ``result`` the call's ``tool_result`` block."""

    def __init__(self, reason: str, result: Mapping[str, Any]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.result = dict(result)


#: How many event-loop turns the adapters wait for the other calls of the same model reply
#: before sending them as one batch: an SDK starts a reply's calls as concurrent tasks, which
#: reach their tools a turn or two apart.
_GATHER_TURNS = 3

#: How much of janua's standard error a session keeps for its error messages.
_STDERR_TAIL = 16 << 10


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


def _tool_use_block(tool_use: Union[Mapping[str, Any], Any]) -> dict[str, Any]:
    """The `tool_use` line janua reads, from a mapping or an SDK's block object."""
    if isinstance(tool_use, Mapping):
        call_id, name, tool_input = tool_use["id"], tool_use["name"], tool_use.get("input", {})
    else:
        call_id, name, tool_input = tool_use.id, tool_use.name, tool_use.input
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


class Session:
    """One `janua run` session. Use it as an async context manager, or call `start`/`close`.

    ``extra_args`` are janua's own options (``--session``, ``--plugins``, …), ``run_args`` those of
    ``janua run`` (``--batch-token-budget``, ``--max-concurrency``, …)."""

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
        run_args: Sequence[str] = (),
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
        self._run_args = list(run_args)
        self._can_use_tool = can_use_tool
        self._process: Optional[asyncio.subprocess.Process] = None
        self._reader: Optional[asyncio.Task[None]] = None
        self._waiting: dict[str, asyncio.Future[tuple[dict[str, Any], Optional[str]]]] = {}
        self._answered: list[dict[str, Any]] = []
        self._gathering: list[tuple[dict[str, Any], asyncio.Future[tuple[dict[str, Any], Optional[str]]]]] = []
        self._write_lock = asyncio.Lock()
        self._stderr_tail = b""
        self._stderr_reader: Optional[asyncio.Task[None]] = None
        # Tasks nobody awaits, kept referenced until they end (the loop holds only weak ones).
        self._background: set[asyncio.Task[None]] = set()
        self.init: dict[str, Any] = {}
        #: Why the last batch asked the agent loop to stop (a hook's or monitor's
        #: ``continue: false``), else None. The SDK adapters raise `RunStopped` instead.
        self.stop_reason: Optional[str] = None

    async def start(self) -> "Session":
        """Starts `janua run` and waits for its `init` line (the registry, limits, warnings)."""
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self._args, "run", *self._run_args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=64 << 20,
            )
        except OSError as error:
            raise JanuaError(f"cannot start {self._args[0]}: {error}") from error
        # Drained all along into a bounded tail: asyncio would buffer it up to the 64 MiB read
        # limit, then stop reading and stall janua on its next warning.
        self._stderr_reader = asyncio.create_task(self._drain_stderr())
        line = await self._process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            await self._stderr_reader
            stderr = self._stderr_tail.decode(errors="replace").strip()
            raise JanuaError(f"janua run ended before its init line: {stderr}")
        self.init = json.loads(line)
        self._reader = asyncio.create_task(self._read())
        return self

    async def _drain_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        while chunk := await self._process.stderr.read(1 << 16):
            self._stderr_tail = (self._stderr_tail + chunk)[-_STDERR_TAIL:]

    async def close(self) -> None:
        """Ends the session: janua finishes what it has, ends the session and exits."""
        if self._process is None:
            return
        if self._process.stdin is not None and not self._process.stdin.is_closing():
            self._process.stdin.close()
        await self._process.wait()
        if self._reader is not None:
            await self._reader
        if self._stderr_reader is not None:
            await self._stderr_reader
        self._process = None

    async def __aenter__(self) -> "Session":
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def dispatch(self, tool_use: Union[Mapping[str, Any], Any]) -> dict[str, Any]:
        """Runs one `tool_use` block (a mapping, or an SDK's block object with ``id``, ``name`` and
        ``input``); returns its `tool_result` block. Cancelling the awaiting task cancels the call
        in janua."""
        [result] = await self.dispatch_batch([tool_use])
        return result

    async def dispatch_batch(self, tool_uses: Sequence[Union[Mapping[str, Any], Any]]) -> list[dict[str, Any]]:
        """Runs the blocks as one batch (concurrency-safe calls in parallel), as `janua run` runs a
        reply's calls; their `tool_result` blocks in the same order. A model reply's ``tool_use``
        blocks as an SDK returns them will do. `stop_reason` says whether the batch asked the loop
        to stop."""
        answers = await self._dispatch_batch(tool_uses)
        self.stop_reason = answers[0][1] if answers else None
        return [block for block, _ in answers]

    async def _dispatch_batch(
        self, tool_uses: Sequence[Union[Mapping[str, Any], Any]]
    ) -> list[tuple[dict[str, Any], Optional[str]]]:
        """`dispatch_batch`, each block with its batch's `stop`."""
        if self._process is None:
            raise JanuaError("the session is not started")
        loop = asyncio.get_running_loop()
        blocks = [_tool_use_block(tool_use) for tool_use in tool_uses]
        ids = [block["id"] for block in blocks]
        # Results are matched by id: a repeated one would leave a call unanswered.
        repeated = sorted({str(i) for i in ids if ids.count(i) > 1 or i in self._waiting})
        if repeated:
            raise JanuaError(f"tool_use ids must be unique among the calls in flight: {repeated}")
        futures: list[asyncio.Future[tuple[dict[str, Any], Optional[str]]]] = []
        for block in blocks:
            futures.append(loop.create_future())
            self._waiting[block["id"]] = futures[-1]
        try:
            await self._send({"type": "assistant", "message": {"role": "assistant", "content": blocks}})
            return list(await asyncio.gather(*futures))
        except asyncio.CancelledError:
            for block in blocks:
                if self._waiting.pop(block["id"], None) is not None:
                    await asyncio.shield(self._send({"type": "cancel", "tool_use_id": block["id"]}))
            raise
        except JanuaError:
            for block in blocks:
                self._waiting.pop(block["id"], None)
            raise

    async def _dispatch_gathered(self, tool_use: Mapping[str, Any]) -> dict[str, Any]:
        """Runs the call in one batch with the others handed over within a few event-loop turns
        (the SDK adapters: a runner starts a reply's calls as concurrent tasks, and janua's batch
        is the reply). Raises `RunStopped` when the batch asked the loop to stop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[dict[str, Any], Optional[str]]] = loop.create_future()
        call = dict(tool_use)
        self._gathering.append((call, future))
        if len(self._gathering) == 1:
            self._spawn(self._send_gathered())
        try:
            block, stop = await asyncio.shield(future)
        except asyncio.CancelledError:
            if any(entry is call for entry, _ in self._gathering):
                self._gathering = [(entry, waiting) for entry, waiting in self._gathering if entry is not call]
            else:
                await asyncio.shield(self._send({"type": "cancel", "tool_use_id": call["id"]}))
            raise
        if stop is not None:
            raise RunStopped(stop, block)
        return block

    async def _send_gathered(self) -> None:
        for _ in range(_GATHER_TURNS):
            await asyncio.sleep(0)
        gathered, self._gathering = self._gathering, []
        if not gathered:
            return
        try:
            answers = await self._dispatch_batch([call for call, _ in gathered])
        except BaseException as error:  # every caller learns why; nothing is left waiting
            for _, future in gathered:
                if not future.done():
                    future.set_exception(error if isinstance(error, Exception) else JanuaError(str(error)))
            if not isinstance(error, Exception):
                raise
            return
        for (_, future), answer in zip(gathered, answers):
            if not future.done():
                future.set_result(answer)

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
                self._spawn(self._answer(message))
            elif kind == "user" and "parent_tool_use_id" not in message:
                # Answered with the `result` line right after it, which says whether to stop.
                self._answered = list(message.get("message", {}).get("content", []))
            elif kind == "result" and message.get("subtype") == "batch":
                self._resolve(message.get("stop"))
        self._resolve(None)
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(JanuaError("janua run ended before answering the call"))
        self._waiting.clear()

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _resolve(self, stop: Optional[str]) -> None:
        answered, self._answered = self._answered, []
        for block in answered:
            future = self._waiting.pop(str(block.get("tool_use_id")), None)
            if future is not None and not future.done():
                future.set_result((block, stop))

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
                given = self._can_use_tool(tool, request.get("input", {}), reason, suggestions)
                answer = await given if inspect.isawaitable(given) else given
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

        return anthropic_tools(self, self.tool_definitions("anthropic"))

    def openai_tools(self) -> list[Any]:
        """The session's tools as OpenAI Agents SDK ``FunctionTool`` objects
        (``Agent(tools=session.openai_tools(), ...)``): each call runs through this session, the
        model's call id becoming janua's tool_use id; the output is janua's tool_result content."""
        from ._adapters import openai_tools

        return openai_tools(self, self.tool_definitions("openai"))

    def tool_definitions(self, api: str) -> list[dict[str, Any]]:
        """The session's tool definitions in an API's format (``janua tools --format API``):
        ``"anthropic"`` (the Messages API's ``tools``), ``"openai"`` (function tools) or ``"mcp"``.
        For a loop of one's own: pass them to the model, then the reply to `dispatch_batch`."""
        try:
            listed = subprocess.run(
                [*self._args, "tools", "--format", api], capture_output=True, text=True, check=False
            )
        except OSError as error:
            raise JanuaError(f"cannot start {self._args[0]}: {error}") from error
        if listed.returncode != 0:
            raise JanuaError(f"janua tools --format {api} failed: {listed.stderr.strip()}")
        return list(json.loads(listed.stdout))

    @staticmethod
    def _fresh_id() -> str:
        """A tool_use id for a call whose caller has none (unique, also across resumed sessions)."""
        return f"janua_{uuid.uuid4().hex}"

    def mcp_stdio(self) -> dict[str, Any]:
        """The stdio MCP server parameters (command, args) serving this session's tools through
        janua (`janua mcp serve`), for the Claude Agent SDK's `mcp_servers` and other MCP clients."""
        return {"type": "stdio", "command": self._args[0], "args": self._args[1:] + ["mcp", "serve"]}
