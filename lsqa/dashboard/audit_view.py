"""What the Audit page shows, as plain text, HTML and rows: the page (``pages/audit.py``) keeps only
the layout, the widgets and their callbacks.

The page lets a person go through judge verdicts by hand, most in need of a human first
(``lsqa.audit``): the queue's settings (filters, which queue, blind mode) live in the session;
where the annotator is in the queue is a trail of items opened (``lsqa.audit.trail``); one item is
shown as the judge saw it — the question and its NarrativeQA references (paper §5), the answers
in the order shown (side by side, §3.2), the judge's verdict and the evidence it quoted from the
book (Appendix A.3/A.4) — unless blind review hides the judge's label and the system names until
the annotator decides. The functions here take the session's values as a plain mapping (never
Streamlit itself) and read the workspace only where the page did.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from lsqa import audit, team
from lsqa.audit.trail import Trail
from lsqa.audit.wording import SHORTCUTS
from lsqa.dashboard import common, item_cards
from lsqa.figures import audits
from lsqa.judging import guidelines
from lsqa.team import Person
from lsqa.text.highlight import md_escape as md

# Static CSS only: the decision bar stays in view while the item scrolls under it.
STYLE = ("<style>.lsqa-text{line-height:1.5} .lsqa-text mark{background:#ffe066;padding:0 2px}"
         ".lsqa-card{border:1px solid rgba(49,51,63,.2);border-radius:.5rem;padding:1rem 1rem .25rem;margin-bottom:1rem}"
         ".lsqa-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:0 1rem}"
         ".lsqa-note{font-size:.875rem;color:rgba(49,51,63,.6)}"
         "[data-testid=stLayoutWrapper]:has(> .st-key-lsqa_keys){position:sticky;top:3.75rem;z-index:990;"
         "background-color:#fff;border-bottom:1px solid #ddd;padding:.4rem 0 .5rem}"
         ".st-key-audit_on_screen,.st-key-audit_sync{display:none}</style>")  # for the browser, not the eye
# The Audit page served without the desk's HTTP door (app.py alone, not dashboard.py): nothing can be pressed.
NO_DOOR_NOTE = ("This dashboard was started without its HTTP front (`streamlit run app.py`), so the Audit page's "
                "keys and buttons cannot write here. Start it with `make run` (`streamlit run dashboard.py`).")

# ------------------------------------------------------------------------- the queue's settings

# The session keys of the queue's settings, with the value each starts from (the "reviewed" filter
# starts from the link that opened the page, ``opening_state``). Streamlit forgets a widget's value
# when its page is left, or when the folded panel that holds it is closed: each is kept in a plain
# key too, "_" + its name (``remember_settings``).
SETTING_DEFAULTS = {"audit_judges": [], "audit_systems": [], "audit_books": [], "audit_labels": [],
                    "audit_statuses": [], "audit_reviewed": None, "audit_blind": False, "audit_queue": "priority",
                    "audit_rate": 0.1, "audit_stratify": "none", "audit_reviewed_by": [],
                    "audit_search": "", "audit_questions": []}
SETTING_KEYS = tuple(SETTING_DEFAULTS)
# Settings whose widgets are in the folded "Queue settings" panel (the search box is always shown,
# the questions of a link have no widget).
FOLDED_SETTING_KEYS = tuple(k for k in SETTING_KEYS if k not in ("audit_search", "audit_questions"))
LINK_PARAMETERS = ("judge", "system", "reviewed", "blind", "item", "q", "question", "tab")
TAB_KEY = "audit_tab"  # this tab's id (lsqa.audit.open_items), kept in the page's address so a reload is the same tab
_TAB_ID = re.compile(r"[0-9a-f]{16}")
# The "Audit queue" choices: the priority queue, my assignments, the sampled queues.
QUEUE_CHOICES = {"priority": "priority", audit.ASSIGNED: "My assignments", "random": "random", "active": "active"}


def opening_state(params: Mapping[str, list[str]], offered: Callable[[], dict],
                  known: Callable[[str], bool] | None = None,
                  open_assignments: Callable[[], int] = lambda: 0,
                  stored_trail: Callable[[str], list[str]] = lambda tab: [],
                  open_in: Callable[[str], str | None] = lambda tab: None) -> dict:
    """A session's first state: an empty trail, and the queue settings a link may give
    (``?judge=<name>&system=<name>&reviewed=all&blind=1``, ``?item=<judgment id>`` for one verdict,
    shown first, before the queue: the Leaderboard's rank flips link their questions so). An
    annotator with open assignments opens on them ("My assignments"), unless the link asks for
    another queue (a judge, a "reviewed" filter or an item).

    ``params``: each query parameter's values; ``offered``: the queue's choices (``audit.choices``),
    called only when a link names a judge or a system, as a new tab then needs no read; ``known``:
    whether a verdict exists, asked only for a link's item (one that names none is said so in
    ``audit_msg``, and the queue is shown instead); ``open_assignments``: how many verdicts assigned
    to me I have not reviewed yet; ``stored_trail``: a tab's trail as last saved, else my latest
    (``audit.trail_of``); ``open_in``: the item a tab has open (``audit.open_in``).

    The tab is the link's (``?tab=``: a reload of this tab), else a new one. The trail is the tab's
    as last saved, else mine from my latest tab — unless a new tab's link names a queue of its own (a
    judge, a system, a "reviewed" filter, a search, questions), which starts a new trail as choosing
    other settings does — and the position past its end (the queue's head); a reloaded tab is back on
    the item it had open."""
    def last(name: str) -> str | None:
        values = params.get(name) or []
        return values[-1] if values else None

    reviewed = last("reviewed") or "not_mine"
    given = last("tab") or ""
    reload = bool(_TAB_ID.fullmatch(given))
    tab = given if reload else secrets.token_hex(8)
    own_queue = not reload and any(params.get(p) for p in ("judge", "system", "reviewed", "q", "question"))
    trail = Trail([] if own_queue else list(stored_trail(tab)))
    trail.at = len(trail.ids)
    again = open_in(tab)
    if again:
        trail.open(again)
    state = {TAB_KEY: tab, "audit_trail": trail.ids, "audit_at": trail.at,
             "audit_judges": [j for j in params.get("judge") or [] if j in offered()["judges"]],
             "audit_systems": [s for s in params.get("system") or [] if s in offered()["systems"]],
             "audit_reviewed": reviewed if reviewed in audit.REVIEWED_FILTERS else "not_mine",
             "audit_blind": last("blind") == "1",
             "audit_questions": list(dict.fromkeys(params.get("question") or []))}
    search = last("q") or ""
    state["audit_search"] = search if len(search) <= audit.MAX_SEARCH_CHARS else ""
    if len(search) > audit.MAX_SEARCH_CHARS:
        state["audit_msg"] = (f"The link's search (q=) is {len(search):,} characters long: searches are at most "
                              f"{audit.MAX_SEARCH_CHARS}. Showing the queue without it.")
    item = last("item")
    if item and (known is None or known(item)):
        trail.open(item)
        state["audit_at"] = trail.at
    elif item:
        state["audit_msg"] = (f"The link's item={item} names no verdict in this workspace: showing the queue "
                              "instead.")
    if not any(params.get(p) for p in ("judge", "system", "reviewed", "item", "q", "question")) and open_assignments() > 0:
        state["audit_queue"] = audit.ASSIGNED
    return state


def restore_settings(state: MutableMapping) -> None:
    """Settings Streamlit forgot (the page was left) come back from their plain keys; the rest start
    from their defaults."""
    for k in SETTING_KEYS:
        if k not in state and f"_{k}" in state:
            state[k] = state[f"_{k}"]
    for k, default in SETTING_DEFAULTS.items():
        if k != "audit_reviewed":
            state.setdefault(k, default)


def settings_as_last_used(state: MutableMapping) -> None:
    """For a run that leaves the settings' widgets out (their panel folded): a widget left out of a
    run falls back to the value code last gave its key, not to the one chosen in it, so each key
    gets the value last used (kept in the plain keys)."""
    for k in FOLDED_SETTING_KEYS:
        if f"_{k}" in state:
            state[k] = state[f"_{k}"]


def remember_settings(state: MutableMapping) -> None:
    for k in SETTING_KEYS:
        state[f"_{k}"] = state[k]


def queue_summary(state: Mapping, mine: Mapping | None = None) -> str:
    """The queue settings in one line, shown above their folded panel (Markdown, escaped). ``mine``:
    my assignments' progress (``audit.my_progress``), shown when I have any."""
    nouns = {"audit_judges": ("judge", "judges"), "audit_systems": ("system", "systems"), "audit_books": ("book", "books"),
             "audit_labels": ("label", "labels"), "audit_statuses": ("status", "statuses")}
    parts = [f"{n} {one if n == 1 else many}" for key, (one, many) in nouns.items() if (n := len(state.get(key) or ()))]
    if state.get("audit_reviewed_by"):
        parts.append("reviewed by " + ", ".join(state["audit_reviewed_by"]))
    if state.get("audit_questions"):
        n = len(state["audit_questions"])
        parts.append(f"{n} question{'' if n == 1 else 's'} (from a link)")
    if (state.get("audit_search") or "").strip():
        parts.append(f"search “{state['audit_search'].strip()}”")
    if state["audit_queue"] == audit.ASSIGNED:
        parts.insert(0, "my assignments")
    else:
        parts.append(audit.REVIEWED_FILTERS[state["audit_reviewed"]].split(" (")[0])
    if state["audit_queue"] not in ("priority", audit.ASSIGNED):
        parts.append(f"{state['audit_queue']} sample")
    if state.get("audit_blind"):
        parts.append("blind")
    if mine and mine.get("assigned"):
        parts.append(f"{mine['done']:,} of {mine['assigned']:,} of my assignments done")
    return md("Queue: " + " · ".join(parts))


def filters_of(state: Mapping) -> audit.Filters:
    """The queue's filters as the session holds them."""
    return audit.Filters(judges=tuple(state["audit_judges"]), systems=tuple(state["audit_systems"]),
                         documents=tuple(state.get("audit_books", [])), labels=tuple(state.get("audit_labels", [])),
                         statuses=tuple(state.get("audit_statuses", [])),
                         reviewed=audit.ASSIGNED if state.get("audit_queue") == audit.ASSIGNED else state["audit_reviewed"],
                         reviewed_by=tuple(state.get("audit_reviewed_by") or ()),
                         questions=tuple(state.get("audit_questions") or ()), search=state.get("audit_search") or "")


def empty_queue_note(filters: audit.Filters, state: Mapping | None = None, mine: Mapping | None = None,
                     held: int = 0, judge: str | None = None) -> str:
    """What the page says when nothing is left in the queue shown (Markdown, the search escaped): the
    queue has ended, and no key or button writes. ``state``: the session's queue settings; ``mine``:
    my assignments' progress (``audit.my_progress``); ``held``: items left that are open for somebody
    else now (``lsqa.audit.open_items``); ``judge``: the sampled judge of a random / active queue."""
    queue = (state or {}).get("audit_queue", "priority")
    if held:
        return (f"The {held:,} item{'s' if held != 1 else ''} left in this queue {'are' if held != 1 else 'is'} open "
                "for somebody else right now (held while open, for a few minutes): press J to look again.")
    if filters.search.strip():
        where = "this queue" if filters.reviewed == "all" else "this queue (*Show: all* searches every verdict)"
        return f"No verdict in {where} has “{md(filters.search.strip())}” in its question or answers."
    if queue == audit.ASSIGNED and mine and mine.get("assigned"):
        return (f"**All {mine['assigned']:,} of your assignments are done.** Nothing more is written here: "
                "choose the next queue below, or press K to go back to an item and change it.")
    if queue not in ("priority", audit.ASSIGNED):
        return (f"**The {md(queue)} sample of {md(judge or '')} is done:** every verdict in it has your review or "
                "was opened in this tab. Choose the next queue below; K goes back.")
    return ("**Nothing left in this queue:** no verdict matching these filters waits for you. Choose the next "
            "queue below; K goes back.")


def next_queues(state: Mapping, mine: Mapping | None = None) -> list[dict]:
    """What an ended queue offers next, as buttons: ``{"label", "key", "settings"}`` (the session's
    queue settings that open it): my open assignments, the priority queue without filters."""
    out = []
    if state.get("audit_queue") != audit.ASSIGNED and mine and mine.get("open"):
        out.append({"label": f"My assignments ({mine['open']:,} open)", "key": "audit_next_assigned",
                    "settings": {"audit_queue": audit.ASSIGNED}})
    narrowed = any(state.get(k) for k in ("audit_judges", "audit_systems", "audit_books", "audit_labels",
                                          "audit_statuses", "audit_reviewed_by", "audit_questions")) \
        or (state.get("audit_search") or "").strip()
    if state.get("audit_queue") != "priority" or narrowed or state.get("audit_reviewed") != "not_mine":
        out.append({"label": "The priority queue: everything not reviewed by me", "key": "audit_next_priority",
                    "settings": {**{k: SETTING_DEFAULTS[k] for k in ("audit_judges", "audit_systems", "audit_books",
                                                                      "audit_labels", "audit_statuses",
                                                                      "audit_reviewed_by", "audit_search",
                                                                      "audit_questions")},
                                 "audit_queue": "priority", "audit_reviewed": "not_mine"}})
    return out


def sampled_judge(state: Mapping, offered: Callable[[], dict]) -> str | None:
    """The judge whose verdicts a random or active queue samples (the first judge chosen, else the
    first offered); None for the priority queue."""
    if state["audit_queue"] in ("priority", audit.ASSIGNED):
        return None
    return (state["audit_judges"] or offered()["judges"] or [""])[0]


def filter_widgets(offered: dict, reviewers: list[str] = ()) -> list[dict]:
    """The queue's filters as the sidebar offers them (``audit.choices``; ``reviewers``:
    ``audit.reviewers``, for "Reviewed by"): label, options, how an option is shown (a book by its
    title), the session key it sets."""
    titles = {d["id"]: d["title"] for d in offered["documents"]}
    return [{"label": "Judge", "options": offered["judges"], "format_func": str, "key": "audit_judges"},
            {"label": "System", "options": offered["systems"], "format_func": str, "key": "audit_systems"},
            {"label": "Book", "options": list(titles), "format_func": titles.get, "key": "audit_books"},
            {"label": "Judge's label", "options": offered["labels"], "format_func": str, "key": "audit_labels"},
            {"label": "Status", "options": offered["statuses"], "format_func": str, "key": "audit_statuses"},
            {"label": "Reviewed by", "options": list(reviewers), "format_func": str, "key": "audit_reviewed_by"}]


def sampling_caption(judge: str | None) -> str:
    return f"Sampling the verdicts of **{md(judge)}** (the first judge chosen above)."


def overlap_caption(share: float) -> str:
    return f"Overlap {share:.0%}: the share of verdicts every annotator reviews."


def percent(share: float) -> int:
    """A share (0 to 1) as the overlap slider's whole percent."""
    return int(round(share * 100))


def save_overlap(workspace: Path, who: Person | str, percent_chosen: int) -> str:
    """Save the overlap chosen on the slider (in percent) as ``who``; what the screen says then."""
    audit.set_overlap(workspace, percent_chosen / 100, who)
    return f"Overlap set to {percent_chosen}% for this workspace"


def assignable(workspace: Path) -> list[str] | None:
    """Who the "Assign items" panel offers: the active people who may review, or None in a workspace
    without people (then names are typed)."""
    if not team.has_people(workspace):
        return None
    return [p["name"] for p in team.list_people(workspace) if p["revoked_at"] is None and team.may(p["role"], "review")]


def assign_items(workspace: Path, who: Person | str, judge: str, annotators, per_item: int, count: int,
                 queue: str, seed: int) -> str:
    """The "Assign items" panel's one call (``audit.assign``, as ``lsqa assign``); what the screen says then."""
    if isinstance(annotators, str):
        annotators = [a for a in annotators.split(",") if a.strip()]
    done = audit.assign(workspace, judge, annotators, by=who, per_item=int(per_item), count=int(count),
                        queue=queue, seed=int(seed))
    each = ", ".join(f"{a['annotator']} {a['n_items']}" for a in done["assigned"])
    return f"Assigned {done['items']} verdicts of {done['judge']}, each to {done['per_item']}: {each}"


# ----------------------------------------------------------------------- where I am (the trail)

@dataclass
class Place:
    """Where the annotator is: the item to show, and the queue after the trail. ``why``, ``sampled``
    and ``opened`` are the session's own records of the items opened: why each was in the queue,
    its inclusion probability when sampled (saved with the review), the latest review id when it
    was opened (reviews by others after it are worth a warning). ``held``: items of the queue's head
    passed over because they are open for somebody else (``lsqa.audit.open_items``); ``other_tab``:
    the item shown is open in another tab of mine too."""

    current_id: str | None
    remaining: int  # items the queue holds that were not opened yet
    upcoming: list[dict]  # the queue without the item shown
    why: dict[str, str] = field(default_factory=dict)
    sampled: dict[str, dict] = field(default_factory=dict)
    opened: dict[str, int] = field(default_factory=dict)
    held: int = 0
    other_tab: bool = False


def why_shown(row: dict) -> str:
    """A queue row's priority in words, as the decision bar shows it."""
    return f"priority {row['priority']:.2f} — {row['why']}"


OTHER_TAB_NOTE = ("This item is open in another tab of yours too: the first decision made is kept, and a "
                  "decision from the other tab is refused (nothing written twice).")
OPEN_KEY = "audit_open"  # {"id", "other_tab", "renewed"}: the item this tab holds (lsqa.audit.open_items)


def queue_served(state: Mapping, filters: audit.Filters) -> str:
    """The queue an item is served from, as its hold records it: ``assigned``, ``random``, ``active``, ``priority``."""
    if filters.reviewed == audit.ASSIGNED:
        return audit.ASSIGNED
    return state.get("audit_queue") if state.get("audit_queue") in ("random", "active") else "priority"


def where_i_am(workspace: Path, trail: Trail, filters: audit.Filters, annotator: str, state: MutableMapping,
               judge: str | None, who: Person | str | None = None) -> Place:
    """The queue with the trail left out, and the item to show now (the trail's, else the queue's
    head, which joins the trail); the session's position (``audit_at``) and records of the items
    opened follow. ``judge``: the sampled judge (``sampled_judge``), None for the priority queue. A
    random / active audit queue is the sample in its own order, the items opened this
    session left out.

    ``who`` (a person who may review): the item is opened in this tab (``audit.open_item``) — the
    queue's head is the first item not open for somebody else, and held for me while I am on it;
    an item I go back to records what I decided, so that one key changes it; a queue with nothing
    left closes the tab's open item, so that no decision is written from it."""
    tab, kept = state.get(TAB_KEY), state.get(OPEN_KEY)
    holding = who is not None and bool(annotator) and bool(tab)
    serving = trail.at >= len(trail.ids)  # past the trail's end: the queue's head, served
    # Reviews after this row may be missing from the queue read next: serving passes over their items.
    marker = audit.opened_marker(workspace) if holding and serving else None
    if judge is None:
        q = audit.queue(workspace, filters, annotator, exclude=trail.ids)
    else:
        q = audits.page_queue(workspace, judge, state["audit_queue"], rate=state["audit_rate"],
                                stratify=state.get("audit_stratify", "none"), page=0)
        q = {**q, "rows": [r for r in q["rows"] if r["id"] not in trail.ids],
             "total": q["total"] - sum(r["id"] in trail.ids for r in q["rows"])}
    opened_before, held = len(trail.ids), 0
    if serving:
        if holding and (q["rows"] or kept is not None):
            got = audit.open_item(workspace, who, tab, candidates=[r["id"] for r in q["rows"]],
                                  queue=queue_served(state, filters), trail=trail.ids, read_after=marker)
            head, held = got.id, len(got.held)
            state[OPEN_KEY] = None if got.id is None else {"id": got.id, "other_tab": got.other_tab,
                                                           "renewed": time.monotonic()}
        else:
            head = q["rows"][0]["id"] if q["rows"] and not holding else None
        current_id = trail.current(head)
    else:
        current_id = trail.current(None)
        if holding and (kept is None or kept["id"] != current_id):  # K, J along the trail, a link, a table
            got = audit.open_item(workspace, who, tab, current_id, trail=trail.ids)
            state[OPEN_KEY] = {"id": current_id, "other_tab": got.other_tab, "renewed": time.monotonic()}
        elif holding:
            keep_open(workspace, who, state)
    sampled = state.setdefault("audit_sampling", {})
    sampled.update({r["id"]: r.get("sampling") for r in q["rows"] if r["id"] == current_id and r.get("sampling")})
    remaining = q["total"] - (len(trail.ids) - opened_before)
    # The queue without the item just opened. The next key's queue is made from q, kept, without a
    # read, even after my decision on this item (lsqa.audit.priority_queue).
    upcoming = [r for r in q["rows"] if r["id"] != current_id]
    state["audit_at"] = trail.at
    why = state.setdefault("audit_why", {})
    why.update({r["id"]: why_shown(r) for r in q["rows"] if r["id"] == current_id and "priority" in r})
    opened = state.setdefault("audit_opened", {})
    if current_id and current_id not in opened:
        # Served: the marker read before the queue. Reviews since then are in the item read next, and
        # warned of as late, which errs on the side of saying too much.
        opened[current_id] = marker if marker is not None else audit.opened_marker(workspace)
    other_tab = bool(holding and current_id and (state.get(OPEN_KEY) or {}).get("other_tab"))
    return Place(current_id=current_id, remaining=remaining, upcoming=upcoming, why=why, sampled=sampled,
                 opened=opened, held=held, other_tab=other_tab)


def keep_open(workspace: Path, who: Person | str | None, state: MutableMapping) -> None:
    """Renew the hold of this tab's open item once ``audit.RENEW_EVERY_S`` have passed since the last
    time (the page calls it on every run and from a fragment that runs that often); an item the tab
    no longer holds is opened again."""
    kept = state.get(OPEN_KEY)
    if who is None or not kept or time.monotonic() - kept["renewed"] < audit.RENEW_EVERY_S:
        return
    if not audit.keep_open(workspace, who, state[TAB_KEY], kept["id"]):
        audit.open_item(workspace, who, state[TAB_KEY], kept["id"])
    kept["renewed"] = time.monotonic()


def opened_again(state: MutableMapping) -> None:
    """After a decision refused as already made: the item is opened again at the next run, so that it
    shows what I decided (and one key changes it)."""
    state[OPEN_KEY] = None


def to_queue_head(state: MutableMapping) -> None:
    """A search typed: the trail stays (K goes back to the items opened before it, as after a reload),
    and the position moves past its end, to the head of the queue searched (the items on the trail are
    left out of it, as they are of any queue)."""
    state["audit_at"] = len(state.get("audit_trail") or [])


def position_line(trail: Trail, remaining: int, why: str) -> str:
    """"Item i of N" and why the item is in the queue, for the decision bar (Markdown)."""
    i, n = trail.position(remaining)
    return f"**Item {i:,} of {n:,}** · {md(why)}"


# ------------------------------------------------------------------------------------ actions

def late_reviewers(workspace: Path, judgment_id: str, annotator: str, opened_at: int) -> list[str]:
    """Others who reviewed the item after I opened it (``opened_at``: ``audit.opened_marker`` then)."""
    if not annotator:
        return []
    return sorted({r["annotator"] for r in audit.reviewed_since(workspace, judgment_id, annotator, opened_at)})


def late_warning(names: list[str]) -> str:
    """The warning over an item others reviewed after I opened it (Markdown)."""
    return f"{md(', '.join(names))} reviewed this item after you opened it."


def save_decision(workspace: Path, annotator: Person | str, judgment_id: str, kind: str, shown: str | None,
                  label: str | None, note: str, sampling_of: dict | None, opened_at: int,
                  tab: str | None = None) -> str:
    """Confirm the judge's label (no ``label``) or save mine (system terms); what the screen says
    then, in the terms shown (``shown``), with a note when others reviewed the item meanwhile.
    ``tab``: this page's tab: written only on the item open there, once (``lsqa.audit.open_items``).
    Raises what ``audit.confirm`` / ``audit.review`` refuse (nothing saved)."""
    if label is None:
        audit.confirm(workspace, annotator, judgment_id, note, sampling=sampling_of, tab=tab)
        action = "confirm"
    else:
        action = audit.review(workspace, annotator, judgment_id, label, note, sampling=sampling_of, tab=tab)["action"]
    names = late_reviewers(workspace, judgment_id, annotator.name if isinstance(annotator, Person) else annotator,
                           opened_at)
    late = f" — note: {', '.join(names)} reviewed this item after you opened it" if names else ""
    return audit.saved_message(kind, shown, action) + late


def flag_reference(workspace: Path, annotator: Person | str, question_id: str, reference: str, reason: str, note: str) -> str:
    """Flag a reference of the question (paper §5.2, Appendix E: NarrativeQA references can be
    wrong); what the screen says then."""
    audit.flag(workspace, annotator, question_id, reference, reason, note)
    return f"Flagged reference {reference} as {reason}"


def undo_mine(workspace: Path, annotator: Person | str) -> str:
    """Withdraw my latest action; what the screen says then."""
    return undo_mine_at(workspace, annotator)[0]


def undo_mine_at(workspace: Path, annotator: Person | str) -> tuple[str, str | None]:
    """Withdraw my latest action: what the screen says then, and the verdict to show again (the one
    whose review was undone; None for a flag, which belongs to a question, or nothing undone)."""
    undone = audit.undo_last(workspace, annotator)
    if not undone:
        return "Nothing of yours to undo", None
    return "Undone: " + audit.describe_action(undone), undone["target"] if undone["what"] == "review" else None


def skip_item(workspace: Path, annotator: Person | str, judgment_id: str, reason: str, note: str,
              tab: str | None = None) -> str:
    """Pass the item over (``audit.skip``, from ``tab``: only its open item); what the screen says then."""
    audit.skip(workspace, annotator, judgment_id, reason, note, tab=tab)
    return "Skipped (recorded, not a label)" if reason == "skip" else "Marked unsure and passed over (recorded, not a label)"


# ------------------------------------------------------------------------------------- the item

# A decision-bar button that writes keeps its widget key from item to item: a key naming the item (as
# first built) made each J a new widget for each of 9 buttons, unmounted and drawn anew
# (~100 DOM nodes a key): keypress -> next item 1.5x the time before with the browser's CPU
# slowed 4x, 1.01-1.09x with the same keys (docs/benchmarks-log/2026-12-03-keys-second-pass.md).
# Which item a click writes on is checked against the item the browser had drawn instead: ON_SCREEN_KEY on the
# Adjudicate page, the press's ``on_screen`` on the Audit desk (lsqa.dashboard.audit_desk).
WRITES = "__writes"
# A hidden field drawn after the item's question and answers, its value the item's id. The browser sends
# every widget's value with a click or key, as it has drawn them: this one names the item whose cards it
# had drawn when the key was pressed (the item before, if the next one was not drawn yet).
ON_SCREEN_KEY = "audit_on_screen"


def write_key(name: str) -> str:
    """The widget key of a decision-bar button that writes: ``name`` and ``WRITES``, the same on every
    item. The page's keys.js holds such a button's key while the page is busy and lets it act only on
    the item the bar and the cards are stamped with (``item_cards.stamped``)."""
    return name + WRITES


def writes(key: str) -> bool:
    """Whether a decision-bar button (by its key, ``write_key``) writes."""
    return key.endswith(WRITES)


def stale_refusal(pressed_on: str, shown: str | None, drawn: str | None) -> str | None:
    """Why a key pressed on item ``pressed_on`` (the item of the button's last run) must not write, if
    it must not: the item on screen is now ``shown`` (None: none is, the page is between two items), or
    the browser had drawn another item, ``drawn`` (``ON_SCREEN_KEY`` as it sent it), when the key was
    pressed. The write happens only on the item that was on screen when the key was pressed."""
    if pressed_on == shown == drawn:
        return None
    return ("Not saved: the item changed under your key (it was pressed on an item no longer on screen). "
            "Nothing was written; press it again for this item.")


@dataclass
class DecisionBar:
    """The decision bar's buttons, row by row, each as the keyword arguments of its button with
    ``on``, the page's callback for it: ``move`` (along the trail), ``undo``, ``decide`` (confirm or a
    label), ``reason`` (of the next flag), ``flag``."""

    nav: list[dict]
    position: str = ""  # "Item i of N" and why (Markdown), stamped with the item (item_cards.stamped: HTML on)
    labels: list[dict] = field(default_factory=list)
    flags: list[dict] = field(default_factory=list)
    blind_note: str | None = None
    mine: str | None = None  # "You decided: … — press a label key again to change it" (Markdown)


# Passing an item over (``audit.skip``): recorded with who and when, never a label.
SKIP_BUTTONS = (("skip", "Skip", "Pass this item over (the note, if any, says why): recorded, not a label"),
                ("unsure", "Unsure", "Pass this item over as unsure: recorded, not a label"))
FLAG_REASON_DEFAULT = "wrong"  # the reason each item starts from (a reason chosen holds for its item only)


def decision_bar(it: dict | None, revealed: bool, annotator: str, trail: Trail, remaining: int, why: dict,
                 reason_now: str) -> DecisionBar:
    """What the decision bar offers for item ``it`` (None: nothing matches the filters), which of its
    keys are off and why. Without an annotator the decision keys do nothing; blind (not revealed),
    Confirm is off, as it would show the judge's label. Labels are offered in the positions shown
    and passed on in system terms too, as stored."""
    nav = [{"label": "Previous", "shortcut": SHORTCUTS["previous"], "on": "move", "args": ("back",),
            "disabled": not trail.can_go_back(), "key": "audit_prev"},
           {"label": "Next", "shortcut": SHORTCUTS["next"], "on": "move", "args": ("forward",),
            "disabled": not trail.can_go_forward(remaining), "key": "audit_next"},
           {"label": "Undo my last", "shortcut": SHORTCUTS["undo"], "on": "undo", "disabled": not annotator,
            "key": "audit_undo"}]
    if it is None:
        return DecisionBar(nav=nav)
    shown_label = it["shown_label"] if it["status"] == "ok" else None
    labels = [{"label": "Confirm", "type": "primary", "shortcut": SHORTCUTS["confirm"], "on": "decide",
               "args": (it["id"], it["kind"], shown_label),
               "disabled": not annotator or it["status"] != "ok" or not revealed, "key": write_key("audit_confirm"),
               "help": "Hidden while blind: give your own label" if not revealed else None}]
    labels += [{"label": opt["text"], "shortcut": opt["shortcut"], "on": "decide",
                "args": (it["id"], it["kind"], opt["shown"],
                         audit.to_system_label(it["kind"], opt["shown"], it["shown_order"])),
                "disabled": not annotator, "key": write_key(f"audit_opt_{opt['key']}")} for opt in it["options"]]
    labels += [{"label": text, "shortcut": SHORTCUTS[reason], "on": "skip", "args": (it["id"], reason),
                "disabled": not annotator, "key": write_key(f"audit_{reason}"), "help": helptext}
               for reason, text, helptext in SKIP_BUTTONS]
    flags = [{"label": reason, "shortcut": key, "on": "reason", "args": (reason,), "key": f"audit_reason_{reason}",
              "type": "primary" if reason == reason_now else "secondary", "help": "Reason for the next flag"}
             for reason, key in audit.FLAG_REASON_KEYS.items()]
    flags += [{"label": f"Flag reference {n}", "shortcut": SHORTCUTS[f"flag:{n}"], "on": "flag",
               "args": (it["question_id"], n, it["id"]), "disabled": not annotator,
               "key": write_key(f"audit_flag{n}")} for n in ("1", "2")]
    # Why the item is in the queue is judge-derived (other verdicts differ, the judge flips, a flagged
    # reference, its priority): hidden while blind, as the judge's label is.
    reason = why.get(it["id"], "opened before") if revealed else "why it is in the queue: hidden while blind"
    return DecisionBar(nav=nav, position=item_cards.stamped(position_line(trail, remaining, reason), it["id"]),
                       labels=labels, flags=flags, mine=my_decision(it, annotator),
                       blind_note=None if revealed else ("Blind: the judge's label, other annotators' labels and "
                                                         "system names appear once you decide; Confirm (V) is off "
                                                         "until then."))


def my_decision(it: dict, annotator: str) -> str | None:
    """What I decided on this item, if I did, in the terms shown (Markdown): a label key on it now is
    a change of that decision (``lsqa.audit.open_items``)."""
    if not annotator:
        return None
    for lab in it.get("human_labels") or ():
        if lab["annotator"] == annotator:
            said = md(audit.shown_text(it["kind"], lab["shown_label"]))
            return f"You decided: **{said}** — press a label key again to change it."
    return None


@dataclass
class ItemView:
    """One item as the page draws it: each field one element (Markdown or HTML), None or empty when
    not drawn."""

    caption: str
    question_html: str
    answers_html: str
    verdict: str | None  # the judge's verdict, once revealed
    human_labels: list[str]  # the annotators' labels so far, once revealed
    unusable: str | None  # the judge's output could not be used
    evidence: list[dict]  # {"found", "caption", "html", "html_full", "folded"}


def item_view(it: dict, revealed: bool, annotator: str = "") -> ItemView:
    """What the page shows of one item (``audit.item``). Not revealed (blind, undecided): what
    ``audit.blind_copy`` keeps of it for ``annotator`` — the answers are "answer A" / "answer B",
    without the judge's label, score, notes or evidence attribution, nor other people's labels and flags."""
    if not revealed and it.get("revealed") is not False:
        it = audit.blind_copy(it, annotator)

    def sys_name(name: str, position: str = "") -> str:
        return name if revealed else f"answer {position}".strip()

    caption = (f"{md(it['title'])} · {md(it['question_id'])} · judge **{md(it['judge'])}** ({md(it['kind'])})"
               + (f" · prompt {md(it['prompt_version'])}" if it["prompt_version"] else ""))
    question = item_cards.question_card(it["question"], it["references"], used=it["reference_used"],
                                        flags=common.group_by(it["flags"], "reference"), item_id=it["id"])
    answers = [((f"Answer {a['position']}: " if a["position"] and revealed else "") + sys_name(a["system"], a["position"]),
                a["text"] or f"[{a['status']}]") for a in it["answers"]]
    answers_html = item_cards.answer_cards("Answers, in the order the judge saw them" if it["pairwise"] else "Answer",
                                           answers, item_id=it["id"])
    verdict, labels = None, []
    if revealed:
        if it["status"] == "ok":
            if it["pairwise"]:  # what the judge said about the positions shown, then what it means for the systems
                said = f"“{md(it['raw_label'] or it['shown_label'])}” (positions as shown) → {md(it['label_text'])}"
            else:
                said = f"**{md(it['label'])}**"
            score = f" (score {it['score']:.3f})" if it["score"] is not None else ""
            verdict = f"**Verdict of {md(it['judge'])}:** {said}{score}"
        labels = [f"{md(lab['annotator'])}: {lab['action']} → {md(audit.shown_text(it['kind'], lab['shown_label']))}"
                  + (f" — {md(lab['note'])}" if lab["note"] else "") for lab in it["human_labels"]]
    unusable = (f"The judge's output could not be used ({it['status']}); give the label yourself."
                if it["status"] != "ok" else None)
    return ItemView(caption=caption, question_html=question, answers_html=answers_html, verdict=verdict,
                    human_labels=labels, unusable=unusable, evidence=evidence_blocks(it, revealed))


def evidence_blocks(it: dict, revealed: bool = True) -> list[dict]:
    """The judge's evidence as the page shows it: quotes found in the book in their passage, folded
    to a few sentences (``html``, the whole passage in ``html_full``), each with a caption saying
    where it was found and which shown answer it is about; text not found as the judge's note. Not
    revealed (``it`` a blind copy): the passages only, about no answer in particular."""
    out = []
    for ev in it["evidence"]:
        about = audit.evidence_label(ev, it["pairwise"]) if revealed else ""
        if ev["found"]:
            caption = (f"Found in the book ({md(ev['where'])}" + (", spacing/case differ" if ev["how"] == "whitespace"
                                                                  else "") + ")" + (f" — for {md(about)}" if about else ""))
        else:
            caption = ("The judge's note" + (f" on answer {ev['about']}" if ev["about"] else "")
                       + " (not found in the book: an explanation or a paraphrase):")
        out.append({"found": ev["found"], "caption": caption, "html": ev["html"], "html_full": ev["html_full"],
                    "folded": ev["folded"]})
    return out


def guidelines_label(kind: str, guide: dict) -> str:
    """The label of the guidelines' panel: the judge kind, and who edited them if anyone did."""
    return f"Guidelines for {kind} verdicts" + ("" if guide["is_default"] else f" (edited by {guide['edited_by']})")


def save_guidelines(workspace: Path, who: Person | str, kind: str, text: str) -> str:
    """Save edited guidelines for a judge kind (a new version in the workspace) as ``who``; what the
    screen says then."""
    guidelines.save(workspace, kind, text, who)
    return f"Guidelines for {kind} verdicts saved in this workspace"


PROMPT_SHOWN_CHARS = 20_000  # a prompt can carry a whole book: the panel shows its start


def prompt_shown(workspace: Path, judgment_id: str) -> str:
    """The start of the prompt the verdict's judge was sent ("" without a recorded call)."""
    return audit.prompt_of(workspace, judgment_id)[:PROMPT_SHOWN_CHARS]


# ------------------------------------------------------------------------------------- tables

UP_NEXT_ROWS = 20  # a look ahead, not the queue: a 100-row table redrawn on every J slowed each key


def recent_table(mine: list[dict]) -> list[dict]:
    """My recent reviews (``audit.recent``) as the table shows them."""
    return [{k: r[k] for k in ("question", "judge", "my label", "action", "when")} for r in mine]


def no_recent_note(annotator: str) -> str:
    return "Nothing reviewed yet." if annotator else "Enter your name to see your reviews."


def up_next_caption(remaining: int, upcoming: list[dict]) -> str:
    more = f"; the next {UP_NEXT_ROWS} in queue order" if len(upcoming) > UP_NEXT_ROWS else ""
    return f"{remaining:,} not opened yet{more}. The filters in the sidebar narrow the queue."


def up_next_table(upcoming: list[dict], blind: bool) -> list[dict]:
    """The first ``UP_NEXT_ROWS`` of the queue after this item, one row each; blind, without the
    systems, the judge's label and the priority and its reasons (other verdicts, flags: judge-derived)."""
    return [{**({} if blind else {"priority": r.get("priority"), "why": r.get("why")}),
             "judge": r.get("judge"), "book": r.get("title"), "question": r.get("question_id"),
             **({} if blind else {"system_a": r.get("system_a"), "system_b": r.get("system_b"),
                                  "label": r.get("label")}),
             "reviewers": r.get("n_reviewers")} for r in upcoming[:UP_NEXT_ROWS]]


def evidence_chain_link(it: dict) -> str:
    """A Markdown link from an item to its book's *Long span* tab on the Corpus page: where
    the question's evidence lies in the book, with its entity's mention chain. Relative, as the rank
    flips' links, so that it works under a base path; it reveals nothing of the verdict."""
    return f"[where in the book]({'corpus?book=' + quote(it['document_id'], safe='')}&tab=long-span)"
