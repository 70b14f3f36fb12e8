"""A local fake of the OpenAI and Anthropic HTTP APIs on 127.0.0.1, for the real SDKs to talk to.

Responses come from a script (a list of Step) or, when the script is empty, from an
``answer(prompt_text) -> str`` function. Every request is recorded. A request that asks for `logprobs` gets them where
the fake is told how sure its model is (``sure(prompt_text) -> float | None``, or a Step's `sure`): each token of the
answer (a structured reply's `text` and `action` values and the quote that closes them, or the whole of a plain reply)
chosen with that probability and a runner-up with the rest, every other token with 0.999; with neither, none are
given, as a server that has none ignores the parameter. ``refuse(request_json) -> Step | None`` answers
before either, for servers that refuse some requests whatever is scripted: `llama_cpp_python` replays the error that
llama-cpp-python's server really sends for a json_schema response_format (captured/).
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CAPTURED = Path(__file__).resolve().parent / "captured"


@dataclass
class Step:
    status: int = 200
    text: str | None = None  # the reply text; None with status 200 -> use answer()
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw_body: bytes | None = None  # sent as-is (malformed responses)
    reasoning: str | None = None  # reasoning_content (OpenAI) or a thinking block (Anthropic)
    usage: dict | None = None  # fields of the reply's usage, over the fake's own counts (cached tokens, as each API says them)
    extra: dict | None = None  # top-level fields of the reply beside the API's own (llama.cpp's llama-server: timings)
    sure: float | None = None  # the probability of the answer's tokens, when the request asks for logprobs


def replayed(name: str) -> Step:
    """A reply a real server sent, verbatim (status, content type, body), from captured/NAME.json."""
    data = json.loads((CAPTURED / f"{name}.json").read_text(encoding="utf-8"))
    headers = {k: v for k, v in data["headers"].items() if k.lower() != "content-type"}
    return Step(status=data["status"], headers=headers, raw_body=data["body"].encode("utf-8"))


def llama_cpp_python(request: dict) -> Step | None:
    """llama-cpp-python[server] 0.3.36: a json_schema response_format is an HTTP 500 ("Input should be 'text' or
    'json_object'"); json_object, with or without a schema, and plain text are served (the fake's answer() speaks)."""
    if (request.get("response_format") or {}).get("type") == "json_schema":
        return replayed("llama-cpp-python-0.3.36-json_schema")
    return None


class FakeLLM:
    def __init__(self, answer=None, refuse=None, sure=None):
        self.script: list[Step] = []
        self.sure = sure or (lambda prompt: None)
        self.answer = answer or (lambda prompt: "y")
        self.refuse = refuse or (lambda request: None)
        self.requests: list[dict] = []
        self.bodies: list[bytes] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("content-length", 0))
                body = self.rfile.read(length)
                with fake._lock:
                    fake.bodies.append(body)
                    fake.requests.append({"path": self.path, "headers": dict(self.headers), "json": json.loads(body or b"{}")})
                    step = fake.refuse(fake.requests[-1]["json"]) or (fake.script.pop(0) if fake.script else Step())
                if step.delay:
                    time.sleep(step.delay)
                payload = fake._payload(self.path, json.loads(body or b"{}"), step)
                try:
                    self.send_response(step.status)
                    for k, v in step.headers.items():
                        self.send_header(k, v)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _payload(self, path: str, req: dict, step: Step) -> bytes:
        if step.raw_body is not None:
            return step.raw_body
        if step.status != 200:
            return json.dumps({"error": {"message": f"fake error {step.status}", "type": "fake"}}).encode()
        prompt = "\n".join(
            m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in req.get("messages", [])
        )
        text = step.text if step.text is not None else self.answer(prompt)
        if path.endswith("/messages"):
            content = ([{"type": "thinking", "thinking": step.reasoning, "signature": "x"}] if step.reasoning else [])
            content.append({"type": "text", "text": text})
            return json.dumps({
                "id": "msg_1", "type": "message", "role": "assistant", "model": req.get("model"), "content": content,
                "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": len(prompt) // 4, "output_tokens": 3, **(step.usage or {})}, **(step.extra or {}),
            }).encode()
        message = {"role": "assistant", "content": text}
        if step.reasoning:
            message["reasoning_content"] = step.reasoning
        sure = step.sure if step.sure is not None else self.sure(prompt)
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        if req.get("logprobs") and sure is not None:
            choice["logprobs"] = {"content": logprobs(text, sure, int(req.get("top_logprobs") or 0), _enums(req))}
        return json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": req.get("model"),
            "choices": [choice],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 3, "total_tokens": len(prompt) // 4 + 3, **(step.usage or {})},
            **(step.extra or {}),
        }).encode()

    def __enter__(self) -> "FakeLLM":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def _enums(req: dict) -> dict[str, list[str]]:
    """The values the request's answer schema allows, field by field (a question that says what it takes)."""
    rf = req.get("response_format") or {}
    schema = (rf.get("json_schema") or {}).get("schema") or rf.get("schema") or {}
    return {k: v["enum"] for k, v in (schema.get("properties") or {}).items() if isinstance(v, dict) and "enum" in v}


def logprobs(text: str, sure: float, top: int, enums: dict[str, list[str]] | None = None) -> list[dict]:
    """OpenAI's `logprobs.content` for `text`: words, spaces and marks as tokens; the answer's chosen with `sure`, its
    runner-up another value its field allows (where the schema says), else a token no answer starts with."""
    spans: list[tuple[int, int, str]] = [(0, len(text), "\u2591")]
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        spans = []
        for key in ("action", "text"):
            if isinstance(data.get(key), str):
                value = json.dumps(data[key])
                at = text.find(value, text.find(f'"{key}"') + len(key) + 2)
                other = next((v for v in (enums or {}).get(key, ()) if v and v != data[key]), "\u2591")
                spans.append((at + 1, at + len(value), other))  # the value and its closing quote
    out, at = [], 0
    for token in re.findall(r"\w+|\s+|[^\w\s]", text):
        start, at = at, at + len(token)
        inside = [other for begin, end, other in spans if start < end and at > begin]
        p = sure if inside else 0.999
        entry = {"token": token, "logprob": math.log(p), "bytes": list(token.encode())}
        entry["top_logprobs"] = [{"token": token, "logprob": math.log(p), "bytes": None},
                                 {"token": inside[0] if inside else "\u2591", "logprob": math.log(max(1 - p, 1e-9)),
                                  "bytes": None}][: max(top, 0)]
        out.append(entry)
    return out
