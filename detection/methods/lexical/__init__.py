"""Lexical methods: sparse retrievers (TF-IDF, BM25) and their compiled kernel, Tesserae and the reference-corpus
uniqueness index. The multi-channel retriever's channels are :mod:`detection.channels`."""
