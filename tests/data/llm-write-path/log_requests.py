#!/usr/bin/env python3
"""Log the requests kenning's OpenAI-compatible extractor sends for every user turn of inputs.json.

Each message and conversation goes through a real Memory (SQLite in memory, no embedder) whose model is a
recording server on loopback that answers every request with no facts; what the model would have been
asked (the user turn of each request: message time, known entities, earlier user turns, the message) is
written to requests.json, with the prompt's instructions once. The stand-in model's answers are then
written by people who have not read the write path, into answers-*.json, keyed by the message text.

    .venv/bin/python tests/data/llm-write-path/log_requests.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))   # tests/, for llm_server

from llm_server import ScriptedServer, message_of, openai_reply  # noqa: E402

from kenning import Memory  # noqa: E402
from kenning.extract.llm import load_prompt  # noqa: E402
from kenning.extract.openai import OpenAIExtractor  # noqa: E402


def main() -> int:
    inputs = json.loads((HERE / "inputs.json").read_text())
    server = ScriptedServer(lambda request: openai_reply({"facts": []})).start()
    try:
        extractor = OpenAIExtractor(base_url=server.url + "/v1", model="stand-in", response_format="json_schema")
        with Memory(":memory:", embedder=None, extractor=extractor) as mem:
            for m in inputs["messages"]:
                mem.add(m["text"], dataset=m["id"], at=m["at"])
            for c in inputs["conversations"]:
                for i, turn in enumerate(c["turns"]):
                    mem.add(turn["text"], dataset=c["id"], at=turn["at"], role=turn["role"], chat=c["id"],
                            message_id=f"{c['id']}-{i + 1:02d}")
    finally:
        server.stop()
    requests = []
    for r in server.requests:
        user = next(m["content"] for m in r.body["messages"] if m["role"] == "user")
        requests.append({"message": message_of(r), "request": user})
    out = {"prompt_version": load_prompt().version, "instructions": load_prompt().system, "requests": requests}
    (HERE / "requests.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(requests)} requests written to {HERE / 'requests.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
