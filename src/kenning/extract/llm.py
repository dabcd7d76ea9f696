"""What every model-backed extractor shares; providers only speak their wire format.

    LLMExtractor.extract(text)
      ├── Prompt.render          the versioned template in prompts/<version>.md
      ├── provider._complete     one HTTP exchange (openai.py, anthropic.py) through _post:
      │     └── _post            retries timeouts, 429 and 5xx with bounded exponential backoff
      ├── parse_answer           the model's JSON → Candidates; a fact that breaks the schema
      │                          becomes Candidate(rejected=…) (counted by the write path, never stored)
      └── one re-ask             unusable JSON is sent back once with the validation error,
                                 then ExtractionError

The extractor decides nothing about storage: a subject other than "user", an unknown entity type or an
out-of-range confidence passes through for the write path to enforce and count.
"""
from __future__ import annotations

import json
import logging
import math
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import httpx
import json_repair
from dateutil import parser as dateparser

from .. import timeutil
from ..config import Settings
from ..errors import ConfigError, ExtractionError, InvalidTime
from ..model import ENTITY_TYPES, FACT_KINDS
from ..vocabulary import load as load_vocabulary
from .base import Candidate, Extractor

log = logging.getLogger("kenning.extract")

PROMPT_VERSION = "extract_v4"
ENDS_IN_VALID_UNTIL = "extract_v3"        # the first prompt that dates an ending by its valid_until
TOOL_NAME = "record_facts"
_USER_MARK = "=== user ==="
_SNIPPET = 300  # characters of a server's error body quoted in an error message
INSTRUCTIONS = ("system", "user", "both")   # where the prompt's instructions go (KENNING_LLM_INSTRUCTIONS)
DEFAULT_MAX_TOKENS = 2048                   # about 18 facts of ~110 tokens; bounds a runaway answer
MAX_TOKENS_CEILING = 8192                   # the most room a cut-off answer is asked again with

# The kinds a model may give, the same as the offline extractor's. The earlier names ("relationship",
# "habit") are read as today's, and stored_kind() spells a kind the way model.FACT_KINDS does.
EXTRACT_KINDS = ("attribute", "relation", "preference", "possession", "skill", "routine", "plan", "event", "goal")
_CURRENT = {"relationship": "relation", "habit": "routine"}
_EARLIER = {current: earlier for earlier, current in _CURRENT.items()}


def stored_kind(kind: str) -> str:
    """``kind`` as :data:`kenning.model.FACT_KINDS` spells it: an earlier name becomes today's ("relationship"
    → "relation"), and today's the earlier one where the store knows only that; a kind the store knows under
    no name passes through (the write path maps it)."""
    kind = kind.strip().lower()
    for name in (_CURRENT.get(kind, kind), kind, _EARLIER.get(kind, kind)):
        if name in FACT_KINDS:
            return name
    return kind


def vocabulary_predicates() -> list[str]:
    """Every predicate the vocabulary stores as written (rows and their aliases; not the open classes)."""
    return [p for row in load_vocabulary().rows if not row.open and not row.predicate.startswith("<")
            for p in row.slot]


_NULLABLE_STRING = {"type": ["string", "null"]}
FACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {
        "type": "object",
        "properties": {
            "subject": {"type": "string", "description": 'always "user"'},
            "predicate": {"type": "string", "description": "the vocabulary's predicate where one fits ("
                          + ", ".join(vocabulary_predicates()) + "); otherwise a short present-tense verb "
                          "phrase, lower case; for an event, the past-tense verb (\"ran\")"},
            "object": {"type": "string"},
            "object_is_entity": {"type": "boolean"},
            "entity_type": {"type": ["string", "null"], "enum": [*ENTITY_TYPES, None],
                            "description": "PERSON for the people (and named pets) of a relation"},
            "kind": {"type": "string", "enum": list(EXTRACT_KINDS),
                     "description": "attribute (identity, work, residence, health, diet), relation (family, "
                                    "partners, friends, pets), preference, possession, skill, routine, plan "
                                    "(true from a future date), event (a past occurrence), goal"},
            "text": {"type": "string"},
            "confidence": {"type": "number"},
            "source_quote": {"type": "string", "description": "verbatim words of the message"},
            "valid_at": {**_NULLABLE_STRING, "description": "ISO 8601: a plan's future date, an event's date, "
                                                          "when an ending happened; or null: the message time"},
            "valid_until": {**_NULLABLE_STRING, "description": "ISO 8601, or null: open-ended"},
            "ends": {"type": "boolean", "description": "true: the message says this fact stopped being true"},
            "needs_known_entity": {"type": "boolean"},
        },
        "required": ["subject", "predicate", "object", "object_is_entity", "entity_type", "kind", "text",
                     "confidence", "source_quote", "valid_at", "valid_until", "ends", "needs_known_entity"],
        "additionalProperties": False,
    }}},
    "required": ["facts"],
    "additionalProperties": False,
}
FACT_FIELDS = tuple(FACT_SCHEMA["properties"]["facts"]["items"]["properties"])


