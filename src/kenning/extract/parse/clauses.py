"""Clauses of a parsed sentence and what they say about their subject, tense and certainty."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import dates
from . import words as w

USER_WORDS = frozenset({"i", "me", "myself"})
WE_WORDS = frozenset({"we", "us"})
CLAUSE_DEPS = frozenset({"ROOT", "conj", "ccomp", "parataxis", "advcl"})   # an xcomp is read by its governor
REQUEST_START = re.compile(
    r"^(?:\W*(?:ok|okay|so|hey|oh|and|also|btw|honestly|hi|hello|actually|now|oh and|one more thing)\b[\s,.!]*){0,3}"
    r"(?:please|pls|can you|could you|would you|will you|you can|you could|you should|always|never|just|from now on|"
    r"going forward|make sure|don't|do not|stop|drop|use|keep|give|switch|make|write|reply|answer|respond|talk|"
    r"explain|ditch|skip)\b", re.I)
MODALS = frozenset({"could", "might", "may", "would", "should", "must", "can"})


@dataclass
class Clause:
    verb: object                   # the head token
    subject: str                   # user | we | none | you | other | my
    subj: object | None = None     # the subject token
    partners: list = field(default_factory=list)   # "me and my girlfriend Sarah": the others of a joint subject
    negated: bool = False
    tense: str = "present"         # past | present | future
    perfect: bool = False
    progressive: bool = False
    hypothetical: bool = False
    question: bool = False
    request: bool = False          # asked of the assistant ("could you …", "please use …")
    ended: bool = False            # "not … anymore", "no longer"
    again: bool = False
    hedged: bool = False
    date: dates.DatePhrase | None = None
    tokens: list = field(default_factory=list)


def own_tokens(verb) -> list:
    """The verb's clause without the clauses hung on it (its conjuncts and subordinates)."""
    out, todo = [], [verb]
    while todo:
        tok = todo.pop()
        out.append(tok)
        for c in tok.children:
            if c.dep_ in ("conj", "ccomp", "parataxis", "advcl", "relcl") and c.pos_ in ("VERB", "AUX"):
                continue
            todo.append(c)
    return sorted(out, key=lambda t: t.i)


def clause_heads(sent) -> list:
    heads = []
    for tok in sent:
        if tok.pos_ not in ("VERB", "AUX"):
            continue
        if tok.pos_ == "AUX" and tok.dep_ not in ("ROOT", "conj", "ccomp", "parataxis", "advcl"):
            continue
        if tok.dep_ in CLAUSE_DEPS and _heads_a_clause(tok):
            heads.append(tok)
    return heads


def _heads_a_clause(tok) -> bool:
    """A conjunct heads a clause only when what it is listed with does: "a great chance to catch up
    and explore nature", "curling up with a book, escaping reality" list verbs inside a phrase."""
    first, hops = tok, 0
    while first.dep_ == "conj" and first.head is not first and hops < 8:
        first, hops = first.head, hops + 1
    if first is tok:
        return True
    if _subject_of(tok) is not None:
        return True      # "I love it and she loves it too": a clause of its own
    return first.dep_ in CLAUSE_DEPS and first.pos_ in ("VERB", "AUX")


def _subject_of(verb):
    for c in verb.children:
        if c.dep_ in ("nsubj", "nsubjpass", "expl", "csubj"):
            return c
    return None


def _inherited_subject(verb):
    """A conjunct, xcomp or advcl without a subject of its own shares its head's."""
    tok, hops = verb, 0
    while tok.dep_ in ("conj", "xcomp", "advcl", "acl") and tok.head is not tok and hops < 6:
        tok = tok.head
        hops += 1
        subj = _subject_of(tok)
        if subj is not None:
            return subj
    return None


