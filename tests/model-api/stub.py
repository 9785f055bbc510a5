#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API and the OpenAI Chat Completions API, for
driving real agent clients offline (Claude Code, the anthropic SDK's tool runner, the OpenAI
Agents SDK's runner).

Usage: stub.py SCRIPT LOG PORT_FILE

SCRIPT is a file holding a JSON list of turns, read again for each request; turn N is what the
"model" answers once the conversation holds N assistant messages: {"tool_use": {"name": ...,
"input": {...}}}, several calls at once as {"tool_uses": [{"name": ..., "input": ...}, ...]}, or
{"text": "..."}. Past the script, and for side requests that offer no tools,
it answers "done". Every request is appended to LOG as one JSON line {"path", "body"}. The chosen
port is written to PORT_FILE.

Served: POST /v1/messages (streamed as server-sent events when the request asks for a stream),
/v1/messages/count_tokens, and POST /v1/chat/completions (unstreamed). A tool call's id is
"toolu_stub_N" (Messages) or "call_stub_N" (Chat Completions) for turn N ("..._N_K" for the K-th
of several), and the Messages reply's
id "msg_stub_N": a request continuing a server-side thread from it gets turn N+1.
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT_FILE = sys.argv[1]
LOG = sys.argv[2]


def next_turn(body):
    """The scripted turn for this request (read per request, so one stub serves a whole test)."""
    thread = body.get("thread") or {}
    if thread.get("type") == "continue":
        # A server-side thread (the anthropic SDK's default): the request holds only the new
        # messages, and the tools stay those the thread was created with.
        previous = str(thread.get("previous_message_id", ""))
        index = int(previous.rsplit("_", 1)[1]) + 1 if previous.startswith("msg_stub_") else 0
        offers_tools = True
    else:
        index = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        offers_tools = "tools" in body
    with open(SCRIPT_FILE) as script_file:
        script = json.load(script_file)
    if offers_tools and index < len(script):
        return dict(script[index], index=index)
    return {"text": "done", "index": index}


def calls(turn, prefix):
    """The turn's tool calls as (id, name, input)."""
    if "tool_use" in turn:
        return [("%s_%d" % (prefix, turn["index"]), turn["tool_use"]["name"], turn["tool_use"]["input"])]
    return [("%s_%d_%d" % (prefix, turn["index"], k), call["name"], call["input"])
            for k, call in enumerate(turn.get("tool_uses", []))]


def message_events(turn, model):
    message = {"id": "msg_stub_%d" % turn["index"], "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": message}
    tool_calls = calls(turn, "toolu_stub")
    for index, (call_id, name, tool_input) in enumerate(tool_calls):
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}
        yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                      "delta": {"type": "input_json_delta", "partial_json": json.dumps(tool_input)}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    if tool_calls:
        stop = "tool_use"
    else:
        yield "content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": {"type": "text", "text": ""}}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": turn.get("text", "done")}}
        yield "content_block_stop", {"type": "content_block_stop", "index": 0}
        stop = "end_turn"
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


def message(turn, model):
    content = [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
               for call_id, name, tool_input in calls(turn, "toolu_stub")]
    stop = "tool_use" if content else "end_turn"
    if not content:
        content = [{"type": "text", "text": turn.get("text", "done")}]
    return {"id": "msg_stub_%d" % turn["index"], "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop,
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


def chat_completion(turn, model):
    tool_calls = [{"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(tool_input)}}
                  for call_id, name, tool_input in calls(turn, "call_stub")]
    if tool_calls:
        reply = {"role": "assistant", "content": None, "tool_calls": tool_calls}
        finish = "tool_calls"
    else:
        reply = {"role": "assistant", "content": turn.get("text", "done")}
        finish = "stop"
    return {"id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": reply, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, value):
        reply = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        with open(LOG, "a") as log:
            log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        model = body.get("model", "stub")
        if self.path.startswith("/v1/chat/completions"):
            self.send_json(chat_completion(next_turn(body), model))
            return
        if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count_tokens"):
            self.send_json({"input_tokens": 10})
            return
        turn = next_turn(body)
        if not body.get("stream"):
            self.send_json(message(turn, model))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in message_events(turn, model):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
        self.wfile.flush()
        self.close_connection = True


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[3] + ".tmp", "w") as port_file:
    port_file.write(str(server.server_address[1]))
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
server.serve_forever()
