"""The depth analyses as files: what `python -m albert_act.analyze <mode>` computes and writes.

`run_analyses` loads the model, checks the records against it, computes the mode's analyses (`albert_act.analysis.depth`)
and writes their tables (Markdown), numbers (JSON) and plots (PNG) into a staging dir that replaces the output dir
whole; the renderers turn each result into its Markdown table."""

import json
import math
import os
import re

import numpy as np

from albert_act import distribution
from albert_act.base import artifacts, outputs, overlap, plain_text, text_files
from albert_act.analysis import depth, difficulty, plots
from albert_act.analysis.token_types import markdown_table
from albert_act.io.source import Source
from pipelines import probing, synthetic_corpus
from pipelines.pretraining_dataset import check_masked, check_records, non_empty, record_files
from pipelines.record_vocabulary import check_records_vocabulary

MODES = ("held-out", "token-types", "dependencies", "fixed-point", "sentences", "difficulty", "report")

# What the modes write: an --output_dir holding anything else is refused, since the new analysis
# replaces the dir whole.
ANALYSIS_FILES = {f"{name}.{ext}" for name in ("held_out", "token_types", "dependencies", "fixed_point", "sentences", "difficulty")
                  for ext in ("json", "md", "png")}
ANALYSIS_FILES |= {"token_type_histograms.png", "token_types_heatmap.png", "dependencies_heatmap.png", "report.md"}


def check_output_dir(output_dir, overwrite=True, own_files=ANALYSIS_FILES, what="an analysis",
                     earlier="an earlier analysis"):
    """`outputs.check_output_dir` for an analysis's --output_dir (by default), not in a run's own folders."""
    artifacts.check_output_dir(output_dir, overwrite, own_files, what, earlier)


def run_analyses(mode, init, output_dir, vocab=None, records=None, parsed=None, documents=500, keep_subtypes=False,
                 max_batches=None, strategy="auto", precision="auto", jit_compile=None, evaluate_model=None,
                 text=None, reference=None):
    """The `mode` analyses (one of MODES) of the model in `init` (a run dir or an export), written to
    `output_dir`; returns the report's sections, (title, Markdown, image files). `records`: the
    pre-training TFRecords (default: the run's held-out shard); `parsed`: CoNLL-U / CoNLL-X / .dp
    files (default: gold parses of `documents` documents of the embedded corpus). `evaluate_model`:
    the pre-training evaluation (`albert_act.train.pretrainer.evaluate_model`, which the CLI passes:
    training code is a later stage than the analyses), needed by held-out. `text`: a plain-text file,
    one sentence per line, for sentences. `reference`: for difficulty, the pre-training model (run dir or
    export) whose surprisal the depth is set against, e.g. a fixed-depth ALBERT of the same records."""
    sentences = _check_inputs(mode, output_dir, records, parsed, text, reference, evaluate_model)
    strategy, _, _, jit_compile = distribution.resolve(strategy, precision, jit_compile)
    source = Source.open(init)
    tokenizer = source.tokenizer(vocab)
    # held-out needs the MLM and SOP heads: a pre-training model (in the report, where there is one)
    heads = mode == "held-out" or (mode == "report" and source.info["kind"] == "pretraining" and evaluate_model)
    compiled = source.xla_settings(jit_compile)
    with strategy.scope():
        backbone, _ = source.backbone(dropout=0.0, return_details=mode in ("fixed-point", "report"), **compiled)
        model = source.pretraining_model(**compiled)[0] if heads else None
        compared = _reference(reference, tokenizer, backbone, jit_compile) if reference is not None else None
    if mode in ("held-out", "token-types", "fixed-point", "difficulty", "report"):  # records of this model's vocabulary, length
        files = record_files(held_out_records(source, records))
        for model_source in (source, *([compared[1]] if compared is not None else [])):
            check_not_trained_on(model_source, files)
        records = non_empty(files) or files[:1]  # an empty shard holds nothing; all empty: the first is named
        for path in records:
            check_records(path, backbone.vocabulary_size, backbone.max_sequence_length)
            check_records_vocabulary(path, tokenizer.model_proto, vocab or f"{init}'s vocabulary")
        if mode != "held-out":  # (held-out: the evaluation says it)
            check_masked(records, "the [MASK] rows of the depth tables would be of nothing")
    infer = depth.inference(backbone, strategy, jit_compile)
    # Written in a staging dir beside the output and moved in whole: Ctrl-C, a crash or a full
    # disk leave the previous analysis as it was.
    output_dir = outputs.followed(output_dir)  # a symlink: into the folder it names
    with outputs.staging_dir(os.path.dirname(output_dir)) as staging:
        staged, sections = os.path.join(staging, "output"), []
        os.makedirs(staged)
        if heads:
            sections.append(_held_out(model, strategy, records, max_batches, jit_compile, evaluate_model, staged))
        if mode in ("token-types", "report"):
            sections.append(_token_types(backbone, tokenizer, records, max_batches, infer, staged))
        if mode in ("dependencies", "report"):
            sentences, source = _parsed_sentences(parsed, documents)
            sections.append(_dependencies(backbone, tokenizer, sentences, source, keep_subtypes, infer, staged))
        if mode in ("fixed-point", "report"):
            sections.append(_fixed_point(backbone, records, max_batches, infer, staged))
        if mode == "sentences":
            sections.append(_sentences(backbone, tokenizer, sentences, text, infer, staged))
        if mode == "difficulty":
            sections.append(_difficulty(backbone, compared, records, max_batches, infer, staged))
        if mode == "report":
            _write_report(init, backbone, sections, staged)
        outputs.replace_dir(staged, output_dir, staging)
    return sections