# -- the prompt -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Prompt:
    """A versioned prompt: a static system part and a per-message user template."""

    version: str
    system: str
    user_template: str

    def render(self, text: str, *, at: datetime, context: list[str] | None = None,
               known_entities: list[str] | None = None) -> str:
        at = timeutil.to_utc(at)
        values = {
            "message_time": f"{at.strftime('%Y-%m-%dT%H:%M:%SZ')} ({at.strftime('%A')})",
            "known_entities": ", ".join(known_entities) if known_entities else "none",
            "context": "\n".join(f"- {json.dumps(m, ensure_ascii=False)}" for m in context) if context else "(none)",
            "message": text,
        }
        # one pass, so a message that contains "{{context}}" stays as written
        return re.sub(r"\{\{(\w+)\}\}", lambda m: values.get(m.group(1), m.group(0)), self.user_template)


@lru_cache(maxsize=8)
def load_prompt(version: str = PROMPT_VERSION) -> Prompt:
    """The prompt shipped as package data under ``kenning/extract/prompts/<version>.md``."""
    source = resources.files("kenning.extract").joinpath("prompts", f"{version}.md")
    if not source.is_file():
        raise ConfigError(f"no extraction prompt {version!r}; the package ships {PROMPT_VERSION!r}")
    raw = source.read_text(encoding="utf-8")
    raw = re.sub(r"\A\s*<!--.*?-->\s*", "", raw, flags=re.S)  # the maintainers' note is not for the model
    system, sep, user = raw.partition(_USER_MARK)
    if not sep:
        raise ConfigError(f"extraction prompt {version!r} lacks its {_USER_MARK!r} line")
    system = system.replace("{{vocabulary}}", vocabulary_section())   # extract_v4 on: taught from the table
    return Prompt(version, system.strip(), user.strip())


def vocabulary_section() -> str:
    """The fact vocabulary as the prompt teaches it: one line per row of ``kenning/vocabulary/facts.toml``."""
    lines = []
    for row in load_vocabulary().rows:
        if row.predicate.startswith("<"):
            continue     # the relation details and the open class have their own rules in the prompt
        count = "one value" if row.cardinality == "one" else "many values"
        kind = "an entity of type " + row.object if row.object != "value" else "a plain value"
        name = "the verb" if row.open else f'"{row.predicate}"'
        also = f'; also {", ".join(chr(34) + a + chr(34) for a in row.aliases)}' if row.aliases else ""
        cases = "; ".join(f'"{sentence}" → "{obj}"' + ("" if status == "current" else f" ({status})")
                          for sentence, obj, status in row.cases())
        lines.append(f"- {row.cls.replace('_', ' ')}: {name}, {count}, object {kind}{also}. E.g. {cases}")
    return "\n".join(lines)



# -- the model's answer → candidates ----------------------------------------------------------
class MalformedOutput(ValueError):
    """The answer as a whole is unusable (not JSON, no ``facts`` list): worth one re-ask."""


def loads_answer(content: str) -> Any:
    """JSON from a model's text, read tolerantly: a Markdown fence, a sentence before or after the
    JSON, a trailing comment, single quotes or a trailing comma still give the value the model meant
    (json_repair). Only an answer that holds no JSON value at all is unusable."""
    body = _unfenced(content)
    if not body:
        raise MalformedOutput("the answer is empty; expected a JSON object like {\"facts\": [...]}")
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        strict_error = exc
    start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
    if start >= 0 and not looks_cut(body[start:]):
        try:   # JSON with words around it
            return json.JSONDecoder().raw_decode(body, start)[0]
        except json.JSONDecodeError:
            pass
        repaired = json_repair.loads(body[start:], skip_json_loads=True)
        if isinstance(repaired, dict) or (isinstance(repaired, list) and all(isinstance(x, dict) for x in repaired)):
            return repaired
    raise MalformedOutput(f"the answer is not valid JSON ({strict_error.msg} at line {strict_error.lineno} "
                          f"column {strict_error.colno})") from strict_error


