"""Weight copy from keras-hub's `AlbertBackbone` into `AlbertActBackbone`.

Used for the parity test (halting="none" must match keras-hub to 1e-5) and as
the basis of checkpoint import. keras-hub's group i (one inner layer per group)
becomes our block i; with one group it is the shared block.
"""



def _copy(target_layer, source_weights, what):
    targets = target_layer.weights
    if len(targets) != len(source_weights):
        raise ValueError(f"{what}: expected {len(targets)} weights, got {len(source_weights)}")
    for target, source in zip(targets, source_weights):
        if tuple(target.shape) != tuple(source.shape):
            raise ValueError(
                f"{what}: weight {target.path} has shape {tuple(target.shape)}, "
                f"keras-hub's {source.path} has {tuple(source.shape)}"
            )
        target.assign(source)


def copy_keras_hub_albert_weights(hub_backbone, backbone):
    """Copies a `keras_hub.models.AlbertBackbone` into an `AlbertActBackbone`.

    Every weight of ours except the halting unit gets keras-hub's value. The
    shapes must agree (vocabulary, E, H, heads, FFN, positions, segments) and
    keras-hub's layout must match ours: one group per block we have (1 when
    `share_weights=True`, N_max otherwise), one inner layer per group.

    Raises:
        ValueError naming the mismatch.
    """
    groups = hub_backbone.transformer_layers
    if len(groups) != len(backbone.encoder.blocks) or any(len(g) != 1 for g in groups):
        raise ValueError(
            f"keras-hub backbone has {len(groups)} groups of "
            f"{[len(g) for g in groups]} inner layers; expected "
            f"{len(backbone.encoder.blocks)} groups of 1 (share_weights={backbone.share_weights})"
        )
    embeddings = backbone.embeddings
    _copy(embeddings.token_embedding, hub_backbone.token_embedding.weights, "token embedding")
    _copy(embeddings.segment_embedding, hub_backbone.segment_embedding.weights, "segment embedding")
    hub_positions = hub_backbone.position_embedding.position_embeddings
    if tuple(hub_positions.shape) != tuple(embeddings.position_embeddings.shape):
        raise ValueError(
            f"position embeddings: ours {tuple(embeddings.position_embeddings.shape)}, "
            f"keras-hub's {tuple(hub_positions.shape)}"
        )
    embeddings.position_embeddings.assign(hub_positions)
    _copy(embeddings.layer_norm, hub_backbone.embeddings_layer_norm.weights, "embedding LayerNorm")
    _copy(embeddings.projection, hub_backbone.embeddings_projection.weights, "embedding projection")

    for block, (hub_layer,) in zip(backbone.encoder.blocks, groups):
        attention = hub_layer._self_attention_layer
        pairs = [
            (block.query_dense, attention._query_dense),
            (block.key_dense, attention._key_dense),
            (block.value_dense, attention._value_dense),
            (block.attention_output_dense, attention._output_dense),
            (block.attention_layer_norm, hub_layer._self_attention_layer_norm),
            (block.intermediate_dense, hub_layer._feedforward_intermediate_dense),
            (block.output_dense, hub_layer._feedforward_output_dense),
            (block.output_layer_norm, hub_layer._feedforward_layer_norm),
        ]
        for ours, theirs in pairs:
            _copy(ours, theirs.weights, f"{block.name}/{ours.name}")
    _copy(backbone.pooler, hub_backbone.pooled_dense.weights, "pooler")
