"""The parse extractor: each message parsed once, facts read clause by clause.

1. ``nlp.clean`` makes the text safe to parse (linear), ``nlp.pieces`` cuts it to parser size;
2. per sentence: the people and pets in the user's life (``relations``), requests about how the
   assistant should answer (``settings``), then every clause whose subject is the user ("I", "we",
   "me and my girlfriend", or none in diary style: "moved to Denver on the 3rd");
3. per clause: the verb's frame (``frames``), or the copula (identity, age, role, diet, traits,
   "allergic to"), endings ("quit", "gave up", "sold", "broke up", "died", "not … anymore"), and
   otherwise a routine (present) or a dated event (past);
4. the gate: questions, hypotheticals, other people's doings, pronoun and abstract objects and
   long objects store nothing; hedged statements keep a lower confidence.
"""
from __future__ import annotations

import re
import time
from dataclasses import replace
from datetime import datetime, timedelta

from .. import dates
from .. import lexicon as lx
from ..base import Candidate, Extractor
from . import frames as fr
from . import nlp
from . import phrases as ph
from . import words as w
from .clauses import REQUEST_START, Clause, classify, clause_heads
from .facts import make, third
from .relations import relations
from .settings import requests

MAX_OBJECT_WORDS = 7
_TIMEISH = frozenset("morning mornings evening evenings night nights week weeks weekend weekends day days "
                    "month months year years minute minutes hour hours".split())
MAX_EVENT_WORDS = 16
# what one is doing this minute, not what one is busy with
_PASSING_VERBS = frozenset("""eat drink watch wait sit stand lie look listen wonder feel sleep rest chill hang
 relax text message call ask tell talk chat say sip grab order cook drive ride walk head leave arrive come go
 bring carry hold wear use play kill enjoy love hate like miss thank check""".split())
_HABIT_PREDICATES = frozenset({"eats", "drinks", "likes", "dislikes", "loves", "hates", "does not eat",
                               "does not drink", "is allergic to"})
CHANGE_SLOTS = frozenset({"works at", "works as", "lives in", "studies at", "is a member of"})


class ParseExtractor(Extractor):
    """Offline, deterministic, English; the embedded default."""

    name = "parse"

    def __init__(self, budget_seconds: float | None = None):
        """``budget_seconds``: how long one message may be mined; past it, the rest of the message is kept
        (as the message) but not parsed, and the receipt says so. None: no limit."""
        self._nlp = nlp.load()
        self.budget_seconds = budget_seconds

    def extract(self, text: str, *, at: datetime, context: list[str] | None = None,
                known_entities: list[str] | None = None) -> list[Candidate]:
        return self.extract_many([text], at=[at])[0]

    def extract_many(self, texts: list[str], *, at: list[datetime]) -> list[list[Candidate]]:
        """Several messages in one parser batch (the queue workers' path)."""
        cleaned = [nlp.clean(t) for t in texts]
        spans = [nlp.pieces(c.text) for c in cleaned]
        cut: set[int] = set()   # messages past their time budget: their remaining pieces go to the parser empty

        def feed():
            for m, (c, ps) in enumerate(zip(cleaned, spans)):
                for a, b in ps:
                    yield "" if m in cut else c.text[a:b]

        docs = iter(self._nlp.pipe(feed(), batch_size=64))
        out = []
        for m, (clean, ps, when) in enumerate(zip(cleaned, spans, at)):
            cands: list[Candidate] = []
            began = time.monotonic()
            for n, (a, b) in enumerate(ps):
                if self.budget_seconds is not None and time.monotonic() - began > self.budget_seconds:
                    cut.add(m)   # the parser reads ahead one batch; nothing after that is parsed
                    for _ in ps[n:]:
                        next(docs)
                    cands.append(Candidate(predicate="", object="", rejected=(
                        f"time budget: mining stopped after {self.budget_seconds:g} s at character {a:,} of "
                        f"{len(clean.text):,}; the whole message is kept, its rest was not mined")))
                    break
                doc = next(docs)
                for sent in doc.sents:
                    got = _sentence(sent, when)
                    quote = clean.source(a + sent.start_char, a + sent.end_char)
                    for cand in got:
                        cand.source_quote = quote   # the user's own words, not the cleaned ones
                    cands.extend(got)
                have = {(c.predicate, c.object) for c in cands}
                for start, end in _asks(doc):
                    for got in requests(doc.text[start:end], True):
                        if (got.predicate, got.object) not in have:
                            got.source_quote = clean.source(a + start, a + end)
                            cands.append(got)
            cands = _unique(cands + _named_pet(clean, cands))
            gone = {c.object.lower() for c in cands if c.ends and c.kind == "relation" and c.object}
            # "Our dog Rocco had to be put down": the message names the dog as it ends it; only the end stays
            out.append([c for c in cands if c.ends or c.kind != "relation" or c.object.lower() not in gone])
        return out


_NAMED = re.compile(r"\b(?:named|called|name is|name's)\s+([A-Z][a-z]{1,20})\b")
_ADOPTED = re.compile(r"\b(?:adopted|adopting|rescued|got|getting|bought|brought home)\s+(?:a|an|our|my)\s+(?:new\s+|little\s+)?"
                      r"(\w+)", re.I)


def _named_pet(clean: nlp.Cleaned, cands: list[Candidate]) -> list[Candidate]:
    """"we adopted a puppy!! a lab mix named Buster": the name is said a sentence later."""
    text = clean.text
    adopted = next((m.group(1).lower() for m in _ADOPTED.finditer(text) if m.group(1).lower() in w.PET_NOUNS), None)
    if adopted is None or any(c.predicate.startswith("has ") and c.kind == "relation" and c.entity_type == "THING"
                              for c in cands):
        return []
    named = _NAMED.search(text)
    if named is None:
        return []
    kind = w.PET_NOUNS[adopted]
    quote = clean.original[:300].strip()
    return [make("relation", f"has {kind}", named.group(1), "THING",
                 text=f"user has a {adopted} named {named.group(1)}").model_copy(update={"source_quote": quote})]


def _asks(doc) -> list[tuple[int, int]]:
    """The spans (character offsets) of the piece that ask something of the assistant: a sentence
    that opens as a request ("please use …", "could you …", "keep it short") or has "you" do
    something with a modal; a verbless sentence after it goes with it, since the tokenizer may
    split a request ("am/pm") mid-way. "Long time no see!" or "It will be short but sweet" ask
    nothing of the assistant."""
    out = []
    sents = list(doc.sents)
    for i, s in enumerate(sents):
        asks = bool(REQUEST_START.match(s.text)) or any(
            t.lower_ == "you" and t.dep_ == "nsubj" and any(a.lower_ in _ASK_MODALS for a in t.head.children)
            for t in s) or any(t.lower_ in ("please", "pls", "plz") for t in s) or any(
            t.lemma_ in ("like", "prefer", "rather", "want") and t.i <= s.start + 4 and any(
                c.lower_ in ("i", "me") for c in t.children) for t in s) and any(
            t.lemma_ in _ANSWER_WORDS for t in s)   # "I'd like all times in 24-hour format", not "I like long walks"
        if not asks:
            continue
        end = s.end_char
        if i + 1 < len(sents) and (len(sents[i + 1]) <= 6 or not any(
                t.pos_ in ("VERB", "AUX") for t in sents[i + 1])):
            end = sents[i + 1].end_char
        out.append((s.start_char, end))
    return out


_ANSWER_WORDS = frozenset("""answer reply response explanation time temperature unit format tone language code
 example summary recipe measurement distance weight""".split())
_ASK_MODALS = frozenset({"could", "can", "would", "will", "should", "please", "must"})


def _sentence(sent, at: datetime) -> list[Candidate]:
    if len(sent) < 2 and not any(t.is_alpha for t in sent):
        return []
    quote = sent.text.strip()
    out: list[Candidate] = []
    heads = clause_heads(sent)
    clauses = [classify(v, sent, at) for v in heads]
    question = quote.endswith("?")
    if not question or out:
        out.extend(relations(sent))
    births = []
    for c in clauses:
        if c.subject in ("user", "we", "none"):
            if c.question or c.hypothetical or c.request:
                continue
            if c.subject == "none" and c.verb.tag_ == "VB" and c.verb.dep_ == "ROOT":
                continue   # an imperative
            got = _clause(c, at)
            if any(t.lemma_ == "use" and t.tag_ == "VBD" for t in c.verb.children) or c.verb.lemma_ == "use" \
                    and c.verb.tag_ == "VBD":
                for cand in got:
                    cand.valid_until = at
        elif c.subject in ("other", "my"):
            got = _other(c, at, births)
        else:
            got = []
        for cand in got:
            _date(cand, c, at)
            if c.tense == "future" or c.progressive or c.subject in ("other", "my"):
                cand.notes.append("may_start_later")
            if c.hedged:
                cand.confidence = min(cand.confidence, 0.6)
        out.extend(got)
    if not heads or sent.root.pos_ not in ("VERB", "AUX"):
        out.extend(_fragment(sent))
    out.extend(_verbless(sent, clauses, at))
    out.extend(_end_of(sent))
    out.extend(_fragment_job(sent))
    starts = any(t.lemma_ in ("start", "begin", "accept", "offer") for t in sent)   # "accepted …, starting in May"
    change = [cand for cand in out if cand.valid_at is None and not cand.ends and cand.predicate in CHANGE_SLOTS
              and ("may_start_later" in cand.notes or starts and cand.predicate in ("works at", "works as"))]
    if change:
        text = sent.text
        nxt = sent.doc[sent.end].sent if sent.end < len(sent.doc) else None
        if starts and nxt is not None and any(t.lemma_ in ("start", "begin") for t in nxt[:3]):
            text += " " + nxt.text     # "got offered head chef at Maison Ruelle!! start July 1"
        later = dates.find(text, at, "future")
        if later is not None and later.when > at:
            for cand in change:
                cand.valid_at, cand.kind = later.when, "plan" if cand.kind != "relation" else cand.kind
    for cand in out:
        if "born" in cand.notes and cand.valid_at is None:
            cand.valid_at = _clause_date(sent, at)
    if births:
        for cand in out:
            if cand.kind == "relation" and cand.object in births and not cand.ends:
                cand.valid_at = cand.valid_at or _clause_date(sent, at)
        out.append(make("plan", "is expecting", "baby", None, ends=True))
    if not out:
        out.extend(_short_like(sent))
    return [cand for cand in out if _gate(cand)]


