"""Small word lists the rule extractor types objects with. Data, not logic."""
from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(w.strip() for w in text.split(",") if w.strip())


FOODS = _words("""apple, apples, banana, bananas, peanut, peanuts, nuts, tree nuts, shellfish, shrimp, fish,
 meat, pork, beef, chicken, eggs, egg, milk, dairy, cheese, gluten, wheat, soy, sesame, ramen, sushi,
 tacos, taco, pizza, pasta, burgers, burger, cilantro, coriander, coffee, tea, chocolate, ice cream,
 bread, rice, noodles, curry, salad, steak, bacon, tofu, avocado, avocados, mushrooms, olives, onions,
 garlic, tomatoes, strawberries, oranges, lactose, beer, wine, sugar, spicy food, thai food,
 indian food, mexican food, italian food, japanese food, chinese food, korean food, seafood, lobster,
 crab, oysters, kimchi, pho, dumplings, falafel, hummus, oatmeal, yogurt, cereal, soda, whisky,
 whiskey, cake, cookies, donuts, fries, vegetables, fruit, berries, kale, spinach, broccoli, carrots,
 potatoes, lamb, turkey, salmon, tuna, penicillin""")
NON_FOOD_ALLERGENS = _words("penicillin, pollen, dust, cats, dogs, latex, bees, bee stings, mold")
LANGUAGES = _words("""english, spanish, portuguese, french, german, italian, dutch, japanese, chinese,
 mandarin, cantonese, korean, arabic, hindi, russian, polish, swedish, norwegian, danish, finnish,
 greek, turkish, hebrew, swahili, vietnamese, thai, indonesian, ukrainian, czech, romanian, hungarian,
 catalan, tagalog, bengali, urdu, punjabi, persian, farsi, sign language, asl, latin""")
PROGRAMMING = _words("""go, golang, python, rust, java, javascript, typescript, c, c++, c#, ruby, php,
 kotlin, swift, scala, haskell, elixir, erlang, sql, r, julia, perl, lua, dart, clojure, ocaml, zig,
 fortran, cobol, matlab, bash, objective-c, f#""")
ROLES = _words("""engineer, developer, programmer, scientist, designer, manager, teacher, nurse,
 doctor, physician, surgeon, dentist, lawyer, attorney, accountant, architect, analyst, consultant,
 researcher, professor, lecturer, student, writer, author, journalist, editor, chef, cook, baker,
 pilot, driver, mechanic, electrician, plumber, carpenter, farmer, artist, musician, photographer,
 pharmacist, therapist, psychologist, psychiatrist, paramedic, firefighter, officer, founder,
 cofounder, co-founder, ceo, cto, cfo, director, intern, technician, administrator, salesperson,
 marketer, recruiter, librarian, veterinarian, vet, tutor, coach, trainer, barista, waiter,
 waitress, cashier, clerk, receptionist, secretary, assistant, translator, interpreter, economist,
 entrepreneur, freelancer, contractor, specialist, coordinator, lead, head, owner, sre, devops,
 actor, actress, dancer, singer, producer, filmmaker, animator, illustrator, copywriter,
 scientist, biologist, chemist, physicist, mathematician, statistician, historian, sociologist,
 midwife, caregiver, soldier, sailor, policeman, police officer, judge, banker, trader, broker,
 realtor, agent, investor, programmer, tester, ux designer, data scientist""")
DIETS = _words("vegetarian, vegan, pescatarian, keto, paleo, omnivore, carnivore, flexitarian, halal, kosher")
TRAITS = _words("""vegetarian, vegan, pescatarian, diabetic, left-handed, right-handed, colorblind,
 introvert, extrovert, introverted, extroverted, retired, pregnant, unemployed, self-employed,
 lactose intolerant, gluten intolerant, celiac, deaf, blind, married, single, divorced, engaged,
 widowed, a morning person, a night owl, an early bird, a night person, transgender, trans,
 transgender woman, transgender man, trans woman, trans man, non-binary, nonbinary, gay, lesbian, bisexual,
 queer, asexual, autistic, neurodivergent, dyslexic, vegetarian""")
