"""Verb frames: what a first-person clause with a given verb says, as candidates.

A frame reads the clause's verb, its particle, its objects and its prepositional phrases and
words the fact ("I work at Amazon in Seattle as a product manager" → works at · amazon, works
in · seattle, works as · product manager). A verb without a frame still yields a routine
(present tense, with an object) or an event (past tense, with an object and its date).
"""
from __future__ import annotations

from . import phrases as ph
from . import words as w
from .clauses import Clause
from .facts import make, third

PLACE_PREPS = ("to", "into", "in", "back")


def _children(tok, deps):
    return [c for c in tok.children if c.dep_ in deps]


def prep_objects(verb) -> list[tuple[str, object]]:
    """(preposition, object head) pairs hung on the verb, "to the Plateau", "at Amazon"."""
    out = []
    for p in _children(verb, ("prep", "dative", "agent")):
        objs = _children(p, ("pobj", "pcomp"))
        if not objs and p.i + 1 < len(p.doc):
            # the small model sometimes hangs an unknown word ("at zq3f9…") on the verb, not the preposition
            nxt = p.doc[p.i + 1]
            if not nxt.is_punct and any(ch.isalnum() for ch in nxt.text) and nxt.head in (verb, p) and \
                    nxt.dep_ in ("punct", "dep", "npadvmod", "appos", "nummod", "advmod", "dobj", "attr", "compound"):
                objs = [nxt]
        for o in objs:
            out.append((p.lower_, o))
        for pp in _children(p, ("prep",)):      # "out of", "back to"
            for o in _children(pp, ("pobj",)):
                out.append((f"{p.lower_} {pp.lower_}", o))
    prt = _children(verb, ("prt",))
    if prt and prt[0].lower_ in ("back", "over", "away"):
        for p in _children(verb, ("prep",)):
            for o in _children(p, ("pobj",)):
                out.append((p.lower_, o))
    return out


_NOT_OBJECTS = frozenset("now again too more much less lot still already also really so very then there here "
                         "anymore yet ever never always once twice today tonight".split())


def direct_object(verb):
    objs = _children(verb, ("dobj", "attr", "oprd"))
    if objs:
        return objs[0]
    # the small model sometimes reads a lone object as a modifier ("I hate cilantro": advmod)
    for c in verb.children:
        if c.i == verb.i + 1 and c.dep_ in ("advmod", "acomp", "npadvmod", "ccomp", "dep", "xcomp", "intj",
                                             "nsubj", "attr", "oprd", "advcl") and \
                (c.pos_ in ("NOUN", "PROPN", "ADJ", "X", "INTJ") or c.tag_ == "VBG") and c.lower_ not in _NOT_OBJECTS and \
                not c.lower_.endswith("ly") and c.ent_type_ not in ("DATE", "TIME"):
            return c
    return None


def place_in(head):
    """The most specific named place in a phrase: "an apartment in Denver" → Denver."""
    if head.ent_type_ in ("GPE", "LOC", "FAC") or head.pos_ == "PROPN":
        return head
    for t in head.subtree:
        if t.ent_type_ in ("GPE", "LOC", "FAC") and t.pos_ == "PROPN" and t.dep_ in ("pobj", "compound", "appos"):
            return t.head if t.dep_ == "compound" and t.head.pos_ == "PROPN" else t
    for t in head.subtree:
        if t.dep_ == "pobj" and t.head.lower_ in ("in", "on") and t.pos_ in ("PROPN", "NOUN") and t is not head:
            return t
    return head


def _obj_text(head) -> str:
    return ph.phrase(head)


def _listed(head, predicate, kind, etype, clause, text_fmt=None, **kw):
    out = []
    for item in ph.conjuncts(head):
        obj = _obj_text(item)
        if obj:
            out.append(make(kind, predicate, obj, ph.entity_type(item, etype) if etype else None,
                            text=text_fmt.format(obj) if text_fmt else None, **kw))
    return out


def negative_predicate(predicate: str) -> str:
    words = predicate.split(" ", 1)
    if words[0] in ("is", "has"):
        return f"{words[0]} not {words[1]}" if len(words) > 1 else predicate
    from ...predicates import base_form
    return "does not " + base_form(words[0]) + (" " + words[1] if len(words) > 1 else "")


