"""What every method stands on: model names resolved and checked against the installed models, the device,
top-k selection, and the content-addressed index cache with its memory-mapped array files."""
