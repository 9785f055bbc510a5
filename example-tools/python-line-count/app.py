"""LineCount: a janua tool written in Python, built into a component with componentize-py.

Build it against janua's WIT contract (from the repository root):

    componentize-py -d wit -w tool-plugin componentize \
        -p example-tools/python-line-count app -o example-tools/python-line-count/line_count.wasm

then load it: `janua --plugins example-tools/python-line-count call LineCount --input
'{"file_path":"README.md"}'`. docs/AUTHORING.md walks through it.
"""

import json
import os

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types

# The schema is written by hand here (Rust tools derive it): every field typed and described,
# and no field the tool does not know.
INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "file_path": {
            "type": "string",
            "description": "The file to count, absolute or relative to the workspace.",
        }
    },
    "required": ["file_path"],
    "additionalProperties": False,
}

# Files larger than this are refused rather than read: a tool's output and memory stay bounded.
MAX_BYTES = 16 * 1024 * 1024


def fail(kind: str, message: str) -> Err:
    return Err(types.ToolError(kind=kind, message=message))


class Tool(exports.Tool):
    def describe(self) -> list[types.ToolSpec]:
        return [
            types.ToolSpec(
                name="LineCount",
                description="Counts the lines, words and bytes of a text file in the workspace.",
                input_schema=json.dumps(INPUT_SCHEMA),
                class_=types.CapabilityClass.READ,
                read_only=True,
                concurrency_safe=True,
                # Rules such as `LineCount(src/**)` match this field.
                rule_field="file_path",
                validates_input=False,
            )
        ]

    def validate_input(self, tool: str, input: str, ctx: types.CallContext) -> None:
        return None

    def call(self, tool: str, input: str, ctx: types.CallContext) -> types.ToolOutput:
        path = json.loads(input)["file_path"]
        path = os.path.join(ctx.cwd, path)
        try:
            size = os.path.getsize(path)
            if size > MAX_BYTES:
                raise fail("too_large", f"{path} has {size} bytes; at most {MAX_BYTES} are counted")
            with open(path, "rb") as file:
                data = file.read()
        except FileNotFoundError:
            raise fail("not_found", f"{path} does not exist")
        except PermissionError:
            raise fail("permission_denied", f"{path} is outside what this tool was granted")
        except OSError as error:
            raise fail("io", f"cannot read {path}: {error.strerror}")
        counts = {
            "lines": data.count(b"\n"),
            "words": len(data.split()),
            "bytes": len(data),
        }
        text = f"{counts['lines']} lines, {counts['words']} words, {counts['bytes']} bytes"
        return types.ToolOutput(
            content=[types.Content_Text(text)],
            structured=json.dumps(counts),
        )