def work(clause: Clause, verb) -> list:
    out = []
    for prep, o in prep_objects(verb):
        if prep in ("at", "for", "with"):
            if o.lower_ in ("home", "night", "nights", "weekends"):
                continue
            out.append(make("attribute", "works at", _obj_text(o), "ORG"))
        elif prep == "as":
            out.append(make("attribute", "works as", _obj_text(o), "ROLE"))
        elif prep == "in" and o.ent_type_ in ("GPE", "LOC"):
            out.append(make("attribute", "works in", _obj_text(o), "PLACE"))
        elif prep == "in" and clause.tense != "past" and o.pos_ in ("NOUN", "PROPN"):
            out.append(make("attribute", "works in", _obj_text(o), "TOPIC"))
        elif prep == "on" and o.lemma_ in ("team", "project", "product"):
            out.append(make("attribute", "works on", _obj_text(o), "THING"))
    return out


def live(clause: Clause, verb) -> list:
    out = []
    for prep, o in prep_objects(verb):
        if prep in ("in", "at", "near", "outside", "on"):
            place = place_in(o)
            if place.lower_ not in ("home", "boxes", "box", "suitcase") and place.lemma_ not in HOUSING:
                out.append(make("attribute", "lives in", _obj_text(place), "PLACE"))
        elif prep == "with":
            for item in ph.conjuncts(o):
                names = ph.names_near(item)
                if ph.is_name(item):
                    names = [item.text]
                for n in names:
                    out.append(make("relation", "lives with", n, "PERSON"))
    return out


HOUSING = frozenset("""house flat apartment bungalow condo home place cottage studio townhouse room loft
 duplex cabin farmhouse""".split())


def place_of_there(verb):
    """"we're moving there": the last place the message named before the verb."""
    places = [t for t in verb.doc[:verb.i] if t.ent_type_ in ("GPE", "LOC") and t.pos_ == "PROPN"]
    return places[-1] if places else None


def move(clause: Clause, verb) -> list:
    out = []
    there = next((c for c in verb.children if c.lower_ == "there" and c.dep_ == "advmod"), None)
    if there is not None and place_of_there(verb) is not None:
        return [make("attribute", "lives in", _obj_text(place_of_there(verb)), "PLACE")]
    for prep, o in prep_objects(verb):
        if prep in PLACE_PREPS or prep in ("back to", "over to", "out to", "up to", "down to"):
            place = place_in(o)
            if place.lower_ in ("home",) or place.lemma_ in HOUSING:
                continue   # "moved into the condo": where, the message does not say
            out.append(make("attribute", "lives in", _obj_text(place), "PLACE"))
            break
    if not out:   # "moving in together next month, a bigger place in Rosemont"
        for home in verb.children:
            if home.dep_ in ("npadvmod", "appos", "dobj") and home.lemma_ in HOUSING:
                for prep, o in prep_objects(home):
                    if prep in ("in", "on", "near") and o.pos_ == "PROPN":
                        out.append(make("attribute", "lives in", _obj_text(o), "PLACE"))
                        break
    for x in _children(verb, ("xcomp", "advcl")):
        if x.lemma_ in ("work", "study") and any(a.lower_ == "to" for a in x.children):
            out.extend(FRAMES[x.lemma_](clause, x))   # "moved to Berlin to work at Zalando"
    if any(c.lower_ == "together" for c in verb.children):
        out.extend(make("relation", "lives with", p.text, "PERSON") for p in clause.partners if ph.is_name(p))
    return out


def have(clause: Clause, verb) -> list:
    obj = direct_object(verb)
    if obj is None:
        return []
    out = []
    for item in ph.conjuncts(obj):
        lemma = item.lemma_.lower()
        text = _obj_text(item)
        low = text.lower()
        if lemma in w.RELATION_NOUNS or item.lower_ in w.RELATION_NOUNS:
            continue   # relations are read by relations.py with their names
        if lemma in w.PET_NOUNS or item.lower_ in w.PET_NOUNS:
            names = ph.names_near(item)
            if not names:
                out.append(make("possession", "has", text, "THING"))
            continue
        if low in w.CONDITION_NOUNS or lemma in w.CONDITION_NOUNS or item.head.lemma_ == "diagnose":
            out.append(make("attribute", "has condition", low, None))
            continue
        if lemma in ("allergy", "intolerance") and any(t.dep_ in ("compound", "amod") and t.pos_ == "NOUN"
                                                       for t in item.children):
            what = " ".join(t.text for t in item.children if t.dep_ in ("compound", "amod") and t.pos_ == "NOUN")
            pred = "is allergic to" if lemma == "allergy" else "is intolerant to"
            out.append(make("attribute", pred, what.lower(), "FOOD"))   # "a severe nut allergy"
            continue
        if lemma not in w.HAPPENINGS and not _ownable(item):
            continue   # "has a few plans", "has the power", "has a setback": nothing one owns
        if lemma in w.HAPPENINGS:   # "I had surgery last month", "had a crash on the bike": it happened
            if clause.tense == "past":
                out.append(make("event", "had", text, None, text=f"user had {text}"))
            elif clause.tense == "future" or clause.progressive or clause.date is not None:
                out.append(make("plan", "has", text, None, text=f"user has {text} coming up"))
            continue
        out.append(make("possession", "has", text, ph.entity_type(item, "THING")))
    return out


