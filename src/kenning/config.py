"""Settings as typed values; the environment is read only in :meth:`Settings.from_env`."""
from __future__ import annotations

import os
from pathlib import Path

from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from .errors import ConfigError


class Settings(BaseModel):
    home: Path = Field(default_factory=lambda: Path("~/.kenning").expanduser())
    project: str = "default"
    environment: str = "default"
    max_text_chars: int = Field(100_000, gt=0)
    entity_threshold: float = Field(0.88, ge=0, le=1)
    dedup_threshold: float = Field(0.9, ge=0, le=1)
    predicate_threshold: float = Field(0.85, ge=0, le=1)
    retrieval_floor: float = Field(0.3, ge=0, le=1)
    context_budget_chars: int = Field(2000, gt=0)
    context_budget_unit: Literal["chars", "tokens"] = "chars"
    extract_context_turns: int = Field(4, ge=0, le=50)   # the user's previous turns a model extractor reads
    max_note_chars: int = Field(100_000, gt=0)
    max_core_chars: int = Field(100_000, gt=0)   # one core file's max_content
    permission_read: str = "ai.read"            # owner, admin, member
    permission_admin: str = "ai.admin"          # owner, admin: change organization memory
    max_render: int = Field(8_000, gt=0)         # core.render cuts here, with a marker
    max_body_bytes: int = Field(4_000_000, gt=0)  # the server refuses larger request bodies (import excepted)
    max_import_bytes: int = Field(1 << 30, gt=0)   # /v1/import streams up to this many bytes
    # connections (kenning serve): a request's head must arrive within header_timeout seconds; at most
    # max_connections open (the longest-waiting idle one is closed for a new one); max_requests run at once
    header_timeout: float = Field(10.0, gt=0)
    max_connections: int = Field(2_048, gt=0)
    max_requests: int = Field(512, gt=0)
    # quotas and rate limits (generous defaults; per tenant)
    max_open_jobs: int = Field(1_000, gt=0)        # turns one dataset may have waiting; more get 429
    max_core_versions: int = Field(100, gt=0)      # versions kept per core file (the newest)
    max_core_files: int = Field(1_000, gt=0)       # core files per dataset namespace
    max_dataset_chars: int = Field(200_000_000, gt=0)   # characters one dataset stores (messages, notes, facts,
                                                        # core-file versions, turns); more get 507
    rate_limit_user: str = "1200/minute"           # requests per user token's dataset (limits' notation)
    rate_limit_key: str = "12000/minute"           # requests per API key's project
    rate_limit_storage: str = "async+memory://"    # per process; "async+redis://host" shares them across servers
    public_docs: bool = False   # serve /docs and /openapi.json without credentials even when keys exist
    note_dedupe_threshold: float = Field(0.92, gt=0, le=1)
    max_notes_per_call: int = Field(1_000, gt=0)   # texts one save_extracted call may carry
    one_value_predicates: tuple[str, ...] = ()
    many_value_predicates: tuple[str, ...] = ()
    onnx_threads: int = Field(1, ge=1)
    # PostgreSQL: an HNSW index over every dataset's live facts for cross-dataset search. Off by default:
    # per-dataset recall never uses it, and keeping it costs each fact write about a millisecond.
    ann_index: bool = False
    # PostgreSQL: recall's signal reads side by side on pooled connections (None: when the machine has
    # four or more cores; on two, one after another measured faster)
    parallel_reads: bool | None = None
    # PostgreSQL read replicas (libpq URLs): recall and listings read there, with read-your-writes
    replicas: tuple[str, ...] = ()
    replica_max_lag_seconds: float = Field(5.0, gt=0)   # a replica further behind than this is skipped
    replica_wait_seconds: float = Field(0.1, ge=0)      # how long a read waits for a replica to replay the
                                                        # caller's own write before it reads the primary
    # model-backed extractors (Memory(extractor="openai" | "anthropic")); keys stay out of reprs
    llm_base_url: str | None = None          # an OpenAI-compatible API root, e.g. https://api.openai.com/v1
    llm_model: str | None = None
    # Memory()'s extractor when none is passed: the rules and the trained extractor together (issue 32's
    # measurements: more of what people say heard, on every outside set, for a few points of precision)
    extractor: Literal["parse", "learned", "combined", "openai", "anthropic"] = "combined"
    llm_api_key: str | None = Field(None, repr=False)
    llm_timeout: float = Field(30.0, gt=0)   # seconds per request
    llm_max_tokens: int = Field(2048, gt=0)  # the answer's token cap (max_tokens), both providers
    # structured output of the OpenAI-compatible extractor: "auto" tries json_schema, then json_object
    # (with the schema, as llama.cpp and vLLM take it), then the schema in the prompt alone
    llm_response_format: Literal["auto", "json_schema", "json_object", "none"] = "auto"
    # where the extraction instructions go: the system message, the user turn (for chat templates that
    # drop the system message), or both
    llm_instructions: Literal["system", "user", "both"] = "system"
    anthropic_base_url: str = "https://api.anthropic.com"
    anthropic_api_key: str | None = Field(None, repr=False)
    anthropic_model: str | None = None       # else llm_model
    worker_threads: int = Field(1, ge=0)       # embedded queue workers (0: leave jobs to `kenning worker`)
    worker_batch: int = Field(16, ge=1, le=256)  # jobs a worker claims at once: one parser and one embedding batch
    job_lease_seconds: float = Field(60.0, gt=0)
    extract_budget_seconds: float = Field(10.0, gt=0)   # mining one message stops here (the message is kept)
    # user tokens: the lifetime when a mint names none, and the longest one may ask for
    token_seconds: float = Field(3600.0, gt=0)
    token_max_seconds: float = Field(86_400.0, gt=0)
    session_seconds: float = Field(12 * 3600.0, gt=0)   # a dashboard sign-in lasts this long
    # after an erasure, make its bytes leave the store's files at once ("immediate": SQLite merges its
    # keyword indexes and truncates the WAL; PostgreSQL rewrites the affected tables with VACUUM FULL,
    # which locks each for every tenant while it runs) or at the next `kenning compact` ("deferred")
    erase_compaction: Literal["immediate", "deferred"] = "immediate"

    @property
    def default_db_path(self) -> Path:
        return self.home / "kenning.db"

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides) -> "Settings":
        """Settings from ``KENNING_*`` variables (read now, not at import), then ``overrides``."""
        env = os.environ if environ is None else environ
        values: dict = {}
        if env.get("KENNING_HOME"):
            values["home"] = Path(env["KENNING_HOME"]).expanduser()
        for name in ("project", "environment", "max_text_chars", "entity_threshold", "dedup_threshold",
                     "predicate_threshold", "retrieval_floor", "context_budget_chars", "context_budget_unit", "extract_context_turns", "onnx_threads",
                     "ann_index", "parallel_reads", "replica_max_lag_seconds", "replica_wait_seconds",
                     "worker_threads", "worker_batch", "job_lease_seconds", "extract_budget_seconds",
                     "token_seconds", "token_max_seconds", "session_seconds", "erase_compaction",
                     "max_note_chars", "note_dedupe_threshold", "max_notes_per_call", "max_core_chars", "max_render", "max_body_bytes", "max_import_bytes", "header_timeout", "max_connections", "max_requests", "public_docs", "max_open_jobs", "max_core_versions", "max_core_files", "max_dataset_chars",
                     "rate_limit_user", "rate_limit_key", "rate_limit_storage", "permission_read", "permission_admin", "llm_base_url", "llm_model", "llm_api_key",
                     "llm_timeout", "llm_max_tokens", "extractor", "llm_response_format", "llm_instructions",
                     "anthropic_base_url", "anthropic_api_key", "anthropic_model"):
            key = f"KENNING_{name.upper()}"
            if env.get(key):
                values[name] = env[key]
        for name in ("one_value_predicates", "many_value_predicates", "replicas"):
            key = f"KENNING_{name.upper()}"
            if env.get(key):
                values[name] = tuple(p.strip() for p in env[key].split(",") if p.strip())
        values.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls(**values)
        except ValidationError as exc:
            raise ConfigError(f"invalid kenning setting: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}") from exc
