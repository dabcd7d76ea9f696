"""Word lists the parse extractor reads clauses with. General English, never example sentences."""
from __future__ import annotations

from .. import lexicon as lx

RELATION_NOUNS = dict(lx.RELATIVES)
RELATION_NOUNS.update({"fiancé": "fiance", "fiancée": "fiancee", "bestie": "best friend", "spouse": "spouse",
                       "stepmom": "stepmother", "stepdad": "stepfather", "grandson": "grandson",
                       "granddaughter": "granddaughter", "grandchild": "grandchild", "grandkid": "grandchild",
                       "grandkids": "grandchild", "grandchildren": "grandchild", "mother-in-law": "mother-in-law",
                       "father-in-law": "father-in-law", "sister-in-law": "sister-in-law",
                       "brother-in-law": "brother-in-law", "ex": "ex"})
for _w in ("boss", "manager"):
    RELATION_NOUNS.pop(_w, None)
PET_NOUNS = dict(lx.PETS)
PET_NOUNS.update({"beagle": "dog", "collie": "dog", "labrador": "dog", "lab": "dog", "poodle": "dog",
                  "terrier": "dog", "spaniel": "dog", "retriever": "dog", "greyhound": "dog", "pup": "dog",
                  "tabby": "cat", "budgie": "bird", "tortoise": "tortoise", "goldfish": "fish", "pony": "horse",
                  "mutt": "dog", "husky": "dog", "dachshund": "dog", "chihuahua": "dog", "pug": "dog"})
PARTNER = frozenset({"wife", "husband", "partner", "girlfriend", "boyfriend", "fiance", "fiancee", "spouse"})
DIETS = frozenset(lx.DIETS)
TRAIT_ADJECTIVES = frozenset(lx.TRAITS | {"vegan", "vegetarian", "pescatarian", "anaemic", "anemic",
                                          "asthmatic", "epileptic", "sober", "celibate", "bilingual",
                                          "trilingual", "colourblind", "short-sighted", "nearsighted",
                                          "hard of hearing", "religious", "catholic", "muslim", "jewish",
                                          "christian", "hindu", "buddhist", "atheist"})
# adjective + preposition that make a durable attribute ("allergic to", "afraid of")
ADJ_PREP = {"allergic": "is allergic to", "intolerant": "is intolerant to", "interested": "is interested in",
            "afraid": "is afraid of", "scared": "is afraid of", "terrified": "is afraid of",
            "married": "is married to", "engaged": "is engaged to", "good": "is good at", "great": "is good at",
            "fluent": "is fluent in", "passionate": "is passionate about", "obsessed": "is obsessed with",
            "addicted": "is addicted to", "sensitive": "is sensitive to", "involved": "is involved in",
            "keen": "is keen on", "bad": "is bad at", "terrible": "is bad at", "new": "is new to"}
ADJ_PREP_TYPE = {"is allergic to": "FOOD", "is intolerant to": "FOOD", "is married to": "PERSON",
                 "is engaged to": "PERSON", "is fluent in": "SKILL", "is good at": "SKILL", "is bad at": "SKILL"}
ROLE_SUFFIXES = ("er", "or", "ist", "ian", "ant", "ent", "eer", "ive", "ee", "chef", "nurse", "engineer")
ROLES = frozenset(lx.ROLES | {"sous-chef", "chef", "head chef", "auditor", "nurse practitioner", "realtor",
                              "student", "retiree", "mom", "dad", "homemaker", "carer"})
GROUP_NOUNS = frozenset("club team band choir league group society gym orchestra crew union guild class".split())
JOB_NOUNS = frozenset("job position role post gig internship offer contract placement apprenticeship".split())
TIME_NOUNS = frozenset("day week month year days weeks months years".split())
HEDGES = frozenset("maybe perhaps probably possibly might guess think suppose hopefully kinda".split())
ENDING_ADVERBS = frozenset({"anymore", "longer"})  # "not … anymore", "no longer"
PRONOUN_OBJECTS = frozenset(lx.PRONOUNS | {"other", "each other", "one another", "others",
                                           "myself", "yourself", "everyone", "someone", "somebody", "anyone",
                                           "nobody", "each other", "one another", "all", "lot", "much",
                                           "more", "here", "there", "what", "which", "who", "way", "thing",
                                           "things", "stuff", "bit", "kind", "sort", "time", "day", "today"})
