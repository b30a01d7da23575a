"""The one explanation of a match, for pairwise detection and corpus search alike: for every channel that fired, its
score, weight, contribution and the word pairs it matched (query word, source word), and the rarity of the matched
query words. The callers add what only they know (pairwise: how unique the pair is; corpus: the words to mark)."""
from __future__ import annotations

from typing import Mapping

from detection.channels import channel_features as C

MOST = 12  # word pairs shown per channel
SOUND_ALIKE = 0.4  # Dice of two words' trigram sets from which they sound alike (chosen on a labelled sample)
RARITY_CHANNELS = ("lemma", "rare", "form", "position")  # the channels whose matched words are single lemmas


def explain(qdoc: C.Doc, qf: C.ChannelFeatures, sdoc: C.Doc, sf: C.ChannelFeatures, scores: Mapping[str, float],
            weights: Mapping[str, float], rarity: C.Rarity) -> dict:
    """``{"channels": [...], "rarity": {query word: rarity}}`` for the channel ``scores`` of one pair (in channel
    order; a channel scoring 0 did not fire), the largest contribution first."""
    out, rare = [], {}
    for ch, score in scores.items():
        score = float(score)
        if score <= 0:
            continue
        matches = []
        if ch == "sound":
            matches = alike(qdoc, sdoc, set(qf.feats[ch]) & set(sf.feats[ch]))
        elif ch in C.SPARSE_CHANNELS:
            matches = shared_words(qf, sf, ch)
        w = weights[ch]
        out.append({"name": ch, "score": round(score, 6), "weight": w, "contribution": round(w * score, 6),
                    "matches": matches})
        if ch in RARITY_CHANNELS:
            for qword, _sword in matches:
                rare[qword] = round(rarity(_lemma_of(qword)), 3)
    out.sort(key=lambda d: -d["contribution"])
    return {"channels": out, "rarity": rare}


def shared_words(qf: C.ChannelFeatures, sf: C.ChannelFeatures, ch: str, most: int = MOST) -> list[list[str]]:
    """The word pairs behind the features both texts have in channel ``ch``, the heaviest feature first."""
    shared = sorted(set(qf.feats[ch]) & set(sf.feats[ch]), key=lambda f: -qf.feats[ch][f] * sf.feats[ch][f])
    seen, matches = set(), []
    for f in shared:
        pair = (qf.words[ch][f], sf.words[ch][f])
        if pair not in seen:
            seen.add(pair)
            matches.append(list(pair))
        if len(matches) >= most:
            break
    return matches


def alike(qdoc: C.Doc, sdoc: C.Doc, shared: set[str], most: int = MOST) -> list[list[str]]:
    """The sound channel's matched pairs: content words of the two texts holding a trigram both texts share whose
    trigram sets are alike (Dice >= :data:`SOUND_ALIKE`), most alike first; two words sharing only an ending or
    a syllable (``emathios`` / ``sallentinos``) are not shown as a pair."""
    def words(doc):
        return sorted({t for t, lem in zip(doc.tokens, doc.lemmas) if C.is_content(lem, t)
                       and shared.intersection(C.char_trigrams(t))})

    grams = {w: set(C.char_trigrams(w)) for w in set(words(qdoc)) | set(words(sdoc))}
    scored = []
    for q in words(qdoc):
        for s in words(sdoc):
            a, b = grams[q], grams[s]
            dice = 2 * len(a & b) / (len(a) + len(b))
            if dice >= SOUND_ALIKE:
                scored.append((-dice, q, s))
    return [[q, s] for _, q, s in sorted(scored)[:most]]


def _lemma_of(form: str) -> str:
    from detection.latin.analysis import latin_lemmas

    return latin_lemmas([form])[0]