_LIKE_WORDS = {"love": "likes", "like": "likes", "enjoy": "likes", "adore": "likes", "hate": "dislikes",
               "dislike": "dislikes", "loathe": "dislikes", "detest": "dislikes"}


def _short_like(sent) -> list[Candidate]:
    """"I love banjo.": the small model misreads some short sentences (a verb as an auxiliary
    or a compound); the words themselves are unambiguous."""
    toks = [t for t in sent if not t.is_punct]
    if not 3 <= len(toks) <= 6 or toks[0].lower_ != "i" or toks[1].lower_ not in _LIKE_WORDS:
        return []
    rest = [t for t in toks[2:] if t.lower_ not in ("the", "a", "an", "my", "so", "much", "really")]
    if not rest or any(t.lower_ in w.PRONOUN_OBJECTS for t in rest):
        return []
    obj = " ".join(t.text for t in rest)
    return [make("preference", _LIKE_WORDS[toks[1].lower_], obj, "THING")]


def _clause_date(sent, at):
    phrase = dates.find(sent.text, at, "past")
    return phrase.when if phrase else None


def _date(cand: Candidate, c: Clause, at: datetime) -> None:
    """Give a candidate its clause's date: when a change happened, a plan starts or an event was."""
    if cand.valid_at is not None or c.date is None:
        return
    when = c.date.when
    if cand.ends:
        if when <= at or c.tense == "future" or "may_start_later" in cand.notes:
            cand.valid_at = when   # "not on Instagram anymore, deleted it in January": a past January
        elif c.date.kind in ("month", "month_day", "day_month"):
            cand.valid_at = when.replace(year=when.year - 1) if when.replace(year=when.year - 1) <= at else None
        return
    if cand.kind in ("routine", "skill", "preference", "goal") and c.date.kind not in (
            "since", "since_year", "for_n", "ago") and not (c.verb.lemma_ in w.CHANGE_VERBS and c.tense == "past") \
            and not (c.date.direction == "future" and c.tense == "present" and not c.progressive):
        return   # "training for a half marathon in March": the date is the marathon's
    if cand.kind == "event" or c.tense == "past" or c.date.direction == "future" or c.date.kind in (
            "since", "since_year", "for_n", "ago"):
        if when > at and cand.kind not in ("event",):
            cand.kind = "plan" if cand.kind in ("attribute", "possession", "relation") else cand.kind
        cand.valid_at = when


def _gate(c: Candidate) -> bool:
    """Only objects worth a fact: no pronouns, abstractions, empty or runaway objects."""
    obj = c.object.strip().lower()
    if c.ends:
        return True
    if not obj:
        return False
    words = obj.split()
    if obj in w.PRONOUN_OBJECTS or words[0] in ("what", "how", "why", "when", "where", "who", "whether",
                                                 "which", "if", "that", "this", "these", "those", "it",
                                                 "them", "each"):
        return False
    if words[0] in w.BARE_GERUNDS and (len(words) == 1 or words[-1] in w.PRONOUN_OBJECTS):
        return False
    if words[0] in ("other", "others") or obj in ("go", "shot", "try", "whirl", "look") and any(
            p.startswith(("giv", "gav", "tak", "took", "hav", "had", "has")) for p in c.predicate.split()):
        return False   # "each other's company", "giving it a go" (but "codes in Go")
    if (c.kind in ("routine", "preference", "skill", "goal", "event") or c.predicate == "works on") and (
            obj in w.PLATITUDES or (
            words[-1] in w.PLATITUDES and "specific" not in c.notes and len(words) <= 2)):
        return False   # "is chasing dreams", "faces obstacles", "likes texture", "met new people"
    if any(x in ("something", "anything", "everything", "nothing", "sense", "feeling") for x in words) or any(
            x in ("it", "them", "their", "his", "her") for x in words[1:]):
        return False   # "doing something similar", "a real sense of peace", "make their lives better"
    if c.predicate == "does" and len(words) == 1 and words[0].endswith("ing") and words[0] not in w.ACTIVITY_GERUNDS:
        return False   # "keep plugging away" is no hobby called plugging
    if any(x in ("what", "which", "who", "whom", "how", "your", "yours") for x in words[1:]) or words[0] in (
            "your", "yours", "good", "well", "great", "fine", "okay", "ok", "best"):
        return False   # "death of what people think", "your recommendation", "doing good"
    if (words[-1] in w.ABSTRACT or obj in w.ABSTRACT) and not (
            "specific" in c.notes and words[-1] not in lx.ACQUIRED_TRANSIENT and obj not in lx.ACQUIRED_TRANSIENT):
        # a coffee one grabs is gone by evening; "drinks coffee", "loves pizza" is who one is
        if not (c.predicate in _HABIT_PREDICATES and (words[-1] in lx.ACQUIRED_TRANSIENT or obj in lx.ACQUIRED_TRANSIENT)
                and words[-1] not in lx.TRANSIENT):
            return False
    if len(words) > MAX_OBJECT_WORDS:
        return False
    if c.kind in ("routine", "skill", "preference", "possession") and any(x in _TIMEISH for x in words):
        return False
    if c.predicate.startswith("is aged"):
        return obj.isdigit() and 0 < int(obj) < 120
    return any(ch.isalnum() for ch in obj)


# -- one clause about the user ------------------------------------------------------------------

def _clause(c: Clause, at: datetime) -> list[Candidate]:
    v = c.verb
    lemma = v.lemma_.lower()
    if lemma == "have" and v.tag_ == "VBD":   # "we had to put Rufus down", "I had to sell my car": it happened
        x = next((t for t in v.children if t.dep_ == "xcomp" and t.pos_ == "VERB"
                  and any(a.lower_ == "to" for a in t.children)), None)
        if x is not None:
            return _clause(replace(c, verb=x, tense="past"), at)
    prt = next((t.lower_ for t in v.children if t.dep_ == "prt"), None)
    if v.lower_ in ("done", "finished", "through") and not c.negated and c.tense != "future" and any(
            a.lemma_ == "be" for a in v.children if a.dep_ in ("aux", "auxpass")):
        thing = next((o for p, o in fr.prep_objects(v) if p == "with"), None)   # "I'm done with chess"
        if thing is not None and thing.lower_ in ("it", "that", "them"):
            thing = _antecedent(thing)
        if thing is not None and (ph.is_name(thing) and thing.ent_type_ in ("PERSON", "")):
            # "Im so done with Mike": a person one is done with is a partner who is not one any more
            return [make("relation", "has partner", thing.lower_, None, ends=True, text=f"user is done with {thing.text}")]
        if thing is not None and thing.pos_ in ("NOUN", "PROPN") and thing.lemma_ not in w.ABSTRACT \
                and thing.lemma_ not in _TASKS:
            what = ph.phrase(thing)
            return [make("routine", "does", what, None, ends=True, text=f"user is done with {what}")]
    ended = _ending(c, lemma, prt)
    if ended is not None:
        return ended
    if lemma == "be" or (v.pos_ == "AUX" and v.dep_ == "ROOT"):
        return _copula(c)
    if c.negated and not c.ended:
        return _negative(c, lemma)
    if c.ended:
        return [_as_end(x) for x in _positive(c, lemma, prt)]
    return _positive(c, lemma, prt) + _employer(c, lemma)


_TRADE_VERBS = frozenset({"sell", "teach", "design", "code", "program", "manage", "nurse", "consult", "write",
                          "edit", "build", "develop", "research", "cook", "serve", "clean", "drive", "coach"})


def _employer(c: Clause, lemma: str) -> list[Candidate]:
    """"I sell real estate with Baird & Warner", "I teach maths at Colegio Alameda": what one does
    for a living says where one works."""
    if lemma not in _TRADE_VERBS or c.tense != "present" or c.progressive or c.subject != "user":
        return []
    obj = fr.direct_object(c.verb)
    preps = fr.prep_objects(c.verb) + (fr.prep_objects(obj) if obj is not None else [])
    return [make("attribute", "works at", ph.phrase(o), "ORG") for p, o in preps
            if p in ("with", "at", "for") and o.pos_ == "PROPN" and o.ent_type_ in ("ORG", "")]


# done with today's one: "done with my shift" ends nothing
_TASKS = frozenset({"shift", "work", "homework", "chore", "meeting", "exam", "test", "laundry", "dinner", "lunch",
                    "breakfast", "email", "task", "call", "errand", "assignment", "essay", "paper", "report"})
_NOT_ANTECEDENT_PREPS = frozenset({"since", "after", "before", "during", "until", "for", "because"})


def _antecedent(pron):
    """What "it" in "I'm done with it" stands for: the nearest thing the message did something
    with before (an object, or a place gone to), skipping times ("since the move")."""
    doc = pron.doc
    for t in reversed(doc[max(0, pron.i - 40):pron.i]):
        if t.pos_ not in ("NOUN", "PROPN") or t.dep_ not in ("dobj", "pobj") or t.ent_type_ in ("DATE", "TIME"):
            continue
        if t.lemma_ in w.ABSTRACT or t.lemma_ in w.TIME_NOUNS:
            continue
        if t.dep_ == "pobj" and t.head.lower_ in _NOT_ANTECEDENT_PREPS:
            continue
        return t
    return None


