"""Noun phrases out of a parse: the words of an object, its head, its type, and the names in it."""
from __future__ import annotations

from .. import lexicon as lx

DROP_DEPS = frozenset({"relcl", "acl", "punct", "appos", "cc", "conj", "advmod", "prep", "det", "predet",
                       "case", "mark", "advcl", "dep", "parataxis", "aux", "neg", "quantmod", "nsubj"})
# "this app", "that book" keep their demonstrative: the thing is the one in the chat, unnamed (gated)
LEAD_DROP = frozenset("""a an the my our his her their its some any such
 own another every each much many more less fewer enough too""".split())
FILLER = frozenset("""lol haha lmao omg tbh btw ngl rn ugh yeah yep ok okay like literally basically
 really so very pretty quite just""".split())
DATE_WORDS = frozenset("""today tonight yesterday tomorrow week weekend month year morning evening night
 monday tuesday wednesday thursday friday saturday sunday january february march april may june july
 august september october november december ago now""".split())
NER_TYPES = {"PERSON": "PERSON", "ORG": "ORG", "GPE": "PLACE", "LOC": "PLACE", "FAC": "PLACE",
             "PRODUCT": "PRODUCT", "EVENT": "EVENT", "WORK_OF_ART": "THING", "LANGUAGE": "SKILL",
             "NORP": "TOPIC"}


def span_tokens(head, keep_of: bool = True) -> list:
    """The tokens of the phrase headed by ``head``: modifiers to its left, "of"-phrases to its right,
    nothing that opens a clause, a list or an aside."""
    toks = [head]

    def walk(tok, depth):
        if depth > 6:
            return
        amp = any(c.dep_ == "cc" and c.text == "&" for c in tok.children) and tok.pos_ == "PROPN"
        keeps = KEEP_PREPS.get(tok.lemma_.lower(), ()) if depth == 0 else ()
        for child in tok.children:
            if child.dep_ == "prep" and child.lower_ in keeps and child.i > tok.i and any(
                    o.dep_ == "pobj" and o.pos_ in ("NOUN", "PROPN") and o.ent_type_ not in ("DATE", "TIME")
                    for o in child.children):
                toks.append(child)     # "a trip to Universal Studios", "a class in pottery": which one
                walk(child, depth + 1)
                continue
            if amp and child.dep_ in ("cc", "conj") and child.i > tok.i:
                toks.append(child)     # "Baird & Warner", "Marks & Spencer": one name
                continue
            if child.dep_ in DROP_DEPS and not (keep_of and child.dep_ == "prep" and child.lower_ == "of"
                                                 and child.i > tok.i and depth == 0):
                continue
            if child.ent_type_ in ("DATE", "TIME") and child.lower_ in DATE_WORDS:
                continue
            if child.dep_ == "poss" and child.pos_ == "PRON" and child.lower_ != "your":
                continue   # "your" stays: the listener's thing is not the user's (gated)
            toks.append(child)
            walk(child, depth + 1)

    walk(head, 0)
    toks.sort(key=lambda t: t.i)
    # one contiguous run around the head: a gap means the parse hung something far away on it
    run = [t for t in toks if abs(t.i - head.i) <= 8]
    lo = min(t.i for t in run)
    hi = max(t.i for t in run)
    chosen = {t.i for t in run}
    out = [t for t in head.doc[lo:hi + 1] if t.i in chosen]
    while out and (out[0].lower_ in LEAD_DROP or out[0].lower_ in FILLER or out[0].is_punct) and out[0] is not head:
        out = out[1:]
    while out and (out[-1].is_punct or out[-1].lower_ in FILLER) and out[-1] is not head:
        out = out[:-1]
    out = _hyphen_whole(out)
    demo = next((c for c in head.children if c.dep_ == "det" and c.lower_ in ("this", "that", "these", "those")), None)
    if demo is not None and head.pos_ == "NOUN" and len(out) == 1 and demo.i < out[0].i:
        # only a bare noun: "this app" is the one in the chat; "this amazing business dude" is a story's "a"
        out = [demo] + out    # kept so the gate can tell "this app" (unnamed) from "the app"
    doc = head.doc
    if out and out[-1].i + 2 < len(doc) and doc[out[-1].i + 1].lower_ == "to" and head.dep_ == "dobj":
        nxt = doc[out[-1].i + 2]     # "couch to 5k", "zero to 60": a name the parser cut at "to"
        if nxt.head.i == out[-1].i + 1 and any(ch.isdigit() for ch in nxt.text):
            out = out + [doc[out[-1].i + 1], nxt]
    return out


# a noun that says little without its complement, and the prepositions that bring it
KEEP_PREPS = {"trip": ("to",), "vacation": ("to", "in"), "holiday": ("to", "in"), "visit": ("to",),
              "flight": ("to",), "ticket": ("to", "for"), "class": ("in", "on"), "course": ("in", "on"),
              "lesson": ("in",), "degree": ("in",), "book": ("about", "on", "by"), "documentary": ("about", "on"),
              "program": ("in", "for"), "programme": ("in", "for"), "camp": ("for",), "workshop": ("on", "in"),
              "conference": ("on", "in"), "tournament": ("in",), "fan": ("of",), "tour": ("of", "to"),
              "move": ("to",), "job": ("at", "as"), "internship": ("at",), "race": ("in",)}


