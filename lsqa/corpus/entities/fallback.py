"""Built-in entity extraction when no coreference model is configured (paper §2, a heuristic stand-in).

The paper runs a neural coreference system over the book to find the most frequently mentioned
entities and every passage that refers to them, named or by pronoun. Without model weights we
approximate that with rules that need no download and read Les Misérables (570k words) in about
a second:

1. **Names.** Runs of capitalised words (``Jean Valjean``, ``Mr. Jeremy Fisher``, ``Monsieur le
   Maire``), optionally led by an honorific (``M.``, ``Mrs.``, ``Madame``, ``Mother`` ...), joined
   by single spaces or a line break (Gutenberg wraps lines inside names). All-caps words never
   match, so chapter headings drop out. Stop words (``The``, ``And``, ``He``) are cut from both
   ends. A word that starts a sentence is kept only if it looks like a name elsewhere: it is
   dropped when its lowercase form is at least as frequent as its capitalised mid-sentence form,
   or when it never appears capitalised mid-sentence (``Suddenly``, ``Poor``). A bare honorific
   (``Madame`` alone) is dropped. Entities named fewer than ``min_count`` times are dropped.
2. **Variants.** Names are grouped by their *core* (the name without honorifics). Variants of one
   core merge (``Mrs. Tittlemouse`` / ``Tittlemouse``), unless honorifics of both genders occur
   with it (``M. Thénardier`` / ``Madame Thénardier``): then each gender keeps its own entity and
   the bare core stays separate. A shorter core merges into a longer one containing it as a run
   of words (``Valjean`` → ``Jean Valjean``) when that longer core has at least two thirds of
   all occurrences of cores containing it, the genders agree, and the longer core is not a
   place (``Rue de Paris`` does not absorb ``Paris``).
3. **Gender.** From honorifics and roles when they agree (two thirds of the entity's honorific
   mentions: ``Mrs.``, ``Madame``, ``M.``, ``Bishop`` ...). Otherwise from pronoun co-occurrence:
   the first he/him/his/himself or she/her/hers/herself within ``PRONOUN_VOTE_CHARS`` characters
   after a named mention, same paragraph, is a vote; with at least ``MIN_PRONOUN_VOTES`` votes,
   the log-odds of the entity's he:she votes minus the log-odds of the whole book's he:she
   pronouns decides (``>= MALE_LIFT`` male, ``<= FEMALE_LIFT`` female, else unknown); comparing with
   the book's own ratio keeps places and objects, which collect "he" votes only because most
   pronouns in a novel are "he", from turning male. Names that look like places get no gender:
   preceded by in/at/from/into ... in at least ``PLACE_SHARE`` of their mentions, or built on a
   place word (``Rue ...``, ``... Street``), and plural family names (``Thénardiers``).
4. **Pronouns.** A third-person singular pronoun attaches to the most recent preceding named
   mention of an entity with the same gender, if that mention is in the same paragraph or the
   one just before; otherwise it stays unattached. Entities of unknown gender get no pronouns.
   First and second person (``I``, ``you`` in dialogue) are not resolved.

Entities are ranked by mention count (names + pronouns). The result is deterministic.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

from lsqa.corpus.entities.types import EntityChains, Mention, normalise_space, rank_entities

METHOD = "fallback"
DEFAULT_MIN_COUNT = 2
PRONOUN_VOTE_CHARS = 120   # how far after a name a pronoun still votes for its gender
DOMINANCE = 2 / 3          # share that settles an honorific gender or a variant merge
MIN_PRONOUN_VOTES = 3
# Log-odds lift of an entity's he:she votes over the book's he:she ratio that decides a gender.
# Measured on Les Misérables and Of Human Bondage, main characters without an honorific: 25 of 29
# men at +0.42 to +2.98 (Jondrette +0.18, Thénardier -0.20, Emil Miller -0.47, Tholomyès -0.82),
# all 7 women at -0.60 to -2.25 (men co-occur with "she" more than women with "he", hence the
# asymmetry).
MALE_LIFT = 0.3
FEMALE_LIFT = -0.5
# A name preceded by "in", "at", "from" ... this often is a place: no gender, no pronouns
# (persons stay under 0.12 on the same two books, places lie at 0.16-0.51).
PLACE_SHARE = 0.15

_UP = "A-ZÀ-ÖØ-ÞŒŠŸŽ"
_LO = "a-zß-öø-ÿœšž"
_CAPWORD = rf"[{_UP}][{_LO}]+(?:[{_UP}][{_LO}]+)*(?:['’][{_UP}][{_LO}]+)?(?:-[{_UP}{_LO}][{_LO}]+)*"
_ABBREV = r"(?:Mrs|Mr|Ms|Messrs|Dr|St|Mme|Mlle|Mmes|Mgr|Messrs)\.?|MM\.|M\."
_PARTICLE = r"(?:de|du|des|la|le|van|von|der|di|da)"
_SEP = r"(?:[ \t]+\n?[ \t]*|\n[ \t]*)"  # one white-space run holding at most one line break
_TOKEN = rf"(?:{_ABBREV}|{_CAPWORD})"
_NAME = rf"{_TOKEN}(?:{_SEP}(?:{_PARTICLE}{_SEP})?{_TOKEN})*"
_PRONOUN = r"[Hh]imself|[Hh]erself|[Hh]ers|[Hh]er|[Hh]is|[Hh]im|[Hh]e|[Ss]he"
# One pass over the book: pronouns first (so "He" is never read as a name), then names, then
# paragraph breaks (for the attachment window).
_SCAN_RE = re.compile(rf"\b(?P<pron>{_PRONOUN})\b|(?P<name>(?<![\w'’]){_NAME}(?![\w]))|(?P<para>\n[ \t]*\n)")
_NAME_TOKEN_RE = re.compile(rf"(?<![\w'’])(?:{_ABBREV}|{_CAPWORD}|{_PARTICLE})(?![\w])")
_LOWER_WORD_RE = re.compile(rf"(?<![\w'’-])[{_LO}]+(?![\w'’])")

_MALE = {"Mr", "M", "MM", "Messrs", "Monsieur", "Messieurs", "Sir", "Lord", "Master", "Father", "Brother",
         "Uncle", "Mister", "Mgr", "Monseigneur", "Don", "Signor", "Herr", "Baron", "Count", "Marquis", "Duke",
         "Prince",
         "King", "Abbé", "Bishop", "Captain", "Colonel", "General", "Sergeant", "Curé", "Emperor", "Squire"}
_FEMALE = {"Mrs", "Ms", "Mme", "Mmes", "Mlle", "Madame", "Mademoiselle", "Miss", "Lady", "Mother", "Sister",
           "Aunt", "Dame", "Queen", "Princess", "Duchess", "Baroness", "Countess", "Marquise", "Donna", "Frau",
           "Signora", "Mistress", "Madam"}
_NEUTRAL = {"Dr", "Doctor", "St", "Saint", "Professor"}
# Honorifics: stripped to find a name's core, and dropped when they stand alone ("Madame").
# Roles (Bishop, Captain, King ...) give a gender but are kept as names on their own: "the Bishop"
# is a character.
_ROLES = {"Abbé", "Bishop", "Captain", "Colonel", "General", "Sergeant", "Curé", "Emperor", "King", "Queen",
          "Prince", "Princess", "Duke", "Duchess", "Count", "Countess", "Baron", "Baroness", "Marquis",
          "Marquise", "Squire", "Professor", "Doctor"}
_HONORIFICS = (_MALE | _FEMALE | _NEUTRAL) - _ROLES
_PLACE_HEADS = {"Rue", "Boulevard", "Place", "Faubourg", "Street", "Road", "Lane", "Square", "Mount", "Lake",
                "River", "Church", "Convent", "Chapel", "Hotel", "Hôtel", "Cape", "Port", "Fort", "Bay", "Isle",
                "Island", "Gate", "Barrière", "Pont", "Quai", "Quay", "Cul-de-Sac", "Passage", "Avenue", "Park",
                "Bridge", "House", "Hall", "Abbey", "Cathedral", "Palace", "Mont", "Val"}
_PLACE_TAILS = {"Street", "Lane", "Road", "Square", "School", "College", "Hospital", "Inn", "Hotel", "Church",
                "Garden", "Gardens", "Park", "House", "Hall", "River", "Bridge", "Station", "Abbey", "Cathedral",
                "Palace", "Museum", "Avenue", "Boulevard", "Place", "Row", "Hill", "Court", "Terrace", "Club"}
# Capitalised words that are not names wherever they stand.
_STOP = set("""
A About After Again Ah Alas All Also Although Am Among An And Another Any Are As At Aye Be Because Been
Before Being Besides Both But By Can Could Did Do Does Done Down During Each Either Else Even Ever Every
Far For From Had Has Have Having Hence Here How However If In Indeed Into Is It Its Just Let Like Many May
Me Meanwhile Might Mine More Moreover Most Much Must My Myself Neither Never Nevertheless No Nobody None Nor
Not Nothing Now O Of Off Oh On Once One Only Or Other Our Ours Out Over Perhaps Please Pray Quite Rather
Really Since So Some Something Still Such Than That The Their Theirs Them Then There Therefore These They
This Those Though Thus Till To Too Under Until Up Upon Us Very Was We Well Were What Whatever When Whence
Where Whereas Whether Which While Who Whoever Whom Whose Why Will With Within Without Would Yes Yet You
Your Yours Yourself Hey Hallo Hello Good Bye Goodbye Thank Thanks Sure Alright Amen Hurrah Hush Come Go
Look See Say Said Tell Listen Chapter Book Volume Part Illustration Illustrations Contents Preface Note
Notes Footnote Footnotes Appendix Index Epilogue Prologue Introduction Finis End Monday Tuesday Wednesday
Thursday Friday Saturday Sunday January February March April June July August September October November
December English French Project Gutenberg Gutenberg-tm Ebook Ebooks Copyright Produced Title Author
Release Date Language Character
""".split())
_HE = {"he", "him", "his", "himself"}
_PLACE_PREPOSITIONS = {"in", "at", "from", "near", "into", "towards", "toward", "through", "across", "reached",
                       "left", "leaving", "quitting", "round", "about"}
_PREV_WORD_RE = re.compile(r"(\w+)\W*$")


def _is_sentence_initial(text: str, pos: int, lo: int) -> bool:
    """True when only white space and opening punctuation separate ``pos`` from a sentence end or
    a paragraph start (a single line break is just Gutenberg's line wrapping)."""
    i, newlines = pos - 1, 0
    while i >= lo:
        c = text[i]
        if c == "\n":
            newlines += 1
            if newlines >= 2:
                return True
        elif c in " \t\"“‘'(_[*—–-":
            pass
        else:
            return c in ".!?:;…"
        i -= 1
    return True


def _plain(token: str) -> str:
    return token.rstrip(".")


def _gender_of_token(token: str) -> str:
    t = _plain(token)
    return "m" if t in _MALE else "f" if t in _FEMALE else ""


def _split_key(key: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(honorifics, core) of a normalised name key."""
    words = key.split(" ")
    i = 0
    while i < len(words) - 1 and (words[i] in _HONORIFICS or words[i] in {"le", "la"}):
        i += 1
    return tuple(words[:i]), tuple(words[i:])


def _contains(longer: tuple[str, ...], shorter: tuple[str, ...]) -> bool:
    n = len(shorter)
    return any(longer[i:i + n] == shorter for i in range(len(longer) - n + 1))


class _UnionFind:
    def __init__(self):
        self.parent: dict = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # Deterministic root: the lexicographically smaller key.
            if rb < ra:
                ra, rb = rb, ra
            self.parent[rb] = ra


def _scan(text: str, start: int, end: int):
    """One regex pass: raw name candidates, pronouns and paragraph numbers, in book order."""
    lower_counts = Counter(_LOWER_WORD_RE.findall(text, start, end))
    midcap = Counter()       # capitalised occurrences not at a sentence start
    raw = []                 # (kind, para, payload)
    para = 0
    for m in _SCAN_RE.finditer(text, start, end):
        kind = m.lastgroup
        if kind == "para":
            para += 1
        elif kind == "pron":
            word = m.group().lower()
            raw.append(("pron", para, (m.start(), m.end(), "m" if word in _HE else "f")))
        else:
            s = m.start()
            tokens = [(t.start(), t.end(), t.group()) for t in _NAME_TOKEN_RE.finditer(text, s, m.end())]
            initial = _is_sentence_initial(text, s, start)
            for j, tok in enumerate(tokens):
                if j or not initial:
                    midcap[tok[2]] += 1
            raw.append(("name", para, (tokens, initial)))
    return raw, lower_counts, midcap


def _clean_name(tokens, initial, lower_counts, midcap):
    """Strip stop words and sentence-initial common words; None when nothing name-like is left."""
    tokens = list(tokens)
    while tokens:
        word = tokens[0][2]
        if word in _STOP or word in {"le", "la"}:
            tokens.pop(0)
            initial = False  # what follows a dropped word is mid-sentence
            continue
        if initial and _plain(word) not in _HONORIFICS:
            lower = lower_counts.get(word.lower(), 0)
            if midcap[word] == 0 or lower >= midcap[word]:
                tokens.pop(0)
                initial = False
                continue
        break
    while tokens and (tokens[-1][2] in _STOP or re.fullmatch(_PARTICLE, tokens[-1][2])
                      or _plain(tokens[-1][2]) in _HONORIFICS):
        tokens.pop()
    if not tokens:
        return None
    if all(_plain(t[2]) in _HONORIFICS for t in tokens):
        return None
    return tokens


def extract(text: str, start: int = 0, end: int | None = None, *, min_count: int = DEFAULT_MIN_COUNT,
            top_k: int | None = None) -> EntityChains:
    """Entities with their mention chains in ``text[start:end]`` by the rules in the module docstring."""
    end = len(text) if end is None else end
    raw, lower_counts, midcap = _scan(text, start, end)
    # 1. Names: clean every candidate, count keys.
    events, key_counts, surfaces = _name_events(text, raw, lower_counts, midcap)
    keys = sorted(key_counts)
    # 2. Variants: same core, then shorter core inside a dominant longer one.
    uf = _merge_variants(keys, key_counts, min_count)
    groups: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        groups[uf.find(key)].append(key)
    groups = {root: ks for root, ks in groups.items() if sum(key_counts[k] for k in ks) >= min_count}
    kept = {k for ks in groups.values() for k in ks}
    # 3. Gender per entity: honorifics, else (unless it looks like a place) pronoun votes.
    gender = _entity_genders(text, start, events, groups, kept, uf, key_counts)
    # 4. Mentions: names, then pronouns attached to the latest compatible named mention.
    mentions, n_pronouns = _attach_mentions(text, events, kept, uf, gender)

    named = [(_display_name(groups[root], key_counts, surfaces), mentions[root]) for root in groups]
    entities = rank_entities(named, top_k=top_k)
    params = {"min_count": min_count, "pronoun_vote_chars": PRONOUN_VOTE_CHARS, "dominance": round(DOMINANCE, 3),
              "male_lift": MALE_LIFT, "female_lift": FEMALE_LIFT, "place_share": PLACE_SHARE,
              "n_candidates": len(key_counts), "n_entities_total": len(groups), "n_pronouns_attached": n_pronouns}
    return EntityChains(method=METHOD, entities=entities, span_start=start, span_end=end, params=params)


def _name_events(text, raw, lower_counts, midcap):
    """Cleaned name and pronoun events in book order, with each name key's count and surface forms (rule 1)."""
    events = []  # ("name", para, start, end, key) | ("pron", para, start, end, gender)
    key_counts: Counter = Counter()
    surfaces: dict[str, Counter] = defaultdict(Counter)
    for kind, para, payload in raw:
        if kind == "pron":
            events.append(("pron", para, *payload))
            continue
        tokens, initial = payload
        tokens = _clean_name(tokens, initial, lower_counts, midcap)
        if tokens is None:
            continue
        s, e = tokens[0][0], tokens[-1][1]
        key = " ".join(_plain(t[2]) if _plain(t[2]) in _HONORIFICS else t[2] for t in tokens)
        key_counts[key] += 1
        surfaces[key][normalise_space(text[s:e])] += 1
        events.append(("name", para, s, e, key))
    return events, key_counts, surfaces


def _merge_variants(keys: list[str], key_counts: Counter, min_count: int) -> _UnionFind:
    """Union of name keys into entities: variants of one core, then short cores into dominant longer ones (rule 2)."""
    uf = _UnionFind()
    by_core: dict[tuple, list[str]] = defaultdict(list)
    for key in keys:
        uf.find(key)
        by_core[_split_key(key)[1]].append(key)
    unit_gender, unit_of_core = _merge_same_core(uf, by_core)
    core_total = {core: sum(key_counts[k] for k in ks) for core, ks in by_core.items()}
    # Only frequent cores absorb shorter ones: a one-off run like "Valjean Cosette" must not.
    frequent_cores = sorted((c for c in by_core if core_total[c] >= min_count and c[0] not in _PLACE_HEADS),
                            key=lambda c: (len(c), c))
    by_word: dict[str, list[tuple]] = defaultdict(list)
    for c in frequent_cores:
        for w in set(c):
            by_word[w].append(c)
    for short in sorted(by_core, key=lambda c: (len(c), c)):
        containers = [c for c in by_word.get(short[0], ()) if len(c) > len(short) and _contains(c, short)]
        if not containers:
            continue
        total = sum(core_total[c] for c in containers)
        best = max(containers, key=lambda c: (core_total[c], c))
        if core_total[best] < DOMINANCE * total:
            continue
        for s_rep in unit_of_core[short]:
            s_gender = unit_gender[s_rep]
            targets = [r for r in unit_of_core[best]
                       if not s_gender or not unit_gender[r] or unit_gender[r] == s_gender]
            if len(targets) == 1:
                uf.union(s_rep, targets[0])
    return uf


def _merge_same_core(uf: _UnionFind, by_core: dict[tuple, list[str]]):
    """Merge the variants of each core, one unit per honorific gender when both occur; (unit gender, units per core)."""
    unit_gender: dict[str, str] = {}  # representative key of a (core, gender) unit -> gender
    unit_of_core: dict[tuple, list[str]] = {}
    for core, variants in sorted(by_core.items()):
        buckets: dict[str, list[str]] = defaultdict(list)
        for key in variants:
            genders = {_gender_of_token(h) for h in _split_key(key)[0]} - {""}
            buckets[genders.pop() if len(genders) == 1 else ""].append(key)
        if "m" in buckets and "f" in buckets:
            groups = list(buckets.items())
        else:
            gender = "m" if "m" in buckets else "f" if "f" in buckets else ""
            groups = [(gender, [k for ks in buckets.values() for k in ks])]
        reps = []
        for gender, ks in sorted(groups):
            ks.sort()
            for k in ks[1:]:
                uf.union(ks[0], k)
            unit_gender[ks[0]] = gender
            reps.append(ks[0])
        unit_of_core[core] = reps
    return unit_gender, unit_of_core


def _entity_genders(text, start, events, groups, kept, uf, key_counts) -> dict[str, str]:
    """Gender per entity root: agreeing honorifics, else pronoun votes against the book's he:she ratio (rule 3)."""
    honorific_votes: dict[str, Counter] = defaultdict(Counter)
    for key in kept:
        for h in _split_key(key)[0] + _split_key(key)[1][:1]:
            g = _gender_of_token(h)
            if g:
                honorific_votes[uf.find(key)][g] += key_counts[key]
    pronoun_votes, place_hits, named_count, pronoun_totals = _pronoun_evidence(text, start, events, kept, uf)
    # The book's own he:she ratio is the baseline: a place or a book's hero collects many "he"
    # votes just because most pronouns in the book are "he".
    base = math.log((pronoun_totals["m"] + 1) / (pronoun_totals["f"] + 1))
    gender: dict[str, str] = {}
    for root in groups:
        g = _decide(honorific_votes[root])
        if not g and place_hits[root] < PLACE_SHARE * named_count[root] and not any(
                _is_place_or_group(k, key_counts) for k in groups[root]):
            votes = pronoun_votes[root]
            if votes["m"] + votes["f"] >= MIN_PRONOUN_VOTES:
                lift = math.log((votes["m"] + 1) / (votes["f"] + 1)) - base
                g = "m" if lift >= MALE_LIFT else "f" if lift <= FEMALE_LIFT else ""
        gender[root] = g
    return gender


def _pronoun_evidence(text, start, events, kept, uf):
    """Per entity root: pronoun gender votes, place-preposition hits, named mentions; the book's pronoun totals."""
    pronoun_votes: dict[str, Counter] = defaultdict(Counter)
    place_hits: Counter = Counter()
    named_count: Counter = Counter()
    pronoun_totals: Counter = Counter()
    for i, ev in enumerate(events):
        if ev[0] == "pron":
            pronoun_totals[ev[4]] += 1
            continue
        if ev[4] not in kept:
            continue
        root = uf.find(ev[4])
        named_count[root] += 1
        before = _PREV_WORD_RE.search(text, max(start, ev[2] - 16), ev[2])
        if before and before.group(1).lower() in _PLACE_PREPOSITIONS:
            place_hits[root] += 1
        for nxt in events[i + 1:i + 4]:
            if nxt[1] != ev[1] or nxt[2] - ev[3] > PRONOUN_VOTE_CHARS:
                break
            if nxt[0] == "pron":
                pronoun_votes[root][nxt[4]] += 1
                break
    return pronoun_votes, place_hits, named_count, pronoun_totals


def _attach_mentions(text, events, kept, uf, gender):
    """Named mentions per entity root, plus pronouns attached to the latest same-gender mention (rule 4)."""
    mentions: dict[str, list[Mention]] = defaultdict(list)
    last: dict[str, tuple[str, int]] = {}  # gender -> (entity root, paragraph)
    n_pronouns = 0
    for ev in events:
        kind, para, s, e, val = ev
        if kind == "name":
            if val not in kept:
                continue
            root = uf.find(val)
            mentions[root].append(Mention(s, e, text[s:e]))
            if gender[root]:
                last[gender[root]] = (root, para)
        else:
            hit = last.get(val)
            if hit is not None and para - hit[1] <= 1:
                mentions[hit[0]].append(Mention(s, e, text[s:e]))
                n_pronouns += 1
    return mentions, n_pronouns


def _is_place_or_group(key: str, key_counts: Counter) -> bool:
    """A street, school, inn ... by its words, or a plural family name ("the Thénardiers")."""
    core = _split_key(key)[1]
    return (core[0] in _PLACE_HEADS or core[-1] in _PLACE_TAILS
            or (key.endswith("s") and key[:-1] in key_counts and len(core) == 1))


def _decide(votes: Counter) -> str:
    total = votes["m"] + votes["f"]
    if not total:
        return ""
    for g in ("m", "f"):
        if votes[g] >= DOMINANCE * total:
            return g
    return ""


def _display_name(keys: list[str], key_counts: Counter, surfaces: dict[str, Counter]) -> str:
    """The most informative frequent variant: among variants with at least a fifth of the top
    count, the one with most words (then the most frequent), shown in its commonest spelling."""
    top = max(key_counts[k] for k in keys)
    frequent = [k for k in keys if key_counts[k] >= 0.2 * top]
    key = min(frequent, key=lambda k: (-len(k.split(" ")), -key_counts[k], k))
    return min(surfaces[key].items(), key=lambda kv: (-kv[1], kv[0]))[0]