def _positive(c: Clause, lemma: str, prt: str | None) -> list[Candidate]:
    v = c.verb
    if lemma in ("marry",) or (lemma == "get" and any(t.lower_ == "married" for t in v.children)) or (
            lemma == "tie" and any(t.lower_ == "knot" for t in v.subtree)):
        names = [p.text for p in c.partners if ph.is_name(p)]
        for prep, o in fr.prep_objects(v):
            if prep == "to" and ph.is_name(o):
                names.append(o.text)
        return [make("relation", "is married to", n, "PERSON") for n in names] or [
            make("event", "got", "married", None, text="user got married")]
    if lemma == "engage" and v.tag_ == "VBN" or lemma == "get" and any(t.lower_ == "engaged" for t in v.children):
        names = [p.text for p in c.partners if ph.is_name(p)]
        for prep, o in fr.prep_objects(v) + [po for t in v.children if t.lower_ == "engaged" for po in fr.prep_objects(t)]:
            if prep == "to" and ph.is_name(o):
                names.append(o.text)
        return [make("relation", "is engaged to", n, "PERSON") for n in names] or [
            make("event", "got", "engaged", None, text="user got engaged")]
    if lemma in ("date", "see") and c.progressive or lemma == "meet" and any(
            t.lower_ in ("someone", "somebody") for t in v.children):
        names = [t.text for t in v.sent if ph.is_name(t) and t.i > v.i and t.ent_type_ in ("PERSON", "")]
        return [make("relation", "is dating", n, "PERSON") for n in names[:1]]
    if lemma in ("want", "hope", "plan", "intend", "aim", "dream", "wish") and not c.negated:
        x = next((t for t in v.children if t.dep_ == "xcomp" and t.pos_ in ("VERB", "AUX")), None)
        if x is not None and x.lemma_ not in w.EVENT_STOP:
            words = [t for t in x.subtree if not t.is_punct and t.lower_ != "to" or t.i > x.i]
            goal = " ".join(t.text for t in words if t.i >= x.i)[:120]
            if len(goal.split()) <= 10:
                return [make("plan" if lemma == "plan" else "goal", "wants to", goal, None, text=f"user wants to {goal}")]
        obj = fr.direct_object(v)
        if lemma == "plan" and obj is not None and obj.pos_ in ("NOUN", "PROPN") and obj.lemma_ not in w.ABSTRACT \
                and (c.progressive or c.tense == "future"):
            # "I'm currently planning a ring-toss tournament for the shelter's fundraiser"
            what = ph.phrase(obj)
            return [make("plan", "is planning", what, None, text=f"user is planning {what}")]
        return []
    if lemma in ("look", "think", "consider", "research", "shop", "eye") and (c.progressive or c.perfect):
        for prep, o in fr.prep_objects(v) or ([("", fr.direct_object(v))] if fr.direct_object(v) is not None else []):
            if prep in ("at", "into", "about", "of", "for", "") and lemma != "think" or prep in ("about", "of"):
                target = fr.direct_object(o) if o.tag_ == "VBG" and fr.direct_object(o) is not None else o
                if target.pos_ in ("NOUN", "PROPN"):
                    return [make("preference", "is interested in", ph.phrase(target),
                                 ph.entity_type(target, "PRODUCT"))]
        return []
    if lemma == "turn":
        num = next((t for t in v.children if t.like_num and t.dep_ in ("dobj", "attr", "oprd", "npadvmod")), None)
        if num is not None and c.subject in ("user", "none"):
            return [make("attribute", "is aged", num.text, None, text=f"user is aged {num.text}")]
        return []
    if lemma == "use" and v.tag_ == "VBD":   # "I used to live in Madrid": true once, ended by now
        x = next((t for t in v.children if t.dep_ == "xcomp" and t.pos_ in ("VERB", "AUX")), None)
        if x is not None:
            sub = Clause(verb=x, subject=c.subject, tense="present")
            got = _copula(sub) if x.lemma_ == "be" else _positive(sub, x.lemma_.lower(), None)
            return got
    if lemma in ("start", "begin", "take", "try", "keep", "continue", "resume") and (prt in (None, "up")):
        x = next((t for t in v.children if t.dep_ in ("xcomp",) and t.pos_ == "VERB"), None)
        if x is not None:
            sub = Clause(verb=x, subject=c.subject, tense="present", date=c.date, again=c.again)
            xprt = next((t.lower_ for t in x.children if t.dep_ == "prt"), None)
            if lemma == "try" and (_ending(sub, x.lemma_.lower(), xprt) is not None):
                return []   # "trying to quit": not yet
            got = _positive(sub, x.lemma_.lower(), xprt)
            return got or ([] if x.lemma_ in w.EVENT_STOP or fr.direct_object(x) is not None
                           else fr.intransitive(sub, x))
    if lemma == "cut" and prt in ("down", "back"):
        for prep, o in fr.prep_objects(v):
            if prep == "on":
                return [make("routine", "does", ph.phrase(o), None, text=f"user is cutting down on {ph.phrase(o)}")]
    if lemma in ("offer",) and v.tag_ == "VBN":
        out = []
        obj = fr.direct_object(v)
        if obj is not None and obj.lemma_ not in w.JOB_NOUNS:
            out.append(make("attribute", "works as", ph.phrase(obj), "ROLE"))
        for prep, o in fr.prep_objects(v) + (fr.prep_objects(obj) if obj is not None else []):
            if prep in ("at", "with", "by", "from") and o.pos_ in ("PROPN", "NOUN"):
                out.append(make("attribute", "works at", ph.phrase(o), "ORG"))
        return out
    if lemma in ("buy", "rent", "lease") and fr.housing(c, v):
        return fr.housing(c, v)
    if lemma == "get" and c.perfect:
        return fr.have(c, v)
    if lemma in fr.JOB_START:
        jobs = fr.job_start(c, v)
        if jobs:
            return jobs
        obj = fr.direct_object(v)
        if lemma in ("start", "begin") and obj is not None and obj.pos_ in ("NOUN", "PROPN") and \
                obj.lemma_ not in w.JOB_NOUNS and obj.lemma_ not in w.ABSTRACT:
            words = [t for t in ph.span_tokens(obj) if not t.is_punct and t.lower_ not in ("a", "an", "the", "my", "our")]
            thing = " ".join(t.text for t in words[:5])
            return [make("routine", "does", thing, "SKILL", text=f"user started {thing}")]
    if lemma in ("adopt", "rescue", "get", "buy") and _pet_object(v):
        return []   # relations() names the pet
    if lemma == "retire" and c.tense == "past":
        return [make("attribute", "is", "retired", None, text="user is retired")]
    if lemma == "diagnose":
        return [make("attribute", "has condition", ph.phrase(o), None)
                for p, o in fr.prep_objects(v) if p == "with"]
    if lemma in ("have", "spend") and c.tense == "past":
        acts = _time_spent(v)
        if acts:
            return acts
    if lemma == "help" and c.tense == "past":
        x = next((t for t in v.children if t.dep_ in ("xcomp", "ccomp") and t.tag_ == "VB"), None)
        inner = fr.direct_object(x) if x is not None else None
        if inner is not None and inner.pos_ in ("NOUN", "PROPN") and inner.lower_ not in w.PRONOUN_OBJECTS:
            what = ph.phrase(inner)   # "I helped renovate a rundown community center back home"
            return [make("event", f"helped {x.lemma_}", what, None, text=f"user helped {x.lemma_} {what}")]
    if lemma == "get" and prt == "back" and c.tense == "past":
        trip = next((o for p, o in fr.prep_objects(v) if p == "from" and o.pos_ in ("NOUN", "PROPN")), None)
        if trip is not None and trip.lower_ not in ("work", "school", "home"):
            what = ph.phrase(trip)    # "Just got back from a family road trip yesterday"
            return [make("event", "got back from", what, None, text=f"user got back from {what}")]
    if lemma in fr.FRAMES:
        got = fr.FRAMES[lemma](c, v)
        if not got and c.progressive and c.tense != "past":
            return _ongoing(c, lemma, prt)   # "I've been working hard on my online store"
        return got
    if lemma in fr.LIKE:
        return fr.like(c, v, fr.LIKE[lemma])
    if lemma == "go" and c.tense != "past":
        once = c.progressive or c.tense == "future" or (c.date is not None and c.date.direction == "future")
        x = next((t for t in v.children if t.tag_ == "VBG" and t.dep_ in ("xcomp", "advcl", "dobj")), None)
        if x is not None:
            if once:   # "I'm going hiking with my buddies this weekend": one outing ahead
                return [make("plan", "is going", x.lower_, None, text=f"user is going {x.lower_}")]
            return [make("routine", "does", x.lower_, "SKILL", text=f"user goes {x.lower_}")]
        for prep, o in fr.prep_objects(v):
            if prep == "to" and o.lemma_ not in ("bed", "sleep", "work", "school", "doctor"):
                if once:   # "I'm going to a transgender conference this month"
                    return [make("plan", "is going to", ph.phrase(o), ph.entity_type(o, "PLACE"))]
                return [make("routine", "goes to", ph.phrase(o), ph.entity_type(o, "PLACE"))]
        return []
    if lemma in ("buy", "purchase", "get") and c.tense == "past":
        obj = fr.direct_object(v)
        if obj is not None and (obj.lemma_ in w.RELATION_NOUNS or obj.lower_ in w.RELATION_NOUNS or
                                obj.lemma_ in w.JOB_NOUNS or obj.lemma_ in w.PET_NOUNS):
            return []
        if obj is not None and ph.phrase(obj).lower() in w.CONDITION_NOUNS or (
                obj is not None and obj.lemma_ in w.CONDITION_NOUNS):
            return [make("attribute", "has condition", ph.phrase(obj).lower(), None)]
        if obj is not None and obj.lemma_ not in w.ABSTRACT and obj.pos_ in ("NOUN", "PROPN"):
            return [make("possession", "owns", ph.phrase(obj), ph.entity_type(obj, "PRODUCT"))]
    if c.tense == "past" and not c.perfect or (c.perfect and c.date is not None):
        return _event(c, lemma, prt)
    if lemma in fr.SIMPLE:
        got = fr.simple(c, v, *fr.SIMPLE[lemma])
        if got or not (c.progressive and c.tense != "past"):
            return got
        return _ongoing(c, lemma, prt)      # "I've been practicing for my next tournament"
    if lemma in fr.INTRANSITIVE and fr.direct_object(v) is None:
        got = fr.intransitive(c, v)
        if got or not (c.progressive and c.tense != "past"):
            return got
        return _ongoing(c, lemma, prt)
    if c.tense == "present" and not c.progressive and lemma not in w.EVENT_STOP:
        obj = fr.direct_object(v)
        if obj is not None and obj.pos_ in ("NOUN", "PROPN") and (_habitual(c) or _specific(obj) or (
                obj.lemma_ in lx.FOODS or obj.lemma_ in lx.SPORTS or obj.lower_ in lx.LANGUAGES)):
            pred = third(lemma) + (f" {prt}" if prt else "")
            kind = "plan" if c.date is not None and c.date.direction == "future" else "routine"
            return [make(kind, pred, ph.phrase(obj), ph.entity_type(obj, "THING"))]
    if c.progressive and c.tense != "past":
        return _ongoing(c, lemma, prt)
    return []