def _check_inputs(mode, output_dir, records, parsed, text, reference, evaluate_model):
    """Before any model loads: the output dir, inputs outside it, the flags each mode needs; returns
    the sentences of `text` (or None)."""
    check_output_dir(output_dir)
    for flag, path in (("--text", text), *(("--parsed", p) for p in parsed or ()), *(("--records", p) for p in
                                                                                   ([records] if isinstance(records, str) else records or ()))):
        if path and "://" not in str(path) and os.path.realpath(path).startswith(os.path.realpath(output_dir) + os.sep):
            raise ValueError(f"{flag} {path} lies inside --output_dir {output_dir}, which an analysis replaces whole: "
                             "move it out, or write the analysis elsewhere")
    if (mode == "sentences") != (text is not None):
        raise ValueError("--text (a plain-text file, one sentence per line) goes with the sentences mode, and "
                         "only with it" if text is not None else "the sentences mode needs --text FILE (one "
                         "sentence per line)")
    if reference is not None and "://" not in str(reference) and not os.path.exists(reference):
        raise ValueError(f"--reference {reference}: no such run dir or export")
    if (mode == "difficulty") != (reference is not None):
        raise ValueError("--reference (a pre-training model of the same vocabulary) goes with the difficulty mode, "
                         "and only with it" if reference is not None else "the difficulty mode needs --reference "
                         "MODEL (a pre-training run dir or export whose surprisal the depth is set against)")
    if mode == "held-out" and evaluate_model is None:
        raise ValueError("the held-out analysis needs evaluate_model (albert_act.train.pretrainer.evaluate_model)")
    return read_sentences(text) if text is not None else None


def _held_out(model, strategy, records, max_batches, jit_compile, evaluate_model, out):
    result = {**evaluate_model(model, strategy, records, 32, max_batches, jit_compile), "records": records}
    markdown = held_out_markdown(result, model.backbone.max_iterations)
    _write(out, "held_out", result, markdown)
    plots.plot_token_types(result["iterations"], model.backbone.max_iterations, os.path.join(out, "held_out.png"),
                           math.log(model.backbone.hidden_dim, 3))
    return "Held out: masked LM, sentence order and depth", markdown, ["held_out.png"]


