"""The project's ground floor, imported by every stage and importing none: the command line's
shared parts (`cli`, `checks`), whole writes and locks (`outputs`), local-or-remote text and files
(`text_files`), and `artifacts`, the one owner of every name albert-act writes to disk.

None of them loads TensorFlow at import: the data tool's `--help` and its refusals stay quick.
"""
