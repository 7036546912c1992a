"""The rule-based memory writer: high-precision templates + canonicalization (sec. 3.2).

A template matches one first-person clause of a user's utterance and yields a candidate
``(slot_type, value, polarity)`` with the template's reliability. Slot types follow Table II
(``preference.<topic>``, ``background.<kind>``, ``constraint``, ``goal``); a preference's topic
comes from a small keyword lexicon over its value (``preference.food`` for "no peanuts").
Deletion requests ("forget my address", "please don't remember ...") are returned separately.

The templates, their reliabilities and the topic lexicon are this project's (the paper does not
print its templates); they are data here so a user can replace them (``templates`` config).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DETERMINERS = re.compile(r"^(?:a|an|the|my|some|any|very|really|so|also|just)\s+")
TRAILING = re.compile(r"\s+(?:too|as well|a lot|very much|so much|lately|now|again)$")

# (name, regex on one lower-cased clause, slot_type ('{topic}' = lexicon topic), polarity,
# reliability). Group "v" is the value.
TEMPLATES: tuple[tuple[str, str, str, str, float], ...] = (
    ("favorite", r"\bmy fav(?:o|ou)rite (?P<t>\w+) is (?P<v>.+)", "preference.{t}", "+", 0.75),
    ("allergic", r"\bi(?: am|'m) allergic to (?P<v>.+)", "constraint.health", "-", 0.8),
    (
        "prohibit",
        r"\b(?:do not|don't) (?:mention|bring up|talk about) (?P<v>.+)",
        "constraint",
        "-",
        0.8,
    ),
    (
        "dislike",
        r"\bi (?:really )?(?:hate|dislike|can't stand|cannot stand|don't like|do not like|don't eat|do not eat|never eat) (?P<v>.+)",
        "preference.{topic}",
        "-",
        0.65,
    ),
    (
        "love",
        r"\bi (?:really |absolutely )?(?:love|enjoy|adore) (?P<v>.+)",
        "preference.{topic}",
        "+",
        0.6,
    ),
    ("like", r"\bi (?:really )?like (?P<v>.+)", "preference.{topic}", "+", 0.5),
    (
        "diet",
        r"\bi(?: am|'m) (?:a |an )?(?P<v>vegan|vegetarian|pescatarian|gluten[- ]free)",
        "preference.food",
        "+",
        0.8,
    ),
    (
        "occupation",
        r"\bi (?:work as|am working as|'m working as) (?P<v>.+)",
        "background.occupation",
        "+",
        0.75,
    ),
    (
        "occupation2",
        r"\bi(?: am|'m) (?:a|an) (?P<v>(?:\w+ )?(?:teacher|nurse|doctor|engineer|student|lawyer|chef|writer|artist|programmer|developer|farmer|musician|accountant|mechanic|police officer|firefighter|pilot|scientist|designer|manager|cashier|waiter|waitress|driver|carpenter|electrician|plumber|dentist|pharmacist|veterinarian|librarian|photographer|professor))\b",
        "background.occupation",
        "+",
        0.7,
    ),
    (
        "location",
        r"\bi (?:live|am living|'m living) in (?P<v>.+)",
        "background.location",
        "+",
        0.75,
    ),
    ("moved", r"\bi (?:just )?moved to (?P<v>.+)", "background.location", "+", 0.7),
    (
        "workplace",
        r"\bi (?:work|am working|'m working|worked) (?P<v>(?:at|in|for|on) .+)",
        "background.occupation",
        "+",
        0.6,
    ),
    (
        "activity",
        r"\bi (?:play|played|go|went|have been) (?P<v>(?:\w+ing|the \w+|\w+ball|golf|tennis|chess|guitar|piano|drums|violin|video games)\b.*)",
        "preference.hobby",
        "+",
        0.55,
    ),
    (
        "own",
        r"\bi (?:have|own|got) (?P<v>(?:a|an|two|three|\d+) .+)",
        "background.possession",
        "+",
        0.55,
    ),
    ("origin", r"\bi(?: am|'m) from (?P<v>.+)", "background.origin", "+", 0.7),
    (
        "have",
        r"\bi have (?P<v>(?:a|an|two|three|four|\d+) (?:\w+ )?(?:dogs?|cats?|kids?|children|sons?|daughters?|brothers?|sisters?|husband|wife|boyfriend|girlfriend|horses?|birds?|fish))\b",
        "background.family",
        "+",
        0.65,
    ),
    (
        "goal",
        r"\bi(?: am|'m) (?:training|saving|studying|preparing) for (?P<v>.+)",
        "goal",
        "+",
        0.7,
    ),
    ("goal2", r"\bmy goal is to (?P<v>.+)", "goal", "+", 0.7),
    ("hobby", r"\bmy hobbies? (?:is|are|include) (?P<v>.+)", "preference.hobby", "+", 0.7),
)
DELETE = re.compile(
    r"\b(?:please )?(?:forget|delete|erase|don't remember|do not remember|stop remembering) "
    r"(?:about |that )?(?P<v>.+)"
)

TOPICS: dict[str, tuple[str, ...]] = {
    "food": (
        "food",
        "eat",
        "pizza",
        "pasta",
        "sushi",
        "meat",
        "fish",
        "vegetable",
        "fruit",
        "cook",
        "bake",
        "chocolate",
        "cheese",
        "peanut",
        "coffee",
        "tea",
        "wine",
        "beer",
        "burger",
        "taco",
        "steak",
        "chicken",
        "salad",
        "dessert",
        "cake",
        "ice cream",
        "spicy",
        "restaurant",
        "dinner",
        "breakfast",
        "lunch",
        "bread",
        "soup",
        "candy",
    ),
    "music": (
        "music",
        "song",
        "sing",
        "band",
        "guitar",
        "piano",
        "concert",
        "jazz",
        "rock",
        "rap",
        "pop",
        "country music",
        "violin",
        "drum",
    ),
    "sport": (
        "sport",
        "football",
        "soccer",
        "basketball",
        "baseball",
        "tennis",
        "golf",
        "swim",
        "run",
        "hike",
        "hiking",
        "yoga",
        "gym",
        "workout",
        "bike",
        "cycling",
        "ski",
        "surf",
        "hockey",
        "marathon",
        "exercise",
    ),
    "animal": ("dog", "cat", "pet", "animal", "horse", "bird", "puppy", "kitten"),
    "media": (
        "movie",
        "film",
        "book",
        "read",
        "tv",
        "show",
        "series",
        "novel",
        "game",
        "video game",
        "anime",
        "netflix",
    ),
    "travel": ("travel", "trip", "beach", "vacation", "camping", "mountain", "ocean", "visit"),
}

PRONOUNS = frozenset({"it", "them", "that", "this", "those", "these", "one", "you", "him", "her"})
CLAUSES = re.compile(r"[.!?;]+|,\s*(?:but|and|so)\s+|\s+but\s+")


@dataclass(frozen=True)
class Candidate:
    """A fact a template found in one utterance."""

    slot_type: str
    value: str
    polarity: str
    reliability: float
    template: str


def canonical(value: str) -> str:
    """Lower-case, cut at the clause end, drop leading determiners and trailing fillers."""
    value = re.split(
        r"[,.!?;]| because | since | when | but | and (?:there|it|i|we|they|that|so|you)\b",
        value.lower(),
        maxsplit=1,
    )[0]
    value = value.strip(" '\"")
    for _ in range(3):
        value = DETERMINERS.sub("", value)
    value = TRAILING.sub("", value)
    return re.sub(r"\s+", " ", value).strip()


def topic(value: str) -> str:
    """The lexicon topic of a value ("misc" when no keyword matches)."""
    words = f" {value} "
    for name, keys in TOPICS.items():
        if any(f" {k}" in words for k in keys):
            return name
    return "misc"


def candidates(text: str) -> list[Candidate]:
    """Every template match in ``text``, one per (slot, value, polarity)."""
    found: dict[tuple[str, str, str], Candidate] = {}
    for clause in CLAUSES.split(text.lower().replace("’", "'")):
        for name, pattern, slot, polarity, reliability in TEMPLATES:
            match = re.search(pattern, clause)
            if not match:
                continue
            value = canonical(match.group("v"))
            if not value or len(value.split()) > 8 or value in PRONOUNS:
                continue
            slot_type = slot.format(topic=topic(value), t=match.groupdict().get("t") or "")
            key = (slot_type, value, polarity)
            found.setdefault(key, Candidate(slot_type, value, polarity, reliability, name))
            break  # the first (most specific) template of a clause wins
    return list(found.values())


def deletion_requests(text: str) -> list[str]:
    """The canonical objects of explicit deletion requests in ``text``."""
    return [canonical(m.group("v")) for m in DELETE.finditer(text.lower())]
