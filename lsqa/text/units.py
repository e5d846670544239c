"""Words, stems, content words and sentence spans: shared by the embedded offline models and the
reference-error triage.

Everything here is linear in the text and built from compiled regular expressions, so that a
1.5 MB book splits and tokenises in a fraction of a second.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Function words that carry no content: ignored when matching answers against context.
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been before
    being below between both but by can cannot could couldn't did didn't do does doesn't doing don't
    down during each either else even ever every few for from further get gets got had hadn't has
    hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how
    how's however i i'd i'll i'm i've if in into is isn't it it's its itself just let's like made make
    many may me might more most much must mustn't my myself neither no nor not now of off often on once
    one only or other ought our ours ourselves out over own quite rather really said same say says
    shall shan't she she'd she'll she's should shouldn't since so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this those
    though through thus to too toward towards under until up upon us very was wasn't we we'd we'll
    we're we've were weren't what what's when when's where where's whether which while who who's whom
    whose why why's will with within without won't would wouldn't yes yet you you'd you'll you're
    you've your yours yourself yourselves
    book story text character characters question answer
    """.split()
)

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
# A sentence ends at . ! ? (plus closing quotes/brackets) followed by whitespace, or at a blank line.
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*\s+|\n[ \t]*\n\s*")
_ABBREVIATIONS = frozenset("mr mrs ms dr st mme mlle m messrs prof rev gen col capt lt sr jr vs etc no".split())
MAX_SENTENCE_CHARS = 1500  # longer "sentences" (tables, verse without stops) are cut at line breaks


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits, inner apostrophes kept)."""
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A crude suffix stripper: 'walked', 'walking' and 'walks' all become 'walk', "Valjean's"
    becomes 'valjean'. Only used for matching words, never shown."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """Stemmed words that are not stop words, in text order (repeats kept)."""
    return [stem(w) for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of the sentences of ``text``, whitespace trimmed.

    Splits after ., ! or ? followed by whitespace, unless a lower-case letter follows or the
    word before is a common abbreviation ("Mr.", "M."); and at blank lines. Very long pieces
    are cut at line breaks.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        if m.group(0)[0] in ".!?" and m.end() < len(text) and text[m.end()].islower():
            continue  # '"Who?" she asked.': the sentence goes on
        if m.group(0)[0] == ".":
            # "Mr. Darcy", "M. Myriel": the word before the stop is an abbreviation.
            j = m.start()
            k = j
            while k > start and text[k - 1].isalpha():
                k -= 1
            if text[k:j].lower() in _ABBREVIATIONS:
                continue
        _add_span(text, start, m.start() + len(m.group(0).rstrip()), spans)
        start = m.end()
    _add_span(text, start, len(text), spans)
    return spans


def _add_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end <= start:
        return
    if end - start <= MAX_SENTENCE_CHARS:
        spans.append((start, end))
        return
    pos = start
    for line in text[start:end].split("\n"):
        line_start, pos = pos, pos + len(line) + 1
        stripped = line.strip()
        if stripped:
            offset = line_start + (len(line) - len(line.lstrip()))
            spans.append((offset, offset + len(stripped)))


def one_line(text: str) -> str:
    """Whitespace runs (line breaks included) collapsed to single spaces."""
    return " ".join(text.split())


def approx_tokens(text: str) -> int:
    """Token count estimate used for the embedded models: about four characters per token
    (the usual rule of thumb for English BPE vocabularies)."""
    return (len(text) + 3) // 4
