"""Extraction through the Anthropic Messages API (``POST {base}/v1/messages``).

Structured output is a tool: the facts schema is the input schema of one tool, and ``tool_choice``
forces the model to call it, so the answer arrives as already-decoded JSON in a ``tool_use`` block.
An unusable call is answered with a ``tool_result`` marked ``is_error`` carrying the validation error.
"""
from __future__ import annotations

import json

import httpx

from ..config import Settings
from ..errors import ExtractionError
from .llm import (DEFAULT_MAX_TOKENS, FACT_SCHEMA, PROMPT_VERSION, TOOL_NAME, Answer, LLMExtractor, RetryPolicy,
                  endpoint, missing_settings)

API_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
TOOL = {"name": TOOL_NAME,
        "description": "Record the durable facts about the user found in the message (an empty list if none).",
        "input_schema": FACT_SCHEMA}


class AnthropicExtractor(LLMExtractor):
    provider = "anthropic"
    key_env_var = "KENNING_ANTHROPIC_API_KEY"
    model_env_var = "KENNING_ANTHROPIC_MODEL (or KENNING_LLM_MODEL)"
    base_url_env_var = "KENNING_ANTHROPIC_BASE_URL"
    example_base_url = DEFAULT_BASE_URL

    def __init__(self, *, model: str, api_key: str | None = None, base_url: str = DEFAULT_BASE_URL,
                 timeout: float = 30.0, retry: RetryPolicy | None = None, prompt_version: str = PROMPT_VERSION,
                 max_tokens: int = DEFAULT_MAX_TOKENS, instructions: str = "system",
                 transport: httpx.BaseTransport | None = None):
        super().__init__(base_url=base_url, model=model, api_key=api_key, timeout=timeout, retry=retry,
                         prompt_version=prompt_version, max_tokens=max_tokens, instructions=instructions,
                         transport=transport)
        self.url = endpoint(self.base_url, "/v1/messages", version_in_base=False)

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs) -> "AnthropicExtractor":
        model = settings.anthropic_model or settings.llm_model
        missing_settings("anthropic", [
            ("KENNING_ANTHROPIC_API_KEY", settings.anthropic_api_key, "sk-ant-…"),
            ("KENNING_ANTHROPIC_MODEL or KENNING_LLM_MODEL", model, "claude-sonnet-4-5"),
        ])
        kwargs = {"max_tokens": settings.llm_max_tokens, "instructions": settings.llm_instructions, **kwargs}
        return cls(base_url=settings.anthropic_base_url, model=model, api_key=settings.anthropic_api_key,
                   timeout=settings.llm_timeout, **kwargs)

    def _headers(self) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return headers

    def _complete(self, messages: list[dict], max_tokens: int | None = None) -> Answer:
        system, messages = self._arrange(messages, self.prompt.system)
        body = {"model": self.model, "max_tokens": max_tokens or self.max_tokens, "temperature": 0, "messages": messages,
                "tools": [TOOL], "tool_choice": {"type": "tool", "name": TOOL_NAME}}
        if system is not None:
            body["system"] = system
        return self._answer(self._post(self.url, body))

    def _answer(self, data: dict) -> Answer:
        content = data.get("content")
        if not isinstance(content, list):
            raise ExtractionError(f"anthropic server answered without a content list: {json.dumps(data)[:300]}; "
                                  f"is {self.base_url_env_var} the Messages API?")
        cut = data.get("stop_reason") == "max_tokens"
        note = f"the answer was cut off at max_tokens {self.max_tokens} (raise KENNING_LLM_MAX_TOKENS)" if cut else ""
        call = _tool_call(content)
        if call is None:
            return Answer(None, data, note, problem=f"the answer has no {TOOL_NAME} tool call", truncated=cut)
        return Answer(call.get("input"), data, note, truncated=cut)

    def _follow_up(self, answer: Answer, error: str) -> list[dict]:
        content = answer.raw.get("content") or []
        call = _tool_call(content)
        said = [{"role": "assistant", "content": content}] if content else []
        if call is not None and call.get("id"):
            return said + [{"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call["id"], "is_error": True, "content": error}]}]
        return said + [{"role": "user", "content": error}]


def _tool_call(content: list) -> dict | None:
    return next((b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
                 and b.get("name") == TOOL_NAME), None)
