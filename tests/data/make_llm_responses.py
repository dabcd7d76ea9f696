#!/usr/bin/env python3
"""Write tests/data/llm-scenario-responses.json: what a scripted model answers for each scenario turn.

The answers are the offline ParseExtractor's candidates for every user turn of the scenarios, written in
the model's JSON format ({"facts": [...]}, every schema field present) and keyed by the turn's text.
Run once, commit the output; the tests read the file and never call the ParseExtractor themselves:

    .venv/bin/python tests/data/make_llm_responses.py [SCENARIOS.jsonl] [OUT.json]
"""
from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

from kenning.extract.llm import FACT_FIELDS
from kenning.extract.parse import ParseExtractor

HERE = Path(__file__).parent


def _at(value: str | None) -> datetime:
    if value is None:
        raise SystemExit("every scenario turn needs an 'at' for a stable answer")
    at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def answer(text: str, at: datetime) -> dict:
    facts = []
    for c in ParseExtractor().extract(text, at=at):
        fact = {name: getattr(c, name) for name in FACT_FIELDS}
        fact["valid_at"], fact["valid_until"] = _iso(c.valid_at), _iso(c.valid_until)
        facts.append(fact)
    return {"facts": facts}


def main(argv: list[str]) -> int:
    scenarios = Path(argv[0]) if argv else HERE / "scenarios-dev.jsonl"
    out = Path(argv[1]) if len(argv) > 1 else HERE / "llm-scenario-responses.json"
    answers: dict[str, dict] = {}
    for line in scenarios.read_text().splitlines():
        if not line.strip():
            continue
        scenario = json.loads(line)
        for turn in scenario["turns"]:
            if turn.get("role", "user") != "user":
                continue  # never mined, never sent to a model
            got = answer(turn["content"], _at(turn.get("at")))
            if answers.setdefault(turn["content"], got) != got:
                raise SystemExit(f"scenario {scenario['id']}: {turn['content']!r} gives different answers at "
                                 "different times; key the fixture by time too")
    out.write_text(json.dumps(answers, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"wrote {len(answers)} answers to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