def classify(verb, sent, at) -> Clause:
    subj = _subject_of(verb)
    inherited = False
    if subj is None:
        subj = _inherited_subject(verb)
        inherited = subj is not None
    kind, partners = _subject_kind(subj, verb, sent)
    subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
    if kind != "user" and len(subjects) > 1 and any(c.lower_ in USER_WORDS for c in subjects):
        # "Mark and I are separating" parsed as two subjects side by side, not as a list
        subj = next(c for c in subjects if c.lower_ in USER_WORDS)
        kind, partners = "user", [c for c in subjects if c is not subj]
    if kind == "other" and inherited and verb.dep_ == "xcomp":
        # "Doctor wants me on iron": the object of the head verb is the subject of its xcomp
        obj = next((c for c in verb.head.children if c.dep_ == "dobj" and c.lower_ in USER_WORDS), None)
        kind = "user" if obj is not None else kind
    c = Clause(verb=verb, subject=kind, subj=subj, partners=partners)
    c.tokens = own_tokens(verb)
    low = {t.lower_ for t in c.tokens}
    aux = [t for t in verb.children if t.dep_ in ("aux", "auxpass")]
    aux_words = {t.lower_ for t in aux}
    c.negated = any(t.dep_ == "neg" for t in verb.children) or any(
        t.lower_ in ("never", "no") and t.dep_ in ("neg", "advmod", "det") and t.head is verb for t in c.tokens)
    c.ended = bool(low & w.ENDING_ADVERBS) and (c.negated or "no" in low)
    if "no" in low and "longer" in low:
        c.ended = True
    c.again = "again" in low
    c.perfect = bool(aux_words & {"have", "'ve", "has", "'s", "had", "'d"}) and verb.tag_ == "VBN"
    c.progressive = verb.tag_ == "VBG"
    if aux_words & {"will", "'ll", "wo", "shall"} or _going_to(verb):
        c.tense = "future"
    elif verb.tag_ == "VBD" or aux_words & {"did", "was", "were", "got"} and verb.tag_ in ("VBN", "VBG", "VBD"):
        c.tense = "past"
    elif c.perfect:
        c.tense = "past"
    elif verb.tag_ == "VBN" and not aux and verb.dep_ == "conj":
        c.tense = "past"     # "I've been working on my store and just teamed up with …": a past conjunct
    if "'d" in aux_words and verb.tag_ != "VBN":
        aux_words = aux_words | {"would"}    # "I'd love to see …" (but "I'd been": had)
    modal = aux_words & MODALS
    c.hedged = bool(low & w.HEDGES)
    # "I finished another pottery project - want to see a pic?": only the clause that runs up to the
    # question mark asks
    if sent[-1].text == "?":
        last = max(clause_heads(sent), key=lambda t: t.i, default=verb)
        c.question = verb.i == last.i
    c.question = c.question or _inverted(verb)
    c.hypothetical = bool(modal - {"can"}) or any(t.dep_ == "mark" and t.lower_ in ("if", "unless", "whether")
                                                   for t in verb.children) or "maybe" in low or "perhaps" in low
    if "would" in aux_words and verb.lemma_ in ("like", "love", "prefer") and not any(
            x.dep_ == "xcomp" and x.pos_ == "VERB" for x in verb.children):
        c.hypothetical = False   # "I'd like …", "I'd prefer …": a wish, said plainly ("I'd love to see …" is not)
    if c.progressive and verb.dep_ != "ROOT" and not any(t.lemma_ == "be" for t in aux) and \
            _subject_of(verb) is None and verb.i != _first_word(sent).i:   # "trying to cut down …": diary style
        c.hypothetical = True   # ", escaping reality", ", dreaming of big games": a participle, not a clause
    c.request = kind == "you" or bool(REQUEST_START.match(sent.text)) or (
        kind == "none" and verb.tag_ == "VB" and verb.i == _first_word(sent).i)
    if inherited or (subj is None and verb.dep_ == "conj"):
        # "Maybe I'll start … and publish my own screenplay", "keep persevering and keep working":
        # a conjunct without a subject of its own says it the way its head does
        head, hops = verb, 0
        while head.dep_ in ("conj", "xcomp", "advcl") and head.head is not head and hops < 6:
            head, hops = head.head, hops + 1
            head_aux = {t.lower_ for t in head.children if t.dep_ in ("aux", "auxpass")}
            if head_aux & {"will", "'ll", "wo", "shall"} or _going_to(head):
                c.tense = "future"
            if head_aux & (MODALS - {"can"}) or any(t.lower_ in ("maybe", "perhaps") for t in head.children):
                c.hypothetical = True
            if _subject_of(head) is not None:
                break
        if kind == "none" and verb.tag_ == "VB" and _subject_of(head) is None and (
                _advice(head) or head.tag_ == "VB" and head.dep_ == "ROOT"):
            c.request = True    # "Do your research and find an adoption agency"
        chain, tok = [], verb
        while tok.dep_ in ("conj", "xcomp") and tok.head is not tok and len(chain) < 6:
            tok = tok.head
            chain.append(tok)
        if any(t.lemma_ in ("want", "hope", "wish", "need", "dream", "plan", "intend", "aim")
               for t in chain[:-1] + chain[-1:] if t is not verb) and verb.lemma_ not in ("want", "hope"):
            c.hypothetical = True   # "I want to get stronger and improve my endurance": a wish
    if kind == "none" and _advice(verb):
        c.request = True        # "When things get rough, keep persevering": advice to the listener
    if verb.dep_ == "advcl" and any(t.lower_ == "to" and t.dep_ == "aux" for t in verb.children) and \
            verb.head.lemma_ not in ("move", "relocate", "come", "return", "go"):
        c.hypothetical = True   # "went to a fair to show off my studio": a purpose, not a fact
    if verb.dep_ == "ccomp" and verb.head.lemma_ in ("let", "make", "help"):
        c.hypothetical = True   # "lets me show my creativity"
    if "can" in aux_words and any(t.lower_ in ("you", "u") for t in verb.subtree if t.dep_ in ("pobj", "dative", "dobj")):
        c.request = True        # "I can share the recipe with you": an offer to the listener
    text = " ".join(t.text for t in c.tokens)
    tense = "past" if c.tense == "past" else ("future" if c.tense == "future" or c.progressive else "present")
    c.date = dates.find(text, at, tense)
    return c


