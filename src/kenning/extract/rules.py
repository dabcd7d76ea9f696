"""The offline extractor: deterministic English patterns for first-person facts.

How it reads a message:
1. split into sentences, then into clauses at "and I", ", I", "but my" ...;
2. strip discourse markers ("lol", "btw", "ok") and adverbs ("also", "just");
3. keep only clauses whose grammatical subject is the user ("I …", "My …",
   or an imperative about the user's own settings); everything else, world
   knowledge and statements about other things, yields nothing;
4. match the verb phrase against a table of patterns; each gives a predicate,
   a kind, a default entity type and how a date phrase moves the validity
   window (a change "I moved … last month", a future "I pick up … in
   September", an ended "I used to …");
5. clean the object (articles, frequency words, dates) and split lists
   ("Portuguese and a little Japanese").
Precision over recall: a missed fact can be said again, a wrong one misleads.
"""
from __future__ import annotations

import re
from datetime import datetime

from . import dates, lexicon as lx
from .base import Candidate, Extractor
from .patterns import _O, _VERBISH, RULES, Rule

_CONTRACTIONS = [
    (r"\bi'm\b", "i am"), (r"\bim\b", "i am"), (r"\bi've\b", "i have"), (r"\bi'd\b", "i would"),
    (r"\bi'll\b", "i will"), (r"\bwe're\b", "we are"), (r"\bwe've\b", "we have"),
    (r"\bwe'll\b", "we will"), (r"\bmy wife's\b(?! name)", "my wife is"), (r"\bmy husband's\b(?! name)", "my husband is"), (r"\bdon't\b", "do not"), (r"\bdont\b", "do not"),
    (r"\bdoesn't\b", "does not"), (r"\bdidn't\b", "did not"), (r"\bcan't\b", "cannot"),
    (r"\bcant\b", "cannot"), (r"\bwon't\b", "will not"), (r"\bisn't\b", "is not"),
    (r"\baren't\b", "are not"), (r"\bwasn't\b", "was not"), (r"\bhaven't\b", "have not"),
    (r"\bhasn't\b", "has not"), (r"\bnever ever\b", "never"), (r"\bgonna\b", "going to"),
    (r"\bwanna\b", "want to"), (r"\bfavourite\b", "favorite"), (r"\bw/(?=\s|\w)", "with "),
    (r"\ban rn\b", "a registered nurse"), (r"\bid\b(?= (?:need|like|love|be|have|want|go|say|rather)\b)", "i would"),
]
_MARKERS = re.compile(
    r"^(?:(?:lol|lmao|haha+|hehe+|ok(?:ay)?|k|yeah|yep|yes|no|nope|oh|ah|well|so|btw|by the way|"
    r"anyway|anyways|hey|hi|hello|hmm+|um+|uh+|actually|honestly|also|and|but|plus|oh and|fyi|"
    r"just so you know|for what it's worth|to be honest|tbh|cool|great|thanks|thank you|sure|right|"
    r"alright|wow|omg|ugh|sigh|fun fact|quick update|update|brb|btw|lol ok|ha|oops|whoa|nah|yup|ya|yah|yea|yeh|ye|ngl|tbf|imo|pls|plz|so+|welp|lmfao|rofl|xd|long story short|anyway so|ok so)[\s,.!:;-]+)+")
_ADV_WORDS = (r"also|really|just|currently|still|now|actually|recently|definitely|absolutely|totally|"
              r"usually|always|mostly|basically|honestly|finally|already|even|truly|genuinely|kind of|kinda|"
              r"sort of|pretty much|literally|seriously|officially|secretly|generally|normally|typically|"
              r"mainly|primarily|personally|deeply|too|happily|proudly|originally|permanently|"
              r"temporarily|full-time|part-time|full time|part time|remotely|once|ever|finaly|realy|actualy|basicaly|definately|"
              r"literaly|prolly|def|totaly|seriusly")
_ADVERBS = re.compile(rf"^(?:{_ADV_WORDS})\s+")
_AUX_ADVERB = re.compile(rf"^(am not|am|have been|have|do not|will|was|can|would) (?:(?:{_ADV_WORDS}|so|very|super|"
                         rf"quite|really really)\s+)+")
_HEDGE = re.compile(r"^(?:i (?:think|believe|guess|suppose|reckon|feel like)|i am (?:pretty |quite |fairly |almost |"
                    r"100% )?(?:sure|certain|positive)|pretty sure|apparently|i would say)(?: that)?,?\s+(?=i |my |we )")
_LEAD_TIME = re.compile(r"^(?:one day|someday|some day|eventually|back then|at the moment|these days|nowadays|"
                        r"lately|recently|currently|honestly|personally|for work|at work|right now|now|"
                        r"as of (?:now|today)|so|also|oh and|and)\s*,?\s+(?=i |my |we |our )")
_SUBJECTLESS = re.compile(r"^(?=(?:just )?(?:got|moved|started|adopted|bought|finished|love|hate|live|work|"
                          r"working|living|born and raised|quit|left|joined|landed|graduated|turned|speak|play)\b)")
_SUBJECTLESS_AM = re.compile(r"^(?:just |currently |still |now )?(?=(?:originally from|(?:a )?(?:big |huge )?fan of|"
                             r"not (?:a |really )?(?:big |huge )?fan of|hoping to|planning to|moving to|starting at|"
                             r"obsessed with|allergic to|doing (?:a|an|my) |working (?:as|at|for|on)|living (?:in|with))\b)")
_SUBJECTLESS_WAS = re.compile(r"^(?=(?:born|raised) in\b)")
_SHARED_I = re.compile(r",\s*(?:and\s+)?(?=(?:work|live|love|like|enjoy|speak|play|have|am|drive|study|hate|own|"
                       r"spend|use|write|go|run|teach|eat|drink|raised|born|grew up|moved|turned)\b)")
# "i'm jess, 29, a nurse": comma pieces that continue "i am".
_APPOSITIVE = re.compile(r",\s*(?:and\s+)?(?=(?:a|an|\d{1,3}|allergic|lactose|gluten|originally from|fluent in|"
                         r"married|single|divorced|engaged|vegan|vegetarian|pescatarian|retired|diabetic)\b)")
_DISCOURSE = r"(?:(?:and|but|so|plus|while|although|though|also|anyway|anyways|btw|oh|well|honestly|tbh|ok|okay|yeah|now)\s+){0,3}"
_SPLIT = re.compile(rf"(?:,|;|\s-)\s*{_DISCOURSE}(?=(?:i|my|we)\b)"
                    r"|\s+(?:and|but|so|plus|while|although|though|and also|and then|but anyway|and now)\s+(?=(?:i|my|we)\b)")
