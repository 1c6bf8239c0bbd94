"""PNG plots of the depth analyses (matplotlib, no display needed)."""

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def _save(figure, path):
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _types(types):
    from albert_act.analysis.token_types import TOKEN_TYPES

    return [n for n in TOKEN_TYPES if n in types and types[n]["count"]]


def _error_bars(types, names, key):
    """(2, n) distances to the 95% interval when known, else the std (symmetric)."""
    interval = key.replace("mean", "interval")
    if all(interval in types[n] for n in names):
        return np.array([[types[n][key] - types[n][interval][0] for n in names],
                         [types[n][interval][1] - types[n][key] for n in names]])
    std = [types[n]["std" if key == "mean" else "expected_std"] for n in names]
    return np.array([std, std])


def token_types_figure(types, max_iterations, depth_threshold=None):
    """Per token type: mean iterations N and mean expected iterations E side by side; error bars
    are 95% intervals when known (else the std); token counts in the labels."""
    names = _types(types)
    with_intervals = all("interval" in types[n] for n in names)
    figure, axis = plt.subplots(figsize=(9, 4.5))
    x, width = np.arange(len(names)), 0.38
    for offset, key, label, color in ((-width / 2, "mean", "iterations N", "#4477aa"),
                                      (width / 2, "expected_mean", "expected iterations E", "#66ccee")):
        axis.bar(x + offset, [types[n][key] for n in names], width, yerr=_error_bars(types, names, key),
                 capsize=3, color=color, label=label)
    if depth_threshold:
        axis.axhline(depth_threshold, color="#cc6677", linestyle="--", label=f"log3(H) = {depth_threshold:.1f}")
    axis.legend(loc="upper right", fontsize=9)
    axis.set_ylim(0, max_iterations + 0.5)
    axis.set_xticks(x)
    axis.set_xticklabels([f"{n}\n{types[n]['count']} tokens" for n in names], fontsize=8)
    axis.set_ylabel("mean " + ("± 95% CI" if with_intervals else "± std"))
    axis.set_title("Iterations per token type")
    return figure


def plot_token_types(types, max_iterations, path, depth_threshold=None):
    return _save(token_types_figure(types, max_iterations, depth_threshold), path)


def token_types_png(types, max_iterations):
    """The token-type bars as PNG bytes (for TensorBoard images)."""
    figure = token_types_figure(types, max_iterations)
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=80)
    plt.close(figure)
    return buffer.getvalue()


def plot_histograms(types, path):
    """Share of tokens at each iteration count, one group of bars per token type."""
    names = _types(types)
    figure, axis = plt.subplots(figsize=(9, 4))
    width = 0.8 / max(len(names), 1)
    max_iterations = 1
    for i, name in enumerate(names):
        counts = np.asarray(types[name]["histogram"], float)[1:]  # N = 1..N_max (0 is padding only)
        max_iterations = len(counts)
        offset = (i - (len(names) - 1) / 2) * width  # each group centred on its whole number
        axis.bar(np.arange(1, len(counts) + 1) + offset, counts / max(counts.sum(), 1), width, label=name)
    axis.set_xticks(range(1, max_iterations + 1))
    axis.set_xlim(0.5, max_iterations + 0.5)
    axis.set_xlabel("iterations N_t")
    axis.set_ylabel("share of tokens")
    axis.set_title("Distribution of iterations per token type")
    axis.legend(fontsize=7)
    return _save(figure, path)


