"""A loopback OpenAI-compatible chat-completions server: a stand-in answer engine.

It answers from the prompt it receives, deterministically, and labels every answer as
coming from the sandbox engine. Tests use it to see exactly what the daemon sent; faults
(HTTP errors, delays, empty or truncated answers) can be queued.

Structured outputs, as OpenAI-compatible servers do them: a request with
`response_format: {"type": "json_schema", …}` is answered with JSON of that schema (the
review findings object; a conversational answer as the answer object). With
`structured_outputs = False` it refuses such a request the way OpenAI does for a model
without them: HTTP 400, `invalid_request_error`, `param: response_format`, "Invalid
parameter: 'response_format' of type 'json_schema' is not supported with this model."
(as reported in web-infra-dev/midscene#259; vLLM and llama.cpp answer 400 too).
"""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from livereview.sandbox.review_answer import files_of, invented_findings

LABEL = "*(sandbox answer engine — not a real model)*"
HANG_BACKSTOP_SECONDS = 120.0


@dataclass
class LLMFault:
    status: int = 500
    delay_seconds: float = 0.0
    content: str | None = None  # answer with this text instead (e.g. "" for empty)
    finish_reason: str = "stop"
    message: str = "injected fault"  # the error's words, for a status >= 400
    # A model that hangs: the request waits until the test sets this (or the backstop of
    # HANG_BACKSTOP_SECONDS passes, so a test that forgets cannot hang the suite), then
    # is answered as usual. `arrived` is set when the request comes.
    hang: threading.Event | None = None
    arrived: threading.Event = field(default_factory=threading.Event)


@dataclass
class FakeLLM:
    prompts: list[list[dict[str, str]]] = field(default_factory=list)
    faults: list[LLMFault] = field(default_factory=list)
    delay_seconds: float = 0.0
    # A model that repeats whatever it was asked, word for word (hostile text included):
    # the worst case for what the bot ends up posting.
    parrot: bool = False
    # Reviews: the findings to report per file path, answered for the files a review prompt
    # shows ("### file: PATH (…)"), as the JSON the review prompt asks for.
    review_findings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # Without scripted findings, find one on the first added line of each file
    # (sandbox/review_answer.py): what `livereview sandbox` serves, so a review is whole.
    invent_findings: bool = False
    structured_outputs: bool = True  # False: refuse `response_format` json_schema (400)
    # The `response_format` of every request (None where it had none), in order.
    response_formats: list[dict[str, Any] | None] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def review_answer(self, user: str, schema: bool = False) -> str:
        paths = re.findall(r"^### file: (.+) \((?:added|modified|removed|renamed)", user,
                           re.MULTILINE)
        found = [f for path in paths for f in self.review_findings.get(path, [])]
        if self.invent_findings and not found:
            found = invented_findings(files_of(user), LABEL)
        if schema:  # every property the schema requires (a scripted finding may omit some)
            found = [{"category": "correctness", "confidence": 1.0, "side": "new", **f}
                     for f in found]
        return json.dumps({"findings": found, "summary": f"{LABEL} Read {len(paths)} file(s)."})

    def structured_answer(self, messages: list[dict[str, str]]) -> str:
        """The answer object the reply schema asks for, around the prose answer."""
        user = messages[-1]["content"] if messages else ""
        question = re.search(r"THE MESSAGE TO ANSWER[^\n]*\n<untrusted(?:-\w+)?>\n(.*?)\n"
                             r"</untrusted(?:-\w+)?>", user, re.DOTALL)
        asked = question.group(1) if question else ""
        mode = "disagreement" if re.search(r"\bdisagree\b", asked, re.IGNORECASE) else (
            "clarification" if asked.rstrip().endswith("?") else "help")
        return json.dumps({"mode": mode, "severity": "none",
                           "answer": self.answer_for(messages), "concede": False,
                           "lesson": None, "citations": [], "resolve": False})

    def answer_for(self, messages: list[dict[str, str]], schema: bool = False) -> str:
        user = messages[-1]["content"] if messages else ""
        if messages and "reviewing a merge request" in messages[0].get("content", ""):
            return self.review_answer(user, schema)
        question = re.search(r"THE MESSAGE TO ANSWER[^\n]*\n<untrusted(?:-\w+)?>\n(.*?)\n"
                             r"</untrusted(?:-\w+)?>", user, re.DOTALL)
        if self.parrot:
            return f"{LABEL}\n\nYou said:\n\n{question.group(1) if question else ''}"
        where = re.search(r"\nfile: (\S+), line (\d+)", user)
        asked = (question.group(1).strip().splitlines() or [""])[0][:200] if question else (
            "your question")
        place = f" at `{where.group(1)}:{where.group(2)}`" if where else ""
        return (f"{LABEL}\n\nYou asked: “{asked}”. I read the thread and the change{place}; "
                "a real model would answer here from that context.")

    def respond(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        messages = body.get("messages") or []
        wanted = body.get("response_format")
        schema = isinstance(wanted, dict) and wanted.get("type") == "json_schema"
        with self.lock:
            self.response_formats.append(wanted if isinstance(wanted, dict) else None)
            if schema and not self.structured_outputs:
                return 400, {"error": {
                    "message": "Invalid parameter: 'response_format' of type 'json_schema' "
                               "is not supported with this model.",
                    "type": "invalid_request_error", "param": "response_format",
                    "code": None}}
            self.prompts.append(messages)
            fault = self.faults.pop(0) if self.faults else None
        if fault and fault.hang is not None:
            fault.arrived.set()
            fault.hang.wait(HANG_BACKSTOP_SECONDS)
        delay = self.delay_seconds + (fault.delay_seconds if fault else 0.0)
        if delay:
            time.sleep(delay)
        if fault and fault.content is None and fault.status >= 400:
            return fault.status, {"error": {"message": fault.message, "type": "server_error"}}
        review = bool(messages) and "reviewing a merge request" in messages[0].get("content", "")
        content = fault.content if fault and fault.content is not None else (
            self.structured_answer(messages) if schema and not review
            else self.answer_for(messages, schema))
        finish = fault.finish_reason if fault else "stop"
        prompt_tokens = sum(len(m.get("content", "")) for m in messages) // 4
        return 200, {
            "id": f"chatcmpl-{len(self.prompts)}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", "sandbox"),
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(content) // 4,
                      "total_tokens": prompt_tokens + len(content) // 4},
        }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def setup(self) -> None:
        super().setup()
        # The headers and the body are two writes: with Nagle's algorithm the body waits
        # for the client's delayed ACK of the headers (40 ms on Linux) — a model "answering
        # at once" took 40 ms for half the answers (bench figure 6). As sandbox/loopback.py.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            status, payload = 404, {"error": {"message": "not found"}}
        else:
            try:
                status, payload = self.server.llm.respond(json.loads(raw or b"{}"))
            except json.JSONDecodeError:
                status, payload = 400, {"error": {"message": "invalid JSON"}}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, llm: FakeLLM) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.llm = llm

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up mid-answer (a killed daemon, a timeout) is normal here.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeLLMServer:
    def __init__(self, llm: FakeLLM | None = None) -> None:
        self.llm = llm or FakeLLM()
        self._server = _Server(self.llm)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="fake-llm")
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()
