"""Run-level limits, declared once per run type: the page form's fields, the API serializer's fields, the
command's options and the service's checks are all made from these, so a value gets one range and one message
wherever it is typed (issue 27). `ks` (cut-offs) are checked value by value with the `k` limit."""
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

    def _messages(self) -> dict:
        return {"min_value": self.message, "max_value": self.message, "invalid": self.message,
                "max_string_length": self.message}

    def form_field(self):
        from django import forms

        return forms.IntegerField(min_value=self.low, max_value=self.high, required=self.default is not None,
                                  initial=self.default, help_text=self.help, error_messages=self._messages())

    def serializer_field(self):
        from rest_framework import serializers

        return serializers.IntegerField(min_value=self.low, max_value=self.high, required=False,
                                        default=self.default, allow_null=self.default is None, help_text=self.help,
                                        error_messages=self._messages())

    def add_option(self, parser, flag: str) -> None:
        parser.add_argument(flag, type=int, default=self.default, help=f"{self.help} ({self.low}–{self.high})")


MAX_SHARDS = 256  # a run's job fans out into at most this many shards

# The Loci Similes evaluation run (benchmarks.services.runs.evaluation_run_create).
EVALUATION_N_FOLDS = IntLimit("n_folds", 2, 20, 5, "folds of the grouped split")
EVALUATION_SHARDS = IntLimit(
    "shards", 1, MAX_SHARDS, None,
    "rank the held-out queries in this many parts that the workers share (empty: one part per 2,000 queries; "
    "the pool is fitted once either way)")
EVALUATION_K = IntLimit("k", 1, 10_000, None, "an evaluation cut-off")

# Training a reranker (benchmarks.services.training.training_run_create: the API, the models page's form and
# ``manage.py train_model``): the first stage's candidates per query it learns from.
TRAINING_K = IntLimit("k", 1, 1000, 100, "candidates per query from the first stage", what="")
