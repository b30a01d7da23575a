"""Pure-Python statistics for pairwise-similarity annotation (no Django imports).

Modules: ``judgements`` (array representation), ``triads`` (circular triads), ``agreement``
(Cohen, Fleiss, Krippendorff, test–retest, split-half), ``scores`` (wins, normalised similarity,
Bradley–Terry, bootstrap, directionality), ``simulate`` (simulation and design planning).
See docs/statistics.md.
"""

from .agreement import (
    AgreementResult,
    KappaMatrix,
    LabelTable,
    cohen_kappa,
    cohen_kappa_matrix,
    cohen_kappa_matrix_from_labels,
    fleiss_kappa,
    fleiss_kappa_judgements,
    krippendorff_alpha_judgements,
    krippendorff_alpha_nominal,
    label_table,
    retest_agreement,
    spearman,
    split_half_reliability,
)
from .judgements import Judgements, from_winner_ids
from .scores import (
    BatchScores,
    BTBootstrap,
    BTResult,
    batch_scores,
    bootstrap_bradley_terry,
    bradley_terry,
    bradley_terry_batches,
    connectivity,
    directionality_table,
    infer_denominator,
    normalised_scores,
)
from .simulate import all_pairs, choice_probability, choose_pairs, plan_budget, simulate_design, simulate_judgements
from .triads import (
    KendallTriads,
    TriadCount,
    count_circular_triads,
    kendall_triads,
    list_circular_triads,
    majority_triads,
    tournament_from_counts,
    triads_per_annotator,
)

__all__ = [
    "AgreementResult", "KappaMatrix", "LabelTable", "cohen_kappa", "cohen_kappa_matrix",
    "cohen_kappa_matrix_from_labels", "fleiss_kappa", "fleiss_kappa_judgements", "krippendorff_alpha_judgements",
    "krippendorff_alpha_nominal", "label_table", "retest_agreement", "spearman", "split_half_reliability",
    "Judgements", "from_winner_ids",
    "BatchScores", "BTBootstrap", "BTResult", "batch_scores", "bootstrap_bradley_terry", "bradley_terry",
    "bradley_terry_batches", "connectivity", "directionality_table", "infer_denominator", "normalised_scores",
    "all_pairs", "choice_probability", "choose_pairs", "plan_budget", "simulate_design", "simulate_judgements",
    "KendallTriads", "TriadCount", "count_circular_triads", "kendall_triads", "list_circular_triads",
    "majority_triads", "tournament_from_counts", "triads_per_annotator",
]
