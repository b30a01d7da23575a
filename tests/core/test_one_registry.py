"""One registry mechanism (core/registries.py) with one duplicate policy (issue 27): every plug-in point refuses a
name registered twice, naming it, where some overwrote (job kinds) or ignored (demo loaders, home sections)."""
import pytest

from core.registries import Registry


def test_a_registry_keeps_order_and_refuses_a_repeated_name():
    r = Registry("widget")
    assert r.add("b", 2) == 2 and r.add("a", 1) == 1
    assert list(r) == ["b", "a"] and r["a"] == 1
    with pytest.raises(ValueError, match="widget 'a' is already registered"):
        r.add("a", 1)  # the same entry too: two plug-ins never shadow each other
    assert r["a"] == 1


@pytest.mark.django_db
def test_every_plug_in_point_refuses_a_repeated_name():
    from annotation.modes import register_mode, registered_modes
    from annotation.stats.agreement import AGREEMENT_STATISTICS, agreement_statistic
    from core.demo_loaders import _LOADERS
    from core.demo_loaders import register as register_loader
    from detection.detection_jobs import RESULT_STORES, SEGMENT_SETS, register_result_store, register_segment_set
    from detection.methods import registry as methods
    from frontend.sections import _SECTIONS
    from frontend.sections import register as register_section
    from jobs.registry import all_kinds, job_kind
    from jobs.sharding import _SHARDED, sharded_job_kind

    kind = next(iter(all_kinds()))
    attempts = {
        "job kind": lambda: job_kind(kind)(lambda job: {}),
        "sharded job kind": lambda: sharded_job_kind(next(iter(_SHARDED)), plan=list, merge=list)(lambda job: {}),
        "method": lambda: methods.register(methods.get_spec("bm25-lemma")),
        "annotation mode": lambda: register_mode(next(iter(registered_modes().values()))),
        "agreement statistic": lambda: agreement_statistic(next(iter(AGREEMENT_STATISTICS)))(len),
        "demo loader": lambda: register_loader(next(iter(_LOADERS)), str),
        "home-page section": lambda: register_section(*next(iter(_SECTIONS))),
        "segment set": lambda: register_segment_set(next(iter(SEGMENT_SETS)), next(iter(SEGMENT_SETS.values()))),
        "result store": lambda: register_result_store(next(iter(RESULT_STORES)))(len),
    }
    for what, attempt in attempts.items():
        with pytest.raises(ValueError, match=f"^{what} .* is already registered$"):
            attempt()
