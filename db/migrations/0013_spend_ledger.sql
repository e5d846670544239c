-- Issue 33 (money): one spend ledger per study whatever the transport settings, and no spend hidden
-- by a kill.
-- calls_in_flight: a call recorded as sent BEFORE it is sent, with the most it can cost (bound_usd)
-- and the ledger (study id) it is paid from. The row goes in the transaction that stores the call's
-- result (its real cost then counts in runs.cost_usd); a row whose owner died stays, and the ledger
-- counts it at bound_usd for good (the provider may have answered and charged it).
CREATE TABLE calls_in_flight (
    cache_key  VARCHAR NOT NULL,
    owner      VARCHAR NOT NULL,   -- host:pid:nonce of the sending process (lsqa.llm.claims.owner)
    ledger     VARCHAR NOT NULL,   -- the study id whose budget pays for the call
    bound_usd  DOUBLE NOT NULL,    -- the most the call can cost (its input plus max_tokens at litellm's prices)
    run_id     BIGINT,
    sent_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);
-- llm_batches: the ledger of a batch and the most its calls can cost, counted while it is open.
ALTER TABLE llm_batches ADD COLUMN ledger VARCHAR;
ALTER TABLE llm_batches ADD COLUMN bound_usd DOUBLE;
