"""MCP test driver built on the official Python SDK's stdio / streamable HTTP clients.

Usage: DIR/venv/bin/python tests/mcp/client.py STEPS_JSON_FILE -- SERVER_COMMAND [ARGS...]
       DIR/venv/bin/python tests/mcp/client.py STEPS_JSON_FILE --http URL [--header 'Name: value']...
The second form speaks Streamable HTTP to URL, sending each --header on every HTTP request.

STEPS_JSON_FILE holds either a JSON array of steps, or an object
{"elicitation": "accept"|"decline"|"cancel"|null, "content": {...}, "steps": [...]}.
The elicitation capability is advertised at initialize iff the object form names an
answer, or (when it does not) some step has "op": "elicitation".

Prints one JSON line per step (the first is {"step": "initialize", ...}). Step ops:
  {"op":"list"}
  {"op":"call"|"call_progress","name":N,"arguments":{...},"timeout_s":30}
  {"op":"cancel","name":N,"arguments":{...},"cancel_after_s":0.5,"timeout_s":30}
  {"op":"parallel","calls":[{"name":N,"arguments":{...}},...],"timeout_s":30}
  {"op":"elicitation","answer":"accept"|"decline"|"cancel","content":{...}}
  {"op":"sleep","seconds":X}
Set MCP_TRACE=FILE to append every JSON-RPC message (both directions) to FILE.
Exit status: 0 after running all steps (per-step failures are reported inline),
1 if initialize or startup failed, 2 on bad usage.
"""

import json
import os
import sys
import time
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

try:  # 2.x
    from mcp.shared.exceptions import MCPError
except ImportError:  # 1.x
    from mcp.shared.exceptions import McpError as MCPError  # type: ignore

CALL_OPS = ("list", "call", "call_progress", "cancel", "parallel")


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


def dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def describe(exc: BaseException) -> str:
    if isinstance(exc, MCPError):  # str(MCPError) is a tuple repr in 2.x
        return f"MCPError: code={exc.error.code} message={exc.error.message}"
    if isinstance(exc, TimeoutError) and not str(exc):  # from anyio.fail_after (timeout_s)
        return "TimeoutError: step timeout_s elapsed"
    return f"{type(exc).__name__}: {exc}"


