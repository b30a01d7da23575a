"""Tiny corpora and models the semantic-method tests build themselves (seconds, no hub, no ../shared)."""
import numpy as np
import pytest

from detection.methods.infrastructure import model_store
from detection.methods.semantic.word_vectors import WordVectors

LATIN_LINES = [
    "arma uirumque cano troiae qui primus ab oris italiam fato profugus lauiniaque uenit litora",
    "multum ille et terris iactatus et alto ui superum saeuae memorem iunonis ob iram",
    "multa quoque et bello passus dum conderet urbem inferretque deos latio genus unde latinum",
    "musa mihi causas memora quo numine laeso quidue dolens regina deum tot uoluere casus",
    "tantae molis erat romanam condere gentem urbs antiqua fuit tyrii tenuere coloni",
    "gallia est omnis diuisa in partes tres quarum unam incolunt belgae aliam aquitani",
    "quo usque tandem abutere catilina patientia nostra quam diu etiam furor iste tuus nos eludet",
    "o tempora o mores senatus haec intellegit consul uidet hic tamen uiuit",
    "bella per emathios plus quam ciuilia campos iusque datum sceleri canimus populumque potentem",
    "in noua fert animus mutatas dicere formas corpora di coeptis nam uos mutastis et illas",
] * 6


@pytest.fixture
def models_dir(tmp_path):
    with model_store.using(tmp_path / "models") as d:
        d.mkdir(parents=True)
        yield d


@pytest.fixture
def latin_corpus(tmp_path):
    folder = tmp_path / "corpus"
    (folder / "vergil").mkdir(parents=True)
    (folder / "vergil" / "aen.txt").write_text("Vergil: Aeneid I\n" + "\n".join(LATIN_LINES[:30]) +
                                               "\n The Latin Library \n", encoding="utf-8")
    (folder / "misc.tess").write_text("\n".join(f"<misc. {i}>\t{t}" for i, t in enumerate(LATIN_LINES[30:])),
                                      encoding="utf-8")
    return folder


def toy_vectors(pairs: dict[str, list[float]], counts: dict[str, int] | None = None,
                manifest: dict | None = None) -> WordVectors:
    """Word vectors written by hand: ``{"word": [x, y, ...]}``."""
    keys = list(pairs)
    vecs = np.asarray([pairs[k] for k in keys], np.float32)
    c = np.asarray([(counts or {}).get(k, 10) for k in keys], np.int64)
    return WordVectors(keys=keys, vectors=vecs, counts=c,
                       manifest={"language": "la", "unit": "lemma", **(manifest or {})})



def stored_config(name: str, kind: str, params: dict):
    """A configuration as an older row or job stored it (values since refused by ``registry.configure``, a kind
    that does not match), read back the one way besides ``configure``: ``MethodConfig.from_json``."""
    from detection.methods.specs import MethodConfig, stored_json

    return MethodConfig.from_json(stored_json(name, kind, params))