RELATIONSHIP_STATUS = _words("married, single, divorced, engaged, widowed, separated")
RELATIVES = {
    "wife": "wife", "husband": "husband", "partner": "partner", "girlfriend": "girlfriend",
    "boyfriend": "boyfriend", "fiance": "fiance", "fiancee": "fiancee", "son": "son",
    "daughter": "daughter", "kid": "child", "kids": "child", "child": "child", "children": "child",
    "sons": "son", "daughters": "daughter", "mom": "mother", "mum": "mother", "mother": "mother",
    "dad": "father", "father": "father", "brother": "brother", "brothers": "brother",
    "sister": "sister", "sisters": "sister", "grandmother": "grandmother", "grandma": "grandmother",
    "grandfather": "grandfather", "grandpa": "grandfather", "aunt": "aunt", "uncle": "uncle",
    "cousin": "cousin", "niece": "niece", "nephew": "nephew", "best friend": "best friend",
    "friend": "friend", "boss": "boss", "manager": "manager", "roommate": "roommate",
    "flatmate": "roommate", "coworker": "coworker", "colleague": "colleague", "twin": "twin",
    "stepson": "stepson", "stepdaughter": "stepdaughter", "baby": "baby", "toddler": "child",
}
PETS = {
    "dog": "dog", "dogs": "dog", "cat": "cat", "cats": "cat", "puppy": "dog", "kitten": "cat",
    "parrot": "parrot", "rabbit": "rabbit", "bunny": "rabbit", "hamster": "hamster", "horse": "horse",
    "fish": "fish", "turtle": "turtle", "snake": "snake", "lizard": "lizard", "bird": "bird",
    "guinea pig": "guinea pig", "ferret": "ferret", "gecko": "gecko",
}
CONDITIONS = _words("""diabetes, asthma, adhd, autism, anxiety, depression, celiac disease, arthritis,
 migraines, epilepsy, high blood pressure, hypertension, insomnia, dyslexia, eczema, ibs, crohn's,
 a bad back, a bad knee, tinnitus, long covid, covid, the flu, a cold""")
SETTING_NOUNS = _words("""mode, theme, units, unit, language, font, font size, layout, format, editor,
 keyboard layout, color scheme, colour scheme, currency, time zone, timezone, notifications,
 voice, temperature unit, date format, tone, response length, answers, replies""")
PLACE_HINTS = _words("city, town, village, country, state, province, island, neighborhood, neighbourhood")
ORG_HINTS = _words("""startup, company, corp, inc, ltd, gmbh, bank, agency, university, college,
 school, hospital, lab, labs, studio, institute, firm, group, foundation, ministry, council""")
SPORTS = _words("""football, soccer, basketball, tennis, golf, chess, volleyball, baseball, hockey,
 cricket, rugby, badminton, squash, poker, piano, guitar, violin, cello, drums, bass, flute,
 saxophone, trumpet, ukulele, harp, clarinet, video games, board games""")
# Words that make a would-be object transient chatter rather than a durable fact.
TRANSIENT = _words("""question, idea, problem, meeting, call, appointment, minute, moment, second,
 sec, headache, feeling, doubt, suggestion, thought, point, clue, time, chance, issue, bug, request,
 look, try, break, nap, shower, good day, great day, bad day, lot, lot of work""")
PRONOUNS = _words("it, that, this, them, these, those, one, ones, something, anything, everything, nothing, stuff, things, him, her, you")
DEMONYMS = _words("""american, british, english, scottish, welsh, irish, canadian, mexican, brazilian,
 argentinian, argentine, chilean, colombian, peruvian, venezuelan, cuban, french, german, italian, spanish,
 portuguese, dutch, belgian, swiss, austrian, swedish, norwegian, danish, finnish, icelandic, polish, czech,
 slovak, hungarian, romanian, bulgarian, greek, turkish, russian, ukrainian, belarusian, lithuanian, latvian,
 estonian, serbian, croatian, bosnian, slovenian, albanian, chinese, japanese, korean, vietnamese, thai,
 filipino, indonesian, malaysian, singaporean, indian, pakistani, bangladeshi, sri lankan, nepali, afghan,
 iranian, iraqi, syrian, lebanese, israeli, palestinian, jordanian, saudi, emirati, egyptian, moroccan,
 algerian, tunisian, nigerian, ghanaian, kenyan, ethiopian, somali, ugandan, tanzanian, rwandan,
 south african, zimbabwean, australian, kiwi, new zealander, jamaican, haitian, puerto rican, dominican""")
# Things one gets or buys that do not make a durable possession ("I got a parking ticket").
ACQUIRED_TRANSIENT = _words("""groceries, snacks, snack, lunch, dinner, breakfast, brunch, coffee, drinks, drink,
 takeout, takeaway, gas, petrol, fuel, ticket, tickets, fine, haircut, text, email, emails, message, messages,
 reply, cold, flu, sunburn, refund, discount, bill, receipt, notification, ride, lift, delivery, package,
 parcel, gift, gifts, present, presents, flowers, medicine, supplies, souvenirs, souvenir, covid, headache,
 stuff, things, something, food, treat, treats, sandwich, burrito, pizza, coupon, voucher, quote, invoice,
 parking ticket, speeding ticket, vaccine, shot, booster, cavity, filling, massage, manicure, tan""")
# People one visits rather than places ("I visited my parents").
PEOPLE = _words("""parents, grandparents, family, friends, folks, relatives, in-laws, doctor, dentist, vet,
 therapist, cousins, kids, grandkids, neighbors, neighbours, boyfriend, girlfriend, partner, mom, dad, mum,
 grandma, grandpa, aunt, uncle, sister, brother, son, daughter, friend, colleagues, coworkers, team""")