def exc_fields(exc: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {"exception": describe(exc)}
    if isinstance(exc, MCPError):
        out["error"] = dump(exc.error)
    return out


class Tap:
    """Wraps one of the transport's streams. On the write side it records what the
    client really sends (ids of tools/call requests, every notifications/cancelled);
    with MCP_TRACE=FILE set, both sides append each JSON-RPC message to FILE as
    {"dir": "out"|"in", "msg": ...} (exclude_unset, so close to the wire bytes)."""

    trace = open(os.environ["MCP_TRACE"], "a") if os.environ.get("MCP_TRACE") else None

    def __init__(self, inner: Any, direction: str) -> None:
        self.inner, self.direction = inner, direction
        self.calls: list[tuple[Any, str]] = []  # (request id, tool name)
        self.cancels: list[dict[str, Any]] = []  # params of notifications/cancelled

    def _see(self, item: Any) -> None:
        msg = getattr(getattr(item, "message", None), "root", getattr(item, "message", None))  # 1.x: RootModel
        if msg is None:  # the read side also carries transport Exceptions
            return
        if self.trace:
            wire = msg.model_dump(by_alias=True, exclude_unset=True, mode="json")
            self.trace.write(json.dumps({"dir": self.direction, "msg": wire}) + "\n")
            self.trace.flush()
        method, params = getattr(msg, "method", None), getattr(msg, "params", None) or {}
        if method == "tools/call" and hasattr(msg, "id"):
            self.calls.append((msg.id, params.get("name")))
        elif method == "notifications/cancelled" and self.direction == "out":
            self.cancels.append(dict(params))

    async def send(self, item: Any) -> None:
        self._see(item)
        await self.inner.send(item)

    async def receive(self) -> Any:
        item = await self.inner.receive()
        self._see(item)
        return item

    def __aiter__(self) -> "Tap":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration

    async def aclose(self) -> None:
        await self.inner.aclose()

    def close(self) -> None:
        self.inner.close()

    async def __aenter__(self) -> "Tap":
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Driver:
    def __init__(self, session: ClientSession, wire: Tap, elicit: dict[str, Any]) -> None:
        self.session = session
        self.wire = wire
        self.elicit = elicit  # {"answer": ..., "content": ...}; shared with the callback
        self.elicitations: list[dict[str, Any]] = []

    async def call(self, name: str, arguments: Any, timeout_s: float, progress: list | None = None) -> dict:
        out: dict[str, Any] = {"name": name}
        start = time.monotonic()
        cb = None
        if progress is not None:
            async def cb(p: float, t: float | None, m: str | None) -> None:
                progress.append({"progress": p, "total": t, "message": m})
        try:
            # fail_after cancels the SDK call; the SDK then sends notifications/cancelled itself.
            with anyio.fail_after(timeout_s):
                result = await self.session.call_tool(name, arguments or {}, progress_callback=cb)
            out["result"] = dump(result)
        except Exception as exc:
            out.update(exc_fields(exc))
        out["elapsed_ms"] = round((time.monotonic() - start) * 1000, 1)
        if progress is not None:
            out["progress"] = progress
        return out

    async def cancel(self, step: dict) -> dict:
        name, args = step["name"], step.get("arguments") or {}
        n_calls, n_cancels = len(self.wire.calls), len(self.wire.cancels)
        box: dict[str, Any] = {}
        start = time.monotonic()
        with anyio.fail_after(float(step.get("timeout_s", 30))):
            async with anyio.create_task_group() as tg:
                scope = anyio.CancelScope()

                async def run() -> None:
                    with scope:
                        try:
                            box["result"] = dump(await self.session.call_tool(name, args))
                        except Exception as exc:
                            box.update(exc_fields(exc))

                tg.start_soon(run)
                await anyio.sleep(float(step.get("cancel_after_s", 0.5)))
                # Cancelling the awaiting task is all it takes: the SDK (2.x dispatcher,
                # "courtesy cancel") writes notifications/cancelled for the request id, shielded.
                scope.cancel()
        ids = [rid for rid, n in self.wire.calls[n_calls:] if n == name]
        sent = [c for c in self.wire.cancels[n_cancels:] if ids and c.get("requestId") == ids[0]]
        if scope.cancelled_caught:
            outcome = "cancelled"
        elif "result" in box:
            outcome = "completed_before_cancel"
        else:
            outcome = "error_before_cancel"
        out = {"name": name, "request_id": ids[0] if ids else None, "sent_cancel": bool(sent),
               "outcome": outcome, "elapsed_ms": round((time.monotonic() - start) * 1000, 1)}
        if sent:
            out["cancel_params"] = sent[0]
        out.update(box)
        return out

    async def parallel(self, step: dict) -> dict:
        calls = step.get("calls") or []
        timeout_s = float(step.get("timeout_s", 30))
        results: list[Any] = [None] * len(calls)
        start = time.monotonic()

        async def one(i: int, c: dict) -> None:
            results[i] = await self.call(c["name"], c.get("arguments"), timeout_s)

        async with anyio.create_task_group() as tg:
            for i, c in enumerate(calls):
                tg.start_soon(one, i, c)
        return {"results": results, "elapsed_ms": round((time.monotonic() - start) * 1000, 1)}

    async def list_tools(self, step: dict) -> dict:
        tools: list[Any] = []
        cursor = None
        with anyio.fail_after(float(step.get("timeout_s", 30))):
            while True:  # follow pagination
                params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                res = await self.session.list_tools(params=params)
                tools += [dump(t) for t in res.tools]
                cursor = res.next_cursor if hasattr(res, "next_cursor") else res.nextCursor
                if not cursor:
                    return {"tools": tools}

    async def run_step(self, step: dict) -> dict:
        op = step.get("op")
        timeout_s = float(step.get("timeout_s", 30))
        if op == "list":
            out = await self.list_tools(step)
        elif op in ("call", "call_progress"):
            progress = [] if op == "call_progress" else None
            out = await self.call(step["name"], step.get("arguments"), timeout_s, progress)
        elif op == "cancel":
            out = await self.cancel(step)
        elif op == "parallel":
            out = await self.parallel(step)
        elif op == "elicitation":
            self.elicit["answer"] = step.get("answer", "decline")
            self.elicit["content"] = step.get("content")
            out = {"configured": {"answer": self.elicit["answer"], "content": self.elicit["content"]},
                   "capability_advertised": self.elicit["advertised"]}
        elif op == "sleep":
            await anyio.sleep(float(step.get("seconds", 0)))
            out = {"seconds": step.get("seconds", 0)}
        else:
            raise ValueError(f"unknown op {op!r}")
        if op in CALL_OPS:
            out["elicitations"], self.elicitations = self.elicitations, []
        return {"step": op, **out}


@asynccontextmanager
async def connect(command: list[str] | None, url: str | None, headers: dict[str, str]) -> Any:
    """Yields (read, write) streams for stdio (command) or streamable HTTP (url)."""
    if url is None:
        # env=os.environ: the SDK otherwise passes only HOME/LOGNAME/PATH/SHELL/TERM/USER.
        params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            yield read, write
        return
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    # Client-level headers ride on every POST/GET/DELETE the transport makes.
    async with create_mcp_http_client(headers=headers) as http, \
            streamable_http_client(url, http_client=http) as streams:
        yield streams[0], streams[1]  # 1.x yields a third item (get_session_id)


async def main(steps_path: str, command: list[str] | None, url: str | None = None,
               headers: dict[str, str] | None = None) -> int:
    with open(steps_path) as f:
        spec = json.load(f)
    steps = spec["steps"] if isinstance(spec, dict) else spec
    top = spec.get("elicitation") if isinstance(spec, dict) else None
    advertise = top is not None or any(isinstance(s, dict) and s.get("op") == "elicitation" for s in steps)
    elicit: dict[str, Any] = {"answer": top or "decline", "advertised": advertise,
                              "content": spec.get("content") if isinstance(spec, dict) else None}
    driver: Driver | None = None

    async def on_elicit(context: Any, params: Any) -> Any:
        assert driver is not None
        rec = dump(params)
        driver.elicitations.append({k: rec.get(k) for k in ("mode", "message", "requestedSchema", "url") if k in rec})
        answer = elicit["answer"]
        content = (elicit["content"] or {}) if answer == "accept" else None
        return types.ElicitResult(action=answer, content=content)

    async with connect(command, url, headers or {}) as (read, write):
        wire = Tap(write, "out")
        # elicitation_callback=None => the SDK does not advertise the capability.
        async with ClientSession(Tap(read, "in"), wire, elicitation_callback=on_elicit if advertise else None,
                                 client_info=types.Implementation(name="janua-mcp-test-client", version="1")) as session:
            driver = Driver(session, wire, elicit)
            try:
                with anyio.fail_after(30):
                    init = await session.initialize()
                emit({"step": "initialize", **dump(init)})
            except Exception as exc:
                emit({"step": "initialize", **exc_fields(exc)})
                return 1
            for step in steps:
                op = step.get("op") if isinstance(step, dict) else None
                try:
                    emit(await driver.run_step(step))
                except Exception as exc:
                    emit({"step": op, **exc_fields(exc)})
    return 0


if __name__ == "__main__":
    argv = sys.argv[1:]
    command, url, headers = None, None, {}
    if len(argv) >= 3 and argv[1] == "--":
        command = argv[2:]
    elif len(argv) >= 3 and argv[1] == "--http" and len(argv) % 2 == 1:
        url = argv[2]
        for flag, value in zip(argv[3::2], argv[4::2]):
            name, sep, val = value.partition(":")
            if flag != "--header" or not sep or not name.strip():
                url = None
                break
            headers[name.strip()] = val.strip()
    if command is None and url is None:
        sys.stderr.write(__doc__)
        sys.exit(2)
    try:
        sys.exit(anyio.run(main, argv[0], command, url, headers))
    except Exception as exc:  # e.g. spawn failure, unreadable steps file, transport crash
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        emit({"step": "fatal", **exc_fields(exc)})
        sys.exit(1)
