"""Which of the rule extractor's word lists earn their place: each one emptied in turn, the rules scored on
the labelled corpus's test split (which the rules were never written against), side by side with all of
them in place.

A word list whose removal costs neither precision nor recall there holds no general knowledge that this
split can see (it may still be what one dev sentence needed). Lists are the module-level sets, tuples and
dicts of words in ``kenning.extract.parse``; emptying one empties it in every module that imported it.
Parses are made once and reused, so a run takes minutes. Run:

    .venv/bin/python bench/parse_ablation.py [--split test] [--only NAME,NAME]
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from common import write  # noqa: E402
from extract_compare import corpus_items, score  # noqa: E402

MODULES = ("words", "extractor", "clauses", "frames", "phrases", "relations", "settings", "nlp", "facts")


class _CachedParses:
    """The parser's docs, made once per text and handed out as copies (the rules may change a doc)."""

    def __init__(self, nlp):
        self.nlp, self.saved = nlp, {}

    def pipe(self, texts, batch_size=64):
        from spacy.tokens import Doc

        texts = list(texts)
        todo = [t for t in dict.fromkeys(texts) if t not in self.saved]
        for text, doc in zip(todo, self.nlp.pipe(todo, batch_size=batch_size)):
            self.saved[text] = doc.to_bytes()
        return (Doc(self.nlp.vocab).from_bytes(self.saved[t]) for t in texts)

    def __getattr__(self, name):
        return getattr(self.nlp, name)


def word_lists() -> dict[str, list[tuple[object, str]]]:
    """NAME -> [(module, attribute)] for each module-level collection of strings, by identity."""
    found: dict[int, tuple[str, list]] = {}
    for short in MODULES:
        module = importlib.import_module(f"kenning.extract.parse.{short}")
        for attr, value in vars(module).items():
            if attr.startswith("__") or not isinstance(value, (frozenset, set, tuple, list, dict)) or not value:
                continue
            if not all(isinstance(v, str) for v in value):
                continue
            name, places = found.setdefault(id(value), (f"{short}.{attr}", []))
            places.append((module, attr))
    return {name: places for name, places in found.values()}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="test", choices=("test", "calibration"))
    ap.add_argument("--only", default="", help="comma-separated list names (default: all)")
    args = ap.parse_args(argv)
    from kenning.extract.parse import ParseExtractor

    items = corpus_items(args.split)
    extractor = ParseExtractor()
    extractor._nlp = _CachedParses(extractor._nlp)

    def run() -> dict:
        s = score(extractor, items)
        return {"recall": s["recall"], "precision": s["precision"], "candidates": s["candidates"]}

    base = run()
    print(f"all lists      R {base['recall']:.3f}  P {base['precision']:.3f}  ({base['candidates']} facts)", flush=True)
    lists = word_lists()
    wanted = [n for n in lists if not args.only or n in args.only.split(",")]
    rows = {}
    for name in wanted:
        places = lists[name]
        original = getattr(*places[0])
        for module, attr in places:
            setattr(module, attr, type(original)())
        try:
            got = run()
        except Exception as e:        # a table the rules cannot do without (a mapping they look up)
            rows[name] = {"size": len(original), "error": f"{type(e).__name__}: {e}"}
            print(f"{name:40s} size {len(original):4d}  needed: {type(e).__name__}", flush=True)
            continue
        finally:
            for module, attr in places:
                setattr(module, attr, original)
        got.update(size=len(original), d_recall=round(got["recall"] - base["recall"], 3),
                   d_precision=round(got["precision"] - base["precision"], 3),
                   d_facts=got["candidates"] - base["candidates"])
        rows[name] = got
        print(f"{name:40s} size {len(original):4d}  R {got['d_recall']:+.3f}  P {got['d_precision']:+.3f}  "
              f"facts {got['d_facts']:+d}", flush=True)
    result = {"data": f"data/corpus ({args.split} split)", "messages": len(items), "all_lists": base,
              "without": rows}
    write("parse_ablation", result)
    return result


if __name__ == "__main__":
    main()
