"""A hostile MCP stdio server for janua's client tests: python3 hostile_server.py MODE.

Modes (each misbehaves in one way; everything else is a plain, correct server with one tool
`ok` that answers "fine"):
  silent        never answers initialize
  garbage       sends non-JSON lines and stray responses before every answer
  huge_line     answers tools/call with a single 80 MiB line
  flood         answers tools/call by sending 100,000 ping requests and never reading again
  bad_tools     lists tools with broken schemas, 2,000 tools, names that collide once sanitized,
                control characters and an over-long name (plus the good `ok`)
  crash_on_call exits in the middle of every tools/call
  stderr_flood  writes 50 MiB to stderr on every call, then answers
  wrong_version answers initialize with protocol version 1999-01-01
  probe         answers tools/call with what it could do to each later argument, one line each:
                stat:PATH, kill:PID (signal 0), write:PATH (open for appending); "ok" or the errno
"""

import errno
import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "plain"
OUT = sys.stdout


def send(message):
    OUT.write(json.dumps(message) + "\n")
    OUT.flush()


def result(request, value):
    send({"jsonrpc": "2.0", "id": request["id"], "result": value})


OK_TOOL = {"name": "ok", "description": "Answers fine", "inputSchema": {"type": "object"}}


def tools():
    if MODE != "bad_tools":
        return [OK_TOOL]
    listed = [OK_TOOL]
    listed.append({"name": "no_schema"})
    listed.append({"name": "string_schema", "inputSchema": {"type": "string"}})
    listed.append({"name": "broken_schema", "inputSchema": {"type": "object", "properties": 5}})
    listed.append({"name": "a.b", "inputSchema": {"type": "object"}})
    listed.append({"name": "a/b", "inputSchema": {"type": "object"}})
    listed.append({"name": "ctl\u0007\n", "inputSchema": {"type": "object"}})
    listed.append({"name": "x" * 300, "inputSchema": {"type": "object"}})
    listed.extend(
        {"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(2000)
    )
    return listed


def probe(targets):
    lines = []
    for target in targets:
        kind, _, value = target.partition(":")
        try:
            if kind == "stat":
                os.stat(value)
            elif kind == "kill":
                os.kill(int(value), 0)
            elif kind == "write":
                open(value, "a").close()
            lines.append(f"{target} ok")
        except OSError as error:
            lines.append(f"{target} {errno.errorcode.get(error.errno, error.errno)}")
    return "\n".join(lines)


def main():
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        method = request.get("method")
        if "id" not in request:
            continue
        if MODE == "garbage":
            OUT.write("this is not json\n{\"half\": \n")
            send({"jsonrpc": "2.0", "id": 99999, "result": {}})
            OUT.flush()
        if method == "initialize":
            if MODE == "silent":
                continue
            version = "1999-01-01" if MODE == "wrong_version" else "2025-06-18"
            result(request, {"protocolVersion": version, "capabilities": {"tools": {}},
                             "serverInfo": {"name": "hostile", "version": "0"}})
        elif method == "tools/list":
            result(request, {"tools": tools()})
        elif method == "tools/call":
            if MODE == "huge_line":
                text = "h" * (80 << 20)
                result(request, {"content": [{"type": "text", "text": text}]})
            elif MODE == "flood":
                for i in range(100000):
                    try:
                        send({"jsonrpc": "2.0", "id": f"p{i}", "method": "ping"})
                    except BrokenPipeError:
                        return
                sys.stdin.close()
                while True:
                    pass
            elif MODE == "crash_on_call":
                sys.exit(3)
            elif MODE == "probe":
                result(request, {"content": [{"type": "text", "text": probe(sys.argv[2:])}]})
            else:
                if MODE == "stderr_flood":
                    chunk = "e" * (1 << 20)
                    for _ in range(50):
                        sys.stderr.write(chunk)
                    sys.stderr.flush()
                result(request, {"content": [{"type": "text", "text": "fine"}]})
        else:
            send({"jsonrpc": "2.0", "id": request["id"],
                  "error": {"code": -32601, "message": "no"}})


main()
