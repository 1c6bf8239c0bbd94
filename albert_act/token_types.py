"""Token types of the paper's Table 1, and iteration statistics per type.

For a pre-training instance, each real token is one of:
    [CLS], [SEP], unmasked (any other token not selected for prediction),
    [MASK]->[MASK]     selected, and its input is [MASK],
    [MASK]->random     selected, and its input is neither [MASK] nor the original token,
    [MASK]->original   selected, and its input is the original token.
(The authors' scripts counted [MASK] inputs in "random" too; we do not.)
"""

from keras import ops

CLS_ID, SEP_ID, MASK_ID = 2, 3, 4
TOKEN_TYPES = ("all", "[CLS]", "[SEP]", "unmasked", "[MASK]->[MASK]", "[MASK]->random", "[MASK]->original")


def token_type_masks(inputs, labels):
    """{type: bool (B, T)} for the batch; `all` is every real token."""
    tokens = inputs["token_ids"]  # (B, T)
    real = ops.cast(inputs["padding_mask"], "bool")
    length = ops.shape(tokens)[1]
    selected_weights = ops.cast(labels["masked_lm_weights"] > 0, "int32")  # (B, P)
    one_hot = ops.one_hot(inputs["masked_positions"], length, dtype="int32")  # (B, P, T)
    selected = ops.sum(one_hot * selected_weights[..., None], axis=1) > 0  # (B, T)
    original = ops.sum(one_hot * (ops.cast(labels["masked_lm_ids"], "int32") * selected_weights)[..., None], axis=1)
    is_mask = ops.equal(tokens, MASK_ID)
    is_original = ops.equal(tokens, original)
    is_cls, is_sep = ops.equal(tokens, CLS_ID) & real, ops.equal(tokens, SEP_ID) & real
    return {
        "all": real,
        "[CLS]": is_cls,
        "[SEP]": is_sep,
        "unmasked": real & ~selected & ~is_cls & ~is_sep,
        "[MASK]->[MASK]": selected & is_mask,
        "[MASK]->random": selected & ~is_mask & ~is_original,
        "[MASK]->original": selected & is_original,
    }


SUM_KEYS = tuple(f"{name}/{part}" for name in TOKEN_TYPES for part in ("sum", "squares", "count"))


def iteration_sums(iterations, masks):
    """Flat {"<type>/sum", "<type>/squares", "<type>/count"} float32 scalars, summable across batches."""
    iterations = ops.cast(iterations, "float32")
    sums = {}
    for name, mask in masks.items():
        m = ops.cast(mask, "float32")
        sums[f"{name}/sum"] = ops.sum(iterations * m)
        sums[f"{name}/squares"] = ops.sum(ops.square(iterations) * m)
        sums[f"{name}/count"] = ops.sum(m)
    return sums


def summarize(sums):
    """{type: {"mean", "std", "count"}} from summed `iteration_sums` (numpy-convertible)."""
    table = {}
    for name in TOKEN_TYPES:
        total, squares, count = (float(sums[f"{name}/{part}"]) for part in ("sum", "squares", "count"))
        mean = total / count if count else float("nan")
        variance = max(squares / count - mean * mean, 0.0) if count else float("nan")
        table[name] = {"mean": mean, "std": variance ** 0.5, "count": int(count)}
    return table


def markdown_table(table, max_iterations):
    """The paper's Table 1 as Markdown from a `summarize`d table: mean +- std iterations per type, `all` last."""
    lines = [f"| token type | mean iterations (of {max_iterations}) | std | tokens |", "|---|---|---|---|"]
    for name in TOKEN_TYPES[1:] + TOKEN_TYPES[:1]:
        row = table[name]
        mean, std = ("-", "-") if not row["count"] else (f"{row['mean']:.2f}", f"{row['std']:.2f}")
        lines.append(f"| {name} | {mean} | {std} | {row['count']} |")
    return "\n".join(lines)