_LIFE_PASSIVES = frozenset("""promote hire fire lay accept admit diagnose marry engage divorce injure hurt rob
 elect award nominate select draft sign reject mentor baptize baptise christen ordain discharge release
 arrest sentence evict transfer relocate adopt scout recruit certify license licence graduate""".split())
_HABIT_WORDS = frozenset("""every each usually often always sometimes daily weekly monthly regularly
 normally generally mostly weekends weekdays mornings evenings nights""".split())


def _habitual(c: Clause) -> bool:
    """"I bring work home sometimes", "we go every weekend": said as a habit."""
    return any(t.lower_ in _HABIT_WORDS for t in c.tokens) or any(
        t.lower_ == "a" and t.head.lemma_ in ("week", "month", "day", "year") and t.head.i > t.i for t in c.tokens)


def _ongoing(c: Clause, lemma: str, prt: str | None) -> list[Candidate]:
    """"I'm teaming up with a local organization", "we're putting together a talent show next
    month", "I've been working on supporting youth sports": what the user is busy with (a plan
    when it is dated ahead)."""
    v = c.verb
    if lemma in ("carry", "keep") and any(p == "on" and o.lower_.endswith("ing") for p, o in fr.prep_objects(v)):
        o = next(o for p, o in fr.prep_objects(v) if p == "on")   # "carrying on volunteering at the youth center"
        what = ph.phrase(o) + "".join(f" {p} {ph.phrase(x)}" for p, x in fr.prep_objects(o)[:1] if p in ("at", "with", "for"))
        return [make("routine", "does", what, None, text=f"user keeps {what}")]
    if lemma in _PASSING_VERBS or lemma in w.EVENT_STOP and lemma not in ("write", "make", "put", "take", "give", "try"):
        return []
    if prt is None and any(t.lower_ == "together" and t.dep_ == "advmod" for t in v.children):
        prt = "together"   # "putting together a talent show"
    target, prep = fr.direct_object(v), ""
    if target is None:
        for p, o in fr.prep_objects(v):
            if p in ("on", "with", "for", "at", "in", "to", "into") and o.ent_type_ not in ("DATE", "TIME"):
                target, prep = o, p
                break
    if target is None or target.lower_ in w.PRONOUN_OBJECTS:
        return []
    if target.tag_ == "VBG":          # "working on supporting youth sports"
        inner = fr.direct_object(target)
        if inner is None:
            return []
        what = f"{target.lower_} {ph.phrase(inner)}"
    elif target.pos_ in ("NOUN", "PROPN") and target.lemma_ not in w.TIME_NOUNS and target.lower_ not in \
            lx.ACQUIRED_TRANSIENT and (target.lemma_ not in w.ABSTRACT or len(ph.span_tokens(target)) > 1 and any(
                t.dep_ == "compound" for t in target.children)):   # "endorsement opportunities" says what
        what = ph.phrase(target)
    else:
        return []
    pred = " ".join(x for x in ("is", v.lower_, prt, prep) if x)
    future = c.date is not None and c.date.direction == "future"
    return [make("plan" if future else "routine", pred, what, ph.entity_type(target, "THING"),
                 text=f"user {pred} {what}", confidence=0.7)]


def _time_spent(v) -> list[Candidate]:
    """"we had a great time throwing a small party": what was done is the event; "we had a blast
    last year at the Pride fest": where it was is; "had the chance to volunteer at a youth center"."""
    obj = fr.direct_object(v)
    if obj is not None and obj.lemma_ in ("chance", "opportunity", "privilege", "honor", "honour"):
        x = next((t for t in obj.children if t.dep_ in ("acl", "relcl") and t.pos_ == "VERB"), None)
        if x is not None:
            inner = fr.direct_object(x)
            target = inner if inner is not None else next((o for p, o in fr.prep_objects(x)), None)
            if target is not None and target.pos_ in ("NOUN", "PROPN") and target.lower_ not in w.PRONOUN_OBJECTS:
                prep = "" if inner is not None else " " + next(p for p, o in fr.prep_objects(x) if o.i == target.i)
                what = ph.phrase(target)
                return [make("event", f"{x.lemma_}d{prep}" if x.lemma_.endswith("e") else f"{x.lemma_}ed{prep}",
                             what, None, text=f"user had the {obj.lower_} to {x.lemma_}{prep} {what}")]
        return []
    if obj is None or obj.lemma_ not in ("time", "blast", "fun", "day", "weekend", "night", "evening", "experience",
                                         "afternoon", "morning", "hours", "week"):
        return []
    places = [o for p, o in fr.prep_objects(v) + fr.prep_objects(obj) if p in ("at", "in", "on") and o.pos_ in ("NOUN", "PROPN")
              and o.ent_type_ not in ("DATE", "TIME") and o.lemma_ not in w.TIME_NOUNS]
    if not places and any(t.lower_ == "there" and t.dep_ == "advmod" for t in v.children) and fr.place_of_there(v) is not None:
        places = [fr.place_of_there(v)]    # "have you been to Italy? I had a blast there last month"
    if any(t.lower_ in ("not", "bad", "terrible", "awful", "rough", "horrible", "miserable") for t in obj.subtree):
        return []    # "a not-so-great experience at the hike"
    if places:
        what = ph.phrase(places[0])
        cand = make("event", "had a good time at", what, None, text=f"user had a {obj.lower_} at {what}")
        if _specific(places[0]):
            cand.notes.append("specific")
        return [cand]
    acts = [g for g in list(obj.children) + list(v.children) if g.dep_ in ("acl", "advcl") and g.tag_ == "VBG"]
    acts += [g for a in acts for g in a.children if g.dep_ == "conj" and g.tag_ == "VBG"]
    out = []
    for g in acts:
        inner = fr.direct_object(g)
        if inner is not None and inner.pos_ in ("NOUN", "PROPN") and inner.lower_ not in w.PRONOUN_OBJECTS:
            what = ph.phrase(inner)
            out.append(make("event", g.lower_, what, None, text=f"user had a {obj.lower_} {g.lower_} {what}"))
        elif inner is None and g.lemma_ not in w.EVENT_STOP:   # "a great experience hiking with my church friends"
            company = "".join(f" with {ph.phrase(o)}" for p, o in fr.prep_objects(g)[:1] if p == "with")
            where = next((o for p, o in fr.prep_objects(v) + fr.prep_objects(obj) if p in ("at", "in")
                          and o.pos_ in ("NOUN", "PROPN") and o.ent_type_ not in ("DATE", "TIME")), None)
            if where is not None:   # "spent some time at the shelter volunteering at the front desk"
                out.append(make("event", f"went {g.lower_} at", ph.phrase(where), None,
                                text=f"user went {g.lower_} at {ph.phrase(where)}"))
            else:
                out.append(make("event", "went", g.lower_, None, text=f"user went {g.lower_}{company}"))
    return out


_MEANS_A_LOT = frozenset({"passion", "therapy", "thing", "hobby", "escape", "outlet", "life", "jam", "calling"})


def _about_a_thing(c: Clause, at: datetime) -> list[Candidate]:
    """A sentence about a thing that says something about the user: "Organizing a basketball camp
    for kids last summer was an awesome experience" (an event), "Running is my therapy", "Pottery is
    a huge part of my life" (a liking), "basketball is really important to me" (a value)."""
    v, subj = c.verb, c.subj
    attr = next((a for a in v.children if a.dep_ in ("attr", "acomp")), None)
    if attr is None or any(t.dep_ == "poss" and t.lower_ not in ("my", "our") for t in subj.subtree):
        return []
    mine = any(t.dep_ == "poss" and t.lower_ == "my" for t in attr.children)
    if subj.tag_ == "VBG" and subj.dep_ in ("csubj", "nsubj"):
        inner = fr.direct_object(subj)
        doing = subj.lower_ + (f" {ph.phrase(inner)}" if inner is not None else "")
        if inner is not None and inner.lower_ in w.PRONOUN_OBJECTS:
            return []
        if c.tense == "past" and inner is not None and subj.dep_ == "csubj" and subj.lemma_ not in (
                "have", "be", "get", "do", "make", "see", "know", "hear"):
            return [make("event", past_tense(subj.lemma_), ph.phrase(inner), None,
                         text=f"user {past_tense(subj.lemma_)} {ph.phrase(inner)}")]
        if c.tense == "present" and mine and (attr.lemma_ in _MEANS_A_LOT or attr.lower_ in _FAVOURITE):
            return [make("preference", "likes", doing, None, text=f"user likes {doing}")]
        return []
    if subj.pos_ not in ("NOUN", "PROPN") or subj.lemma_ in w.ABSTRACT or subj.lower_ in w.PRONOUN_OBJECTS:
        return []
    what = ph.phrase(subj)
    if c.tense == "present" and attr.lemma_ == "part" and any(
            p == "of" and o.lemma_ == "life" and any(t.lower_ == "my" for t in o.children) for p, o in fr.prep_objects(attr)):
        return [make("preference", "likes", what, ph.entity_type(subj, "THING"), text=f"user loves {what}")]
    if c.tense == "present" and (mine and attr.lemma_ in _MEANS_A_LOT or attr.lower_ in (
            "important", "special", "precious", "everything", "dear") and any(
            p == "to" and o.lower_ == "me" for p, o in fr.prep_objects(attr) + fr.prep_objects(v))):
        return [make("preference", "cares about", what, ph.entity_type(subj, "THING"),
                     text=f"user cares about {what}")]
    return []


