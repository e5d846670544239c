"""Neural coreference with fastcoref over a whole book, in chunks (paper §2).

The paper runs a coreference system over each book and ranks entities by the size of their
chains. We use fastcoref's ``FCoref`` (or ``LingMessCoref``) with weights from a local folder
(``Settings.coref_model_path``; nothing is downloaded: the spaCy tokenizer handed to fastcoref is
``spacy.blank("en")``, so its ``en_core_web_sm`` download never runs). The model is loaded on first
use and cached per (path, kind) for the life of the process.

**Chunks.** f-coref's memory grows quadratically with document length (16k words took 14.6 GB on
this machine), so a book is read in chunks of about ``CHUNK_WORDS`` = 2,500 words (≈ 0.4 GB by
that curve) made of whole paragraphs (a paragraph longer than a chunk is cut at sentence ends,
a sentence longer than a chunk at white space). Consecutive chunks overlap by the last
paragraphs of the previous chunk, at least ``OVERLAP_WORDS`` = 250 words, so a pronoun near a
chunk start can still find its antecedent. FCoref cuts each chunk into 512-token segments itself;
LingMess reads a chunk whole, so a chunk must fit its Longformer (4,096 tokens): 2,500 words are
about 3,300 sub-word tokens. A chunk fastcoref skips as too long is counted in
``params['n_chunks_skipped']`` and logged.

**Merging chains across chunks.** Every chunk's clusters get global offsets (chunk start + the
chunk-relative character offsets fastcoref returns), then clusters are joined (union-find) when
(1) they share a mention span: the same words seen in the overlap of two chunks; or (2) their
*names* agree: a cluster's name is its most proper-noun-like mention (most capitalised words,
then longest, then most frequent), normalised (white space collapsed, lowercase, leading
"the/a/an" and a possessive "'s" removed); clusters whose mentions hold no capitalised word other
than a pronoun are never merged by name ("the man" in chapter 1 and in chapter 40 stay apart).
A mention span belongs to exactly one entity.
"""

from __future__ import annotations

import functools
import logging
import re
import warnings
from collections import Counter
from pathlib import Path

from lsqa.corpus.entities.types import EntityChains, Mention, normalise_space, rank_entities
from lsqa.errors import InputError

METHOD = "fastcoref"
CHUNK_WORDS = 2500
OVERLAP_WORDS = 250
CHUNKS_PER_CALL = 4          # chunks handed to one predict() call; results are dropped after each call
MAX_TOKENS_IN_BATCH = 10000  # fastcoref's own batching limit (sub-word tokens)
KINDS = ("fcoref", "lingmess")

logger = logging.getLogger(__name__)

# A paragraph: text up to a blank line or the end (trailing white space allowed before either).
_PARA_RE = re.compile(r"\S(?:.*?\S)??(?=[ \t]*\n[ \t]*\n|\s*\Z)", re.DOTALL)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+")
_WORD_RE = re.compile(r"\S+")
_PRONOUNS = {"i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "yourselves", "he", "him",
             "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "we", "us", "our", "ours",
             "ourselves", "they", "them", "their", "theirs", "themselves", "this", "that", "these", "those",
             "who", "whom", "whose", "which", "one"}
_LEADING_DETERMINERS = ("the ", "a ", "an ")
# Capitalised at a sentence start without being names.
_FUNCTION_WORDS = {"the", "a", "an", "and", "but", "or", "so", "then", "there", "here", "what", "when", "where",
                   "why", "how", "all", "some", "no", "not", "one", "another", "each", "every", "poor", "old",
                   "little", "my", "our", "your", "his", "her", "their"}
_NOT_NAMES = _PRONOUNS | _FUNCTION_WORDS


# ---------------------------------------------------------------- chunking

def _units(text: str, start: int, end: int, max_words: int):
    """(start, end, n_words) of paragraphs, cut further when one exceeds ``max_words``."""
    for p in _PARA_RE.finditer(text, start, end):
        n = len(p.group().split())
        if n <= max_words:
            yield p.start(), p.end(), n
            continue
        pieces, pos = [], p.start()
        for m in _SENTENCE_END_RE.finditer(text, p.start(), p.end()):
            pieces.append((pos, m.start()))
            pos = m.end()
        pieces.append((pos, p.end()))
        for s, e in pieces:
            words = [w.span() for w in _WORD_RE.finditer(text, s, e)]
            for i in range(0, len(words), max_words):  # a monster "sentence": cut at white space
                group = words[i:i + max_words]
                if group:
                    yield group[0][0], group[-1][1], len(group)


