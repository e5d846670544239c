"""Every ``lsqa`` command, in one list: its name, the module and the function (or, for a group of
subcommands such as ``lsqa users add``, the ``typer.Typer``) that hold it, the line ``lsqa --help``
shows for it (the first paragraph of its docstring), and its rows of README's command table.

README's table is generated from this list (``python scripts/readme_commands.py --write``), and
``tests/project/test_docs.py`` fails when they differ. Nothing here imports a command's module: ``lsqa
--help`` reads the list, and a command's module is imported when that command is run or asked
for its own help (``lsqa.cli``). Adding a command: docs/recipes.md.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    name: str                       # as typed: ``lsqa <name>``
    module: str                     # the module that holds it
    function: str                   # a function of that module, or its typer.Typer of subcommands
    summary: str                    # ``lsqa --help``'s line: the first paragraph of the function's docstring
    readme: tuple[tuple[str, str], ...] = ()  # README rows: (usage, what it does), Markdown


COMMANDS: tuple[Command, ...] = (
    Command(
        'ingest-book', 'lsqa.cli.ingest', 'ingest_book',
        'Add a book with its passages (exact character offsets and token counts).',
        readme=(
            ('`lsqa ingest-book PATH [--title T]`',
             'add a plain-text book (Gutenberg header/footer removed), passages, token counts'),
        ),
    ),
    Command(
        'ingest-narrativeqa', 'lsqa.cli.ingest', 'ingest_narrativeqa',
        'Add NarrativeQA documents, questions with both references, summaries and story texts; with '
        '--errata, corrected references read from an errata file (after DIR, when both are given).',
        readme=(
            ('`lsqa ingest-narrativeqa DIR [--set test] [--errata FILE]`',
             'NarrativeQA as published (`documents.csv`, `qaps.csv` or the JSONL layout, summaries, '
             "`stories/<id>.txt`); `--errata` (DIR optional then): an errata file's corrected "
             'references, kept beside the originals '
             '([docs/reference-errors.md](docs/reference-errors.md))'),
        ),
    ),
    Command(
        'import-answers', 'lsqa.cli.ingest', 'import_answers',
        'Add answers produced elsewhere.',
        readme=(
            ('`lsqa import-answers FILE`',
             'answers made elsewhere (CSV/JSONL: question_id, system, answer); a study judges them with '
             '`model = "imported"` systems'),
        ),
    ),
    Command(
        'import-judgments', 'lsqa.cli.ingest', 'import_judgments',
        'Add verdicts produced elsewhere, by a model or a person.',
        readme=(
            ('`lsqa import-judgments FILE`',
             'verdicts made elsewhere, by a model or a person (question_id/item_id, rater, kind, '
             'system_a, system_b, label; other columns kept)'),
        ),
    ),
    Command(
        'import-reviews', 'lsqa.cli.ingest', 'import_reviews',
        'Add human reviews of verdicts made elsewhere, as if made in the Audit page.',
        readme=(
            ('`lsqa import-reviews FILE [--gold]`',
             'human reviews made elsewhere (CSV/JSONL: judge, question_id, system_a, system_b or system, '
             'reference, label, annotator; optional inclusion_probability, stratum), as if made in the '
             'Audit page; `--gold`: a gold set, whose labels (each row marked) never make a verdict need '
             'a second review'),
        ),
    ),
    Command(
        'entities', 'lsqa.cli.study', 'entities',
        'Entities of a book ranked by mentions (paper §2), extracted and stored on first use.',
        readme=(
            ('`lsqa entities DOC [--top 15] [--method auto]`',
             "entities of a book ranked by mentions, stored once, with the paper's annotated rendering "
             '(`[1 Marius] possessed [3 Cosette]`)'),
        ),
    ),
    Command(
        'plan', 'lsqa.cli.study', 'plan',
        'Calls (new vs cached), input tokens, max output tokens and cost a run would make, before any call.',
        readme=(
            ('`lsqa plan CONFIG.toml [--json]`',
             'before any call: per stage and model the calls a run would make (new vs cached), input '
             "tokens, max output tokens, cost from litellm's price table"),
        ),
    ),
    Command(
        'run', 'lsqa.cli.study', 'run',
        'Run the stages a config names, skipping finished work (a re-run makes no new calls).',
        readme=(
            ('`lsqa run CONFIG.toml [--json] [--no-cache]`',
             'run the stages a study config names; a re-run makes zero new calls; exit 1 when calls '
             'failed (count and first errors on stderr), 3 when `max_cost_usd` stopped it'),
        ),
    ),
    Command(
        'export', 'lsqa.cli.study', 'export',
        'Write questions, answers, verdicts, reviews, flags and rankings to files, all inside --out.',
        readme=(
            ('`lsqa export --format csv\\|jsonl\\|parquet --out DIR [--force]`',
             'questions (with corrected references beside the originals), answers, verdicts, reviews, '
             'flags, final labels, rankings, all inside `DIR` (new, empty or a previous export; other '
             'files refused unless `--force`); CSV cells that would run as spreadsheet formulas start '
             "with `'`"),
        ),
    ),
    Command(
        'rank', 'lsqa.cli.stats', 'rank_command',
        'Rank systems from pairwise verdicts with Bradley-Terry (paper §3.2) and bootstrap CIs.',
        readme=(
            ('`lsqa rank --input FILE` / `--workspace P --judge NAME`',
             'Bradley-Terry strengths e^β with bootstrap CIs; `--style-control length` adds the '
             'strengths with answer length controlled and the length coefficient with its CI (`--json`: '
             'under `style_control`)'),
            ('`lsqa rank --workspace P --judge NAME --corrected [--json]`',
             'strengths corrected by the audits (PPI++), with CI, `n`, `n_audited` and the judge-only '
             'strength beside them; the rank flips between judge-only, corrected and overrides with the '
             'verdicts that moved each'),
        ),
    ),
    Command(
        'accuracy', 'lsqa.cli.stats', 'accuracy_command',
        'Accuracy per system under a yes/no judge (paper Table 1), judge-only or corrected by audits.',
        readme=(
            ('`lsqa accuracy --workspace P --judge NAME [--corrected] [--json]`',
             "accuracy per system under a yes/no judge: the judge's (Table 1), or corrected by the "
             'audits with the judge-only figure beside it (and the rank flips, as for `rank`)'),
        ),
    ),
    Command(
        'agreement', 'lsqa.cli.stats', 'agreement_command',
        "Agreement of two raters: percent agreement, Cohen's kappa with CI, confusion matrix (paper Fig. 4).",
        readme=(
            ('`lsqa agreement --input FILE` / `--workspace P` `--rater-a X --rater-b Y`',
             "agreement %, Cohen's κ with CI, confusion matrix"),
        ),
    ),
    Command(
        'certify', 'lsqa.cli.stats', 'certify_command',
        'Can this judge replace the annotators? Replaceable, not replaceable or undecided, from its audits.',
        readme=(
            ('`lsqa certify --judge NAME [--json] [--min-agreement 0.9] [--min-recall 0.8] [--epsilon 0.15]`',
             'can this judge replace the annotators? `replaceable`, `not replaceable` or `undecided` '
             '(with about how many more random audits would tell), from its agreement and per-label '
             "recall on random/active audits with 95% bounds, the people's ceiling and the alternative "
             'annotator test '
             '([docs/statistics.md](docs/statistics.md#can-this-judge-replace-the-annotators))'),
        ),
    ),
    Command(
        'report', 'lsqa.cli.stats', 'report_command',
        'A report a stakeholder can be handed: tiers, certification, bias, switches and provenance in '
        'one HTML file.',
        readme=(
            ('`lsqa report --judge NAME --out FILE.html [--bootstrap 1000] [--audit-queue Q] [--since OLD.html] '
             '[--dashboard-url URL]`',
             'one self-contained page for a stakeholder (opens offline, runs no script): the headline, tiers '
             'and ranking, examples where the top systems were judged most differently (each linked to its verdict '
             'on the Audit page at `--dashboard-url`, else `LSQA_DASHBOARD_URL`, else make run\'s address), the '
             'order book by book with how often it would hold on a new book, the judge\'s certification and the '
             'one agreement figure it rests on, the corrected ranking, the bias panel, what each switch changes, '
             'where the data came from (runs, dates, study config, lsqa version), a line for each Greek letter; '
             'its figures embedded as JSON, so `--since` lists what moved since an earlier report '
             '([docs/dashboard.md](docs/dashboard.md#a-report-to-hand-on))'),
        ),
    ),
    Command(
        'assign', 'lsqa.cli.assign', 'assign_cmd',
        'Give each annotator their own verdicts of a judge to review, each verdict to --per-item of them.',
        readme=(
            ('`lsqa assign --judge J --annotators ana,ben [--as NAME] [--per-item 2] [--count 50] '
             '[--queue priority\\|random] [--seed S] [--json]`',
             'signed by `--as NAME` (an admin of a workspace with people; else the login name by '
             'default): give each annotator their own verdicts of a judge, each verdict to `--per-item` '
             "of them (balanced); `priority`: the audit queue's head, `random`: a simple random sample "
             "whose reviews count for corrected estimates; an annotator's Audit page opens on them "
             '([docs/dashboard.md](docs/dashboard.md#auditing))'),
        ),
    ),
    Command(
        'users', 'lsqa.cli.team', 'users',
        'People who sign in to the dashboard: add, list, a new link, revoke.',
        readme=(
            ('`lsqa users add NAME --role viewer\\|annotator\\|adjudicator\\|admin [--json]`, `users link NAME`, '
             '`users list [--json]`, `users revoke NAME`',
             'the people who sign in to the dashboard, each with a personal link that signs in once and expires '
             'unused after 7 days (`users link`: a new one); roles decide who may '
             "review, adjudicate, run; `users list` adds each person's items done, median seconds per "
             'item, agreement with the final label and assignments left '
             '([docs/dashboard.md](docs/dashboard.md#opening-it))'),
        ),
    ),
    Command(
        'disagreements', 'lsqa.cli.team', 'disagreements_cmd',
        "Verdicts whose people's current labels differ (Audit page and imported reviews alike), each "
        'with every label, note and time and the adjudicated label if any; not yet adjudicated first. An '
        "adjudicator sets the final label on the dashboard's Adjudicate page.",
        readme=(
            ('`lsqa disagreements [--json]`',
             "the verdicts whose people's current labels differ (Audit page and imported reviews alike), "
             'each with every label, note and time and the adjudicated label if any (`--json`: '
             '`{"disagreements": [{"judgment_id", "labels": [{"annotator", "label", "note", '
             '"created_at"}], "adjudicated"}]}`); the Adjudicate page sets final labels '
             '([docs/statistics.md](docs/statistics.md#the-human-label-of-a-verdict))'),
        ),
    ),
    Command(
        'labels', 'lsqa.cli.team', 'labels_cmd',
        "The final human label of each verdict people labelled: adjudicated, else the people's majority "
        "(one person's label is theirs), a tie marked and without a label; with the people, the "
        'adjudicator and whether the verdict counts as an audit (its π). The same rows as `lsqa '
        "export`'s final_labels.",
        readme=(
            ('`lsqa labels [--judge J] [--json]`',
             'the final human label of each verdict people labelled: the label, how it was decided '
             '(adjudicated, single, unanimous, majority; a tie marked, without a label), the people and '
             'their labels, the adjudicator, and whether it counts as an audit with its π; the rows of '
             "the export's `final_labels` "
             '([docs/statistics.md](docs/statistics.md#the-human-label-of-a-verdict))'),
        ),
    ),
    Command(
        'suspects', 'lsqa.cli.suspects', 'suspects_cmd',
        "References most likely wrong first: the systems' answers and abilities, ground-truth verdicts, "
        "the other reference, the story's summary, LLM reference checks, human reviews and flags behind "
        'each score (docs/reference-errors.md).',
        readme=(
            ('`lsqa suspects [--limit N] [--json]`',
             'the NarrativeQA references most likely wrong first, each with its score and the evidence '
             "behind it: the systems' answers and abilities, the other reference, the summary sentence, "
             "LLM reference checks, people's reviews and flags "
             '([docs/reference-errors.md](docs/reference-errors.md))'),
        ),
    ),
    Command(
        'longspan', 'lsqa.cli.longspan', 'longspan_cmd',
        "Which questions needed the whole book: each question's class (memorised, retrieval, "
        'needs-full-book, unanswered) and evidence span, the full-book gains per book and entity '
        '(judge-only with Tango score intervals, simultaneous over the books, and corrected by audits '
        'where there are some).',
        readme=(
            ('`lsqa longspan [--judge J] [--no-context S] [--retrieval S] [--full S] [--json] [--export '
             'FILE.jsonl]`',
             'which questions needed the whole book: each question `memorised`, `retrieval`, '
             '`needs-full-book` or `unanswered`, with where its evidence lies in the book; full-book '
             'gains per book and entity with small-sample (Tango) intervals, held together over the '
             'books, and corrected by audits where there are some; the needs-full-book questions as a '
             'benchmark file ([docs/studies.md](docs/studies.md#which-questions-need-the-whole-book))'),
        ),
    ),
    Command(
        'status', 'lsqa.cli.ingest', 'status',
        "Row counts per table and per run; calls left on a study's ledger by runs that died (`stranded`).",
        readme=(
            ('`lsqa status [--json]`',
             "rows per table and per run; calls left on a study's ledger by runs that died"),
        ),
    ),
    Command(
        'ledger', 'lsqa.cli.study', 'ledger',
        "A study's spend ledger: settle calls left on it by runs that died.",
        readme=(
            ('`lsqa ledger settle --study S [--yes] [--json]`',
             "release what dead runs left on a study's ledger, after saying what lsqa cannot know "
             '([docs/cost-and-scale.md](docs/cost-and-scale.md))'),
        ),
    ),
    Command(
        'demo', 'lsqa.cli.ingest', 'demo',
        'Build the deterministic demo workspace from the shared data.',
        readme=(
            ('`lsqa demo [--path P]`',
             'build the demo workspace'),
        ),
    ),
)

BY_NAME = {c.name: c for c in COMMANDS}


def readme_table() -> str:
    """README's command table (Markdown), one row per usage, in the list's order."""
    lines = ["| command | what it does |", "|---|---|"]
    lines += [f"| {usage} | {what} |" for c in COMMANDS for usage, what in c.readme]
    return "\n".join(lines)
