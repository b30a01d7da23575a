"""Run-level limits, declared once per run type (issue 27). The page form's fields and the API serializer's
(:mod:`core.run_limit_fields`), the command's options (:meth:`IntLimit.add_option`) and the service's checks
(:meth:`IntLimit.check`) are all made from these, so a value gets one range and one message wherever it is typed.
Pure (no Django): the ``detect`` command of the pure Latin package reads its limits here too.

A run type's limits:

- the Loci Similes evaluation run (``benchmarks.services.runs.evaluation_run_create``): ``n_folds``, ``seed``,
  ``shards``, ``unit`` and each of its cut-offs ``ks`` (checked value by value with the ``k`` limit);
- the one detection job (``detection.services.detection.detection_job_create``): ``k``, ``shards``,
  ``shard_size``, ``unit``;
- a workbench detection run (``workbench.services.detection_run_create``): ``top_k`` (its candidates are rows
  a person pages through, hence the lower ceiling), ``unit`` and the detection job's ``shards``;
- training a reranker (``benchmarks.services.model_training.training_run_create``): ``k``;
- the ``detect`` command (``detection.commands.run_detect``): ``top_k``, ``jobs``, ``unit``.

Integers are :class:`IntLimit`; a name from a fixed list (the search ``unit``) is a :class:`ChoiceLimit`.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IntLimit:
    """An integer a run takes, from `low` to `high`; `default` None = optional (the service picks)."""

    name: str
    low: int
    high: int
    default: int | None
    help: str
    what: str = "an integer "  # the message's words before "between" (training's k keeps its older wording)

    @property
    def message(self) -> str:
        return f"{self.name} must be {self.what}between {self.low} and {self.high}"

    def check(self, value, error: type[Exception] = ValueError) -> int | None:
        """`value` if within the limit (None when optional and absent), else `error(self.message)`."""
        if value is None and self.default is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not self.low <= value <= self.high:
            raise error(self.message)
        return value

    def add_option(self, parser, flag: str) -> None:
        """The command-line option (checked by the service, or by the command with :meth:`check`)."""
        parser.add_argument(flag, type=int, default=self.default,
                            help=f"{self.help} ({self.low}–{self.high}; default {self.default})")


@dataclass(frozen=True)
class ChoiceLimit:
    """A name a run takes from a fixed list (``choices``: value, label); one message for a value not in it."""

    name: str
    choices: tuple[tuple[str, str], ...]
    default: str
    help: str

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(v for v, _ in self.choices)

    def message(self, value) -> str:
        return f"{self.name} must be one of {', '.join(self.values)}, not {str(value)[:40]!r}"

    def check(self, value, error: type[Exception] = ValueError) -> str:
        """`value` if it is one of the choices, else `error(self.message(value))`."""
        if not isinstance(value, str) or value not in self.values:
            raise error(self.message(value))
        return value

    def add_option(self, parser, flag: str) -> None:
        """The command-line option (checked by the service, or by the command with :meth:`check`)."""
        parser.add_argument(flag, default=self.default,
                            help=f"{self.help} ({', '.join(self.values)}; default {self.default})")


MAX_SHARDS = 256  # a run's job fans out into at most this many shards
# every sharded run (an evaluation, a detection job, a workbench run) splits its queries the same way
SHARDS = IntLimit(
    "shards", 1, MAX_SHARDS, None,
    "split the queries into this many parts that the workers share (empty: one part per JOB_SHARD_QUERIES "
    "queries, 2,000 by default; the pool is fitted once either way)")

# The Loci Similes evaluation run (benchmarks.services.runs.evaluation_run_create).
EVALUATION_N_FOLDS = IntLimit("n_folds", 2, 20, 5, "folds of the grouped split")
EVALUATION_SHARDS = SHARDS
EVALUATION_K = IntLimit("k", 1, 10_000, None, "an evaluation cut-off")
EVALUATION_SEED = IntLimit("seed", 0, 2**31 - 1, 0, "the grouped split's seed")  # a 32-bit column

# What a text is searched as (detection.latin.units): every run that searches texts takes it from here.
UNIT = ChoiceLimit(
    "unit", (("line", "line (each segment; a verse text: each line)"),
             ("window-2", "sliding windows of 2 lines"), ("window-3", "sliding windows of 3 lines"),
             ("sentence", "sentences (lines joined, cut after . ! ? ;)")),
    "line", "what a text is searched as: its lines, sliding windows of 2 or 3 lines, or sentences (hits are "
            "reported on the lines they cover)")
EVALUATION_UNIT = UNIT

# The one detection job (detection.services.detection.detection_job_create).
DETECTION_K = IntLimit("k", 1, 10_000, 100, "sources kept per query")
DETECTION_SHARDS = SHARDS
DETECTION_SHARD_SIZE = IntLimit("shard_size", 1, 10_000_000, None, "queries per shard")
DETECTION_UNIT = UNIT

# Training a reranker (benchmarks.services.model_training.training_run_create: the API, the models page's form and
# ``manage.py train_model``): the first stage's candidates per query it learns from.
TRAINING_K = IntLimit("k", 1, 1000, 100, "candidates per query from the first stage", what="")

# A workbench detection run (workbench.services.detection_run_create): its candidates are rows people page through.
WORKBENCH_TOP_K = IntLimit("top_k", 1, 1000, 10, "candidates kept per query segment")
WORKBENCH_UNIT = UNIT

# The detect command (detection.commands.run_detect): rows written to a file.
DETECT_TOP_K = IntLimit("top_k", 1, 10_000, 100, "sources written per query")
DETECT_JOBS = IntLimit("jobs", 1, 64, 1, "worker processes for fitting and searching")
DETECT_UNIT = UNIT