def looks_cut(text: str) -> bool:
    """Whether the JSON value that ``text`` opens never closes (it stops inside a string or with brackets
    left open): an answer cut off by the token limit, or by a server that did not say so."""
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return False
    return depth > 0


def complete_facts(content: Any) -> list[Any]:
    """The facts a cut-off answer finished: each item of its ``facts`` list that is whole JSON. The fact
    the cut went through is left out (a half-written fact is not a fact)."""
    if isinstance(content, dict):   # a tool's input: the provider decoded what arrived
        facts = content.get("facts")
        return [f for f in facts if isinstance(f, dict)] if isinstance(facts, list) else []
    if not isinstance(content, str):
        return []
    body = _unfenced(content)
    found = re.search(r"""["']facts["']\s*:\s*\[""", body) or re.match(r"\s*\[", body)
    if found is None:
        return []
    decoder, i, out = json.JSONDecoder(), found.end(), []
    while True:
        while i < len(body) and body[i] in " \t\r\n,":
            i += 1
        try:
            item, i = decoder.raw_decode(body, i)
        except json.JSONDecodeError:
            return out
        out.append(item)


def _unfenced(content: str) -> str:
    body = (content or "").strip()
    fenced = re.search(r"```(?:json|JSON)?\s*\n?(.*?)(?:\n?```|\Z)", body, flags=re.S)
    return fenced.group(1).strip() if fenced else body


def parse_answer(answer: Any) -> list[Candidate]:
    """``{"facts": [...]}`` (a JSON string or already decoded) → one Candidate per fact.

    Read as the model meant it: a bare list of facts, ``"facts"`` given as one fact or as an object of
    facts, a fact list under another single key. A fact that breaks the schema comes back as
    ``Candidate(rejected=reason)``; an answer with no facts anywhere raises :class:`MalformedOutput`.
    """
    if isinstance(answer, str):
        answer = loads_answer(answer)
    return [candidate_from(item, i) for i, item in enumerate(fact_list(answer))]


def fact_list(answer: Any) -> list[Any]:
    """The list of facts inside a decoded answer, whatever shape the model wrapped it in."""
    if isinstance(answer, list):
        return answer
    if not isinstance(answer, dict):
        raise MalformedOutput(f"expected a JSON object with a \"facts\" list, got {_json_type(answer)}")
    if "facts" not in answer:
        if _looks_like_fact(answer):
            return [answer]
        lists = [v for v in answer.values() if isinstance(v, list)]
        if len(lists) == 1 and lists[0] and all(isinstance(x, dict) and _looks_like_fact(x) for x in lists[0]):
            return lists[0]
        raise MalformedOutput(f"expected a JSON object with a \"facts\" list, got an object with keys "
                              f"{', '.join(map(repr, list(answer)[:6])) or '(none)'}")
    facts = answer["facts"]
    if isinstance(facts, list):
        return facts
    if facts is None:
        return []
    if isinstance(facts, dict):
        if _looks_like_fact(facts):
            return [facts]
        if facts and all(isinstance(v, dict) for v in facts.values()):
            return list(facts.values())
        if not facts:
            return []
    raise MalformedOutput(f"\"facts\" must be a list, not {_json_type(facts)}")


def _looks_like_fact(value: dict) -> bool:
    return "predicate" in value and "object" in value


_STRINGS = ("subject", "predicate", "object", "kind", "text", "source_quote")
_OPTIONAL_DEFAULTS = {"subject": "user", "kind": "attribute", "text": "", "source_quote": "",
                      "object_is_entity": False, "ends": False, "needs_known_entity": False, "confidence": 0.8}
_WORDED_CONFIDENCE = {"very high": 0.95, "high": 0.9, "medium": 0.7, "moderate": 0.7, "low": 0.5, "very low": 0.3}
_TRUE, _FALSE = {"true", "yes", "1"}, {"false", "no", "0", "", "null", "none"}