_IRREGULAR = dict(pair.split(":") for pair in """go:went do:did make:made take:took have:had see:saw get:got
 give:gave run:ran swim:swam win:won buy:bought build:built teach:taught write:wrote read:read ride:rode
 fly:flew meet:met throw:threw sing:sang begin:began bring:brought catch:caught find:found leave:left
 lose:lost spend:spent think:thought feel:felt keep:kept sleep:slept hold:held sit:sat eat:ate drink:drank
 drive:drove break:broke choose:chose speak:spoke wear:wore grow:grew draw:drew know:knew fall:fell
 sell:sold tell:told hear:heard pay:paid lead:led send:sent stand:stood put:put set:set cut:cut hit:hit
 let:let shut:shut become:became come:came forget:forgot""".split())


def past_tense(lemma: str) -> str:
    """English simple past, for a verb the user said as a gerund ("Organizing a camp was …")."""
    if lemma in _IRREGULAR:
        return _IRREGULAR[lemma]
    if lemma.endswith("e"):
        return lemma + "d"
    if lemma.endswith("y") and len(lemma) > 1 and lemma[-2] not in "aeiou":
        return lemma[:-1] + "ied"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", lemma) and len(lemma) <= 4:
        return lemma + lemma[-1] + "ed"
    return lemma + "ed"


def _pet_object(v) -> bool:
    obj = fr.direct_object(v)
    return obj is not None and (obj.lemma_ in w.PET_NOUNS or obj.lower_ in w.PET_NOUNS) and bool(ph.names_near(obj))


def _event(c: Clause, lemma: str, prt: str | None) -> list[Candidate]:
    """A past occurrence with its date: "ran my first 10k last weekend" → ran · first 10k."""
    v = c.verb
    if lemma in w.EVENT_STOP and lemma not in ("go", "have", "take", "do", "make", "get") and not (
            lemma in ("write", "read", "give", "put") and fr.direct_object(v) is not None and _specific(fr.direct_object(v))):
        return []
    if lemma == "take" and fr.direct_object(v) is not None and fr.direct_object(v).lemma_ in ("photo", "pic", "picture", "shot",
                                                                              "selfie", "snap"):
        # "I took this photo at a beautiful location called Whispering Falls": where the user was
        for p, o in fr.prep_objects(v) + fr.prep_objects(fr.direct_object(v)):
            if p in ("at", "in", "on", "near") and o.pos_ in ("NOUN", "PROPN") and o.ent_type_ not in ("DATE", "TIME"):
                named = next((g for t in o.children if t.dep_ == "acl" and t.lemma_ in ("call", "name")
                              for g in t.children if g.dep_ in ("oprd", "attr", "dobj", "npadvmod")), None)
                where = ph.phrase(named) if named is not None else ph.phrase(o)
                return [make("event", f"took a photo {p}", where, None, text=f"user took a photo {p} {where}")]
        return []
    word = v.lower_ if v.tag_ in ("VBD", "VBN") else lemma
    obj = fr.direct_object(v) or next((t for t in v.children if t.dep_ == "npadvmod" and t.pos_ == "NOUN" and any(
        n.dep_ == "nummod" for n in t.children) and t.ent_type_ not in ("DATE", "TIME")
        and t.lemma_ not in w.TIME_NOUNS), None)   # "I scored 40 points": a count the parser reads as a measure
    pred = word + (f" {prt}" if prt else "")
    if obj is not None and obj.lower_ in w.PRONOUN_OBJECTS:
        return []    # "took it at the beach", "got them at Zara": what, the clause does not say
    said = _event_text(c, v)
    if obj is not None and obj.lemma_ in ("love", "passion", "interest") and any(
            p == "for" for p, _ in fr.prep_objects(obj)):
        obj = next(o for p, o in fr.prep_objects(obj) if p == "for")   # "connected over our shared love for basketball"
    if lemma == "bear" and c.subject == "user":
        return [make("attribute", "was born in", ph.phrase(fr.place_in(o)), "PLACE") for p, o in fr.prep_objects(v)
                if p == "in" and (o.pos_ == "PROPN" or o.ent_type_ in ("GPE", "LOC"))][:1]
    if v.tag_ == "VBN" and any(a.dep_ == "auxpass" for a in v.children) and c.subject in ("user", "we"):
        # "I got mentored by this amazing business dude", "we got upgraded": done to the user
        agent = next((o for t in v.children if t.dep_ == "agent" for o in t.children if o.dep_ == "pobj"), None)
        if agent is not None and agent.lower_ not in w.PRONOUN_OBJECTS:
            return [make("event", f"was {v.lower_} by", ph.phrase(agent), None, text=said)]
        if v.lemma_ in _LIFE_PASSIVES:     # "I got promoted", "I was laid off"; not "I was freaked"
            return [make("event", "was", v.lower_, None, text=said)]
    gerund = obj if obj is not None and obj.tag_ == "VBG" else next(
        (t for t in v.children if t.tag_ == "VBG" and t.dep_ in ("xcomp", "advcl")), None) if lemma in (
            "go", "finish", "start", "begin", "stop", "try") else None
    if gerund is not None and gerund.lemma_ not in ("be", "have", "do", "get"):
        # "we went camping with my fam", "finished rereading The Alchemist"
        inner = fr.direct_object(gerund)
        if inner is not None and inner.lower_ not in w.PRONOUN_OBJECTS and inner.lemma_ not in w.ABSTRACT:
            return [make("event", f"{word} {gerund.lower_}", ph.phrase(inner), None, text=said)]
        return [make("event", word, gerund.lower_, None, text=said)]
    if obj is None or obj.pos_ not in ("NOUN", "PROPN", "NUM"):
        for prep, o in fr.prep_objects(v):
            if o.pos_ in ("NOUN", "PROPN") and o.lemma_ not in w.TIME_NOUNS and not (
                    o.ent_type_ in ("DATE", "TIME")):
                if o.lemma_ in ("love", "passion", "interest") and any(p == "for" for p, _ in fr.prep_objects(o)):
                    o = next(x for p, x in fr.prep_objects(o) if p == "for")   # "over our shared love for basketball"
                pred, obj = f"{pred} {prep}", o
                break
        else:
            return []
    if obj is None or obj.lower_ in w.PRONOUN_OBJECTS:
        return []
    if lemma in ("have", "get", "do", "make", "take") and obj.lemma_ in w.ABSTRACT and not _specific(obj):
        return []
    what = ph.phrase(obj)
    direct = fr.direct_object(v)
    if lemma in ("take", "bring") and direct is not None and obj.i == direct.i:
        dest = next((o for p, o in fr.prep_objects(v) if p == "to" and o.pos_ in ("NOUN", "PROPN")), None)
        if dest is not None:   # "took the kids to the museum": where is the memory
            what = f"{what} to {ph.phrase(dest)}"
    cand = make("event", pred, what, None, text=said)
    if _specific(obj):
        cand.notes.append("specific")   # "a council meeting for adoption", "a marching event": not just "an event"
    return [cand]


def _specific(head) -> bool:
    """A noun phrase that says which one: a proper name, or a noun modifier or of/for-phrase."""
    if head.pos_ == "PROPN":
        return True
    return any(t.dep_ == "compound" and t.pos_ in ("NOUN", "PROPN") or t.dep_ == "prep" and t.lower_ in (
        "of", "for") and any(o.pos_ in ("NOUN", "PROPN") for o in t.children) for t in head.children) or any(
        t.dep_ == "amod" and t.tag_ == "VBG" for t in head.children)


def _event_text(c: Clause, v) -> str:
    """"user went camping with my fam": the clause in the user's words, less subject and dates."""
    said_by = {t.i for t in c.subj.subtree} if c.subj is not None and c.subj.i < v.i else set()
    toks = [t for t in c.tokens if not t.is_punct and t.ent_type_ not in ("DATE", "TIME") and t.i not in said_by
            and t.dep_ not in ("nsubj", "nsubjpass", "aux", "cc", "intj", "discourse", "mark")]
    while toks and toks[-1].dep_ in ("prep", "det", "poss", "cc", "advmod"):
        toks.pop()
    return f"user {' '.join(t.text for t in toks[:MAX_EVENT_WORDS])}".strip()


def _as_end(cand: Candidate) -> Candidate:
    cand.ends = True
    return cand


def _negative(c: Clause, lemma: str) -> list[Candidate]:
    """"I don't eat meat", "I never drink": a negated preference or habit."""
    v = c.verb
    if lemma in ("eat", "drink", "smoke", "drive", "like", "enjoy", "speak", "play", "own", "have", "use",
                 "watch", "vape", "drive", "celebrate", "wear"):
        obj = fr.direct_object(v)
        pred = "does not " + lemma
        if lemma in ("like", "enjoy"):
            got = fr.like(c, v, "dislikes")
            return got
        if obj is not None:
            return [make("preference", pred, ph.phrase(x), ph.entity_type(x, "FOOD" if lemma in ("eat", "drink")
                                                                               else "THING"))
                    for x in ph.conjuncts(obj)]
        if lemma in ("drink", "smoke", "vape"):
            thing = {"drink": "alcohol", "smoke": "cigarettes", "vape": "vapes"}[lemma]
            return [make("routine", pred, thing, None, text=f"user {pred}")]
    return []


