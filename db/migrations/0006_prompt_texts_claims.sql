-- Issue 15: paper-scale studies on a budget.
-- prompt_texts: long contexts that go into prompts (whole books, retrieved passages), each stored
-- once under the sha256 of its UTF-8 text. A call whose prompt holds such a context keeps
-- prompt_parts (its messages with the contexts as {"ref": sha256}, see lsqa/prompt_parts.py) and
-- messages NULL; other calls keep messages as before. The calls stored before this migration
-- are moved by lsqa.store.prompt_texts.compact_stored_calls, in this migration's transaction.
CREATE TABLE prompt_texts (
    sha256     VARCHAR PRIMARY KEY,
    text       VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
ALTER TABLE llm_calls ALTER COLUMN messages DROP NOT NULL;
ALTER TABLE llm_calls ADD COLUMN prompt_parts VARCHAR;
-- call_claims: a call being made right now, so that a second run of the same study waits for
-- its result instead of paying for it again. The owner renews expires_at while the call runs;
-- a claim past expires_at (its process was killed) may be taken over.
CREATE TABLE call_claims (
    cache_key  VARCHAR PRIMARY KEY,
    owner      VARCHAR NOT NULL,   -- host:pid:nonce of the claiming process
    host       VARCHAR NOT NULL,
    pid        INTEGER NOT NULL,
    claimed_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    expires_at TIMESTAMP NOT NULL
);
