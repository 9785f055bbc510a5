#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code CLI offline.

Usage: stub.py SCRIPT LOG PORT_FILE

SCRIPT is a file holding a JSON list of turns, read again for each request; turn N is what the "model" answers once the conversation holds N
assistant messages: {"tool_use": {"name": ..., "input": {...}}} or {"text": "..."}. Past the script
it answers "done". Every request body is appended to LOG as one JSON line. The chosen port is
written to PORT_FILE. Only POST /v1/messages is served, streamed as server-sent events.
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT_FILE = sys.argv[1]
LOG = sys.argv[2]


def events(turn, model):
    message = {"id": "msg_stub", "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": message}
    if "tool_use" in turn:
        block = {"type": "tool_use", "id": "toolu_stub_%d" % turn["index"],
                 "name": turn["tool_use"]["name"], "input": {}}
        yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "input_json_delta",
                                                "partial_json": json.dumps(turn["tool_use"]["input"])}}
        stop = "tool_use"
    else:
        yield "content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": {"type": "text", "text": ""}}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": turn.get("text", "done")}}
        stop = "end_turn"
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


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
        if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count_tokens"):
            self.send_json({"input_tokens": 10})
            return
        assistants = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        # Read per request, so one stub serves every case of a test.
        with open(SCRIPT_FILE) as script_file:
            SCRIPT = json.load(script_file)
        # Side requests (no tools) get plain text, never a scripted tool call.
        if "tools" in body and assistants < len(SCRIPT):
            turn = dict(SCRIPT[assistants], index=assistants)
        else:
            turn = {"text": "done", "index": assistants}
        model = body.get("model", "claude-stub")
        if not body.get("stream"):
            content = ([{"type": "tool_use", "id": "toolu_stub_%d" % turn["index"],
                         "name": turn["tool_use"]["name"], "input": turn["tool_use"]["input"]}]
                       if "tool_use" in turn else [{"type": "text", "text": turn.get("text", "done")}])
            self.send_json({"id": "msg_stub", "type": "message", "role": "assistant", "model": model,
                            "content": content,
                            "stop_reason": "tool_use" if "tool_use" in turn else "end_turn",
                            "stop_sequence": None,
                            "usage": {"input_tokens": 10, "output_tokens": 5}})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events(turn, model):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
        self.wfile.flush()
        self.close_connection = True


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[3] + ".tmp", "w") as port_file:
    port_file.write(str(server.server_address[1]))
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
server.serve_forever()