ABSTRACT = frozenset(lx.TRANSIENT | lx.ACQUIRED_TRANSIENT | {"keys", "key", "job", "offer", "permit", "results",
                                     "job offer", "visa", "place","idea", "news", "chance", "opportunity", "feeling", "sense", "vibe", "back",
                                     "backs", "fun", "luck", "break", "mind", "point", "trouble", "mess",
                                     "blast", "ball", "crisis", "sleep", "rest", "care", "attention", "word",
                                     "promise", "decision", "choice", "difference", "effort", "progress",
                                     "question", "answer", "thanks", "sorry", "hug", "favor", "favour",
                                     "story", "era", "road", "world", "line", "day", "week", "year", "month",
                                     # what a chat is full of and a memory can do nothing with
                                     "plan", "plans", "adventure", "creativity", "feedback", "life", "best",
                                     "ton", "tons", "bunch", "memories", "memory", "event", "setback", "chat",
                                     "talk", "conversation", "experience", "moment", "moments", "skills", "skillz",
                                     "props", "love", "support", "advice", "tips", "tip", "inspiration",
                                     "motivation", "vibes", "energy", "joy", "happiness", "passion", "way",
                                     "stuff", "lots", "heaps", "loads", "part", "side", "step", "steps",
                                     # what a chat shows rather than what a life holds
                                     "photo", "photos", "pic", "pics", "picture", "pictures", "selfie", "snap",
                                     "screenshot", "video", "clip", "link", "post", "shot",
                                     "note", "cheers", "cheer", "agreement"})   # "on another note", "cheers for asking"
# a gerund alone says nothing ("hates being", "loves going")
BARE_GERUNDS = frozenset({"being", "going", "having", "doing", "getting", "making", "trying", "seeing"})
SYNONYMS = {"cigarette": "smoking", "cigarettes": "smoking", "cigs": "smoking", "caffeine": "coffee",
            "alcohol": "drinking", "booze": "drinking"}
# verbs whose past tense is a passing moment, not something worth keeping as an event
EVENT_STOP = frozenset("""say tell ask think know see look hear feel want need get make let try mean guess hope
 agree disagree appreciate
 wonder forget remember realize realise notice seem sound call text message email reply thank chat talk
 write read give take put keep come go be have do""".split())
# how "I stopped/quit/gave up X" words the thing that ends; the write path matches it on any predicate
END_VERBS = frozenset({"quit", "stop", "leave", "drop", "sell", "retire", "ditch", "abandon", "resign",
                       "cancel", "end", "lose"})
END_PHRASAL = {("give", "up"), ("cut", "out"), ("pack", "in"), ("get", "rid")}
DEATH_VERBS = frozenset({"die", "pass", "perish"})
BREAKUP_VERBS = frozenset({"separate", "divorce"})
BREAKUP_PHRASAL = {("break", "up"), ("split", "up"), ("split", None)}
CHANGE_VERBS = frozenset({"move", "relocate", "start", "begin", "join", "adopt", "rescue", "buy", "get",
                          "take", "accept", "become", "turn", "marry", "switch", "land", "sign", "enroll",
                          "enrol", "pick"})
CONDITION_NOUNS = frozenset(lx.CONDITIONS | {"diabetes", "type 2 diabetes", "type 1 diabetes", "cancer",
                                             "anaemia", "anemia", "cholesterol", "high cholesterol",
                                             "high blood pressure", "pcos", "endometriosis", "lupus",
                                             "gout", "sciatica", "fibromyalgia", "ms", "copd"})
# what one has that happens to one, not what one owns: "had surgery", "had a crash"
HAPPENINGS = frozenset("""surgery operation accident crash fall stroke seizure miscarriage procedure
 breakdown concussion injury transplant biopsy transfusion c-section caesarean wedding funeral interview
 promotion game match party concert gig trip holiday vacation competition tournament race recital performance
 barbecue bbq picnic sleepover reunion ceremony graduation""".split()) | {"heart attack", "panic attack", "car accident"}
