"""Pure-Python statistics for pairwise-similarity annotation (no Django imports).

Modules: ``judgements`` (array representation), ``triads`` (circular triads), ``agreement``
(Cohen, Fleiss, Krippendorff, orientation-invariant κ and Kendall's u, test–retest, split-half),
``scores`` (wins, normalised similarity, Bradley–Terry, bootstrap, directionality), ``bt_bayes``
(Bradley–Terry with Laplace-posterior intervals), ``annotator_bt`` (annotator-aware Bradley–Terry),
``reliability`` (per-annotator figures), ``simulate`` (simulation and design planning).
See docs/statistics.md.
"""

from .agreement import (
    AGREEMENT_STATISTICS,
    AgreementResult,
    KappaMatrix,
    LabelTable,
    agreement_statistic,
    cohen_kappa,
    cohen_kappa_matrix,
    cohen_kappa_matrix_from_labels,
    cohen_kappa_symmetric_matrix,
    fleiss_kappa,
    fleiss_kappa_judgements,
    fleiss_kappa_symmetric,
    kendall_u,
    krippendorff_alpha_judgements,
    krippendorff_alpha_nominal,
    krippendorff_alpha_symmetric,
    label_table,
    orientation_invariant_agreement,
    retest_agreement,
    spearman,
    split_half_reliability,
)
from .annotator_bt import AnnotatorAwareBT, annotator_aware_bt, ranking_shift
from .bt_bayes import DEFAULT_PRIOR_SD, BTPosterior, bradley_terry_posterior, bt_map, prior_sd_from_data, tied_ranks
from .judgement_arrays import Judgements, from_winner_ids
from .reliability import FAST_MS, agreement_with_majority, response_times, separation_reliability
from .scores import (
    BatchScores,
    BTBootstrap,
    BTResult,
    batch_scores,
    bootstrap_bradley_terry,
    bradley_terry,
    bradley_terry_batches,
    comparison_graph_warning,
    connectivity,
    directionality_table,
    infer_denominator,
    normalised_scores,
)
from .simulate import all_pairs, choice_probability, simulate_judgements
from .triads import (
    KendallTriads,
    TriadCount,
    count_circular_triads,
    kendall_triads,
    list_circular_triads,
    majority_triads,
    model_expected_circular,
    tournament_from_counts,
    triads_per_annotator,
)

__all__ = [
    "AgreementResult", "KappaMatrix", "LabelTable", "cohen_kappa", "cohen_kappa_matrix",
    "cohen_kappa_matrix_from_labels", "fleiss_kappa", "fleiss_kappa_judgements", "krippendorff_alpha_judgements",
    "krippendorff_alpha_nominal", "label_table", "retest_agreement", "spearman", "split_half_reliability",
    "cohen_kappa_symmetric_matrix", "fleiss_kappa_symmetric", "kendall_u", "krippendorff_alpha_symmetric",
    "orientation_invariant_agreement", "AGREEMENT_STATISTICS", "agreement_statistic",
    "AnnotatorAwareBT", "annotator_aware_bt", "ranking_shift",
    "DEFAULT_PRIOR_SD", "BTPosterior", "bradley_terry_posterior", "bt_map", "prior_sd_from_data", "tied_ranks",
    "FAST_MS", "agreement_with_majority", "response_times", "separation_reliability",
    "Judgements", "from_winner_ids",
    "BatchScores", "BTBootstrap", "BTResult", "batch_scores", "bootstrap_bradley_terry", "bradley_terry",
    "bradley_terry_batches", "comparison_graph_warning", "connectivity", "directionality_table", "infer_denominator", "normalised_scores",
    "all_pairs", "choice_probability", "simulate_judgements",
    "KendallTriads", "TriadCount", "count_circular_triads", "kendall_triads", "list_circular_triads",
    "majority_triads", "model_expected_circular", "tournament_from_counts", "triads_per_annotator",
]
