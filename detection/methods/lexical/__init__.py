"""Lexical methods: sparse retrievers (TF-IDF, BM25) and their compiled kernel, Tesserae, the multi-channel
retriever with its channels and the reference-corpus uniqueness index."""
