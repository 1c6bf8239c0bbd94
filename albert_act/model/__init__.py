"""The network: embeddings, transformer block, halting unit and loops, backbone, heads (no file I/O: what a path holds is `albert_act.io`)."""
