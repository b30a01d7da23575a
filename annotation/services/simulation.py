"""Simulated annotators: judgements drawn from latent strengths under the scheduler's rules, so
dashboards and budgets can be tried before anyone annotates.

Latent strength of a candidate: its imported gold score times a scale c (candidates without gold: a draw of
N(0, 0.25²) from the seed, the gold's spread, times c). Each simulated annotator k chooses A over B with probability
σ((θ_A − θ_B) / s_k), where s_k = noise · (0.5 + k / (N − 1)) spreads annotators from careful to sloppy.

The scale is calibrated (`noise_calibration`): c makes two simulated annotators (at noise 1) agree on a random pair
as often as real ones did: the project's own annotators, measured on the pairs two of them judged, when it has at
least `MIN_CALIBRATION_UNITS` such pairs outside adaptive selection (adaptive projects double close pairs, where
agreement is lower than on random pairs); otherwise the DBBE STS gold's annotators (Fleiss κ 0.6584 → 0.829, c ≈ 19
on the first reference). `calibrate=False` gives the old fixed c = 6 (agreement 0.671: three times noisier).

`simulate_annotations` runs the scheduler of `annotation.services.scheduling` in memory (the same
rules: sets of `set_size`, `overlap_per_set` second judgements first, fresh pairs by rank, promotion
of fresh pairs to two judgements, never a pair twice to one person, pilot batches in full) and
writes sets, assignments, judgements and pair counters in bulk, one transaction per batch with the
batch's pairs locked. `simulate_annotations_via_services` records the same through `set_next` and
`judgement_submit` one request's worth at a time (the old way, ~50 judgements/s; kept as the
reference the tests and `perf/simulation_bench.py` compare with).
"""
from __future__ import annotations

import bisect
import datetime as dt
import itertools
import random
import uuid

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from annotation.models import AnnotationSet, Assignment, Batch, BatchCandidate, Judgement, Pair, Project
from annotation.modes import OverlapStrategy, mode_for
from annotation.services.bulk import rows_insert
from annotation.services.judgements import judgement_submit
from annotation.services.projects import batch_plan_judgements, membership_add
from annotation.services.scheduling import set_next, sets_release_expired
from annotation.stats.pair_selection import DBBE_AGREEMENT, annotator_scales, calibrate_strength_scale
from core.services import user_create_or_update

GOLD_SCALE = 6.0  # the uncalibrated scale (`calibrate=False`)
NO_GOLD_SD = 1.5 / GOLD_SCALE  # the shape of candidates without gold: the gold's spread
MIN_CALIBRATION_UNITS = 30


def noise_calibration(project: Project) -> dict:
    """The agreement simulated annotators are calibrated to: {"agreement", "source", "n_units"}. The project's own
    (observed agreement on pairs two annotators judged, first judgements, attention checks left out) when it has
    `MIN_CALIBRATION_UNITS` such pairs and is not adaptive; else the DBBE STS gold's published agreement."""
    from annotation.analytics import load_project_data
    from annotation.stats import fleiss_kappa_symmetric

    if mode_for(project).chooses_fresh:
        why = "this project chooses pairs adaptively (its doubled pairs are close ones)"
    else:
        judgements = load_project_data(project).judgements
        result = fleiss_kappa_symmetric(judgements) if len(judgements) else None
        n_units = result.n_units if result is not None else 0
        if n_units >= MIN_CALIBRATION_UNITS and 0.5 < result.observed < 0.995:
            return {"agreement": float(result.observed), "n_units": int(n_units),
                    "source": f"this project's annotators: agreement {result.observed:.3f} on {n_units} pairs two of "
                              f"them judged"}
        why = (f"this project has {n_units} pairs judged by two annotators (calibration needs "
               f"{MIN_CALIBRATION_UNITS})" if n_units < MIN_CALIBRATION_UNITS else
               f"this project's agreement {result.observed:.3f} cannot calibrate a logistic choice")
    return {"agreement": DBBE_AGREEMENT, "n_units": 1448,
            "source": f"the DBBE STS gold's annotators: agreement {DBBE_AGREEMENT:.3f} (Fleiss κ 0.6584 on 1,448 "
                      f"doubled pairs), as {why}"}


