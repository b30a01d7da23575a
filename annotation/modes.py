"""Annotation modes: who gives a pair's second (overlap) judgement, one strategy object per mode.

`Project.overlap_mode` names a mode; `mode_for(project)` returns its strategy. Every place that depends on
the mode asks the strategy instead of branching on the value:

- the scheduler (`services/scheduling._pick`) serves the pairs waiting for another judgement that
  `strategy.waiting_for(...)` lets this annotator take, and marks them `is_repeat` when `strategy.marks_repeat`;
- `selectors.batches_with_work_for` uses the same filter to tell whether a batch has work for someone;
- a late answer on a released set (`services/judgements._retake_expired`) is refused when the annotator holds
  another live presentation of the pair unless `strategy.same_annotator_twice`;
- the in-memory simulation (`services/simulation._Pool`) draws second judges with `strategy.waiting_in_memory`,
  the same rule over its lists.

Pilot batches (every member judges every pair) are a property of the batch, not a mode: they ignore it.
How to add a mode: docs/ARCHITECTURE.md, "How to add an annotation mode".
"""
from __future__ import annotations

import functools
import heapq
import operator
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator

from django.db.models import Q

from annotation.models import Assignment, Judgement, Project
from core.registries import Registry


class OverlapStrategy(ABC):
    """One annotation mode. Subclasses set `mode` (a `Project.OverlapMode` value) and the two flags, and
    write `waiting_for` (SQL) and `waiting_in_memory` (the simulation's lists) with the same rule."""

    mode: str = ""
    marks_repeat: bool = False  # a second presentation is the same annotator's repeat (Assignment.is_repeat)
    same_annotator_twice: bool = False  # one person may hold two live presentations of a pair
    chooses_fresh: bool = False  # new pairs chosen from the batch's posterior (annotation.stats.pair_selection), not by rank

    @abstractmethod
    def waiting_for(self, *, user, batch_ids: list[int]) -> Q:
        """A filter on `Pair`: among the pairs of `batch_ids` waiting for another judgement
        (1 ≤ taken < planned), those `user` may be served."""

    @abstractmethod
    def waiting_in_memory(self, *, waiting: dict[int | None, list[int]], uid: int, seen: set[int],
                          judged: set[int]) -> Iterator[int]:
        """`waiting_for` over the simulation's lists: `waiting` maps a pair's first judge to the indices of
        their pairs that wait for another judgement (each list in rank order); `seen` are the pairs with a
        live presentation to `uid`, `judged` those `uid` judged. Yields indices in rank order."""


def _merged(lists: list[list[int]]) -> Iterable[int]:
    return heapq.merge(*lists) if len(lists) > 1 else iter(lists[0] if lists else [])


class InterAnnotator(OverlapStrategy):
    """The second judgement comes from another annotator, who was never shown the pair."""

    mode = Project.OverlapMode.INTER

    def waiting_for(self, *, user, batch_ids):
        mine = Assignment.objects.filter(pair__batch_id__in=batch_ids, annotator=user).exclude(
            status=Assignment.Status.EXPIRED)
        return ~Q(first_annotator=user) & ~Q(pk__in=mine.values("pair_id"))

    def waiting_in_memory(self, *, waiting, uid, seen, judged):
        return (i for i in _merged([items for first, items in waiting.items() if first != uid]) if i not in seen)


class Retest(OverlapStrategy):
    """Test–retest: the second judgement is the same annotator's repeat of a pair they judged first, in a later set."""

    mode = Project.OverlapMode.RETEST
    marks_repeat = True
    same_annotator_twice = True

    def waiting_for(self, *, user, batch_ids):
        judged = Judgement.objects.filter(batch_id__in=batch_ids, annotator=user, undone_at__isnull=True)
        return Q(first_annotator=user) & Q(pk__in=judged.values("pair_id"))

    def waiting_in_memory(self, *, waiting, uid, seen, judged):
        return (i for i in waiting.get(uid, []) if i in judged)


class Adaptive(InterAnnotator):
    """Adaptive pair selection (ASAP's information gain, `annotation.stats.pair_selection`): a set's new pairs are
    the most informative under the batch's current posterior, plus a random share; the overlap pairs are judged
    again by another annotator, as in inter-annotator mode. The scheduler asks `chooses_fresh`."""

    mode = Project.OverlapMode.ADAPTIVE
    chooses_fresh = True


_MODES: Registry[OverlapStrategy] = Registry("annotation mode")


def register_mode(strategy: OverlapStrategy) -> OverlapStrategy:
    """Register a strategy under its `mode` (a repeated mode is refused). Returns it."""
    if not strategy.mode:
        raise ValueError(f"{type(strategy).__name__} names no mode.")
    return _MODES.add(str(strategy.mode), strategy)


def mode_strategy(mode: str) -> OverlapStrategy:
    try:
        return _MODES[mode]
    except KeyError:
        raise ValueError(f"No annotation mode {mode!r}; known: {', '.join(sorted(_MODES))}.") from None


def mode_for(project: Project) -> OverlapStrategy:
    """The strategy of the project's `overlap_mode`."""
    return mode_strategy(project.overlap_mode)


def registered_modes() -> dict[str, OverlapStrategy]:
    return dict(_MODES)


def waiting_q_by_project_mode(*, user, batch_ids: list[int]) -> Q:
    """For pairs of batches in projects of any mode: each mode's `waiting_for` under its projects (one filter)."""
    parts = [Q(batch__project__overlap_mode=mode) & strategy.waiting_for(user=user, batch_ids=batch_ids)
             for mode, strategy in _MODES.items()]
    return functools.reduce(operator.or_, parts)


register_mode(InterAnnotator())
register_mode(Retest())
register_mode(Adaptive())
