"""Greek verse similarity: preprocessing, lemmatisation and similarity methods.

Pure Python (no Django). Entry points:

- :class:`detection.similarity.preprocess.GreekPreprocessor` – configurable normalisation/tokenisation.
- :class:`detection.similarity.lemmatise.GreekLemmatiser` – offline lemmatiser (simplemma ``grc`` + rules).
- :func:`detection.similarity.registry.get_method` / :func:`detection.similarity.registry.available`.
"""