def strength_shape(batch: Batch, rng: np.random.Generator) -> dict[int, float]:
    """Verse pk → the strength before scaling: the gold score, or a draw of N(0, NO_GOLD_SD²) without one."""
    return {cand.verse_id: float(cand.gold_score) if cand.gold_score is not None else float(rng.normal(0, NO_GOLD_SD))
            for cand in BatchCandidate.objects.filter(batch=batch).order_by("position")}


def calibrated_scale(shape: np.ndarray, agreement: float | None, annotators: int) -> float:
    """c for θ = c · shape (`pair_selection.calibrate_strength_scale` on a panel of `annotators` at noise 1); the
    uncalibrated GOLD_SCALE when `agreement` is None or the shape cannot reach it."""
    if agreement is None or len(shape) < 2:
        return GOLD_SCALE
    try:
        return calibrate_strength_scale(np.asarray(shape, float), agreement, annotator_scales(max(annotators, 2)))
    except ValueError:
        return GOLD_SCALE


def latent_strengths(batch: Batch, rng: np.random.Generator, agreement: float | None = None,
                     annotators: int = 11) -> dict[int, float]:
    """Verse pk → latent strength θ for the batch's candidates: c · shape, c calibrated to `agreement` (None: 6)."""
    shape = strength_shape(batch, rng)
    c = calibrated_scale(np.array(list(shape.values())), agreement, annotators)
    return {verse: c * value for verse, value in shape.items()}


def _simulated_users(project: Project, annotators: int) -> list:
    users = []
    for k in range(annotators):
        name = f"sim-{project.name}-{k + 1}"[:150]
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            user, _ = user_create_or_update(username=name, password=uuid.uuid4().hex, roles=("annotator",))
        membership_add(project=project, username=name, role="annotator")
        users.append(user)
    return users


def _scales(noise: float, annotators: int) -> list[float]:
    return [noise * (0.5 + (k / (annotators - 1) if annotators > 1 else 0.5)) for k in range(annotators)]


def _open_batches(project: Project, batch_ids: list[int] | None) -> list[Batch]:
    batches = Batch.objects.filter(project=project, status=Batch.Status.OPEN).select_related("project", "reference")
    if batch_ids:
        batches = batches.filter(pk__in=batch_ids)
    return list(batches)


