"""Corpora to search a passage against (pure: no Django): reading `.tess` folders and archives into works with
citable segments (:mod:`.corpus_files`), the on-disk index every channel of the ``channels`` method reads
(:mod:`.corpus_index`) and the one-passage search over it with explanations (:mod:`.corpus_search`)."""