def chunk_spans(text: str, start: int = 0, end: int | None = None, *, chunk_words: int = CHUNK_WORDS,
                overlap_words: int = OVERLAP_WORDS) -> list[tuple[int, int]]:
    """Overlapping chunks of whole paragraphs covering ``text[start:end]``; offsets index ``text``."""
    end = len(text) if end is None else end
    if chunk_words < 1 or not 0 <= overlap_words < chunk_words:
        raise ValueError("need chunk_words >= 1 and 0 <= overlap_words < chunk_words")
    units = list(_units(text, start, end, chunk_words))
    chunks: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        j, words = i, 0
        while j < len(units) and (j == i or words + units[j][2] <= chunk_words):
            words += units[j][2]
            j += 1
        chunks.append((units[i][0], units[j - 1][1]))
        if j >= len(units):
            break
        # Next chunk starts at the trailing paragraphs holding >= overlap_words, but always moves on.
        k, back = j, 0
        while k - 1 > i and back < overlap_words:
            k -= 1
            back += units[k][2]
        i = k if overlap_words and k > i else j
    return chunks


# ---------------------------------------------------------------- model

def _quiet_import():
    """Import fastcoref without letting its ``logging.basicConfig(INFO)`` take over the root logger."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    import fastcoref  # noqa: F401  (heavy: torch, transformers, datasets)

    root.handlers[:] = handlers
    root.setLevel(level)
    logging.getLogger("fastcoref").setLevel(logging.WARNING)
    try:
        from datasets.utils.logging import disable_progress_bar

        disable_progress_bar()  # fastcoref tokenises through datasets.map, which draws a bar per call
    except ImportError:  # pragma: no cover - datasets is a fastcoref dependency
        pass
    return fastcoref


@functools.lru_cache(maxsize=1)
def _spacy_tokenizer():
    import spacy

    return spacy.blank("en")  # fastcoref only needs tokens; a blank pipeline needs no download


@functools.lru_cache(maxsize=2)
def load_model(model_path: str, kind: str = "fcoref"):
    """The fastcoref model in ``model_path`` (a local folder: config.json with ``coref_head``,
    weights, tokenizer files), on CPU. Cached per process."""
    if kind not in KINDS:
        raise ValueError(f"coref_model_kind must be one of {KINDS}, not {kind!r}")
    path = Path(model_path)
    if not (path / "config.json").is_file():
        raise InputError(path, "no coreference model here (config.json missing)",
                         hint="set coref_model_path to a local FCoref/LingMessCoref folder, "
                              "or '' for the built-in fallback")
    fastcoref = _quiet_import()
    cls = fastcoref.FCoref if kind == "fcoref" else fastcoref.LingMessCoref
    try:
        return cls(model_name_or_path=str(path), device="cpu", nlp=_spacy_tokenizer(), enable_progress_bar=False)
    except (KeyError, AttributeError, OSError) as exc:  # e.g. a plain transformer folder without coref_head
        raise InputError(path, f"not a fastcoref {kind} model folder ({type(exc).__name__}: {exc})",
                         hint="it needs config.json with a coref_head section, weights and tokenizer files") from exc


def _chunk_clusters(model, texts: list[str]) -> list[list[list[tuple[int, int]]] | None]:
    """Per text: clusters of chunk-relative (start, end) character spans; None for a text fastcoref
    skipped (its sampler drops documents longer than the model's ``coref_head.max_doc_len``)."""
    with warnings.catch_warnings():
        # pyarrow deprecation noise from datasets' sort inside fastcoref; nothing we can act on.
        warnings.simplefilter("ignore", FutureWarning)
        preds = model.predict(texts=texts, max_tokens_in_batch=MAX_TOKENS_IN_BATCH)
    by_index = {pred.text_idx: pred for pred in preds}
    out: list[list[list[tuple[int, int]]] | None] = []
    for i in range(len(texts)):
        pred = by_index.get(i)
        if pred is None:
            out.append(None)
            continue
        clusters = []
        for cluster in pred.get_clusters(as_strings=False):
            spans = [tuple(span) for span in cluster if span is not None and None not in span]
            if spans:
                clusters.append(spans)
        out.append(clusters)
    return out


# ---------------------------------------------------------------- merging

def _name_score(mention: str) -> tuple[int, int]:
    words = mention.split()
    caps = sum(1 for w in words if w[:1].isupper() and w.lower().strip(".,;:!?'’\"") not in _NOT_NAMES)
    return caps, len(mention)


def _name_key(mention: str) -> str:
    key = normalise_space(mention).lower()
    for det in _LEADING_DETERMINERS:
        if key.startswith(det):
            key = key[len(det):]
    return re.sub(r"['’]s$", "", key)


def cluster_name(mentions: list[str]) -> tuple[str, bool]:
    """(display name, is proper): the most proper-noun-like mention of a cluster."""
    counts = Counter(normalise_space(m) for m in mentions)
    best = max(counts, key=lambda m: (_name_score(m), counts[m], m))
    if _name_score(best)[0] > 0:
        return best, True
    # No name: the commonest non-pronoun mention, else the commonest mention.
    nominal = [m for m in counts if m.lower() not in _PRONOUNS]
    pool = nominal or list(counts)
    return min(pool, key=lambda m: (-counts[m], m)), False


def merge_chunks(text: str, chunks: list[tuple[int, int]],
                 clusters_per_chunk: list[list[list[tuple[int, int]]]]):
    """Join per-chunk clusters into book-wide (name, mentions) groups (see the module docstring)."""
    parent: dict[tuple[int, int], tuple[int, int]] = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    spans_of: dict[tuple[int, int], list[tuple[int, int]]] = {}
    owner: dict[tuple[int, int], tuple[int, int]] = {}  # global span -> first cluster seen with it
    for ci, ((c_start, _), clusters) in enumerate(zip(chunks, clusters_per_chunk, strict=False)):
        for k, cluster in enumerate(clusters):
            cid = (ci, k)
            find(cid)
            spans = [(c_start + s, c_start + e) for s, e in cluster]
            spans_of[cid] = spans
            for span in spans:
                if span in owner:
                    union(owner[span], cid)  # the same words in the overlap of two chunks
                else:
                    owner[span] = cid
    by_name: dict[str, tuple[int, int]] = {}
    for cid in sorted(spans_of):
        name, proper = cluster_name([text[s:e] for s, e in spans_of[cid]])
        if proper:
            key = _name_key(name)
            if key in by_name:
                union(by_name[key], cid)
            else:
                by_name[key] = cid
    members: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for cid, spans in spans_of.items():
        members.setdefault(find(cid), set()).update(spans)
    groups = []
    for spans in members.values():
        mentions = [Mention(s, e, text[s:e]) for s, e in sorted(spans)]
        groups.append((cluster_name([m.text for m in mentions])[0], mentions))
    return groups


def extract(text: str, start: int = 0, end: int | None = None, *, model_path: str, model_kind: str = "fcoref",
            top_k: int | None = None, chunk_words: int = CHUNK_WORDS, overlap_words: int = OVERLAP_WORDS,
            model=None) -> EntityChains:
    """Entities of ``text[start:end]`` from fastcoref chains, chunked and merged (module docstring).

    ``model`` lets a caller pass an already loaded FCoref/LingMessCoref object (tests, notebooks);
    otherwise it is loaded lazily from ``model_path``.
    """
    end = len(text) if end is None else end
    chunks = chunk_spans(text, start, end, chunk_words=chunk_words, overlap_words=overlap_words)
    model = model if model is not None else load_model(str(model_path), model_kind)
    clusters: list[list[list[tuple[int, int]]]] = []
    skipped = 0
    for i in range(0, len(chunks), CHUNKS_PER_CALL):
        batch = chunks[i:i + CHUNKS_PER_CALL]
        for result in _chunk_clusters(model, [text[s:e] for s, e in batch]):
            skipped += result is None
            clusters.append(result or [])
    if skipped:
        logger.warning("fastcoref skipped %d of %d chunks as longer than the model's max_doc_len; "
                       "lower chunk_words", skipped, len(chunks))
    groups = merge_chunks(text, chunks, clusters)
    entities = rank_entities(groups, top_k=top_k)
    params = {"model_path": str(model_path), "model_kind": model_kind, "chunk_words": chunk_words,
              "overlap_words": overlap_words, "n_chunks": len(chunks), "n_chunks_skipped": skipped,
              "n_clusters": sum(len(c) for c in clusters), "n_entities_total": len(groups)}
    return EntityChains(method=METHOD, entities=entities, span_start=start, span_end=end, params=params)