def _ownable(item) -> bool:
    """A thing one owns: a possession word ("a vintage Vespa", "my own studio") or a named product."""
    if item.lemma_.lower() in w.POSSESSIONS or item.lower_ in w.POSSESSIONS or ph.phrase(item).lower() in w.POSSESSIONS:
        return True
    return (item.pos_ == "PROPN" or item.text[:1].isupper() and item.i > item.sent.start) and \
        item.ent_type_ not in ("DATE", "TIME", "GPE", "LOC")    # "a vintage Vespa", "a Tesla"


def like(clause: Clause, verb, predicate: str) -> list:
    obj = direct_object(verb)
    xcomp = _children(verb, ("xcomp",))
    if obj is None and xcomp:
        x = xcomp[0]
        if x.tag_ == "VBG" or any(c.lower_ == "to" for c in x.children):
            inner = direct_object(x)
            text = x.lower_ if x.tag_ == "VBG" else x.lemma_
            if x.tag_ != "VBG":
                text = _gerund(x.lemma_)
            if inner is not None:
                text = f"{text} {_obj_text(inner)}"
            return [make("preference", predicate, text, "THING")]
        return []
    if obj is None:
        return []
    if predicate == "prefers":
        from .settings import slot_of
        slot = slot_of(_obj_text(obj))
        if slot is not None:
            return [make("preference", f"prefers {slot}", _obj_text(obj).lower(), None)]
    return _listed(obj, predicate, "preference", "THING", clause)


def _gerund(lemma: str) -> str:
    if lemma.endswith("e") and not lemma.endswith(("ee", "ye")):
        return lemma[:-1] + "ing"
    return lemma + "ing"


def simple(clause: Clause, verb, predicate: str, kind: str, etype: str | None) -> list:
    last = predicate.rsplit(" ", 1)[-1]
    if last in ("for", "at", "in", "to", "with", "on"):
        for prep, o in prep_objects(verb):
            if prep == last:
                return _listed(o, predicate, kind, etype, clause)
        return []
    obj = direct_object(verb)
    if obj is None:
        for prep, o in prep_objects(verb):
            if prep in ("in", "at"):
                obj = o
                break
    if obj is None:
        return []
    return _listed(obj, predicate, kind, etype, clause)


def intransitive(clause: Clause, verb) -> list:
    """"I cycle to work every day", "I swim three mornings a week": a routine without an object."""
    gerund = _gerund(verb.lemma_) if verb.tag_ != "VBG" else verb.lower_
    tail = ""
    for prep, o in prep_objects(verb):
        if prep in ("to", "at", "in", "with"):
            tail = f" {prep} {_obj_text(o)}"
            break
    return [make("routine", "does", f"{gerund}{tail}".strip(), "SKILL",
                 text=f"user {third(verb.lemma_)}{tail}")]


def play(clause: Clause, verb) -> list:
    obj = direct_object(verb)
    if obj is None:
        return []
    out = _listed(obj, "plays", "skill", "SKILL", clause)
    for prep, o in prep_objects(verb):
        if prep == "in" and o.lemma_ in w.GROUP_NOUNS:
            out.append(make("attribute", "is a member of", _obj_text(o), "ORG"))
        elif prep == "at" and o.pos_ == "PROPN":
            out.append(make("routine", "plays at", _obj_text(o), "PLACE"))
    return out


def teach(clause: Clause, verb) -> list:
    out = simple(clause, verb, "teaches", "attribute", "TOPIC") if direct_object(verb) is not None else []
    for prep, o in prep_objects(verb):
        if prep in ("at", "for") and o.pos_ in ("PROPN", "NOUN") and o.lemma_ not in HOUSING:
            out.append(make("attribute", "works at", _obj_text(o), "ORG"))
    return out


def housing(clause: Clause, verb) -> list:
    """"we're buying a bungalow in Harrogate": where the user will live."""
    obj = direct_object(verb)
    if obj is None or obj.lemma_ not in HOUSING:
        return []
    place = place_in(obj)
    if place is obj:
        place = next((o for p, o in prep_objects(verb) if p in ("in", "near") and o.pos_ == "PROPN"), None)
        if place is None:
            return []
    return [make("attribute", "lives in", _obj_text(place), "PLACE")]


