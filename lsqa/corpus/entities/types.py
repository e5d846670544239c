"""The common output of entity extraction (paper §2): entities ranked by how often they are mentioned.

Both back ends (fastcoref and the built-in fallback) produce exactly these types, so callers never
care which one ran. Every mention is an offset pair into the *full* stored text of the book, so
``text[m.char_start:m.char_end] == m.text`` always holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Mention:
    char_start: int
    char_end: int
    text: str


@dataclass(frozen=True)
class Entity:
    rank: int                    # 1 = most mentioned
    name: str                    # a readable name (the most name-like mention, white space collapsed)
    n_mentions: int
    mentions: tuple[Mention, ...]  # book order, no duplicates


@dataclass(frozen=True)
class EntityChains:
    method: str                  # 'fastcoref' | 'fallback'
    entities: tuple[Entity, ...]  # rank order
    span_start: int = 0          # the part of the text that was read
    span_end: int = 0
    params: dict = field(default_factory=dict)  # what decided the result (model path, chunk size, thresholds)

    def __len__(self) -> int:
        return len(self.entities)

    def __iter__(self):
        return iter(self.entities)

    def top(self, k: int) -> tuple[Entity, ...]:
        return self.entities[:k]

    def mention_ranks(self, lo: int = 0, hi: int | None = None) -> list[tuple[int, int, int]]:
        """(char_start, char_end, entity rank) of the mentions inside ``[lo, hi)``, in book order,
        with offsets relative to ``lo``.

        The input of ``lsqa.corpus.questions.annotated_rendering(text[lo:hi], ...)`` for the paper's §2
        format ``[15 Sire], said [6 M. Myriel], ...``.
        """
        rows = [(m.char_start - lo, m.char_end - lo, e.rank) for e in self.entities for m in e.mentions
                if m.char_start >= lo and (hi is None or m.char_end <= hi)]
        rows.sort()
        return rows


def normalise_space(s: str) -> str:
    return " ".join(s.split())


def rank_entities(groups: list[tuple[str, list[Mention]]], top_k: int | None = None) -> tuple[Entity, ...]:
    """Turn (name, mentions) groups into ranked entities.

    Mentions are de-duplicated by span and put in book order. Ranking: most mentions first; ties
    go to the entity mentioned first in the book, then to the name, so the order is deterministic.
    """
    cleaned = []
    for name, mentions in groups:
        unique = sorted({(m.char_start, m.char_end): m for m in mentions}.values())
        if unique:
            cleaned.append((name, unique))
    cleaned.sort(key=lambda g: (-len(g[1]), g[1][0].char_start, g[0]))
    if top_k is not None:
        cleaned = cleaned[:top_k]
    return tuple(Entity(rank=i + 1, name=name, n_mentions=len(ms), mentions=tuple(ms))
                 for i, (name, ms) in enumerate(cleaned))