def candidate_from(item: Any, index: int = 0) -> Candidate:
    """One fact of the answer → a Candidate, or a rejected one that says which field broke the schema.

    Values a model wrote in another JSON type are read for what they say: a number or boolean given as
    a string ("0.9", "true"), a worded confidence ("high"), a percentage (90), a number as the object
    (an age), a date to the month ("March 2027", "2027-03") or the day.
    """
    where = f"fact {index + 1}"
    if not isinstance(item, dict):
        return Candidate(predicate="", object="", rejected=f"{where} is {_json_type(item)}, not an object")
    for name in ("predicate", "object"):
        if item.get(name) is None:
            return _rejected(item, f"{where} has no {name!r}")
    values = {k: (item[k] if item.get(k) is not None else v) for k, v in _OPTIONAL_DEFAULTS.items()}
    values.update(predicate=item["predicate"], object=item["object"])
    if isinstance(values["object"], (int, float)) and not isinstance(values["object"], bool):
        values["object"] = f"{values['object']:g}" if isinstance(values["object"], float) else str(values["object"])
    for name in _STRINGS:
        if not isinstance(values[name], str):
            return _rejected(item, f"{where}: {name!r} must be a string, not {_json_type(values[name])}")
    for name in ("object_is_entity", "ends", "needs_known_entity"):
        value = values[name]
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            value = values[name] = value.strip().lower() in _TRUE
        if not isinstance(value, bool):
            return _rejected(item, f"{where}: {name!r} must be true or false, not {_json_type(value)}")
    confidence = _number(values["confidence"])
    if confidence is None:
        return _rejected(item, f"{where}: 'confidence' must be a number, not {_json_type(values['confidence'])}")
    values["confidence"] = confidence / 100 if 1 < confidence <= 100 else confidence
    etype = item.get("entity_type")
    if etype is not None and not isinstance(etype, str):
        return _rejected(item, f"{where}: 'entity_type' must be a string or null, not {_json_type(etype)}")
    values["entity_type"] = etype.strip().upper() or None if isinstance(etype, str) else None
    for name in ("valid_at", "valid_until"):
        raw = item.get(name)
        if raw is not None and not isinstance(raw, str):
            return _rejected(item, f"{where}: {name!r} must be an ISO 8601 string or null, not {_json_type(raw)}")
        try:
            values[name] = read_time(raw, name)
        except InvalidTime:
            return _rejected(item, f"{where}: {name!r} {raw!r} is not a date or ISO 8601 time")
    values["kind"] = stored_kind(values["kind"])
    return Candidate(**values)


def _number(value: Any) -> float | None:
    if isinstance(value, str):
        text = value.strip().lower().rstrip("%")
        if text in _WORDED_CONFIDENCE:
            return _WORDED_CONFIDENCE[text]
        try:
            value = float(text)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


_YEAR = re.compile(r"\b(?:1[89]|2\d)\d\d\b")
_UNSAID = {"", "null", "none", "unknown", "n/a", "na"}


def read_time(raw: str | None, field: str = "time") -> datetime | None:
    """A model's date: ISO 8601, or a date to the year, month or day in words or digits ("2027-03",
    "March 2027", "3 March 2027"); what it leaves out starts at the earliest (the 1st, midnight UTC).
    A date without a year is refused: the model is told to resolve relative dates itself."""
    if raw is None or raw.strip().lower() in _UNSAID:
        return None
    text = raw.strip()
    try:
        return timeutil.to_utc(text, field=field)
    except InvalidTime:
        pass
    if not _YEAR.search(text):
        raise InvalidTime(f"{field} {raw!r} has no year")
    try:
        when = dateparser.parse(text, default=datetime(2000, 1, 1))
    except (ValueError, OverflowError) as exc:
        raise InvalidTime(f"{field} {raw!r} is not a date") from exc
    return timeutil.to_utc(when, field=field)


def _rejected(item: dict, reason: str) -> Candidate:
    pred, obj = item.get("predicate"), item.get("object")
    return Candidate(predicate=pred if isinstance(pred, str) else "", object=obj if isinstance(obj, str) else "",
                     rejected=reason)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
             int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


# -- HTTP with retries ---------------------------------------------------------------------------
@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff for timeouts, unreachable servers, 429 and 5xx.

    ``attempts`` counts every try (3: the first and two retries). A ``Retry-After`` header is
    honoured up to ``max_delay``.
    """

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    statuses: frozenset[int] = field(default_factory=lambda: frozenset({408, 429, 500, 502, 503, 504, 529}))

    def __post_init__(self):
        if self.attempts < 1 or self.base_delay < 0 or self.max_delay < 0:
            raise ConfigError("RetryPolicy needs attempts >= 1 and delays >= 0")

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait after failed try number ``attempt`` (1-based)."""
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), self.max_delay)
            except ValueError:
                pass  # an HTTP date: fall back to our own schedule
        return min(self.base_delay * 2 ** (attempt - 1), self.max_delay)


