"""The verb-phrase patterns of the offline extractor, as data: the first rule that matches wins.

Each rule names the predicate it gives, the kind of fact, the default entity type of its object (None: a
literal value) and how a date phrase moves the validity window: ``present``, ``change`` (a move, a new job:
the date is when it started), ``future`` (a planned change), ``ended`` ("used to") or ``end`` ("no longer").
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern
    predicate: str
    kind: str
    etype: str | None          # default entity type; None: a literal value
    mode: str = "present"      # present | change | ended | future | end
    listy: bool = False        # object may be a list ("X and Y")


def _r(rx: str, predicate: str, kind: str, etype: str | None, mode: str = "present",
       listy: bool = False) -> Rule:
    return Rule(re.compile(rx), predicate, kind, etype, mode, listy)


_O = r"(?P<o>.+)"
_VERBISH = (r"grab|get|make|have|take|see|do|buy|pick|check|watch|eat|meet|play|try|be|start|keep|go|bed|sleep|"
            r"work|call|write|read|cook|clean|finish|need|say|ask|tell|think|look|find|give|put|run|sit|stay|"
            r"the gym|the store|the shop|the bathroom|the doctor|the dentist|lunch|dinner|breakfast|class|school|church")
# Order matters: the first rule that matches a clause wins.
RULES = [
    _r(rf"^used to live (?:in|at) {_O}", "lives in", "attribute", "PLACE", "ended"),
    _r(rf"^used to work (?:at|for) {_O}", "works at", "attribute", "ORG", "ended"),
    _r(rf"^no longer (?:live|reside) in {_O}", "lives in", "attribute", "PLACE", "end"),
    _r(rf"^(?:quit|left|lost|resigned from) (?:my |the )?(?:job|position|role|post) (?:at|with) {_O}", "works at", "attribute", "ORG", "end"),
    _r(rf"^(?:quit|left|lost) (?:my |the )?(?:job|position|role|post) as (?:an? )?{_O}", "works as", "attribute", "ROLE", "end"),
    _r(rf"^(?:quit|left|resigned from) (?!my |the |a |an )(?P<o>[a-z][\w&.-]*(?: [a-z][\w&.-]*)?)(?: (?:last|in|on|two|three|a few|\d).*)?$", "works at", "attribute", "ORG", "end"),
    _r(rf"^(?:was )?(?:born and raised|raised) in {_O}", "is from", "attribute", "PLACE"),
    _r(rf"^(?:am|have been) (?:fascinated by|intrigued by|curious about|interested in) {_O}", "is interested in", "preference", "TOPIC", listy=True),
    _r(rf"^was diagnosed with {_O}", "has condition", "attribute", None, "change"),
    _r(rf"^(?:am starting|will start|will be starting|start|am beginning|will begin) (?:a |an |my )?(?:\w+ )?"
       rf"(?:master's|masters|phd|degree|course|bachelor's|program|programme|apprenticeship|studies|mba|residency)"
       rf"(?: in [\w ]+?)? at {_O}", "studies at", "attribute", "ORG", "future"),
    _r(rf"^(?:started|began|took up|have taken up|picked up) (?P<o>\w+ing\b.*)", "does", "habit", "SKILL", "change"),
    _r(rf"^am (?:afraid|scared|terrified|frightened) of {_O}", "is afraid of", "attribute", "THING", listy=True),
    _r(rf"^am (?:a )?(?:big |huge |massive |die-hard |diehard |lifelong )?(?P<o>[\w ]+?) (?:fan|supporter)$", "likes", "preference", "THING"),
    _r(rf"^am saving (?:up )?(?:money )?(?:for|to buy) {_O}", "is saving for", "goal", "PRODUCT"),
    _r(rf"^(?:teach|am teaching) {_O}", "teaches", "attribute", "TOPIC", listy=True),
    _r(rf"^(?:call myself|go by|am called|am known as) {_O}", "is named", "attribute", None),
    _r(rf"^no longer work (?:at|for) {_O}", "works at", "attribute", "ORG", "end"),
    _r(rf"^(?:live|am living|reside|am based|am staying|have been living)(?: with (?:my|our) [\w ]+?)? (?:in|at) {_O}",
       "lives in", "attribute", "PLACE"),
    _r(r"^have (?:always )?lived (?:in|at) (?P<o>.+?)(?: (?:my (?:whole|entire) life|all my life|for (?:\d+|a|an|two|three|"
       r"four|five|six|seven|eight|nine|ten|many|several|a few) .+|since .+))$", "lives in", "attribute", "PLACE"),
    _r(rf"^have always lived (?:in|at) {_O}", "lives in", "attribute", "PLACE"),
    _r(rf"^(?:moved|relocated|have moved|just moved|am moving|will move|will be moving|am relocating|"
       rf"am going to move|will relocate) (?:back )?to {_O}", "lives in", "attribute", "PLACE", "change"),
    _r(rf"^(?:am|was) (?:originally )?from {_O}", "is from", "attribute", "PLACE"),
    _r(rf"^(?:come|originally come) from {_O}", "is from", "attribute", "PLACE"),
    _r(rf"^grew up (?:in|on|near|outside) {_O}", "grew up in", "attribute", "PLACE"),
    _r(r"^was born (?:in|on) (?P<o>(?:19|20)\d\d|\w+ \d{1,2}(?:st|nd|rd|th)?(?:,? (?:19|20)\d\d)?)", "was born on", "attribute", None),
    _r(rf"^was born in {_O}", "was born in", "attribute", "PLACE"),
    _r(rf"^(?:just )?(?:started|began|got|landed|accepted|took|have started)(?: a| an| my)?(?: new)?"
       rf"(?: \w+)? (?:job|position|role|gig|internship) (?:at|with|for) {_O}", "works at", "attribute", "ORG", "change"),
    _r(rf"^(?:am starting|will start|start)(?: a| my)?(?: new)?(?: \w+)? (?:job|position|role|internship) "
       rf"(?:at|with|for) {_O}", "works at", "attribute", "ORG", "future"),
    _r(rf"^(?:started|began) working (?:at|for) {_O}", "works at", "attribute", "ORG", "change"),
    _r(rf"^(?:got|was|have been|just got) promoted to (?:an? )?{_O}", "works as", "attribute", "ROLE", "change"),
    _r(rf"^(?:signed up for|enrolled in|registered for|am enrolled in|am taking) (?:a |an |the |some )?"
       rf"(?P<o>[\w -]+? (?:class|classes|course|lessons|program|programme|bootcamp|league))\b", "is taking",
       "attribute", "SKILL", "change"),
    _r(rf"^(?:work|am working|have been working|am employed) as {_O}", "works as", "attribute", "ROLE"),
    _r(rf"^(?:work|am working|have been working|am employed) (?:(?:remotely|from home|part-time|full-time|"
       rf"freelance|(?:night|day|late|early|weekend|evening|morning|double) shifts?) )?(?:at|for|with|by) {_O}",
       "works at", "attribute", "ORG"),
    _r(rf"^(?:got|started|landed|accepted|took|began)(?: a| an| my)?(?: new)?(?: \w+)? (?:job|position|role|gig) as {_O}",
       "works as", "attribute", "ROLE", "change"),
    _r(rf"^am (?:a |an )?(?:big |huge |massive )?fan of {_O}", "likes", "preference", "THING", listy=True),
    _r(rf"^am allergic to {_O}", "is allergic to", "attribute", "FOOD", listy=True),
    _r(r"^am (?P<o>lactose|gluten) intolerant", "is intolerant to", "attribute", "FOOD"),
    _r(r"^am (?P<o>\d{1,3}|[a-z]+(?:[- ][a-z]+)?)(?: years old| years of age| yrs old| yrs| yo| y/o|yo| y\.o\.?)$", "is aged", "attribute", None),
    _r(r"^am (?P<o>\d{1,3})(?:$|(?=,? (?:and|but|so|now|already)\b))", "is aged", "attribute", None),
    _r(r"^am in my (?P<o>(?:early |mid |late |mid-)?(?:twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties|teens))$", "is aged", "attribute", None),
    _r(r"^am (?:in my )?(?P<o>(?:early |mid |late )?\d0s)$", "is aged", "attribute", None),
    _r(r"^turned (?P<o>\d{1,3}.*)", "is aged", "attribute", None, "change"),
    _r(rf"^am (?:married to|engaged to) {_O}", "is married to", "relationship", "PERSON"),
    _r(rf"^am (?:dating|seeing) {_O}", "is dating", "relationship", "PERSON"),
    _r(rf"^am (?:studying|majoring in|doing (?:a|an|my) (?:\w+ )?(?:degree|masters|master's|phd|bachelor's|bachelors|mba|msc|"
       rf"ma|ba|bsc) in) {_O}", "studies", "attribute", "TOPIC"),
    _r(rf"^(?:finished|completed|earned|got|have|hold) (?:a|an|my) (?:\w+ )?(?:degree|masters|master's|phd|bachelor's|"
       rf"bachelors|mba|msc|ma|ba|bsc|diploma) in {_O}", "has degree in", "attribute", "TOPIC", "change"),
    _r(rf"^(?:study|major in) {_O}", "studies", "attribute", "TOPIC"),
    _r(rf"^(?:am learning|have been learning|am teaching myself) (?:how )?to (?:play|speak) (?:the )?{_O}", "is learning",
       "skill", "SKILL", listy=True),
    _r(rf"^(?:am learning|have been learning|am teaching myself|am taking(?: \w+)? lessons in) (?!(?:how )?to\b){_O}",
       "is learning", "skill", "SKILL", listy=True),
    _r(rf"^(?:started|began|have started|just started) (?:learning|to learn|taking(?: \w+)? lessons in) {_O}", "is learning", "skill", "SKILL", "change", listy=True),
    _r(rf"^(?:am|have been) (?:training|preparing) for {_O}", "is training for", "goal", "EVENT"),
    _r(rf"^(?:want|would like|would love|hope|plan|am planning|intend|aim|am hoping|am aiming|dream|am keen|"
       rf"am trying|have decided|decided|would really like|really want) to {_O}", "wants to", "goal", None),
    _r(rf"^(?:am (?:thinking|dreaming) (?:about|of)|am considering|am looking (?:at|into)|am interested in|"
       rf"am shopping for|am looking for|am researching|am eyeing|have been looking at|am leaning towards?) "
       rf"(?:buying |getting |purchasing |renting |adopting |learning |trying )?{_O}", "is interested in", "preference", "PRODUCT"),
    _r(rf"^(?:love|like|enjoy|adore|am into|am obsessed with|am passionate about|am crazy about|am keen on|"
       rf"have (?:always )?(?:loved|liked|enjoyed)|(?:have )?(?:gotten|got|become|been getting|am getting) (?:really |so |super |very )?into|"
       rf"am a big fan of|dig|fancy) {_O}", "likes", "preference", "THING", listy=True),
    _r(rf"^(?:hate|dislike|detest|cannot stand|loathe|despise|am not (?:a |an )?(?:big |huge |massive )?fan of|do not like|"
       rf"do not enjoy|do not really like|am not into|am not keen on|am not crazy about) {_O}", "dislikes", "preference", "THING", listy=True),
    _r(rf"^(?:prefer|would rather have|like to use) {_O}", "prefers", "preference", None),
    _r(rf"^(?:speak|am fluent in|can speak) {_O}", "speaks", "skill", "SKILL", listy=True),
    _r(rf"^(?:play|am playing|can play) {_O}", "plays", "skill", "SKILL", listy=True),
    _r(rf"^(?:write|code in|program in|develop in|write code in|am coding in) {_O}", "writes", "skill", "SKILL", listy=True),
    _r(rf"^(?:do not|never|no longer|cannot) (?:eat|consume) {_O}", "does not eat", "preference", "FOOD", listy=True),
    _r(rf"^(?:do not|never|no longer|cannot) drink {_O}", "does not drink", "preference", "FOOD", listy=True),
    _r(rf"^(?:do not|never) (?:smoke|vape)(?P<o>)", "does not smoke", "habit", None),
    _r(rf"^(?:eat|drink) (?:a |an |some )?{_O}(?= every| each| for breakfast| daily| most)", "eats", "habit", "FOOD", listy=True),
    _r(rf"^eat {_O}", "eats", "habit", "FOOD", listy=True),
    _r(rf"^drink {_O}", "drinks", "habit", "FOOD", listy=True),
    _r(rf"^(?:drive|ride) {_O}", "drives", "possession", "PRODUCT"),
    _r(rf"^(?:pick up|am picking up|will pick up|will receive|am buying|will buy) {_O}", "owns", "possession", "PRODUCT", "future"),
    _r(rf"^(?:will get|am getting|get) (?P<o>(?:a|an|my|our|a new|my new|my first) .+)", "owns", "possession", "PRODUCT", "future"),
    _r(rf"^(?:bought|purchased|have bought|treated myself to) (?:myself )?{_O}", "owns", "possession", "PRODUCT", "change"),
    _r(rf"^(?:got|picked up|received|have got|just got|finally got) (?:myself )?(?P<o>(?:a|an|my|our|a new|my new|my first) .+)",
       "owns", "possession", "PRODUCT", "change"),
    _r(rf"^(?:adopted|rescued) {_O}", "has", "possession", "THING", "change"),
    _r(rf"^(?:use|am using|have been using|rely on) {_O}", "uses", "habit", "PRODUCT", listy=True),
    _r(rf"^(?:go to|attend|am attending) {_O}", "attends", "habit", "ORG"),
    _r(rf"^(?:volunteer|am volunteering) (?:at|for|with) {_O}", "volunteers at", "habit", "ORG"),
    _r(rf"^have (?:been to|visited) {_O}", "has visited", "event", "PLACE", listy=True),
    _r(rf"^(?:have|own|have got) {_O}", "has", "possession", "THING"),
    _r(rf"^(?:am )?(?P<o>(?:run|swim|cycle|hike|climb|surf|ski|paint|draw|knit|crochet|sew|cook|bake|garden|meditate|"
       rf"dance|sing|box|row|skate|write|journal|sketch)(?:n?ing)?)(?=$|\s+(?:a lot|in my (?:spare|free) time|for fun|"
       rf"as a hobby|every (?:day|morning|evening|night|week|weekend)|on (?:the )?weekends|daily|regularly|"
       rf"competitively|most days|(?:once|twice|\w+ times) a (?:week|month)|lately|too|sometimes|often|whenever)\b)",
       "does", "habit", "SKILL"),
    _r(rf"^(?:do|practice|practise) (?!not\b){_O}", "practices", "habit", "SKILL"),
    _r(rf"^(?:collect|read|watch|listen to|follow) {_O}", "enjoys", "preference", "TOPIC", listy=True),
    _r(rf"^(?:support|root for|cheer for) {_O}", "supports", "preference", "ORG"),
    _r(rf"^am (?:a member of|in) (?:a |an |the )?(?P<o>.+? (?:club|team|band|choir|league|group|society))", "is a member of", "attribute", "ORG"),
    _r(rf"^(?:joined) {_O}", "is a member of", "attribute", "ORG", "change"),
    _r(rf"^(?:graduated from|studied at) {_O}", "studied at", "attribute", "ORG"),
    _r(rf"^went to (?P<o>(?:the )?[\w ]+? (?:university|college|school|academy|institute|uni)(?: of [\w ]+)?)$", "studied at", "attribute", "ORG"),
    _r(rf"^(?:visited|traveled to|travelled to|went on a trip to) {_O}", "has visited", "event", "PLACE", listy=True),
    _r(rf"^am (?:going|travel(?:l)?ing|flying|heading) to (?!(?:{_VERBISH})\b){_O}", "is traveling to", "plan", "PLACE", "future"),
]
