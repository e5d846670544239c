-- Usage checked before it is priced (lsqa.llm.pricing.checked_usage): why a call's reported usage was
-- not priced (missing, negative, not a number, past the model's limits); the call's cost_usd is then
-- its worst case. '' when the usage was priced as reported.
ALTER TABLE llm_calls ADD COLUMN usage_note VARCHAR DEFAULT '';
-- Settling a stranded ledger (lsqa ledger settle): calls recorded as sent by runs that died before
-- storing their answers stay on the study's ledger at their worst case until an admin releases them.
-- Each release is kept here: the ledger goes down only by a row of this table.
CREATE TABLE ledger_settlements (
    id            VARCHAR PRIMARY KEY,   -- random hex
    ledger        VARCHAR NOT NULL,      -- the study id (calls_in_flight.ledger)
    settled_by    VARCHAR NOT NULL,      -- the admin who released them ('' in a workspace without people)
    settled_at    TIMESTAMP NOT NULL DEFAULT current_timestamp,
    calls         INTEGER NOT NULL,      -- calls released
    released_usd  DOUBLE NOT NULL,       -- their worst cases, taken off the ledger
    first_sent_at TIMESTAMP,
    last_sent_at  TIMESTAMP,
    owners        VARCHAR NOT NULL       -- JSON list of the dead processes (host:pid:nonce) whose calls they were
);
