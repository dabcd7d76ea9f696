"""The stand-in model's answers (tests/data/llm-write-path) replayed through the write path.

Every user turn of the 48 messages and 3 conversations gets the answer that writers who had not read the
write path wrote for kenning's logged extract_v3 request, served by a scripted OpenAI-compatible server on
loopback; then the same answers rewritten the way sloppier models write JSON (prose around it, a fence
and a comment, single quotes, numbers as strings, facts as an object). Counts per variant: messages whose
extraction raised, messages kept, facts stored, candidates rejected, endings dropped for want of a live
fact, facts with an empty window, facts superseded by their own message. Compare two checkouts by
putting the other one's src first on PYTHONPATH:

    .venv/bin/python bench/llm_replay.py
    PYTHONPATH=/path/to/other/src .venv/bin/python bench/llm_replay.py
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from llm_server import ScriptedServer, message_of, openai_reply  # noqa: E402

from kenning import Memory  # noqa: E402
from kenning.extract.openai import OpenAIExtractor  # noqa: E402

DATA = ROOT / "tests" / "data" / "llm-write-path"
SLOPPY = {
    "clean": None,
    "prose around it": lambda a: f"Sure! Here are the facts I found:\n{json.dumps(a)}\nLet me know if you need more.",
    "fence + comment": lambda a: f"```json\n{json.dumps(a, indent=1)}\n```\n// dates resolved against the message time",
    "single quotes": lambda a: repr(a).replace("None", "null").replace("True", "true").replace("False", "false"),
    "numbers as strings": lambda a: {"facts": [{**f, "confidence": str(f["confidence"]), "ends": str(f["ends"]).lower()}
                                               for f in a["facts"]]},
    "facts as an object": lambda a: {"facts": {str(i): f for i, f in enumerate(a["facts"])}},
}


def replay(inputs: dict, answers: dict, wrap) -> dict:
    server = ScriptedServer(lambda r: openai_reply(wrap(answers[message_of(r)]) if wrap else answers[message_of(r)]))
    server.start()
    extractor = OpenAIExtractor(base_url=server.url + "/v1", model="stand-in", response_format="json_schema")
    mem = Memory(":memory:", embedder=None, extractor=extractor)
    stats = dict(user_turns=0, raised=0, messages_kept=0, facts_stored=0, rejected=0, endings_dropped=0,
                 empty_windows=0, superseded_by_own_message=0)

    def add(text, dataset, **kw):
        stats["user_turns"] += kw.get("role", "user") == "user"
        try:
            r = mem.add(text, dataset=dataset, **kw)
        except Exception:  # noqa: BLE001 - counted: the landed write path raised on unusable answers
            stats["raised"] += 1
            return
        stats["rejected"] += r.candidates_rejected
        stats["endings_dropped"] += sum("nothing live to end" in x for x in r.rejections)
        if r.memory_ids:
            own = mem.store.get_facts(mem.services.scope(dataset, None, None), r.memory_ids)
            stats["superseded_by_own_message"] += sum(f.superseded_by in r.memory_ids for f in own)

    datasets = []
    for m in inputs["messages"]:
        add(m["text"], m["id"], at=m["at"])
        datasets.append(m["id"])
    for c in inputs["conversations"]:
        for i, t in enumerate(c["turns"]):
            add(t["text"], c["id"], at=t["at"], role=t["role"], chat=c["id"], message_id=f"{c['id']}-{i + 1:02d}")
        datasets.append(c["id"])
    for d in datasets:
        facts = mem.list_facts(d, limit=100, include_invalidated=True).facts
        stats["facts_stored"] += len(facts)
        stats["empty_windows"] += sum(f.valid_until is not None and f.valid_until <= f.valid_at for f in facts)
        stats["messages_kept"] += sum(c.messages for c in mem.messages.chats(d).chats)
    mem.close()
    server.stop()
    return stats


def main() -> int:
    inputs = json.loads((DATA / "inputs.json").read_text())
    answers = {**json.loads((DATA / "answers-messages.json").read_text()),
               **json.loads((DATA / "answers-conversations.json").read_text())}
    print(f"{sum(len(a['facts']) for a in answers.values())} answered facts for "
          f"{len(answers)} user turns (kenning from {Path(sys.modules['kenning'].__file__).parent})")
    for name, wrap in SLOPPY.items():
        print(f"{name:20} {json.dumps(replay(inputs, answers, wrap))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
