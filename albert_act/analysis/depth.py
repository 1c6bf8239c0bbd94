"""Where the depth goes: iterations per token type, per dependency relation, and the fixed-point curves.

Each analysis returns plain dicts (JSON-ready). The computations that define the
numbers are small pure functions, tested by hand:
  `token_types.summarize` iterations per token type with intervals (Table 1),
  `align_words`          SentencePiece pieces aligned to words, tokenized word by word,
  `relation_table`       first-piece and all-piece means per relation (Tables 3-5),
  `cosine_curves`        mean cos(h^n, h^{n+1}) over tokens still running at n (Figures 2-4).
Corrections to the authors' scripts: [MASK]->random excludes [MASK] inputs, sentences are
never truncated mid-word, and halted tokens are left out of the cosine curves (not filled with 1.0).
"""

import collections

import numpy as np
import tensorflow as tf

from albert_act import distribution
from albert_act.analysis import confidence, token_types
from pipelines import probing
from pipelines.pretraining_dataset import guarded, make_pretraining_dataset
from pipelines.tokenizer import CLS_ID, SEP_ID


def inference(backbone, strategy=None, jit_compile=False):
    """The analyses' forward pass: dict of numpy (B, T) inputs -> dict of numpy outputs
    (`iterations`, `expected_iterations`, and `iteration_states` when the backbone returns
    details), each replica of `strategy` computing its rows, XLA-compiled when jit_compile
    (`albert_act.distribution.row_runner`). Build the backbone inside `strategy.scope()`."""
    if "iterations" not in backbone.output:
        raise ValueError("the model has no `iterations` output: not an albert-act backbone")
    keys = [k for k in ("iterations", "expected_iterations", "iteration_states") if k in backbone.output]

    def replica_fn(inputs):
        outputs = backbone(inputs, training=False)
        return {k: outputs[k] for k in keys}

    return distribution.row_runner(replica_fn, strategy or tf.distribute.get_strategy(), jit_compile)


def model_inputs(inputs):
    """The backbone's inputs of a batch of pre-training records."""
    return {k: inputs[k] for k in ("token_ids", "segment_ids", "padding_mask")}


# --- Table 1: token types -------------------------------------------------------------------

def token_type_statistics(backbone, tokenizer, files, batch_size=64, max_batches=None, examples=4, run=None,
                          progress=False):
    """Iterations N and expected iterations E per token type on pre-training TFRecords, with 95%
    bootstrap intervals over the sequences (`token_types.summarize`), histograms of N, and a few
    example sequences for heat maps. run: `inference(backbone, ...)` (default: no strategy, no XLA)."""
    run, n_max = run or inference(backbone), backbone.max_iterations
    depth, histogram, kept = [], 0, []
    dataset = make_pretraining_dataset(files, batch_size, training=False, max_length=backbone.max_sequence_length)
    for i, (inputs, labels) in enumerate(progress_bar(guarded(dataset, files), progress, "token types (batches)", max_batches)):
        if max_batches is not None and i >= max_batches:
            break
        outputs = run(model_inputs(inputs))
        masks = token_types.token_type_masks(inputs, labels)
        depth.append(token_types.depth_sums(outputs["iterations"], outputs["expected_iterations"], masks).numpy())
        histogram = histogram + token_types.iteration_histogram(outputs["iterations"], masks, n_max).numpy()
        iterations = outputs["iterations"]
        for row in range(min(examples - len(kept), len(iterations))):
            length = int(inputs["padding_mask"][row].numpy().sum())
            ids = inputs["token_ids"][row, :length].numpy()
            kept.append({"tokens": tokenizer.id_to_piece(ids), "iterations": iterations[row, :length].tolist()})
    if not depth:
        raise ValueError(f"no records in {files}")
    depth = np.concatenate(depth)
    return {"max_iterations": n_max, "types": token_types.summarize(depth, histogram),
            "differences": token_types.differences(depth), "examples": kept}


# --- A user's own sentences ----------------------------------------------------------------------

