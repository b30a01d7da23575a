"""Corpora to search a passage against (pure: no Django): reading `.tess` folders and archives into works with
citable segments (:mod:`.corpus_files`). Their index and search are the channels' own (:mod:`detection.channels`)."""
