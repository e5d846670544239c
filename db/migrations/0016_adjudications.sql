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
), ranked AS (
    SELECT judgment_id, label, n,
           sum(n) OVER (PARTITION BY judgment_id) AS n_people,
           count(*) OVER (PARTITION BY judgment_id) AS n_labels,
           rank() OVER (PARTITION BY judgment_id ORDER BY n DESC) AS r
    FROM counted
), top AS (
    SELECT judgment_id, label, n, n_people, n_labels, count(*) OVER (PARTITION BY judgment_id) AS n_top
    FROM ranked WHERE r = 1
), adjudicated AS (
    SELECT judgment_id, label FROM (
        SELECT judgment_id, label, row_number() OVER (PARTITION BY judgment_id ORDER BY id DESC) AS rn
        FROM adjudications)
    WHERE rn = 1
)
SELECT judgment_id, label, 'adjudicated' AS basis FROM adjudicated
UNION ALL
SELECT judgment_id, label, CASE WHEN n_labels = 1 THEN 'unanimous' ELSE 'majority' END AS basis
FROM top
WHERE n_top = 1 AND judgment_id NOT IN (SELECT judgment_id FROM adjudicated);
