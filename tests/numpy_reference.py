"""Independent NumPy re-statement of docs/design.md: the ACT equations and ALBERT's forward pass.

Written token by token in float64 with plain Python bookkeeping, deliberately
unlike the vectorised library code, so that a shared mistake is unlikely.
"""

import math

import numpy as np


def act(h0, real, layer, halting, max_iterations, epsilon=0.01):
    """ACT per docs/design.md.

    h0: (B, T, H) initial states; real: (B, T) bool; layer(h) -> y (B, T, H);
    halting(y) -> p (B, T). Returns a dict with sequence_output, iterations,
    remainders, expected_iterations, ponder_cost, update_weights (B, T, N_max), halting_probabilities.
    """
    h = np.array(h0, dtype=np.float64)
    batch, length, _ = h.shape
    iterations = np.zeros((batch, length))
    remainders = np.zeros((batch, length))
    weights = np.zeros((batch, length, max_iterations))
    probabilities = np.zeros((batch, length, max_iterations))
    halted = ~np.asarray(real, bool)  # padding halts before the first iteration
    for n in range(1, max_iterations + 1):
        y = np.asarray(layer(h), np.float64)  # every token, halted ones included (keys/values)
        p = np.asarray(halting(y), np.float64)
        h_next = h.copy()
        for b in range(batch):
            for t in range(length):
                if halted[b, t]:
                    continue  # frozen
                sum_before = probabilities[b, t, : n - 1].sum()  # sum_{k<n} p^k
                probabilities[b, t, n - 1] = p[b, t]
                if sum_before + p[b, t] >= 1 - epsilon or n == max_iterations:
                    iterations[b, t] = n
                    remainders[b, t] = 1 - sum_before
                    lam = remainders[b, t]
                    halted[b, t] = True
                else:
                    lam = p[b, t]
                weights[b, t, n - 1] = lam
                h_next[b, t] = lam * y[b, t] + (1 - lam) * h[b, t]
        h = h_next
    return {
        "sequence_output": h,
        "iterations": iterations,
        "remainders": remainders,
        # E_t = sum_n n lam_t^n, written as a loop over iterations
        "expected_iterations": sum(n * weights[..., n - 1] for n in range(1, max_iterations + 1)),
        "ponder_cost": (iterations + remainders).sum(axis=1),
        "update_weights": weights,
        "halting_probabilities": probabilities,
    }


def layer_norm(x, gamma, beta, epsilon=1e-12):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def numpy_weights(layer):
    """{short name: float64 array} for a Keras layer's weights, e.g. 'query/kernel'."""
    prefix = layer.path + "/"
    return {w.path.removeprefix(prefix): np.asarray(w.numpy(), np.float64) for w in layer.weights}


def transformer_block(w, h, real):
    """Post-LN block: self-attention over real keys, GELU(tanh) FFN. w from numpy_weights."""
    q = np.einsum("btd,dnh->btnh", h, w["query/kernel"]) + w["query/bias"]
    k = np.einsum("btd,dnh->btnh", h, w["key/kernel"]) + w["key/bias"]
    v = np.einsum("btd,dnh->btnh", h, w["value/kernel"]) + w["value/bias"]
    scores = np.einsum("bqnh,btnh->bnqt", q, k) / math.sqrt(q.shape[-1])
    scores = np.where(real[:, None, None, :], scores, -np.inf)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    context = np.einsum("bnqt,btnh->bqnh", probs, v)
    attention = np.einsum("bqnh,nhd->bqd", context, w["attention_output/kernel"]) + w["attention_output/bias"]
    x = layer_norm(h + attention, w["attention_layer_norm/gamma"], w["attention_layer_norm/beta"])
    ffn = gelu_tanh(x @ w["intermediate/kernel"] + w["intermediate/bias"])
    ffn = ffn @ w["output/kernel"] + w["output/bias"]
    return layer_norm(x + ffn, w["output_layer_norm/gamma"], w["output_layer_norm/beta"])


def embeddings(w, token_ids, segment_ids):
    """Factorized embeddings (E) -> LayerNorm -> projection (H). w from numpy_weights."""
    length = token_ids.shape[1]
    x = (
        w["token_embedding/embeddings"][token_ids]
        + w["position_embeddings"][:length][None]
        + w["segment_embedding/embeddings"][segment_ids]
    )
    x = layer_norm(x, w["layer_norm/gamma"], w["layer_norm/beta"])
    return x @ w["projection/kernel"] + w["projection/bias"]


def backbone(model, inputs):
    """The whole AlbertActBackbone forward pass (shared weights, halting 'act' or 'none')."""
    real = np.asarray(inputs["padding_mask"], bool)
    h0 = embeddings(numpy_weights(model.embeddings), inputs["token_ids"], inputs["segment_ids"])
    block = numpy_weights(model.encoder.blocks[0])
    layer = lambda h: transformer_block(block, h, real)  # noqa: E731
    n_max = model.max_iterations
    if model.halting == "act":
        unit = numpy_weights(model.encoder.halting_unit)
        halting = lambda y: 1 / (1 + np.exp(-(y @ unit["dense/kernel"][:, 0] + unit["dense/bias"][0])))  # noqa: E731
    else:  # fixed depth: lam = 1 for every real token, N = N_max, R = 0
        halting = None
    if halting is None:
        h = h0
        for _ in range(n_max):
            h = np.where(real[..., None], layer(h), h)
        iterations = real * float(n_max)
        out = {"sequence_output": h, "iterations": iterations, "expected_iterations": iterations,
               "remainders": np.zeros_like(iterations), "ponder_cost": iterations.sum(1)}
    else:
        out = act(h0, real, layer, halting, n_max, model.halting_epsilon)
    pooler = numpy_weights(model.pooler)
    out["pooled_output"] = np.tanh(out["sequence_output"][:, 0] @ pooler["kernel"] + pooler["bias"])
    return out
