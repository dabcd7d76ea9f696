"""The people and animals in the user's life: "my husband Tom", "our two kids, Leo and Ava",
"a beagle called Rufus", "me and my girlfriend Sarah", with the names as entities."""
from __future__ import annotations

from . import phrases as ph
from . import words as w
from .facts import make


_NUM = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def _is_mine(tok) -> bool:
    """Possessed by the user: "my/our X", or had by the user ("I have a daughter named …")."""
    if any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in tok.children):
        return True
    head = tok.head
    if tok.dep_ in ("dobj",) and head.lemma_ in ("have", "adopt", "rescue", "get", "own"):
        subj = next((c for c in head.children if c.dep_ == "nsubj"), None)
        if subj is None and head.dep_ == "conj":
            subj = next((c for c in head.head.children if c.dep_ == "nsubj"), None)
        return subj is not None and (subj.lower_ in ("i", "we") or any(
            c.lower_ in ("i", "me") for c in subj.subtree))
    return False


def _age(name_tok) -> str | None:
    """"Lucía who's 8", "Noah is 10": an age said with the name."""
    for c in name_tok.children:
        if c.dep_ == "relcl":
            for g in c.children:
                if g.dep_ == "attr" and g.like_num:
                    return g.text
    head = name_tok.head
    if name_tok.dep_ == "nsubj" and head.lemma_ == "be":
        for g in head.children:
            if g.dep_ == "attr" and g.like_num:
                return g.text
    return None


def _pet_named(sent) -> list:
    """"we adopted a cat … we named her Noodle", "adopting a rabbit, her name is Kanel"."""
    pet = next((t for t in sent if (t.lemma_ in w.PET_NOUNS or t.lower_ in w.PET_NOUNS) and t.pos_ == "NOUN"), None)
    if pet is None:
        return []
    for t in sent:
        name = None
        if t.lemma_ in ("name", "call") and t.pos_ == "VERB" and any(c.lower_ in ("her", "him", "it", "them")
                                                                    for c in t.children):
            name = next((c for c in t.children if c.dep_ in ("oprd", "xcomp", "attr", "ccomp", "dobj", "npadvmod")
                         and c.lower_ not in ("her", "him", "it", "them") and c.text[:1].isupper()), None)
        elif t.lower_ == "name" and t.pos_ == "NOUN" and any(c.lower_ in ("her", "his", "its") for c in t.children):
            name = next((c for c in t.head.children if c.dep_ == "attr" and c.text[:1].isupper()), None)
        if name is not None:
            kind = w.PET_NOUNS.get(pet.lower_) or w.PET_NOUNS.get(pet.lemma_)
            return [make("relation", f"has {kind}", name.text, "THING", text=f"user has a {pet.lower_} named {name.text}")]
    return []


def relations(sent) -> list:
    out = _pet_named(sent)
    for tok in sent:
        word = tok.lower_
        lemma = tok.lemma_.lower()
        rel = w.RELATION_NOUNS.get(word) or w.RELATION_NOUNS.get(lemma)
        pet = None if rel else (w.PET_NOUNS.get(word) or w.PET_NOUNS.get(lemma))
        if not (rel or pet) or tok.pos_ not in ("NOUN", "PROPN"):
            continue
        if rel == "ex" or any(c.lower_ in ("ex", "late", "former", "old") and c.dep_ in ("amod", "compound")
                              for c in tok.children) and rel:
            continue
        if not _is_mine(tok):
            continue
        names = ph.names_near(tok)
        count = next((int(c.text) if c.text.isdigit() else _NUM.get(c.lower_, 0)
                      for c in tok.children if c.dep_ == "nummod"), 0)
        if not names and rel and count > 1:   # "two kids, Noah is 10 and Lily is 7"
            names = [t.text for t in sent if t.i > tok.i and ph.is_name(t) and t.ent_type_ == "PERSON"][:count]
        name_toks = [t for t in sent if t.text in names]
        if rel:
            for n in names:
                age = next((a for t in name_toks if t.text == n for a in [_age(t)] if a), None)
                text = f"user has {rel} {n}" + (f", aged {age}" if age else "")
                out.append(make("relation", f"has {rel}", n, "PERSON", text=text))
        else:
            for n in names:
                out.append(make("relation", f"has {pet}", n, "THING", text=f"user has a {word} named {n}"))
    return out
