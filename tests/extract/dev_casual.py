"""Development cases for the offline extractor, written the way people type (once called
"held-out", but the old rule extractor was tuned on them; scored by ``test_parse_dev.py``).

A second round after ``dev_sentences.py``: long casual messages that mix chatter and
facts, lower case without punctuation, typos in filler words, emoji, questions to
the assistant, statements about other people, quoted speech, hypotheticals, past
events that are not durable facts, and lines in the spirit of long casual
conversations (LoCoMo-like), most of which should store nothing.

The case format and the checks are those of ``dev_sentences.py`` (see its docstring):
``has``, ``nothing``, ``lacks``, ``not_live``, ``ends``, ``negated``, ``near``,
``future``, ``count``, ``hedged``.
"""
from __future__ import annotations

import pytest

from cases import AT, C, at, check, check_same_slot  # noqa: F401

# fmt: off
CASES = [
    # -- present facts: home, work, role, in casual writing ------------------------------------------
    C("live_now_winters", "hey so i live in montreal now and the winters r brutal lol",
      has=[("lives in", "=montreal")]),
    C("bakery_shifts", "btw i work at a bakery downtown, early shifts are killing me",
      has=[("works at", "bakery")], lacks=[("works at", "shift")]),
    C("teacher_state", "Im a high school chemistry teacher in ohio, so summers are my only break",
      has=[("works as", "teacher")], lacks=[("likes", "summer")]),
    C("freelance_designer", "i'm a freelance graphic designer, mostly doing logos for small businesses",
      has=[("works as", "graphic designer")]),
    C("barista_while", "currently working as a barista while i figure things out",
      has=[("works as", "=barista")]),
    C("rn_at", "I'm an RN at Mass General and honestly the night shifts are rough \U0001F605",
      has=[("works at", "=mass general")]),
    C("job_boring_accountant", "my job is boring tbh, i'm an accountant at a law firm",
      has=[("works as", "=accountant"), ("works at", "law firm")]),
    C("tiny_apartment", "we live in a tiny apartment in brooklyn with two cats",
      has=[("lives in", "=brooklyn")]),
    C("lived_whole_life", "I've lived in Chicago my whole life", has=[("lives in", "=chicago")]),
    C("parents_rn", "i'm living with my parents in sacramento rn", has=[("lives in", "=sacramento")]),
    C("emoji_city", "i live in phoenix az \U0001F335", has=[("lives in", ("=phoenix az", "=phoenix"))]),
    C("ya_target", "ya i work at target, its fine i guess", has=[("works at", "=target")]),

    # -- allergies and diets ----------------------------------------------------------------------------
    C("shellfish_pls", "oh also im allergic to shellfish so no shrimp recipes pls",
      has=[("allergic", "=shellfish")], lacks=[(None, "shrimp")]),
    C("severe_nut", "fyi i have a severe nut allergy", has=[(("allergic", "has"), "nut")]),
    C("celiac_gf", "i'm celiac so everything has to be gluten free", has=[(("is", "condition"), "celiac")]),
    C("veg_since_year", "I've been vegetarian since 2018 and I'm not going back",
      has=[(("diet", "is"), "=vegetarian")], near={"vegetarian": ("2018-01-01", 200)}),
    C("went_keto", "I went keto in january and lost 8 pounds already",
      has=[(("diet", "is"), "=keto")], near={"keto": ("2026-01-01", 20)}),
    C("no_dairy_stomach", "i dont eat dairy, it messes with my stomach",
      has=[("not eat", "=dairy")], negated=["dairy"]),
    C("lactose_milkshake", "I'm lactose intolerant lol so no milkshakes for me",
      has=[(("intolerant", "is"), "lactose")]),
    C("allergic_also_to", "I'm allergic to penicillin and also to latex",
      has=[("allergic", "=penicillin"), ("allergic", "=latex")]),
    C("allergy_and_question", "my son has a peanut allergy, what snacks are safe for school?",
      lacks=[("allergic", "peanut"), ("has", "peanut")]),

    # -- age, name, origin ---------------------------------------------------------------------------------
    C("turned_emoji", "i just turned 22 \U0001F389", has=[("aged", "=22")]),
    C("age_and_running", "I'm 58 and just getting into running", has=[("aged", "=58")]),
    C("from_but_in", "originally from manila but i've been in toronto for 6 years",
      has=[("from", "=manila")]),
    C("irish_spain", "I'm Irish but I live in Spain",
      has=[(("national", "from"), "irish"), ("lives in", "=spain")]),
    C("born_raised_split", "born in seoul, raised in LA", has=[("born", "=seoul"), (("from", "raised"), "=la")]),
    C("year_old_dad", "I'm a 40 year old dad of two", has=[("aged", "=40")]),
    C("name_lower", "my name is katherine btw", has=[("named", "=katherine")]),
    C("intro_jess", "hi! i'm jess, 29, a nurse from dublin", has=[("aged", "=29"), ("works as", "=nurse")],
      lacks=[("named", "29")]),

    # -- study -------------------------------------------------------------------------------------------------
    C("junior_majoring", "i'm a junior at UCLA majoring in psychology",
      has=[("studies", "=psychology"), ("studies at", "=ucla")]),
    C("masters_rn", "doing my masters in data science at Edinburgh rn",
      has=[("stud", "data science")]),
    C("finished_phd", "I finished my PhD in linguistics last year",
      has=[(("has", "stud", "degree", "graduated"), "linguistics")]),
    C("learning_to_play", "I'm learning to play the violin, it's tough but rewarding",
      has=[("learning", "violin")]),

    # -- languages ----------------------------------------------------------------------------------------------
    C("speak_three_lower", "i speak english, tagalog and a bit of spanish",
      has=[("speaks", "=english"), ("speaks", "=tagalog"), ("speaks", "=spanish")]),
    C("learning_for_trip", "I'm learning japanese for a trip next year", has=[("learning", "=japanese")],
      lacks=[("learning", "trip")]),
    C("native_polish", "my native language is Polish", has=[("speaks", "=polish")]),
    C("dont_speak_german", "I don't speak German, sadly", not_live=["german"]),
    C("wish_spoke", "I wish I spoke Italian", lacks=[("speaks", "italian")]),

    # -- interests, likes, hobbies -------------------------------------------------------------------------------
    C("keyboards_lately", "I'm super into mechanical keyboards lately", has=[("likes", "=mechanical keyboards")]),
    C("sourdough", "i've gotten really into sourdough baking during lockdown", has=[("likes", "sourdough")]),
    C("collect_vinyl", "I collect vinyl records, mostly 70s soul", has=[(None, "vinyl records")]),
    C("big_fan_subjectless", "big fan of the lakers here", has=[("likes", "lakers")]),
    C("hike_photo", "i love hiking and photography, especially in the mountains",
      has=[("likes", "=hiking"), ("likes", "=photography")]),
    C("obsessed_podcasts", "I'm obsessed with true crime podcasts \U0001F3A7", has=[("likes", "=true crime podcasts")]),
    C("drums_band", "i play the drums in a local band", has=[("plays", "=drums")]),
    C("fav_movie", "my favorite movie is Spirited Away", has=[("favorite movie", "=spirited away")]),
    C("knit_spare", "I knit in my spare time", has=[(None, "knit")]),
    C("kinda_obsessed_w", "ngl i'm kinda obsessed w/ pickleball rn \U0001F602", has=[("likes", "=pickleball")]),
    C("passionate_helping", "I'm really passionate about helping people in my community.",
      has=[(("likes", "interest"), "helping people")]),
    C("always_loved_ocean", "I've always loved the ocean, it calms me down.", has=[("likes", "ocean")]),
    C("joined_book_club", "I joined a book club last month and I love it", has=[("member", "book club")],
      near={"book club": ("2026-07-20", 3)}),
    C("volunteering_shelter", "I started volunteering at a homeless shelter last month.",
      has=[("volunteer", "homeless shelter")]),

    # -- goals ---------------------------------------------------------------------------------------------------
    C("goal_books", "my goal this year is to read 50 books", has=[(("goal", "wants"), "read 50 books")]),
    C("get_better_speaking", "i really want to get better at public speaking", has=[("wants", "public speaking")]),
    C("apply_phd", "I'm planning to apply for a PhD next fall", has=[("wants", "apply for a phd")]),
    C("hoping_marathon", "hoping to run my first marathon next spring", has=[("wants", "marathon")]),
    C("keen_career", "I'm keen on pursuing a career in counseling.", has=[(("wants", "interest", "likes"), "counseling")]),
    C("mentor_someday", "I'm hoping to become a mentor for LGBTQ youth someday.", has=[("wants", "mentor")]),
    C("decide_between", "I'm trying to decide between the blue and the red one", nothing=True),

    # -- dislikes -----------------------------------------------------------------------------------------------
    C("hate_mornings", "ugh i hate mornings", has=[("dislikes", "=mornings")]),
    C("country_music", "I really can't stand country music \U0001F644", has=[("dislikes", "=country music")]),
    C("not_a_fan_subjectless", "not a fan of spicy food tbh", has=[("dislikes", "=spicy food")]),
    C("not_really_into", "i'm not really into sports", not_live=["sports"]),
    C("horror_nightmares", "I don't like horror movies, they give me nightmares",
      has=[("dislikes", "=horror movies")], lacks=[(None, "nightmare")]),

    # -- negation ---------------------------------------------------------------------------------------------
    C("no_coffee_only_tea", "i don't drink coffee, only tea", has=[("not drink", "=coffee")], negated=["coffee"]),
    C("no_car_bike", "I don't have a car so I bike everywhere", not_live=["car"]),
    C("not_morning_person", "I'm not a morning person at all", not_live=["morning person"]),
    C("never_married", "I've never been married", not_live=["married"]),
    C("no_tv", "i don't own a tv", not_live=["tv"]),

    # -- ended facts ---------------------------------------------------------------------------------------------
    C("used_walmart", "i used to work at walmart back in high school", not_live=["walmart"]),
    C("used_smoke_quit", "I used to smoke but quit 3 years ago", not_live=["smok"]),
    C("was_vegan_while", "I was vegan for a while but I eat meat again now", not_live=["vegan"]),
    C("quit_bank", "I quit my job at the bank last week", ends=["bank"]),
    C("sold_motorbike", "I sold my motorbike in march", not_live=["motorbike"]),
    C("texas_oregon", "we don't live in texas anymore, we moved to oregon in june",
      ends=["texas"], has=[("lives in", "=oregon")], near={"oregon": ("2026-06-01", 20)}),
    C("dog_passed", "My dog passed away last month \U0001F622", not_live=["dog"]),
    C("left_google_year", "I left Google in 2023 to start my own company", ends=["google"]),
    C("dad_was_firefighter", "My dad was a firefighter for 30 years", nothing=True),

    # -- changes with relative dates -----------------------------------------------------------------------------
    C("finally_moved", "so we finally moved to denver last weekend!!", has=[("lives in", "=denver")],
      near={"denver": ("2026-08-15", 2)}),
    C("started_at_org", "started at Netflix 2 weeks ago and still figuring things out",
      has=[("works at", "=netflix")], near={"netflix": ("2026-08-06", 2)}),
    C("promoted", "I got promoted to senior engineer last month", has=[("works as", "senior engineer")],
      near={"senior engineer": ("2026-07-20", 3)}),
    C("kitten_yesterday", "i adopted a kitten named Pickle yesterday", has=[(("cat", "pet"), "=pickle")]),
    C("bought_house_april", "We bought a house in Portland in April", has=[(("owns", "has"), "house")],
      near={"house": ("2026-04-01", 20)}),
    C("new_job_starting_monday", "I got a new job as a UX researcher at Spotify, starting monday",
      has=[("works at", "=spotify"), ("works as", "ux researcher")]),
    C("guitar_january", "I started learning guitar in January", has=[("learning", "=guitar")],
      near={"guitar": ("2026-01-01", 20)}),
    C("baby_girl", "we had a baby girl last month, her name is Aria", has=[("daughter", "=aria")],
      xfail="needs a birth event and coreference of 'her name' across clauses"),

    # -- future facts ----------------------------------------------------------------------------------------------
    C("deloitte_september", "I'm starting at Deloitte in September, super nervous",
      has=[("works at", "=deloitte")], future=["deloitte"]),
    C("moving_berlin_nov", "moving to berlin in november for work", has=[("lives in", "=berlin")],
      future=["berlin"], near={"berlin": ("2026-11-01", 3)}),
    C("married_next_june", "We're getting married next June!", has=[(("relationship", "married"), "married")],
      future=["married"]),
    C("iphone_friday", "my new iphone arrives on friday", has=[(("owns", "has"), "iphone")], future=["iphone"],
      near={"iphone": ("2026-08-21", 1)}),
    C("hospital_next_monday", "I start my new job at the hospital next monday",
      has=[("works at", "hospital")], future=["hospital"]),
    C("rome_two_weeks", "I'm flying to rome in two weeks for my sister's wedding",
      has=[("travel", "=rome")], future=["rome"], near={"rome": ("2026-09-03", 1)}),
    C("buying_home_question", "Could you explain how mortgages work? I'm buying my first home next year",
      has=[(None, "home")], future=["home"]),
    C("pottery_next_week", "I just signed up for a pottery class, starting next week!", has=[(None, "pottery")]),

    # -- several facts in one message --------------------------------------------------------------------------------
    C("eng_austin_dogs", "I'm a software engineer, I live in Austin and I have two dogs",
      has=[("works as", "=software engineer"), ("lives in", "=austin"), ("dog", ("2", "two"))]),
    C("omar_cairo_arch", "My name is Omar, I'm from Cairo and I study architecture",
      has=[("named", "=omar"), ("from", "=cairo"), ("studies", "=architecture")]),
    C("vegan_soy_mushrooms", "i'm vegan, allergic to soy, and i hate mushrooms. any dinner ideas?",
      has=[(("diet", "is"), "=vegan"), ("allergic", "=soy"), ("dislikes", "=mushrooms")]),
    C("airbnb_korean", "I work at Airbnb as a data engineer and I'm learning Korean on the side",
      has=[("works at", "=airbnb"), ("works as", "=data engineer"), ("learning", "=korean")]),
    C("daughter_and_son", "we have a 5 year old daughter named Zoe and a son named Max",
      has=[("daughter", "=zoe"), ("son", "=max")]),
    C("long_mixed", "ok so long story short, work has been insane this week, but anyway i live in leeds, "
      "i'm a physio and i play five-a-side on tuesdays. can you suggest a stretching routine?",
      has=[("lives in", "=leeds"), ("plays", "five-a-side")]),

    # -- relatives and pets with names ---------------------------------------------------------------------------------
    C("cat_luna_desk", "my cat Luna keeps knocking things off my desk lol", has=[("cat", "=luna")]),
    C("husbands_name", "My husband's name is David", has=[("husband", "=david")]),
    C("border_collie", "I have a border collie called Scout", has=[(("has", "pet"), "=scout")]),
    C("brother_kevin", "my brother Kevin lives in Seattle", has=[("brother", "=kevin")],
      lacks=[("lives in", "seattle")]),
    C("dog_bruno_old", "our dog Bruno is 12 now, he's getting old", has=[("dog", "=bruno")],
      lacks=[("aged", "")]),
    C("two_older_sisters", "I have two older sisters", has=[("sister", "two")]),
    C("son_is_named", "My son is named Oliver", has=[("son", "=oliver")]),
    C("parrot_kiwi", "I've got a parrot named Kiwi who says hello to everyone", has=[(("pet", "parrot"), "=kiwi")]),
    C("dog_max_agree", "Haha, my dog Max would totally agree!", has=[("dog", "=max")]),
    C("finaly_dog", "sooo i finaly got a dog!!! his name is Waffles \U0001F436",
      has=[(("has", "dog"), ("dog", "waffles"))]),

    # -- chatter, questions to the assistant: nothing ------------------------------------------------------------------
    C("lol_exactly", "lol yes exactly", nothing=True),
    C("makes_sense", "ok cool, makes sense", nothing=True),
    C("thank_u", "thank u so much!! \U0001F64F", nothing=True),
    C("let_me_think", "hmm let me think about it", nothing=True),
    C("book_rome", "can you recommend a good book about Rome?", nothing=True),
    C("weather_paris", "what's the weather in Paris tomorrow?", nothing=True),
    C("pivot_table", "how do i make a pivot table in excel", nothing=True),
    C("not_sure_mean", "I'm not sure what you mean", nothing=True),
    C("bored_joke", "i'm bored, tell me a joke", nothing=True),
    C("hungry_now", "I'm so hungry right now \U0001F629", nothing=True),
    C("feel_like_pizza", "I feel like pizza tonight", nothing=True),
    C("airport", "I'm at the airport waiting for my flight", nothing=True),
    C("best_burrito", "I just had the best burrito ever", nothing=True),
    C("oppenheimer", "I watched Oppenheimer last night, it was incredible", nothing=True),
    C("what_to_cook", "I'm thinking about what to cook tonight", nothing=True),
    C("email_landlord", "I need help writing an email to my landlord", nothing=True),
    C("know_black_holes", "I want to know more about black holes", nothing=True),
    C("ask_something", "I'd like to ask you something", nothing=True),
    C("headache_today", "I have a headache today", nothing=True),
    C("no_idea_fix", "I have no idea how to fix this", nothing=True),
    C("parking_ticket", "i got a parking ticket today ugh", nothing=True),
    C("dentist_tomorrow", "I'm going to the dentist tomorrow", nothing=True),
    C("meeting_till", "I'll be in a meeting till 3", nothing=True),
    C("quit_job_question", "do you think i should quit my job?", nothing=True),
    C("drive_la_vegas", "how long does it take to drive from LA to Vegas?", nothing=True),
    C("wake_3am", "Why do I always wake up at 3am?", nothing=True),
    C("cook_for_sister", "what should I cook for my vegetarian sister?", nothing=True),
    C("gift_golf", "what's a good gift for someone who loves golf?", nothing=True),
    C("python_or_js", "should i learn python or javascript first?", nothing=True),

    # -- past events that are not durable facts -----------------------------------------------------------------------
    C("sushi_lunch", "I ate sushi for lunch today", nothing=True),
    C("visited_parents", "I visited my parents last weekend", nothing=True),
    C("met_guy", "I met a guy named Tom at the bar last night", nothing=True),
    C("saw_deer", "I saw a deer on my run this morning", nothing=True),
    C("bought_groceries", "I bought groceries yesterday", nothing=True),
    C("had_pizza", "I had pizza last night", nothing=True),
    C("gym_morning", "i went to the gym this morning", nothing=True),

    # -- other people, world knowledge, quotes, hypotheticals: nothing about the user -------------------------------
    C("boss_denver", "my boss lives in Denver", lacks=[("lives in", "denver")]),
    C("coworker_vegan", "my coworker is vegan and always brings weird snacks", lacks=[(("diet", "is"), "vegan")]),
    C("mom_gardening", "My mom loves gardening", lacks=[("likes", "gardening")]),
    C("friend_quote", "my friend said \"I live in tokyo now\"", lacks=[("lives in", "tokyo")]),
    C("quote_son_astronaut", "my son keeps saying \"I want to be an astronaut\" lol", lacks=[("wants", "astronaut")]),
    C("she_allergic", "She said she's allergic to cats", nothing=True),
    C("tokyo_largest", "Tokyo is the largest city in the world", nothing=True),
    C("iphone_usbc", "The iPhone 15 has a USB-C port", nothing=True),
    C("dogs_chocolate", "dogs can't eat chocolate right?", nothing=True),
    C("gf_french", "my girlfriend speaks fluent french", lacks=[("speaks", "french")]),
    C("his_name_marco", "His name is Marco and he works at Ferrari", nothing=True),
    C("if_tokyo", "if I lived in Tokyo I'd eat ramen every day", nothing=True),
    C("if_dog_name", "if i had a dog i would name it Biscuit", nothing=True),
    C("imagine_nasa", "imagine if i worked at nasa lol", nothing=True),
    C("einstein_born", "Einstein was born in Germany", nothing=True),
    C("company_moved", "our company just moved to a new office in Boston", lacks=[("lives in", "boston")]),
    C("sister_wife_live", "my sister and her wife live in vancouver", lacks=[("lives in", "vancouver")]),
    C("friend_thinks", "my friend thinks I should move to Lisbon", lacks=[("lives in", "lisbon")]),
    C("if_ever_moved", "if i ever moved to canada id need a warmer coat", nothing=True),
    C("maybe_cat", "maybe I'll get a cat someday", hedged=True),
    C("if_allergic_question", "can i eat eggs if i'm allergic to chicken?", lacks=[("allergic", "chicken")]),

    # -- settings: one value that supersedes ---------------------------------------------------------------------------
    C("short_answers_pls", "pls keep your answers short from now on", has=[("prefers", "short")]),
    C("dark_mode_pls", "switch to dark mode pls", has=[("prefers", "dark mode")]),
    C("always_german", "please always answer in German", has=[("prefers", "german")]),
    C("fahrenheit_american", "use fahrenheit please, i'm american",
      has=[("prefers", "fahrenheit"), ("national", "american")]),
    C("british_spelling", "Actually I prefer British spelling", has=[("prefers", "british spelling")]),

    # -- in the spirit of long casual conversations (mostly nothing) -------------------------------------------------
    C("lgbtq_group", "I went to a LGBTQ support group yesterday and it was so powerful.", nothing=True),
    C("support_means", "Thanks! Your support means a lot.", nothing=True),
    C("painting_relax", "I've been painting a lot lately, it really helps me relax.", has=[(None, "paint")]),
    C("kids_camping", "My kids and I went camping at the lake last weekend, we had a blast!", nothing=True),
    C("trans_woman", "I'm a transgender woman and I've been on my journey for three years now.",
      has=[("is", "transgender")]),
    C("painted_sunrise", "Yeah, I painted that lake sunrise last year! It's special to me.", nothing=True),
    C("family_everything", "That's so sweet! Family is everything.", nothing=True),
    C("how_long_doing", "Wow, that sounds amazing! How long have you been doing that?", nothing=True),
    C("mom_dreams", "My mom always told me to follow my dreams.", nothing=True),
    C("proud_of_you", "I'm so proud of you, you've come so far!", nothing=True),
    C("rough_week", "I had a rough week, my car broke down twice.", nothing=True),
    C("never_forget", "It was such a great experience, I'll never forget it.", nothing=True),
    C("concert_q", "Did you end up going to that concert?", nothing=True),
    C("take_care", "Sounds good, take care!", nothing=True),
    C("finished_painting", "I finally finished the painting I was working on, so happy with it", nothing=True),
    C("music_q", "Oh nice, what kind of music do you like?", nothing=True),
    C("grandma_necklace", "My grandma gave me this necklace when I was a kid, it means the world to me.", nothing=True),
    C("great_friend", "You're such a great friend, thanks for always being there.", nothing=True),
    C("anxious_move", "I've been feeling really anxious about the move.", nothing=True),
    C("late_reply", "Sorry for the late reply, work has been crazy.", nothing=True),
    C("workshop", "I went to a counseling workshop last Friday, it was super insightful.", nothing=True),
    C("love_that_painting", "I love that painting you shared! The colors are so vivid.", nothing=True),
    C("beach_kids", "We took the kids to the beach yesterday, they loved it.", nothing=True),
    C("so_glad", "I'm so glad you had fun! You deserve it.", nothing=True),
    C("same_here", "Same here, I totally get that feeling.", nothing=True),
    C("so_true", "That's so true, life is too short.", nothing=True),
    C("hang_soon", "We should hang out soon!", nothing=True),
    C("pic_kids", "Here's a pic of my kids at the park last summer.", nothing=True),
    C("sunset_beautiful", "The sunset was beautiful, I wish you could have seen it.", nothing=True),
    C("what_inspired", "What inspired you to start painting?", nothing=True),
    C("just_checking_in", "Hey, just checking in. How have you been?", nothing=True),

    # -- regressions found while fixing: lists around emoji, lived-in experiences, asides -----------------------
    C("emoji_mid_list", "I'm allergic to dogs \U0001F436 and cats \U0001F431",
      has=[("allergic", "=dogs"), ("allergic", "=cats")]),
    C("lived_countries", "I've lived in 5 different countries", lacks=[("lives in", "")]),
    C("lived_list", "I've lived in Paris, Rome and Tokyo", lacks=[("lives in", "")]),
    C("not_student_anymore", "I'm not a student anymore, I graduated in May", not_live=["student"],
      lacks=[("studies", "not")]),
    C("visited_loved_it", "I visited Japan last year and loved it", lacks=[(None, "loved")]),
    C("bike_to_commute", "I bought a bike to commute to work", has=[(("owns", "has"), "=bike")]),
    C("bigger_place", "we're moving to a bigger place next month", lacks=[("lives in", "place")]),
    C("pork_reasons", "I don't eat pork for religious reasons", has=[("not eat", "=pork")]),
    C("farm_iowa", "I grew up on a farm in Iowa", has=[(("grew up", "from"), "=iowa")]),
    C("part_time_as", "i'm a mom of three and i work part time as a dental hygienist",
      has=[("works as", "=dental hygienist")]),
    C("from_originally", "yeah i'm from texas originally \U0001F920", has=[("from", "=texas")]),
    C("start_at_time", "i start at 9am tomorrow", nothing=True),
    C("started_at_bottom", "I started at the bottom", nothing=True),
    C("working_on_painting", "I'm working on a new painting", nothing=True),
    C("roommate_google", "my roommate works at Google and she loves it", nothing=True),
    C("quoted_he_moving", 'He said "I\'m moving to Berlin" and I was shocked', nothing=True),
    C("if_job_move", "if i get the job i'll move to seattle", nothing=True),
    C("at_work_rn", "I'm at work rn so can't talk long", nothing=True),
]
# fmt: on



# -- one slot for two ways of saying the same kind of thing (so the newer supersedes) -----------------

# fmt: off
SLOT_PAIRS = [
    pytest.param("i'm 33", "just turned 34 lol", "is aged", id="age_casual"),
    pytest.param("I live in Boston.", "we just moved to Chicago!", "lives in", id="home_casual"),
    pytest.param("I work at Meta", "started a new job at OpenAI last week", "works at", id="employer_casual"),
    pytest.param("switch to dark mode pls", "can you change it back to light mode", None, id="theme_casual"),
    pytest.param("I'm vegan", "I went pescatarian last year", "follows diet", id="diet_went"),
    pytest.param("my name is Katherine", "call me Kate", "is named", id="name_nickname"),
    pytest.param("I'm a barista at a cafe", "i'm a project manager now", "works as", id="role_now"),
]
# fmt: on