class _Pool:
    """One batch's pairs and who saw what, for the in-memory scheduler (mirrors `scheduling._pick`)."""

    def __init__(self, batch: Batch, users: list):
        rows = list(Pair.objects.filter(batch=batch, attention_answer__isnull=True)
                    .select_for_update(of=("self",), no_key=True).order_by("rank")
                    .values_list("pk", "verse_a_id", "verse_b_id", "planned", "taken", "first_annotator_id"))
        self.pk = [r[0] for r in rows]
        self.a = [r[1] for r in rows]
        self.b = [r[2] for r in rows]
        self.planned = [r[3] for r in rows]
        self.taken = [r[4] for r in rows]
        self.first = [r[5] for r in rows]
        self.changed: set[int] = set()
        index = {pk: i for i, pk in enumerate(self.pk)}
        ids = [u.pk for u in users]
        self.seen = {uid: set() for uid in ids}  # pairs with a live presentation to the user
        for uid, pair_id in Assignment.objects.filter(pair__batch=batch, annotator_id__in=ids).exclude(
                status=Assignment.Status.EXPIRED).values_list("annotator_id", "pair_id"):
            if pair_id in index:  # attention checks are not in the pool
                self.seen[uid].add(index[pair_id])
        self.judged = {uid: set() for uid in ids}  # pairs the user judged (test–retest repeats)
        for uid, pair_id in Judgement.objects.filter(batch=batch, annotator_id__in=ids, undone_at__isnull=True).values_list(
                "annotator_id", "pair_id"):
            if pair_id in index:
                self.judged[uid].add(index[pair_id])
        # Pairs waiting for another judgement (1 ≤ taken < planned), by their first judge, in rank order.
        self.waiting: dict[int | None, list[int]] = {}
        for i in range(len(self.pk)):
            if 1 <= self.taken[i] < self.planned[i]:
                self.waiting.setdefault(self.first[i], []).append(i)
        self.fresh_cursor = 0  # pairs only go from taken 0 to 1 here, so fresh ones lie past this index

    def _waiting(self, uid: int, mode: OverlapStrategy, limit: int, exclude: set[int]) -> list[int]:
        if limit <= 0:
            return []
        candidates = mode.waiting_in_memory(waiting=self.waiting, uid=uid, seen=self.seen[uid], judged=self.judged[uid])
        return list(itertools.islice((i for i in candidates if i not in exclude), limit))

    def _fresh(self, limit: int) -> list[int]:
        out, i = [], self.fresh_cursor
        while len(out) < limit and i < len(self.pk):
            if self.taken[i] == 0:
                out.append(i)
            i += 1
        self.fresh_cursor = i
        return out

    def _unwait(self, i: int, first) -> None:
        items = self.waiting.get(first, [])
        at = bisect.bisect_left(items, i)
        if at < len(items) and items[at] == i:
            del items[at]

    def pick(self, uid: int, project: Project) -> list[tuple[int, bool, bool]]:
        """`scheduling._pick`: [(pair index, is_overlap, is_repeat)], counters updated."""
        size, overlap = project.set_size, project.overlap_per_set
        mode = mode_for(project)
        second = self._waiting(uid, mode, overlap, set())
        fresh = self._fresh(size - len(second))
        if len(second) + len(fresh) < size:
            second += self._waiting(uid, mode, size - len(second) - len(fresh), set(second))
        promote = set(fresh[: max(overlap - len(second), 0)])
        for i in second:
            self.taken[i] += 1
            if self.taken[i] >= self.planned[i]:
                self._unwait(i, self.first[i])
        for i in fresh:
            self.taken[i] = 1
            self.first[i] = uid
            if i in promote:
                self.planned[i] = max(self.planned[i], 2)
            if self.planned[i] > 1:
                bisect.insort(self.waiting.setdefault(uid, []), i)
        self.changed.update(second, fresh)
        self.seen[uid].update(second, fresh)
        self.judged[uid].update(second, fresh)
        return [(i, True, mode.marks_repeat) for i in second] + [(i, i in promote or self.planned[i] > 1, False) for i in fresh]

    def pick_pilot(self, uid: int, project: Project) -> list[tuple[int, bool, bool]]:
        picks = [i for i in range(len(self.pk)) if i not in self.seen[uid]][: project.set_size]
        self.seen[uid].update(picks)
        return [(i, True, False) for i in picks]

    def write_counters(self) -> None:
        rows = [(self.taken[i], self.planned[i], self.first[i], self.pk[i]) for i in sorted(self.changed)]
        if rows:
            table = connection.ops.quote_name(Pair._meta.db_table)
            with connection.cursor() as cursor:
                cursor.executemany(f"UPDATE {table} SET taken = %s, planned = %s, first_annotator_id = %s WHERE id = %s",
                                   rows)