def held_out_markdown(result, n_max):
    """MLM and SOP accuracy with their intervals and baselines, the losses, and Table 1 with E."""
    (ml, mh), (sl, sh) = result["mlm_accuracy_interval"], result["sop_accuracy_interval"]
    lines = ["| measure | model [95% CI] | baseline |", "|---|---|---|",
             f"| MLM accuracy | {result['mlm_accuracy']:.3f} [{ml:.3f}, {mh:.3f}] | "
             f"{result['mlm_unigram_baseline']:.3f} (most frequent target) |",
             f"| MLM loss | {result['mlm_loss']:.3f} | {result['mlm_unigram_loss']:.3f} (target frequencies, no context) |",
             f"| SOP accuracy | {result['sop_accuracy']:.3f} [{sl:.3f}, {sh:.3f}] | "
             f"{result['sop_majority_baseline']:.3f} (majority) |",
             f"| mean iterations N (of {n_max}) | {result['iterations']['all']['mean']:.2f} | |",
             f"| mean expected iterations E | {result['iterations']['all']['expected_mean']:.2f} | |",
             "", f"{result['examples']} sequences; intervals: bootstrap over sequences.", "",
             markdown_table(result["iterations"], n_max, result.get("differences"))]
    if result["sop_majority_baseline"] > 0.99:  # (records of --single_segment_prob 1, or all swapped)
        lines[-1:-1] = [f"**SOP measures nothing here:** {result['sop_majority_baseline']:.1%} "
                        "of these records have one sentence-order label (records made with --single_segment_prob 1?): "
                        "the SOP accuracy is not a finding.", ""]
    return "\n".join(lines)


def _token_types(backbone, tokenizer, records, max_batches, infer, out):
    n_max = backbone.max_iterations
    result = depth.token_type_statistics(backbone, tokenizer, records, max_batches=max_batches, run=infer,
                                         progress=True)
    markdown = token_types_markdown(result, backbone.hidden_dim)
    _write(out, "token_types", result, markdown)
    plots.plot_token_types(result["types"], n_max, os.path.join(out, "token_types.png"), math.log(backbone.hidden_dim, 3))
    plots.plot_histograms(result["types"], os.path.join(out, "token_type_histograms.png"))
    plots.plot_heatmap(result["examples"], n_max, os.path.join(out, "token_types_heatmap.png"))
    return "Iterations per token type", markdown, ["token_types.png", "token_type_histograms.png",
                                                   "token_types_heatmap.png"]


def _dependencies(backbone, tokenizer, sentences, source, keep_subtypes, infer, out):
    result = depth.dependency_statistics(backbone, tokenizer, sentences, fold_subtypes=not keep_subtypes, run=infer,
                                         progress=True)
    result["source"] = source
    markdown = f"Parsed data: {source}.\n\n" + dependencies_markdown(result)
    _write(out, "dependencies", result, markdown)
    plots.plot_relations(result["relations"], result["threshold_mean_plus_std"], os.path.join(out, "dependencies.png"))
    plots.plot_heatmap(result["examples"], backbone.max_iterations, os.path.join(out, "dependencies_heatmap.png"))
    return "Iterations per dependency relation", markdown, ["dependencies.png", "dependencies_heatmap.png"]


def _fixed_point(backbone, records, max_batches, infer, out):
    result = depth.fixed_point_statistics(backbone, records, max_batches=max_batches, run=infer, progress=True)
    markdown = fixed_point_markdown(result)
    _write(out, "fixed_point", result, markdown)
    plots.plot_cosine_curves(result["curves"], os.path.join(out, "fixed_point.png"))
    return "Fixed point: cosine of consecutive states", markdown, ["fixed_point.png"]


