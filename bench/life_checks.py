"""Life stories check by check: the share of each story's checks that hold, per extractor, side by side.

``../shared/tools/check_scenarios.py`` stops a story at its first failing check, which says whether a
story is whole but not how much of it is right. This runs each story once per extractor and counts every
``live_has``, ``live_lacks``, ``as_of_has``, ``as_of_lacks`` and ``valid_at_near`` check on its own, with
the same matching (a needle's alternatives against the fact's object, text and predicate). Run:

    .venv/bin/python bench/life_checks.py [STORIES.jsonl ...] [--extractors parse,learned,combined]
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import write  # noqa: E402

DEFAULT = [ROOT.parent / "shared" / "data" / "life-stories-dev.jsonl",
           ROOT / "data" / "paraphrases" / "life-stories-dev-paraphrased.jsonl"]


def _time(value: str) -> datetime:
    when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _hay(fact) -> str:
    return " ".join(str(x) for x in (fact.object, fact.text, fact.predicate) if x).lower()


def _hit(facts, needle: str) -> bool:
    return any(alt.strip().lower() in _hay(f) for f in facts for alt in needle.split("|"))


def checks(mem, dataset: str, expect: dict) -> list[tuple[str, bool]]:
    """(check, holds) for each check of a story whose turns are in ``dataset``."""
    live = mem.list_facts(dataset, limit=100).facts
    out = [(f"live_has {n}", _hit(live, n)) for n in expect.get("live_has", [])]
    out += [(f"live_lacks {n}", not _hit(live, n)) for n in expect.get("live_lacks", [])]
    for when, needles in expect.get("as_of_has", {}).items():
        then = mem.list_facts(dataset, limit=100, as_of=_time(when)).facts
        out += [(f"as_of_has {when} {n}", _hit(then, n)) for n in needles]
    for when, needles in expect.get("as_of_lacks", {}).items():
        then = mem.list_facts(dataset, limit=100, as_of=_time(when)).facts
        out += [(f"as_of_lacks {when} {n}", not _hit(then, n)) for n in needles]
    for needle, (date, days) in expect.get("valid_at_near", {}).items():
        target = _time(date + "T00:00:00Z")
        hits = [f for f in live if _hit([f], needle)]
        out.append((f"valid_at_near {needle}", any(abs(f.valid_at - target) <= timedelta(days=days) for f in hits)))
    return out


def main(argv=None) -> dict:
    from kenning import Memory

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stories", nargs="*", type=Path, default=DEFAULT)
    ap.add_argument("--extractors", default="parse,learned,combined")
    ap.add_argument("--name", default="life_checks")
    args = ap.parse_args(argv)
    results: dict = {}
    for path in args.stories:
        stories = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for name in args.extractors.split(","):
            held = total = whole = 0
            failing = []
            with Memory(":memory:", extractor=name) as mem:
                for story in stories:
                    dataset = story["id"]
                    for turn in story["turns"]:
                        mem.add(turn["content"], dataset, at=_time(turn["at"]), role=turn.get("role", "user"))
                    found = checks(mem, dataset, story["expect"])
                    held += sum(ok for _, ok in found)
                    total += len(found)
                    whole += all(ok for _, ok in found)
                    failing += [f"{dataset}: {what}" for what, ok in found if not ok]
            results.setdefault(path.name, {})[name] = {"checks": total, "hold": round(held / total, 3),
                                                      "stories_whole": f"{whole}/{len(stories)}", "failing": failing}
            print(f"{path.name:45} {name:9} {held}/{total} checks hold ({held / total:.3f}), "
                  f"{whole}/{len(stories)} stories whole", flush=True)
    write(args.name, {"results": results})
    return results


if __name__ == "__main__":
    main()