def _ending(c: Clause, lemma: str, prt: str | None) -> list[Candidate] | None:
    """"quit smoking", "gave up the cello", "left Deloitte", "sold my Jeep", "stopped eating fish",
    "we broke up": ends the live fact it contradicts, whatever its predicate (the write path matches)."""
    v = c.verb
    if c.tense == "future" or c.hypothetical:
        return None
    phrasal = (lemma, prt)
    if lemma == "put" and (prt == "down" or any(t.lower_ == "sleep" for t in v.subtree)):
        obj = fr.direct_object(v)     # "we had to put Rufus down", "put Bess to sleep": a pet that died
        if obj is not None and ph.is_name(obj):
            return [make("relation", "has", obj.lower_, None, ends=True, text=f"{obj.lower_} died")]
    if lemma in w.BREAKUP_VERBS or phrasal in w.BREAKUP_PHRASAL or (lemma == "split" and c.subject in ("we", "user")):
        # "me and jonah broke up": a partner in the subject is a person whatever the case it is written in
        names = [p.text for p in c.partners if ph.is_name(p) or p.pos_ in ("PROPN", "NOUN") and p.is_alpha
                 and p.lemma_.lower() not in w.RELATION_NOUNS and p.lower_ not in w.PRONOUN_OBJECTS]
        for prep, o in fr.prep_objects(v):
            if prep == "with" and ph.is_name(o):
                names.append(o.text)
        out = [make("relation", "has partner", n.lower(), None, ends=True) for n in names] or [
            make("relation", "has partner", "", None, ends=True)]
        if lemma == "divorce" or any(t.lemma_ == "divorce" for t in v.children):
            out.append(make("event", "got", "divorced", None, text="user got divorced"))
        return out
    if lemma not in w.END_VERBS and phrasal not in w.END_PHRASAL:
        return None
    if lemma in ("sell", "teach", "drive") and c.tense == "present" and not c.progressive:
        return None   # "I sell real estate with Baird & Warner": a living, not a sale
    if c.negated:
        return None
    if lemma == "lose" and fr.direct_object(v) is not None and fr.direct_object(v).lemma_ in w.JOB_NOUNS:
        orgs = [o for p, o in fr.prep_objects(fr.direct_object(v)) + fr.prep_objects(v) if p in ("at", "with")]
        return [make("attribute", "works at", ph.phrase(o) if orgs else "", None, ends=True,
                     text=f"user lost their job{' at ' + ph.phrase(o) if orgs else ''}") for o in (orgs or [None])][:1]
    if lemma == "lose" and not _pet_or_person_obj(v):
        return None
    if lemma == "get" and prt is None:
        return None
    out = []
    x = next((t for t in v.children if t.dep_ in ("xcomp", "dobj", "pcomp") and (
        t.tag_ == "VBG" or (t.dep_ == "dobj" and t.lower_.endswith("ing") and t.pos_ == "NOUN"))), None)
    if x is not None:   # "stopped eating red meat", "quit smoking"
        obj = fr.direct_object(x)
        thing = ph.phrase(obj) if obj is not None else x.lower_
        out.append(make("routine", "does", thing if obj is not None else x.lower_, None, ends=True,
                        text=f"user stopped {x.lower_}{' ' + thing if obj is not None else ''}"))
        if obj is not None and x.lemma_ in ("eat", "drink", "use", "take"):
            out.append(make("preference", f"does not {x.lemma_}", thing, ph.entity_type(obj, "FOOD")))
        elif obj is None and x.lemma_ in ("drink", "smoke", "vape"):
            thing = {"drink": "alcohol", "smoke": "cigarettes", "vape": "vapes"}[x.lemma_]
            out.append(make("routine", f"does not {x.lemma_}", thing, None, text=f"user does not {x.lemma_}"))
        return out
    obj = fr.direct_object(v)
    if obj is None:
        for prep, o in fr.prep_objects(v):
            if prep in ("from", "at", "with"):
                obj = o
                break
    if obj is None:
        if lemma == "retire":
            return [make("attribute", "is", "retired", None, text="user is retired")]
        return []
    thing = ph.phrase(obj)
    if obj.lower_ in ("it", "them", "that") and c.tense != "future":
        obj = _antecedent(obj) or obj     # "Gave up the cello … Sold it to a student": it is the cello
        if obj.lower_ in ("it", "them", "that"):
            return []
        thing = ph.phrase(obj)
    if obj.lemma_ in w.JOB_NOUNS:
        orgs = [o for p, o in fr.prep_objects(obj) + fr.prep_objects(v) if p in ("at", "with", "from")
                and o.pos_ in ("PROPN", "NOUN") and o.ent_type_ not in ("DATE", "TIME") and o.lemma_ not in w.TIME_NOUNS]
        if not orgs:
            return [make("attribute", "works at", "", None, ends=True)]
        thing = ph.phrase(orgs[0])
    if lemma == "leave" and obj.lemma_ in ("home", "house", "party", "office", "work"):
        return []
    pred = "works at" if lemma in ("leave", "resign") else "has"
    out.append(make("attribute" if pred == "works at" else "possession", pred, thing, None, ends=True,
                    text=f"user {v.lower_} {thing}"))
    return out


def _pet_or_person_obj(v) -> bool:
    obj = fr.direct_object(v)
    return obj is not None and (obj.lemma_ in w.PET_NOUNS or obj.lemma_ in w.RELATION_NOUNS or ph.is_name(obj))


def _copula(c: Clause) -> list[Candidate]:
    """"I'm Dan", "I'm 31", "I'm a nurse at St. Mary's", "I'm vegan", "I'm allergic to peanuts"."""
    v = c.verb
    out = []
    attrs = [t for t in v.children if t.dep_ in ("attr", "acomp", "oprd")]
    for a in attrs:
        for item in ph.conjuncts(a):
            out.extend(_copula_value(c, item))
    off = any(t.lower_ == "off" and t.dep_ in ("advmod", "prt", "acomp", "prep") for t in v.children)
    if off and c.subject in ("user", "we") and not c.negated:
        x = next((t for t in v.children if t.dep_ in ("xcomp", "advcl") and t.pos_ == "VERB"), None)
        if x is not None:   # "I'm off to do some taekwondo!"
            obj = fr.direct_object(x)
            if obj is not None and obj.pos_ in ("NOUN", "PROPN") and obj.lemma_ not in w.ABSTRACT and \
                    obj.lower_ not in lx.ACQUIRED_TRANSIENT and x.lemma_ in ("do", "play", "practice", "practise"):
                return [make("routine", "does", ph.phrase(obj), "SKILL", text=f"user does {ph.phrase(obj)}")]
    for p, o in fr.prep_objects(v) + [po for t in v.children if t.lower_ == "off" for po in fr.prep_objects(t)]:
        if p == "to" and off and o.pos_ == "PROPN" and c.subject in ("user", "we"):
            # "Next month, I'm off to Ireland for a semester": a trip or a move, from its date
            out.append(make("plan", "is going to", ph.phrase(o), "PLACE", text=f"user is off to {ph.phrase(o)}"))
            continue
        if p == "on" and c.negated and c.ended and o.pos_ == "PROPN" and c.subject == "user":
            out.append(make("routine", "uses", ph.phrase(o), None, ends=True, text=f"user left {ph.phrase(o)}"))
            continue   # "I'm not on Instagram anymore"
        if p in ("in", "on") and o.lemma_ in w.GROUP_NOUNS | w.PROGRAM_NOUNS and c.subject in ("user", "we") and \
                not c.negated:   # "I'm finally in the study abroad program", "I'm on the team"
            out.append(make("attribute", "is a member of", ph.phrase(o), "ORG"))
        if p == "in" and o.ent_type_ in ("GPE",) and c.subject in ("user", "we") and c.tense != "future":
            out.append(make("attribute", "lives in", ph.phrase(o), "PLACE"))
        if p == "from":
            out.append(make("attribute", "is from", ph.phrase(fr.place_in(o)), "PLACE"))
        elif p == "on" and o.pos_ in ("NOUN", "PROPN") and o.lower_ not in w.PRONOUN_OBJECTS and (
                o.lemma_ in ("medication", "tablet", "pill") or o.text[:1].islower() and
                any(k in o.lower_ for k in ("ine", "ol", "pine", "statin", "iron", "pril", "zole", "mab"))):
            out.append(make("attribute", "takes", ph.phrase(o), None, text=f"user takes {ph.phrase(o)}"))
    if c.negated:
        if c.ended:
            return [x if x.ends else _as_end(x) for x in out]
        return [_negate(x) for x in out if x.predicate != "is named"]
    return out


def _negate(cand: Candidate) -> Candidate:
    cand.predicate = fr.negative_predicate(cand.predicate)
    cand.text = f"user {cand.predicate} {cand.object}"
    return cand