def simulate_annotations(
    *, project: Project, annotators: int = 3, judgements_per_pair: int = 1, noise: float = 1.0, seed: int = 0,
    batch_ids: list[int] | None = None, max_judgements: int | None = None, progress=None, calibrate: bool = True,
    attention_fail_rate: float = 0.0,
) -> dict:
    """Run simulated annotators until the batches have no pairs left for them (or a cap is hit).

    Annotators take turns set by set, as `simulate_annotations_via_services` does; each judges every
    pair of the set at once. Returns counts per batch, the users created (`sim-<project>-<k>`) and the noise
    calibration used (`noise_calibration`, read before any simulated judgement is written). On attention checks
    annotator k chooses the wrong candidate with probability `attention_fail_rate` · s_k / noise (`_fail_rates`:
    the panel's mean is the rate, the sloppy fail more often than the careful), so the dashboard flags some of them
    as it flags real annotators (checks passed below 80 %).
    """
    if not 0.0 <= attention_fail_rate <= 1.0:
        raise ValueError(f"attention_fail_rate must be between 0 and 1, not {attention_fail_rate}")
    rng = np.random.default_rng(seed)
    calibration = noise_calibration(project) if calibrate else None
    agreement = calibration["agreement"] if calibration else None
    users = _simulated_users(project, annotators)
    scale = np.array(_scales(noise, annotators))
    summary = {"annotators": [u.username for u in users], "batches": {}, "calibration": calibration}
    total = 0
    batches = _open_batches(project, batch_ids)
    for b_index, batch in enumerate(batches):
        if max_judgements and total >= max_judgements:
            break
        cap = max_judgements - total if max_judgements else None
        if mode_for(project).chooses_fresh or (
                project.attention_per_set and Pair.objects.filter(batch=batch, attention_answer__isnull=False).exists()):
            # Adaptive batches (each set depends on the judgements before it) and sets that carry attention checks
            # are served by the scheduler itself, one set at a time.
            count = simulate_annotations_via_services(
                project=project, annotators=len(users), judgements_per_pair=judgements_per_pair, noise=noise,
                seed=int(rng.integers(2**31)), batch_ids=[batch.pk], max_judgements=cap, agreement=agreement,
                calibrate=calibrate, attention_fail_rate=attention_fail_rate)["judgements"]
            summary["batches"][batch.name] = count
            total += count
            continue
        count = _simulate_batch(batch=batch, project=project, users=users, scale=scale, rng=rng,
                                judgements_per_pair=judgements_per_pair, cap=cap, agreement=agreement)
        summary["batches"][batch.name] = count
        total += count
        if progress:
            progress((b_index + 1) / len(batches), f"{batch.name}: {count} judgements")
    summary["judgements"] = total
    return summary


@transaction.atomic
def _simulate_batch(*, batch: Batch, project: Project, users: list, scale: np.ndarray, rng: np.random.Generator,
                    judgements_per_pair: int, cap: int | None, agreement: float | None) -> int:
    if judgements_per_pair > 1 and not batch.pilot:
        batch_plan_judgements(batch=batch, per_pair=judgements_per_pair)
    now = timezone.now()
    sets_release_expired(batch=batch, now=now)
    theta = latent_strengths(batch, rng, agreement, len(users))
    count = _finish_open_sets(batch=batch, users=users, scale=scale, rng=rng, theta=theta, cap=cap)
    pool = _Pool(batch, users)
    timeout = dt.timedelta(minutes=project.set_timeout_minutes)
    planned_sets: list[tuple[int, list[tuple[int, bool, bool]], int]] = []  # (user index, picks, judged in it)
    active = list(range(len(users)))
    while active and (cap is None or count < cap):
        for k in list(active):
            picks = pool.pick_pilot(users[k].pk, project) if batch.pilot else pool.pick(users[k].pk, project)
            if not picks:
                active.remove(k)
                continue
            order = rng.permutation(len(picks))
            picks = [picks[i] for i in order]
            judged = len(picks) if cap is None else min(len(picks), cap - count)
            planned_sets.append((k, picks, judged))
            count += judged
            if cap is not None and count >= cap:
                active = []
                break
    if not batch.pilot:
        pool.write_counters()
    _write(batch=batch, users=users, pool=pool, planned_sets=planned_sets, theta=theta, scale=scale, rng=rng,
           now=now, timeout=timeout)
    return count


