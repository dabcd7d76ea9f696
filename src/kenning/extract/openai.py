"""Extraction through any OpenAI-compatible ``/v1/chat/completions`` endpoint.

OpenAI, vLLM, Ollama, llama.cpp server (and llama-cpp-python's), LM Studio and the hosted compatibles
speak it. Structured output (``response_format``, setting ``KENNING_LLM_RESPONSE_FORMAT``):

    auto          json_schema → json_object + schema → json_object → none, stepping down on refusal
    json_schema   {"type": "json_schema", "json_schema": {"name": "facts", "strict": true, "schema": …}}
    json_object   {"type": "json_object", "schema": …} (llama.cpp, vLLM), else plain {"type": "json_object"}
    none          no response_format: the schema travels in the prompt alone

Below json_schema the schema is also written into the instructions. A refusal is an error whose body names
the response format (response_format, json_schema, json_object, "schema"), whatever its status code:
llama-cpp-python answers json_schema with HTTP 500, so a 500 of that kind is not retried as if the server
were busy. The instance remembers the step, so a server that lacks a feature costs one refusal.

Every request carries ``max_tokens`` (``KENNING_LLM_MAX_TOKENS``): without it a local server may generate
until the timeout. A server that wants ``max_completion_tokens`` instead (OpenAI's reasoning models) gets it.
"""
from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import httpx

from ..config import Settings
from ..errors import ConfigError, ExtractionError
from .llm import (DEFAULT_MAX_TOKENS, FACT_SCHEMA, PROMPT_VERSION, Answer, LLMExtractor, RequestRejected,
                  RetryPolicy, endpoint, log, missing_settings)

RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "none")
# the wire forms, strongest first; a setting may use the ones from its own down to its floor
LADDER = ("json_schema", "json_object+schema", "json_object", "none")
_RANGE = {"auto": ("json_schema", "none"), "json_schema": ("json_schema", "json_schema"),
          "json_object": ("json_object+schema", "json_object"), "none": ("none", "none")}
_FORMAT_WORDS = re.compile(r"response[_ .]?format|json[_ ]?schema|json[_ ]?object|structured output|"
                           r"guided[_ ]?(?:json|decoding)|grammar|\bschema\b", re.I)
_TOKEN_WORDS = re.compile(r"max_completion_tokens", re.I)
_NOT_FORMAT_STATUSES = frozenset({401, 403, 404, 408, 429})