def sentence_depths(backbone, tokenizer, sentences, batch_size=32, run=None):
    """Iterations of every piece of each sentence, served as a sentence is (`[CLS] text [SEP]`, one
    segment; cut to the model's length, flagged `truncated`; each "[MASK]", in any case, the [MASK]
    token, as fill_mask reads it): [{"text", "tokens", "iterations", "mean_iterations", "truncated"}],
    [CLS] and [SEP] included."""
    run = run or inference(backbone)
    length = backbone.max_sequence_length
    rows = []
    for start in range(0, len(sentences), batch_size):
        chunk = sentences[start : start + batch_size]
        whole = [tokenizer.encode_with_masks(text) for text in chunk]
        encoded = [[CLS_ID, *ids[: length - 2], SEP_ID] for ids in whole]
        width = min(length, -(-max(len(ids) for ids in encoded) // 16) * 16)  # few shapes to compile
        tokens = np.zeros((len(chunk), width), "int32")
        for row, ids in enumerate(encoded):
            tokens[row, : len(ids)] = ids
        iterations = run({"token_ids": tokens, "segment_ids": np.zeros_like(tokens),
                          "padding_mask": (tokens > 0).astype("int32")})["iterations"]
        for row, (text, ids, full) in enumerate(zip(chunk, encoded, whole)):
            depth = [float(n) for n in iterations[row, : len(ids)]]
            rows.append({"text": text, "tokens": tokenizer.id_to_piece(ids), "iterations": depth,
                         "mean_iterations": float(np.mean(depth)), "truncated": len(ids) - 2 < len(full)})
    return rows


# --- Tables 3-5: dependency relations --------------------------------------------------------

def align_words(tokenizer, words, max_length, glued=None):
    """Pieces of `[CLS] w1 ... wk [SEP]`, each word encoded on its own (so no piece crosses a word),
    and the word index of every piece (-1 for [CLS]/[SEP]). `glued[i]`: word i follows word i-1 with
    no space ("book" ".") and is encoded as the rest of that word (".", not "▁" "."), as the text
    is in pre-training. Words that do not fit are dropped whole. Returns (ids, word_of_piece, words kept)."""
    glued = glued or [False] * len(words)
    ids, word_of = [CLS_ID], [-1]
    encoded = [None] * len(words)
    for rest in (False, True):  # one call each: new words, and the rests of words
        indices = [i for i, g in enumerate(glued) if g == rest]
        for i, pieces in zip(indices, tokenizer.encode([words[i] for i in indices], word_start=not rest)):
            encoded[i] = pieces
    for index, pieces in enumerate(encoded):
        if len(ids) + len(pieces) + 1 > max_length:
            return ids + [SEP_ID], word_of + [-1], index
        ids += pieces
        word_of += [index] * len(pieces)
    return ids + [SEP_ID], word_of + [-1], len(words)


def relation_table(records, fold_subtypes=True, resamples=confidence.RESAMPLES, seed=0):
    """Per relation: words, first-piece mean with its 95% interval, all-piece mean (and pieces), and
    the first-piece mean minus that of every word, with its interval; from records =
    [(sentence index, relation, [iterations of the word's pieces])]. The intervals are a bootstrap
    over sentences (a sentence's words share its attention). `deeper` says the difference's interval
    lies above 0: the relation runs deeper than the average word, the paper's claim for task-crucial
    relations. Relations whose first-piece mean is above (mean + std over relations) are marked, as
    in the paper's tables."""
    first, every = collections.defaultdict(list), collections.defaultdict(list)
    sentences = 1 + max((index for index, _, _ in records), default=-1)
    def folded(relation):  # nsubj:pass -> nsubj; PTB's ":" tag (a .dp file's label) stays itself, not ""
        return (relation.split(":")[0] or relation) if fold_subtypes else relation

    names = sorted({folded(r) for _, r, _ in records})
    column = {name: k for k, name in enumerate(names)}
    sums, counts = np.zeros((sentences, len(names) + 1)), np.zeros((sentences, len(names) + 1))
    for index, relation, piece_iterations in records:
        relation = folded(relation)
        first[relation].append(piece_iterations[0])
        every[relation].extend(piece_iterations)
        for k in (column[relation], len(names)):  # the relation's column and every word's
            sums[index, k] += piece_iterations[0]
            counts[index, k] += 1
    resampled = confidence.resampled_ratios(sums, counts, confidence.resample_counts(max(sentences, 1), resamples,
                                                                                     seed)) if records else None
    rows = {}
    for r in first:
        k = column[r]
        low, high = confidence.percentile_interval(resampled[:, k])
        difference_low, difference_high = confidence.percentile_interval(resampled[:, k] - resampled[:, -1])
        mean = float(np.mean(first[r]))
        rows[r] = {"words": len(first[r]), "first_piece_mean": mean, "first_piece_interval": [float(low), float(high)],
                   "pieces": len(every[r]), "all_piece_mean": float(np.mean(every[r])),
                   "difference_from_mean": mean - float(sums[:, -1].sum() / counts[:, -1].sum()),
                   "difference_interval": [float(difference_low), float(difference_high)],
                   "deeper": bool(difference_low > 0)}
    means = np.array([row["first_piece_mean"] for row in rows.values()])
    threshold = float(means.mean() + means.std()) if len(means) else float("nan")
    for row in rows.values():
        row["marked"] = row["first_piece_mean"] > threshold
    overall = {}
    if records:
        low, high = confidence.percentile_interval(resampled[:, -1])
        overall = {"mean_first_piece": float(sums[:, -1].sum() / counts[:, -1].sum()),
                   "mean_first_piece_interval": [float(low), float(high)]}
    return {"relations": dict(sorted(rows.items(), key=lambda kv: -kv[1]["first_piece_mean"])),
            "threshold_mean_plus_std": threshold, **overall}


def progress_bar(iterable, enabled, what, total=None):
    """A progress bar on stderr when enabled (and stderr is a terminal: no escapes in log files)."""
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=what, disable=None if enabled else True, mininterval=1.0, leave=False)


def dependency_statistics(backbone, tokenizer, sentences, fold_subtypes=True, batch_size=32, examples=4, run=None,
                          progress=False):
    """Iterations per dependency relation on parsed sentences [(form, tag, head, relation, space_after)].
    Batches are padded to a multiple of 16 positions: few shapes for XLA to compile."""
    run = run or inference(backbone)
    length = backbone.max_sequence_length
    aligned = [align_words(tokenizer, [t[0] for t in s], length, probing.glued_words(s))
               for s in progress_bar(sentences, progress, "aligning words to pieces")]
    if not aligned:
        raise ValueError("no sentences to analyse")
    records, kept, dropped_words = [], [], 0
    for start in progress_bar(range(0, len(aligned), batch_size), progress, "dependencies",
                           total=-(-len(aligned) // batch_size)):
        chunk = aligned[start : start + batch_size]
        width = min(length, -(-max(len(ids) for ids, _, _ in chunk) // 16) * 16)
        tokens = np.zeros((len(chunk), width), "int32")
        for row, (ids, _, _) in enumerate(chunk):
            tokens[row, : len(ids)] = ids
        iterations = run({"token_ids": tokens, "segment_ids": np.zeros_like(tokens),
                          "padding_mask": (tokens > 0).astype("int32")})["iterations"]
        for row, (ids, word_of, kept_words) in enumerate(chunk):
            sentence = sentences[start + row]
            dropped_words += len(sentence) - kept_words
            per_word = collections.defaultdict(list)
            for position, word in enumerate(word_of):
                if word >= 0:
                    per_word[word].append(float(iterations[row, position]))
            records += [(start + row, sentence[w][3], per_word[w]) for w in sorted(per_word)]
            if len(kept) < examples:
                kept.append({"tokens": tokenizer.id_to_piece(ids), "iterations": iterations[row, : len(ids)].tolist()})
    if not records:  # (every sentence's first word past the model's length, with [CLS] and [SEP])
        raise ValueError(f"no word of the {len(sentences):,} sentences fits the model's {length} positions (with [CLS] "
                         f"and [SEP]; {dropped_words:,} words left out): give sentences of fewer pieces")
    table = relation_table(records, fold_subtypes)
    every = [i for _, _, pieces in records for i in pieces]
    table.update(sentences=len(sentences), words=len(records), words_dropped_at_max_length=dropped_words,
                 mean_all_pieces=float(np.mean(every)), std_all_pieces=float(np.std(every)), examples=kept,
                 max_iterations=backbone.max_iterations)
    return table


# --- Figures 2-4: fixed point ----------------------------------------------------------------

def cosine_sums(states, iterations, masks):
    """For n = 1..N_max-1: sum and count of cos(h^n, h^{n+1}) per type over tokens with N_t > n
    (still running at n: h^{n+1} is a real update). states (B, N_max, T, H); iterations (B, T)."""
    states = np.asarray(states, np.float64)
    a, b = states[:, :-1], states[:, 1:]  # (B, N-1, T, H): h^n and h^{n+1}
    cosine = (a * b).sum(-1) / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1), 1e-12)
    steps = np.arange(1, states.shape[1])[None, :, None]  # n
    running = np.asarray(iterations)[:, None, :] > steps  # (B, N-1, T)
    sums = {}
    for name, mask in masks.items():
        selected = running & np.asarray(mask, bool)[:, None, :]
        sums[name] = ((cosine * selected).sum(axis=(0, 2)), selected.sum(axis=(0, 2)))
    return sums


def cosine_curves(sums):
    """{type: [{n, mean_cosine, tokens}]} from summed `cosine_sums` (n counted from 1)."""
    return {name: [{"n": n + 1, "mean_cosine": float(total[n] / count[n]) if count[n] else None, "tokens": int(count[n])}
                   for n in range(len(total))] for name, (total, count) in sums.items()}


def fixed_point_statistics(backbone, files, batch_size=32, max_batches=None, run=None, progress=False):
    """Cosine curves per token type on pre-training TFRecords (the backbone needs return_details=True)."""
    if "iteration_states" not in backbone.output:
        raise ValueError("the fixed-point analysis needs a backbone built with return_details=True")
    run = run or inference(backbone)
    totals = None
    batches = make_pretraining_dataset(files, batch_size, training=False, max_length=backbone.max_sequence_length)
    for i, (inputs, labels) in enumerate(progress_bar(guarded(batches, files), progress, "fixed point (batches)", max_batches)):
        if max_batches is not None and i >= max_batches:
            break
        outputs = run(model_inputs(inputs))
        masks = {k: v.numpy() for k, v in token_types.token_type_masks(inputs, labels).items()}
        batch = cosine_sums(outputs["iteration_states"], outputs["iterations"], masks)
        totals = batch if totals is None else {k: (totals[k][0] + batch[k][0], totals[k][1] + batch[k][1]) for k in totals}
    if totals is None:
        raise ValueError(f"no records in {files}")
    return {"max_iterations": backbone.max_iterations, "curves": cosine_curves(totals)}
