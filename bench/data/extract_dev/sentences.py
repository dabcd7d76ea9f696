"""Development cases for the offline extractor: everyday sentences (reported by ``bench/extract_dev_suites.py``).

Each case is one user message and what a demanding user expects the
extractor to pull out of it. Matching is case-insensitive:

* ``has``: ``(predicate, object)`` pairs that some candidate must match.
  ``predicate`` is a substring, a tuple of acceptable substrings, or None
  (any predicate). ``object`` is a substring, a tuple of acceptable
  substrings, or ``"=text"`` for an exact object.
* ``nothing``: the message must yield no candidate at all (chatter, world
  knowledge, statements about other people or things, questions).
* ``lacks``: ``(predicate, object)`` pairs no candidate may match.
* ``not_live``: objects no *positive, open* candidate may carry (a fact that
  ended, "used to", a negation): a candidate for it must be negated, carry
  ``ends`` or have ``valid_until`` at or before the message time.
* ``ends``: objects that must come with a candidate that ends a live fact
  (``ends`` set, or ``valid_until`` at or before the message time).
* ``negated``: objects whose candidate must have a negated predicate.
* ``near``: ``{object: (iso_date, days)}``: the candidate's valid_at (the
  message time when None) lies within ``days`` of the date.
* ``future``: objects whose candidate starts after the message time.
* ``count``: ``{object: n}``: exactly n candidates carry that object.
* ``hedged``: every candidate has confidence <= 0.6.
"""
from __future__ import annotations

from cases import AT, C, P, at  # noqa: F401