class OpenAIExtractor(LLMExtractor):
    provider = "openai"
    key_env_var = "KENNING_LLM_API_KEY"
    model_env_var = "KENNING_LLM_MODEL"
    base_url_env_var = "KENNING_LLM_BASE_URL"
    example_base_url = "https://api.openai.com/v1"

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None, timeout: float = 30.0,
                 retry: RetryPolicy | None = None, prompt_version: str = PROMPT_VERSION,
                 response_format: str = "auto", max_tokens: int = DEFAULT_MAX_TOKENS, instructions: str = "system",
                 transport: httpx.BaseTransport | None = None):
        if response_format == "text":
            response_format = "none"   # the name before KENNING_LLM_RESPONSE_FORMAT
        if response_format not in RESPONSE_FORMATS:
            raise ConfigError(f"response_format (KENNING_LLM_RESPONSE_FORMAT) must be one of "
                              f"{', '.join(RESPONSE_FORMATS)}, not {response_format!r}")
        super().__init__(base_url=base_url, model=model, api_key=api_key, timeout=timeout, retry=retry,
                         prompt_version=prompt_version, max_tokens=max_tokens, instructions=instructions,
                         transport=transport)
        self.response_format_setting = response_format
        first, self._floor = _RANGE[response_format]
        self.response_format = first          # the wire form in use now (one of LADDER)
        self.token_param = "max_tokens"
        self.url = endpoint(self.base_url, "/v1/chat/completions", version_in_base=True)

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs) -> "OpenAIExtractor":
        missing_settings("openai", [
            ("KENNING_LLM_BASE_URL", settings.llm_base_url,
             "https://api.openai.com/v1, or http://localhost:11434/v1 for Ollama"),
            ("KENNING_LLM_MODEL", settings.llm_model, "gpt-4o-mini"),
        ])
        if not settings.llm_api_key and _needs_key(settings.llm_base_url):
            raise ConfigError(f"{settings.llm_base_url} needs an API key: set KENNING_LLM_API_KEY")
        kwargs = {"response_format": settings.llm_response_format, "max_tokens": settings.llm_max_tokens,
                  "instructions": settings.llm_instructions, **kwargs}
        return cls(base_url=settings.llm_base_url, model=settings.llm_model, api_key=settings.llm_api_key,
                   timeout=settings.llm_timeout, **kwargs)

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _body(self, messages: list[dict], max_tokens: int | None = None) -> dict:
        instructions = self.prompt.system
        if self.response_format != "json_schema":
            instructions += ("\n\nThe answer must be one JSON object, nothing else, valid against this JSON Schema:\n"
                             + json.dumps(FACT_SCHEMA))
        system, messages = self._arrange(messages, instructions)
        body = {"model": self.model, "temperature": 0, self.token_param: max_tokens or self.max_tokens,
                "messages": [*([{"role": "system", "content": system}] if system is not None else []), *messages]}
        if self.response_format == "json_schema":
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "facts", "strict": True, "schema": FACT_SCHEMA}}
        elif self.response_format == "json_object+schema":
            body["response_format"] = {"type": "json_object", "schema": FACT_SCHEMA}
        elif self.response_format == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def _complete(self, messages: list[dict], max_tokens: int | None = None) -> Answer:
        while True:
            try:
                return self._answer(self._post(self.url, self._body(messages, max_tokens)))
            except RequestRejected as exc:
                if not (self._other_token_param(exc) or self._step_down(exc)):
                    raise self._explained(exc) from exc

    def _is_refusal(self, response: httpx.Response) -> bool:
        return self._names_format(response.status_code, response.text)

    def _names_format(self, status: int, body: str) -> bool:
        """An error that refuses the response format we sent (any status but auth, 404, 408 and 429)."""
        return (self.response_format != "none" and status >= 400 and status not in _NOT_FORMAT_STATUSES
                and bool(_FORMAT_WORDS.search(body or "")))

    def _step_down(self, exc: RequestRejected) -> bool:
        """A refusal of the response format: use the next weaker one the setting allows, from now on."""
        if self.response_format == self._floor or not self._names_format(exc.status, exc.body):
            return False
        weaker = LADDER[LADDER.index(self.response_format) + 1]
        log.warning("%s: the server refused response_format %s (HTTP %d); using %s from now on",
                    self.name, self.response_format, exc.status, weaker)
        self.response_format = weaker
        return True

    def _other_token_param(self, exc: RequestRejected) -> bool:
        """A server that wants ``max_completion_tokens`` instead of ``max_tokens`` (OpenAI's o-series)."""
        if self.token_param == "max_tokens" and exc.status in (400, 422) and _TOKEN_WORDS.search(exc.body or ""):
            log.warning("%s: the server wants max_completion_tokens instead of max_tokens", self.name)
            self.token_param = "max_completion_tokens"
            return True
        return False

    def _explained(self, exc: RequestRejected) -> RequestRejected:
        """A format refusal that the setting allows no step below: say which setting to change."""
        if not self._names_format(exc.status, exc.body):
            return exc
        weaker = [f for f in RESPONSE_FORMATS[2:] if LADDER.index(_RANGE[f][0]) > LADDER.index(self.response_format)]
        hint = (f"the server refused response_format {self.response_format} (KENNING_LLM_RESPONSE_FORMAT="
                f"{self.response_format_setting}); set KENNING_LLM_RESPONSE_FORMAT to "
                f"{' or '.join(weaker) or 'none'}, or to auto")
        return RequestRejected(f"{exc} ({hint})", exc.status, exc.body)

    def _answer(self, data: dict) -> Answer:
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ExtractionError(f"openai server answered without choices[0].message: {json.dumps(data)[:300]}; "
                                  f"is {self.base_url_env_var} an OpenAI-compatible API?") from exc
        content = message.get("content")
        if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        cut = choice.get("finish_reason") == "length"
        note = (f"the answer was cut off at the token limit ({self.token_param} {self.max_tokens}; raise "
                f"KENNING_LLM_MAX_TOKENS)" if cut else "")
        if content is None:
            if message.get("refusal"):
                raise ExtractionError(f"openai model {self.model!r} refused to extract: {message['refusal']}")
            return Answer(None, data, note, problem="the answer has no content; expected a JSON object")
        return Answer(content, data, note, truncated=cut)

    def _follow_up(self, answer: Answer, error: str) -> list[dict]:
        said = answer.payload if isinstance(answer.payload, str) else json.dumps(answer.payload)
        return [{"role": "assistant", "content": said or ""}, {"role": "user", "content": error}]


def _needs_key(base_url: str) -> bool:
    """Hosted OpenAI needs a key; local servers (Ollama, vLLM, llama.cpp) usually do not."""
    return (urlsplit(base_url).hostname or "").endswith("api.openai.com")
