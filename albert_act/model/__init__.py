"""The network: embeddings, transformer block, halting unit and loops, backbone, heads, what a path holds (source.py), public checkpoints."""
