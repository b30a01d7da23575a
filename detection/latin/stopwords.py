"""A Latin stoplist for lexical retrieval (written for this project).

Function words and the most frequent auxiliaries, in normalised u/i spelling, both as lemmas and as their
frequent surface forms, so the same list serves surface and lemma retrieval. The enclitics produced by
:func:`detection.latin.normalize.tokenize` (``que``, ``ne``, ``ue``) are included.
"""
from __future__ import annotations

LATIN_STOPWORDS: frozenset[str] = frozenset(
    """
    a ab abs ac ad adhuc an ante apud at atque aut autem
    cum cur de dum e ex enim ergo et etiam etsi
    hic haec hoc huius huic hunc hanc hac hi hae horum harum his hos has
    iam ibi idem eadem eiusdem igitur ille illa illud illius illi illum illam illo illos illas illis illorum
    in inter ipse ipsa ipsum ipsius ipsi ipso ipsos ipsas ipsis ita itaque
    is ea id eius ei eum eam eo eae eorum earum eis iis eos eas
    iste ista istud
    ne nam namque nec neque nisi non nunc
    o ob per post pro propter
    qua quae quam quamquam quando quia quibus quid quidem quis quo quod quoque quorum quarum quos quas
    qui cuius cui quem
    que ue sed si sic siue seu sub super tam tamen tum tunc
    ubi uel ut uti
    sum es est sumus estis sunt eram erat erant ero erit erunt fui fuit fuerunt esse esset essent sit sint
    ego me mihi mei nos nobis tu te tibi tui uos uobis se sibi sui
    meus mea meum tuus tua tuum suus sua suum noster nostra nostrum uester uestra uestrum
    inquam inquit aio ait
    """.split()
)
