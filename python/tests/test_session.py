"""The `janua` package against the real `janua` binary (JANUA_BIN) in temporary workspaces."""

import asyncio
import json
import os
import subprocess

import pytest

import janua


def run(coroutine):
    return asyncio.run(coroutine)


def test_read_returns_the_tool_result_janua_run_writes(tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "notes.txt"}}

    async def main():
        async with janua.Session(tmp_path, allowed_tools=["Read"], extra_args=["--session", "py"]) as session:
            assert any(tool["name"] == "Read" for tool in session.init["tools"])
            return await session.dispatch(call)

    result = run(main())
    assert result["type"] == "tool_result" and result["tool_use_id"] == "t1"
    assert "beta" in json.dumps(result["content"])
    # Byte for byte what `janua run` itself writes for the same call.
    line = json.dumps(call) + "\n"
    out = subprocess.run(
        [os.environ["JANUA_BIN"], "--cwd", str(tmp_path), "--allowedTools", "Read", "--session", "raw", "run"],
        input=line, capture_output=True, text=True, check=True,
    ).stdout
    users = [json.loads(l) for l in out.splitlines() if json.loads(l)["type"] == "user"]
    assert users[0]["message"]["content"][0] == result


def test_an_ask_without_a_callback_is_a_denial_naming_what_would_allow_it(tmp_path):
    call = {"type": "tool_use", "id": "w1", "name": "Write",
            "input": {"file_path": "made.txt", "content": "x"}}

    async def main():
        async with janua.Session(tmp_path) as session:
            return await session.dispatch(call)

    result = run(main())
    assert result["is_error"] is True
    text = json.dumps(result["content"])
    assert "allowed_tools" in text and "Write" in text, text
    assert not (tmp_path / "made.txt").exists()


def test_the_callback_decides_and_may_be_async(tmp_path):
    asked = []

    async def can_use_tool(tool, tool_input, reason, suggestions):
        # janua asks with the path made absolute, as Claude Code's hooks see it.
        name = os.path.basename(tool_input["file_path"])
        asked.append((tool, name))
        return name == "yes.txt"

    calls = [{"type": "tool_use", "id": f"w{n}", "name": "Write",
              "input": {"file_path": name, "content": "x"}} for n, name in enumerate(["yes.txt", "no.txt"])]

    async def main():
        async with janua.Session(tmp_path, can_use_tool=can_use_tool) as session:
            return [await session.dispatch(call) for call in calls]

    yes, no = run(main())
    assert not yes.get("is_error") and (tmp_path / "yes.txt").read_text() == "x"
    assert no["is_error"] is True and not (tmp_path / "no.txt").exists()
    assert asked == [("Write", "yes.txt"), ("Write", "no.txt")]


def test_cancelling_the_awaiting_task_cancels_the_call(tmp_path):
    call = {"type": "tool_use", "id": "slow", "name": "Bash", "input": {"command": "sleep 30; touch late"}}

    async def main():
        async with janua.Session(tmp_path, allowed_tools=["Bash"],
                                 extra_args=["--unsandboxed-process"]) as session:
            task = asyncio.create_task(session.dispatch(call))
            await asyncio.sleep(1.0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            started = asyncio.get_running_loop().time()
            # The session goes on: the next call is answered at once.
            quick = await session.dispatch({"type": "tool_use", "id": "q", "name": "Bash",
                                            "input": {"command": "echo fine"}})
            return quick, asyncio.get_running_loop().time() - started

    quick, waited = run(main())
    assert "fine" in json.dumps(quick["content"])
    assert waited < 20, f"the cancelled call was not cancelled ({waited:.1f} s)"
    assert not (tmp_path / "late").exists()


def test_a_missing_binary_is_a_clear_error(tmp_path):
    with pytest.raises(janua.JanuaError, match="cannot start"):
        run(janua.Session(tmp_path, janua=str(tmp_path / "no-janua")).start())


def test_mcp_stdio_names_the_same_session(tmp_path):
    params = janua.Session(tmp_path, allowed_tools=["Read"]).mcp_stdio()
    assert params["command"] == os.environ["JANUA_BIN"]
    assert params["args"][-2:] == ["mcp", "serve"] and "--allowedTools" in params["args"]


def test_a_batch_that_asks_to_stop_sets_stop_reason(tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\n")
    settings = {"hooks": {"PostToolUse": [{"matcher": "Read", "hooks": [
        {"type": "command", "command": "echo '{\"continue\": false, \"stopReason\": \"halt now\"}'"}]}]}}

    async def main():
        async with janua.Session(tmp_path, allowed_tools=["Read"], settings=settings) as session:
            result = await session.dispatch({"id": "r", "name": "Read", "input": {"file_path": "notes.txt"}})
            return result, session.stop_reason

    result, stop_reason = run(main())
    assert "alpha" in json.dumps(result["content"])
    assert stop_reason is not None and "halt now" in stop_reason


def test_a_repeated_id_is_an_error_not_a_call_left_unanswered(tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\n")
    read = {"id": "same", "name": "Read", "input": {"file_path": "notes.txt"}}

    async def main():
        async with janua.Session(tmp_path, allowed_tools=["Read"]) as session:
            with pytest.raises(janua.JanuaError, match="unique"):
                await asyncio.wait_for(session.dispatch_batch([read, read]), 30)
            # The session goes on, and the id is free again.
            return await asyncio.wait_for(session.dispatch(read), 30)

    assert "alpha" in json.dumps(run(main())["content"])
