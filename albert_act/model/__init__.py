"""The network: embeddings, transformer block, halting unit and loops, backbone, heads, presets, loading."""
