"""Extraction through any OpenAI-compatible ``/v1/chat/completions`` endpoint.

OpenAI, vLLM, Ollama, llama.cpp server, LM Studio and the hosted compatibles speak it. Structured
output is asked for in the strongest form the server accepts: ``json_schema`` (strict), else
``json_object``, else the schema in the prompt alone. A 400 that names the response format moves one
step down, and the instance remembers it, so a server that lacks the feature costs one refusal.
"""
from __future__ import annotations

import json
from urllib.parse import urlsplit

import httpx

from ..config import Settings
from ..errors import ConfigError, ExtractionError
from .llm import (FACT_SCHEMA, PROMPT_VERSION, Answer, LLMExtractor, RequestRejected, RetryPolicy, endpoint, log,
                  missing_settings)

RESPONSE_FORMATS = ("json_schema", "json_object", "text")
_FORMAT_WORDS = ("response_format", "response format", "json_schema", "json_object", "structured output")


class OpenAIExtractor(LLMExtractor):
    provider = "openai"
    key_env_var = "KENNING_LLM_API_KEY"
    model_env_var = "KENNING_LLM_MODEL"
    base_url_env_var = "KENNING_LLM_BASE_URL"
    example_base_url = "https://api.openai.com/v1"

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None, timeout: float = 30.0,
                 retry: RetryPolicy | None = None, prompt_version: str = PROMPT_VERSION,
                 response_format: str = "json_schema", transport: httpx.BaseTransport | None = None):
        if response_format not in RESPONSE_FORMATS:
            raise ConfigError(f"response_format must be one of {', '.join(RESPONSE_FORMATS)}, not {response_format!r}")
        super().__init__(base_url=base_url, model=model, api_key=api_key, timeout=timeout, retry=retry,
                         prompt_version=prompt_version, transport=transport)
        self.response_format = response_format
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
        return cls(base_url=settings.llm_base_url, model=settings.llm_model, api_key=settings.llm_api_key,
                   timeout=settings.llm_timeout, **kwargs)

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _body(self, messages: list[dict]) -> dict:
        system = self.prompt.system
        if self.response_format != "json_schema":
            system += ("\n\nThe answer must be one JSON object, nothing else, valid against this JSON Schema:\n"
                       + json.dumps(FACT_SCHEMA))
        body = {"model": self.model, "temperature": 0,
                "messages": [{"role": "system", "content": system}, *messages]}
        if self.response_format == "json_schema":
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "facts", "strict": True, "schema": FACT_SCHEMA}}
        elif self.response_format == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def _complete(self, messages: list[dict]) -> Answer:
        while True:
            try:
                return self._answer(self._post(self.url, self._body(messages)))
            except RequestRejected as exc:
                if not self._step_down(exc):
                    raise

    def _step_down(self, exc: RequestRejected) -> bool:
        """A refusal of the response format: use the next weaker one from now on."""
        if exc.status not in (400, 422) or self.response_format == "text":
            return False
        if not any(word in exc.body.lower() for word in _FORMAT_WORDS):
            return False
        weaker = RESPONSE_FORMATS[RESPONSE_FORMATS.index(self.response_format) + 1]
        log.warning("%s: the server refused response_format %s; using %s from now on",
                    self.name, self.response_format, weaker)
        self.response_format = weaker
        return True

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
        note = "the answer was cut off at the token limit" if choice.get("finish_reason") == "length" else ""
        if content is None:
            if message.get("refusal"):
                raise ExtractionError(f"openai model {self.model!r} refused to extract: {message['refusal']}")
            return Answer(None, data, note, problem="the answer has no content; expected a JSON object")
        return Answer(content, data, note)

    def _follow_up(self, answer: Answer, error: str) -> list[dict]:
        said = answer.payload if isinstance(answer.payload, str) else json.dumps(answer.payload)
        return [{"role": "assistant", "content": said or ""}, {"role": "user", "content": error}]


def _needs_key(base_url: str) -> bool:
    """Hosted OpenAI needs a key; local servers (Ollama, vLLM, llama.cpp) usually do not."""
    return (urlsplit(base_url).hostname or "").endswith("api.openai.com")