_TRAIL = re.compile(
    r"(?:\s+(?:every (?:day|morning|evening|night|week|weekend|month)|each (?:day|morning|week)|"
    r"on weekends|at night|in the mornings?|in the evenings?|a lot|so much|very much|these days|"
    r"right now|now|anymore|any more|too|as well|lately|nowadays|at the moment|for now|daily|"
    r"weekly|regularly|sometimes|often|every so often|from time to time|a bit|a little|"
    r"honestly|though|haha+|lol|tbh|btw|ngl|rn|ugh|lmao|xd|pls|plz|please|here|from now on|originally|once|twice|"
    r"(?:a few|several|many|two|three|four|five|\d+) times|"
    r"i think|i guess|actually|again|already|yet|myself|"
    r"instead|for (?:a while|years|ages|a long time|\d+ (?:years?|months?|weeks?)))\b)+$")
_LEAD = re.compile(r"^(?:(?:like|literally|basically|a lot of|lots of|plenty of|a few|a couple of|a bunch of|tons of|a|an|the|my|our|some|"
                   r"any|mostly|mainly|primarily|really|very|so|pretty|quite|all|both|real|own)\s+)+")
_QUALIFIERS = re.compile(r"^(?:a little(?: bit of)?|little|a bit of|a bit|bit of|some|basic|fluent|conversational|"
                         r"native|broken|decent|intermediate|beginner|advanced)\s+")
_NAME = re.compile(r"^[A-Z][\w'-]+(?: [A-Z][\w'-]+)?$")
_COUNT = r"(?P<count>a|an|one|two|three|four|five|six|\d+)"




def _expand(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    low = text.lower()
    for rx, repl in _CONTRACTIONS:
        low = re.sub(rx, repl, low)
    return low


_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u200D\u2300-\u23FF]+")
_TRAILING_FILLER = re.compile(r"(?:[\s,]+(?:lol|lmao|haha+|hehe+|btw|tbh|ngl|rn|ugh|pls|plz|please|fyi|imo|xd|:\)|:\(|:d))+$")


def _sentences(text: str) -> list[str]:
    # an emoji ends a sentence, unless the sentence goes on with "and", "or" or a comma
    text = _EMOJI.sub(lambda m: " " if re.match(r"\s*(?:,|&|and\b|or\b)", text[m.end():]) else ". ", text)
    parts = re.split(r"(?<=[.!?])\s+|\n+|(?<=[.!?])(?=[A-Z])", text)
    return [p.strip() for p in parts if p and p.strip()]


def _clauses(sentence: str) -> list[str]:
    low = _expand(sentence)
    low = re.sub(r"[.!?]+$", "", low).strip()
    low = re.sub(r"^(?:[a-z]+ ){0,2}[a-z]+:\s+", "", low)  # "big news: …", "update: …"
    low = _MARKERS.sub("", low)
    low = re.sub(r"\b(?:before|after) moving (?:back )?to\b", ", and i moved to", low)
    pieces = []
    for piece in (p.strip(" ,;:-") for p in _SPLIT.split(low)):
        piece = _TRAILING_FILLER.sub("", piece).strip(" ,;:-")
        if not piece:
            continue
        piece = _front(piece)
        shared = _SHARED_I.split(piece)
        if len(shared) > 1 and piece.startswith(("i ", "we ")):
            subject = piece.split(" ", 1)[0]
            pieces.append(shared[0].strip(" ,"))
            pieces.extend(f"{subject} {s.strip(' ,')}" for s in shared[1:] if s.strip(" ,"))
        elif piece.startswith(("i am ", "we are ")) and _APPOSITIVE.search(piece):
            subject = " ".join(piece.split(" ", 2)[:2])
            parts = [s.strip(" ,") for s in _APPOSITIVE.split(piece)]
            pieces.append(parts[0])
            pieces.extend(f"{subject} {s}" for s in parts[1:] if s)
        else:
            pieces.append(piece)
    return [_front(p) for p in pieces]


def _front(clause: str) -> str:
    """Move what stands before the subject out of the way: hedges, time adverbials,
    a leading date ("two years ago I moved …" → "I moved … two years ago")."""
    for _ in range(3):
        before = clause
        clause = _HEDGE.sub("", clause)
        clause = _LEAD_TIME.sub("", clause)
        phrase = dates.find(clause, datetime(2000, 1, 1))
        if phrase and phrase.start <= 6:
            head = clause[:phrase.start].strip()
            rest = clause[phrase.end:].lstrip(" ,")
            if head in ("", "since", "from", "starting") and rest.startswith(("i ", "we ", "my ")):
                clause = f"{rest} {head + ' ' if head else ''}{phrase.text}".strip()
        if clause == before:
            break
    if _SUBJECTLESS_AM.match(clause):
        clause = "i am " + clause
    elif _SUBJECTLESS_WAS.match(clause):
        clause = "i was " + clause
    elif _SUBJECTLESS.match(clause):
        clause = "i " + clause
    return clause


def _original_span(sentence: str, clause: str) -> str:
    """The verbatim words of the sentence a clause came from (for source_quote)."""
    words = clause.split()
    if not words:
        return sentence
    first = re.escape(words[0].split("'")[0])
    m = re.search(rf"\b{first}", sentence, re.I)
    quote = sentence[m.start():] if m else sentence
    return quote.strip()


