"""Scripted model servers on loopback: real HTTP on 127.0.0.1, an ephemeral port, a thread.

``ScriptedServer`` replays prepared :class:`Reply` objects in order (``push``), then falls back to a
``responder(request) -> Reply`` (e.g. one that looks the message up in a fixture). Every request is
recorded (path, headers, JSON body) so tests can check what the client sent.

The helpers build bodies in each provider's wire format: ``openai_reply`` (a chat completion whose
``choices[0].message.content`` is the JSON text), ``anthropic_reply`` (a message whose content is a
``tool_use`` block), ``error_reply``; ``message_of`` finds the user's message in a request.

``LocalModel`` is a responder with the quirks of real local servers behind the OpenAI-compatible API,
each switchable: a refusal per response format (llama-cpp-python answers ``json_schema`` with HTTP 500),
a hang when the request has no ``max_tokens`` (the model generates until the client gives up), and a chat
template that drops the system message (the model then never sees the instructions and chats instead).
``LLAMA_CPP_PYTHON`` is that server's set of quirks.
"""
from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    status: int = 200
    body: Any = None                 # dict/list → JSON; str → sent as is (e.g. truncated JSON)
    delay: float = 0.0               # seconds to wait before answering (a hang past the client's timeout)
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]          # lower-cased names
    body: Any

    def text(self) -> str:
        """Every message text of the request, system prompt included, joined (for 'in' checks)."""
        return "\n".join(_texts(self.body))


class ScriptedServer:
    def __init__(self, responder: Callable[[Recorded], Reply] | None = None):
        self.responder = responder
        self.requests: list[Recorded] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, *replies: Reply) -> "ScriptedServer":
        with self._lock:
            self._script.extend(replies)
        return self

    def start(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # wakes handlers that are "hanging"
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "ScriptedServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _next(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return self.responder(request)
        return error_reply(500, "the scripted server has no reply left for this request")

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length).decode("utf-8")
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                request = Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                reply = server._next(request)
                if reply.delay and server._stop.wait(reply.delay):
                    return
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                data = payload.encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout); nothing to answer

            def log_message(self, *args):
                pass

        return Handler