class RequestRejected(ExtractionError):
    """The server answered with a 4xx that retrying cannot fix."""

    def __init__(self, message: str, status: int, body: str):
        super().__init__(message)
        self.status, self.body = status, body


@dataclass
class Answer:
    """What a provider got back: the payload to parse and what to send back if it is unusable."""

    payload: Any                     # a JSON string, or decoded JSON (a tool's input)
    raw: dict                        # the whole response body
    note: str = ""                   # e.g. "the answer was cut off at the token limit"
    problem: str = ""                # set when there is nothing to parse (no tool call, no content)
    truncated: bool = False          # the model hit the token limit: the last fact may be cut

    def __post_init__(self):
        if not self.truncated and isinstance(self.payload, str):
            body = _unfenced(self.payload)
            start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
            self.truncated = start >= 0 and looks_cut(body[start:])

    def complete_candidates(self) -> list[Candidate]:
        """The facts of a cut-off answer that arrived whole."""
        return [candidate_from(item, i) for i, item in enumerate(complete_facts(self.payload))]

    def candidates(self) -> list[Candidate]:
        if self.problem:
            raise MalformedOutput(self.problem)
        return parse_answer(self.payload)


class LLMExtractor(Extractor):
    """An extractor that asks a chat model; subclasses implement one provider's wire format."""

    wants_context = True
    provider = "llm"
    key_env_var = "KENNING_LLM_API_KEY"
    model_env_var = "KENNING_LLM_MODEL"
    base_url_env_var = "KENNING_LLM_BASE_URL"
    example_base_url = "https://api.example.com/v1"

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None, timeout: float = 30.0,
                 retry: RetryPolicy | None = None, prompt_version: str = PROMPT_VERSION,
                 max_tokens: int = DEFAULT_MAX_TOKENS, instructions: str = "system",
                 transport: httpx.BaseTransport | None = None):
        parts = urlsplit(base_url or "")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"{self.provider} base URL {base_url!r} is not an http(s) URL; "
                              f"set {self.base_url_env_var}, e.g. {self.example_base_url}")
        if not model:
            raise ConfigError(f"the {self.provider} extractor needs a model name: set {self.model_env_var}")
        if timeout is None or timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds, not {timeout!r}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
            raise ConfigError(f"max_tokens must be a positive whole number (KENNING_LLM_MAX_TOKENS), "
                              f"not {max_tokens!r}")
        if instructions not in INSTRUCTIONS:
            raise ConfigError(f"instructions must be one of {', '.join(INSTRUCTIONS)} (KENNING_LLM_INSTRUCTIONS), "
                              f"not {instructions!r}")
        self.max_tokens, self.instructions = max_tokens, instructions
        self.base_url, self.model, self.api_key, self.timeout = base_url.rstrip("/"), model, api_key, float(timeout)
        self.retry = retry or RetryPolicy()
        self.prompt = load_prompt(prompt_version)
        self.prompt_version = self.prompt.version
        self.name = f"{self.provider}:{model}:{self.prompt_version}"
        self._client = httpx.Client(timeout=self.timeout, transport=transport)

    # -- the shared loop ---------------------------------------------------------------------
    def extract(self, text: str, *, at: datetime, context: list[str] | None = None,
                known_entities: list[str] | None = None) -> list[Candidate]:
        found = self._extract(text, at=at, context=context, known_entities=known_entities)
        if _version_number(self.prompt_version) >= _version_number(ENDS_IN_VALID_UNTIL):
            # From extract_v3 an ending's end is its valid_until (null: the message time) and its valid_at
            # is when it had started; the candidate says so explicitly, so the write path never reads that
            # start as the end (as it must for extract_v2 and the offline extractor, which date an ending
            # by its valid_at).
            for c in found:
                if c.ends and c.valid_until is None:
                    c.valid_until = timeutil.to_utc(at)
        return found

    def _extract(self, text: str, *, at: datetime, context: list[str] | None,
                 known_entities: list[str] | None) -> list[Candidate]:
        messages = [{"role": "user", "content": self.prompt.render(text, at=at, context=context,
                                                                   known_entities=known_entities)}]
        answer = self._complete(messages)
        if answer.truncated:
            return self._after_cut(messages, answer)
        try:
            return answer.candidates()
        except MalformedOutput as first:
            # The details quote the model's answer, which may quote the user: DEBUG only.
            log.info("%s: unusable answer; asking once more", self.name)
            log.debug("%s: unusable answer: %s", self.name, first)
            messages = messages + self._follow_up(answer, self._reask_text(first, answer))
        answer = self._complete(messages)
        if answer.truncated:
            return self._after_cut(messages, answer)
        try:
            return answer.candidates()
        except MalformedOutput as second:
            raise ExtractionError(
                f"{self.provider} model {self.model!r} gave unusable output twice (asked again once with the "
                f"error): {second}{'; ' + answer.note if answer.note else ''}. Check that the model can follow "
                f"JSON instructions, or try a larger model") from second

    def _after_cut(self, messages: list[dict], answer: Answer) -> list[Candidate]:
        """An answer cut off at the token limit: ask the same question again with room to finish (up to
        :data:`MAX_TOKENS_CEILING`); if that answer is cut too, keep every fact that arrived whole in the
        longer of the two. The complete facts before a cut are never lost; a cut before the first fact was
        whole is an :class:`ExtractionError` (the message is kept, to be mined again)."""
        kept = answer.complete_candidates()
        room = min(max(self.max_tokens, 1) * 4, max(MAX_TOKENS_CEILING, self.max_tokens))
        if room > self.max_tokens:
            log.info("%s: the answer was cut off at %d tokens; asking again with %d", self.name, self.max_tokens,
                     room)
            again = self._complete(messages, max_tokens=room)
            if not again.truncated:
                try:
                    return again.candidates()
                except MalformedOutput:
                    pass
            more = again.complete_candidates()
            kept = more if len(more) > len(kept) else kept
        if not kept:
            how = answer.note or "the JSON stops part-way"
            raise ExtractionError(f"{self.provider} model {self.model!r} was cut off before any fact was whole, "
                                  f"also when asked again with room for {room} tokens ({how}); raise "
                                  f"KENNING_LLM_MAX_TOKENS")
        log.warning("%s: the answer was cut off at the token limit; kept the %d fact%s that arrived whole "
                    "(raise KENNING_LLM_MAX_TOKENS)", self.name, len(kept), "" if len(kept) == 1 else "s")
        return kept

    @staticmethod
    def _reask_text(error: MalformedOutput, answer: Answer) -> str:
        note = f" ({answer.note})" if answer.note else ""
        return (f"That answer could not be used: {error}{note}. Answer again with only the JSON object "
                f"{{\"facts\": [...]}}, every field of every fact present, exactly as the instructions say.")

    # -- provider hooks -------------------------------------------------------------------------
    def _complete(self, messages: list[dict], max_tokens: int | None = None) -> Answer:
        """Send the conversation (with an answer cap of ``max_tokens``, default the configured one),
        return the model's answer."""
        raise NotImplementedError

    def _follow_up(self, answer: Answer, error: str) -> list[dict]:
        """The messages that show the model its unusable answer and the error."""
        raise NotImplementedError

    def _headers(self) -> dict[str, str]:
        return {}

    def _is_refusal(self, response: httpx.Response) -> bool:
        """True: an error that a retry of the same request cannot fix, whatever its status (e.g. a server
        that answers 500 to a response format it lacks). The provider steps down instead."""
        return False

    def _arrange(self, messages: list[dict], instructions: str) -> tuple[str | None, list[dict]]:
        """The system text (None: no system message) and the messages, with ``instructions`` placed as
        :attr:`instructions` says: in the system message, at the head of the first user turn, or both.

        Some chat templates (several llama.cpp / GGUF ones) drop the system message; "user" still
        reaches the model there.
        """
        if self.instructions == "system":
            return instructions, messages
        first = dict(messages[0])
        first["content"] = f"{instructions}\n\n---\n\n{first['content']}"
        return (instructions if self.instructions == "both" else None), [first, *messages[1:]]

    # -- HTTP ---------------------------------------------------------------------------------
    def _post(self, url: str, body: dict) -> dict:
        """POST JSON, retrying what a retry can fix; the decoded response or an ExtractionError."""
        failure = ""
        for attempt in range(1, self.retry.attempts + 1):
            retry_after = None
            try:
                response = self._client.post(url, json=body, headers=self._headers())
            except httpx.TimeoutException:
                failure = f"no answer within {self.timeout:g} s (raise KENNING_LLM_TIMEOUT for slow models)"
            except httpx.TransportError as exc:
                failure = f"cannot reach {url}: {exc or type(exc).__name__}"
            else:
                if response.status_code < 400:
                    return self._decode(response)
                if response.status_code not in self.retry.statuses or self._is_refusal(response):
                    raise self._rejected(response)
                failure = f"HTTP {response.status_code}: {_snippet(response.text)}"
                retry_after = response.headers.get("retry-after")
            if attempt < self.retry.attempts:
                pause = self.retry.delay(attempt, retry_after)
                brief = failure.split(":", 1)[0] if failure.startswith("HTTP") else failure   # bodies: DEBUG only
                log.info("%s: try %d failed (%s); retrying in %.2f s", self.name, attempt, brief, pause)
                log.debug("%s: try %d failed: %s", self.name, attempt, failure)
                time.sleep(pause)
        raise ExtractionError(f"{self.provider} request to {url} failed after {self.retry.attempts} "
                              f"attempt{'s' if self.retry.attempts > 1 else ''}: {failure}")

    def _decode(self, response: httpx.Response) -> dict:
        try:
            data = response.json()
        except ValueError as exc:
            raise ExtractionError(f"{self.provider} server at {response.request.url} answered HTTP "
                                  f"{response.status_code} with a body that is not JSON: "
                                  f"{_snippet(response.text)}; is {self.base_url_env_var} the API root?") from exc
        if not isinstance(data, dict):
            raise ExtractionError(f"{self.provider} server answered {_json_type(data)}, not a JSON object")
        return data

    def _rejected(self, response: httpx.Response) -> RequestRejected:
        status, body = response.status_code, response.text
        if status in (401, 403):
            hint = f"the server refused the API key: set {self.key_env_var} to a valid key"
        elif status == 404:
            hint = (f"nothing at {response.request.url}, or no model {self.model!r} there: check "
                    f"{self.base_url_env_var} and {self.model_env_var}")
        else:
            hint = "the server rejected the request"
        return RequestRejected(f"{self.provider} HTTP {status}: {hint} ({_snippet(body)})", status, body)

    def close(self) -> None:
        self._client.close()


