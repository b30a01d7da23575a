"""Semantic methods: static word vectors and their retrievers (SIF, soft cosine, MaxSim, bigram Word2Vec), dense
top-k, hybrid retrieval, bi-encoders and Similia's own pretrained encoders."""