def _write(*, batch, users, pool: _Pool, planned_sets, theta, scale, rng, now, timeout) -> None:
    """Sets, assignments and judgements of the planned sets in bulk; the simulated clock of each
    annotator advances by its response times and ends now."""
    n_items = sum(len(picks) for _, picks, _ in planned_sets)
    if not n_items:
        return
    pair_of = np.array([i for _, picks, _ in planned_sets for i, _, _ in picks], np.int64)
    user_of = np.repeat([k for k, _, _ in planned_sets], [len(picks) for _, picks, _ in planned_sets])
    a = np.array(pool.a, np.int64)[pair_of]
    b = np.array(pool.b, np.int64)[pair_of]
    th_a = np.array([theta[v] for v in a.tolist()])
    th_b = np.array([theta[v] for v in b.tolist()])
    p_a = 1.0 / (1.0 + np.exp(-(th_a - th_b) / scale[user_of]))
    chosen = np.where(rng.random(n_items) < p_a, a, b)
    left_is_a = rng.random(n_items) < 0.5
    response = rng.integers(800, 6000, n_items)
    clock = np.zeros(len(users))
    stamps = np.empty(n_items)
    for row, k in enumerate(user_of.tolist()):
        clock[k] += response[row] / 1000.0
        stamps[row] = clock[k]
    shift = clock.max()
    times = [now - dt.timedelta(seconds=float(shift - s)) for s in stamps]
    sets, row = [], 0
    for k, picks, judged in planned_sets:
        complete = judged == len(picks)
        start = times[row] - dt.timedelta(milliseconds=int(response[row]))
        sets.append(AnnotationSet(
            batch=batch, annotator=users[k], status=AnnotationSet.Status.COMPLETED if complete else AnnotationSet.Status.OPEN,
            expires_at=start + timeout if complete else now + timeout,
            completed_at=times[row + judged - 1] if complete else None))
        row += len(picks)
    AnnotationSet.objects.bulk_create(sets, batch_size=2000)
    assignments, row = [], 0
    for annotation_set, (k, picks, judged) in zip(sets, planned_sets):
        for position, (i, is_overlap, is_repeat) in enumerate(picks):
            left, right = (a[row], b[row]) if left_is_a[row] else (b[row], a[row])
            assignments.append(Assignment(
                set=annotation_set, pair_id=pool.pk[i], annotator=users[k], position=position, left_id=int(left),
                right_id=int(right), is_overlap=is_overlap, is_repeat=is_repeat,
                status=Assignment.Status.DONE if position < judged else Assignment.Status.OPEN))
            row += 1
    Assignment.objects.bulk_create(assignments, batch_size=5000)
    judgement_rows, row = [], 0
    uuid_prep = Judgement._meta.get_field("client_uuid").get_db_prep_value
    time_prep = Judgement._meta.get_field("created").get_db_prep_value
    for annotation_set, (k, picks, judged) in zip(sets, planned_sets):
        for position in range(len(picks)):
            if position < judged:
                assignment = assignments[row]
                judgement_rows.append((
                    assignment.pk, users[k].pk, assignment.pair_id, batch.pk, annotation_set.pk, int(chosen[row]),
                    assignment.left_id, int(chosen[row]) == assignment.left_id, int(response[row]),
                    uuid_prep(uuid.uuid4(), connection), time_prep(times[row], connection)))
            row += 1
    rows_insert(Judgement._meta.db_table, ["assignment_id", "annotator_id", "pair_id", "batch_id", "set_id", "chosen_id",
                                           "left_id", "chose_left", "response_ms", "client_uuid", "created"],
                judgement_rows)
    _set_created(sets, planned_sets, times, response)


def _set_created(sets, planned_sets, times, response) -> None:
    """Each set was created when its first pair was shown on the simulated clock."""
    rows, row = [], 0
    for annotation_set, (_, picks, _) in zip(sets, planned_sets):
        rows.append((times[row] - dt.timedelta(milliseconds=int(response[row])), annotation_set.pk))
        row += len(picks)
    table = connection.ops.quote_name(AnnotationSet._meta.db_table)
    with connection.cursor() as cursor:
        cursor.executemany(f"UPDATE {table} SET created = %s WHERE id = %s", rows)


def _fail_rates(noise: float, annotators: int, rate: float) -> list[float]:
    """Per simulated annotator, the probability of failing an attention check: `rate` · s_k / noise (at most 1)."""
    return [min(1.0, rate * s / noise) for s in _scales(noise, annotators)]


