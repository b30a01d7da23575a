"""Every registered method's declaration matches its factory (issue 27): each declared user parameter, fixed value,
internal argument and component is a keyword the factory takes. A factory that forwards `**kw` to a class is
called with every declared keyword and must not answer "unexpected keyword argument" (it may fail later, for
want of a model file; that is not a declaration mismatch). A toy spec declaring a parameter its factory lacks
is caught by the same check."""
import inspect

import pytest

from detection.methods import registry
from detection.methods.retriever import Retriever
from detection.methods.specs import MethodSpec, Param


class _Sentinel(Retriever):
    """Stands in for a component (hybrid's lexical retriever) so no factory builds a real index here."""

    def fit(self, source_ids, source_texts, *, progress=None):
        return self

    def search(self, query_texts, k, *, progress=None):
        raise AssertionError("never searched: only constructors are called here")


def _declared_kwargs(spec: MethodSpec) -> dict:
    kwargs = {**spec.fixed, **spec.defaults(), **{name: None for name in spec.internal}}
    for name in spec.components:
        kwargs[name] = _Sentinel()
    return kwargs


def signature_mismatch(spec: MethodSpec) -> str | None:
    """What of the declaration the factory does not take, or None."""
    kwargs = _declared_kwargs(spec)
    try:
        sig = inspect.signature(spec.factory)
    except (TypeError, ValueError):
        sig = None
    if sig is not None and not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        missing = sorted(set(kwargs) - set(sig.parameters))
        return f"{spec.name}: factory takes no {missing}" if missing else None
    try:
        spec.factory(**kwargs)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc) or "got an unexpected" in str(exc):
            return f"{spec.name}: {exc}"
    except Exception:  # noqa: BLE001 - a missing model file or the like, after the keywords were accepted
        pass
    return None


@pytest.mark.parametrize("name", registry.names())
def test_each_registered_spec_matches_its_factory(name, tmp_path, monkeypatch):
    monkeypatch.setenv("SIMILIA_MODELS_DIR", str(tmp_path))
    assert signature_mismatch(registry.get_spec(name)) is None


def test_a_spec_declaring_what_its_factory_lacks_is_caught():
    class Toy(_Sentinel):
        def __init__(self, k1=1.0):
            self.k1 = k1

    def forwarding(**kw):
        return Toy(**kw)

    def explicit(k1=1.0):
        return Toy(k1)

    good = MethodSpec("toy-ok", "retriever", forwarding, "toy", params=(Param("k1", "float", 1.0, "k1"),))
    assert signature_mismatch(good) is None
    for factory in (forwarding, explicit):
        bad = MethodSpec("toy-bad", "retriever", factory, "toy",
                         params=(Param("k1", "float", 1.0, "k1"), Param("b", "float", 0.5, "b")))
        assert "b" in signature_mismatch(bad)