class RuleExtractor(Extractor):
    """Offline, deterministic, English; the embedded default."""

    name = "rules"

    def extract(self, text: str, *, at: datetime, context: list[str] | None = None,
                known_entities: list[str] | None = None) -> list[Candidate]:
        out: list[Candidate] = []
        for sentence in _sentences(text):
            hedged = bool(re.search(r"\b(?:i think|maybe|probably|might|perhaps|not sure)\b", sentence, re.I))
            original_case = _expand_case(sentence)
            for clause in _clauses(sentence):
                for cand in self._clause(clause, original_case, at):
                    cand.source_quote = sentence.strip()
                    if hedged:
                        cand.confidence = min(cand.confidence, 0.6)
                    out.append(cand)
        return _unique(out)

    # -- one clause ---------------------------------------------------------

    def _clause(self, clause: str, original: str, at: datetime) -> list[Candidate]:
        if clause.startswith(("my ", "our ")):
            return self._my(clause, original, at)
        m = re.match(r"^(?:please )?(?:just )?call me (?P<o>[a-z][\w'-]*)$", clause)
        if m:
            return [self._cand("is named", m.group("o"), "attribute", None, at, clause, text=f"user is named {m.group('o')}")]
        m = (re.match(r"^(?:please )?(?:can you |could you )?(?:switch|set|change|put|turn|move) (?:me|it|everything|things|"
                      r"(?:my|the) (?P<noun>[\w ]+?)) (?:back )?(?:to|into|over to) (?P<o>.+)", clause)
             or re.match(r"^(?:please )?(?:can you |could you )?(?:use|switch to|switch back to|change to|go back to|"
                         r"stick to|stick with) (?P<o>.+)", clause))
        if m:
            obj = _clean(m.group("o"))
            noun = m.groupdict().get("noun")
            if noun and noun in lx.SETTING_NOUNS and noun not in obj:
                obj = f"{obj} {noun}"
            if _setting_slot(obj):
                return self._build(Rule(re.compile(""), "prefers", "preference", None), obj, at, clause)
            return []
        m = re.match(r"^(?:please |pls |plz )?(?:can you |could you )?(?:please )?(?:always |only |just )?(?:reply|answer|"
                     r"respond|write|talk to me|speak to me|chat with me|text me) (?:to me )?in (?P<o>[a-z]+)\b", clause)
        if m and m.group("o") in lx.LANGUAGES:
            c = self._cand("prefers language", m.group("o"), "preference", None, at, clause,
                           text=f"user prefers replies in {m.group('o')}")
            return [c]
        m = re.match(r"^(?:please |pls |plz )?(?:can you |could you )?(?:please )?(?:always )?(?:keep|make) (?:your |the |all )?"
                     r"(?P<noun>answers|replies|responses|explanations)(?: to me)? (?:(?:a bit|a little|really|very|more|super) )?"
                     r"(?P<o>short|shorter|brief|concise|detailed|long|longer|simple|simpler|casual|formal)\b", clause)
        if m:  # "keep your answers short from now on"
            value = m.group("o").replace("shorter", "short").replace("longer", "long").replace("simpler", "simple")
            return [self._cand("prefers answer style", f"{value} answers", "preference", None, at, clause,
                               text=f"user prefers {value} answers")]
        opinion = re.match(r"^(?:the |this |that )?(?P<o>[\w -]{2,40}?) (?:looks|sounds|seems|is looking) "
                           r"(?:really |so |very |pretty |super |quite )?(?P<adj>great|amazing|awesome|good|nice|"
                           r"perfect|cool|fantastic|excellent|terrible|awful|bad|horrible|lovely)\b", clause)
        if opinion and not clause.startswith(("i ", "it ", "that ", "this ")):
            negative = opinion.group("adj") in ("terrible", "awful", "bad", "horrible")
            rule = Rule(re.compile(""), "dislikes" if negative else "likes", "preference", "THING")
            cands = self._build(rule, opinion.group("o"), at, clause)
            for c in cands:
                c.needs_known_entity, c.confidence = True, 0.55
            return cands
        we = clause.startswith(("we ", "we're "))
        if not clause.startswith("i ") and not we:
            return []
        body = clause.split(" ", 1)[1].strip() if " " in clause else ""
        if we:
            body = re.sub(r"^are ", "am ", re.sub(r"^were ", "was ", body))
        while True:
            stripped = _ADVERBS.sub("", body)
            if stripped == body:
                break
            body = stripped
        body = _AUX_ADVERB.sub(lambda m: m.group(1) + " ", body)
        body = re.sub(rf"^(\w+) (?:mostly|mainly|primarily|usually|often|sometimes|occasionally|regularly|part[- ]time|"
                      rf"full[- ]time|freelance|remotely) ", r"\1 ", body)
        body = re.sub(r"^have (?=(?:started|accepted|landed|taken|begun|joined|moved|relocated|bought|adopted|quit|"
                      r"left|switched|changed)\b)", "", body)
        body = re.sub(r"^do (?=(?:like|love|enjoy|want|have|eat|hate|prefer|speak|play|live|work)\b)", "", body)
        body = re.sub(r"^have been (?=\w+ing\b)(?!being\b)", "am ", body)
        cands = self._body(body, original, at, clause)
        if we:
            for c in cands:
                c.confidence = min(c.confidence, 0.8)
        return cands

    def _body(self, body: str, original: str, at: datetime, clause: str) -> list[Candidate]:
        special = self._identity(body, original, at, clause) or self._have(body, original, at, clause)
        if special is not None:
            return special
        m = re.match(r"^(?P<v>started|began|have started|have begun|am starting|will start|will be starting|start|"
                     r"am beginning) (?:(?:working|work|my new job|a new job|my job|my new role|a new role) )?at (?P<o>.+)$", body)
        if m:  # "started at Netflix 2 weeks ago": an employer only when it looks like one (a name, "the hospital")
            obj = _clean(_cut(m.group("o")))
            first = obj.split()[0] if obj else ""
            if obj and (_is_name(first, original) or obj.split()[-1] in lx.ORG_HINTS) and not first[0].isdigit():
                mode = "change" if m.group("v").startswith(("started", "began", "have")) else "future"
                return self._build(Rule(re.compile(""), "works at", "attribute", "ORG", mode), m.group("o"), at, clause)
        m = re.match(r"^(?:started|began|have started|have begun) (?P<g>volunteering|working|learning|studying|playing|"
                     r"living|dating|using|attending)\b(?P<rest>.*)$", body)
        if m:  # "started volunteering at X last month": the present fact, from that date
            started = self._body("am " + m.group("g") + m.group("rest"), original, at, clause)
            phrase = dates.find(m.group("rest"), at, "past")
            for c in started:
                if c.valid_at is None and phrase is not None and phrase.direction == "past":
                    c.valid_at = phrase.when
            if started:
                return started
        m = re.match(r"^(?:stopped|quit|gave up|have stopped|have quit|have given up) (?P<v>\w+?)ing\b ?(?P<o>.*)$", body)
        if m:
            verb = _GERUNDS.get(m.group("v") + "ing", m.group("v"))
            return self._build(Rule(re.compile(""), f"does not {verb}", "habit", None, "change"), m.group("o"), at,
                               clause, allow_empty=True)
        m = re.match(r"^(?:do not|am not|am no longer|no longer) (?P<rest>.+?) (?:anymore|any more)$", body)
        if m:
            negative = self._body("do not " + m.group("rest"), original, at, clause) if body.startswith("do not") else []
            if negative:
                return negative
            positive = ("am " if body.startswith("am") else "") + m.group("rest")
            ended = self._body(positive, original, at, clause)
            for c in ended:
                c.ends, c.confidence = True, 0.85
            return ended
        for rule in RULES:
            m = rule.pattern.match(body)
            if m:
                return self._build(rule, m.group("o"), at, clause, allow_empty=m.group("o") == "")
        neg = re.match(r"^(?:do not|never|no longer|will never) (?P<v>\w+)(?: (?P<o>.+))?$", body)
        if neg and neg.group("v") in _DURABLE_VERBS:
            verb = neg.group("v")
            obj = neg.group("o") or ""
            return self._build(Rule(re.compile(""), f"does not {verb}", "preference", None), obj, at, clause,
                               allow_empty=True)
        return []

    def _identity(self, body, original, at, clause):
        became = re.match(r"^(?:have been|have become|became|went|turned|am now|have gone) (?P<rest>.+)$", body)
        if became:
            rest = became.group("rest")
            phrase = dates.find(rest, at, "past")
            core = (rest[:phrase.start] + rest[phrase.end:]) if phrase else rest
            core = _clean(re.split(r",|\s+(?:and|but|so)\s+", core, maxsplit=1)[0])
            core = re.sub(r"^(?:a|an) ", "", core)
            if core in lx.DIETS or core in lx.TRAITS or (core.split() and core.split()[-1] in lx.ROLES):
                out = self._identity("am " + core, original, at, clause)
                for c in out or []:
                    c.valid_at = phrase.when if phrase and phrase.direction == "past" else at
                return out
            return None
        m = re.match(r"^(?:got|am getting|will get|will be getting) (?P<o>married|engaged|divorced)\b", body)
        if m:
            phrase = dates.find(body, at, "future" if body.startswith(("am", "will")) else "past")
            c = self._cand("has relationship status", m.group("o"), "attribute", None, at, clause,
                           text=f"user is {m.group('o')}")
            c.valid_at = phrase.when if phrase else None
            return [c]
        name = re.match(r"^am (?P<n>[a-z][\w'-]+)$", body)
        if name and name.group("n") in lx.DEMONYMS:
            n = name.group("n")
            return [self._cand("has nationality", n, "attribute", None, at, clause, text=f"user is {n}")]
        if name and _is_name(name.group("n"), original) and name.group("n") not in _NOT_NAMES:
            n = name.group("n")
            return [self._cand("is named", n, "attribute", None, at, clause, text=f"user is named {n}")]
        if re.match(r"^am (?:not|no longer|never)\b", body):
            return None  # negations and endings are read by the rules
        age = re.match(r"^am (?:a |an )?(?P<o>\d{1,3})[- ]years?[- ]old\b", body)
        if age:
            return [self._cand("is aged", age.group("o"), "attribute", None, at, clause)]
        # A role or trait is a noun phrase: it ends at the first comma or at a new clause.
        np_body = re.split(r",\s*|\s+(?:and (?:honestly |also |so |really )?(?:the|it|its|they|that|this|i)|"
                           r"because|but|so|which|who|while|when)\b", body, maxsplit=1)[0]
        m = re.match(r"^am (?:a |an )?(?P<o>[\w -]+?)(?: (?P<prep>at|for|with|in|from) (?P<org>.+))?$", np_body)
        if not m or body.startswith(("am from", "am in my")):
            return None
        obj = _clean(m.group("o"))
        if obj.split() and obj.split()[0].endswith("ing") and obj not in lx.TRAITS:
            return None  # "am going to the dentist", "am thinking about what to cook"
        if obj.endswith("s") and obj[:-1] in lx.DIETS | lx.TRAITS:
            obj = obj[:-1]  # "we are vegetarians"
        head = obj.split()[-1] if obj else ""
        if head in ("student", "pupil", "undergrad", "undergraduate", "postgrad", "apprentice") or (
                head in ("freshman", "sophomore", "junior", "senior") and len(obj.split()) == 1
                and m.group("prep") in ("at", "in")):
            out = [self._cand("is", "student", "trait", None, at, clause, text=f"user is a {obj}")]
            subject = re.sub(r"\b(?:\w+-year|first|second|third|fourth|final|year|phd|grad|graduate|undergraduate|"
                             r"masters?|bachelor's|mature|exchange|international|part-time|full-time|college|"
                             r"university|uni|high school|student|pupil|undergrad|postgrad|freshman|sophomore|junior|senior)\b",
                             " ", obj).split()
            if subject:
                out.append(self._cand("studies", " ".join(subject), "attribute", "TOPIC", at, clause))
            if m.group("org") and m.group("prep") in ("at", "in", "with"):
                parts = re.split(r"\s+(?:majoring in|studying|doing a degree in|doing)\s+", m.group("org"), maxsplit=1)
                org, major = _clean(parts[0]), _clean(parts[1]) if len(parts) > 1 else ""
                if org:
                    out.append(self._cand("studies at", org, "attribute", _type_of(org, "ORG"), at, clause))
                if major and not subject:
                    out.append(self._cand("studies", major, "attribute", "TOPIC", at, clause))
            return out
        if obj in lx.DIETS:
            return [self._cand("follows diet", obj, "trait", None, at, clause, text=f"user is {obj}")]
        if obj in lx.RELATIONSHIP_STATUS:
            return [self._cand("has relationship status", obj, "attribute", None, at, clause, text=f"user is {obj}")]
        if obj in lx.TRAITS or ("a " + obj) in lx.TRAITS or ("an " + obj) in lx.TRAITS:
            return [self._cand("is", obj, "trait", None, at, clause, text=f"user is {obj}")]
        article = re.match(r"^am (?:a|an) ", body) is not None
        if head in lx.ROLES or obj in lx.ROLES:
            out = [self._cand("works as", obj, "attribute", "ROLE", at, clause)]
            if m.group("org") and m.group("prep") in ("at", "for", "with"):
                org = _clean(m.group("org"))
                if org:
                    out.append(self._cand("works at", org, "attribute", _type_of(org, "ORG"), at, clause))
            elif m.group("org") and m.group("prep") == "in":
                place = _clean(m.group("org"))
                if place:
                    out.append(self._cand("works in", place, "attribute", "PLACE", at, clause))
            elif m.group("org") and m.group("prep") == "from":
                place = _clean(m.group("org"))
                if place:
                    out.append(self._cand("is from", place, "attribute", "PLACE", at, clause))
            return out
        if article and m.group("org") is None and len(obj.split()) <= 3 and obj not in lx.PRONOUNS:
            # "I'm a runner", "I'm a big reader": identities worth remembering.
            if head.endswith(("er", "ist", "ian", "or", "ant", "ent")) or obj in lx.TRAITS:
                return [self._cand("is", obj, "trait", None, at, clause, text=f"user is a {obj}")]
        return None

    def _have(self, body, original, at, clause):
        nouns = "|".join(sorted(list(lx.RELATIVES) + list(lx.PETS), key=len, reverse=True))
        m = re.match(rf"^(?:have|have got|got|own|adopted|just adopted) {_COUNT} (?:(?:little|young|older|"
                     rf"younger|big|baby|lovely|adorable|sweet|rescue|\w+ year old) )?(?P<what>{nouns})\b"
                     rf"(?:,| named| called| whose names are|:| -)? ?(?P<names>.*)$", body)
        if not m:
            pet = re.match(rf"^(?:have|have got|got|own|adopted|just adopted|rescued) (?:a|an) (?P<what>[a-z -]+?) "
                           rf"(?:named|called) (?P<name>[a-z][\w'-]*)", body)
            if pet and _is_name(pet.group("name"), original):
                name, what = pet.group("name"), pet.group("what")
                return [self._cand("has pet", name, "possession", "THING", at, clause,
                                   text=f"user has a {what} named {name}")]
            return None
        what = m.group("what").strip()
        more = re.split(rf",?\s+and (?=(?:a|an|one|two|three|four|\d+) )", m.group("names"), maxsplit=1)
        if len(more) == 2:
            first = self._have(body[:m.start("names")] + more[0], original, at, clause) or []
            return first + (self._have("have " + more[1], original, at, clause) or [])
        rel = lx.RELATIVES.get(what) or lx.RELATIVES.get(what.split()[-1])
        pet = lx.PETS.get(what) or lx.PETS.get(what.split()[-1])
        if not rel and not pet:
            return None
        names = _names(m.group("names"), original)
        noun = rel or pet
        pred = f"has {noun}"
        mode = "change" if body.startswith(("got", "adopted", "just adopted")) else "present"
        rule_type = "PERSON" if rel else "THING"
        kind = "relationship" if rel else "possession"
        if names:
            out = []
            for name in names:
                c = self._cand(pred, name, kind, rule_type, at, clause, text=f"user has a {noun} named {name}")
                out.append(c)
            return out
        count = m.group("count")
        if count in ("a", "an", "one"):
            return [self._cand("has", noun, kind, "THING" if pet else "PERSON", at, clause,
                               text=f"user has a {noun}", mode=mode)]
        return [self._cand(f"has {noun} count", count, kind, None, at, clause,
                           text=f"user has {count} {what}")]

    def _my(self, clause, original, at):
        clause = re.sub(r"^our ", "my ", clause)
        rels = "|".join(sorted(list(lx.RELATIVES) + list(lx.PETS), key=len, reverse=True))
        m = re.match(rf"^my (?:(?:little|older|younger|big|baby|twin|new|lovely|old) )?(?P<rel>{rels})(?:'s name is|"
                     rf"'s name's| is named| is called|,)? (?P<name>[a-z][\w'-]*)"
                     rf"(?:(?:,? (?:is|works as|who is) (?:a |an )?(?P<desc>[^,]+))|(?=[ ,]|$))", clause)
        if m and m.group("name") not in ("is", "was", "has", "and", "who", "just", "also", "lives", "works", "loves", "likes"):
            name = m.group("name")
            if _is_name(name, original):
                noun = lx.RELATIVES.get(m.group("rel")) or lx.PETS.get(m.group("rel"))
                desc = _clean(m.group("desc") or "")
                text = f"user's {noun} is {name}" + (f", a {desc}" if desc else "")
                etype = "PERSON" if m.group("rel") in lx.RELATIVES else "THING"
                return [self._cand(f"has {noun}", name, "relationship", etype, at, clause, text=text)]
        m = re.match(r"^my (?:(?:first |full )?name is|name's) (?P<o>[a-z][\w'-]*(?: (?!but\b|and\b)[a-z][\w'-]*)?)"
                     r"(?=,|\s+but\b|\s+and\b|$)", clause)
        if m:
            return [self._cand("is named", m.group("o"), "attribute", None, at, clause, text=f"user is named {m.group('o')}")]
        m = re.match(r"^my (?:hobbies|hobby|interests|passions?|favorite things to do) (?:are|is|include) (?P<o>.+)$", clause)
        if m:
            rule = Rule(re.compile(""), "likes", "preference", "SKILL", listy=True)
            return self._build(rule, m.group("o"), at, clause)
        m = re.match(r"^my (?:new |brand new )?(?P<o>[\w -]+?) (?:arrives|is arriving|gets delivered|is being delivered|"
                     r"is due|will arrive|will be delivered|comes|is coming|ships)\b(?P<rest>.*)$", clause)
        if m and (m.group("o") in lx.PRODUCT_HINTS or any(w in lx.PRODUCT_HINTS for w in m.group("o").split())):
            rule = Rule(re.compile(""), "owns", "possession", "PRODUCT", "future")
            return self._build(rule, m.group("o") + m.group("rest"), at, clause)
        m = re.match(r"^my (?:kids|children|sons|daughters) are (?:called |named )?(?P<names>.+)$", clause)
        if m:
            names = _names(m.group("names"), original)
            return [self._cand("has child", n, "relationship", "PERSON", at, clause, text=f"user has a child named {n}") for n in names]
        m = re.match(r"^my (?P<attr>(?:favorite|favourite) [\w ]+?|birthday|hometown|zodiac sign|blood type|"
                     r"pronouns|email|phone number|nickname|middle name|goal|dream|shoe size|height|major|"
                     r"time ?zone|native language|first language|mother tongue|religion|job|profession|"
                     r"occupation|role|title|job title|degree)(?: (?:for )?(?:this|next|the) (?:year|month|week|summer|"
                     r"winter|spring|fall|autumn|semester))? (?:is|are) (?P<o>.+)$", clause)
        if m:
            attr = m.group("attr")
            if attr in ("job", "profession", "occupation", "role", "title", "job title"):
                obj = _clean(m.group("o"))
                return [self._cand("works as", obj, "attribute", "ROLE", at, clause)] if obj else []
            if attr in ("native language", "first language", "mother tongue"):
                return [self._cand("speaks", _clean(m.group("o")), "skill", "SKILL", at, clause,
                                   text=f"user's native language is {_clean(m.group('o'))}")]
            if attr == "birthday":
                return [self._cand("birthday is", _clean(m.group("o"), keep_dates=True), "attribute", None, at, clause)]
            obj = _clean(m.group("o"), keep_dates=True)
            return [self._cand(f"{attr} is", obj, "attribute", None, at, clause, text=f"user's {attr} is {obj}")] if obj else []
        return []

    # -- building candidates -------------------------------------------------

    def _build(self, rule: Rule, raw: str, at: datetime, clause: str, allow_empty=False) -> list[Candidate]:
        tense = {"change": "past", "ended": "past", "end": "past", "future": "future"}.get(rule.mode, "present")
        if rule.mode == "change" and re.match(r"^(?:i|we) (?:am|are|will|shall)\b", clause):
            tense = "future"  # "i am moving to berlin in november"
        phrase = dates.find(raw, at, tense)
        if phrase:  # the date may stand after an aside the cut drops ("for my birthday two weeks ago")
            after = raw[phrase.end:]
            raw = (raw[:phrase.start] + ("" if after.lstrip().startswith(",") else after)).strip()
        raw = _cut(raw)
        if rule.predicate in ("uses", "owns"):  # "a bike to commute to work": the purpose is not the thing
            raw = re.split(r"\s+(?:to|for|so)\s+", raw, maxsplit=1)[0]
        raw_obj = raw
        qualifier = phrase.text if phrase else ""
        if rule.predicate in ("lives in", "grew up in", "is from"):
            m = _GENERIC_PLACE.match(raw_obj.strip())
            if m:
                raw_obj = m.group("x")
            elif re.match(r"^(?:(?:a|an|the|my|our|this|that|\d+|two|three|four|five|several|many|different|new|bigger|"
                          r"smaller|nicer|cheaper|better|big|small|new|other) )*(?:place|house|flat|apartment|home|condo|"
                          r"room|area|neighbou?rhood|countries|cities|places|states|towns)\b", raw_obj.strip()):
                return []  # "a bigger place", "5 different countries": no place to remember
        if rule.predicate in ("is learning", "plays", "speaks"):
            raw_obj = re.split(r"\s+(?:on|with|at|from|using|via|through) ", raw_obj, maxsplit=1)[0]
        if rule.predicate == "works as":
            m = re.match(r"^(?P<a>.+?) in (?P<b>[a-z][\w ]+)$", raw_obj)
            if m and not re.search(r"\bat\b", m.group("a")):
                main = self._build(rule, m.group("a"), at, clause)
                place = _clean(m.group("b"))
                if place:
                    main.append(self._cand("works in", place, rule.kind, "PLACE", at, clause))
                return _dated(main, rule, phrase)
        if rule.predicate == "works at":
            m = re.match(r"^(?P<a>.+?) as (?:an? )?(?P<b>.+)$", raw_obj)
            if m:
                main = self._build(rule, m.group("a"), at, clause)
                role = _clean(m.group("b"))
                if role:
                    main.append(self._cand("works as", role, rule.kind, "ROLE", at, clause))
                return _dated(main, rule, phrase)
        if rule.predicate in ("works as", "studies", "is learning"):
            m = re.match(r"^(?P<a>.+?) (?P<prep>at|for|with|in) (?P<b>.+)$", raw_obj)
            if m and (rule.predicate != "works as" or m.group("prep") != "in"):
                main = self._build(rule, m.group("a"), at, clause)
                second = "works at" if rule.predicate == "works as" else "studies at"
                org = _clean(m.group("b"))
                if org:
                    main.append(self._cand(second, org, rule.kind, _type_of(org, "ORG"), at, clause))
                return _dated(main, rule, phrase)
        if rule.predicate == "wants to":
            obj = _clean(raw, keep_dates=True, strip_lead=False)
            if re.match(r"^(?:keep|say|know|see|thank|let|check|make sure|hear|ask|tell|chat|talk|catch up|"
                        r"share|show|get back|go back|be|do|try|help you|thank|remind|add|mention|"
                        r"give it|have a|take a look|look|read|find out|hang|meet up|decide|figure out|figure it|"
                        r"understand|remember|choose|pick|fix|solve|install|set up|configure|debug|finish|wrap up|"
                        r"get this|get it|work out how|print|download|upload|log in|sign in|cancel|reply|respond|"
                        r"send|compare|clarify|confirm|double check|sleep|go to bed|grab|nap)\b", obj):
                return []
            text = f"user wants to {obj}" + (f" ({qualifier})" if qualifier else "")
            return [self._cand("wants to", obj, rule.kind, None, at, clause, text=text)] if obj else []
        objects = _split_list(raw_obj) if rule.listy else [raw_obj]
        out = []
        for piece in objects:
            qual = _QUALIFIERS.match(piece.strip())
            obj = _clean(piece)
            if rule.predicate == "has" and rule.mode == "present":
                obj = _strip_named(obj)
            if rule.predicate == "does" and re.fullmatch(r"[a-z]+", obj or "-") and not obj.endswith("ing"):
                obj = _gerund(obj)  # "i knit" -> does knitting
            if not obj and not allow_empty:
                continue
            head = re.split(r"\s+(?:about|in|for|with|at|on|of|to|from)\s+", obj)[0].split()[-1:] if obj else []
            if obj and (rule.predicate == "owns" or (rule.predicate == "has" and rule.mode == "change")) and any(
                    part in lx.ACQUIRED_TRANSIENT or part in lx.FOODS or part.split()[-1] in lx.ACQUIRED_TRANSIENT
                    or part.split()[-1] in lx.FOODS for part in re.split(r",\s*|\s+and\s+", obj) if part.split()):
                continue  # "bought groceries", "got a parking ticket": not a possession
            if obj and rule.predicate == "has visited" and (obj in lx.PEOPLE or obj.split()[-1] in lx.PEOPLE
                                                           or obj.split()[-1] in lx.RELATIVES):
                continue  # "visited my parents": people, not places
            if obj in lx.PRONOUNS or obj in lx.TRANSIENT or (
                    head and head[0] in lx.TRANSIENT and rule.predicate in ("has", "owns", "is interested in")):
                continue
            if obj and not _acceptable(rule.predicate, piece.strip(), obj):
                continue
            predicate, etype, kind, text, obj = self._specialise(rule, obj)
            if predicate is None:
                continue
            mode = rule.mode
            valid_at = valid_until = None
            if phrase and mode in ("change", "future", "ended", "end"):
                valid_at = phrase.when
            if phrase and mode == "present" and phrase.direction == "past" and (
                    phrase.kind in ("since", "for_n") or rule.predicate in ("is learning", "owns", "has", "uses",
                                                                          "is a member of")):
                valid_at = phrase.when
            if mode == "future" and (valid_at is None or valid_at <= at):
                valid_at = None if valid_at is None else valid_at  # a "future" verb with no future date is now
            if qualifier and rule.mode == "present" and valid_at is None and not text.endswith(qualifier):
                text = f"{text} ({qualifier})"
            if qual and rule.predicate == "speaks":
                text = f"user speaks {qual.group(0).strip()} {obj}"
            cand = self._cand(predicate, obj, kind, etype, at, clause, text=text, mode=mode)
            cand.valid_at = valid_at
            if mode == "ended":
                cand.valid_until = at
            if qual:
                cand.confidence = min(cand.confidence, 0.8)
            out.append(cand)
        return out

    def _specialise(self, rule: Rule, obj: str):
        """Refine predicate and type by what the object is ("write Go" is coding)."""
        predicate, etype, kind = rule.predicate, rule.etype, rule.kind
        text = None
        if predicate == "writes":
            if obj in lx.PROGRAMMING:
                predicate = "programs in"
            else:
                etype = "TOPIC"
        elif predicate == "prefers":
            if re.search(r"\s(?:over|to|than)\s", obj):
                text = f"user prefers {obj}"
                obj = re.split(r"\s+(?:over|to|than|rather than)\s+", obj)[0]
            setting = _setting_slot(obj)
            if setting:
                predicate, text = f"prefers {setting}", text or f"user prefers {obj}"
            etype = None
        elif predicate in ("likes", "dislikes", "enjoys", "is interested in", "has", "owns", "uses"):
            etype = _type_of(obj, etype or "THING")
        elif predicate == "is allergic to" and obj in lx.NON_FOOD_ALLERGENS:
            etype = "THING"
        elif predicate == "has" and obj in lx.CONDITIONS:
            predicate, etype = "has condition", None
        if predicate == "has" and (obj in lx.CONDITIONS):
            predicate, etype = "has condition", None
        if predicate in ("lives in", "is from", "works at") and obj in ("home", "here", "there", "work"):
            return None, None, None, None, obj
        if predicate == "does" and not obj:
            obj = ""
        text = text or f"user {predicate} {obj}".strip()
        return predicate, etype, kind, text, obj

    def _cand(self, predicate, obj, kind, etype, at, clause, text=None, mode="present") -> Candidate:
        return Candidate(
            kind=kind, predicate=predicate, object=obj, object_is_entity=etype is not None,
            entity_type=etype, text=text or f"user {predicate} {obj}",
            confidence=0.9 if mode != "end" else 0.85, source_quote=clause, ends=(mode == "end"))