def _advice(verb) -> bool:
    """A subjectless verb under "when/if …": "When things get rough, keep going"."""
    return verb.tag_ in ("VB", "VBP") and _subject_of(verb) is None and verb.dep_ == "ROOT" and any(
        c.dep_ == "advcl" and c.i < verb.i and any(m.lower_ in ("when", "if", "whenever") for m in c.children)
        for c in verb.children)


def _first_word(sent):
    for t in sent:
        if not (t.is_punct or t.pos_ in ("INTJ",) or t.lower_ in ("please", "pls", "ok", "okay", "so", "and",
                                                                    "also", "btw", "oh", "hey", "just")):
            return t
    return sent[0]


def _going_to(verb) -> bool:
    head = verb.head
    return verb.dep_ == "xcomp" and head.lower_ == "going" and any(c.lower_ == "to" for c in verb.children)


def _inverted(verb) -> bool:
    """"do you …", "can you …": an auxiliary before the subject opens a question."""
    subj = _subject_of(verb)
    aux = [t for t in verb.children if t.dep_ in ("aux",) and t.i < verb.i]
    return bool(subj is not None and aux and aux[0].i < subj.i and aux[0].i == verb.sent.start)


def _subject_kind(subj, verb, sent):
    if subj is not None and subj.pos_ == "NOUN" and verb.tag_ == "VBD" and subj.i < verb.i and \
            subj.right_edge.i + 2 >= verb.i and subj.doc[verb.i - 1].text == ",":
        subj = None    # "bad news, tore my meniscus": a heading before a diary clause, not its subject
    if subj is None:
        first = _first_word(sent)
        if verb.dep_ == "ROOT" or verb.i <= first.i + 2 or verb.dep_ in ("conj", "parataxis"):
            return "none", []
        return "other", []
    low = subj.lower_
    if low in USER_WORDS:
        partners = [c for c in subj.children if c.dep_ == "conj"]
        return "user", partners
    if low in WE_WORDS:
        return "we", []
    if low in ("you", "u"):
        return "you", []
    # "Kenji and I", "me and my girlfriend Sarah", "My wife Margaret and I"
    parts = [subj] + [c for c in subj.subtree if c.dep_ == "conj" and c.head.i in (subj.i,) or
                      (c.dep_ == "conj" and c.head.dep_ == "conj")]
    if any(p.lower_ in USER_WORDS for p in parts):
        return "user", [p for p in parts if p.lower_ not in USER_WORDS]
    if any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in subj.children):
        return "my", []
    return "other", []