def plot_relations(relations, threshold, path):
    """Relations sorted by first-piece mean, with their 95% intervals where given; marked ones
    (above mean + std) in red."""
    names = list(relations)
    values = [relations[n]["first_piece_mean"] for n in names]
    colors = ["#cc6677" if relations[n]["marked"] else "#4477aa" for n in names]
    errors = None
    if all("first_piece_interval" in relations[n] for n in names):
        errors = np.array([[v - relations[n]["first_piece_interval"][0], relations[n]["first_piece_interval"][1] - v]
                           for n, v in zip(names, values)])[::-1].T
    figure, axis = plt.subplots(figsize=(7, max(3, 0.22 * len(names))))
    axis.barh(names[::-1], values[::-1], color=colors[::-1], xerr=errors, ecolor="black", capsize=2)
    axis.axvline(threshold, color="gray", linestyle="--", label=f"mean + std = {threshold:.2f}")
    axis.set_xlabel("mean iterations (first piece)")
    axis.set_title("Iterations per dependency relation")
    axis.legend(fontsize=8)
    return _save(figure, path)


def plot_cosine_curves(curves, path):
    """Mean cos(h^n, h^{n+1}) per token type against n (running tokens only).

    Whole-number iterations on x; plain values on y (no offset notation), from just below the
    lowest mean to 1; iterations where no token runs any more are named on the plot.
    """
    figure, axis = plt.subplots(figsize=(7, 4))
    steps = sorted({p["n"] for points in curves.values() for p in points})
    values = [p["mean_cosine"] for points in curves.values() for p in points if p["mean_cosine"] is not None]
    for name, points in curves.items():
        xs = [p["n"] for p in points if p["mean_cosine"] is not None]
        ys = [p["mean_cosine"] for p in points if p["mean_cosine"] is not None]
        if xs:
            axis.plot(xs, ys, marker="o", label=name)
    low = min(values, default=0.0)
    axis.set_ylim(min(low - 0.1 * (1 - low) - 0.005, 0.99), 1.002)
    axis.ticklabel_format(axis="y", useOffset=False, style="plain")
    if steps:
        axis.set_xticks(steps)
        axis.set_xlim(steps[0] - 0.5, steps[-1] + 0.5)
    empty = [n for n in steps if all(p["mean_cosine"] is None for points in curves.values() for p in points if p["n"] == n)]
    for n in empty:
        axis.text(n, axis.get_ylim()[0], "no token\nruns", ha="center", va="bottom", fontsize=8, color="0.4")
    axis.set_xlabel("iteration n")
    axis.set_ylabel("mean cos(h^n, h^(n+1))")
    axis.set_title("Convergence toward a fixed point (tokens still running)")
    if values:
        axis.legend(fontsize=8)
    return _save(figure, path)


def plot_heatmap(examples, max_iterations, path, max_tokens=40, per_line=14, shown=4):
    """Example sentences (the first `shown`), each piece coloured by its number of iterations,
    written across (lines of `per_line` pieces, at most `max_tokens` per example)."""
    lines, labels = [], []
    for i, example in enumerate(examples[:shown]):
        pieces = list(zip(example["tokens"][:max_tokens], example["iterations"][:max_tokens]))
        for start in range(0, max(len(pieces), 1), per_line):
            lines.append(pieces[start : start + per_line])
            labels.append(f"example {i + 1}" if start == 0 else "")
    figure, axis = plt.subplots(figsize=(2 + 0.85 * per_line, 0.5 * len(lines) + 1.2))
    grid = np.full((len(lines), per_line), np.nan)
    colormap = plt.get_cmap("viridis", max_iterations + 1)  # one colour per whole number of iterations
    for r, line in enumerate(lines):
        for c, (token, iterations) in enumerate(line):
            grid[r, c] = iterations
            shade = colormap(int(iterations))
            ink = "black" if 0.299 * shade[0] + 0.587 * shade[1] + 0.114 * shade[2] > 0.5 else "white"
            axis.text(c, r, token.replace("\u2581", ""), ha="center", va="center", fontsize=8, color=ink)
    image = axis.imshow(grid, cmap=colormap, vmin=-0.5, vmax=max_iterations + 0.5, aspect="auto")
    figure.colorbar(image, ax=axis, label="iterations", ticks=range(max_iterations + 1))
    for r, label in enumerate(labels[1:], start=1):
        if label:  # a line between examples
            axis.axhline(r - 0.5, color="white", linewidth=3)
    axis.set_yticks(range(len(lines)))
    axis.set_yticklabels(labels)
    axis.set_xticks([])
    cut = [len(example["tokens"]) > max_tokens for example in examples[:shown]]
    part = f" (the first {min(shown, len(examples))} of {len(examples)} examples)" if len(examples) > shown else ""
    part += f"; {sum(cut)} cut to their first {max_tokens} pieces" if any(cut) else ""
    axis.set_title("Iterations per token" + part)
    return _save(figure, path)