def _copula_value(c: Clause, a) -> list[Candidate]:
    low = a.lower_
    if any(t.dep_ == "det" and t.lower_ == "no" for t in a.children):
        return []    # "I'm no writer like you"
    lemma = a.lemma_.lower()
    if low == "old" and c.subject == "user":
        num = next((t for t in a.subtree if t.like_num), None)
        if num is not None:
            return [make("attribute", "is aged", num.text, None, text=f"user is aged {num.text}")]
    if a.like_num and a.dep_ in ("attr", "acomp") and c.subject != "we" and c.tense != "past":
        return [make("attribute", "is aged", a.text, None, text=f"user is aged {a.text}")]
    if a.pos_ == "PROPN" and a.ent_type_ in ("PERSON", "") and c.subject == "user" and a.dep_ == "attr" and \
            not any(t.dep_ == "det" for t in a.children):
        out = [make("attribute", "is named", a.text, None, text=f"user is named {a.text}")]
        out.extend(_appositives(a))
        return out
    if low in w.DIETS or lemma in w.DIETS:
        return [make("attribute", "follows diet", low, None, text=f"user is {low}")]
    if a.pos_ == "ADJ" or a.dep_ == "acomp":
        pred = w.ADJ_PREP.get(low)
        if pred:
            out = []
            objs = [o for p, o in fr.prep_objects(a)] or [x for x in a.children if x.dep_ == "xcomp" and any(
                g.lower_ == "to" for g in x.children)]
            for o in objs:
                for item in ph.conjuncts(o):
                    etype = ph.entity_type(item, w.ADJ_PREP_TYPE.get(pred, "THING"))
                    if pred == "is married to" and not ph.is_name(item):
                        continue
                    out.append(make("relation" if "PERSON" == etype else "attribute", pred, ph.phrase(item), etype))
            if not out and pred == "is married to" and c.subject == "user":
                out = [make("relation", "is married to", p.text, "PERSON") for p in c.partners if ph.is_name(p)]
            if not out and low == "married":
                out = [make("attribute", "has relationship status", "married", None, text="user is married")]
            return out
        if low in w.TRAIT_ADJECTIVES:
            return [make("attribute", "is", low, None, text=f"user is {low}")]
        return []
    if a.pos_ in ("NOUN", "PROPN") and a.dep_ == "attr":
        if lemma == "fan":
            return [make("preference", "likes", ph.phrase(o), ph.entity_type(o, "THING"))
                    for p, o in fr.prep_objects(a) if p == "of"]
        text = ph.phrase(a, keep_of=False)
        if lemma in w.ROLES or text.lower() in w.ROLES or low.endswith(w.ROLE_SUFFIXES) and a.pos_ == "NOUN" \
                and lemma not in w.NOT_ROLES:
            out = [make("attribute", "works as", text, "ROLE")]
            for p, o in fr.prep_objects(a):
                if p in ("at", "for", "with") and o.lemma_ not in w.TIME_NOUNS:
                    out.append(make("attribute", "works at", ph.phrase(o), "ORG"))
                elif p == "in" and o.ent_type_ in ("GPE", "LOC"):
                    out.append(make("attribute", "lives in", ph.phrase(o), "PLACE"))
            return out
    return []


def _appositives(name) -> list[Candidate]:
    """"I'm Dan, 31, data analyst at Indeed": age and role listed after the name."""
    out = []
    for t in name.subtree:
        if t is name:
            continue
        if t.like_num and t.head is name and t.dep_ in ("nummod", "appos", "npadvmod"):
            out.append(make("attribute", "is aged", t.text, None, text=f"user is aged {t.text}"))
        elif t.dep_ == "appos" and t.pos_ == "NOUN":
            out.extend(_role_phrase(t))
    return out


def _role_phrase(t) -> list[Candidate]:
    out = [make("attribute", "works as", ph.phrase(t, keep_of=False), "ROLE")]
    for p, o in fr.prep_objects(t):
        if p in ("at", "for", "with"):
            out.append(make("attribute", "works at", ph.phrase(o), "ORG"))
        elif p == "in" and (o.ent_type_ in ("GPE", "LOC") or o.pos_ == "PROPN"):
            out.append(make("attribute", "lives in", ph.phrase(o), "PLACE"))
    # "here in Austin" hangs on the verb
    for s in t.sent:
        if s.lower_ == "here":
            for p, o in fr.prep_objects(s):
                if p == "in":
                    out.append(make("attribute", "lives in", ph.phrase(o), "PLACE"))
    return out


def _fragment(sent) -> list[Candidate]:
    """A verbless introduction: "Lucas, 35, sous-chef at Bistrot Garance in Lyon"."""
    out = []
    toks = [t for t in sent if not t.is_punct]
    if not toks or len(toks) > 20:
        return out
    first_name = next((t for t in toks[:3] if ph.is_name(t) and t.ent_type_ == "PERSON"), None)
    if first_name is None:
        return out
    doc = first_name.doc
    before = doc[first_name.i - 1] if first_name.i > sent.start else None
    after = doc[first_name.i + 1] if first_name.i + 1 < sent.end else None
    if before is not None and (before.lower_ in _GREETINGS or before.pos_ == "INTJ") or (
            after is not None and after.text == ":"):
        return out    # "Hey Jon!", "Thanks, Mel": the one spoken to; "Gina: …": a speaker's label
    for t in sent:
        if t.like_num and t.i <= first_name.i + 3 and t.text.isdigit() and 0 < int(t.text) < 120:
            out.append(make("attribute", "is aged", t.text, None, text=f"user is aged {t.text}"))
        elif t.pos_ == "NOUN" and (t.lemma_ in w.ROLES or t.lower_.endswith(w.ROLE_SUFFIXES)
                                   and t.lemma_ not in w.NOT_ROLES) and \
                any(p.lower_ in ("at", "for") for p in t.children):
            out.extend(_role_phrase(t))
    if out or (after is not None and after.lower_ == "here"):
        # a name is the user's only in an introduction: "Gerald here, 67", "Lucas, 35, sous-chef at …"
        out.insert(0, make("attribute", "is named", first_name.text, None, text=f"user is named {first_name.text}"))
    return out


_GREETINGS = frozenset("hi hey hello hiya yo thanks thank thx cheers dear bye congrats congratulations "
                       "morning evening night sorry love ok okay oh wow aw aww".split())


def _end_of(sent) -> list[Candidate]:
    """"that's the end of golf for me", "no more golf for me": the user stops doing it."""
    out = []
    for t in sent:
        if not (t.lower_ == "end" and t.pos_ == "NOUN" or t.lower_ == "more" and any(
                c.lower_ == "no" for c in list(t.children) + list(t.head.children))):
            continue
        me = any(p.lower_ == "for" and any(o.lower_ in ("me", "us") for o in p.children)
                 for p in list(t.children) + list(t.head.children) if p.dep_ == "prep")
        thing = next((o for p in t.children if p.dep_ == "prep" and p.lower_ == "of" for o in p.children
                      if o.dep_ == "pobj" and o.pos_ == "NOUN"), None) if t.lower_ == "end" else (
            t.head if t.head.pos_ == "NOUN" and t.dep_ == "amod" else None)
        if me and thing is not None and thing.lemma_ not in w.ABSTRACT:
            what = " ".join(x.text for x in ph.span_tokens(thing) if x.lower_ not in ("more", "no"))
            out.append(make("routine", "does", what, None, ends=True, text=f"user stopped {what}"))
    return out


_PLEASANTRIES = frozenset({"good", "great", "bad", "terrible", "new"})   # "Great talking to you."
_HEDGE_VERBS = frozenset({"guess", "think", "suppose", "reckon", "say"})


def _verbless(sent, clauses, at) -> list[Candidate]:
    """What a first-person message says without a verb of its own: a diet ("vegetarian ten years
    now", "so vegetarian now I guess"), "N days without a cigarette", "caffeine free"."""
    out = []
    others = {t.i for c in clauses if c.subject in ("other", "my") for t in c.tokens}
    low = sent.text.lower()
    first = next((t for t in sent if not t.is_punct), None)
    if first is not None and first.lower_ in ("quit", "stopped", "ditched") and first.i + 1 < sent.end:
        nxt = first.nbor(1)   # "Quit smoking three weeks ago": the parser reads a sentence-first "Quit" as a name
        if nxt.pos_ in ("NOUN", "VERB") and nxt.lower_ not in w.PRONOUN_OBJECTS:
            thing = w.SYNONYMS.get(nxt.lower_, nxt.lower_)
            out.append(make("routine", "does", thing, None, ends=True, text=f"user stopped {thing}"))
    for t in sent:
        if t.lower_ in w.DIETS and any(x.dep_ == "neg" for x in t.children) and (
                "anymore" in low or "any more" in low or "no longer" in low):
            out.append(make("attribute", "follows diet", t.lower_, None, ends=True, text=f"user is no longer {t.lower_}"))
            continue   # "not vegetarian anymore btw"
        if t.i in others and not (t.lower_ in w.DIETS and t.pos_ == "VERB"):
            continue
        if (t.lower_ in w.DIETS) and t.dep_ in ("ROOT", "appos", "npadvmod", "conj", "dobj", "attr", "nmod",
                                                   "amod", "advmod") and not (t.head.lemma_ == "be" and any(
                                                       c.verb is t.head and c.subject in ("user", "we")
                                                       for c in clauses)) and t.head.lemma_ != "be":
            if not any(x.dep_ == "neg" for x in t.head.children):
                out.append(make("attribute", "follows diet", t.lower_, None, text=f"user is {t.lower_}"))
        elif t.lower_ in w.DIETS and t.dep_ == "ccomp" and t.head.lemma_ in _HEDGE_VERBS and not any(
                x.dep_ in ("nsubj", "neg") for x in t.children):
            out.append(make("attribute", "follows diet", t.lower_, None, text=f"user is {t.lower_}",
                            confidence=0.6))
        if t.like_num and t.i == sent.start and t.text.isdigit() and 0 < int(t.text) < 120 and t.i + 1 < len(
                t.doc) and t.nbor(1).lower_ in ("today", "yesterday"):
            when = at if t.nbor(1).lower_ == "today" else at - timedelta(days=1)
            out.append(make("attribute", "is aged", t.text, None, text=f"user is aged {t.text}", valid_at=when))
        if t.pos_ == "ADJ" and t.lower_ in w.ADJ_PREP and t.lower_ not in _PLEASANTRIES and t.i == sent.start and not any(
                x.dep_ == "nsubj" for x in t.children):   # "married to Mark, …"
            out.extend(_copula_value(Clause(verb=t.head, subject="user"), t))
        if t.lower_ in w.INJURY_WORDS and t.dep_ == "amod" and t.head.lemma_ in w.BODY_PARTS and not any(
                x.dep_ == "poss" and x.lower_ not in ("my",) for x in t.head.children) and t.head.dep_ in (
                "ROOT", "appos", "npadvmod", "conj", "dobj", "attr") and t.head.head.lemma_ not in ("see", "fix", "treat"):
            # "had a crash on the bike on saturday, broken collarbone": an injury said in passing
            what = t.head.lower_
            out.append(make("event", w.INJURY_WORDS[t.lower_], what, None,
                            text=f"user {w.INJURY_WORDS[t.lower_]} their {what}", valid_at=_clause_date(sent, at)))
        if t.lower_ == "without" and (t.head.lemma_ in w.TIME_NOUNS or t.dep_ == "ROOT" and any(
                x.lemma_ in w.TIME_NOUNS for x in t.children)):   # "12 days without a cigarette"
            for o in t.children:
                if o.dep_ == "pobj":
                    thing = w.SYNONYMS.get(o.lower_, o.lower_)
                    out.append(make("routine", "does", thing, None, ends=True, text=f"user stopped {thing}"))
        if t.lower_ == "no" and t.dep_ == "det" and (t.head.tag_ == "VBG" or t.head.lower_.endswith("ing")):
            out.append(make("routine", "does", t.head.lower_, None, ends=True, text=f"user stopped {t.head.lower_}"))
        if t.lower_ == "free" and t.i > sent.start:
            what = t.nbor(-1) if t.nbor(-1).text != "-" or t.i < sent.start + 2 else t.nbor(-2)
            if what.pos_ in ("NOUN", "PROPN") or what.lower_ in w.SYNONYMS or what.lower_ in lx.FOODS:
                thing = w.SYNONYMS.get(what.lower_, what.lower_)   # "caffeine free", "sugar-free"
                out.append(make("routine", "does", thing, None, ends=True, text=f"user stopped {thing}"))
    return out


