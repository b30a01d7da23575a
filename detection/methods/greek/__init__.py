"""Greek pair scorers (edit distances, static and transformer embeddings) and their lookup in the registry."""
