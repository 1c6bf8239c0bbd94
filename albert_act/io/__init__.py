"""What a path on disk holds: `Source.open(path)` (source.py) works out the kind, config and
vocabulary once and builds models from it; a run's checkpoints (run_checkpoints.py: saved, resumed,
read) with the one search for the newest intact one (newest_intact.py); public ALBERT checkpoints
(public_checkpoints.py, keras_hub_weights.py); albert-act exports (exports.py)."""