def _fragment_job(sent) -> list[Candidate]:
    """"first week at Spotify done", "2 weeks in at EA": a new job, said in passing."""
    out = []
    for t in sent:
        if t.lemma_ in ("day", "week", "month") and any(c.lower_ in ("first", "1st", "second") or c.like_num
                                                         for c in t.children):
            for p in t.children:
                if p.dep_ == "prep" and p.lower_ in ("at", "as"):
                    for o in p.children:
                        if o.dep_ == "pobj" and o.pos_ in ("PROPN", "NOUN"):
                            pred, et = ("works at", "ORG") if p.lower_ == "at" else ("works as", "ROLE")
                            out.append(make("attribute", pred, ph.phrase(o), et))
                            for p2, o2 in fr.prep_objects(o):
                                if p2 == "at":
                                    out.append(make("attribute", "works at", ph.phrase(o2), "ORG"))
    return out


def _other(c: Clause, at: datetime, births: list) -> list[Candidate]:
    """Someone else's clause that still changes the user's facts: a pet or person who died, a
    child born, a partner who proposed, "my back is bad"."""
    v = c.verb
    lemma = v.lemma_.lower()
    subj = c.subj
    if subj is None:
        return []
    prt = next((t.lower_ for t in v.children if t.dep_ == "prt"), None)
    subject_words = [t for t in subj.subtree]
    name = next((t for t in subject_words if ph.is_name(t)), None) or next(
        (t for t in subject_words if t.text[:1].isupper() and t.is_alpha and t.i > t.sent.start
         and t.lemma_.lower() not in w.RELATION_NOUNS and t.lemma_.lower() not in w.PET_NOUNS), None)   # "My cat Pickles"
    if lemma in w.DEATH_VERBS and (lemma != "pass" or prt == "away" or any(t.lower_ == "away" for t in v.subtree)
                                   or subj.lower_ in ("he", "she")):
        target = name.text.lower() if name is not None else ph.phrase(subj).lower()
        if subj.lower_ in ("he", "she", "they"):
            # "He died in February", "when she passed in November": the family member named before
            before = [t for t in v.doc[max(0, v.i - 40):v.i] if (t.lemma_.lower() in w.RELATION_NOUNS or t.lower_
                      in w.RELATION_NOUNS) and any(c.lower_ in ("my", "our") for c in t.children)]
            if not before:
                return []
            rel = before[-1]
            target = w.RELATION_NOUNS.get(rel.lower_) or w.RELATION_NOUNS.get(rel.lemma_.lower())
            return [make("relation", f"has {target}", "", None, ends=True, text=f"user's {target} died")]
        return [make("relation", "has", target, None, ends=True, text=f"{target} died")]
    if lemma == "put" and any(t.lower_ == "sleep" for t in v.subtree) or lemma == "have" and any(
            t.lemma_ == "put" and any(g.lower_ in ("sleep", "down") for g in t.subtree) for t in v.subtree):
        for t in list(subj.subtree) + list(v.subtree):   # "have Bess put to sleep", "had him put to sleep"
            if ph.is_name(t) and t.dep_ in ("nsubj", "nsubjpass", "dobj", "appos"):
                return [make("relation", "has", t.lower_, None, ends=True, text=f"{t.lower_} died")]
    if subj.lemma_ == "divorce" and lemma in ("finalize", "come", "go", "be", "settle") and c.tense == "past" \
            and not c.negated and (subj.i == 0 or any(t.lower_ in ("my", "our", "the") for t in subj.children)):
        # "the divorce was finalized last Friday", "my divorce came through"
        return [make("relation", "has partner", "", None, ends=True),
                make("event", "got", "divorced", None, text="user got divorced")]
    if lemma == "bear" and v.tag_ == "VBN" and name is not None:
        births.append(name.text.lower())
        return []
    if lemma == "offer" and any(t.lower_ == "me" and t.dep_ in ("dative", "dobj") for t in v.children):
        job = fr.direct_object(v)
        if job is not None and job.lemma_ in w.JOB_NOUNS and (subj.pos_ == "PROPN" or subj.ent_type_ == "ORG"):
            return [make("attribute", "works at", ph.phrase(subj), "ORG")]
        if job is not None and job.lemma_ not in w.JOB_NOUNS:
            return [make("attribute", "works as", ph.phrase(job), "ROLE")]
    if lemma in ("split", "break") and subj.lemma_ in w.GROUP_NOUNS and c.subject in ("other", "my"):
        return [make("attribute", "is a member of", subj.lemma_, None, ends=True, text=f"the {subj.lemma_} split up")]
    if lemma == "expect" and (any(t.lemma_ in w.PARTNER for t in subj.subtree) or c.subject == "we"):
        return [make("plan", "is expecting", "baby", None, text="user is expecting a baby", valid_at=at)]
    if lemma in ("look", "sound", "seem", "be") and c.subject == "other" and subj.pos_ in ("NOUN", "PROPN") and not any(
            t.lower_ in ("you", "your", "yours") for t in v.sent) and not any(
            t.dep_ == "det" and t.lower_ in ("that", "this") for t in subj.children):
        # "the corola hybrid looks great" (a thing the user brought up); not "that dish looks great, did you …"
        adj = next((t for t in v.children if t.dep_ == "acomp" and t.lower_ in _OPINION), None)
        if adj is not None:
            cand = make("preference", "dislikes" if _OPINION[adj.lower_] < 0 else "likes", ph.phrase(subj),
                        ph.entity_type(subj, "THING"), confidence=0.55)
            cand.needs_known_entity = True   # only an opinion about something the user already talked about
            return [cand]
    if lemma == "propose" and fr.direct_object(v) is None and all(
            o.lower_ == "me" for p, o in fr.prep_objects(v) if p == "to"):
        if name is not None:
            return [make("relation", "is engaged to", name.text, "PERSON")]
        if subj.lower_ in ("he", "she"):   # "he proposed last night and I said yes"
            return [make("event", "got", "engaged", None, text="user got engaged", confidence=0.6)]
    if lemma == "be" and c.subject == "other" and not c.negated:
        got = _about_a_thing(c, at)
        if got:
            return got
    if lemma == "be" and c.subject == "other" and not c.negated and any(
            a.dep_ in ("attr", "acomp") and (a.lower_ in _FAVOURITE or any(t.lower_ in _FAVOURITE for t in a.children))
            and any(t.dep_ == "poss" and t.lower_ == "my" for t in a.children) for a in v.children):
        # "Painting landscapes and still life is my favorite!", "Hiking is my favourite hobby"
        return [make("preference", "likes", ph.phrase(x), ph.entity_type(x, "THING")) for x in ph.conjuncts(subj)
                if x.pos_ in ("NOUN", "PROPN") and x.lower_ not in w.PRONOUN_OBJECTS and x.lemma_ not in w.ABSTRACT]
    if c.subject == "my" and lemma == "be" and (subj.lemma_ in ("favorite", "favourite", "fave", "fav") or any(
            t.lower_ in ("favorite", "favourite", "fave", "fav") for t in subj.children)) and not c.negated:
        # "My favorite is the amazing banana split sundae", "my favourite band is Radiohead"
        return [make("preference", "likes", ph.phrase(a), ph.entity_type(a, "THING"))
                for a in v.children if a.dep_ in ("attr", "acomp") and a.lower_ not in w.PRONOUN_OBJECTS]
    if c.subject == "my" and subj.lemma_ in fr.HOUSING:
        for p, o in fr.prep_objects(subj) + (fr.prep_objects(v) if lemma == "be" else []):
            if p in ("in", "on", "near") and (o.pos_ == "PROPN" or o.text[:1].isupper()):
                return [make("attribute", "lives in", ph.phrase(o), "PLACE")]
    if c.subject == "my" and lemma == "be" and subj.lemma_ not in w.RELATION_NOUNS and subj.lemma_ not in w.PET_NOUNS:
        adj = next((t for t in v.children if t.dep_ == "acomp" and t.pos_ == "ADJ"), None)
        if adj is not None and adj.lower_ in ("high", "low", "bad", "weak", "poor") and subj.pos_ == "NOUN":
            what = ph.phrase(subj)
            return [make("attribute", "has condition", f"{adj.lower_} {what}", None,
                         text=f"user has {adj.lower_} {what}")]
    return []


_FAVOURITE = frozenset({"favorite", "favourite", "fave", "fav"})
_OPINION = {"great": 1, "amazing": 1, "awesome": 1, "good": 1, "nice": 1, "perfect": 1, "cool": 1, "fantastic": 1,
            "excellent": 1, "lovely": 1, "terrible": -1, "awful": -1, "bad": -1, "horrible": -1}


def _unique(cands: list[Candidate]) -> list[Candidate]:
    seen, out = set(), []
    for c in cands:
        key = (c.predicate, c.object.lower(), c.ends)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
