-- Issue 34 (a team on one dashboard): adjudication of disagreements, comments on an item, and the
-- one label per verdict the statistics use (lsqa.audit.adjudication; docs/statistics.md).

-- adjudications: append-only; an adjudicator's final label for a verdict the people labelled. The
-- latest row of a verdict stands (a new row corrects an earlier one). `role`: the adjudicator's role
-- when they wrote it ('' in a workspace without people).
CREATE SEQUENCE adjudications_id START 1;
CREATE TABLE adjudications (
    id           BIGINT PRIMARY KEY DEFAULT nextval('adjudications_id'),
    judgment_id  VARCHAR NOT NULL,
    label        VARCHAR NOT NULL,          -- system terms, one of the verdict's kind's labels
    note         VARCHAR NOT NULL DEFAULT '',
    adjudicator  VARCHAR NOT NULL,
    role         VARCHAR NOT NULL DEFAULT '',
    created_at   TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- item_comments: append-only; a person's remark on a verdict (author and time), never a label.
CREATE SEQUENCE item_comments_id START 1;
CREATE TABLE item_comments (
    id           BIGINT PRIMARY KEY DEFAULT nextval('item_comments_id'),
    judgment_id  VARCHAR NOT NULL,
    author       VARCHAR NOT NULL,
    role         VARCHAR NOT NULL DEFAULT '',
    text         VARCHAR NOT NULL,
    created_at   TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- "The latest label of anyone" silently let the second person's label replace the first's. It is
-- replaced by one final label per verdict, the rule stated once here:
--   1. the latest adjudication of the verdict, when there is one;
--   2. else the label more people gave than any other (their current labels, `human_labels`: Audit page
--      reviews and imported reviews alike; one person's label is the majority of one);
--   3. else (a tie between people, not adjudicated) no final label: the verdict is neither confirmed
--      nor overridden, and the statistics leave it out as if nobody had labelled it.
-- `basis` says which: adjudicated | unanimous (every person, one or more, gave it) | majority.
DROP VIEW latest_human_labels;

CREATE VIEW final_human_labels AS
WITH counted AS (
    SELECT judgment_id, label, count(*) AS n FROM human_labels WHERE label IS NOT NULL GROUP BY judgment_id, label
), people AS (
    -- ns: how many people gave each label, most first; the top label is unique when ns[1] > ns[2]
    SELECT judgment_id, arg_max(label, n) AS label, count(*) AS n_labels, list_sort(list(n), 'DESC') AS ns
    FROM counted GROUP BY judgment_id
), adjudicated AS (
    SELECT judgment_id, arg_max(label, id) AS label FROM adjudications GROUP BY judgment_id
)
SELECT coalesce(a.judgment_id, p.judgment_id) AS judgment_id, coalesce(a.label, p.label) AS label,
       CASE WHEN a.label IS NOT NULL THEN 'adjudicated' WHEN p.n_labels = 1 THEN 'unanimous' ELSE 'majority' END AS basis
FROM people p FULL OUTER JOIN adjudicated a ON a.judgment_id = p.judgment_id
WHERE a.label IS NOT NULL OR p.n_labels = 1 OR p.ns[1] > p.ns[2];