def _hyphen_whole(out: list) -> list:
    """"one-on-one mentoring", "emotionally-driven films", "de-stress": a word the tokenizer split at
    its hyphens stays whole (the parser hangs the parts anywhere)."""
    if not out:
        return out
    doc = out[0].doc
    lo, hi = out[0].i, out[-1].i
    chosen = {t.i for t in out}
    for _ in range(4):   # walk outwards over "x-y" joins written without spaces
        if lo >= 2 and doc[lo - 1].text == "-" and not doc[lo - 2].whitespace_ and not doc[lo - 1].whitespace_ \
                and doc[lo - 2].is_alpha:
            chosen |= {lo - 1, lo - 2}
            lo -= 2
        elif hi + 2 < len(doc) and doc[hi + 1].text == "-" and not doc[hi].whitespace_ and \
                not doc[hi + 1].whitespace_ and doc[hi + 2].is_alpha:
            chosen |= {hi + 1, hi + 2}
            hi += 2
        else:
            break
    joins = [t.i for t in doc[max(lo, 1):hi + 1] if t.text == "-" and not t.whitespace_
             and not doc[t.i - 1].whitespace_ and t.i + 1 < len(doc)]
    for _ in range(len(joins) + 1):   # a hyphen joins its neighbours once either side is in
        grew = False
        for h in joins:
            if ({h - 1, h + 1} & chosen) and not {h - 1, h, h + 1} <= chosen:
                chosen |= {h - 1, h, h + 1}
                grew = True
        if not grew:
            break
    return [t for t in doc[lo:hi + 1] if t.i in chosen]


def text_of(tokens) -> str:
    """Words as written, with spaces as written ("St. Mary's" stays whole)."""
    if not tokens:
        return ""
    out = ""
    for i, t in enumerate(tokens):
        out += t.text
        if i < len(tokens) - 1:
            out += t.whitespace_ if tokens[i + 1].i == t.i + 1 else " "
    return out.strip(" ,.;:!?-'\"")


def phrase(head, keep_of: bool = True) -> str:
    return text_of(span_tokens(head, keep_of))


def conjuncts(head) -> list:
    """``head`` and the items listed with it ("Leo and Ava", "peanuts, shellfish and latex")."""
    out, todo = [], [head]
    while todo and len(out) < 12:
        tok = todo.pop(0)
        out.append(tok)
        todo.extend(c for c in tok.children if c.dep_ == "conj" and c.pos_ in ("NOUN", "PROPN", "ADJ", "NUM",
                                                                                  "VERB", "X"))
    return out


def entity_type(head, default: str | None) -> str | None:
    """A type from the parser's named entities where it knows one, else the frame's default."""
    ner = NER_TYPES.get(head.ent_type_)
    lemma = head.lemma_.lower()
    if default in ("PERSON",):
        return "PERSON"
    if lemma in lx.FOODS or head.lower_ in lx.FOODS:
        return "FOOD" if default in (None, "THING", "FOOD", "TOPIC") else default
    if head.lower_ in lx.LANGUAGES and default in ("SKILL", "THING", "TOPIC"):
        return "SKILL"
    if default in ("PLACE", "ORG", "ROLE", "FOOD", "EVENT"):
        if ner in ("PLACE", "ORG") and default in ("PLACE", "ORG"):
            return ner if head.pos_ == "PROPN" else default
        return default
    if ner and ner != "PERSON":
        return ner
    return default


def is_name(tok) -> bool:
    """A proper name as written: a capitalised PROPN, or a PERSON entity."""
    return ((tok.pos_ == "PROPN" or tok.ent_type_ == "PERSON") and tok.text[:1].isupper() and tok.is_alpha
            and tok.ent_type_ not in ("DATE", "TIME", "CARDINAL", "ORDINAL", "NORP")
            and tok.lower_ not in DATE_WORDS)


def names_near(tok) -> list[str]:
    """Names that label ``tok``: "my husband Tom", "a beagle called Rufus", "two kids, Leo and Ava",
    "a daughter named Priya", "Tom, my husband"."""
    out = []
    for child in tok.children:
        if child.dep_ in ("appos", "compound", "npadvmod", "attr", "conj", "dobj") and child.i > tok.i and is_name(child):
            out.extend(c for c in conjuncts(child) if is_name(c))
            out.extend(g for c in child.subtree for g in [c] if g.dep_ in ("conj", "appos") and is_name(g)
                       and g.i > child.i)
        elif child.dep_ == "acl" and child.lemma_ in ("call", "name"):
            for g in child.children:
                if g.dep_ in ("oprd", "attr", "dobj", "npadvmod", "xcomp", "appos") and g.is_alpha:
                    out.extend(c for c in conjuncts(g) if c.is_alpha)
    if tok.dep_ == "appos" and is_name(tok.head) and tok.head.i < tok.i:
        out.append(tok.head)
    if not out:
        # "my husband Tom" parsed as compound: the name is the head, the relation word its compound
        nxt = tok.doc[tok.i + 1] if tok.i + 1 < len(tok.doc) else None
        if nxt is not None and is_name(nxt):
            out.append(nxt)
    seen, names = set(), []
    for t in out:
        if t.lower_ not in seen and t.lower_ not in lx.PRONOUNS and t.lower_ not in ("i", "me"):
            seen.add(t.lower_)
            names.append(t.text)
    return names