def study(clause: Clause, verb) -> list:
    out = []
    obj = direct_object(verb)
    if obj is not None:
        out.extend(_listed(obj, "studies", "attribute", "TOPIC", clause))
    for prep, o in prep_objects(verb):
        if prep == "at":
            out.append(make("attribute", "studies at", _obj_text(o), "ORG"))
    return out


def job_start(clause: Clause, verb) -> list:
    """start/begin/join/accept/land/get + a job at X, "starting at X as Y", "joining X"."""
    out = []
    obj = direct_object(verb)
    preps = prep_objects(verb)
    if obj is not None:
        preps = preps + prep_objects(obj)
        if obj.lemma_ in w.GROUP_NOUNS:
            return [make("attribute", "is a member of", _obj_text(obj), "ORG")]
        if obj.lemma_ in w.JOB_NOUNS:
            pass
        elif verb.lemma_ in ("join",) and (obj.pos_ == "PROPN" or obj.ent_type_ == "ORG"):
            out.append(make("attribute", "works at", _obj_text(obj), "ORG"))
        elif verb.lemma_ in ("get", "land", "accept", "take") and (
                obj.lemma_ in w.ROLES or ph.phrase(obj).lower() in w.ROLES):
            out.append(make("attribute", "works as", _obj_text(obj), "ROLE"))
    for prep, o in preps:
        job = obj is not None and (obj.lemma_ in w.JOB_NOUNS or bool(out))
        if prep in ("at", "with", "from", "for") and o.lemma_ not in w.TIME_NOUNS and (
                job or obj is None and verb.lemma_ in ("start", "begin", "join")):
            # "took it at the beach", "got a coffee at Joe's": no job in the clause, no employer
            if o.pos_ in ("PROPN", "NOUN") and o.lower_ not in ("home", "work"):
                out.append(make("attribute", "works at", _obj_text(o), "ORG"))
        elif prep == "as":
            out.append(make("attribute", "works as", _obj_text(o), "ROLE"))
    for x in _children(verb, ("advcl", "xcomp", "conj")):
        if x.lemma_ in ("start", "begin") and x.tag_ == "VBG":
            for prep, o in prep_objects(x):
                if prep == "as":
                    out.append(make("attribute", "works as", _obj_text(o), "ROLE"))
    return out


FRAMES = {
    "work": work, "live": live, "reside": live, "move": move, "relocate": move, "settle": move, "have": have, "own": have,
    "play": play, "study": study, "major": study, "teach": teach,
}
LIKE = {"like": "likes", "love": "likes", "enjoy": "likes", "adore": "likes", "prefer": "prefers",
        "hate": "dislikes", "dislike": "dislikes", "detest": "dislikes", "loathe": "dislikes",
        "despise": "dislikes"}
SIMPLE = {
    "speak": ("speaks", "skill", "SKILL"), "learn": ("is learning", "skill", "SKILL"),
    "teach": ("teaches", "attribute", "TOPIC"), "eat": ("eats", "routine", "FOOD"),
    "drink": ("drinks", "routine", "FOOD"), "drive": ("drives", "possession", "PRODUCT"),
    "ride": ("rides", "possession", "PRODUCT"), "collect": ("collects", "routine", "THING"),
    "attend": ("attends", "routine", "ORG"), "support": ("supports", "preference", "ORG"),
    "volunteer": ("volunteers at", "routine", "ORG"), "practise": ("practices", "routine", "SKILL"),
    "practice": ("practices", "routine", "SKILL"), "use": ("uses", "routine", "PRODUCT"),
    "take": ("takes", "routine", "THING"), "follow": ("follows", "preference", "TOPIC"),
    "watch": ("watches", "preference", "TOPIC"), "read": ("reads", "preference", "TOPIC"),
    "write": ("writes", "skill", "TOPIC"), "run": ("runs", "routine", "THING"), "do": ("does", "routine", "SKILL"),
    "train": ("trains for", "routine", "EVENT"),
}
INTRANSITIVE = frozenset("""cycle bike swim run jog hike climb surf ski snowboard skate knit crochet sew bake
 cook garden meditate dance sing paint draw box row golf bowl fish hunt sail dive skydive journal sketch
 smoke vape drink commute volunteer""".split())
JOB_START = frozenset({"start", "begin", "join", "accept", "land", "get", "take"})