_GERUNDS = {"eating": "eat", "drinking": "drink", "smoking": "smoke", "vaping": "vape", "driving": "drive",
            "using": "use", "running": "run", "gambling": "gamble", "taking": "take", "having": "have",
            "biting": "bite", "dating": "date", "shopping": "shop", "swimming": "swim"}
_NOT_NAMES = frozenset("""fine good ok okay great tired sorry here back home ready done busy sure happy
 sad new hungry english american british german french spanish italian i""".split())
_DURABLE_VERBS = frozenset("""eat drink smoke drive own use like enjoy watch play speak drink cook
 celebrate travel fly swim vape gamble wear read""".split())


def _gerund(verb: str) -> str:
    if verb.endswith("e") and not verb.endswith(("ee", "ye")):
        return verb[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", verb) and verb not in ("row", "box"):
        return verb + verb[-1] + "ing"  # run -> running, swim -> swimming
    return verb + "ing"


def _expand_case(sentence: str) -> str:
    """The sentence with contractions expanded but capitals kept (to spot names)."""
    return sentence


_SETTING_VALUES = {"dark": "theme", "light": "theme", "metric": "units", "imperial": "units", "celsius": "units",
                   "fahrenheit": "units", "24-hour": "time format", "12-hour": "time format"}
_SETTING_SLOTS = {"mode": "theme", "theme": "theme", "color scheme": "theme", "colour scheme": "theme",
                  "appearance": "theme", "unit": "units", "units": "units", "temperature unit": "units",
                  "font": "font", "font size": "font size", "language": "language", "layout": "layout",
                  "keyboard layout": "keyboard layout", "editor": "editor", "currency": "currency",
                  "time zone": "time zone", "timezone": "time zone", "date format": "date format",
                  "notifications": "notifications", "voice": "voice", "tone": "tone",
                  "response length": "response length", "answers": "answer style", "replies": "answer style"}


def _dated(cands: list[Candidate], rule: Rule, phrase) -> list[Candidate]:
    """Give every fact split off one clause the clause's date (a change or plan)."""
    if phrase is not None and rule.mode in ("change", "future", "ended", "end"):
        for c in cands:
            if c.valid_at is None:
                c.valid_at = phrase.when
    return cands


def _setting_slot(obj: str) -> str | None:
    """The one-value slot a preference fills: "dark mode" and "light theme" share "theme"."""
    words = obj.split()
    if not words:
        return None
    for n in (2, 1):
        tail = " ".join(words[-n:])
        if tail in _SETTING_SLOTS and len(words) > n - 1:
            return _SETTING_SLOTS[tail]
    if words[0] in _SETTING_VALUES:
        return _SETTING_VALUES[words[0]]
    return None


def _is_name(word: str, original: str) -> bool:
    m = re.search(rf"\b({re.escape(word)})\b", original, re.I)
    return bool(m and m.group(1)[0].isupper())


def _names(raw: str, original: str) -> list[str]:
    raw = re.sub(r"^(?:named|called|who are|whose names are)\s+", "", (raw or "").strip())
    raw = re.split(r"\s+(?:who|which|that|whose|is|was|has|he|she|it|they|yesterday|today|tonight|last|this|next|"
                   r"on|in|at|from|because|but|lol|haha)\b", raw, maxsplit=1)[0]
    parts = [p.strip(" ,.") for p in re.split(r",\s*|\s+and\s+|\s*&\s*", raw) if p.strip(" ,.")]
    return [p for p in parts if re.fullmatch(r"[a-z][\w'-]*", p) and _is_name(p, original)]


def _strip_named(obj: str) -> str:
    return re.sub(r"\s+(?:named|called)\s+.*$", "", obj)


def _split_list(raw: str) -> list[str]:
    raw = raw.strip()
    if re.search(r"\b(?:rock and roll|mac and cheese|fish and chips|salt and pepper|rhythm and blues|"
                 r"dungeons and dragons|drum and bass|peanut butter and jelly)\b", raw):
        return [raw]
    parts = re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or|as well as|plus)\s+|\s*&\s*", raw)
    # "penicillin and also to latex": a later item may repeat the preposition
    parts = [re.sub(r"^(?:(?:also|even|especially|maybe)\s+)?(?:to|of|in|with|about)\s+", "", x.strip()) if i else x
             for i, x in enumerate(parts)]
    return [p for p in (x.strip() for x in parts) if p]