def _choice(pair: Pair, theta: dict[int, float], scale: float, rng: np.random.Generator, fail: float = 0.0) -> int:
    """The simulated annotator's choice on a served pair: on an attention check (the reference against a
    candidate, no latent strength for the reference) the known answer, except with probability `fail` the other
    candidate; otherwise candidate a with probability σ((θ_a − θ_b) / scale)."""
    draw = rng.random()  # drawn on every pair, so the stream does not depend on which pairs are checks
    if pair.attention_answer_id is not None:
        if draw < fail:
            return pair.verse_b_id if pair.attention_answer_id == pair.verse_a_id else pair.verse_a_id
        return pair.attention_answer_id
    a, b = pair.verse_a_id, pair.verse_b_id
    return a if draw < 1.0 / (1.0 + np.exp(-(theta[a] - theta[b]) / scale)) else b


def _finish_open_sets(*, batch, users, scale, rng, theta, cap) -> int:
    """Open sets the simulated users left in this batch (a capped earlier run) are finished first,
    through the services, as `set_next` would hand them back."""
    count = 0
    for k, user in enumerate(users):
        for item in Assignment.objects.filter(set__batch=batch, set__annotator=user, set__status=AnnotationSet.Status.OPEN,
                                              status=Assignment.Status.OPEN).select_related("pair").order_by("set_id", "position"):
            if cap is not None and count >= cap:
                return count
            judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=_choice(item.pair, theta, scale[k], rng),
                             client_uuid=uuid.uuid4(), response_ms=int(rng.integers(800, 6000)))
            count += 1
    return count


def simulate_annotations_via_services(
    *, project: Project, annotators: int = 3, judgements_per_pair: int = 1, noise: float = 1.0, seed: int = 0,
    batch_ids: list[int] | None = None, max_judgements: int | None = None, progress=None, calibrate: bool = True,
    agreement: float | None = None, attention_fail_rate: float = 0.0,
) -> dict:
    """The same simulation through `set_next` and `judgement_submit`, one judgement at a time (`agreement`: the
    calibration target when the caller already has it; `attention_fail_rate` as in `simulate_annotations`)."""
    rng = np.random.default_rng(seed)
    if calibrate and agreement is None:
        agreement = noise_calibration(project)["agreement"]
    serving = random.Random(seed)  # the scheduler's set order and screen sides: the same seed serves the same sets
    users = _simulated_users(project, annotators)
    scale = _scales(noise, annotators)
    fail = _fail_rates(noise, annotators, attention_fail_rate)
    summary = {"annotators": [u.username for u in users], "batches": {}}
    total = 0
    batches = _open_batches(project, batch_ids)
    for b_index, batch in enumerate(batches):
        if judgements_per_pair > 1 and not batch.pilot:
            batch_plan_judgements(batch=batch, per_pair=judgements_per_pair)
        theta = latent_strengths(batch, rng, agreement if calibrate else None, annotators)
        count = 0
        active = list(range(annotators))
        while active:
            for k in list(active):
                annotation_set = set_next(batch=batch, annotator=users[k], rng=serving)
                if annotation_set is None:
                    active.remove(k)
                    continue
                for item in annotation_set.assignments.filter(status="open").select_related("pair").order_by("position"):
                    if max_judgements and total >= max_judgements:
                        break
                    chosen = _choice(item.pair, theta, scale[k], rng, fail[k])
                    judgement_submit(annotator=users[k], assignment_id=item.pk, chosen_verse_id=chosen,
                                     client_uuid=uuid.uuid4(), response_ms=int(rng.integers(800, 6000)))
                    count += 1
                    total += 1
                if max_judgements and total >= max_judgements:
                    active = []
                    break
            if progress:
                progress((b_index + min(count / max(batch.n_pairs * judgements_per_pair, 1), 1.0)) / len(batches),
                         f"{batch.name}: {count} judgements")
        summary["batches"][batch.name] = count
        if max_judgements and total >= max_judgements:
            break
    summary["judgements"] = total
    return summary