def _reference(path, tokenizer, backbone, jit_compile=False):
    """(the reference's pre-training model, its Source): it must read the ACT model's pieces (the same
    SentencePiece model; one that holds none, as many pieces, read as the model's, with a note) at its length."""
    try:
        source = Source.open(path)
        model = source.pretraining_model(**source.xla_settings(jit_compile))[0]
        rows = model.backbone.embeddings.vocabulary_size
        borrowed = source.vocab is None and rows == tokenizer.vocabulary_size  # (a run trained without --vocab)
        if borrowed:
            print(f"note: --reference {path} holds no vocabulary: its pieces are read as the model analysed's "
                  f"({rows:,} pieces, as many as its embeddings)", flush=True)
        proto = tokenizer.model_proto if borrowed else source.tokenizer().model_proto
    except ValueError as error:
        raise ValueError(f"--reference {error}") from None
    if proto != tokenizer.model_proto:
        raise ValueError(f"--reference {path} has another vocabulary than the model analysed: surprisal and depth "
                         "would be of different pieces; give a reference trained on the same vocabulary")
    if model.backbone.max_sequence_length < backbone.max_sequence_length:
        raise ValueError(f"--reference {path} reads at most {model.backbone.max_sequence_length} pieces, the model "
                         f"analysed {backbone.max_sequence_length}")
    if _same_weights(model.backbone, backbone):  # the model itself, by another path, a copy or its export
        print(f"warning: --reference {path} holds the same weights as the model analysed: its surprisal is the "
              "model's own, so depth is set against itself, not against an independent measure of difficulty; give "
              "another model (e.g. a fixed-depth ALBERT of the same records)", flush=True)
    return model, source


def _same_weights(first, second):
    """Whether two backbones hold the same weights, value for value."""
    a, b = first.weights, second.weights
    return len(a) == len(b) and all(x.shape == y.shape and np.array_equal(x.numpy(), y.numpy()) for x, y in zip(a, b))


def _difficulty(backbone, compared, records, max_batches, infer, out):
    reference, source = compared
    found = difficulty.collect(infer, reference, records, backbone.max_sequence_length, max_batches=max_batches,
                               progress=True)
    result = {"reference": source.path, "reference_halting": reference.backbone.halting,
              "reference_is_the_model": _same_weights(reference.backbone, backbone),
              "max_iterations": backbone.max_iterations, **difficulty.summarize(found)}
    if result.setdefault("reference_note", difficulty.chance_note(result["types"], reference.backbone.vocabulary_size)):
        print(f"warning: --reference {source.path}: {result['reference_note']}", flush=True)
    markdown = difficulty_markdown(result)
    _write(out, "difficulty", result, markdown)
    plots.plot_difficulty(result["types"], backbone.max_iterations, os.path.join(out, "difficulty.png"))
    return "Depth against difficulty", markdown, ["difficulty.png"]


def difficulty_markdown(result):
    """Per token type: Spearman's rho of N and of E with the reference's surprisal [95% CI]; then mean N
    and E per surprisal quintile."""
    fixed = "fixed depth" if result["reference_halting"] == "none" else f"halting {result['reference_halting']}"
    itself = (" **The reference holds the same weights as the model analysed: depth is set against the model's own "
              "surprisal, not an independent difficulty.**" if result.get("reference_is_the_model") else "") + (
        f" **{result['reference_note']}**" if result.get("reference_note") else "")
    lines = [f"Surprisal -ln p(token | context) under {result['reference']} ({fixed}).{itself}", "",
             "| tokens | count | mean surprisal | mean N | mean E | rho(N, surprisal) [95% CI] | "
             "rho(E, surprisal) [95% CI] |", "|---|---|---|---|---|---|---|"]
    for name, row in result["types"].items():
        if not row["count"]:
            continue
        rho = [f"{r:+.3f} [{low:+.3f}, {high:+.3f}]" if r == r else "- (no variation)"
               for r, low, high in (row["spearman_iterations"], row["spearman_expected"])]
        lines.append(f"| {name} | {row['count']} | {row['mean_surprisal']:.2f} | {row['mean_iterations']:.2f} | "
                     f"{row['mean_expected']:.2f} | {rho[0]} | {rho[1]} |")
    lines += ["", "Mean N [95% CI] per surprisal quintile of each type's tokens, easiest first (surprisal range "
                  "in nats):", "", "| tokens | " + " | ".join(f"quintile {q}" for q in range(1, 6)) + " |",
              "|---" * 6 + "|"]
    for name, row in result["types"].items():
        if row["count"] and row["bins"]:
            cells = [f"{b['mean_iterations'][0]:.2f} [{b['mean_iterations'][1]:.2f}, {b['mean_iterations'][2]:.2f}] "
                     f"({b['surprisal_range'][0]:.1f}-{b['surprisal_range'][1]:.1f})" for b in row["bins"]]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", f"Surprisal of the record's predicted positions as the record masks them; of "
                  f"{result['unmasked_per_sequence']} unmasked tokens per sequence, drawn at random and masked "
                  "beside the record's own. N and E: the analysed model on the record as it is. rho: Spearman's, "
                  "ties at their mean rank; intervals: bootstrap over sequences. \"all\" mixes the types in these "
                  "proportions, not in the text's: read the types apart."]
    return "\n".join(lines)


