"""Training: LAMB, schedules, losses, strategies, the pre-training and fine-tuning runs, GLUE metrics."""
