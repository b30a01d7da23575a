"""Writes of the detection app: queue the one detection job (`detection`) and train second-stage models per fold
(`training`). Both take what they read as plain data (segment sets by name, a benchmark's queries, sources,
gold and folds as a `training.TrainingData`), so the app that owns the data resolves it and calls them."""
