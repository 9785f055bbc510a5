#!/usr/bin/env python3
"""A scripted agent runner for janua's tests (docs/DELEGATION.md): no model, a fixed plan.

It reads the agent_request line and echoes what it saw in its final result. Plan:
  1. Read the file named in the prompt (`read:<path>`),
  2. call Glob (the tests leave it out of the sub-session, so it must come back unknown_tool),
  3. answer with a JSON summary of the request and of both results.
A prompt of `crash` exits without a result; `garbage` writes a line that is not JSON.
"""
import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def receive():
    line = sys.stdin.readline()
    if not line:
        sys.exit(3)
    return json.loads(line)


request = receive()
prompt = request.get("prompt", "")
if prompt == "crash":
    sys.stderr.write("runner: giving up on purpose\n")
    sys.exit(1)
if prompt == "garbage":
    sys.stdout.write("this is not json\n")
    sys.stdout.flush()
    sys.exit(0)

results = {}
if prompt.startswith("read:"):
    # The runner itself must not read the workspace: files reach it only through tool calls,
    # which the sub-session's rules decide.
    try:
        with open(prompt[5:]) as direct:
            results["direct"] = "read: " + direct.read()
    except OSError as error:
        results["direct"] = "denied: " + type(error).__name__
    send({"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": prompt[5:]}})
    results["read"] = receive()
send({"type": "tool_use", "id": "r2", "name": "Glob", "input": {"pattern": "*"}})
results["glob"] = receive()
send({
    "type": "result",
    "result": json.dumps({
        "agent_id": request.get("agent_id"),
        "parent_tool_use_id": request.get("parent_tool_use_id"),
        "subagent_type": request.get("subagent_type"),
        "tools": sorted(tool["name"] for tool in request.get("tools", [])),
        "read": results.get("read"),
        "direct": results.get("direct"),
        "glob": results.get("glob"),
    }),
})
