"""The fastcoref path (paper §2) on the REAL fastcoref code with a tiny random-weight model.

No coreference weights exist offline, so the test builds a model in the layout fastcoref's
``CorefModel`` loads: ``config.json`` (a RobertaConfig plus the ``coref_head`` dict fastcoref reads:
max_span_length, top_lambda, ffnn_size, dropout_prob, max_segment_len), ``model.safetensors`` of an
``FCorefModel`` / ``LingMessModel``, and a fast RoBERTa byte-level BPE tokenizer trained on the book.
Random weights give random clusters: the test checks the pipeline runs end to end, offsets map
back exactly, chunks are stitched correctly, and the result has the fallback's shape.
"""

from __future__ import annotations

import dataclasses

import pytest

from lsqa.config.settings import Settings
from lsqa.corpus.entities import Entity, EntityChains, Mention, coref, extract_entities
from lsqa.errors import InputError
from tests.corpus.test_entities import check_chains
from tests.support.nqa_books import book

TITLE = "The Tale of Tom Kitten"


def build_tiny_model(folder, text: str, kind: str = "fcoref"):
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaTokenizerFast

    if kind == "fcoref":
        from fastcoref.coref_models.modeling_fcoref import FCorefModel as cls
    else:
        from fastcoref.coref_models.modeling_lingmess import LingMessModel as cls
    folder.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([text], vocab_size=400, min_frequency=2, show_progress=False,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(folder))
    tokenizer = RobertaTokenizerFast(vocab_file=str(folder / "vocab.json"), merges_file=str(folder / "merges.txt"))
    tokenizer.save_pretrained(str(folder))
    # FCoref cuts a document into max_segment_len pieces; LingMess (PadCollator) reads it whole,
    # like the real Longformer-based model, so it needs positions for a whole chunk.
    positions = 130 if kind == "fcoref" else 4098
    config = RobertaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=64, max_position_embeddings=positions, type_vocab_size=1,
                           pad_token_id=1, bos_token_id=0, eos_token_id=2)
    # 128-token segments: chunks of a few hundred words span several segments plus "leftovers".
    config.coref_head = {"max_span_length": 10, "top_lambda": 0.4, "ffnn_size": 16, "dropout_prob": 0.0,
                         "max_segment_len": 128}
    config.architectures = [cls.__name__]
    torch.manual_seed(0)
    cls(config).save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def story(shared_data):
    return book(shared_data, TITLE)[:3]


@pytest.fixture(scope="module")
def tiny_fcoref(tmp_path_factory, story):
    return build_tiny_model(tmp_path_factory.mktemp("fcoref") / "tiny", story[0])


def test_chunks_are_overlapping_whole_paragraphs(story):
    text, start, end = story
    chunks = coref.chunk_spans(text, start, end, chunk_words=150, overlap_words=30)
    assert len(chunks) >= 5
    assert chunks[0][0] == start and chunks[-1][1] == end
    for (s1, e1), (s2, e2) in zip(chunks, chunks[1:], strict=False):
        assert s1 < s2 < e1 < e2  # consecutive chunks overlap and move forward
        assert len(text[s2:e1].split()) >= 30
    for s, e in chunks:
        assert len(text[s:e].split()) <= 150
        # Paragraph boundaries: a chunk starts after a blank line and ends before one.
        assert text[:s].rstrip(" \t").endswith("\n\n") and text[e:].lstrip(" \t").startswith("\n")
    # One giant paragraph is cut at sentence ends, a giant sentence at white space.
    blob = " ".join(["word"] * 400) + ". " + "Short one. " * 50
    pieces = coref.chunk_spans(blob, chunk_words=100, overlap_words=0)
    assert all(len(blob[s:e].split()) <= 100 for s, e in pieces)
    assert pieces[0][0] == 0 and pieces[-1][1] == len(blob.rstrip())
    assert len(pieces) >= 5
    with pytest.raises(ValueError):
        coref.chunk_spans(text, start, end, chunk_words=100, overlap_words=100)