def read_sentences(path):
    """The non-blank lines of a UTF-8 text file (a line that is not UTF-8 is named; one of invisible
    characters only is blank: `text_files.is_blank`); ValueError when none."""
    sentences = [line.strip() for _, line in plain_text.read_text_lines(path, skip_flag=False)
                 if not text_files.is_blank(line)]
    if not sentences:
        raise ValueError(f"{path}: no sentences (one per line; the file is empty or blank)")
    return sentences


def _sentences(backbone, tokenizer, sentences, path, infer, out):
    rows = depth.sentence_depths(backbone, tokenizer, sentences, run=infer)
    empty = [row["text"] for row in rows if len(row["tokens"]) <= 2]  # ([CLS] [SEP]: accents or format marks alone)
    if empty:
        print(f"note: {len(empty)} of the {len(rows)} lines of {path} hold no piece once normalized as the model reads "
              f"text ({empty[0]!r}: accents or format characters alone): left out", flush=True)
        rows = [row for row in rows if len(row["tokens"]) > 2]
    if not rows:
        raise ValueError(f"{path}: no line holds a piece once normalized as the model reads text")
    pieces = [token for row in rows for token in row["tokens"][1:-1]]
    unknown = sum(token == "<unk>" for token in pieces) / max(len(pieces), 1)
    if unknown > 0.1:  # (as the data tool warns of its text): another script than the vocabulary's
        print(f"warning: {unknown:.0%} of the pieces of {path} are <unk> under the model's vocabulary (another script "
              "than its own?): their depths are of <unk>, not of the text", flush=True)
    markdown = f"Sentences: {path}.\n\n" + sentences_markdown(rows, backbone.max_iterations)
    _write(out, "sentences", {"source": path, "max_iterations": backbone.max_iterations, "sentences": rows}, markdown)
    plots.plot_heatmap(rows, backbone.max_iterations, os.path.join(out, "sentences.png"), shown=12)
    return "Iterations per piece of each sentence", markdown, ["sentences.png"]


