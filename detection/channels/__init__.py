"""The channels of the ``channels`` method in one place, shared by pairwise detection, corpus search and the
explanations: what each channel matches (:mod:`.channel_features`), its features of many texts in bulk (:mod:`.bulk_features`), the
pairwise retriever (:mod:`.pairwise`), the on-disk corpus index and its search (:mod:`.corpus_index`,
:mod:`.corpus_search`), and the one explanation of a match (:mod:`.fusion`)."""
