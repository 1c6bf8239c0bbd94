"""Depth analyses: per token type with intervals, per dependency relation, fixed-point curves, plots."""
