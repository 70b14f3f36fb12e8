"""A local fake of the OpenAI and Anthropic HTTP APIs on 127.0.0.1, for the real SDKs to talk to.

Responses come from a script (a list of Step) or, when the script is empty, from an
``answer(prompt_text) -> str`` function. Every request is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Step:
    status: int = 200
    text: str | None = None  # the reply text; None with status 200 -> use answer()
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw_body: bytes | None = None  # sent as-is (malformed responses)
    reasoning: str | None = None  # reasoning_content (OpenAI) or a thinking block (Anthropic)


class FakeLLM:
    def __init__(self, answer=None):
        self.script: list[Step] = []
        self.answer = answer or (lambda prompt: "y")
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
                    step = fake.script.pop(0) if fake.script else Step()
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
                "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": len(prompt) // 4, "output_tokens": 3},
            }).encode()
        message = {"role": "assistant", "content": text}
        if step.reasoning:
            message["reasoning_content"] = step.reasoning
        return json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": req.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 3, "total_tokens": len(prompt) // 4 + 3},
        }).encode()

    def __enter__(self) -> "FakeLLM":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
