"""Run rows store their methods' configuration with its digest (``MethodConfig.to_json``), reads check the digest
(``MethodConfig.from_json``), and the migrations fill it for rows made before the fields existed."""
import pytest

from detection.methods import ParamError
from detection.methods.registry import configure
from tests.detection.methods.conftest import stored_config


@pytest.mark.django_db
def test_an_evaluation_run_stores_its_configurations_with_their_digests(loci_version):
    from benchmarks.models import EvaluationRun
    from benchmarks.services import evaluation_run_create

    run = evaluation_run_create(version=loci_version, method="bm25-lemma", params={"k1": 1.2},
                                reranker="lexical-rule", enqueue=False)
    row = EvaluationRun.objects.get(pk=run.pk)
    expected = configure("bm25-lemma", {"k1": 1.2}, kind="retriever")
    assert row.config == expected.to_json()
    assert row.method_config == expected and row.method_config.digest == expected.digest
    assert row.reranker_method_config.name == "lexical-rule"
    assert row.reranker_method_config == configure("lexical-rule", {}, kind="reranker")
    plain = evaluation_run_create(version=loci_version, method="bm25-lemma", enqueue=False)
    assert EvaluationRun.objects.get(pk=plain.pk).reranker_config is None
    assert EvaluationRun.objects.get(pk=plain.pk).reranker_method_config is None

    # a stored configuration edited since is refused when read, not built
    row.config = {**row.config, "params": {**row.config["params"], "k1": 9.0}}
    with pytest.raises(ParamError, match="does not match its digest"):
        row.method_config


@pytest.mark.django_db
def test_a_similarity_run_stores_its_configuration(gold_set):
    from benchmarks.models import SimilarityRun
    from benchmarks.services import similarity_run_create

    run = similarity_run_create(gold_set=gold_set, method="levenshtein")
    row = SimilarityRun.objects.get(pk=run.pk)
    assert row.config == configure("levenshtein", {}, kind="pair_scorer").to_json()
    assert row.method_config.name == "levenshtein"


def test_the_migration_fills_the_configuration_of_existing_runs(loci_version, gold_set, migrate_back_and_forth):
    def old_rows(apps):
        OldRun, OldSim = apps.get_model("benchmarks", "EvaluationRun"), apps.get_model("benchmarks", "SimilarityRun")
        return (OldRun.objects.create(version_id=loci_version.pk, method="bm25-lemma", params={"k1": 1.5, "b": 0.75}),
                OldRun.objects.create(version_id=loci_version.pk, method="tfidf-lemma", params={},
                                      reranker="lexical-rule", reranker_params={}),
                OldSim.objects.create(gold_set_id=gold_set.pk, method="levenshtein", params={}))

    plain, reranked, sim = migrate_back_and_forth([("benchmarks", "0003_version_awaiting_approval")],
                                                  [("benchmarks", "0004_run_method_config_digest")], old_rows)
    from benchmarks.models import EvaluationRun, SimilarityRun

    first = EvaluationRun.objects.get(pk=plain.pk)
    assert first.config == stored_config("bm25-lemma", "retriever", {"k1": 1.5, "b": 0.75}).to_json()
    assert first.method_config.params == {"k1": 1.5, "b": 0.75} and first.reranker_config is None
    second = EvaluationRun.objects.get(pk=reranked.pk)
    assert second.reranker_method_config == stored_config("lexical-rule", "reranker", {})
    assert SimilarityRun.objects.get(pk=sim.pk).method_config == stored_config("levenshtein", "pair_scorer", {})


@pytest.mark.django_db
def test_a_reranker_registered_after_import_is_offered_and_accepted(loci_version):
    """The rerankers an evaluation run may name are read from the registry when asked, not frozen at import."""
    from benchmarks.models import EvaluationRun
    from benchmarks.services import RunError, evaluation_run_create
    from benchmarks.views import EvaluationRunForm
    from detection.methods import registry
    from detection.methods.registry import MethodSpec

    registry.register(MethodSpec("toy-late-reranker", "reranker", lambda **kw: None, "registered after import"))
    try:
        choices = dict(EvaluationRunForm().fields["reranker"].choices)
        assert choices["toy-late-reranker"] == "registered after import" and "" in choices
        run = evaluation_run_create(version=loci_version, method="bm25-lemma", reranker="toy-late-reranker",
                                    enqueue=False)
        assert EvaluationRun.objects.get(pk=run.pk).reranker_method_config == \
            configure("toy-late-reranker", {}, kind="reranker")
    finally:
        registry.unregister("toy-late-reranker")
    with pytest.raises(RunError, match="unknown reranker 'toy-late-reranker'"):
        evaluation_run_create(version=loci_version, method="bm25-lemma", reranker="toy-late-reranker", enqueue=False)