_CUT = re.compile(r"\s*[-\u2013\u2014]+\s+|\s*[:;]\s+|,\s+(?=(?:the|it|it's|its|they|they're|that|this|which|so|but|"
                  r"because|plus|and i|i|we|you|he|she|there|what|how|especially|though|although|"
                  r"since|cause|as|yes|yeah|no|well|ok|okay|lol|haha|honestly|anyway)\b)"
                  r"|\s+(?:like|such as|including|especially|except)\s+"
                  r"|\s+with (?:my|our|his|her|their|a|an|some|friends|family|the family|roommates|kids|no|two|three|"
                  r"four|five|\d+)\b"
                  r"|\s+and (?:(?:honestly|also|so|really|then|now|yeah|tbh)\s+)*(?:the|it|it's|its|they|they're|that|"
                  r"this|he|she|you|we|there|everyone|everything|still|just)\b"
                  r"|\s+during\b|\s+for (?:\w+ )?reasons?\b|\s+(?:in|for|since|over) (?:the )?(?:lockdown|pandemic|covid|quarantine)\b"
                  r"|\s+(?:to|for) (?:work|school|fun|a living|my birthday|christmas|our anniversary|my \w+day)\b"
                  r"|\s+(?:for|from) (?:my|our|his|her|their)\b"
                  r"|\s+on (?:(?:the )?weekends?|weekdays|(?:mon|tues|wednes|thurs|fri|satur|sun)days)\b"
                  r"|\s+in (?:a|an|my|our|the) (?:\w+ )?(?:band|team|choir|club|group|league|orchestra)\b"
                  r"|\s+(?:before|after|until|while) (?:\w+ing|my|the|a|an|our|his|her|work|school)\b"
                  r"|\s+and \w+ed (?:it|them|that|this|the|a|every|so|how)\b")
