"""The first held-out set of the model path, scored: its checks over the stand-in's answers replayed.

bench/data/llm-heldout-1 holds 30 messages and 2 conversations with 102 machine-checkable expectations
(``inputs.json``, written on 2026-12-02 by a helper who read no code, data or tests), kenning's extract_v3
requests for them (``requests.json``), and the answers a second helper wrote as the model, reading only the
requests (``answers.json``). It was scored once, at the end of issue 30 (99/102 checks; the landed write path
78/102 on the same answers); it is a development set since. Compare checkouts with PYTHONPATH:

    .venv/bin/python bench/llm_heldout.py
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from llm_server import ScriptedServer, message_of, openai_reply, error_reply
from kenning import Memory
from kenning.extract.openai import OpenAIExtractor
H = Path(__file__).resolve().parent / "data" / "llm-heldout-1"
inputs = json.loads((H/"inputs.json").read_text())
answers = json.loads((H/"answers.json").read_text())
def respond(r):
    t = message_of(r)
    return openai_reply(answers[t]) if t in answers else error_reply(400, "none")
server = ScriptedServer(respond).start()
ex = OpenAIExtractor(base_url=server.url + "/v1", model="stand-in", response_format="json_schema")
mem = Memory(":memory:", embedder=None, extractor=ex)
def hay(f): return f"{f.object} {f.text} {f.predicate}".lower()
def facts(d, **kw):
    out, off = [], 0
    while True:
        p = mem.list_facts(d, limit=100, offset=off, **kw)
        out += p.facts; off += 100
        if off >= p.total: return out
results = []
def check(d, c):
    if c.get("nothing_stored"):
        return facts(d, include_invalidated=True) == []
    if "history_has" in c:
        return any(c["history_has"].lower() in hay(f) for f in facts(d, include_invalidated=True))
    fs = facts(d, as_of=c["as_of"])
    if "has" in c:
        return any(c["has"].lower() in hay(f) for f in fs)
    return not any(c["lacks"].lower() in hay(f) for f in fs)
for m in inputs["messages"]:
    mem.add(m["text"], dataset=m["id"], at=m["at"])
    for c in m["checks"]:
        results.append((m["id"], c, check(m["id"], c)))
for conv in inputs["conversations"]:
    for i, t in enumerate(conv["turns"]):
        mem.add(t["text"], dataset=conv["id"], at=t["at"], role=t["role"], chat=conv["id"], message_id=f"{conv['id']}-{i+1:02d}")
    for c in conv["checks"]:
        results.append((conv["id"], c, check(conv["id"], c)))
ok = sum(r[2] for r in results)
print(f"checks held: {ok}/{len(results)}")
msg_ids = {m["id"] for m in inputs["messages"]}
whole = {d: all(r[2] for r in results if r[0] == d) for d in {r[0] for r in results}}
print(f"messages whole: {sum(v for d, v in whole.items() if d in msg_ids)}/{len(msg_ids)}; conversations whole: "
      f"{sum(v for d, v in whole.items() if d not in msg_ids)}/{len(whole) - len(msg_ids)}")
for d, c, good in results:
    if not good:
        print("  FAIL", d, c)
mem.close(); server.stop()