def _version_number(version: str) -> int:
    """extract_v12 → 12: prompt versions compare as numbers, not as text."""
    digits = re.search(r"(\d+)$", version)
    return int(digits.group(1)) if digits else 0


def endpoint(base_url: str, path: str, *, version_in_base: bool) -> str:
    """The URL of ``path`` (e.g. "/v1/messages") under ``base_url``.

    A base that already ends in the endpoint is used as is. ``version_in_base``: the provider's
    convention is a base URL that includes the API version (OpenAI's ".../v1"), so a base with a
    path gets only the rest ("chat/completions"); a bare host still gets the version.
    """
    base = base_url.rstrip("/")
    version, _, rest = path.lstrip("/").partition("/")
    if base.endswith("/" + rest):
        return base
    base_path = urlsplit(base).path
    if base_path.endswith("/" + version) or (version_in_base and base_path not in ("", "/")):
        return f"{base}/{rest}"
    return f"{base}/{version}/{rest}"


def _snippet(text: str) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= _SNIPPET else text[:_SNIPPET] + "…"


# -- registry: how Memory(extractor="openai") finds a class --------------------------------------
def build_extractor(name: str, settings: Settings) -> Extractor:
    """The model-backed extractor registered as ``name``, configured from ``settings``."""
    if name == "openai":
        from .openai import OpenAIExtractor

        return OpenAIExtractor.from_settings(settings)
    if name == "anthropic":
        from .anthropic import AnthropicExtractor

        return AnthropicExtractor.from_settings(settings)
    raise ConfigError(f"unknown extractor {name!r}; pass 'parse', 'learned', 'openai', 'anthropic' or an Extractor")


def missing_settings(provider: str, pairs: list[tuple[str, Any, str]]) -> None:
    """ConfigError naming every unset variable: ``pairs`` is (env var, value, example)."""
    missing = [(var, example) for var, value, example in pairs if not value]
    if missing:
        how = "; ".join(f"{var} (e.g. {example})" for var, example in missing)
        raise ConfigError(f"the {provider} extractor is not configured: set {how}")
