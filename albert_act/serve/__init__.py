"""Serving: raw-text SavedModels and GLUE submission files."""
