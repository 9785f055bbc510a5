"""The adapters driven by the real agent SDK runners (anthropic's tool runner, the OpenAI Agents SDK's
Runner) against a scripted model API stub on loopback (tests/model-api/stub.py): what the runner
sends back to the model is janua run's tool_result, byte for byte."""

import asyncio
import json
import os
import pathlib
import subprocess
import sys
import time

import anthropic
import openai
import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled

import janua

STUB = pathlib.Path(__file__).resolve().parents[2] / "tests" / "model-api" / "stub.py"

# What the scripted model calls, in order: an allowed call, a call a deny rule stops, a call
# whose input breaks the tool's schema.
CALLS = [
    ("Read", {"file_path": "notes.txt"}),
    ("Bash", {"command": "curl http://127.0.0.1:9/"}),
    ("Read", {}),
]
RULES = ["--allowedTools", "Read", "--disallowedTools", "Bash(curl:*)"]


class ModelApi:
    """The stub, serving `script.json` and logging each request to `log.jsonl` in `directory`."""

    def __init__(self, directory: pathlib.Path) -> None:
        self.directory = directory
        self.script([{"tool_use": {"name": name, "input": tool_input}} for name, tool_input in CALLS])
        port_file = directory / "port"
        self.process = subprocess.Popen(
            [sys.executable, str(STUB), str(directory / "script.json"), str(directory / "log.jsonl"), str(port_file)],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while not port_file.exists():
            assert self.process.poll() is None and time.monotonic() < deadline, "the stub did not start"
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{port_file.read_text().strip()}"

    def script(self, turns: list[dict]) -> None:
        """What the model answers, turn by turn."""
        (self.directory / "script.json").write_text(json.dumps(turns))

    def requests(self, path: str) -> list[dict]:
        lines = (self.directory / "log.jsonl").read_text().splitlines()
        return [entry["body"] for entry in map(json.loads, lines) if entry["path"].startswith(path)]

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def model_api(tmp_path):
    directory = tmp_path / "stub"
    directory.mkdir()
    api = ModelApi(directory)
    yield api
    api.stop()


@pytest.fixture
def workspace(tmp_path):
    directory = tmp_path / "work"
    directory.mkdir()
    (directory / "notes.txt").write_text("alpha\nbeta\n")
    return directory


def janua_run_results(workspace: pathlib.Path, ids: list[str], calls=CALLS, batched=False,
                      run_args=()) -> dict[str, dict]:
    """The tool_result blocks `janua run` itself writes for `calls` under `ids`: one batch each,
    or all in one when `batched`."""
    uses = [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
            for tool_id, (name, tool_input) in zip(ids, calls)]
    lines = [json.dumps({"type": "assistant", "message": {"role": "assistant", "content": uses}})] if batched \
        else [json.dumps(use) for use in uses]
    out = subprocess.run([os.environ["JANUA_BIN"], "--cwd", str(workspace), *RULES, "--session", "raw", "run",
                          *run_args], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True).stdout
    blocks = [block for message in map(json.loads, out.splitlines()) if message["type"] == "user"
              for block in message["message"]["content"]]
    return {block["tool_use_id"]: block for block in blocks}


def session(workspace: pathlib.Path, name: str, **options) -> janua.Session:
    return janua.Session(workspace, allowed_tools=["Read"], disallowed_tools=["Bash(curl:*)"],
                         extra_args=["--session", name], **options)


# A PostToolUse hook asking the agent loop to stop, as Claude Code's `continue: false`.
STOP_SETTINGS = {"hooks": {"PostToolUse": [{"matcher": "Read", "hooks": [
    {"type": "command", "command": "echo '{\"continue\": false, \"stopReason\": \"halt now\"}'"}]}]}}


def anthropic_run(model_api, janua_session):
    client = anthropic.AsyncAnthropic(base_url=model_api.url, api_key="stub", max_retries=0)
    runner = client.beta.messages.tool_runner(
        model="claude-stub", max_tokens=256, tools=janua_session.anthropic_tools(),
        messages=[{"role": "user", "content": "Look around."}],
    )
    return runner.until_done()


def openai_run(model_api, janua_session, max_turns=len(CALLS) + 2):
    set_tracing_disabled(True)
    client = openai.AsyncOpenAI(base_url=model_api.url + "/v1", api_key="stub", max_retries=0)
    agent = Agent(
        name="janua-test", instructions="Use the tools.",
        model=OpenAIChatCompletionsModel(model="gpt-stub", openai_client=client),
        tools=janua_session.openai_tools(),
    )
    return Runner.run(agent, "Look around.", max_turns=max_turns)


def test_the_anthropic_tool_runner_sends_janua_runs_tool_results(model_api, workspace):
    async def main():
        async with session(workspace, "anthropic") as janua_session:
            return await anthropic_run(model_api, janua_session)

    final = asyncio.run(main())
    assert final.content[0].text == "done"
    requests = model_api.requests("/v1/messages")
    assert len(requests) == len(CALLS) + 1
    # The model is offered janua's registry, as `janua tools --format anthropic` lists it.
    listed = subprocess.run([os.environ["JANUA_BIN"], "--cwd", str(workspace), *RULES, "tools", "--format",
                             "anthropic"], capture_output=True, text=True, check=True).stdout
    assert requests[0]["tools"] == json.loads(listed)

    ids = [f"toolu_stub_{n}" for n in range(len(CALLS))]
    expected = janua_run_results(workspace, ids)
    # Each request continuing the runner's thread carries only the new tool_result blocks.
    sent = [block for request in requests for message in request["messages"] if message["role"] == "user"
            and isinstance(message["content"], list) for block in message["content"]]
    assert [block["tool_use_id"] for block in sent] == ids
    for block in sent:
        want = dict(expected[block["tool_use_id"]])
        # The Messages API reads a missing is_error as false; the runner writes it only when true.
        if want["is_error"] is False:
            del want["is_error"]
        assert block == want
        assert json.dumps(block["content"]) == json.dumps(want["content"])
    read, denied, invalid = sent
    assert "beta" in read["content"] and "is_error" not in read
    assert denied["is_error"] is True and denied["content"].startswith("permission_denied:")
    assert invalid["is_error"] is True and invalid["content"].startswith("invalid_input:")


def test_the_openai_agents_runner_sends_janua_runs_tool_results(model_api, workspace):
    async def main():
        async with session(workspace, "openai") as janua_session:
            return await openai_run(model_api, janua_session)

    result = asyncio.run(main())
    assert result.final_output == "done"
    requests = model_api.requests("/v1/chat/completions")
    assert len(requests) == len(CALLS) + 1
    # The model is offered janua's registry, as `janua tools --format openai` lists it.
    listed = subprocess.run([os.environ["JANUA_BIN"], "--cwd", str(workspace), *RULES, "tools", "--format",
                             "openai"], capture_output=True, text=True, check=True).stdout
    offered = {tool["function"]["name"]: tool["function"] for tool in requests[0]["tools"]}
    assert sorted(offered) == sorted(entry["function"]["name"] for entry in json.loads(listed))
    for entry in json.loads(listed):
        function = offered[entry["function"]["name"]]
        assert (function["description"], function["parameters"]) == \
            (entry["function"]["description"], entry["function"]["parameters"])

    ids = [f"call_stub_{n}" for n in range(len(CALLS))]
    expected = janua_run_results(workspace, ids)
    sent = [message for message in requests[-1]["messages"] if message["role"] == "tool"]
    assert [message["tool_call_id"] for message in sent] == ids
    for message in sent:
        # A function output has no error flag: the content is janua's, byte for byte.
        assert message["content"] == expected[message["tool_call_id"]]["content"]
    assert sent[1]["content"].startswith("permission_denied:")
    assert sent[2]["content"].startswith("invalid_input:")


# Two reads whose results each fit a 1,000-token batch budget, but not together: in one batch
# (as `janua run` gets a reply) the second is saved to a file.
TWO_READS = [("Read", {"file_path": "one.txt"}), ("Read", {"file_path": "two.txt"})]
BUDGET = ["--batch-token-budget", "1000"]


def two_reads(model_api, workspace):
    for name in ("one.txt", "two.txt"):
        (workspace / name).write_text(("x" * 99 + "\n") * 24)
    model_api.script([{"tool_uses": [{"name": name, "input": tool_input} for name, tool_input in TWO_READS]}])


def test_a_replys_calls_reach_janua_as_one_batch(model_api, workspace):
    two_reads(model_api, workspace)
    calls, budget = TWO_READS, BUDGET

    async def main():
        async with session(workspace, "batched", run_args=budget) as janua_session:
            return await openai_run(model_api, janua_session)

    assert asyncio.run(main()).final_output == "done"
    sent = [message for message in model_api.requests("/v1/chat/completions")[-1]["messages"]
            if message["role"] == "tool"]
    ids = ["call_stub_0_0", "call_stub_0_1"]
    assert [message["tool_call_id"] for message in sent] == ids
    expected = janua_run_results(workspace, ids, calls, batched=True, run_args=budget)
    assert sent[0]["content"] == expected[ids[0]]["content"] and "x" * 99 in sent[0]["content"]
    for text in (sent[1]["content"], expected[ids[1]]["content"]):
        assert "saved to" in text and "x" * 99 not in text, text


def test_a_messages_api_reply_dispatched_whole_is_janua_runs_batch(model_api, workspace):
    # A loop of one's own on the Messages API: the reply's tool_use blocks, as the SDK returns
    # them, go to janua as one batch.
    two_reads(model_api, workspace)

    async def main():
        async with session(workspace, "reply", run_args=BUDGET) as janua_session:
            client = anthropic.AsyncAnthropic(base_url=model_api.url, api_key="stub", max_retries=0)
            reply = await client.messages.create(
                model="claude-stub", max_tokens=256, tools=janua_session.tool_definitions("anthropic"),
                messages=[{"role": "user", "content": "Read both."}],
            )
            return await janua_session.dispatch_batch([block for block in reply.content if block.type == "tool_use"])

    results = asyncio.run(main())
    ids = ["toolu_stub_0_0", "toolu_stub_0_1"]
    expected = janua_run_results(workspace, ids, TWO_READS, batched=True, run_args=BUDGET)
    assert [result["tool_use_id"] for result in results] == ids
    assert results[0] == expected[ids[0]] and "x" * 99 in results[0]["content"]
    for text in (results[1]["content"], expected[ids[1]]["content"]):
        assert "saved to" in text and "x" * 99 not in text, text


@pytest.mark.parametrize("runner", ["anthropic", "openai"])
def test_a_hooks_stop_ends_the_run(model_api, workspace, runner):
    async def main():
        async with session(workspace, f"stop-{runner}", settings=STOP_SETTINGS) as janua_session:
            run = anthropic_run if runner == "anthropic" else openai_run
            with pytest.raises(janua.RunStopped) as stopped:
                await run(model_api, janua_session)
            return stopped.value

    stopped = asyncio.run(main())
    assert "halt now" in stopped.reason
    assert "beta" in json.dumps(stopped.result["content"])
    # The model was asked once: nothing ran after the stop.
    requests = model_api.requests("/v1/messages" if runner == "anthropic" else "/v1/chat/completions")
    assert len(requests) == 1


def test_a_runners_tool_timeout_cancels_the_call_in_janua(model_api, workspace):
    model_api.script([{"tool_use": {"name": "Bash", "input": {"command": "sleep 30; touch late"}}}])

    async def main():
        async with janua.Session(workspace, allowed_tools=["Bash"], extra_args=["--unsandboxed-process"]) as janua_session:
            set_tracing_disabled(True)
            tools = janua_session.openai_tools()
            for tool in tools:
                tool.timeout_seconds = 1.0  # the Agents SDK's own per-call timeout
            client = openai.AsyncOpenAI(base_url=model_api.url + "/v1", api_key="stub", max_retries=0)
            agent = Agent(name="janua-test", model=OpenAIChatCompletionsModel(model="gpt-stub", openai_client=client),
                          tools=tools)
            started = time.monotonic()
            result = await Runner.run(agent, "Wait.", max_turns=3)
            # The session goes on, and the cancelled command is gone from it.
            quick = await janua_session.dispatch({"id": "q", "name": "Bash", "input": {"command": "echo fine"}})
            return result, quick, time.monotonic() - started

    result, quick, waited = asyncio.run(main())
    assert result.final_output == "done"
    assert "fine" in json.dumps(quick["content"])
    assert waited < 20, f"the timed-out call was not cancelled ({waited:.1f} s)"
    sent = [message for message in model_api.requests("/v1/chat/completions")[-1]["messages"]
            if message["role"] == "tool"]
    assert "timed out" in sent[0]["content"], sent
    assert not (workspace / "late").exists()