def test_merge_joins_overlap_spans_and_names_but_not_pronoun_clusters():
    text = "Tom met Ann. He smiled.\n\nTom ran. He fell. It rained and it poured.\n\nThe man came. Ann sang."
    a = text.index
    chunks = [(0, a("Tom ran") + 16), (a("Tom ran"), len(text))]
    c0, c1 = chunks[0][0], chunks[1][0]
    clusters = [
        # chunk 0: Tom + He; "Tom ran"/"He fell" (in the overlap); "It rained"/"it poured" would be in chunk 1
        [[(a("Tom met"), a("Tom met") + 3), (a("He smiled"), a("He smiled") + 2)],
         [(a("Tom ran"), a("Tom ran") + 3), (a("He fell"), a("He fell") + 2)]],
        # chunk 1 (chunk-relative offsets): the overlap cluster again, Ann, "it"/"it", "The man"
        [[(a("Tom ran") - c1, a("Tom ran") - c1 + 3), (a("He fell") - c1, a("He fell") - c1 + 2)],
         [(a("Ann sang") - c1, a("Ann sang") - c1 + 3), (a("The man") - c1, a("The man") - c1 + 7)],
         [(a("It rained") - c1, a("It rained") - c1 + 2), (a("it poured") - c1, a("it poured") - c1 + 2)]],
    ]
    assert c0 == 0
    groups = coref.merge_chunks(text, chunks, clusters)
    by_name = {name: sorted(m.text for m in ms) for name, ms in groups}
    # Chunk-0 clusters 1 and 2 are the same entity by name ("Tom"); chunk 1's copy by shared spans.
    assert by_name["Tom"] == ["He", "He", "Tom", "Tom"]
    assert by_name["Ann"] == ["Ann", "The man"]
    assert by_name["It"] == ["It", "it"]
    assert len(groups) == 3
    for _, ms in groups:
        assert all(text[m.char_start:m.char_end] == m.text for m in ms)


@pytest.mark.slow
def test_tiny_fcoref_end_to_end(story, tiny_fcoref):
    text, start, end = story
    chains = coref.extract(text, start, end, model_path=str(tiny_fcoref), chunk_words=150, overlap_words=30)
    assert chains.method == "fastcoref"
    assert chains.params["n_chunks"] >= 5 and chains.params["n_clusters"] > 0
    assert len(chains.entities) > 0
    check_chains(text, chains, start, end)

    # Chunk offsets: each chunk predicted on its own, shifted by its start, lands in the result.
    model = coref.load_model(str(tiny_fcoref), "fcoref")
    assert coref.load_model(str(tiny_fcoref), "fcoref") is model  # loaded once per process
    chunks = coref.chunk_spans(text, start, end, chunk_words=150, overlap_words=30)
    result_spans = {(m.char_start, m.char_end) for e in chains.entities for m in e.mentions}
    checked = 0
    for i in (0, len(chunks) // 2, len(chunks) - 1):
        s, e = chunks[i]
        for cluster in coref._chunk_clusters(model, [text[s:e]])[0]:
            for cs, ce in cluster:
                assert (s + cs, s + ce) in result_spans
                assert text[s + cs:s + ce] == text[s:e][cs:ce]
                checked += 1
    assert checked > 0  # the three chunks did give clusters: the offset check was not vacuous

    # Same shape as the fallback: same classes, same fields.
    fallback_chains = extract_entities(text, start, end)
    for a, b in ((chains, fallback_chains), (chains.entities[0], fallback_chains.entities[0]),
                 (chains.entities[0].mentions[0], fallback_chains.entities[0].mentions[0])):
        assert type(a) is type(b)
        assert [f.name for f in dataclasses.fields(a)] == [f.name for f in dataclasses.fields(b)]
    assert isinstance(chains.entities[0], Entity) and isinstance(chains.entities[0].mentions[0], Mention)


@pytest.mark.slow
def test_settings_select_fastcoref_and_lingmess(story, tiny_fcoref, tmp_path):
    text, start, end = story
    chains = extract_entities(text, start, end, settings=Settings(coref_model_path=str(tiny_fcoref)), top_k=5)
    assert isinstance(chains, EntityChains) and chains.method == "fastcoref"
    assert chains.params["model_kind"] == "fcoref" and len(chains.entities) <= 5
    check_chains(text, chains, start, end)

    lingmess = build_tiny_model(tmp_path / "lingmess", text, kind="lingmess")
    chains = extract_entities(text, start, end, settings=Settings(coref_model_path=str(lingmess),
                                                                  coref_model_kind="lingmess"))
    assert chains.method == "fastcoref" and chains.params["model_kind"] == "lingmess"
    check_chains(text, chains, start, end)


@pytest.mark.slow
def test_missing_model_folder_is_an_input_error(story, tmp_path):
    text, start, end = story
    with pytest.raises(InputError, match="no coreference model"):
        extract_entities(text, start, end, model_path=str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="coref_model_kind"):
        coref.load_model(str(tmp_path), "spanbert")
    # A transformer folder without fastcoref's coref_head is refused with a reason, not a KeyError.
    from transformers import RobertaConfig

    plain = tmp_path / "plain"
    RobertaConfig(hidden_size=8, num_hidden_layers=1, num_attention_heads=1, intermediate_size=8).save_pretrained(plain)
    with pytest.raises(InputError, match="not a fastcoref fcoref model"):
        coref.load_model(str(plain), "fcoref")