# fmt: off
CASES = [
    # -- present facts: home, work, role ---------------------------------------------------------
    C("based_in", "I'm based in Toronto these days.", has=[("lives in", "=toronto")]),
    C("live_with_gf", "i live in san francisco with my girlfriend", has=[("lives in", "=san francisco")]),
    C("shouting", "I LIVE IN NEW YORK!!!", has=[("lives in", "=new york")]),
    C("we_live", "We live in a small flat in Hackney.", has=[("lives in", "=hackney")]),
    C("work_nonprofit", "I work for a small nonprofit in Denver.", has=[("works at", "nonprofit")]),
    C("role_at_org", "I'm a software developer at Shopify.",
      has=[("works as", "software developer"), ("works at", "=shopify")]),
    C("role_bare", "I'm a nurse.", has=[("works as", "=nurse")]),
    C("work_as_in", "I work as an electrician in Cork.", has=[("works as", "=electrician")]),
    C("shifts_at", "I work night shifts at a hospital.", has=[("works at", "hospital")]),
    C("teach_subject", "I teach high school math.", has=[(("teach", "works as"), "math")]),
    C("teach_yoga", "I teach yoga on weekends.", has=[(("teach", "works as", "does", "practices"), "yoga")]),
    C("adverb_after_aux", "I'm currently unemployed.", has=[(("is", "status", "works"), "unemployed")]),
    C("retired", "I'm retired.", has=[(None, "retired")]),
    C("student_at", "I'm a second-year law student at McGill.",
      has=[(("studies", "works as", "is"), "law")], lacks=[("works at", "mcgill")]),

    # -- allergies, diet, health --------------------------------------------------------------------
    C("allergy_noun", "I have a peanut allergy.", has=[(("allergic", "has"), "peanut")]),
    C("allergy_list", "I'm allergic to cats and penicillin.",
      has=[("allergic", "=cats"), ("allergic", "=penicillin")]),
    C("allergy_curly", "I\u2019m allergic to bee stings.", has=[("allergic", "bee sting")]),
    C("allergy_hedge_sure", "I'm pretty sure I'm allergic to penicillin.", has=[("allergic", "penicillin")]),
    C("vegan", "I'm vegan.", has=[(("diet", "is"), "=vegan")]),
    C("veg_lol", "i'm a vegetarian lol", has=[(("diet", "is"), "=vegetarian")]),
    C("we_vegetarians", "We're vegetarians.", has=[(("diet", "is"), "vegetarian")]),
    C("diabetic", "I'm diabetic.", has=[(("is", "condition"), "diabet")]),
    C("asthma", "I have asthma.", has=[(("condition", "has"), "=asthma")]),
    C("cant_eat", "I can't eat gluten.", has=[("not eat", "=gluten")], negated=["gluten"]),
    C("never_pork", "I never eat pork.", has=[("not eat", "=pork")], negated=["pork"]),
    C("no_alcohol", "I don't drink alcohol.", has=[("not drink", "=alcohol")], negated=["alcohol"]),
    C("no_smoke", "I don't smoke.", has=[("not smoke", "")]),
    C("left_handed", "I'm left-handed.", has=[("is", "left-handed")]),
    C("night_owl", "I'm a night owl.", has=[("is", "night owl")]),
    C("afraid", "I'm afraid of heights.", has=[(("afraid", "fear", "dislike"), "heights")]),

    # -- possessions, vehicles -----------------------------------------------------------------------
    C("drive_year", "I drive a 2019 Subaru Outback.", has=[("drives", "subaru outback")]),
    C("ride_vespa", "I ride a Vespa to work.", has=[("drives", "=vespa")]),
    C("own_printer", "I own a 3D printer.", has=[(("has", "owns"), "3d printer")]),
    C("ps5_date", "I got a PS5 for my birthday two weeks ago.", has=[(("owns", "has"), "=ps5")],
      near={"ps5": ("2026-08-06", 2)}),

    # -- age, name, origin ------------------------------------------------------------------------------
    C("age_bare", "I'm 27.", has=[("aged", "=27")]),
    C("age_yrs", "Im 45 yrs old", has=[("aged", "45")]),
    C("age_words", "I am thirty-five years old.", has=[("aged", ("35", "thirty-five"))]),
    C("age_decade_words", "I'm in my early thirties.", has=[("aged", "thirt")]),
    C("age_turned", "I just turned 40 last week.", has=[("aged", "=40")], near={"40": ("2026-08-13", 3)}),
    C("born_year", "I was born in 1990.", has=[("born", "1990")]),
    C("name_but", "My name's Oluwaseun but everyone calls me Seun.", has=[("named", "oluwaseun")]),
    C("call_me", "Call me Alex.", has=[("named", "=alex")]),
    C("go_by", "I go by Sam.", has=[("named", "=sam")]),
    C("from_city_country", "I'm from Lagos, Nigeria.", has=[("from", "lagos")]),
    C("grew_up", "I grew up in a small town in Ohio.", has=[(("grew up", "from"), "ohio")]),
    C("born_raised", "Born and raised in Glasgow.", has=[(("born", "from", "grew up"), "glasgow")]),
    C("nationality", "I'm Brazilian.", has=[(("from", "national"), "brazil")], lacks=[("named", "")]),

    # -- study ---------------------------------------------------------------------------------------------
    C("study_at", "I study mechanical engineering at Purdue.",
      has=[("studies", "mechanical engineering"), ("studies at", "=purdue")]),
    C("phd_in", "I'm doing a PhD in neuroscience.", has=[("stud", "neuroscience")]),
    C("have_phd", "I have a PhD in chemistry.", has=[(("has", "stud", "degree"), "chemistry")]),
    C("graduated", "I graduated from Oxford in 2015.", has=[(("studied", "graduated"), "=oxford")]),
    C("learning_on_app", "I'm learning Korean on Duolingo.", has=[("learning", "=korean")]),
    C("masters_future", "I'm starting a master's at ETH Zurich in September.",
      has=[(("stud", "attends"), "eth zurich")], future=["eth zurich"]),

    # -- languages, skills --------------------------------------------------------------------------------
    C("speak_three", "I speak fluent German, some French and basic Italian.",
      has=[("speaks", "=german"), ("speaks", "=french"), ("speaks", "=italian")]),
    C("fluent_in", "I'm fluent in Spanish and Catalan.", has=[("speaks", "=spanish"), ("speaks", "=catalan")]),
    C("code_mostly", "i code mostly in rust and typescript", has=[(("program", "writes"), "=rust"),
                                                              (("program", "writes"), "=typescript")]),
    C("play_two", "I play guitar and bass in a band.", has=[("plays", "=guitar"), ("plays", "=bass")]),
    C("play_tennis", "I play tennis on weekends.", has=[("plays", "=tennis")]),

    # -- interests, likes, hobbies -------------------------------------------------------------------------
    C("really_into", "I'm really into bouldering.", has=[("likes", "bouldering")]),
    C("interested", "I'm interested in astrophotography.", has=[("interest", "astrophotography")]),
    C("fascinated", "I've always been fascinated by ancient Rome.", has=[(("interest", "likes"), "ancient rome")]),
    C("hobbies", "My hobbies are woodworking and birdwatching.",
      has=[(("likes", "enjoys", "hobb", "interest"), "woodworking"),
           (("likes", "enjoys", "hobb", "interest"), "birdwatching")]),
    C("podcasts", "I listen to a lot of podcasts.", has=[(("enjoys", "likes", "listens"), "podcasts")]),
    C("fan_noun", "I'm a huge Arsenal fan.", has=[(("likes", "supports"), "arsenal")]),
    C("support_team", "I support Liverpool.", has=[(("supports", "likes"), "=liverpool")]),
    C("fav_band", "My favorite band is Radiohead.", has=[("favorite band", "radiohead")]),
    C("fav_food_uk", "My favourite food is pho.", has=[("favorite food", "=pho")]),
    C("birthday", "My birthday is on March 3rd.", has=[("birthday", "march 3")]),
    C("club", "I'm a member of the local chess club.", has=[("member", "chess club")]),
    C("volunteer", "I volunteer at an animal shelter on Sundays.", has=[("volunteer", "=animal shelter")]),
    C("gym", "I go to the gym every morning.", has=[(("attends", "goes"), "=gym")]),
    C("training_for", "I'm training for an Ironman.", has=[("training", "ironman")]),
    C("we_love", "We love camping.", has=[("likes", "=camping")]),
    C("wife_and_i", "My wife and I love hiking.", has=[("likes", "=hiking")]),

    # -- goals -------------------------------------------------------------------------------------------
    C("want_learn", "I want to learn to sail someday.", has=[("wants", "sail")]),
    C("goal_is", "My goal is to lose 10 kg by summer.", has=[(("goal", "wants"), "lose 10 kg")]),
    C("hoping", "I'm hoping to get into medical school next year.", has=[("wants", "medical school")]),
    C("would_love", "I'd love to visit Japan one day.", has=[("wants", "visit japan")]),
    C("dream_is", "My dream is to open a bakery.", has=[(("dream", "wants", "goal"), "bakery")]),
    C("trying_quit", "I'm trying to quit smoking.", has=[("wants", "quit smoking")]),
    C("one_day_lead", "One day I'd like to live abroad.", has=[("wants", "live abroad")]),
    C("saving_for", "I'm saving up for a house.", has=[(("wants", "saving", "goal", "interest"), "house")]),

    # -- dislikes and negation ------------------------------------------------------------------------------
    C("cant_stand", "I can't stand jazz.", has=[("dislikes", "=jazz")]),
    C("not_big_fan", "I'm not a big fan of horror movies.", has=[("dislikes", "horror movies")]),
    C("really_dont_like", "I really don't like olives.", has=[("dislikes", "=olives")]),
    C("dislike_but_love", "I don't like cilantro but I love parsley.",
      has=[("dislikes", "=cilantro"), ("likes", "=parsley")], lacks=[("dislikes", "parsley")]),
    C("love_hate", "I love cooking, but I hate doing the dishes.",
      has=[("likes", "=cooking"), ("dislikes", "dishes")]),
    C("no_kids", "I don't have any kids.", not_live=["kid", "child"]),
    C("no_pets", "I have no pets.", not_live=["pet"]),
    C("not_married", "I'm not married.", not_live=["married"]),
    C("not_veg_anymore", "I'm not vegetarian anymore.", ends=["vegetarian"]),

    # -- ended facts -----------------------------------------------------------------------------------------
    C("no_longer_work", "I no longer work at Deloitte.", ends=["deloitte"]),
    C("dont_live_anymore", "I don't live in London anymore.", ends=["london"]),
    C("quit_job", "I quit my job at Amazon last month.", ends=["amazon"]),
    C("used_to_play", "I used to play the violin.", not_live=["violin"]),
    C("used_to_be", "I used to be a smoker.", not_live=["smoker"]),
    C("we_used_to", "We used to live in Dublin before moving to Cork.",
      not_live=["dublin"], has=[("lives in", "=cork")]),
    C("lived_past", "Back in college I lived in Boston.", not_live=["boston"]),
    C("was_teacher", "I was a teacher for ten years before switching to UX design.", not_live=["teacher"]),
    C("stopped_eating", "I stopped eating meat last year.", has=[("not eat", "=meat")],
      near={"meat": ("2025-08-20", 20)}),
    C("sold_car", "I sold my car last month.", not_live=["car"]),

    # -- changes with relative dates ----------------------------------------------------------------------------
    C("moved_ago", "I moved to Austin two months ago.", has=[("lives in", "=austin")],
      near={"austin": ("2026-06-20", 3)}),
    C("relocated_jan", "We relocated to Melbourne in January.", has=[("lives in", "=melbourne")],
      near={"melbourne": ("2026-01-01", 20)}),
    C("job_weeks_ago", "I started a new job at Spotify three weeks ago.", has=[("works at", "=spotify")],
      near={"spotify": ("2026-07-30", 2)}),
    C("no_subject_job", "Got a new job as a data analyst at Monzo yesterday!",
      has=[("works at", "=monzo"), ("works as", "data analyst")], near={"monzo": ("2026-08-19", 1)}),
    C("adopted_weekday", "I adopted a rescue greyhound last Saturday.", has=[("has", "greyhound")],
      near={"greyhound": ("2026-08-15", 1)}),
    C("since_month_lead", "Since March I've been working remotely for Atlassian.",
      has=[("works at", "atlassian")], near={"atlassian": ("2026-03-01", 20)}),
    C("became_role", "I became a paramedic in 2021.", has=[("works as", "paramedic")],
      near={"paramedic": ("2021-06-01", 200)}),
    C("married_june", "I got married in June.", has=[(("relationship", "married"), "married")],
      near={"married": ("2026-06-01", 20)}),
    C("living_since_year", "I've been living in Kyoto since 2019.", has=[("lives in", "=kyoto")],
      near={"kyoto": ("2019-01-01", 200)}),
    C("working_since_year", "I've been working at Siemens since 2020.", has=[("works at", "=siemens")],
      near={"siemens": ("2020-01-01", 200)}),
    C("vegan_for_years", "I've been a vegan for five years.", has=[(("diet", "is"), "vegan")],
      near={"vegan": ("2021-08-20", 60)}),
    C("started_running", "I started running a month ago.", has=[(None, "run")],
      near={"run": ("2026-07-20", 5)}),
    C("diagnosed", "I was diagnosed with celiac disease last year.", has=[(("condition", "has"), "celiac")],
      near={"celiac": ("2025-08-20", 20)}),
    C("engaged_weekend", "I got engaged last weekend!", has=[(("relationship", "engaged"), "engaged")],
      near={"engaged": ("2026-08-15", 2)}),
    C("years_ago_lead", "Two years ago I moved to Nairobi.", has=[("lives in", "=nairobi")],
      near={"nairobi": ("2024-08-20", 5)}),

    # -- future facts ------------------------------------------------------------------------------------------
    C("moving_next_month", "I'm moving to Vancouver next month.", has=[("lives in", "=vancouver")],
      future=["vancouver"], near={"vancouver": ("2026-09-20", 3)}),
    C("start_role_date", "I start my new role at Microsoft on October 1st.", has=[("works at", "=microsoft")],
      future=["microsoft"], near={"microsoft": ("2026-10-01", 1)}),
    C("we_getting_puppy", "We're getting a puppy in two weeks.", has=[(("has", "owns"), ("puppy", "dog"))],
      future=["puppy"], near={"puppy": ("2026-09-03", 2)}),
    C("going_to_city", "I'm going to Lisbon in October.", has=[("travel", "=lisbon")],
      lacks=[("wants", "lisbon")], future=["lisbon"]),
    C("flying_weekday", "I'm flying to Tokyo next Friday.", has=[("travel", "=tokyo")],
      near={"tokyo": ("2026-08-28", 1)}),
    C("arrives", "My Tesla Model Y arrives in November.", has=[(("owns", "has", "drives"), "model y")],
      future=["model y"]),
    C("will_be_moving", "I'll be moving to Singapore next year for work.", has=[("lives in", "=singapore")],
      future=["singapore"]),
    C("picking_up", "I'm picking up my new Ducati in three days.", has=[(("owns", "has"), "ducati")],
      future=["ducati"], near={"ducati": ("2026-08-23", 1)}),

    # -- several facts in one message ------------------------------------------------------------------------
    C("intro_three", "I'm Priya, I'm 31 and I work as a pharmacist in Leeds.",
      has=[("named", "=priya"), ("aged", "=31"), ("works as", "=pharmacist")]),
    C("live_work_ski", "I live in Oslo, work at Equinor, and spend weekends skiing.",
      has=[("lives in", "=oslo"), ("works at", "=equinor")]),
    C("veg_lactose_hate", "I'm a vegetarian, I'm lactose intolerant and I hate coriander.",
      has=[(("diet", "is"), "vegetarian"), (("intolerant", "is"), "lactose"), ("dislikes", "=coriander")]),
    C("husband_son", "My husband Tom is a chef and my son Eli is 6.",
      has=[("husband", "=tom"), ("son", "=eli")], lacks=[("works as", "chef")]),
    C("cats_and_dog", "I have two cats, Miso and Tofu, and a dog called Rex.",
      has=[("cat", "=miso"), ("cat", "=tofu"), ("dog", "=rex")]),
    C("kids_colon", "We have three kids: Ana, Ben and Caro.",
      has=[("child", "=ana"), ("child", "=ben"), ("child", "=caro")]),
    C("live_and_question", "I live in Berlin, what's good to do here on a Sunday?",
      has=[("lives in", "=berlin")]),

    # -- relatives and pets with names ---------------------------------------------------------------------------
    C("dog_name_is", "My dog's name is Pepper.", has=[("dog", "=pepper")]),
    C("gf_commas", "My girlfriend, Lena, is a photographer.", has=[("girlfriend", "=lena")],
      lacks=[("works as", "photographer")]),
    C("cat_called", "I've got a cat called Mochi.", has=[("cat", "=mochi")]),
    C("our_puppy", "Our puppy Luna is 4 months old.", has=[(("dog", "puppy"), "=luna")], lacks=[("aged", "")]),
    C("mom_lives", "My mom Carol lives in Phoenix.", has=[("mother", "=carol")], lacks=[("lives in", "phoenix")]),
    C("best_friend_called", "My best friend is called Jamal.", has=[("best friend", "=jamal")]),
    C("married_to", "I'm married to Daniel.", has=[(("married", "husband", "spouse"), "=daniel")]),
    C("son_age_named", "I have a 3 year old son named Noah.", has=[("son", "=noah")]),
    C("sister_pair", "My sister Maya and her husband live in Seoul.", has=[("sister", "=maya")],
      lacks=[("lives in", "seoul")]),
    C("twin_brother", "I have a twin brother.", has=[("has", ("brother", "twin"))]),
    C("breed_named", "We have a golden retriever named Max.", has=[("has", "max")]),
    C("partner_and_i_bought", "My partner and I just bought a house in Lisbon.", has=[(("owns", "has"), "house")]),

    # -- chatter: nothing ---------------------------------------------------------------------------------------
    C("thx", "thx, that helps a lot!", nothing=True),
    C("lmao", "lmao no way", nothing=True),
    C("good_morning", "Good morning!", nothing=True),
    C("i_see", "I see what you mean.", nothing=True),
    C("i_think_so", "I think that's right.", nothing=True),
    C("im_good", "I'm good, how are you?", nothing=True),
    C("quick_question", "I have a quick question about SQL joins.", nothing=True),
    C("browsing", "I'm just browsing.", nothing=True),
    C("need_to_finish", "I need to finish this report by Friday.", nothing=True),
    C("tired_today", "I'm so tired today.", nothing=True),
    C("meeting_soon", "I have a meeting in 10 minutes.", nothing=True),
    C("looking_at_answer", "I'm looking at your answer now.", nothing=True),
    C("love_that_idea", "I love that idea!", nothing=True),
    C("like_how", "I like how you explained it.", nothing=True),
    C("grab_coffee", "brb, I'm going to grab a coffee", nothing=True),
    C("try_later", "I'll try that later.", nothing=True),
    C("remind_me", "Can you remind me what I said about my trip?", nothing=True),
    C("wonder", "I wonder whether I should learn Rust.", nothing=True),
    C("hedge_might", "I think I might move to Porto next year.", hedged=True, not_live=[]),

    # -- world knowledge and other subjects: nothing about the user ------------------------------------------------
    C("great_wall", "The Great Wall of China is visible from space, right?", nothing=True),
    C("everest", "Mount Everest is 8,849 meters tall.", nothing=True),
    C("shakespeare", "Shakespeare wrote Hamlet.", nothing=True),
    C("macbook_spec", "The new MacBook Pro has an M4 chip and 24GB of RAM.", nothing=True),
    C("she_works", "She works at Google as a product manager.", nothing=True),
    C("they_moved", "They moved to Canada last year.", nothing=True),
    C("coffee_caffeine", "Coffee contains caffeine.", nothing=True),
    C("hypothetical", "If I lived in Paris I would eat croissants every day.", nothing=True),
    C("should_i", "Should I move to Berlin?", nothing=True),
    C("do_i_need", "Do I need a visa to visit Brazil?", nothing=True),
    C("do_you_like", "Do you like pizza?", nothing=True),
    C("friend_jake", "My friend Jake lives in Denver and loves hiking.",
      lacks=[("lives in", "denver"), ("likes", "hiking")]),
    C("boss_obsessed", "My boss is obsessed with spreadsheets.", lacks=[("likes", "spreadsheets")]),
    C("brother_allergic", "My brother is allergic to shellfish.", lacks=[("allergic", "shellfish")]),
    C("sister_doctor", "My sister is a doctor in Leeds.", lacks=[("works as", "doctor"), ("works in", "leeds")]),
    C("company_uses", "Our company uses Slack and Jira.", lacks=[("uses", "slack")]),

    # -- preferences and settings ------------------------------------------------------------------------------
    C("please_metric", "Please use metric units.", has=[("prefers", "metric")]),
    C("prefer_short", "I prefer short answers.", has=[("prefers", "short")]),
    C("set_theme", "Set the theme to dark.", has=[(("prefers theme", "prefers mode"), "dark")]),
    C("reply_spanish", "Please reply in Spanish from now on.", has=[("prefers", "spanish")]),
    C("celsius_over", "I prefer Celsius over Fahrenheit.", has=[("prefers", "=celsius")],
      lacks=[("prefers", "fahrenheit")]),
    C("switch_back", "Switch me back to dark mode.", has=[("prefers", "dark mode")]),

    # -- dedup of repeats, typo aliases, hedges ----------------------------------------------------------------
    C("repeat_sushi", "I love sushi. Seriously, I love sushi!", has=[("likes", "=sushi")], count={"sushi": 1}),
    C("repeat_rome", "I live in Rome, yes I live in Rome.", has=[("lives in", "=rome")], count={"rome": 1}),
    C("typo_opinion", "yeah the macbok air seems really nice", has=[("likes", "macbok air")]),
    C("opinion_marker", "honestly the prius looks amazing", has=[("likes", "=prius")]),
]
# fmt: on



# -- one slot for two ways of saying the same kind of thing (so the newer supersedes) -----------------

# fmt: off
SLOT_PAIRS = [
    P("I live in Glasgow.", "We relocated to Leeds last spring.", "lives in", id="home"),
    P("I work at Deloitte.", "I've just accepted a position at KPMG.", "works at", id="employer"),
    P("I'm a teacher.", "I work as a translator now.", "works as", id="role"),
    P("I'm 29.", "I turned 30 yesterday.", "is aged", id="age"),
    P("I'm vegetarian.", "I've gone vegan.", None, id="diet"),
    P("I prefer the dark theme.", "Set the theme to light.", None, id="theme"),
    P("Please use metric units.", "Actually, switch to imperial units.", None, id="units"),
    P("My name's Robert.", "I'm Rob.", "is named", id="name"),
]
# fmt: on

