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
    # the parser hung "who's 5" on the noun, not on the name: read the words right after it
    after = [t for t in name_tok.doc[name_tok.i + 1:name_tok.i + 5] if not t.is_punct]
    if len(after) >= 3 and after[0].lower_ == "who" and after[1].lemma_ == "be" and after[2].like_num:
        return after[2].text
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


# whose baby it is -> what the baby is to the user
_BABY_OF = {"son": "grandchild", "daughter": "grandchild", "child": "grandchild", "wife": "child",
            "husband": "child", "partner": "child", "brother": "sibling's child", "sister": "sibling's child"}


def _new_baby(sent) -> list:
    """"Our son's wife had the baby on Monday, a little boy called Alfie": a named baby born to
    the user's family, what it is to the user read from whose it is."""
    out = []
    for v in sent:
        if not (v.lemma_ in ("have", "give") and v.pos_ == "VERB" and any(
                c.dep_ == "dobj" and c.lemma_ in ("baby", "boy", "girl", "son", "daughter", "birth")
                for c in v.children)):
            continue
        subj = next((c for c in v.children if c.dep_ == "nsubj"), None)
        if subj is None:
            continue
        chain = [t for t in subj.subtree if t.lemma_.lower() in w.RELATION_NOUNS or t.lower_ in ("my", "our")]
        rels = [w.RELATION_NOUNS.get(t.lower_) or w.RELATION_NOUNS.get(t.lemma_.lower()) for t in chain
                if t.lower_ not in ("my", "our")]
        if not chain or chain[0].lower_ not in ("my", "our") or not rels:
            continue
        what = _BABY_OF.get(rels[0])     # "our son's wife": whose first (son) decides
        names = [g for t in sent if t.lemma_ in ("call", "name") and t.pos_ == "VERB"
                 for g in t.children if g.dep_ in ("oprd", "attr", "dobj", "xcomp", "npadvmod", "ccomp")
                 and ph.is_name(g) and g.lower_ not in ("him", "her", "them", "it")]
        if what is None or not names:
            continue
        if what == "sibling's child":
            sex = next((t.lemma_ for t in sent if t.lemma_ in ("boy", "girl")), None)
            if sex is None:
                continue
            what = "nephew" if sex == "boy" else "niece"
        for n in names:
            cand = make("relation", f"has {what}", n.text, "PERSON", text=f"user has {what} {n.text}")
            cand.notes.append("born")    # dated by the sentence: the day the baby came
            out.append(cand)
    return out


def _named_before(tok) -> list[str]:
    """"… a little boy called Alfie! Our second grandchild.": a relation word alone in a verbless
    sentence names the person the sentence before introduced."""
    sent = tok.sent
    if sent.root.pos_ in ("VERB", "AUX") or sent.start == 0:
        return []
    prev = tok.doc[sent.start - 1].sent
    named = [g.text for t in prev if t.lemma_ in ("call", "name") and t.tag_ == "VBN"
             for g in t.children if g.dep_ in ("oprd", "attr", "dobj", "xcomp", "npadvmod") and ph.is_name(g)]
    return named[-1:]


def relations(sent) -> list:
    out = _pet_named(sent) + _new_baby(sent)
    for tok in sent:
        word = tok.lower_
        lemma = tok.lemma_.lower()
        rel = w.RELATION_NOUNS.get(word) or w.RELATION_NOUNS.get(lemma)
        if rel is None and lemma in ("boy", "girl") and any(c.dep_ == "nummod" for c in tok.children):
            rel = "son" if lemma == "boy" else "daughter"    # "our two boys", never "my girls" (friends)
        pet = None if rel else (w.PET_NOUNS.get(word) or w.PET_NOUNS.get(lemma))
        if not (rel or pet) or tok.pos_ not in ("NOUN", "PROPN"):
            continue
        if rel == "ex" or any(c.lower_ in ("ex", "late", "former", "old") and c.dep_ in ("amod", "compound")
                              for c in tok.children) and rel:
            continue
        if not _is_mine(tok):
            continue
        names = ph.names_near(tok) or (_named_before(tok) if rel else [])
        count = next((int(c.text) if c.text.isdigit() else _NUM.get(c.lower_, 0)
                      for c in tok.children if c.dep_ == "nummod"), 0)
        if rel and count > len(names):
            # "two kids, Noah is 10 and Lily is 7", "two kids, Lucía who's 8 and Mateo who's 5": the
            # parser hangs the later names anywhere; take the names that follow, never a place after "in"
            more = [t.text for t in sent if t.i > tok.i and ph.is_name(t) and t.text not in names
                    and t.dep_ != "pobj" and t.ent_type_ in ("PERSON", "GPE", "ORG", "NORP", "")]
            names = names + more[:count - len(names)]
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
