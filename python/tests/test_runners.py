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
        (directory / "script.json").write_text(json.dumps([{"tool_use": {"name": name, "input": tool_input}}
                                                           for name, tool_input in CALLS]))
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


def janua_run_results(workspace: pathlib.Path, ids: list[str]) -> dict[str, dict]:
    """The tool_result blocks `janua run` itself writes for CALLS under `ids`."""
    lines = "".join(json.dumps({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}) + "\n"
                    for tool_id, (name, tool_input) in zip(ids, CALLS))
    out = subprocess.run([os.environ["JANUA_BIN"], "--cwd", str(workspace), *RULES, "--session", "raw", "run"],
                         input=lines, capture_output=True, text=True, check=True).stdout
    blocks = [block for message in map(json.loads, out.splitlines()) if message["type"] == "user"
              for block in message["message"]["content"]]
    return {block["tool_use_id"]: block for block in blocks}


def session(workspace: pathlib.Path, name: str) -> janua.Session:
    return janua.Session(workspace, allowed_tools=["Read"], disallowed_tools=["Bash(curl:*)"],
                         extra_args=["--session", name])


def test_the_anthropic_tool_runner_sends_janua_runs_tool_results(model_api, workspace):
    async def main():
        async with session(workspace, "anthropic") as janua_session:
            tools = janua_session.anthropic_tools()
            client = anthropic.AsyncAnthropic(base_url=model_api.url, api_key="stub", max_retries=0)
            runner = client.beta.messages.tool_runner(
                model="claude-stub", max_tokens=256, tools=tools,
                messages=[{"role": "user", "content": "Look around."}],
            )
            return await runner.until_done()

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
    set_tracing_disabled(True)

    async def main():
        async with session(workspace, "openai") as janua_session:
            client = openai.AsyncOpenAI(base_url=model_api.url + "/v1", api_key="stub", max_retries=0)
            agent = Agent(
                name="janua-test", instructions="Use the tools.",
                model=OpenAIChatCompletionsModel(model="gpt-stub", openai_client=client),
                tools=janua_session.openai_tools(),
            )
            return await Runner.run(agent, "Look around.", max_turns=len(CALLS) + 2)

    result = asyncio.run(main())
    assert result.final_output == "done"
    requests = model_api.requests("/v1/chat/completions")
    assert len(requests) == len(CALLS) + 1
    offered = sorted(tool["function"]["name"] for tool in requests[0]["tools"])
    assert "Read" in offered and "Bash" in offered

    ids = [f"call_stub_{n}" for n in range(len(CALLS))]
    expected = janua_run_results(workspace, ids)
    sent = [message for message in requests[-1]["messages"] if message["role"] == "tool"]
    assert [message["tool_call_id"] for message in sent] == ids
    for message in sent:
        # A function output has no error flag: the content is janua's, byte for byte.
        assert message["content"] == expected[message["tool_call_id"]]["content"]
    assert sent[1]["content"].startswith("permission_denied:")
    assert sent[2]["content"].startswith("invalid_input:")
