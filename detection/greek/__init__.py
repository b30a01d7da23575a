"""Greek verse similarity: preprocessing, lemmatisation and similarity methods.

Pure Python (no Django). Entry points:

- :class:`detection.greek.preprocess.GreekPreprocessor` – configurable normalisation/tokenisation.
- :class:`detection.greek.lemmatize.GreekLemmatizer` – offline lemmatiser (simplemma ``grc`` + rules).
- :func:`detection.methods.greek.greek_registry.get_method` / :func:`detection.methods.greek.greek_registry.available`.
"""
