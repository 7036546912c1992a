"""CAIM's tag ontology (Westhäußer et al., CAIM sec. 3.2): categories -> subcategories -> tags.

The ontology is a JSON object of three levels whose every term is a single word (Figure 1):
``{"personal": {"identity": ["name", "age", "location"], ...}, ...}``. Every term of every level
is a selectable tag (Table 1 tags mix levels: "personal, identity, name"). The initial ontology
ships in ``recallbench/resources/caim_ontology.json`` (ours: the paper's LLM-generated one is not
published); the Ontology Expansion prompt may extend it during a run.

Offline (no LLM) tag selection is lexical: a term is selected when its stem occurs among the
stems of the text's content words (``judges.lexical.stem``: "hiking" and "hike" meet).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.text import DIALOGUE_STOPWORDS as STOPWORDS
from recallbench.text import light_stem as stem
from recallbench.text import words

DEFAULT_ONTOLOGY = Path(__file__).resolve().parents[2] / "resources" / "caim_ontology.json"
_SINGLE_WORD = re.compile(r"^[^\W\d_]+$")
LEVEL_NAMES = ("category", "subcategory", "tag")
# Offline expansion files unknown topic words here (the paper lets the LLM choose the place).
EXPANSION_CATEGORY, EXPANSION_SUBCATEGORY = "misc", "mentioned"

# Words that never name a topic: time words and common verbs (offline expansion only).
NOT_TOPICS = frozenset(
    """today tomorrow yesterday tonight morning afternoon evening night week weekend month year
    time times start starts starting make makes making take takes taking think thinks thinking
    want wants wanting feel feels feeling know knows going come comes coming give gives giving
    find finds look looks looking thing things something anything everything sure maybe still
    always never often sometimes lately soon later early every""".split()
)

OntologyDict = dict[str, dict[str, list[str]]]


class OntologyError(ValueError):
    """An ontology does not have the three-level single-word shape CAIM requires."""


def validate(raw: object, where: str) -> OntologyDict:
    """Return ``raw`` as a clean 3-level ontology (lowercased terms) or raise OntologyError.

    Checks: an object of categories, each an object of subcategories, each a list of tags;
    every term one word of letters; no term twice anywhere (the expansion prompt's rule).
    """
    if not isinstance(raw, dict) or not raw:
        raise OntologyError(f"{where}: expected a non-empty JSON object of categories")
    out: OntologyDict = {}
    seen: dict[str, str] = {}

    def term(value: Any, path: str) -> str:
        if not isinstance(value, str) or not _SINGLE_WORD.match(value.strip()):
            raise OntologyError(f"{where}: {path}: {value!r} is not a single word")
        word = value.strip().lower()
        if word in seen and seen[word] != path:
            raise OntologyError(f"{where}: {path}: {word!r} already listed at {seen[word]}")
        seen[word] = path
        return word

    for cat, subs in raw.items():
        c = term(cat, cat)
        if not isinstance(subs, dict):
            raise OntologyError(f"{where}: category {cat!r}: expected an object of subcategories")
        out[c] = {}
        for sub, tags in subs.items():
            s = term(sub, f"{cat}/{sub}")
            if not isinstance(tags, list):
                raise OntologyError(f"{where}: {cat}/{sub}: expected a list of tags (3 levels)")
            out[c][s] = list(dict.fromkeys(term(t, f"{cat}/{sub}/{t}") for t in tags))
    return out


def first_terms(raw: object) -> object:
    """``raw`` with every term kept at its first place only: a later category, subcategory or
    tag whose name came before is dropped, with what is under it (non-strings are left for
    :func:`validate` to reject)."""
    if not isinstance(raw, dict):
        return raw
    seen: set[str] = set()

    def new(term: object) -> bool:
        if not isinstance(term, str):
            return True
        if (word := term.strip().lower()) in seen:
            return False
        seen.add(word)
        return True

    out: dict[object, object] = {}
    for cat, subs in raw.items():
        if not new(cat):
            continue
        if isinstance(subs, dict):
            subs = {s: tags for s, tags in subs.items() if new(s)}
            for s, tags in subs.items():
                subs[s] = [t for t in tags if new(t)] if isinstance(tags, list) else tags
        out[cat] = subs
    return out


class Ontology:
    """A mutable 3-level tag ontology with lexical tag selection and union-merge expansion."""

    def __init__(self, data: OntologyDict) -> None:
        self.data = validate(data, "ontology")
        self._index()

    @classmethod
    def load(cls, path: str | Path | None = None) -> Ontology:
        """Load an ontology JSON file (None: the shipped initial ontology)."""
        path = Path(path) if path else DEFAULT_ONTOLOGY
        if not path.is_file():
            raise ConfigError(f"CAIM ontology file {path} not found")
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(validate(raw, str(path)))
        except (json.JSONDecodeError, OntologyError) as exc:
            raise DatasetFormatError(f"{path}: {exc}") from None

    def copy(self) -> Ontology:
        """Return an independent copy (each episode starts from the initial ontology)."""
        return Ontology(copy.deepcopy(self.data))

    def to_json(self) -> str:
        """Render as compact JSON (what the prompts receive)."""
        return json.dumps(self.data, ensure_ascii=False, separators=(",", ":"))

    def terms(self) -> list[str]:
        """Return every term (categories, subcategories, tags) in document order."""
        return list(self._path)

    def path(self, term: str) -> tuple[str, ...]:
        """Return the path of ``term`` from its category, e.g. ("hobbies", "music", "piano")."""
        return self._path[term]

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and term.lower() in self._path

    def __len__(self) -> int:
        return len(self._path)

    def merge(self, other: OntologyDict) -> list[str]:
        """Add the terms of ``other`` that are new (union; nothing is ever removed).

        Returns the added terms. A term already present elsewhere is not moved.
        """
        added: list[str] = []
        for cat, subs in validate(other, "expansion").items():
            if self._path.get(cat, (cat,)) != (cat,):
                continue  # already a subcategory or tag: a term is never moved
            target = self.data.setdefault(cat, {})
            added += [cat] if cat not in self._path else []
            for sub, tags in subs.items():
                if self._path.get(sub, (cat, sub)) != (cat, sub):
                    continue
                added += [sub] if sub not in self._path else []
                bucket = target.setdefault(sub, [])
                fresh = [t for t in tags if t not in self._path and t not in bucket]
                bucket.extend(fresh)
                added += fresh
            self._index()
        return list(dict.fromkeys(added))

    def matches(self, text: str, skip: frozenset[str] = frozenset()) -> list[str]:
        """Return the terms whose stem occurs in ``text``, most specific first, then by position.

        ``skip`` holds lowercased words that never match (e.g. the speakers' names).
        """
        stems: dict[str, int] = {}
        for i, w in enumerate(words(text)):
            if w in STOPWORDS or w in skip or len(w) < 2:
                continue
            stems.setdefault(stem(w), i)
        found = [t for t in self._path if self._stems[t] in stems]
        return sorted(found, key=lambda t: (-len(self._path[t]), stems[self._stems[t]]))

    def select(
        self, text: str, k_min: int = 2, k_max: int = 3, skip: frozenset[str] = frozenset()
    ) -> list[str]:
        """Offline Select Tags: up to ``k_max`` matched terms, then the best match's parents
        (subcategory, category) while fewer than ``k_max`` (as Table 1's "hobbies, piano").

        ``k_min`` is the floor the prompt asks for; nothing matched -> [] (no lexical hold).
        """
        found = self.matches(text, skip)[:k_max]
        for parent in (p for t in found[:1] for p in reversed(self._path[t][:-1])):
            if len(found) >= max(k_min, k_max):
                break
            if parent not in found:
                found.append(parent)
        return found

    def _index(self) -> None:
        self._path: dict[str, tuple[str, ...]] = {}
        for cat, subs in self.data.items():
            self._path.setdefault(cat, (cat,))
            for sub, tags in subs.items():
                self._path.setdefault(sub, (cat, sub))
                for tag in tags:
                    self._path.setdefault(tag, (cat, sub, tag))
        self._stems = {t: stem(t) for t in self._path}


def unknown_topic_words(
    ontology: Ontology, text: str, skip: frozenset[str] = frozenset(), limit: int = 2
) -> list[str]:
    """Return up to ``limit`` salient words of ``text`` that no ontology term covers.

    Salient: a content word of 4+ letters, not a stopword, name, known stem, -ly/-ed word or
    time word/common verb (``NOT_TOPICS``); longest first,
    ties by position. The offline Ontology Expansion files them under misc/mentioned.
    """
    known = {stem(t) for t in ontology.terms()}
    seen: list[str] = []
    for w in words(text):
        if len(w) < 4 or "'" in w or w in STOPWORDS or w in skip or stem(w) in known:
            continue
        if w.endswith(("ly", "ed")) or w in NOT_TOPICS:
            continue
        if w not in seen and w not in ontology:
            seen.append(w)
    return sorted(seen, key=lambda w: (-len(w), seen.index(w)))[:limit]
