"""Where an annotator is in the audit queue: the items opened this session, in order, and a position.

The "not reviewed by me" queue shrinks with every decision, so a position in the queue alone
never moves and cannot go back. The trail keeps every item opened so far: Previous goes back along
it (to change a decision: a new review row, as always), Next goes forward along it and, at its end,
opens the head of the queue with the trail left out. "Item i of N" counts the trail plus what the
queue still holds. When the queue has nothing left, the position is past the trail's end and no item
is current: the queue has ended (the page says so and offers no decision), K still goes back.
Pure: the page keeps ``at`` in its session and ``ids`` per person in the workspace
(``lsqa.audit.open_items``), so that K goes back along them after a reload and in a new tab.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Trail:
    ids: list[str] = field(default_factory=list)
    at: int = 0  # index into ids; len(ids) means "the head of the queue, not opened yet"

    def current(self, queue_head: str | None) -> str | None:
        """The item to show; the queue's head is added to the trail when the position is past its end.
        None: the position is past the end and the queue has nothing left (it has ended)."""
        if self.at < len(self.ids):
            return self.ids[self.at]
        if queue_head is None:
            self.at = len(self.ids)
            return None
        self.ids.append(queue_head)
        self.at = len(self.ids) - 1
        return queue_head

    def open(self, judgment_id: str) -> None:
        """Jump to an item (from the queue table or my recent reviews): it becomes the newest in the trail."""
        if self.ids and self.at < len(self.ids) and self.ids[self.at] == judgment_id:
            return
        if judgment_id in self.ids:
            self.ids.remove(judgment_id)
        self.ids.append(judgment_id)
        self.at = len(self.ids) - 1

    def back(self) -> None:
        self.at = max(0, min(self.at, len(self.ids)) - 1)

    def forward(self) -> None:
        self.at = min(self.at + 1, len(self.ids))

    def can_go_back(self) -> bool:
        return self.at > 0

    def can_go_forward(self, remaining: int) -> bool:
        return self.at < len(self.ids) - 1 or remaining > 0

    def position(self, remaining: int) -> tuple[int, int]:
        """(i, N) for "Item i of N": N is the trail plus the queue items not opened yet."""
        return self.at + 1, len(self.ids) + remaining