# -- wire formats ---------------------------------------------------------------------------------
def openai_reply(content: Any, *, finish_reason: str = "stop", model: str = "scripted") -> Reply:
    """A chat completion; ``content`` is the assistant's text (a dict/list is JSON-encoded)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return Reply(200, {"id": "chatcmpl-scripted", "object": "chat.completion", "model": model,
                       "choices": [{"index": 0, "finish_reason": finish_reason,
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


def anthropic_reply(tool_input: Any = None, *, text: str | None = None, tool_name: str = "record_facts",
                    stop_reason: str = "tool_use") -> Reply:
    """A Messages API answer: a ``tool_use`` block with ``tool_input`` (and/or a text block)."""
    content = []
    if text is not None:
        content.append({"type": "text", "text": text})
    if tool_input is not None:
        content.append({"type": "tool_use", "id": "toolu_scripted", "name": tool_name, "input": tool_input})
    return Reply(200, {"id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted",
                       "content": content, "stop_reason": stop_reason if tool_input is not None else "end_turn",
                       "usage": {"input_tokens": 1, "output_tokens": 1}})


def error_reply(status: int, message: str, *, headers: dict[str, str] | None = None, delay: float = 0.0,
                error_type: str = "invalid_request_error") -> Reply:
    return Reply(status, {"error": {"message": message, "type": error_type}}, delay, headers or {})


def fact(predicate: str, obj: str, **fields) -> dict:
    """One fact as a model would write it, every schema field present."""
    out = {"subject": "user", "predicate": predicate, "object": obj, "object_is_entity": True,
           "entity_type": "THING", "kind": "attribute", "text": f"user {predicate} {obj}", "confidence": 0.9,
           "source_quote": "", "valid_at": None, "valid_until": None, "ends": False, "needs_known_entity": False}
    out.update(fields)
    return out


# -- reading requests -----------------------------------------------------------------------------
def message_of(request: Recorded) -> str | None:
    """The user's message in an extraction request: the first user turn's ``<message>`` block."""
    messages = request.body.get("messages", []) if isinstance(request.body, dict) else []
    first_user = next((m for m in messages if m.get("role") == "user"), None)
    if first_user is None:
        return None
    text = "\n".join(_texts({"messages": [first_user]}))
    start, end = text.rfind("<message>\n"), text.rfind("\n</message>")
    return text[start + len("<message>\n"):end] if 0 <= start < end else None


def _texts(body: Any) -> list[str]:
    if not isinstance(body, dict):
        return [str(body)]
    out = []
    if isinstance(body.get("system"), str):
        out.append(body["system"])
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text") or part.get("content"), str):
                    out.append(part.get("text") or part.get("content"))
    return out


def fixture_responder(fixture: dict[str, dict], provider: str) -> Callable[[Recorded], Reply]:
    """Answers each request with the prepared facts for its message (``fixture[text]``)."""
    def respond(request: Recorded) -> Reply:
        text = message_of(request)
        if text not in fixture:
            return error_reply(400, f"no prepared answer for message {text!r}")
        answer = fixture[text]
        return openai_reply(answer) if provider == "openai" else anthropic_reply(answer)
    return respond


# -- a local model server, quirks included -------------------------------------------------------------
INSTRUCTIONS_MARK = "Answer with one JSON object"   # a line of the extraction prompt's instructions

# What llama-cpp-python's server (0.3.36, seen on a real one) answers to {"response_format": {"type":
# "json_schema", ...}}: its request model allows only "text" and "json_object", and its route wraps the
# validation error as an HTTP 500 "internal_server_error".
LLAMA_CPP_PYTHON_JSON_SCHEMA_ERROR = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input "
    "should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or "
    "'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", line 376, in create_chat_completion\n"
    "    POST /v1/chat/completions")


def wire_format(body: Any) -> str:
    """The response format a request asks for: json_schema, json_object+schema, json_object or none."""
    rf = body.get("response_format") if isinstance(body, dict) else None
    if not isinstance(rf, dict) or rf.get("type") in (None, "text"):
        return "none"
    if rf.get("type") == "json_object":
        return "json_object+schema" if "schema" in rf else "json_object"
    return str(rf.get("type"))


class LocalModel:
    """A responder that plays a local model behind an OpenAI-compatible server.

    ``answer(message) -> facts``: what the model extracts when it sees its instructions.
    ``refuse``: {wire format: Reply} for the formats the server refuses (see :func:`wire_format`).
    ``hang_without_max_tokens``: seconds to hang on a request without ``max_tokens`` (or
    ``max_completion_tokens``), as a model that generates to its context limit does.
    ``drops_system``: the chat template drops system messages, so the model sees only the other turns;
    a model that never saw the instructions answers in prose, as a chat model does.
    ``seen`` records, per request, the turns that reached the model.
    """

    def __init__(self, answer: Callable[[str | None], Any] = lambda message: {"facts": []}, *,
                 refuse: dict[str, Reply] | None = None, hang_without_max_tokens: float = 0.0,
                 drops_system: bool = False):
        self.answer, self.refuse = answer, dict(refuse or {})
        self.hang_without_max_tokens, self.drops_system = hang_without_max_tokens, drops_system
        self.seen: list[list[dict]] = []

    def __call__(self, request: Recorded) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        form = wire_format(body)
        if form in self.refuse:
            return self.refuse[form]
        messages = [m for m in body.get("messages", [])
                    if not (self.drops_system and m.get("role") == "system")]
        self.seen.append(messages)
        if self.hang_without_max_tokens and not (body.get("max_tokens") or body.get("max_completion_tokens")):
            return Reply(200, openai_reply({"facts": []}).body, delay=self.hang_without_max_tokens)
        if INSTRUCTIONS_MARK not in "\n".join(_texts({"messages": messages})):
            return openai_reply("Hello! It sounds like you have a lot going on. How can I help you today?")
        return openai_reply(self.answer(message_of(request)))


def llama_cpp_python(answer: Callable[[str | None], Any] = lambda message: {"facts": []}, *,
                     drops_system: bool = False, hang: float = 30.0) -> LocalModel:
    """llama-cpp-python's OpenAI-compatible server: json_schema refused with HTTP 500, json_object with a
    schema accepted, no max_tokens: generation to the timeout; ``drops_system`` for a template such as gemma's."""
    return LocalModel(answer, refuse={"json_schema": error_reply(
        500, LLAMA_CPP_PYTHON_JSON_SCHEMA_ERROR, error_type="internal_server_error")},
                      hang_without_max_tokens=hang, drops_system=drops_system)
