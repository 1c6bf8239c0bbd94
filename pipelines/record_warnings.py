"""The data tool's warnings on records it wrote (`pipelines.create_pretraining_data`), each a line or None,
from its report (stats.json): text the vocabulary cannot read, text cut off, masking far from its target, documents
of one line; and the note on instances left unmasked."""

UNKNOWN_WARNED = 0.1  # of the tokens <unk>; English Wikipedia under the demo's 2,000-piece vocabulary: 0.02


def unknown_warning(report):
    """A line when more than `UNKNOWN_WARNED` of the tokens are <unk>, or of the sentences are mostly characters
    in no piece (each run of them is one <unk>: a sentence of another script may be one piece): the text holds
    what the vocabulary cannot read, which the model then learns as one piece."""
    sentences = report.get("unreadable_sentences", 0) / max(1, report["sentences"])
    if report["unknown_fraction"] <= UNKNOWN_WARNED and sentences <= UNKNOWN_WARNED:
        return None
    told = f"{report['unknown_fraction']:.0%} of the pieces are <unk>" + (
        f", and {sentences:.0%} of the sentences are mostly characters that are in no piece" if sentences else "")
    return (f"{told}: --vocab {report['vocab']} cannot read much of this text "
            "(another script or language?); train a vocabulary on it (python -m pipelines.train_tokenizer --input ...) "
            "and make the records with that")


TRUNCATION_WARNED = 0.5  # of the pieces cut off to fit sequences (English Wikipedia at 128 pieces: 0.21)


def cut_off(removed, kept):
    """The share of the text's pieces cut off to fit sequences, of `removed` cut and `kept` in the instances."""
    return removed / max(1, removed + kept)


def truncation_warning(report):
    """A line when more than `TRUNCATION_WARNED` of the text's pieces were cut off to fit --max_seq_length: lines
    far longer than a sequence (a document on one line, a text without line ends), each taken as one sentence."""
    share = cut_off(report["truncation"]["tokens_removed"], report["tokens"])
    if share <= TRUNCATION_WARNED:
        return None
    return (f"{share:.0%} of the text's pieces were cut off to fit sequences of "
            f"{report['config']['max_seq_length']}: each line is read as a sentence, and one far longer than a "
            "sequence (a document on one line?) loses all but its start; give a sentence a line (a blank line "
            "between documents), or a longer --max_seq_length")


def warnings(report):
    """The report's warnings, each a line."""
    return [w for w in (masking_warning(report), unknown_warning(report), truncation_warning(report),
                        one_line_documents_warning(report), one_document_warning(report)) if w]


def one_document_warning(report):
    """A line when 100 sentences or more are one document for each file (no blank line in them): its sentence-order
    pairs span what were documents, and no document is left to hold out."""
    files = len(report.get("inputs", ())) or 1
    if report["documents"]["total"] > files or report["sentences"] < 100 * files:
        return None
    return (f"{report['sentences']:,} sentences in {report['documents']['total']:,} document"
            f"{'s' * (files > 1)}: no blank line in {'any file' if files > 1 else 'the text'}, where a blank line ends "
            "each document; its texts are read as one, their sentence-order pairs spanning them, and none is held out "
            "whole. Put a blank line between documents (paragraphs begun by an indent, as Project Gutenberg's: "
            "sed 's/^\\t/\\n/', GNU sed's, puts one before each)")


ONE_LINE_WARNED = 0.9  # of the documents (20 or more) one sentence long; English Wikipedia's: 0.1


def one_line_documents_warning(report):
    """A line when most documents (20 or more) are one sentence each: a blank line after every line (text saved
    double-spaced, or a sentence a paragraph), or a file a line, and each sentence-order pair halves of one line."""
    documents = report["documents"]["total"]
    if documents < 20 or report["sentences"] > documents / ONE_LINE_WARNED:
        return None
    if len(report.get("inputs", ())) >= ONE_LINE_WARNED * documents:  # a file a line: a file is a document at least
        return (f"{report['sentences']:,} sentences in {documents:,} documents, from {len(report['inputs']):,} files: "
                "nearly every file is one line, and a file is a document of its own, so sentence-order pairs are "
                "halves of one line; put the lines of one text in one file (a blank line between its documents)")
    return (f"{report['sentences']:,} sentences in {documents:,} documents: nearly every document is one line (a "
            "blank line after each line: double-spaced text?), so sentence-order pairs are halves of one line; give "
            "a blank line only between documents")


def masking_warning(report):
    """A line when the masking missed its target by far: above it (sequences too short for whole-word
    spans, so that at least one piece of each is masked) or below it, by a quarter of the target or by
    10 points (spans that do not fit a sequence's budget are skipped): the share masked, the target,
    and the length."""
    target, share = report["config"]["masked_lm_prob"], report["masked_fraction"]
    maskable = report["config"]["max_seq_length"] - 3
    if not report["instances"]["total"] or max(0.75 * target, target - 0.1) <= share <= 1.5 * target:
        return None
    said = f"{share * 100:.3g}% of the maskable pieces are masked against --masked_lm_prob {target}"
    if share < target:
        return (f"{said}: spans of up to --max_ngram {report['config']['max_ngram']} whole words that would pass a "
                f"sequence's budget are skipped, and sequences of {report['config']['max_seq_length']} pieces "
                f"({report['mean_tokens_per_instance']:.1f} on average) leave little room; use a smaller --max_ngram or "
                "a longer --max_seq_length")
    if target * maskable < 0.5:  # the budget rounds to 0, and each sequence masks one piece all the same
        return (f"{said}: that share of a sequence's {maskable} maskable pieces is less than one piece, and each "
                "sequence masks at least one; give a larger --masked_lm_prob or a longer --max_seq_length (ALBERT: "
                "0.20 of 512)")
    return (f"{said}: sequences of {report['config']['max_seq_length']} pieces "
            f"({report['mean_tokens_per_instance']:.1f} on average) are too short for it; use a longer "
            "--max_seq_length (ALBERT: 512, the demo 64)")


def unmasked_note(report):
    """The note on instances that hold no masked piece (a span that overflowed the budget dropped), with the
    --masked_lm_prob to raise where that budget is one or two pieces; or None."""
    if not (unmasked := report["instances_with_no_masked_piece"]):
        return None
    config = report["config"]
    full = round(config["masked_lm_prob"] * (config["max_seq_length"] - 3))  # (a full sequence's budget)
    low = (f"; --masked_lm_prob {config['masked_lm_prob']:g} gives a full sequence of {config['max_seq_length']} "
           f"a budget of {max(1, full)} piece{'s' * (full > 1)}, which any span of {max(1, full) + 1} or more "
           "overflows: raise it (ALBERT's, and this tool's default, is 0.2)" if full < min(3, config["max_ngram"])
           else "")
    return (f"note: {unmasked:,} of the {report['instances']['total']:,} instances hold no masked piece (a sequence "
            "whose first drawn span overflowed its masking budget and was dropped, as half of such spans are: the "
            f"masked count stays unbiased): they train sentence order only{low}")
