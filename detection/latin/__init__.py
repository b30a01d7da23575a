"""Latin text engine: readers, segmentation, normalisation, lemmatisation and lexical retrievers.

Pure Python (no Django). See docs/latin_engine.md.
"""
