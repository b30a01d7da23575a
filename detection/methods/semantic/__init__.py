"""Semantic methods: static word vectors and their retrievers (SIF, soft cosine, MaxSim, bigram Word2Vec), dense
top-k, hybrid retrieval, bi-encoders and Similia's own pretrained encoders."""

from ..specs import ParamError


def check_hybrid_candidates(params) -> None:
    """``candidates=union`` joins the dense top list, which only a segment score (``sif``/``usif``) has: with
    ``maxsim`` or ``softcos`` the combination is refused, naming both parameters."""
    semantic = params.get("semantic", "maxsim")
    if params.get("candidates") == "union" and semantic not in ("sif", "usif"):
        raise ParamError(f"candidates='union' needs a dense semantic score: set semantic=sif or semantic=usif "
                         f"(semantic={semantic!r} scores only a given candidate list)", "candidates")