BODY_PARTS = frozenset("""arm arms leg legs wrist ankle knee knees collarbone rib ribs hip shoulder neck finger
 fingers toe toes foot hand nose jaw elbow meniscus acl achilles hamstring ligament tendon spine pelvis
 skull tooth back disc""".split())
INJURY_WORDS = {"broken": "broke", "fractured": "fractured", "sprained": "sprained", "torn": "tore",
                "twisted": "twisted", "dislocated": "dislocated", "pulled": "pulled", "slipped": "slipped",
                "cracked": "cracked", "bruised": "bruised", "ruptured": "ruptured"}
PROGRAM_NOUNS = frozenset("program programme course scheme cohort residency fellowship apprenticeship "
                          "internship bootcamp academy".split())
# what one owns or holds for good: "has" a thing is a fact only for these (or a named product)
POSSESSIONS = frozenset("""car cars bike bikes bicycle motorbike motorcycle scooter truck van suv boat yacht kayak
 canoe house home apartment flat condo cabin cottage farm ranch garden yard allotment greenhouse pool hot tub
 piano guitar violin cello drums drum kit keyboard ukulele saxophone trumpet flute harp bass camera laptop
 computer pc mac phone iphone tablet ipad kindle console ps5 xbox switch tv telescope drone printer
 studio shop store business restaurant bakery cafe café salon company startup practice clinic gym
 collection library tattoo tattoos degree masters phd doctorate diploma license licence passport scholarship
 membership subscription season ticket channel podcast blog website youtube
 aquarium vinyl record player turntable sewing machine 3d printer smoker grill""".split()) | {
    "record player", "sewing machine", "hot tub", "drum kit", "season ticket", "3d printer"}
# nouns with a role's ending that name no job: "a sucker for superheroes", "a big believer"
NOT_ROLES = frozenset("""sucker lover fan believer dreamer thinker winner loser member user beginner
 supporter follower admirer owner reader viewer listener watcher talker worrier overthinker
 perfectionist optimist pessimist introvert extrovert survivor warrior fighter rookie newbie
 parent mother father brother sister sibling partner neighbor neighbour customer client patient
 smoker drinker vaper gamer runner""".split())
BARE_GERUNDS = BARE_GERUNDS | {"playing", "working", "pushing", "losing", "winning", "talking", "helping",
                               "learning", "chatting", "hanging", "spending", "taking", "putting"}
# what a life is full of in a pep talk, and a memory can do nothing with ("chases dreams", "faces obstacles")
PLATITUDES = frozenset("""dream dreams goal goals challenge challenges obstacle obstacles journey growth potential
 impact situation spot addition top success successes chance chances hope hopes fear fears doubt doubts stress
 balance peace strength courage kindness encouragement belief words difference change changes positivity
 opportunity opportunities ups downs process moment memories passion passions heart mind soul vibe vibes
 creativity confidence motivation support love joy happiness life world things others everyone people
 texture voice color colour look looks view views project projects connection connections details detail
 wishes wish idea ideas plans stuff""".split())
# activities one does, said as a bare gerund: "does hiking" is a routine, "does plugging" is not
ACTIVITY_GERUNDS = frozenset("""hiking running jogging swimming cycling biking climbing bouldering camping
 fishing hunting skiing snowboarding surfing skating sailing rowing kayaking dancing singing painting drawing
 sketching knitting sewing crocheting baking cooking gardening reading writing journaling blogging vlogging
 gaming boxing wrestling fencing archery yoga pilates meditating meditation volunteering coaching tutoring
 mentoring teaching traveling travelling backpacking photography birdwatching stargazing woodworking pottery
 lifting weightlifting crossfit diving snorkeling snorkelling golfing bowling horseback riding riding
 skateboarding parkour martial arts karate judo taekwondo kickboxing spinning rock climbing shopping
 thrifting collecting composing drumming smoking vaping drinking gambling""".split())
