"""Depth analyses: token-type buckets, word alignment on real UD sentences, cosine curves, plots, CLI."""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from albert_act import analyze
from albert_act.analysis import plots as analysis_plots, depth as depth_analysis, token_types
from conftest import assert_drawn_png
from pipelines import probing


def test_alignment_on_real_ud_sentences(shared_data, wiki_tokenizer):
    sentences = list(probing.read_conllu(str(shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu")))
    hard = [s for s in sentences if any(t[0] in ("n't", "'s", ",", "%") or t[0][:1].isdigit() for t in s)][:200]
    assert len(hard) == 200
    for sentence in hard:
        words, glued = [t[0] for t in sentence], probing.glued_words(sentence)
        ids, word_of, kept = depth_analysis.align_words(wiki_tokenizer, words, 512, glued)
        assert kept == len(words) and ids[0] == 2 and ids[-1] == 3
        # Every word's pieces, in order, are exactly that word tokenized alone, as the rest of the word
        # before it where no space parts them ("n't", most punctuation): no drift.
        for index, word in enumerate(words):
            pieces = [ids[p] for p, w in enumerate(word_of) if w == index]
            assert pieces == wiki_tokenizer.encode([word], word_start=not glued[index])[0], (word, sentence)
        assert sorted(set(word_of) - {-1}) == list(range(len(words)))
    # With the spacing, most sentences get exactly the pieces of their text (as pre-training gives
    # them); without it, "the book ." puts a "▁" before every full stop. Measured: 0.91 against 0.19.
    same = [depth_analysis.align_words(wiki_tokenizer, [t[0] for t in s], 512, glued)[0][1:-1]
            == wiki_tokenizer.encode([probing.sentence_text(s)])[0]
            for s in sentences[:500] for glued in (probing.glued_words(s), None)]
    assert np.mean(same[0::2]) > 0.85 and np.mean(same[1::2]) < 0.4
    ids, word_of, kept = depth_analysis.align_words(wiki_tokenizer, [t[0] for t in hard[0]], 6)
    assert len(ids) <= 6 and kept < len(hard[0]) and max(word_of) == kept - 1  # whole words dropped, not cut


def test_relation_table_folds_subtypes_and_marks_outliers():
    records = [(0, "nsubj", [2.0]), (0, "nmod:poss", [4.0, 2.0]), (0, "nmod", [6.0]), (0, "det", [1.0]),
               (0, "punct", [1.0])]
    table = depth_analysis.relation_table(records)
    nmod = table["relations"]["nmod"]
    # One sentence: every bootstrap resample is that sentence, the intervals shrink to the means.
    assert nmod == {"words": 2, "first_piece_mean": 5.0, "first_piece_interval": [5.0, 5.0], "pieces": 3,
                    "all_piece_mean": 4.0, "difference_from_mean": 5.0 - 14.0 / 5, "marked": True,
                    "difference_interval": [pytest.approx(2.2), pytest.approx(2.2)], "deeper": True}
    assert table["mean_first_piece"] == pytest.approx(14.0 / 5)
    means = np.array([5.0, 2.0, 1.0, 1.0])
    assert table["threshold_mean_plus_std"] == pytest.approx(means.mean() + means.std())
    assert not table["relations"]["nsubj"]["marked"] and list(table["relations"])[0] == "nmod"
    kept = depth_analysis.relation_table(records, fold_subtypes=False)
    assert kept["relations"]["nmod:poss"]["words"] == 1
    ptb = depth_analysis.relation_table([(0, ":", [2.0]), (0, "NN", [1.0])])  # PTB's colon tag (.dp files): not ""
    assert sorted(ptb["relations"]) == [":", "NN"]


def test_relation_intervals_resample_sentences():
    # nsubj has 2 iterations in sentence 0 and 4 in sentence 1: resamples give 2, 3 or 4 (p = 1/4, 1/2, 1/4),
    # so the 95% interval runs from 2 to 4. Every word of sentence 1 runs deeper than those of sentence 0.
    records = [(0, "nsubj", [2.0]), (0, "det", [1.0]), (1, "nsubj", [4.0]), (1, "det", [3.0])]
    table = depth_analysis.relation_table(records)
    nsubj = table["relations"]["nsubj"]
    assert nsubj["first_piece_interval"] == [2.0, 4.0] and nsubj["first_piece_mean"] == 3.0
    # nsubj - all words is +0.5 in every resample: the interval is [0.5, 0.5], above 0.
    assert nsubj["difference_interval"] == [pytest.approx(0.5), pytest.approx(0.5)] and nsubj["deeper"]
    assert table["relations"]["det"]["difference_interval"] == [pytest.approx(-0.5), pytest.approx(-0.5)]
    assert not table["relations"]["det"]["deeper"]
    assert table["mean_first_piece_interval"] == [1.5, 3.5]


def test_cosine_curve_on_hand_built_states():
    # One sequence, 3 tokens, N_max = 3, H = 2. Token 0 runs 3 iterations, token 1 halts at 1, token 2 is padding.
    states = np.zeros((1, 3, 3, 2))
    states[0, :, 0] = [[1, 0], [1, 1], [0, 1]]  # cos(h1,h2) = 1/sqrt2, cos(h2,h3) = 1/sqrt2
    states[0, :, 1] = [[1, 0], [1, 0], [1, 0]]  # frozen after n = 1: must not count (authors filled 1.0)
    iterations = np.array([[3, 1, 0]])
    masks = {"all": np.array([[True, True, False]])}
    curves = depth_analysis.cosine_curves(depth_analysis.cosine_sums(states, iterations, masks))
    assert curves["all"][0] == {"n": 1, "mean_cosine": pytest.approx(1 / np.sqrt(2)), "tokens": 1}
    assert curves["all"][1] == {"n": 2, "mean_cosine": pytest.approx(1 / np.sqrt(2)), "tokens": 1}


def test_plots_are_written_and_not_empty(tmp_path):
    types = {"all": {"mean": 2.5, "std": 0.5, "expected_mean": 2.1, "expected_std": 0.4, "count": 10,
                     "histogram": [0, 2, 3, 5], "interval": [2.2, 2.8], "expected_interval": [1.9, 2.3]},
             "[CLS]": {"mean": 3.0, "std": 0.0, "expected_mean": 2.5, "expected_std": 0.0, "count": 1,
                       "histogram": [0, 0, 0, 1], "interval": [3.0, 3.0], "expected_interval": [2.5, 2.5]},
             "[SEP]": {"mean": float("nan"), "std": float("nan"), "expected_mean": float("nan"),
                       "expected_std": float("nan"), "count": 0, "histogram": [0, 0, 0, 0]}}
    paths = [analysis_plots.plot_token_types(types, 3, str(tmp_path / "a.png"), 2.0),
             analysis_plots.plot_histograms(types, str(tmp_path / "b.png")),
             analysis_plots.plot_relations({"nsubj": {"first_piece_mean": 2.0, "marked": True},
                                            "det": {"first_piece_mean": 1.0, "marked": False}}, 1.5, str(tmp_path / "c.png")),
             analysis_plots.plot_cosine_curves({"all": [{"n": 1, "mean_cosine": 0.5, "tokens": 3},
                                                        {"n": 2, "mean_cosine": 0.8, "tokens": 3},
                                                        {"n": 3, "mean_cosine": 0.95, "tokens": 2},
                                                        {"n": 4, "mean_cosine": None, "tokens": 0}]}, str(tmp_path / "d.png")),
             analysis_plots.plot_heatmap([{"tokens": ["[CLS]", "\u2581a", "[SEP]"], "iterations": [3, 1, 2]}], 3,
                                         str(tmp_path / "e.png"))]
    for path in paths:  # the cosine curves are thin lines: less colour than bars and heatmaps
        assert_drawn_png(path, min_colour=0.004 if path.endswith("d.png") else 0.01)
    # Without data the same figure is found out: axes, text and the reference line only.
    empty = analysis_plots.plot_token_types({"[SEP]": types["[SEP]"]}, 3, str(tmp_path / "empty.png"), 2.0)
    with pytest.raises(AssertionError, match="coloured"):
        assert_drawn_png(empty)
    assert analysis_plots.token_types_png(types, 3)[:4] == b"\x89PNG"


@pytest.mark.slow  # ~15 s; the report's analyses run on the shipped model in test_english_model
def test_report_on_a_trained_model(tiny_run, records, tmp_path, capsys):
    analyze.main(["report", "--init", tiny_run[0], "--output_dir", str(tmp_path), "--documents", "30"])
    report = (tmp_path / "report.md").read_text()
    for image in ("held_out.png", "token_types.png", "token_type_histograms.png", "token_types_heatmap.png", "dependencies.png",
                  "dependencies_heatmap.png", "fixed_point.png"):
        assert f"![{image}]({image})" in report
        assert_drawn_png(tmp_path / image, min_colour=0.004 if image == "fixed_point.png" else 0.01)  # lines: less colour
    types = json.loads((tmp_path / "token_types.json").read_text())["types"]
    assert set(types) == set(token_types.TOKEN_TYPES) and types["all"]["count"] > 0
    relations = json.loads((tmp_path / "dependencies.json").read_text())["relations"]
    assert {"nsubj", "det", "punct", "root"} <= set(relations) and "nmod:poss" not in relations
    assert "| [MASK]->random |" in report and "Masked positions get" in report and "iterations than unmasked tokens" in report
    assert "Mean cos(h^n, h^(n+1))" in report and "| MLM accuracy |" in report


def test_records_glob_with_an_empty_shard(tiny_run, records, tmp_path):
    """`--eval_fraction 0` leaves an empty eval shard beside the train shard; a glob over both analyses
    the records there are (the docs' English analysis does this), and only empty shards are refused."""
    import glob
    import shutil

    shutil.copy(sorted(glob.glob(records[1]))[0], tmp_path / "train-00000-of-00001.tfrecord")
    (tmp_path / "eval-00000-of-00001.tfrecord").write_bytes(b"")
    analyze.main(["token-types", "--init", tiny_run[0], "--records", str(tmp_path / "*.tfrecord"),
                  "--output_dir", str(tmp_path / "out")])
    assert json.loads((tmp_path / "out" / "token_types.json").read_text())["types"]["all"]["count"] > 0
    with pytest.raises(SystemExit, match=r"error: .*eval-00000-of-00001.tfrecord: no records"):
        analyze.main(["token-types", "--init", tiny_run[0], "--records", str(tmp_path / "eval-*.tfrecord"),
                      "--output_dir", str(tmp_path / "out2")])


def test_bad_input(tiny_run, tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n2\tdog\n")
    with pytest.raises(ValueError, match=r"bad.conllu line 2: CoNLL-U needs 10 TAB-separated fields, got 2"):
        list(probing.read_conllu(str(bad)))
    multi = tmp_path / "multi.conllu"
    multi.write_text("# text = don't\n1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n1\tdo\tdo\tAUX\tVBP\t_\t0\troot\t_\t_\n"
                     "2\tn't\tnot\tPART\tRB\t_\t1\tadvmod\t_\t_\n2.1\tx\t_\t_\t_\t_\t_\t_\t_\t_\n\n")
    assert [t[0] for t in next(probing.read_conllu(str(multi)))] == ["do", "n't"]
    assert [t[4] for t in next(probing.read_conllu(str(multi)))] == [False, True]  # do|n't: one written word
    spaced = tmp_path / "spaced.conllu"
    spaced.write_text("1-2\tcan't\t_\t_\t_\t_\t_\t_\t_\t_\n1\tca\tcan\tAUX\tMD\t_\t3\taux\t_\t_\n"
                      "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_\n3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\tSpaceAfter=No\n"
                      "4\t!\t!\tPUNCT\t.\t_\t3\tpunct\t_\t_\n\n")
    words = next(probing.read_conllu(str(spaced)))
    assert probing.sentence_text(words) == "can't go!" and probing.glued_words(words) == [False, True, False, True]
    empty = tmp_path / "empty.conllu"
    empty.write_text("")
    with pytest.raises(SystemExit, match=r"error: no sentences in .*empty.conllu"):
        analyze.main(["dependencies", "--init", tiny_run[0], "--parsed", str(empty), "--output_dir", str(tmp_path / "out")])
    import threading

    from albert_act.analysis.report import _parsed_sentences

    os.mkfifo(tmp_path / "parsed.fifo")  # a pipe is read once, by the reader (the check for a copy skips it)
    writer = threading.Thread(target=lambda: (tmp_path / "parsed.fifo").write_bytes(multi.read_bytes() +
                                                                                    spaced.read_bytes()), daemon=True)
    writer.start()
    assert [len(s) for s in _parsed_sentences([str(tmp_path / "parsed.fifo")], 0)[0]] == [2, 4]
    unlabelled = tmp_path / "unlabelled.conllu"  # column 8 all '_': every word would be one relation, "_"
    unlabelled.write_text("".join("\t".join(line.split("\t")[:7] + ["_"] + line.split("\t")[8:]) if "\t" in line
                                  else line for line in spaced.read_text().splitlines(keepends=True)))
    with pytest.raises(ValueError, match=r"unlabelled.conllu: no dependency relation \(column 8 is '_' in all 1 "
                                         r"sentences\)"):
        _parsed_sentences([str(unlabelled)], 0)
    (tmp_path / "again.conllu").write_bytes(b"\xef\xbb\xbf" + spaced.read_bytes().replace(b"\n", b"\r\n"))  # a copy
    with pytest.raises(SystemExit, match=r"error: --parsed .*again.conllu holds the same text as .*spaced.conllu \(a copy: "
                                            r"line ends, .*\): its sentences would count twice"):
        analyze.main(["dependencies", "--init", tiny_run[0], "--parsed", str(spaced), str(tmp_path / "again.conllu"),
                      "--output_dir", str(tmp_path / "out")])
    with pytest.raises(SystemExit, match=r"error: --parsed matches \S*spaced.conllu twice: its sentences"):
        analyze.main(["dependencies", "--init", tiny_run[0], "--parsed", str(spaced), str(tmp_path / "*.conllu"),
                      "--output_dir", str(tmp_path / "out")])
    with pytest.raises(SystemExit, match=r"is not a run dir with a held-out shard: pass --records"):
        analyze.main(["token-types", "--init", tiny_run[1], "--output_dir", str(tmp_path / "out")])
    from albert_act.model.backbone import AlbertActBackbone

    with pytest.raises(ValueError, match="needs a backbone built with return_details=True"):
        depth_analysis.fixed_point_statistics(AlbertActBackbone(vocabulary_size=10, num_heads=1, embedding_dim=4,
                                                                hidden_dim=4, intermediate_dim=4, max_iterations=2), [])


@pytest.mark.slow  # ~60 s; the default run's report test covers the held-out section end to end
def test_held_out_matches_a_numpy_statement_of_the_model_on_the_records(tiny_run, records, tmp_path, capsys):
    # The export of the tiny run, asked for its MLM and SOP logits record by record; accuracy, loss and
    # the baselines computed here in NumPy must be what `analyze held-out` reports.
    from albert_act.io.source import Source
    from pipelines.pretraining_dataset import make_pretraining_dataset

    analyze.main(["held-out", "--init", tiny_run[1], "--records", records[1], "--output_dir", str(tmp_path)])
    result = json.loads((tmp_path / "held_out.json").read_text())
    model, _ = Source.open(tiny_run[1]).pretraining_model()
    correct, weight, loss, sop, targets, swapped, sequences = 0.0, 0.0, 0.0, 0, [], 0, 0
    for inputs, labels in make_pretraining_dataset(records[1], 16, training=False).as_numpy_iterator():
        outputs = model(inputs, training=False)
        logits, w = outputs["mlm_logits"].numpy().astype(np.float64), labels["masked_lm_weights"]
        log_p = logits - logits.max(-1, keepdims=True)
        log_p -= np.log(np.exp(log_p).sum(-1, keepdims=True))
        ids = labels["masked_lm_ids"]
        correct += ((logits.argmax(-1) == ids) * w).sum()
        weight += w.sum()
        loss -= (np.take_along_axis(log_p, ids[..., None], -1)[..., 0] * w).sum()
        sop += (outputs["sop_logits"].numpy().argmax(-1) == labels["sentence_order_label"]).sum()
        targets += list(ids[w > 0])
        swapped += labels["sentence_order_label"].sum()
        sequences += len(ids)
    frequencies = np.bincount(targets) / len(targets)
    assert result["examples"] == sequences
    assert result["mlm_accuracy"] == pytest.approx(correct / weight, abs=1e-6)
    assert result["mlm_loss"] == pytest.approx(loss / weight, rel=1e-4)
    assert result["sop_accuracy"] == pytest.approx(sop / sequences, abs=1e-6)
    assert result["mlm_unigram_baseline"] == pytest.approx(frequencies.max(), abs=1e-6)
    from albert_act.analysis.report import held_out_markdown  # records of one sentence-order label: said

    n_max = model.backbone.max_iterations
    assert "SOP measures nothing" not in held_out_markdown(result, n_max)
    assert "**SOP measures nothing here:** 100.0% of these records have one sentence-order label" in \
        held_out_markdown({**result, "sop_majority_baseline": 1.0}, n_max)
    nonzero = frequencies[frequencies > 0]
    assert result["mlm_unigram_loss"] == pytest.approx(-(nonzero * np.log(nonzero)).sum(), rel=1e-5)
    assert result["sop_majority_baseline"] == pytest.approx(max(swapped, sequences - swapped) / sequences, abs=1e-6)
    low, high = result["mlm_accuracy_interval"]
    assert low <= result["mlm_accuracy"] <= high
    printed = capsys.readouterr().out
    assert "| MLM accuracy |" in printed and "| [MASK]->[MASK] |" in printed and "expected iterations E" in printed
    assert (tmp_path / "held_out.md").exists() and (tmp_path / "held_out.png").stat().st_size > 1000


def test_sentences_of_plain_text_are_asked_as_a_server_asks_them(tiny_run, tmp_path, capsys):
    from albert_act.io.source import Source

    text = tmp_path / "mine.txt"
    long = "the key " * 40  # more pieces than the tiny model's positions: cut, and said so
    text.write_text("The key is on the table.\n\n   \nWhere is [mask]?\n" + long + "\n", encoding="utf-8")
    analyze.main(["sentences", "--init", tiny_run[1], "--text", str(text), "--output_dir", str(tmp_path / "out")])
    result = json.loads((tmp_path / "out" / "sentences.json").read_text())
    rows = result["sentences"]
    assert [row["text"] for row in rows] == ["The key is on the table.", "Where is [mask]?", long.strip()]
    assert "[MASK]" in rows[1]["tokens"]  # read as fill_mask reads it: the mask token, in any case
    source = Source.open(tiny_run[0])  # the weights the export was written from (reads faster than the export)
    tokenizer, (backbone, _) = source.tokenizer(), source.backbone(dropout=0.0)
    length = backbone.max_sequence_length
    for row in rows:
        ids = [2, *tokenizer.encode_with_masks(row["text"])[: length - 2], 3]
        assert row["tokens"] == tokenizer.id_to_piece(ids) and row["truncated"] == (len(ids) == length)
        alone = backbone({"token_ids": np.array([ids]), "segment_ids": np.zeros((1, len(ids)), "int32"),
                          "padding_mask": np.ones((1, len(ids)), "int32")}, training=False)["iterations"].numpy()[0]
        assert row["iterations"] == alone.tolist()  # each sentence alone, padding in its batch changes nothing
        assert row["mean_iterations"] == pytest.approx(np.mean(alone))
    assert [row["truncated"] for row in rows] == [False, False, True]
    printed = capsys.readouterr().out
    assert "| 1 | " in printed and "(cut to the model's length)" in printed
    assert_drawn_png(tmp_path / "out" / "sentences.png")
    for argv, message in [
        (["--text", str(tmp_path / "none.txt")], r"none.txt: no such file"),
        (["--text", str(tmp_path / "blank.txt")], r"blank.txt: no sentences \(one per line"),
        ([], r"the sentences mode needs --text FILE"),
    ]:
        (tmp_path / "blank.txt").write_text("\n  \n\u200b\u200e\n")  # a zero-width space and an LTR mark: blank
        with pytest.raises(SystemExit, match=message):
            analyze.main(["sentences", "--init", tiny_run[1], "--output_dir", str(tmp_path / "o2"), *argv])
    with pytest.raises(SystemExit, match=r"the token-types analysis does not read --text \(it reads --max_batches"):
        analyze.main(["token-types", "--init", tiny_run[0], "--text", str(text), "--output_dir", str(tmp_path / "o3")])
    assert not (tmp_path / "o2").exists() and not (tmp_path / "o3").exists()


def test_spearman_by_hand_and_against_numpy():
    from albert_act.analysis import difficulty

    # x's ties share rank 2.5: ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4) -> 4.5 / sqrt(4.5 * 5)
    assert difficulty.average_ranks([5, 7, 7, 9]).tolist() == [1.0, 2.5, 2.5, 4.0]
    assert difficulty.spearman([1, 2, 2, 3], [10, 20, 30, 40]) == pytest.approx(4.5 / np.sqrt(22.5), abs=1e-12)
    # weights count pairs: the same as the pairs repeated
    assert difficulty.spearman([1, 2, 3], [3, 1, 2], weights=[2, 1, 3]) == pytest.approx(
        difficulty.spearman([1, 1, 2, 3, 3, 3], [3, 3, 1, 2, 2, 2]), abs=1e-12)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=300), rng.normal(size=300)
    y = y + x  # no ties: Pearson of the ranks
    ranks = lambda v: np.argsort(np.argsort(v)).astype(float)  # noqa: E731
    assert difficulty.spearman(x, y) == pytest.approx(np.corrcoef(ranks(x), ranks(y))[0, 1], abs=1e-12)
    assert np.isnan(difficulty.spearman([2, 2, 2], [1, 2, 3]))  # a depth that does not vary
    rho, low, high = difficulty.spearman_interval(x, y, np.arange(300) // 3, resamples=300)
    assert low < rho < high and 0.5 < low and high < 0.85  # rho ~0.69 over 100 sequences of 3


def test_difficulty_surprisal_is_the_reference_mlm_loss(tiny_run, records, tmp_path, capsys):
    """The depth-against-difficulty analysis with the run as its own reference: the surprisal of the
    record's predicted positions averages to the held-out MLM loss computed here in NumPy."""
    from albert_act.io.source import Source
    from pipelines.pretraining_dataset import make_pretraining_dataset
    from pipelines.tokenizer import CLS_ID, SEP_ID

    analyze.main(["difficulty", "--init", tiny_run[0], "--reference", tiny_run[1], "--records", records[1],
                  "--output_dir", str(tmp_path)])
    result = json.loads((tmp_path / "difficulty.json").read_text())
    model, _ = Source.open(tiny_run[1]).pretraining_model()
    loss, weight, unmasked = 0.0, 0.0, 0
    for inputs, labels in make_pretraining_dataset(records[1], 16, training=False).as_numpy_iterator():
        logits, w = model(inputs, training=False)["mlm_logits"].numpy().astype(np.float64), labels["masked_lm_weights"]
        log_p = logits - logits.max(-1, keepdims=True)
        log_p -= np.log(np.exp(log_p).sum(-1, keepdims=True))
        loss -= (np.take_along_axis(log_p, labels["masked_lm_ids"][..., None], -1)[..., 0] * w).sum()
        weight += w.sum()
        predicted = np.zeros_like(inputs["token_ids"], bool)
        np.put_along_axis(predicted, inputs["masked_positions"], w > 0, 1)
        others = (inputs["padding_mask"] > 0) & ~predicted & ~np.isin(inputs["token_ids"], (CLS_ID, SEP_ID))
        unmasked += np.minimum(others.sum(1), 4).sum()
    types = result["types"]
    predicted = [types[name] for name in ("[MASK]->[MASK]", "[MASK]->random", "[MASK]->original") if types[name]["count"]]
    assert sum(t["count"] for t in predicted) == weight and types["unmasked"]["count"] == unmasked
    mean = sum(t["mean_surprisal"] * t["count"] for t in predicted) / weight
    assert mean == pytest.approx(loss / weight, rel=1e-4)
    assert types["all"]["count"] == weight + unmasked
    for row in (types["all"], types["unmasked"]):  # quintiles of each type's own tokens, equal counts by rank
        sizes, ranges = [b["count"] for b in row["bins"]], [b["surprisal_range"] for b in row["bins"]]
        assert sum(sizes) == row["count"] and max(sizes) - min(sizes) <= 1
        assert all(low <= high <= next_low for (low, high), (next_low, _) in zip(ranges, ranges[1:]))
    rho, low, high = types["all"]["spearman_iterations"]
    assert (np.isnan(rho) and types["all"]["mean_iterations"] in (1, 2)) or low <= rho <= high
    assert result["reference_halting"] == "act" and "rho(N, surprisal)" in capsys.readouterr().out
    assert_drawn_png(tmp_path / "difficulty.png", min_colour=0.004)
    bare = tmp_path / "bare_run"  # a reference run trained without --vocab: read with the model's pieces, said
    shutil.copytree(tiny_run[0], bare)
    (bare / "vocab.model").unlink()
    analyze.main(["difficulty", "--init", tiny_run[0], "--reference", str(bare), "--records", records[1],
                  "--max_batches", "1", "--output_dir", str(tmp_path / "o1")])
    assert f"note: --reference {bare} holds no vocabulary: its pieces are read as the model analysed's (400 " \
           "pieces, as many as its embeddings)" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="the difficulty mode needs --reference MODEL"):
        analyze.main(["difficulty", "--init", tiny_run[0], "--output_dir", str(tmp_path / "o2")])
    with pytest.raises(SystemExit, match="the token-types analysis does not read --reference"):
        analyze.main(["token-types", "--init", tiny_run[0], "--reference", tiny_run[1], "--output_dir", str(tmp_path / "o3")])


def test_the_sentences_table_escapes_pipes_and_says_what_its_picture_shows():
    from albert_act.analysis.report import code_cell, sentences_markdown

    # a piece is shown as it is: <unk> is no HTML tag, *b* no emphasis; backticks get a longer fence
    assert code_cell("_a(2) <unk>(1) *b*(2)") == "`_a(2) <unk>(1) *b*(2)`"
    assert code_cell("x`y(1) ``(2)") == "```x`y(1) ``(2)```" and code_cell("`(1)") == "`` `(1) ``"

    row = {"tokens": ["[CLS]", "\u2581a", "|", "[SEP]"], "iterations": [2, 1, 3, 1], "mean_iterations": 1.75,
           "truncated": False}
    table = sentences_markdown([row] * 13, 6)
    assert "| `_a(1) \\|(3)` |" in table and table.count("\n| ") == 13  # 13 rows under the header
    assert "sentences.png shades the first 12 of these 13 sentences piece by piece" in table
    assert "sentences.png shades each piece by its iterations" in sentences_markdown([row], 6)


@pytest.mark.slow  # (~9 s: an analysis of a model; the stop just after a move-in is tested in seconds for probing's)
def test_a_stopped_analysis_says_whether_it_was_moved_in(tmp_path):
    """Ctrl-C during an analysis: its folder is moved into place whole or not at all, and the stop line says
    which (it said "files may be from an earlier run" even where there was no folder)."""
    import subprocess
    import sys

    for written in (True, False):
        out = tmp_path / f"out_{written}"
        script = ("import os\nfrom albert_act import analyze\nfrom albert_act.analysis import report\n"
                  "def run(mode, init, output_dir, *rest):\n"
                  f"    if {written}:\n        os.makedirs({str(tmp_path / 'staged')!r}, exist_ok=True)\n"
                  f"        os.rename({str(tmp_path / 'staged')!r}, output_dir)\n"
                  "    raise KeyboardInterrupt\n"
                  "report.run_analyses = run\n"
                  f"analyze.main(['token-types', '--init', {str(tmp_path)!r}, '--output_dir', {str(out)!r}])\n")
        ended = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[1],
                               capture_output=True, text=True, timeout=120)
        assert ended.returncode == 130 and "Traceback" not in ended.stderr, ended.stderr[-2000:]
        assert ended.stderr.strip().splitlines()[-1] == (
            f"stopped: the token-types analysis is in {out}, written whole just before the stop" if written else
            f"stopped: nothing was written: the token-types analysis did not finish (an earlier one in {out}, if "
            "any, is intact); re-run the same command")


def test_a_reference_at_chance_is_noted():
    """A reference whose mean surprisal is within half a nat of ln V (an untrained model) measures no difficulty."""
    from albert_act.analysis.difficulty import chance_note

    assert chance_note({"all": {"mean_surprisal": 5.97}}, 400).startswith(
        "The reference is at chance: its mean surprisal, 5.97 nats, is that of a uniform guess over its 400 pieces "
        "(ln 400 = 5.99)")
    assert chance_note({"all": {"mean_surprisal": 4.2}}, 400) is None
    assert chance_note({"all": {"count": 0}}, 400) is None
