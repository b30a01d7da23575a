"""Greek STS benchmark: gold files, evaluation (RMSE/Spearman/Pearson), calibration, directionality, DBBE pilots.

Pure Python (no Django import). See docs/greek_similarity.md.
"""