def code_cell(text):
    """`text` as a Markdown table cell that shows it exactly: a code span (its fence longer than any run of
    backticks in it), so that `<unk>`, `*`, `_` or backticks in the text are not read as HTML or emphasis, and
    each "|" escaped, so that it stays in its cell."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def sentences_markdown(rows, n_max, shown=12):
    """Per sentence: its mean iterations, [CLS]'s, and every piece with its iterations (`code_cell`: shown as
    they are); then what sentences.png shows of them (`shown`)."""
    lines = [f"| # | mean N (of {n_max}) | [CLS] | pieces (iterations) |", "|---|---|---|---|"]
    for index, row in enumerate(rows, 1):
        pieces = code_cell(" ".join(f"{token.replace(chr(0x2581), '_')}({int(n)})" for token, n in
                                    zip(row["tokens"][1:-1], row["iterations"][1:-1])))
        cut = " (cut to the model's length)" if row["truncated"] else ""
        lines.append(f"| {index} | {row['mean_iterations']:.2f} | {int(row['iterations'][0])} | {pieces}{cut} |")
    drawn = f"the first {shown} of these {len(rows)} sentences" if len(rows) > shown else "each piece"
    lines += ["", "Each sentence alone, as a server is asked: `[CLS] sentence [SEP]`. `_` marks a piece that "
                  f"begins a word. sentences.png shades {drawn}{' piece by piece' if len(rows) > shown else ''} by "
                  "its iterations."]
    return "\n".join(lines)


def _write_report(init, backbone, sections, out):
    parts = [f"# Depth report: {init}", "",
             f"N_max = {backbone.max_iterations}, H = {backbone.hidden_dim}, halting = {backbone.halting}.", ""]
    for title, markdown, images in sections:
        parts += [f"## {title}", "", markdown, ""] + [f"![{image}]({image})" for image in images] + [""]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(parts))


def _write(output_dir, name, result, markdown):
    text_files.makedirs(output_dir)
    with open(os.path.join(output_dir, f"{name}.json"), "w") as f:
        json.dump(result, f, indent=2)
    with open(os.path.join(output_dir, f"{name}.md"), "w") as f:
        f.write(markdown + "\n")


def token_types_markdown(result, hidden_dim):
    types, n_max = result["types"], result["max_iterations"]
    threshold = math.log(hidden_dim, 3)
    lines = [markdown_table(types, n_max, result.get("differences"))]
    masked = [types[k] for k in ("[MASK]->[MASK]", "[MASK]->random", "[MASK]->original") if types[k]["count"]]
    masked_mean = sum(r["mean"] * r["count"] for r in masked) / max(sum(r["count"] for r in masked), 1)
    verdict = "more" if masked_mean > types["unmasked"]["mean"] else "no more"
    lines += ["", f"Masked positions get {verdict} iterations than unmasked tokens "
                  f"({masked_mean:.2f} vs {types['unmasked']['mean']:.2f}; the paper found more).",
              f"Depth-efficiency threshold log3(H) for H = {hidden_dim}: {threshold:.2f} "
              f"(Levine et al. 2020); mean depth here: {types['all']['mean']:.2f}."]
    return "\n".join(lines)


def dependencies_markdown(result):
    lines = ["| relation | words | first-piece mean [95% CI] | minus every word's [95% CI] | all-piece mean | pieces |",
             "|---|---|---|---|---|---|"]
    for name, row in result["relations"].items():
        mark = " **\\***" if row["marked"] else ""
        (low, high), (dlow, dhigh) = row["first_piece_interval"], row["difference_interval"]
        lines.append(f"| {code_cell(name)}{mark} | {row['words']} | {row['first_piece_mean']:.2f} [{low:.2f}, "
                     f"{high:.2f}] | {row['difference_from_mean']:+.2f} [{dlow:+.2f}, {dhigh:+.2f}] | "
                     f"{row['all_piece_mean']:.2f} | {row['pieces']} |")
    low, high = result["mean_first_piece_interval"]
    deeper = [name for name, row in result["relations"].items() if row["deeper"]]
    lines += ["", f"\\* above mean + std over relations ({result['threshold_mean_plus_std']:.2f}). "
                  f"{result['sentences']} sentences, {result['words']} words; first pieces of every word: "
                  f"{result['mean_first_piece']:.2f} [{low:.2f}, {high:.2f}]; all pieces: "
                  f"{result['mean_all_pieces']:.2f} ± {result['std_all_pieces']:.2f}; "
                  f"{result['words_dropped_at_max_length']} words beyond the maximum length left out (whole words). "
                  "Intervals: bootstrap over sentences.",
              "Deeper than the average word (interval of the difference above 0): "
              f"{', '.join(map(code_cell, deeper)) or 'none'}."]  # (as code: PTB's tags are "," ":" "``")
    return "\n".join(lines)


def fixed_point_markdown(result):
    curves = result["curves"]
    names = list(curves)
    lines = ["| n | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for i in range(result["max_iterations"] - 1):
        cells = []
        for name in names:
            point = curves[name][i]
            cells.append("-" if point["mean_cosine"] is None else f"{point['mean_cosine']:.3f} ({point['tokens']})")
        lines.append(f"| {i + 1} | " + " | ".join(cells) + " |")
    lines += ["", "Mean cos(h^n, h^(n+1)) over tokens still running at n (token counts in brackets)."]
    return "\n".join(lines)


def _parsed_sentences(patterns, documents):
    if patterns:
        files = text_files.expand_patterns(patterns)
        why = "its sentences would count twice, and the intervals narrow"
        text_files.check_each_file_once(files, why, "--parsed", comments="#")  # (comment lines, its id, not read)
        sentences, units = [], {}
        for path in files:
            parsed = list(probing.read_parsed(path))
            if parsed and not path.endswith(".dp") and all(token[3] == "_" for s in parsed for token in s):
                raise ValueError(f"{path}: no dependency relation (column 8 is '_' in all {len(parsed)} sentences): "
                                 "the analysis groups words by their relation; give parsed files that have them")
            sentences += parsed
            units[path] = overlap.tree_keys([token[0] for token in sentence] for sentence in parsed)
        for note in overlap.check_units_once(units, "sentences", why, "--parsed"):
            print(note)
        source = ", ".join(patterns)
    else:
        sentences = [list(zip(s.words, s.upos, s.heads, s.relations))
                     for d in synthetic_corpus.generate_documents(documents, seed=1) for s in d]
        source = f"embedded corpus, {documents} documents (gold parses)"
    if not sentences:
        raise ValueError(f"no sentences in {source}")
    return sentences, source


def check_not_trained_on(source, files):
    """Records that the model was pre-trained on measure nothing held out: refused, by content, from
    the fingerprints of its training shards that an export carries (wherever it was copied), and
    from its run's train_files where they are on this machine (the files, and the text they hold:
    `record_overlap`)."""
    carried = artifacts.trained_on(files, source.train_shards)
    if carried:
        raise ValueError(f"--records {carried[0][0]} is a training file of {source.path} (its content is that of one "
                         f"of the {len(source.train_shards)} training shards whose fingerprints the "
                         "model carries): held-out numbers need records it was not trained on (its run's eval_files)")
    trained = (source.info.get("pretraining") or {}).get("train_files") or []
    shards = [path for pattern in trained for path in text_files.glob(pattern)]
    shared = artifacts.same_files(files, shards) if shards else []
    if shared:
        raise ValueError(f"--records {shared[0][0]} is a training file of {source.path} ({shared[0][1]}): held-out "
                         "numbers need records it was not trained on (its run's eval_files)")
    from pipelines import record_overlap

    if shards and files:  # (by their text too)
        share, (_, held) = record_overlap.shared_text(shards, files)
        if share > record_overlap.REFUSED:
            raise ValueError(f"--records: {share:.0%} of {held:,} records ({files[0]}, ...) hold the text of "
                             f"{source.path}'s training records (runs of {record_overlap.WINDOW} pieces in both: "
                             "another data run of its text?): held-out numbers need text it was not trained on")
        if share > 0.05:  # (a few: noted, as the data tool notes a small overlap)
            print(f"note: --records: {share:.0%} of {held:,} records hold {source.path}'s training text: the held-out "
                  "numbers are in part of text it was trained on", flush=True)


def held_out_records(source, records=None):
    """`records`, or the held-out shard of `source` if it is a run dir (its config's eval_files)."""
    if records:
        return records
    if source.kind == "pretraining-run":
        patterns = source.info["pretraining"]["eval_files"]
        if not any(text_files.glob(pattern) for pattern in patterns):  # (moved, or on another machine)
            here = not all(os.path.isabs(p) or "://" in p for p in patterns)  # (relative: read from this folder)
            raise ValueError(f"{source.path}'s held-out records, its {artifacts.CONFIG}'s eval_files ({', '.join(patterns)}), are not there (" + (
                f"read from this folder, {os.getcwd()}): run from the one the run was started in, or " if here else "moved, or made on another machine?): ") + "pass --records")
        return patterns
    raise ValueError(f"{source.path} is not a run dir with a held-out shard: pass --records")