def plot_learning_curve(curves, path):
    """Held-out MLM and SOP accuracy against updates, 95% bands, beside their baselines. curves: one
    run's points, or {name: points} to draw several runs on the same axes (evaluated on the same
    records: the first run's baselines are drawn)."""
    curves = curves if isinstance(curves, dict) else {"held out": curves}
    colours = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377")
    first = next(iter(curves.values()))
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for axis, name, baseline in ((axes[0], "mlm", "mlm_unigram_baseline"), (axes[1], "sop", "sop_majority_baseline")):
        for (label, points), colour in zip(curves.items(), colours * len(curves)):
            steps = [p["step"] for p in points]
            axis.plot(steps, [p[f"{name}_accuracy"] for p in points], marker="o", markersize=3, color=colour,
                      label=label)
            axis.fill_between(steps, [p[f"{name}_accuracy_interval"][0] for p in points],
                              [p[f"{name}_accuracy_interval"][1] for p in points], color=colour, alpha=0.25,
                              label="95% interval" if len(curves) == 1 else None)
        axis.axhline(first[0][baseline], color="gray", linestyle="--", label="baseline")
        axis.set_xlabel("updates")
        axis.set_ylabel(f"{name.upper()} accuracy")
        axis.set_title(f"Held-out {name.upper()} accuracy" + (" (bands: 95%)" if len(curves) > 1 else ""))
        axis.legend(fontsize=7)
    return _save(figure, path)


def plot_difficulty(types, max_iterations, path):
    """Depth against difficulty: per token type, mean N (95% CI) per surprisal quintile of its tokens,
    at the quintile's middle surprisal. Left on the whole depth scale (0 to N_max), right zoomed to
    the intervals, so that rises of a few hundredths of an iteration can be seen as well as their size."""
    figure, (whole, zoomed) = plt.subplots(1, 2, figsize=(11, 4.5))
    lows, highs = [], []
    for name, row in types.items():
        if name == "all" or not row.get("bins"):
            continue
        bins = row["bins"]
        middles = [sum(b["surprisal_range"]) / 2 for b in bins]
        means = np.array([b["mean_iterations"][0] for b in bins])
        errors = np.abs(np.array([[b["mean_iterations"][0] - b["mean_iterations"][1] for b in bins],
                                  [b["mean_iterations"][2] - b["mean_iterations"][0] for b in bins]]))
        lows.append(float(np.nanmin(means - errors[0])))
        highs.append(float(np.nanmax(means + errors[1])))
        for axis in (whole, zoomed):
            axis.errorbar(middles, means, yerr=errors, marker="o", capsize=3, label=f"{name} ({row['count']})")
    whole.set_ylim(0, max_iterations + 0.5)
    whole.set_title("Depth against difficulty (whole scale)")
    if lows and np.isfinite(lows + highs).all():
        # At least a quarter of an iteration tall, so that noise is not drawn as a slope.
        middle, half = (min(lows) + max(highs)) / 2, max((max(highs) - min(lows)) / 2 * 1.15, 0.125)
        zoomed.set_ylim(middle - half, middle + half)
    zoomed.set_title("the same, zoomed to the intervals")
    for axis in (whole, zoomed):
        axis.set_xlabel("surprisal under the reference model (nats), quintiles of each type")
        axis.grid(alpha=0.3)
    whole.set_ylabel("mean iterations N ± 95% CI")
    whole.legend(loc="upper left", fontsize=8)
    return _save(figure, path)