_GENERIC_PLACE = re.compile(r"^(?:(?:a|an|the|my|our) )?(?:(?:small|big|tiny|little|nice|new|old|shared|studio|one-bedroom|two-bedroom|rented|"
                            r"quiet|cozy|cosy) )*(?:flat|house|apartment|town|village|city|place|suburb|"
                            r"neighbou?rhood|condo|room|cottage|farm|area|part|bungalow|houseboat) "
                            r"(?:in|of|near|outside|just outside|on the outskirts of) (?P<x>.+)$")
_BAD_START = frozenset("""how what when where why who whom whether that this these those your his her their
 it its it's them they being seeing hearing watching not never always just already had been ever also
 really some any no one ones way thing things stuff ton lot bunch bit more most much to so very too
 such same other another something anything everything nothing whatever each every few several many
 lots plenty couple huge massive""".split())
_PARTICIPLES = frozenset("""made heard put grown been done gone seen had got gotten taken given known found felt
 kept left lost met read said sent spent thought told understood won written bought brought built caught
 taught fought begun come become run set let cut hit shut hurt quit paid held led fed sold slept stood
 struck stuck sung drunk shown blown flown drawn worn torn sworn chosen spoken broken woken forgotten
 eaten beaten ridden hidden driven risen fallen shaken mistaken tried always never just already also
 really ever still learnt learned""".split())
_ABSTRACT = frozenset("""idea ideas news offer offers chance opportunity call message email feedback help advice
 support time moment experience experiences vibe vibes energy feeling feelings memory memories view views
 reminder promotion promotions result results touch sense kind way answer question questions point""".split())


_FINITE = re.compile(r"\b(?:is|are|r|was|were|am|has|have|had|do|does|did|will|can|could|would|should|"
                     r"seems?|looks?|feels?|gets?|makes?|keeps?|kills?|killing|helps?|means?)\b")


def _cut(raw: str) -> str:
    """Keep the object, drop what a new clause or an aside adds after it."""
    raw = _CUT.split(raw.strip(), maxsplit=1)[0]
    # ", early shifts are killing me": a comma that opens a clause of its own
    pieces = re.split(r",\s+", raw)
    for i in range(1, len(pieces)):
        if _FINITE.search(pieces[i]):
            return ", ".join(pieces[:i])
    return raw


def _acceptable(predicate: str, raw: str, obj: str) -> bool:
    """Objects worth a fact: not a pronoun, a wh-clause, a quantity or an abstraction."""
    words = obj.split()
    first_raw = raw.lower().split()[0] if raw.split() else ""
    if words[0] in _BAD_START or first_raw in ("this", "that", "these", "those", "your", "his", "her", "their"):
        return False
    if words[-1] in _ABSTRACT or obj in _ABSTRACT:
        return False
    if predicate in ("has", "owns", "practices", "does") and (words[0] in _PARTICIPLES or (
            words[0].endswith(("ed", "en")) and words[0] not in ("garden", "kitchen", "chicken", "oven", "den", "bed"))):
        return False
    limit = 12 if predicate in ("wants to", "is training for") else 6
    return len(words) <= limit


def _clean(raw: str, keep_dates: bool = False, strip_lead: bool = True) -> str:
    obj = raw.strip().lower()
    obj = re.split(r"\s+(?:because|since|cause|'cause|cos|which|that is|who|so that|so|but|if|when|"
                   r"whenever|although|though|as i|as it|for work|but i)\b", obj)[0]
    obj = re.sub(r"[\"()\[\]]", "", obj)
    obj = re.sub(r"[.,;:!?]+$", "", obj).strip()
    prev = None
    while prev != obj:
        prev = obj
        obj = _TRAIL.sub("", obj).strip(" ,")
        if strip_lead:
            obj = _LEAD.sub("", obj)
            obj = _QUALIFIERS.sub("", obj)
    if not keep_dates:
        phrase = dates.find(obj, datetime(2000, 1, 1))
        if phrase and phrase.end == len(obj):
            obj = obj[:phrase.start].strip()
    obj = re.sub(r"'s$", "", obj).strip(" ,-")
    return obj[:500]


def _type_of(obj: str, default: str) -> str:
    words = obj.split()
    head = words[-1] if words else ""
    if obj in lx.FOODS or head in lx.FOODS:
        return "FOOD"
    if obj in lx.LANGUAGES:
        return "SKILL"
    if obj in lx.SPORTS or obj.endswith("ing"):
        return "SKILL" if default in ("THING", "SKILL") else default
    if head in lx.ORG_HINTS:
        return "ORG"
    if head in lx.PLACE_HINTS:
        return "PLACE"
    if obj in lx.PRODUCT_HINTS or head in lx.PRODUCT_HINTS or any(w in lx.PRODUCT_HINTS for w in words):
        return "PRODUCT"
    if obj in lx.PETS or head in lx.PETS:
        return "THING"
    return default


def _unique(cands: list[Candidate]) -> list[Candidate]:
    seen, out = set(), []
    for c in cands:
        key = (c.predicate, c.object)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
