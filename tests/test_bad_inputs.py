"""The catalogue of bad inputs: every command refuses them with a clean message, and loses nothing.

One row per case: the command (`python -m <module>` arguments, with placeholders filled from a tiny
pre-training run, its export, its records and scratch files), the expected exit status (1: an
"error: ..." line, 2: argparse's usage error, 0: it runs and says what it did), a fragment of the
message that names the file, line or value, and the paths that must still be intact afterwards.
A traceback fails the case: commands are run in-process through their `main`, so any exception
other than SystemExit surfaces here.
"""

import functools
import gzip
import hashlib
import importlib
import json
import os
import re
import shutil
import zipfile
from pathlib import Path

import keras
import pytest

from albert_act.analyze import MODE_FLAGS, READS
from albert_act.base import outputs
from conftest import TINY_RUN

OVERRIDES = " ".join(f"--override {k}={v}" for k, v in TINY_RUN.items())
PRETRAIN = (f"albert_act.pretrain --train_files {{train}} --eval_files {{eval}} --model_dir {{tmp}}/new_run "
            f"--steps 2 --global_batch_size 8 --micro_batch_size 8 --no-jit_compile --no_export --execution static {OVERRIDES}")
FINETUNE = "albert_act.finetune --init {run} --output_dir {tmp}/ft --epochs 1 --batch_size 8 --strategy cpu"
DATA = "pipelines.create_pretraining_data --vocab {vocab} --output_dir {tmp}/records --workers 1 --num_shards 1"
RTE_HEADER = "index\tsentence1\tsentence2\tlabel\n"
RTE_ROW = "{i}\tA man plays a guitar.\tA man plays.\tentailment\n"
UTF16 = (r"utf16.txt: UTF-16 text, not UTF-8 \(its first line holds NUL bytes or a UTF-16 byte-order mark\); convert "
         r"it first: iconv -f UTF-16 -t UTF-8 .*utf16.txt > converted.txt")

# (id, command, status, message fragment (regex), paths that must stay intact)
CASES = [
    # --- export: never deletes what is not a SavedModel -------------------------------------
    ("export-training-execution", "albert_act.export --checkpoint {run} --kind pretraining --output {tmp}/e/1 "
     "--execution bucket", 1, r"--execution bucket is a training execution: a pre-training export's signatures take a "
     r"cap on iterations, which static, while, sparse run", []),
    ("export-over-its-run", "albert_act.export --checkpoint {run} --kind pretraining --output {run} --overwrite",
     1, r"is the --checkpoint", ["{run}/config.json", "{run}/checkpoints"]),
    ("export-over-a-run", "albert_act.export --checkpoint {export} --kind pretraining --output {run} --overwrite",
     1, r"holds a pre-training run.*--overwrite replaces only a SavedModel", ["{run}/config.json"]),
    ("export-over-other-files", "albert_act.export --checkpoint {run} --kind pretraining --output {notes_dir} --overwrite",
     1, r"notes_dir holds other files \(notes.txt\)", ["{notes_dir}/notes.txt"]),
    ("export-over-itself", "albert_act.export --checkpoint {export} --kind pretraining --output {export} --overwrite",
     1, r"is the --checkpoint", ["{export}/saved_model.pb"]),
    ("export-exists", "albert_act.export --checkpoint {run} --kind pretraining --output {export}",
     1, r"exists; choose a new version number", ["{export}/saved_model.pb"]),
    ("export-no-checkpoint", "albert_act.export --checkpoint {tmp}/nowhere --kind pretraining --output {tmp}/e/1",
     1, r"nowhere: no such file or folder", []),
    ("export-bad-execution", "albert_act.export --checkpoint {run} --kind pretraining --output {tmp}/e/1 --execution fast",
     2, r"invalid choice: 'fast'", []),
    ("export-bad-kind", "albert_act.export --checkpoint {run} --kind tagger --output {tmp}/e/1",
     2, r"invalid choice: 'tagger'", []),
    ("export-classifier-from-run", "albert_act.export --checkpoint {run} --kind classifier --output {tmp}/e/1",
     1, r"run holds a pretraining model, not --kind classifier", []),
    # --- fine-tuning: GLUE files and settings ------------------------------------------------
    ("finetune-batch-0", FINETUNE + " --task rte --data_dir {rte} --batch_size 0", 1, r"batch_size must be an integer (>= 1|in \[1, \d+\]), got 0", []),
    ("finetune-epochs-0", FINETUNE + " --task rte --data_dir {rte} --epochs 0", 1, r"epochs must be an integer (>= 1|in \[1, \d+\]), got 0", []),
    ("finetune-lr-negative", FINETUNE + " --task rte --data_dir {rte} --learning_rate -1", 1, r"learning_rate must be a learning rate in \[1e-08, .*, got -1", []),
    ("finetune-unknown-task", FINETUNE + " --task nosuch --data_dir {rte}", 1, r"unknown task 'nosuch'", []),
    ("finetune-wrong-folder", FINETUNE + " --task sst-2 --data_dir {rte}", 1,
     r"RTE/train.tsv line 1: the header has no column 'sentence' \(it has \['index', 'sentence1'.*is this the SST-2 "
     r"train file\?", []),
    ("finetune-empty-train", FINETUNE + " --task rte --data_dir {glue_empty}", 1, r"glue_empty/train.tsv: no RTE examples", []),
    ("finetune-header-only", FINETUNE + " --task rte --data_dir {glue_header}", 1, r"glue_header/train.tsv: no RTE examples", []),
    ("finetune-bad-label", FINETUNE + " --task rte --data_dir {glue_label}", 1, r"glue_label/train.tsv line 3: label 'maybe'", []),
    ("finetune-every-row-ends-in-a-tab", FINETUNE.replace("{tmp}/ft", "{tmp}/ft_tabbed") + " --task sst-2 --data_dir "
     "{tmp}/sst_tabbed", 1, r"sst_tabbed/train.tsv: no SST-2 examples: 30 rows, every one ending in a tab \(an empty "
     r"last field: 3 fields where SST-2 has 2\); strip the trailing tabs", []),
    ("finetune-a-spreadsheet-saved-as-train-tsv", FINETUNE + " --task rte --data_dir {tmp}/glue_xlsx", 1,
     r"glue_xlsx/train.tsv: an office document \(a spreadsheet, a text or slides: a zip of XML parts, whatever its name "
     r"says\): save it as plain text, or as tab-separated text for a table", []),
    ("finetune-a-csv-as-train-tsv", FINETUNE + " --task rte --data_dir {tmp}/glue_csv", 1, r"glue_csv/train.tsv line 1: "
     r"the header is comma-separated \('index,sentence1,sentence2,label'\): a CSV file, where GLUE's files are "
     r"tab-separated", []),
    ("finetune-train-tsv-gzipped-under-its-name", FINETUNE + " --task rte --data_dir {tmp}/glue_gz_named", 1,
     r"glue_gz_named/train.tsv: a gzip-compressed file, not text; decompress it first \(gunzip -c (\S+train.tsv) > "
     r"\1.text && mv \1.text \1\)$", []),
    ("finetune-train-tsv-a-named-pipe", FINETUNE + " --task rte --data_dir {tmp}/glue_fifo", 1, r"glue_fifo/train.tsv: a "
     r"named pipe \(FIFO\) where the task's tab-separated file is read: reading it waits for a program to write it; put "
     r"the file there$", []),
    ("finetune-train-tsv-a-device", FINETUNE + " --task rte --data_dir {tmp}/glue_device", 1, r"glue_device/train.tsv is "
     r"a device, not the task's tab-separated file: give a file$", []),
    ("data-vocab-a-named-pipe", DATA.replace("{vocab}", "{tmp}/glue_fifo/train.tsv") + " --input {corpus}", 1,
     r"glue_fifo/train.tsv: a named pipe \(FIFO\) given as the vocabulary: reading it waits for a program to write it; "
     r"a vocabulary is read more than once \(the checks, the work, the copy kept beside the output\): give the .model "
     r"file itself", []),
    ("pretrain-set-a-path-to-a-json-list", PRETRAIN + " --set vocab=[]", 2, r"--set vocab=\[\]: vocab takes a path, "
     r"and \[\] is JSON's list, no path \(it would be a file named '\[\]'\); give the path, or leave vocab out", []),
    ("tokenizer-required-chars-a-file", "pipelines.train_tokenizer --input {corpus} --output {tmp}/v --vocab_size 30 "
     "--required_chars={corpus}", 2,
     r"--required_chars: takes the characters themselves, and \S+ is a file: give what it holds", []),
    ("tokenizer-required-chars-with-a-byte-order-mark", "pipelines.train_tokenizer --input {corpus} --output {tmp}/v "
     "--vocab_size 30 --required_chars=\ufeffabc", 2, r"--required_chars: holds U\+FEFF, an invisible character", []),
    ("tokenizer-required-chars-as-escapes", "pipelines.train_tokenizer --input {corpus} --output {tmp}/v --vocab_size 30 "
     "--required_chars='\\u4e2d\\u6587'", 2, r"--required_chars: holds '\\u4e2d', read as its characters one by one, not "
     r"as the escape or class it writes: give the characters themselves", []),
    ("tokenizer-required-chars-as-ranges", "pipelines.train_tokenizer --input {corpus} --output {tmp}/v --vocab_size 30 "
     "--required_chars=a-z0-9", 2, r"--required_chars: holds 'a-z', which is read as the three characters a, - and z, "
     r"not as a range: write the characters out \(abcdefghijklmnopqrstuvwxyz\); a '-' of its own goes first or last",
     []),
    ("bench-served-fill-mask-conllu-a-glob", "benchmarks.served_fill_mask --init {export} --conllu '{tmp}/*.conllu'",
     1, r"\*.conllu not found \(read as a name: \* \? \[ \] make no pattern here; give one file\)", []),
    ("pretrain-set-a-backbone-setting", PRETRAIN + " --set backbone.hidden_dim=64", 2, r"--set backbone.hidden_dim: not "
     r"a setting of PretrainConfig; the backbone's settings go by --override \(--set backbone_overrides=\{...\}\): "
     r"--override hidden_dim=64; known", []),
    ("pretrain-set-a-path-to-false", PRETRAIN + " --set init_from=false", 2, r"--set init_from=false: init_from takes "
     r"a path, and false is JSON's bool, no path", []),
    ("pretrain-vocab-a-named-pipe", PRETRAIN + " --vocab {tmp}/glue_fifo/train.tsv", 1, r"glue_fifo/train.tsv: a named "
     r"pipe \(FIFO\) given as the vocabulary", []),
    ("pretrain-records-glob-matching-a-named-pipe", PRETRAIN.replace("{train}", "'{tmp}/fifo_records/train-*'"), 1,
     r"fifo_records/train-00001-of-00002.tfrecord: a named pipe \(FIFO\) among the training files \(\S+fifo_records/"
     r"train-\*\): reading it waits for a program to write it; give a file there, or leave it out", []),
    ("finetune-train-tsv-gzipped", FINETUNE + " --task rte --data_dir {tmp}/glue_gz", 1, r"glue_gz/train.tsv: missing, "
     r"but \S+train.tsv.gz is there; a gzip-compressed file: decompress it first \(gunzip -c \S+train.tsv.gz > "
     r"\S+glue_gz/train.tsv\)", []),
    ("finetune-train-tsv-a-folder", FINETUNE + " --task rte --data_dir {tmp}/glue_folder", 1,
     r"glue_folder/train.tsv: a folder, where the task's tab-separated file was expected", []),
    ("finetune-extra-tab", FINETUNE + " --task rte --data_dir {glue_tab}", 1,
     r"glue_tab/train.tsv line 3: 5 fields where the header has 4", []),
    ("finetune-missing-column", FINETUNE + " --task rte --data_dir {glue_short}", 1,
     r"glue_short/train.tsv line 2: 3 fields where the header has 4", []),
    ("finetune-header-renamed", FINETUNE + " --task rte --data_dir {glue_renamed}", 1,
     r"glue_renamed/train.tsv line 1: the header has no column 'sentence1' \(it has \['index', 'premise'", []),
    ("finetune-header-holding-a-byte-order-mark-inside", FINETUNE + " --task sst-2 --data_dir {tmp}/glue_bom_inside", 1,
     r"glue_bom_inside/train.tsv line 1: the header's '\\ufeffsentence' is SST-2's 'sentence' with a byte-order mark "
     r"\(U\+FEFF\) before it, .*remove it \(sed -i '1s/\\xef\\xbb\\xbf//g' \S*glue_bom_inside/train.tsv", []),
    ("finetune-missing-dev", FINETUNE + " --task rte --data_dir {glue_nodev}", 1, r"glue_nodev/dev.tsv: missing", []),
    ("finetune-no-init", FINETUNE.replace("{run}", "{tmp}/nowhere") + " --task rte --data_dir {rte}", 1,
     r"nowhere: no such file or folder", []),
    ("finetune-long", FINETUNE + " --task rte --data_dir {rte} --max_seq_length 1000", 1, r"max_seq_length 1000 exceeds the model's 64", []),
    ("finetune-short", FINETUNE + " --task rte --data_dir {rte} --max_seq_length 2", 1, r"--max_seq_length must be an integer in \[8, 8192\], got 2", []),
    ("finetune-not-a-vocab", FINETUNE + " --task rte --data_dir {rte} --vocab {not_a_vocab}", 1,
     r"not_a_vocab.model: not a SentencePiece model", []),
    ("finetune-bad-precision", FINETUNE + " --task rte --data_dir {rte} --precision float8", 2, r"invalid choice: 'float8'", []),
    ("finetune-no-tpu", FINETUNE.replace("--strategy cpu", "--strategy tpu") + " --task rte --data_dir {rte}", 1,
     r"--strategy tpu: no TPU found", []),
    # --- pre-training: settings, vocabulary, records, run dirs ---------------------------------
    ("pretrain-unknown-override", PRETRAIN + " --override nonsense_key=3", 1,
     r"--override nonsense_key: not a backbone setting; known: .*hidden_dim", []),
    ("pretrain-override-nan", PRETRAIN + " --override halting_bias_initializer=NaN", 1,
     r"--override halting_bias_initializer=nan: not a finite number; give one$", []),
    ("pretrain-override-type", PRETRAIN + " --override vocabulary_size=abc", 1,
     r'--override vocabulary_size="abc" \(or backbone_overrides in a --config file\): expected an integer, got a string '
     r"\(the preset has \d+\)", []),
    ("pretrain-override-a-run-setting", PRETRAIN + " --override tau=0.1", 1,
     r"--override tau=0.1: a setting of the run, not of the backbone: use --tau 0.1", []),
    ("pretrain-override-form", PRETRAIN + " --override novalue", 2, r"--override expects key=value, got 'novalue'", []),
    ("pretrain-not-a-vocab", PRETRAIN + " --vocab {not_a_vocab}", 1, r"not_a_vocab.model: not a SentencePiece model", []),
    ("pretrain-vocab-the-list-beside-the-model", PRETRAIN + " --vocab {tmp}/listed/vocab.vocab", 1,
     r"vocab.vocab: the vocabulary's list of pieces, which SentencePiece writes beside its model; give the model: "
     r"\S+vocab.model$", []),
    ("pretrain-vocab-size-below-the-records-ids", PRETRAIN + " --vocab {vocab} --override vocabulary_size=399", 1,
     r"vocab.model has 400 pieces but the model's vocabulary_size is 399", []),
    ("pretrain-vocab-size", PRETRAIN + " --vocab {vocab} --override vocabulary_size=500", 1,
     r"vocab.model has 400 pieces but the model's vocabulary_size is 500", []),
    ("pretrain-resume-with-another-vocabulary-size", PRETRAIN.replace("{tmp}/new_run", "{run}") + " --steps 3 --vocab "
     "{vocab} --override vocabulary_size=500", 1, r"holds a run with another config \(backbone.vocabulary_size: 400 there, "
     r"500 now", ["{run}/config.json"]),
    ("pretrain-steps-0", PRETRAIN + " --steps 0", 1, r"steps must be an integer in \[1, 100000000\], got 0", []),
    ("pretrain-vocab-on-the-demo-data", "albert_act.pretrain --model_dir {tmp}/demo_vocab --vocab {vocab}", 1,
     r"--vocab .*vocab.model: the demo data \(no --train_files\) is made with its own vocabulary \(.*demo.vocab.model\), "
     r"which the run's export carries: drop --vocab", []),
    ("pretrain-no-export-and-overwrite", PRETRAIN + " --overwrite", 1,
     r"--overwrite lets the run's SavedModel replace another's; --no_export writes none: give one$", []),
    ("pretrain-no-export-and-overwrite-set-false", PRETRAIN.replace("{tmp}/new_run", "{tmp}/no_overwrite") +
     " --set overwrite_export=false", 0, r"no SavedModel written \(--export_dir and --vocab give one", []),
    ("pretrain-a-larger-vocabulary-size-than-the-records-with-no-vocab", PRETRAIN + " --override vocabulary_size=500",
     1, r"train-\S+: made with a vocabulary of 400 pieces \(\S+vocab.model, per the data tool's report beside it\), "
     r"where the model's vocabulary_size is 500: pass --override vocabulary_size=400 \(and --vocab \S+vocab.model, "
     r"which the export needs\)", []),
    ("pretrain-some-of-a-data-runs-shards", PRETRAIN.replace("--train_files {train}", "--train_files "
     "{records_dir}/train-00000-of-00002.tfrecord").replace("{tmp}/new_run", "{tmp}/some_shards"), 0,
     r"note: --train_files: 1 of the 2 training shards of \S+ \(their names say -of-00002\): training on those", []),
    ("pretrain-a-config-files-warmup-past-the-steps-typed", "albert_act.pretrain --config {tmp}/warmup_50.json "
     "--steps 3 --model_dir {tmp}/warmup_run", 1, r"warmup_steps must be in \[0, steps=3\], got 50 \(--warmup_steps 50 "
     r"comes from --config \S+warmup_50.json; give --warmup_steps to change it\)", []),
    ("pretrain-an-empty-list-of-training-files", "albert_act.pretrain --set train_files=[] --model_dir {tmp}/empty_list",
     1, r"train_files is given empty \(\[\]\): it names no record file; give a pattern, or leave it out for the demo "
     r"data", []),
    ("pretrain-no-export-and-export-dir", PRETRAIN + " --export_dir {tmp}/e/1", 1,
     r"--no_export and --export_dir .*/e/1 contradict each other: give one", []),
    ("pretrain-tau-at-fixed-depth", PRETRAIN + " --halting none --tau 0.5 --ponder_warmup_start 3", 1,
     r"--tau, --ponder_warmup_start: --halting none runs every token to N_max, so there is no ponder cost", []),
    ("pretrain-batch-split", PRETRAIN + " --global_batch_size 12", 1, r"global batch 12 is not divisible by micro-batch 8", []),
    ("pretrain-no-train-files", PRETRAIN.replace("{train}", "'{tmp}/none-*.tfrecord'"), 1, r"no training file matches", []),
    ("pretrain-eval-is-train", PRETRAIN.replace("{eval}", "{train}"), 1, r"evaluation files are also training files", []),
    ("pretrain-tau-negative", PRETRAIN + " --tau -1", 1, r"--tau\) must be a number in \[0, 3.4028e\+38\] .* or 'auto', got -1", []),
    ("pretrain-tau-text", PRETRAIN + " --tau much", 2, r"--tau expects a number or 'auto', got 'much'", []),
    ("pretrain-warmup", PRETRAIN + " --warmup_steps 5", 1, r"warmup_steps must be in \[0, steps=2\], got 5", []),
    ("pretrain-sparse", PRETRAIN + " --execution sparse", 2, r"invalid choice: 'sparse'", []),
    ("pretrain-long-records", PRETRAIN + " --override max_sequence_length=32", 1, r"sequences of 64 tokens, the model takes at most 32", []),
    ("pretrain-ids-outside-vocab", PRETRAIN + " --override vocabulary_size=100", 1, r"outside the model's vocabulary of 100", []),
    ("pretrain-other-run", PRETRAIN.replace("{tmp}/new_run", "{run}"), 1, r"holds a run with another config \(.*steps: 3 "
     r"there, 2 now.*\); use a new --model_dir, or the same settings to resume; to train it on for other --steps, start "
     r"a new run from its weights: --init_from \S+ --model_dir <a new dir>", ["{run}/config.json"]),
    ("pretrain-records-lack-a-feature", PRETRAIN.replace("{train}", "{no_weights}"), 1,
     r"no_weights.tfrecord: records lack masked_lm_weights", []),
    ("pretrain-truncated-records", PRETRAIN.replace("{train}", "{truncated}"), 1,
     r"truncated.tfrecord: (corrupt|not a readable TFRecord)", ["{truncated}"]),
    ("export-config-not-the-checkpoint", "albert_act.export --checkpoint {edited_run} --kind pretraining --output {tmp}/e/1",
     1, r"edited_run/checkpoints/ckpt-3: holds encoder/halting_unit.* model built from \S*edited_run/config.json has no "
     r"place for: does the config match the checkpoint", []),
    ("analyze-a-glob-that-matches-the-jax-token-file", "albert_act.analyze token-types --init {run} --records "
     "'{records_dir}/*eval*' --output_dir {tmp}/a_npz", 1, r"tokens-eval.npz is the data tool's token file for the "
     r"JAX backend \(KERAS_BACKEND=jax reads it\), not a TFRecord file \(matched by \S+/\*eval\*\): give "
     r"the .tfrecord shards beside it \(e.g. \S+/eval-\*.tfrecord\)", []),
    ("analyze-records-of-three-segments", "albert_act.analyze token-types --init {run} --records {three_segments} "
     "--output_dir {tmp}/a_seg", 1, r"three_segments.tfrecord: its first record's segment_ids holds 2, where 0 and 1 "
     r"are read \(two segments, sentence order kept or swapped: another tool's records\?\)", []),
    ("analyze-held-out-records-of-three-way-labels", "albert_act.analyze held-out --init {run} --records "
     "{three_labels} --output_dir {tmp}/a_lab", 1, r"three_labels.tfrecord: its first record's next_sentence_labels "
     r"holds 2", []),
    ("pretrain-held-out-records-of-integer-weights", PRETRAIN.replace("--eval_files {eval}", "--eval_files "
     "{int_weights}"), 1, r"int_weights.tfrecord: its records hold masked_lm_weights as int64_list, not float_list "
     r"\(another tool's records\?\): make them with pipelines.create_pretraining_data", []),
    ("analyze-sentences-a-file-whose-name-is-not-utf8", "albert_act.analyze sentences --init {run} --text "
     "{latin1_name} --output_dir {tmp}/a_latin1", 1, r"--text \S+s\\xe9.txt: its name is not UTF-8 \(byte 0xe9, as a "
     r"Latin-1 system writes names\): rename it", []),
    ("analyze-dependencies-no-word-fits-the-model", "albert_act.analyze dependencies --init {run} --parsed "
     "{huge_word} --output_dir {tmp}/a_huge", 1, r"no word of the 1 sentences fits the model's 64 positions \(with "
     r"\[CLS\] and \[SEP\]; 1 words left out\): give sentences of fewer pieces", []),
    ("pretrain-a-model-dir-with-brackets", PRETRAIN.replace("{tmp}/new_run", "'{tmp}/run[1]'"), 1,
     r"--model_dir \S+/run\[1\]: TensorFlow reads the files of a model by pattern, where \[ \] \* and \? in its path "
     r"match other names \(run\[1\] is run1\): its checkpoints or SavedModel would not be found; rename the folder", []),
    ("export-a-checkpoint-with-brackets", "albert_act.export --checkpoint '{tmp}/run[1]' --kind pretraining --output "
     "{tmp}/exp_brackets/1", 1, r"\S+/run\[1\]: TensorFlow reads the files of a model by pattern", []),
    ("pretrain-held-out-records-with-no-masked-piece", PRETRAIN.replace("--eval_files {eval}", "--eval_files "
     "{no_masked}"), 1, r"no_masked.tfrecord: no held-out record \(of the first [\d,]+ of each file\) holds a masked "
     r"piece \(masked_lm_weights all 0\): the held-out MLM accuracy would be of nothing", []),
    ("pretrain-training-records-with-no-masked-piece", PRETRAIN.replace("--train_files {train}", "--train_files "
     "{no_masked}"), 1, r"no_masked.tfrecord: no training record \(of the first [\d,]+ of each file\) holds a masked "
     r"piece \(masked_lm_weights all 0\): the MLM loss would train nothing", []),
    ("analyze-token-types-on-records-with-no-masked-piece", "albert_act.analyze token-types --init {run} --records "
     "{no_masked} --output_dir {tmp}/a_no_masked", 1, r"no_masked.tfrecord: no record \(of the first [\d,]+ of each "
     r"file\) holds a masked piece \(masked_lm_weights all 0\): the \[MASK\] rows of the depth tables", []),
    ("bench-served-depth-on-records-with-no-masked-piece", "benchmarks.served_depth --init {export} --records "
     "{no_masked} --output_dir {tmp}/sd_no_masked", 1, r"no_masked.tfrecord: no record .* holds a masked piece", []),
    ("bench-depth-knob-on-records-with-no-masked-piece", "benchmarks.depth_knob --init {export} --records "
     "{no_masked} --output_dir {tmp}/dk_no_masked", 1, r"no_masked.tfrecord: no record .* holds a masked piece "
     r"\(masked_lm_weights all 0\): the held-out MLM accuracy of each cap would be of nothing", []),
    ("pretrain-held-out-records-of-another-prediction-width", PRETRAIN.replace("--eval_files {eval}", "--eval_files "
     "{no_masked}").replace("{no_masked}", "{wide_records}"), 1, r"wide.tfrecord: records of 64 pieces with 13 "
     r"predictions each, where \S+train-00000-of-00002.tfrecord's are of 64 with 15 \(records of two data runs", []),
    ("analyze-fixed-point-on-records-with-no-masked-piece", "albert_act.analyze fixed-point --init {run} --records "
     "{no_masked} --output_dir {tmp}/fp_no_masked", 1, r"no_masked.tfrecord: no record \(of the first [\d,]+ of each "
     r"file\) holds a masked piece", []),
    ("analyze-difficulty-on-records-with-no-masked-piece", "albert_act.analyze difficulty --init {run} --reference "
     "{export} --records {no_masked} --output_dir {tmp}/d_no_masked", 1, r"no_masked.tfrecord: no record \(of the "
     r"first [\d,]+ of each file\) holds a masked piece", []),
    ("analyze-report-on-real-records-with-no-masked-piece", "albert_act.analyze report --init {run} --records "
     "{real_no_masked} --output_dir {tmp}/r_no_masked", 1, r"real_no_masked.tfrecord: no record \(of the first [\d,]+ "
     r"of each file\) holds a masked piece", []),
    ("analyze-held-out-an-export-whose-records-kind-was-edited", "albert_act.analyze held-out --init "
     "{kind_edited_export} --records {eval} --output_dir {tmp}/h_kind", 1, r"kind_edited_export/1/assets/"
     r"albert_act_export.json says the export holds a classifier model, yet its weights hold an MLM head .*: was the "
     r"file edited\? Restore it", []),  # (round 45 B71)
    ("analyze-held-out-records-with-no-masked-piece", "albert_act.analyze held-out --init {run} --records {no_masked} "
     "--output_dir {tmp}/h_nomasked", 1, r"no_masked.tfrecord'\]: no record read holds a masked piece "
     r"\(masked_lm_weights all 0\), so the MLM accuracy would be of nothing", []),
    ("analyze-records-with-no-token", "albert_act.analyze token-types --init {run} --records {unmasked_input} "
     "--output_dir {tmp}/a_nomask", 1, r"unmasked_input.tfrecord: its first record holds no token \(input_mask all 0\)",
     []),
    ("analyze-held-out-records-partly-trained-on", "albert_act.analyze held-out --init {run} --records "
     "{partly_trained} --output_dir {tmp}/a_partly", 0, r"note: --records: 1\d% of [\d,]+ records hold \S+run's "
     r"training text: the held-out numbers are in part of text it was trained on", []),
    ("analyze-init-a-file-inside-an-export", "albert_act.analyze token-types --init {export}/saved_model.pb "
     "--output_dir {tmp}/a_pb", 1, r"saved_model.pb is inside the SavedModel \S+export/1: give that", []),
    ("finetune-init-a-folder-inside-an-export", FINETUNE.replace("--init {run}", "--init {export}/variables") +
     " --task rte --data_dir {rte}", 1, r"variables is inside the SavedModel \S+export/1: give that", []),
    ("analyze-held-out-a-run-whose-records-moved", "albert_act.analyze held-out --init {records_moved_run} "
     "--output_dir {tmp}/a_moved", 1, r"records_moved_run's held-out records, its config.json's eval_files \(\S+"
     r"moved_away/eval-\*\), are not there \(moved, or made on another machine\?\): pass --records", []),
    ("analyze-held-out-a-run-started-elsewhere-with-relative-records", "albert_act.analyze held-out --init "
     "{relative_records_run} --output_dir {tmp}/a_relative", 1, r"relative_records_run's held-out records, its "
     r"config.json's eval_files \(data_cache/somewhere/eval-\*\), are not there \(read from this folder, \S+\): run "
     r"from the one the run was started in, or pass --records", []),
    ("analyze-sentences-a-line-of-accents-alone", "albert_act.analyze sentences --init {run} --text {accents_alone} "
     "--output_dir {tmp}/a_accents", 0, r"note: 1 of the 2 lines of \S+accents_alone.txt hold no piece once normalized "
     r"as the model reads text \(.*: accents or format characters alone\): left out", []),
    ("analyze-sentences-a-pattern-as-text", "albert_act.analyze sentences --init {run} --text '{tmp}/m*.txt' "
     "--output_dir {tmp}/a_pattern", 1, r"m\*.txt: no such file \(read as a name: \* \? \[ \] make no pattern here; "
     r"give one file\)", []),
    ("analyze-sentences-in-another-script", "albert_act.analyze sentences --init {run} --text {cjk_txt} "
     "--output_dir {tmp}/a_cjk", 0, r"warning: \d+% of the pieces of \S+cjk.txt are <unk> under the model's "
     r"vocabulary \(another script than its own\?\)", []),
    ("analyze-sentences-from-a-device", "albert_act.analyze sentences --init {run} --text /dev/zero --output_dir "
     "{tmp}/a_zero", 1, r"/dev/zero is a device, not a text file: give a file \(or a pipe\)", []),
    ("bench-learning-curves-its-own-earlier-result", "benchmarks.learning_curves A={tmp}/lc_own/learning_curves.json "
     "--output_dir {tmp}/lc_own --overwrite", 1, r"lc_own/learning_curves.json is this benchmark's own earlier result "
     r"in --output_dir \S+lc_own, not a held-out curve", []),
    ("bench-learning-curves-an-evaluation-json-on-one-line", "benchmarks.learning_curves A={tmp}/eval_one_line.json "
     "--output_dir {tmp}/lc_one_line", 1, r"eval_one_line.json line 1: a run's evaluation.json \(its whole last "
     r"evaluation, on one line\), not a held-out curve", []),
    ("bench-learning-curves-from-a-device", "benchmarks.learning_curves A=/dev/zero --output_dir {tmp}/lc_zero", 1,
     r"/dev/zero is a device, not a text file", []),
    ("analyze-records-of-two-prediction-widths", "albert_act.analyze token-types --init {run} --records {eval} "
     "{wide_records} --output_dir {tmp}/a_wide", 1, r"eval-\S+: records of 64 pieces with \d+ predictions each, "
     r"where \S+wide.tfrecord's are of 64 with 13 \(records of two data runs, made with another --max_seq_length or "
     r"--max_predictions_per_seq\?\): give records of one shape", []),
    ("analyze-held-out-records-of-two-prediction-widths", "albert_act.analyze held-out --init {run} --records "
     "{wide_records} {eval} --output_dir {tmp}/h_wide", 1, r"eval-\S+: records of 64 pieces with \d+ predictions "
     r"each, where \S+wide.tfrecord's are of 64 with 13", []),
    ("analyze-records-whose-length-changes-partway", "albert_act.analyze token-types --init {run} --records "
     "{mixed_lengths} --output_dir {tmp}/a_mixed", 1, r"mixed_lengths.tfrecord: record 5 holds 128 pieces with 10 "
     r"predictions, its first 64 with 10 \(shards of two --max_seq_length or --max_predictions_per_seq joined into one "
     r"file\?\): a file's records are read at one shape; make it again", []),
    ("pretrain-training-records-whose-length-changes-partway", PRETRAIN.replace("--train_files {train}",
     "--train_files {mixed_lengths}"), 1, r"mixed_lengths.tfrecord: record 5 holds 128 pieces", []),
    ("bench-served-depth-records-whose-length-changes-partway", "benchmarks.served_depth --init {export} --records "
     "{mixed_lengths} --output_dir {tmp}/sd_mixed", 1, r"mixed_lengths.tfrecord: record 5 holds 128 pieces", []),
    ("analyze-held-out-records-whose-length-changes-past-the-sample", "albert_act.analyze held-out --init {run} "
     "--records {late_mixed} --output_dir {tmp}/h_late", 1, r"late_mixed.tfrecord: record 2002 holds 128 pieces with "
     r"10 predictions, its first 64 with 10", []),
    ("analyze-held-out-a-byte-flipped-past-the-sample", "albert_act.analyze held-out --init {run} --records "
     "{late_corrupt} --output_dir {tmp}/h_flip", 1, r"late_corrupt.tfrecord: a corrupt record \(.*\); make the shard "
     r"again, or leave it out", []),
    ("analyze-records-compressed-with-zlib", "albert_act.analyze token-types --init {run} --records {zlib_records} "
     "--output_dir {tmp}/a_zlib", 1, r"zlib.tfrecord: not a readable TFRecord of tf.train.Examples \(.*\); a "
     r"ZLIB-compressed file: decompress it first \(python3 -c .*zlib.decompress.* \S+zlib.tfrecord\)", []),
    ("analyze-held-out-a-shard-joined-with-itself", "albert_act.analyze held-out --init {run} --records {doubled} "
     "--max_batches 1 --output_dir {tmp}/h_doubled", 0, r"warning: \S+doubled.tfrecord: \d+ of its first \d+ records "
     r"repeat others in it, byte for byte \(a shard joined with itself, by cat\?\)", []),
    ("analyze-records-too-long", "albert_act.analyze token-types --init {run} --records {long_records} --output_dir {tmp}/a",
     1, r"long.tfrecord: sequences of 128 tokens, the model takes at most 64", []),
    ("pretrain-export-needs-vocab", PRETRAIN.replace(" --no_export", " --export_dir {tmp}/e/1"), 1,
     r"export_dir needs vocab", []),
    # --- the data tool and the tokenizer --------------------------------------------------------
    ("data-no-input", DATA + " --input {tmp}/nowhere/*.txt", 1, r"no file matches '.*nowhere/\*\.txt'", []),
    ("data-not-a-vocab", DATA.replace("{vocab}", "{not_a_vocab}") + " --input {corpus}", 1,
     r"not_a_vocab.model: not a SentencePiece model", []),
    ("data-output-under-a-file", DATA.replace("{tmp}/records", "{notes_dir}/notes.txt/records") + " --input {corpus}", 1,
     r"notes.txt is a file, not a directory", ["{notes_dir}/notes.txt"]),
    ("data-invalid-utf8", DATA + " --input {bad_utf8}", 1, r"bad_utf8.txt line 2: not valid UTF-8", []),
    ("data-a-png-image-as-input", DATA + " --input {tmp}/photo.png", 1, r"photo.png: a PNG image, not text; give a "
     r"UTF-8 text file", []),
    ("data-a-windows-program-as-input", DATA + " --input {tmp}/setup.exe", 1, r"setup.exe: a Windows program "
     r"\(.exe, .dll\), not text", []),
    ("data-a-word-document-as-input", DATA + " --input {tmp}/report.docx", 1, r"report.docx: a Word document: save it "
     r"as plain text \(.txt\); not text", []),
    ("data-an-sqlite-database-as-input", DATA + " --input {tmp}/notes.db", 1, r"notes.db: an SQLite database, not "
     r"text", []),
    ("data-the-jax-token-corpus-as-input", DATA + " --input {records_dir}/tokens-train.npz", 1, r"tokens-train.npz: a "
     r"NumPy archive \(.npz: the data tool's token corpus for the JAX backend\?\), not text", []),
    ("analyze-sentences-a-tfrecord-as-text", "albert_act.analyze sentences --init {run} --text {mixed_lengths} "
     "--output_dir {tmp}/a_tfr_text", 1, r"mixed_lengths.tfrecord: a TFRecord file \(records for pre-training or "
     r"fine-tuning, read with --records or --train_files\), not text", []),
    ("data-an-empty-file-beside-a-corpus", DATA.replace("{tmp}/records", "{tmp}/records_with_empty") + " --input "
     "{corpus} {empty_txt}", 0, r"note: --input \S+empty.txt holds no text \(empty, or blank lines alone\): nothing is "
     r"read from it", []),
    ("data-empty-corpus", DATA + " --input {empty_txt}", 1, r"empty corpus: no non-blank line in .*empty.txt", []),
    ("data-instances-with-no-masked-piece", DATA.replace("{tmp}/records", "{tmp}/records_unmasked") + " --input "
     "{corpus} --max_seq_length 16 --max_predictions_per_seq 3", 0, r"note: \d+ of the \d+ instances hold no masked "
     r"piece \(a sequence whose first drawn span overflowed its masking budget and was dropped[^;]*only\n", []),
    ("data-paragraphs-indented-and-no-blank-line", DATA.replace("{tmp}/records", "{tmp}/records_indented") + " --input "
     "{gutenberg_indented}", 0, r"eval shard is empty \(--eval_fraction [\d.]+ of one document\); pre-training needs "
     r"held-out records: give documents apart, a blank line between them\n.*warning: 120 sentences in 1 document: no blank "
     r"line in the text, .*Put a blank line between documents \(paragraphs begun by an indent, as Project Gutenberg's: "
     r"sed 's/\^\\t/\\n/', GNU sed's, puts one before each\)", []),
    ("data-masked-lm-prob-a-budget-of-one-piece", DATA.replace("{tmp}/records", "{tmp}/records_001") + " --input "
     "{corpus} --masked_lm_prob 0.001", 0, r"note: \d+ of the \d+ instances hold no masked piece .*--masked_lm_prob "
     r"0.001 gives a full sequence of 128 a budget of 1 piece, which any span of 2 or more overflows: raise it", []),
    ("data-bad-ngram", DATA + " --input {corpus} --max_ngram 0", 1, r"max_ngram", []),
    ("tokenizer-bpe-required-chars-the-text-lacks", "pipelines.train_tokenizer --input {corpus} --output {tmp}/v_bpe "
     "--vocab_size 40 --model_type bpe --no-byte_fallback --required_chars acqxz", 0, r"note: --required_chars: 3 of "
     r"its 5 characters \('qxz'\) are not in the text and have no piece \(SentencePiece's BPE trainer stops on a "
     r"required character it never sees\): they read as <unk>", []),
    ("tokenizer-bpe-required-char-the-text-lacks-read-as-bytes", "pipelines.train_tokenizer --input {corpus} --output "
     "{tmp}/v_bpe_bytes --vocab_size 300 --model_type bpe --required_chars=\u00df", 0, r"note: --required_chars: 1 of "
     r"its 1 characters \('\u00df'\) .*they read as their UTF-8 bytes' pieces \(--byte_fallback: '\u00df' is <0xC3> "
     r"<0x9F>\)", []),
    ("tokenizer-a-savedmodel-graph-as-input", "pipelines.train_tokenizer --input {export}/saved_model.pb --output "
     "{tmp}/v_pb --vocab_size 40", 1, r"saved_model.pb: a protobuf file \(a SavedModel's saved_model.pb\?\), not text",
     []),
    ("tokenizer-required-chars-the-normalization-changes", "pipelines.train_tokenizer --input {corpus} --output "
     "{tmp}/v_accents --vocab_size 34 --no-byte_fallback --required_chars aéB", 0, r"note: --required_chars: é reads "
     r"as e, B reads as b: the normalization lowercases every text and strips its accents", []),
    ("tokenizer-invalid-utf8", "pipelines.train_tokenizer --input {bad_utf8} --output {tmp}/v --vocab_size 50 --no-byte_fallback --required_chars=", 1,
     r"bad_utf8.txt line 2: not valid UTF-8.*--skip_invalid_utf8", []),
    ("tokenizer-skip-invalid-utf8", "pipelines.train_tokenizer --input {bad_utf8} {corpus} --output {tmp}/v_skip --vocab_size 40 --no-byte_fallback --required_chars= "
     "--model_type bpe --skip_invalid_utf8", 0, r"note: --skip_invalid_utf8 skipped 1 of the [\d,]+ lines with text, as not "
     r"UTF-8 \(\S+bad_utf8.txt line 2 first\)\n.*wrote .*v_skip.model \(40 pieces\)", []),
    ("data-skip-invalid-utf8", DATA.replace("{tmp}/records", "{tmp}/records_skip") + " --input {bad_utf8} {corpus} "
     "--skip_invalid_utf8", 0, r"note: --skip_invalid_utf8 skipped 1 of the [\d,]+ lines with text, as not UTF-8 "
     r"\(\S+bad_utf8.txt line 2 first\)", []),
    ("tokenizer-no-input", "pipelines.train_tokenizer --input {tmp}/nowhere.txt --output {tmp}/v --vocab_size 50 --no-byte_fallback --required_chars=", 1,
     r"no file matches", []),
    # --- analyses and the submission ----------------------------------------------------------
    ("analyze-no-init", "albert_act.analyze token-types --init {tmp}/nowhere --output_dir {tmp}/a", 1,
     r"nowhere: no such file or folder", []),
    ("analyze-no-records", "albert_act.analyze token-types --init {run} --records {tmp}/none-*.tfrecord --output_dir {tmp}/a",
     1, r"no TFRecord file matches .*none-\*\.tfrecord", []),
    ("analyze-bad-mode", "albert_act.analyze depth --init {run}", 2, r"invalid choice: 'depth'", []),
    ("submission-no-models", "albert_act.glue_submission --models {tmp}/empty_models --data_dir {glue} --output {tmp}/s.zip",
     1, r"empty_models", []),
    # --- one process per dir: a second one is refused at once, naming the holder ----------------
    ("pretrain-dir-in-use", PRETRAIN.replace("{tmp}/new_run", "{tmp}/held_run"), 1,
     r"held_run is in use by another pre-training run \(pid \d+ on .*, started .*\); wait for it", []),
    ("finetune-dir-in-use", FINETUNE.replace("{tmp}/ft", "{tmp}/held_ft") + " --task rte --data_dir {rte}", 1,
     r"held_ft is in use by another fine-tuning \(pid \d+", []),
    ("export-dir-in-use", "albert_act.export --checkpoint {run} --kind pretraining --output {tmp}/held_export/1", 1,
     r"held_export/1 is in use by another export \(pid \d+", []),
    ("pretrain-export-dir-in-use-at-the-start", PRETRAIN.replace(" --no_export", " --export_dir {tmp}/held_export/1 "
     "--vocab {vocab}").replace("new_run", "held_export_run"), 1, r"--export_dir \S+held_export/1 is in use by another "
     r"run's export \(pid \d+.*wait for it to end or stop it", []),
    ("data-dir-in-use", DATA.replace("{tmp}/records", "{tmp}/held_records") + " --input {corpus}", 1,
     r"held_records is in use by another data run \(pid \d+", []),
    # --- no write replaces what it should not ----------------------------------------------------
    ("pretrain-export-over-another-runs-export", PRETRAIN.replace(" --no_export", " --export_dir {export} --vocab {vocab}"),
     1, r"--export_dir .*export/1 holds the export of another run \(.*\); pass --overwrite", ["{export}"]),
    ("pretrain-export-over-the-export-of-a-run-since-moved", PRETRAIN.replace(" --no_export", " --export_dir "
     "{orphan_export} --vocab {vocab}"), 1, r"holds the export of another run \(/nonexistent/run, per .*; no run is there "
     r"now: if this run was moved from there, the export is its own\); pass --overwrite", ["{orphan_export}"]),
    ("pretrain-export-over-a-run", PRETRAIN.replace(" --no_export", " --export_dir {run} --vocab {vocab}"),
     1, r"run holds a pre-training run \(config.json\)", ["{run}"]),
    ("pretrain-export-over-other-files", PRETRAIN.replace(" --no_export", " --export_dir {notes_dir} --vocab {vocab}"),
     1, r"--export_dir .*notes_dir holds other files \(notes.txt\); --overwrite replaces only a SavedModel, so "
        r"choose another --export_dir", ["{notes_dir}"]),
    ("huggingface-export-over-a-file", "albert_act.export --checkpoint {run} --kind pretraining --format huggingface "
     "--output {notes_dir}/notes.txt", 1, r"notes.txt is a file", ["{notes_dir}"]),
    ("huggingface-export-over-a-savedmodel", "albert_act.export --checkpoint {run} --kind pretraining --format huggingface "
     "--output {export} --overwrite", 1, r"export/1 exists and is not empty; --overwrite replaces only a Hugging Face dir",
     ["{export}"]),
]
CASES += [
    # --- files that are not what they claim ----------------------------------------------------
    ("finetune-init-config-truncated", FINETUNE.replace("{run}", "{truncated_config_run}") + " --task rte --data_dir {rte}",
     1, r"truncated_config_run/config.json line \d+ column \d+: not valid JSON", ["{truncated_config_run}"]),
    ("export-a-run-whose-config-is-empty", "albert_act.export --checkpoint {empty_config_run} --kind pretraining "
     "--output {tmp}/e_empty/1", 1, r"empty_config_run/config.json: no backbone settings \(a dict\) where the model's "
     r"are recorded; was the file edited\? Restore it", ["{empty_config_run}"]),
    ("export-init-config-a-list", "albert_act.export --checkpoint {list_config_run} --kind pretraining --output {tmp}/e/1",
     1, r"list_config_run/config.json: a JSON array \(\[...\]\) where an object", ["{list_config_run}"]),
    ("pretrain-resume-config-truncated", PRETRAIN.replace("{tmp}/new_run", "{truncated_config_run}"), 1,
     r"truncated_config_run/config.json line \d+ column \d+: not valid JSON \(.*\); the run's checkpoints need the "
     r"settings they were trained with: put a whole copy of its config.json back \(the checkpoints are untouched\), or "
     r"use a new --model_dir$", ["{truncated_config_run}"]),
    ("pretrain-resume-config-emptied", PRETRAIN.replace("{tmp}/new_run", "{empty_config_run}"), 1,
     r"empty_config_run/config.json names no preset, so it is not the settings of the checkpoints beside it "
     r"\(emptied, or replaced by another tool's file\); the run's checkpoints need", ["{empty_config_run}"]),
    ("pretrain-resume-config-without-backbone", PRETRAIN.replace("{tmp}/new_run", "{no_backbone_config_run}"), 1,
     r"no_backbone_config_run/config.json: a run's settings without their \"backbone\" \(cut or edited\); the run's "
     r"checkpoints need", ["{no_backbone_config_run}"]),
    ("pretrain-resume-with-an-empty-checkpoint-state-file", "albert_act.pretrain --config {empty_state_run}/config.json "
     "--model_dir {empty_state_run} --no_export", 0,
     r"warning: \S+empty_state_run/checkpoints/checkpoint is empty or damaged \(a full disk, or a kill while it was "
     r"rewritten\?\): it only lists the checkpoints, which are read from the files on disk\nnote: it is kept as "
     r"\S+checkpoint.damaged; the run writes a new one\n.*resumed from \S+empty_state_run/checkpoints/ckpt-3",
     ["{empty_state_run}/checkpoints/ckpt-3.index"]),
    ("pretrain-resume-checkpoints-without-their-index", PRETRAIN.replace("{tmp}/new_run", "{indexless_run}"), 1,
     r"indexless_run/checkpoints/ckpt-3: its .data file is there without its .index \(a copy cut short, or the file "
     r"deleted\), so no checkpoint of the run reads; nothing was changed: copy the whole checkpoint back to resume, or "
     r"move checkpoints/ away to start the run anew", ["{indexless_run}"]),
    ("pretrain-resume-config-with-a-null-the-run-wrote", PRETRAIN.replace("{tmp}/new_run", "{null_control_config_run}"),
     1, r"null_control_config_run/config.json: target_control is null, where a run writes the value it trained with "
     r"\(the file was edited\?\); the run's checkpoints need", ["{null_control_config_run}"]),
    ("pretrain-config-with-held-out-records-alone", "albert_act.pretrain --config {configs}/eval_only.json --model_dir "
     "{tmp}/eval_only", 1, r"give both --train_files and --eval_files, or neither \(the embedded demo data\) \(--config "
     r"\S+eval_only.json gives eval_files \[\"e.tfrecord\"\]\)", ["{configs}"]),
    ("pretrain-config-with-a-vocabulary-for-the-demo-data", "albert_act.pretrain --config {configs}/demo_vocab.json "
     "--model_dir {tmp}/demo_vocab", 1, r"--vocab v.model \(from --config \S+demo_vocab.json\): the demo data \(no "
     r"--train_files\) is made with its own vocabulary .*: drop vocab from \S+demo_vocab.json; or make records",
     ["{configs}"]),
    ("pretrain-resume-a-run-whose-events-folder-is-a-file", PRETRAIN.replace("{tmp}/new_run", "{events_file_run}"), 1,
     r"events_file_run/train is a file, where the run keeps its train folder: move it away", ["{events_file_run}"]),
    ("pretrain-resume-a-run-whose-vocabulary-is-a-folder", PRETRAIN.replace("{tmp}/new_run", "{vocab_folder_run}"), 1,
     r"vocab_folder_run/vocab.model is a folder, where the run keeps its vocab.model: move it away",
     ["{vocab_folder_run}"]),
    ("pretrain-resume-a-finished-run-whose-checkpoints-were-deleted", PRETRAIN.replace("{tmp}/new_run",
     "{no_ckpt_run}"), 1, r"no_ckpt_run holds a run's results \(evaluation.json\) but no checkpoint in checkpoints/ "
     r"\(deleted, or a copy made without them\?\); a fresh start would replace them, so nothing was changed: put the "
     r"checkpoints back to resume the run, or use a new --model_dir", ["{no_ckpt_run}"]),
    ("pretrain-resume-a-run-whose-final-weights-are-a-folder", PRETRAIN.replace("{tmp}/new_run", "{weights_folder_run}"),
     1, r"weights_folder_run/model.weights.h5 is a folder, where the run keeps its model.weights.h5: move it away",
     ["{weights_folder_run}"]),
    ("export-config-of-a-pretraining-export-set-to-classifier", "albert_act.export --config "
     "{tmp}/cls_export/1/assets/albert_act_export.json --output {tmp}/x_cls/1 --set kind=classifier", 1, r"drop --top_k \(a "
     r"--config file's: --set top_k=null\) \(--top_k \d+ comes from --config \S+albert_act_export.json\)\n", []),
    ("export-config-a-bad-value-inside-the-export-record", "albert_act.export --config "
     "{tmp}/nested_export/1/assets/albert_act_export.json --output {tmp}/x_nested/1", 1, r"--config \S+nested_export/1/"
     r"assets/albert_act_export.json line 9: max_seq_length must be an integer in "
     r"\[3, 8192\], got \"64\", a string: write the number without quotes", ["{configs}"]),
    ("bench-learning-curves-its-last-line-cut-short", "benchmarks.learning_curves A={tmp}/curve_cut.jsonl --output_dir "
     "{tmp}/lc_cut", 1, r"curve_cut.jsonl line \d+: not JSON \(.*\): its last line, cut short \(a copy or a write that "
     r"stopped\); remove it \(sed -i '\$d' \S+curve_cut.jsonl\)$", []),
    ("bench-learning-curves-another-runs-curve-copied-in", "benchmarks.learning_curves A={curve_copied_run} "
     "--output_dir {tmp}/lc_copied", 1, r"curve_copied_run/held_out.jsonl: its evaluation of update 3 \(MLM [\d.]+, SOP "
     r"0.125\) is not the run's own of that update in evaluation.json \(MLM [\d.]+, SOP [\d.]+\): one of the two is "
     r"another run's, copied in, or edited", []),
    ("bench-learning-curves-a-line-past-the-runs-last-update", "benchmarks.learning_curves A={curve_beyond_run} "
     "--output_dir {tmp}/lc_beyond", 1, r"curve_beyond_run/held_out.jsonl: an evaluation of update 99, past the run's "
     r"last \(\d+, per its config.json\): a line of another run's, copied in, or edited", []),  # (round 46 B60)
    ("bench-learning-curves-a-curve-that-lost-its-points", "benchmarks.learning_curves A={curve_lost_run} "
     "--output_dir {tmp}/lc_lost", 0, r"note: \S*curve_lost_run/held_out.jsonl holds 1 of the 3 evaluations its run made "
     r"\(eval_every 1, steps 3\): the others are gone", []),
    ("bench-learning-curves-a-run-whose-curve-is-a-folder", "benchmarks.learning_curves A={folders_run} --output_dir "
     "{tmp}/lc_folder", 1, r"folders_run/held_out.jsonl is a folder, where a run keeps its held_out.jsonl file: give "
     r"the run whose file it is, or move the folder away", ["{folders_run}"]),
    ("bench-depth-probes-its-own-export-as-reference", "benchmarks.depth_probes a={run} --reference {export} --records "
     "{eval} --sentences {corpus} --output_dir {tmp}/dp_itself", 0, r"\nWarning \(a\): The reference holds the probe's "
     r"own weights: its rho sets depth against itself, not against an independent difficulty. The reference is at "
     r"chance: its mean surprisal", ["{run}", "{export}"]),
    ("analyze-records-a-runs-tensorboard-folder", "albert_act.analyze token-types --init {run} --records {run}/train "
     "--output_dir {tmp}/a_tb", 1, r"\S+/train is a run's TensorBoard folder \(its events\), not records: give the data "
     r"tool's shards", ["{run}"]),
    ("analyze-records-a-runs-checkpoint-files", "albert_act.analyze held-out --init {run} --records "
     "'{run}/checkpoints/*' --output_dir {tmp}/a_ckpt", 1, r"\S+/checkpoints/checkpoint is a run's checkpoint file, not "
     r"records: give the data tool's shards \(e.g. its eval-\*.tfrecord\)$", ["{run}"]),
    ("bench-depth-probes-cloze-blanks-for-masks", "benchmarks.depth_probes a={run} --records {eval} --sentences {cloze} "
     "--output_dir {tmp}/dp_cloze", 1, r"--sentences \S+cloze.txt: 12 lines hold '_____', which this model reads as "
     r"letters, and none its mask: write \[MASK\]", []),
    ("bench-depth-probes-a-run-whose-evaluation-is-a-folder", "benchmarks.depth_probes a={folders_run} --records "
     "{eval} --sentences {corpus} --output_dir {tmp}/dp_folder", 1, r"a=\S+folders_run: \S+ is not a finished "
     r"pre-training run dir \(its evaluation.json is a folder;", ["{folders_run}"]),
    ("analyze-records-a-data-runs-report", "albert_act.analyze token-types --init {run} --records {records_dir}/stats.json "
     "--output_dir {tmp}/a_stats", 1, r"stats.json: not a readable TFRecord .*; it is JSON \(it begins '\{.*\), not "
     r"records: give the data tool's shards", []),
    ("pretrain-config-overrides-null", PRETRAIN + " --config {configs}/overrides_null.json", 1, r"backbone_overrides "
     r"must be an object of backbone settings \(\{\} for none\), got null", ["{configs}"]),
    ("pretrain-resume-config-with-a-string-for-a-number", PRETRAIN.replace("{tmp}/new_run", "{string_steps_config_run}"),
     1, r"string_steps_config_run/config.json: steps must be an integer in \[1, 100000000\], got \"2\", a string: write "
     r"the number without quotes \(the file was "
     r"edited\?\); the run's checkpoints need", ["{string_steps_config_run}"]),
    ("analyze-init-config-not-utf8", "albert_act.analyze token-types --init {binary_config_run} --output_dir {tmp}/a", 1,
     r"binary_config_run/config.json: not a text file", ["{binary_config_run}"]),
]
ANALYZE = "albert_act.analyze token-types --init {run} --output_dir {tmp}/a"
SUBMIT = "albert_act.glue_submission --models {tmp}/empty_models --data_dir {glue} --output {tmp}/s.zip"
TOKENIZER = "pipelines.train_tokenizer --input {corpus} --output {tmp}/v --vocab_size 30 --no-byte_fallback --required_chars="
EXPORT = "albert_act.export --checkpoint {run} --kind pretraining --output {tmp}/e/1"
CASES += [
    ("export-a-run-with-an-empty-checkpoint-state-file", EXPORT.replace("{run}", "{empty_state_export_run}").replace(
     "{tmp}/e/1", "{tmp}/e_state/1"), 0, r"warning: \S+empty_state_export_run/checkpoints/checkpoint is empty or "
     r"damaged", ["{empty_state_export_run}/checkpoints/checkpoint"]),
    ("export-a-run-holding-another-runs-later-checkpoint", EXPORT.replace("{run}", "{foreign_ckpt_run}"), 1,
     r"foreign_ckpt_run/checkpoints/ckpt-9 is of update 9, past the run's 3 \(its config.json\): another run's "
     r"checkpoint, copied or linked in; move it away", ["{foreign_ckpt_run}"]),
    ("pretrain-resume-a-run-holding-another-runs-later-checkpoint", "albert_act.pretrain --config "
     "{foreign_ckpt_run}/config.json --model_dir {foreign_ckpt_run} --no_export", 1, r"foreign_ckpt_run/checkpoints/"
     r"ckpt-9 is of update 9, past the run's 3", ["{foreign_ckpt_run}"]),
    ("export-a-run-whose-vocabulary-was-replaced", EXPORT.replace("{run}", "{swapped_vocab_run}"), 1,
     r"swapped_vocab_run/vocab.model is not the vocabulary \S+swapped_vocab_run's training records \(\S+\) were made "
     r"with: its ids would mean other pieces. Was it replaced\? Put the data's vocabulary back", ["{swapped_vocab_run}"]),
    ("analyze-a-run-whose-vocabulary-was-replaced", "albert_act.analyze token-types --init {swapped_vocab_run} "
     "--records {eval} --output_dir {tmp}/a_swapped", 1, r"swapped_vocab_run/vocab.model is not the vocabulary", []),
    ("export-checkpoints-without-their-index", EXPORT.replace("{run}", "{indexless_run}"), 1,
     r"indexless_run/checkpoints/ckpt-3: its .data file is there without its .index \(a copy cut short, or the file "
     r"deleted\), so no checkpoint of the run reads; copy the whole checkpoint back$", ["{indexless_run}"]),
]
CASES += [
    # --- every numeric flag checked before the compute, naming the flag and the value ------------
    *[(f"pretrain-{flag}-{value}", PRETRAIN + f" --{flag} {value}", 1, rf"{flag} must be {rule}, got {value}", [])
      for flag, value, rule in (
          ("learning_rate", "0", r"a learning rate in \[1e-08, .*"), ("learning_rate", "-1", r"a learning rate in \[1e-08, .*"),
          ("learning_rate", "nan", r"a learning rate in \[1e-08, .*"),
          ("micro_batch_size", "0", r"(an integer )?(>= 1|in \[1, \d+\])"), ("global_batch_size", "0", r"(an integer )?(>= 1|in \[1, \d+\])"),
          ("checkpoint_every", "0", r"(an integer )?(>= 1|in \[1, \d+\])"), ("keep_checkpoints", "0", r"(an integer )?(>= 1|in \[1, \d+\])"),
          ("log_every", "0", r"(an integer )?(>= 1|in \[1, \d+\])"), ("eval_batches", "0", r"(an integer )?(>= 1|in \[1, \d+\])"),
          ("ponder_warmup_start", "-1", "(an integer )?>= 0"), ("ponder_warmup_steps", "-1", "(an integer )?>= 0"),
          ("warmup_steps", "-1", "(an integer )?>= 0"), ("seed", "-1", r"an integer in \[0, 4294967295\] .*"))],
    ("pretrain-tau-nan", PRETRAIN + " --tau nan", 1, r"--tau\) must be a number in \[0, 3.4028e\+38\] .* or 'auto', got nan", []),
    ("pretrain-tau-infinite", PRETRAIN + " --tau 1e400", 1, r"--tau\) must be a number in \[0, 3.4028e\+38\] .* or 'auto', got inf",
     []),
    *[(f"pretrain-override-{key}-{value}", PRETRAIN + f" --override {key}={value}", 1, message, [])
      for key, value, message in (
          ("num_heads", "0", r"num_heads must be an integer >= 1, got 0"),
          ("num_heads", "3", r"hidden size \(32\) must be divisible by num_heads \(3\)"),
          ("max_iterations", "0", r"max_iterations must be an integer in \[1, 64\], got 0"),
          ("hidden_dim", "-4", r"hidden_dim must be an integer >= 1, got -4"),
          ("dropout", "1.5", r"dropout must be (a number )?in \[0, 1\), got 1.5"),
          ("dropout", "1e-50", r"dropout must be a number in \[0, 1\), got 1e-50 \(0 in float32, where the model "
                               r"computes: give 0, or at least 1.1755e-38\)"),  # (round 45 B80: accepted)
          ("halting_epsilon", "2", r"epsilon must be (a number )?in \(0, 1\), got 2"),
          ("num_segments", "1", r"num_segments must be an integer >= 2: pre-training's sentence pairs are segments 0 "
                                r"and 1$"),  # (round 45 B33: TensorFlow's traceback after the first update's work)
          ("initializer_range", "-1", r"initializer_range must be a standard deviation > 0$"),  # (B35: trained)
          ("return_details", "true", r"what the model returns is asked by each command .*: drop the override$"))],
    ("pretrain-init-from-nowhere", PRETRAIN + " --init_from {tmp}/nowhere", 1, r"nowhere: no such file or folder", []),
    ("pretrain-init-from-a-file", PRETRAIN + " --init_from {notes_dir}/notes.txt", 1, r"notes.txt: not a pre-training run dir", ["{notes_dir}"]),
    ("pretrain-train-files-a-dir", PRETRAIN.replace("{train}", "{notes_dir}"), 1, r"notes_dir is a directory", []),
    ("pretrain-vocab-a-dir", PRETRAIN + " --vocab {notes_dir}", 1, r"notes_dir is a directory, not a SentencePiece model",
     ["{notes_dir}"]),
    ("pretrain-vocab-missing", PRETRAIN + " --vocab {tmp}/nowhere.model", 1, r"nowhere.model: no such file", []),
    ("pretrain-model-dir-a-file", PRETRAIN.replace("{tmp}/new_run", "{notes_dir}/notes.txt"), 1,
     r"notes.txt is a file, not a directory", ["{notes_dir}"]),
    ("pretrain-export-under-a-file", PRETRAIN.replace(" --no_export", " --export_dir {notes_dir}/notes.txt/1 --vocab {vocab}"),
     1, r"notes.txt is a file", ["{notes_dir}"]),
    ("pretrain-eval-files-none", PRETRAIN.replace("{eval}", "'{tmp}/none-*.tfrecord'"), 1, r"no evaluation file matches", []),
    ("pretrain-no-tpu", PRETRAIN + " --strategy tpu", 1, r"--strategy tpu: no TPU found", []),
    ("pretrain-bad-preset", PRETRAIN + " --preset huge", 2, r"invalid choice: 'huge'", []),
    # --- fine-tuning --------------------------------------------------------------------------------
    *[(f"finetune-{flag}-{value}", FINETUNE + f" --task rte --data_dir {{rte}} --{flag} {value}", 1,
       rf"{flag} must be {rule}, got {value}", [])
      for flag, value, rule in (
          ("learning_rate", "nan", r"a learning rate in \[1e-08, .*"), ("max_iterations", "0", r"(an integer )?(>= 1|in \[1, \d+\])"),
          ("max_train_examples", "0", r"(an integer )?(>= 1|in \[1, \d+\])"), ("tau", "-1", r"a number in \[0, 3.4028e\+38\] .*"), ("seed", "-1", r"an integer in \[0, 4294967295\] .*"),
          ("halting_bias", "nan", r"a number in \[-3.4028e\+38, 3.4028e\+38\] .*"))],
    ("finetune-seeds-0", FINETUNE + " --task rte --data_dir {rte} --grid --seeds 0", 1, r"--seeds must be an integer (>= 1|in \[1, \d+\]), got 0", []),
    ("finetune-output-a-file", FINETUNE.replace("{tmp}/ft", "{notes_dir}/notes.txt") + " --task rte --data_dir {rte}", 1,
     r"notes.txt is a file, not a directory", ["{notes_dir}"]),
    ("finetune-data-dir-a-file", FINETUNE + " --task rte --data_dir {notes_dir}/notes.txt", 1, r"notes.txt is a file", []),
    ("finetune-probing-data-dir-the-task-file", FINETUNE + " --task tense --data_dir {notes_dir}/notes.txt", 1,
     r"--data_dir \S*notes.txt is a file, not a folder: give the folder of the task's SentEval file "
     r"\(past_present.txt\), e.g. \S*notes_dir", []),
    ("finetune-data-dir-missing", FINETUNE + " --task rte --data_dir {tmp}/nowhere", 1, r"nowhere/train.tsv: missing", []),
    ("finetune-init-a-file", FINETUNE.replace("{run}", "{notes_dir}/notes.txt") + " --task rte --data_dir {rte}", 1,
     r"notes.txt: not a pre-training run dir", ["{notes_dir}"]),
    ("finetune-vocab-a-dir", FINETUNE + " --task rte --data_dir {rte} --vocab {notes_dir}", 1,
     r"notes_dir is a directory, not a SentencePiece model", []),
    ("finetune-utf16-tsv", FINETUNE + " --task rte --data_dir {glue_utf16}", 1,
     r"glue_utf16/train.tsv: UTF-16 text, not UTF-8 \(its first line holds NUL bytes or a UTF-16 byte-order mark\)", []),
    ("finetune-cr-only-tsv", FINETUNE + " --task rte --data_dir {glue_cr}", 1,
     r"glue_cr/train.tsv: lines end in a lone CR", []),
    ("finetune-halting-none-with-max-iterations", FINETUNE + " --task rte --data_dir {rte} --halting none --max_iterations 0", 1,
     r"--max_iterations must be an integer in \[1, 64\], got 0", []),
    # --- export ---------------------------------------------------------------------------------------
    ("export-top-k-0", EXPORT + " --top_k 0", 1, r"--top_k must be an integer (>= 1|in \[1, \d+\]), got 0", []),
    ("export-top-k-vocabulary", EXPORT + " --top_k 401", 1, r"top_k must be in \[1, 400\], got 401", []),
    ("export-max-seq-0", EXPORT + " --max_seq_length 0", 1, r"--max_seq_length must be an integer in \[3, 8192\], got 0", []),
    ("export-max-seq-long", EXPORT + " --max_seq_length 1000", 1, r"max_seq_length 1000 exceeds the model's 64", []),
    ("export-vocab-missing", EXPORT + " --vocab {tmp}/nowhere.model", 1, r"nowhere.model: no such file", []),
    ("export-not-a-vocab", EXPORT + " --vocab {not_a_vocab}", 1, r"not_a_vocab.model: not a SentencePiece model", []),
    ("export-under-a-file", EXPORT.replace("{tmp}/e/1", "{notes_dir}/notes.txt/1"), 1, r"notes.txt is a file", ["{notes_dir}"]),
    ("export-checkpoint-a-file", EXPORT.replace("{run}", "{notes_dir}/notes.txt"), 1, r"notes.txt: not a pre-training run dir", ["{notes_dir}"]),
    ("export-bad-format", EXPORT + " --format onnx", 2, r"invalid choice: 'onnx'", []),
    # --- analyses ---------------------------------------------------------------------------------------
    ("analyze-max-batches-0", ANALYZE + " --max_batches 0", 1, r"--max_batches must be an integer >= 1, got 0", []),
    ("analyze-documents-0", ANALYZE.replace("token-types", "dependencies") + " --documents 0", 1,
     r"--documents must be an integer in \[1, 100000\], got 0", []),
    ("analyze-parsed-none", ANALYZE.replace("token-types", "dependencies") + " --parsed {tmp}/none.conllu", 1,
     r"no file matches .*none.conllu", []),
    ("analyze-documents-beside-parsed", ANALYZE.replace("token-types", "dependencies") + " --parsed {empty_form} "
     "--documents 50", 1, r"--documents 50 sizes the embedded corpus, which --parsed replaces: give one", []),
    ("export-output-an-exports-base-path", EXPORT.replace("{tmp}/e/1", "{export_base}"), 1,
     r"--output \S+ is an export's base path, holding its versions \(1\), each a SavedModel: give a version folder in "
     r"it, a new one \(e.g. \S+/2\)", ["{export}"]),
    ("pretrain-demo-data-dir-in-a-runs-eval-folder", "albert_act.pretrain --model_dir {tmp}/demo_in_eval --steps 2 "
     "--demo_data_dir {run}/eval/dd", 1, r"error: --demo_data_dir \S+/eval/dd lies in the run \S+'s eval/ folder, which "
     r"the run writes, resumes from and cleans", ["{run}/eval/dd"]),
    ("pretrain-demo-data-dir-beside-train-files", PRETRAIN + " --demo_data_dir {tmp}/dd", 1,
     r"--demo_data_dir \S*dd is where the embedded demo data is built; with --train_files there is none to build", []),
    ("probing-every-sentence-of-one-tense", "pipelines.probing --conllu {tmp}/past_only.conllu --output_dir "
     "{tmp}/probe_past", 0, r"note: past_present.txt: every line has the label PAST, so a classifier fine-tuned on it "
     r"learns nothing", []),
    ("probing-seed-without-synthetic-documents", "pipelines.probing --conllu {corpus} --seed 5 --output_dir "
     "{tmp}/probing_out", 1, r"--seed 5 draws the embedded corpus's documents, and --synthetic_documents is 0", []),
    ("analyze-parsed-empty-form", ANALYZE.replace("token-types", "dependencies") + " --parsed {empty_form}", 1,
     r"empty_form.conllu line 3: empty FORM", []),
    ("analyze-output-a-file", ANALYZE.replace("{tmp}/a", "{notes_dir}/notes.txt"), 1, r"notes.txt is a file, not a directory",
     ["{notes_dir}"]),
    ("analyze-output-holds-other-files", ANALYZE.replace("{tmp}/a", "{notes_dir}"), 1,
     r"--output_dir .*notes_dir holds other files \(notes.txt\); an analysis replaces its dir whole", ["{notes_dir}"]),
    ("analyze-not-a-vocab", ANALYZE + " --vocab {not_a_vocab}", 1, r"not_a_vocab.model: not a SentencePiece model", []),
    ("analyze-records-cut-short", ANALYZE + " --records {truncated}", 1, r"truncated.tfrecord: corrupt within its first "
     r"\d+ records \(truncated record at \d+: Read less bytes than requested\); make the shard again, or leave it out", []),
    ("analyze-ids-outside-vocab", ANALYZE + " --records {outside_ids}", 1,
     r"outside_ids.tfrecord: input_ids holds token id 999, outside the model's vocabulary of 400", []),
    # --- the submission -------------------------------------------------------------------------------
    ("submission-output-in-a-runs-checkpoints", SUBMIT.replace("{tmp}/s.zip", "{run}/checkpoints/s.zip"), 1,
     r"--output \S+/checkpoints/s.zip lies in the run \S+'s checkpoints/ folder", ["{run}/checkpoints/s.zip"]),
    ("submission-output-in-an-export", SUBMIT.replace("{tmp}/s.zip", "{export}/s.zip"), 1,
     r"--output \S+ is inside the SavedModel \S+: written there, it would be a part of that one", ["{export}/s.zip"]),
    ("bench-learning-curves-output-in-a-runs-checkpoints", "benchmarks.learning_curves A={run} --output_dir "
     "{run}/checkpoints/lc", 1, r"--output_dir \S+/checkpoints/lc lies in the run \S+'s checkpoints/ folder",
     ["{run}/checkpoints/lc"]),
    ("submission-no-data-dir", SUBMIT.replace("{glue}", "{tmp}/nowhere"), 1, r"--data_dir .*nowhere: no such folder", []),
    ("submission-models-a-file", SUBMIT.replace("{tmp}/empty_models", "{notes_dir}/notes.txt"), 1, r"notes.txt is a file",
     ["{notes_dir}"]),
    ("submission-output-a-dir", SUBMIT.replace("{tmp}/s.zip", "{notes_dir}"), 1, r"notes_dir is a folder; give the zip "
     r"file's path \(e.g. .*notes_dir/submission.zip\)", ["{notes_dir}"]),
    ("submission-output-a-new-folder", SUBMIT.replace("{tmp}/s.zip", "{tmp}/new_folder/"), 1, r"new_folder/ is a folder; "
     r"give the zip file's path \(e.g. .*new_folder/submission.zip\)", []),
    ("submission-output-under-a-file", SUBMIT.replace("{tmp}/s.zip", "{notes_dir}/notes.txt/s.zip"), 1, r"notes.txt is a file",
     ["{notes_dir}"]),
    ("submission-output-not-zip", SUBMIT.replace("{tmp}/s.zip", "{tmp}/s.tar"), 1, r"--output (\S+)/s.tar: the GLUE server takes a .zip file \(its name ending in .zip, in lower case\); e.g. "
     r"--output \1/s.zip", []),
    # --- the data tool ---------------------------------------------------------------------------------
    *[(f"data-{flag}-{value}", DATA + f" --input {{corpus}} --{flag} {value}", 1, rf"{flag} must be {rule}, got {value}", [])
      for flag, value, rule in (
          ("masked_lm_prob", "0", r"(a number )?in \(0, 1\)"), ("masked_lm_prob", "1.5", r"(a number )?in \(0, 1\)"),
          ("short_seq_prob", "2", r"(a number )?in \[0, 1\]"), ("eval_fraction", "1", r"(a number )?in \[0, 0.5\]"),
          ("dupe_factor", "0", r"(an integer )?(>= 1|in \[1, \d+\])"), ("num_shards", "0", r"(an integer )?(>= 1|in \[1, \d+\])"),
          ("workers", "0", r"(an integer )?(>= 1|in \[1, \d+\])"), ("shuffle_buffer", "0", r"(an integer )?(>= 1|in \[1, \d+\])"),
          ("max_predictions_per_seq", "0", r"(an integer )?(>= 1|in \[1, \d+\])"), ("seed", "-1", r"an integer in \[0, 4294967295\] .*"))],
    ("data-max-seq-small", DATA + " --input {corpus} --max_seq_length 4", 1,
     r"--max_seq_length must be an integer in \[5, 8192\], got 4", []),
    ("data-input-a-dir", DATA + " --input {notes_dir}", 1, r"notes_dir is a directory", []),
    ("data-utf16-corpus", DATA + " --input {utf16_txt}", 1, UTF16, []),
    ("data-gzip-corpus", DATA + " --input {gzip_txt} --skip_invalid_utf8", 1,
     r"corpus.txt.gz: a gzip-compressed file, not text; decompress it first \(gunzip -c \S*corpus.txt.gz > "
     r"\S*corpus.txt\)", []),
    ("tokenizer-gzip-corpus", TOKENIZER.replace("{corpus}", "{gzip_txt}"), 1,
     r"corpus.txt.gz: a gzip-compressed file, not text", []),
    ("data-vocab-missing", DATA.replace("{vocab}", "{tmp}/nowhere.model") + " --input {corpus}", 1,
     r"nowhere.model: no such file", []),
    # --- the tokenizer ---------------------------------------------------------------------------------
    ("tokenizer-vocab-size-0", TOKENIZER.replace("--vocab_size 30", "--vocab_size 0"), 1,
     r"--vocab_size must be an integer in \[5, 1000000\], got 0", []),
    ("tokenizer-vocab-size-too-big", TOKENIZER.replace("--vocab_size 30", "--vocab_size 5000"), 1,
     r"--vocab_size 5000 is too large for this corpus", []),
    ("tokenizer-too-small-for-byte-fallback", "pipelines.train_tokenizer --input {corpus} --output {tmp}/v --vocab_size 30", 1,
     r"--vocab_size 30 is too small .* need \d+ \(256 of them the byte fallback's: --no-byte_fallback drops them", []),
    ("tokenizer-input-twice", TOKENIZER.replace("--input {corpus}", "--input {corpus} {corpus}"), 1,
     r"--input matches \S*corpus\S* twice: its sentences would count twice in the vocabulary's statistics; give each "
     r"file once", []),
    ("tokenizer-too-large-for-the-sampled-lines", TOKENIZER + " --max_sentences 1", 1,
     r"--vocab_size 30 is too large for this corpus: .*\(the 1 line sampled by --max_sentences 1; raise it\)", []),
    ("pretrain-global-batch-larger-than-the-data", PRETRAIN.replace("--global_batch_size 8", "--global_batch_size 4096"), 1,
     r"global batch 4096 is larger than the \d+ training instances of 2 file\(s\) .*: every update would read each one "
     r"\d+ times; pass a --global_batch_size of at most \d+", ["{tmp}/new_run"]),
    # a refused resume names what differs, a nested setting by its key, not whole dicts before it
    ("pretrain-resume-with-init-from", PRETRAIN.replace("{tmp}/new_run", "{run}") + " --init_from {export}", 1,
     r"holds a run with another config \((?:(?!\{).)*init_from: unset \(the default\) there, '.*export/1' now", ["{run}", "{export}"]),
    ("tokenizer-a-sample-of-the-lines", TOKENIZER.replace("{tmp}/v", "{tmp}/v_sample") + " --max_sentences 20", 0,
     r"note: the vocabulary is trained on a seeded sample of 20 of the \d[\d,]* lines \(--max_sentences\)", []),
    ("tokenizer-max-sentences-0", TOKENIZER + " --max_sentences 0", 1, r"--max_sentences must be an integer >= 1, got 0", []),
    ("tokenizer-threads-0", TOKENIZER + " --threads 0", 1, r"--threads must be an integer in \[1, 1024\], got 0", []),
    ("tokenizer-output-under-a-file", TOKENIZER.replace("{tmp}/v", "{notes_dir}/notes.txt/v"), 1, r"notes.txt is a file",
     ["{notes_dir}"]),
    ("tokenizer-input-a-dir", TOKENIZER.replace("{corpus}", "{notes_dir}"), 1, r"notes_dir is a directory", []),
    ("tokenizer-empty-corpus", TOKENIZER.replace("{corpus}", "{empty_txt}"), 1, r"no text to train a vocabulary on in .*empty.txt", []),
    # --- what a new user tries: infinite rates, outputs in the wrong place, files of the wrong kind ---
    ("pretrain-lr-infinite", PRETRAIN + " --learning_rate inf", 1, r"--learning_rate must be a learning rate in \[1e-08, 10\] .*, got inf",
     []),
    ("pretrain-halting-lr-scale-beyond-float32", PRETRAIN + " --halting_learning_rate_scale 1e300", 1,
     r"--halting_learning_rate_scale must be a number in \[1.1755e-38, 3.4028e\+38\] .*, got 1e\+300", []),
    ("pretrain-halting-signal-weight-without-its-objective", PRETRAIN + " --halting_signal_weight 5", 1,
     r"halting_signal_weight 5.0 weighs final_and_halting's held mixture; --mlm_objective final has none", []),
    ("pretrain-demo-data-dir-a-file", "albert_act.pretrain --model_dir {tmp}/demo_run --steps 2 --demo_data_dir "
     "{notes_dir}/notes.txt", 1, r"--demo_data_dir .*notes.txt is a file, not a directory", ["{notes_dir}"]),
    ("pretrain-demo-data-dir-of-the-users-files", "albert_act.pretrain --model_dir {tmp}/demo_run --steps 2 "
     "--demo_data_dir {notes_dir}", 1, r"--demo_data_dir .*notes_dir holds files that are not the demo's \(notes.txt\) "
     "and would be replaced by its data", ["{notes_dir}"]),
    ("pretrain-checkpoints-without-config", PRETRAIN.replace("{tmp}/new_run", "{no_config_run}"), 1,
     r"no_config_run holds checkpoints but no config.json, so the settings they were trained with are unknown",
     ["{no_config_run}"]),
    ("pretrain-not-a-tfrecord", PRETRAIN.replace("{train}", "{text_tfrecord}"), 1,
     r"text.tfrecord: not a readable TFRecord of tf.train.Examples \(corrupted record at 0 \(Is this even a TFRecord "
     r"file\?\)\); it is text \(it begins 'not a TFRecord at all\\n'\), not records: give the data tool's shards", []),
    ("finetune-into-the-run", FINETUNE.replace("{tmp}/ft", "{run}") + " --task rte --data_dir {rte}", 1,
     r"--output_dir .*run holds a pre-training run \(config.json\); fine-tune into another dir", ["{run}"]),
    ("finetune-into-the-data", FINETUNE.replace("{tmp}/ft", "{glue_label}") + " --task rte --data_dir {glue_label}", 1,
     r"--output_dir .*glue_label holds other files \(dev.tsv, train.tsv\)", ["{glue_label}"]),
    ("finetune-one-checkpoint", FINETUNE.replace("--init {run}", "--init {run}/checkpoints/ckpt-3") +
     " --task rte --data_dir {rte}", 1, r"checkpoints/ckpt-3 is inside the pre-training run .*run: give the run dir "
     r"itself", []),
    ("export-the-checkpoints-folder", EXPORT.replace("{run}", "{run}/checkpoints"), 1,
     r"run/checkpoints is inside the pre-training run .*run: give the run dir itself", []),
    ("analyze-head-outside-sentence", "albert_act.analyze dependencies --init {run} --parsed {bad_head} "
     "--output_dir {tmp}/a_dep", 1, r"bad_head.conllu line 2: HEAD 7 is outside its sentence of 2 words", []),
    ("data-same-file-twice", DATA + " --input {corpus} {tmp}/../{tmp_name}/corpus.txt", 1,
     r"--input matches .*corpus.txt twice \(also as .*corpus.txt\): its sentences would be both trained on and held "
     r"out", []),
    ("tokenizer-over-a-vocabulary", TOKENIZER.replace("{tmp}/v", "{old_vocab}"), 1,
     r"old_vocab.model exists \(a vocabulary that records and models may have been made with\); .*--overwrite",
     ["{old_vocab}.model", "{old_vocab}.vocab"]),
    ("tokenizer-vocab-size-below-characters", TOKENIZER.replace("--vocab_size 30", "--vocab_size 5"), 1,
     r"--vocab_size 5 is too small for this corpus: its characters and the special pieces need \d+; pass "
     r"--vocab_size \d+ or more", []),
    ("submission-models-is-a-model", SUBMIT.replace("{tmp}/empty_models", "{export}"), 1,
     r"--models .*export/1 is itself a model \(an export or a fine-tuning dir\)", []),
    # --- outputs over other things, records of another vocabulary ------------------------------------
    ("pretrain-model-dir-is-an-export", PRETRAIN.replace("{tmp}/new_run", "{export}"), 1,
     r"--model_dir .*export/1 holds other files \(assets, fingerprint.pb, saved_model.pb, variables\) and no run "
     r"\(config.json\)", ["{export}"]),
    ("data-output-is-a-run", DATA.replace("{tmp}/records", "{run}") + " --input {corpus}", 1,
     r"--output_dir .*run holds other files \(checkpoints, config.json, .*\); write the records to a new or empty "
     r"directory", ["{run}"]),
    ("tokenizer-output-a-directory", TOKENIZER.replace("{tmp}/v", "{notes_dir}/"), 1,
     r"--output .*notes_dir/ is a directory; --output is a file prefix, e.g. .*notes_dir/vocab", ["{notes_dir}"]),
    ("analyze-records-of-another-vocabulary", ANALYZE + " --records {other_vocab_eval}/eval.tfrecord", 1,
     r"other_vocab_eval/eval.tfrecord: made with another vocabulary \(wiki.model, per .*stats.json\) than the model's",
     []),
    ("pretrain-records-of-another-vocabulary", PRETRAIN.replace("{train}", "{other_vocab}/eval.tfrecord") +
     " --vocab {vocab}", 1, r"other_vocab/eval.tfrecord: made with another vocabulary \(wiki.model, .*\) than the "
     r"model's \(.*vocab.model\)", []),
    # --- an existing output is replaced only with --overwrite ------------------------------------------
    ("pretrain-records-of-a-killed-data-tool", PRETRAIN.replace("--train_files {train}", "--train_files "
     "{killed_records}/train-00000-of-00004.tfrecord"), 1, r"killed_records holds _incomplete/ beside its shards: a "
     r"data tool killed while it moved its shards into place, a part of its output; make the records again", []),
    ("data-into-the-output-of-a-killed-run", DATA.replace("{tmp}/records", "{killed_records}") + " --input {corpus}", 1,
     r"killed_records holds 1 shard\(s\) and _incomplete/: a run killed while it moved its shards into place, a part "
     r"of its output; delete them and _incomplete/, and re-run", ["{killed_records}"]),
    ("analyze-a-run-before-its-first-checkpoint", ANALYZE.replace("{run}", "{run_starting}"), 1,
     r"run_starting is a pre-training run with no checkpoint yet \(config.json, no checkpoints/: still starting, or "
     r"stopped before its first\): give it the time to write one, or another model", []),
    ("analyze-over-an-earlier-analysis", ANALYZE.replace("{tmp}/a", "{earlier}/analysis"), 1,
     r"--output_dir .*analysis holds an earlier analysis \(report.md\); pass --overwrite", ["{earlier}/analysis"]),
    ("finetune-over-a-finished-one", FINETUNE.replace("{tmp}/ft", "{earlier}/ft") + " --task rte --data_dir {rte}", 1,
     r"--output_dir .*ft holds a finished fine-tuning \(results.json\); pass --overwrite", ["{earlier}/ft"]),
    ("finetune-one-run-into-a-stopped-grid", FINETUNE.replace("{tmp}/ft", "{earlier}/stopped_grid") + " --task rte "
     "--data_dir {rte}", 1, r"--output_dir .*stopped_grid holds a grid that stopped before its end \(grid/: its finished "
     r"points, which the grid goes on from\); re-run the grid \(finetune --grid\) to finish it, pass --overwrite",
     ["{earlier}/stopped_grid"]),
    ("finetune-into-a-point-of-a-grid", FINETUNE.replace("{tmp}/ft", "{earlier}/grid/grid/p") + " --task rte "
     "--data_dir {rte} --overwrite", 1, r"--output_dir .*earlier/grid/grid/p is a point of the grid in .*earlier/grid, "
     r"whose results.json and best export describe it: run the grid again", ["{earlier}/grid"]),
    ("finetune-config-of-a-copied-run", "albert_act.finetune --config {ft_copy}/finetune_config.json --init {run} "
     "--task rte --data_dir {rte} --epochs 1 --batch_size 8 --strategy cpu --overwrite", 1,
     r"--config .*ft_copy/finetune_config.json is the record of a fine-tuning in .*earlier/ft \(its output_dir\), not "
     r"of the folder it lies in \(a copy, or a move\?\): give --output_dir", ["{earlier}/ft"]),
    ("export-into-a-fine-tunings-export", EXPORT.replace("{tmp}/e/1", "{earlier}/ft/export/1") + " --overwrite", 1,
     r"--output .*earlier/ft/export/1 is in the exports of the fine-tuning in .*earlier/ft \(its results.json names "
     r".*earlier/ft/export/1; a server would take any version there for that fine-tuning\): "
     r"write this one to another --output", ["{earlier}/ft"]),
    ("finetune-one-run-over-a-finished-grid", FINETUNE.replace("{tmp}/ft", "{earlier}/grid") + " --task rte --data_dir "
     "{rte}", 1, r"--output_dir .*grid holds a finished fine-tuning \(results.json\); pass --overwrite",
     ["{earlier}/grid/results.json", "{earlier}/grid/grid/p/results.json"]),
    ("finetune-over-a-benchmarks-results", FINETUNE.replace("{tmp}/ft", "{earlier}/bench") + " --task rte --data_dir "
     "{rte}", 1, r"--output_dir .*bench holds a results.json that is no fine-tuning's .*fine-tune into a new or empty dir",
     ["{earlier}/bench"]),
    ("submission-over-a-zip", SUBMIT.replace("{tmp}/s.zip", "{earlier}/s.zip"), 1,
     r"--output .*s.zip exists; pass --overwrite", ["{earlier}/s.zip"]),
    # --- another vocabulary of the same size (two pieces swapped) -------------------------------------
    ("finetune-another-vocabulary-of-the-same-size", FINETUNE + " --task rte --data_dir {rte} --vocab {swapped}", 1,
     r"--vocab .*swapped.model is not the vocabulary .*run was trained with \(.*run/vocab.model\)", []),
    ("export-another-vocabulary-of-the-same-size", EXPORT + " --vocab {swapped}", 1,
     r"--vocab .*swapped.model is not the vocabulary .*run was trained with", []),
    ("pretrain-resume-with-another-vocabulary", PRETRAIN.replace("{tmp}/new_run", "{run}") + " --vocab {swapped}", 1,
     r"made with another vocabulary \(.*vocab.model, per .*stats.json\) than the model's \(\S+swapped.model\): its ids "
     r"would mean other pieces; make the records with the model's vocabulary, or use theirs \(\S+vocab.model\)",
     ["{run}/vocab.model"]),
    ("pretrain-a-finished-run-given-its-own-vocabulary-copy", PRETRAIN.replace("{tmp}/new_run", "{run}") +
     " --steps 3 --warmup_steps 0 --learning_rate 1.76e-3 --vocab {run}/vocab.model --eval_batches 1", 0,
     r"note: \S+checkpoints/ckpt-3 is the run's last update \(3\): nothing is left to train", ["{run}/vocab.model"]),
    ("pretrain-a-run-whose-own-vocabulary-copy-was-emptied", PRETRAIN.replace("{tmp}/new_run", "{vocab_emptied_run}")
     + " --steps 3 --warmup_steps 0 --learning_rate 1.76e-3 --vocab {vocab} --eval_batches 1", 1,
     r"vocab_emptied_run/vocab.model, the run's copy of its vocabulary, is not a readable vocabulary: replaced or "
     r"damaged since the run saved it; put the run's own vocabulary back \(--vocab \S+ has its 400 pieces", []),
    ("pretrain-a-finished-run-whose-curve-was-deleted", PRETRAIN.replace("{tmp}/new_run", "{curve_deleted_run}") +
     " --steps 3 --warmup_steps 0 --learning_rate 1.76e-3 --vocab {vocab} --eval_batches 1 --eval_every 1", 0,
     r"note: \S+curve_deleted_run/held_out.jsonl is gone: it will hold this evaluation alone; the run's earlier ones "
     r"\(every 1 update\) are in its TensorBoard events under eval/", []),
    ("pretrain-unshared-layers-from-a-shared-run", PRETRAIN.replace("{tmp}/new_run", "{tmp}/unshared_run") +
     " --init_from {run} --unshared", 1, r"--init_from \S+run has one layer shared by its iterations, and --unshared "
     r"asks \d+ layers of their own, which it does not hold: drop --unshared", []),
    ("pretrain-export-into-its-own-checkpoints", PRETRAIN.replace(" --no_export", " --vocab {vocab} --export_dir "
     "{tmp}/own_ckpt/checkpoints/1").replace("{tmp}/new_run", "{tmp}/own_ckpt"), 1, r"--export_dir \S+own_ckpt/"
     r"checkpoints/1 lies in this run's checkpoints/ folder, which the run writes, resumes from and cleans", []),
    ("export-into-the-runs-own-checkpoints", EXPORT.replace("{tmp}/e/1", "{run}/checkpoints/1"), 1,
     r"--output \S+run/checkpoints/1 lies in the run \S+run's checkpoints/ folder, which the run writes, resumes from "
     r"and cleans: write it to a folder of its own", ["{run}/checkpoints"]),
    ("analyze-into-the-runs-tensorboard-folder", ANALYZE.replace("{tmp}/a", "{run}/eval/an"), 1,
     r"--output_dir \S+run/eval/an lies in the run \S+run's eval/ folder", ["{run}/eval"]),
    ("pretrain-a-run-inside-another-runs-checkpoints", PRETRAIN.replace("{tmp}/new_run", "{run}/checkpoints/x"), 1,
     r"--model_dir \S+run/checkpoints/x lies in the run \S+run's checkpoints/ folder", ["{run}/checkpoints"]),
    ("finetune-into-a-runs-tensorboard-folder", FINETUNE.replace("{tmp}/ft", "{run}/train/ft") + " --task rte "
     "--data_dir {rte}", 1, r"--output_dir \S+run/train/ft lies in the run \S+run's train/ folder", ["{run}/train"]),
    ("data-tool-into-a-runs-eval-folder", DATA.replace("{tmp}/records", "{run}/eval/records") + " --input {corpus}", 1,
     r"--output_dir \S+run/eval/records lies in the run \S+run's eval/ folder", ["{run}/eval"]),
    ("pretrain-a-capacity-that-caps-nothing", PRETRAIN.replace("--execution static", "--execution bucket") +
     " --override capacity=1000", 1, r"capacity 1000 \(--override capacity\) caps an iteration at as many tokens a "
     r"row, and rows hold at most max_sequence_length 64: it caps nothing; give a capacity below 64", []),
    ("pretrain-a-capacity-without-buckets", PRETRAIN + " --override capacity=4", 1,
     r"capacity 4 \(--override capacity\) caps an iteration's tokens under --execution bucket alone; --execution "
     r"static has no cap, and would train as if it were not given: drop it, or pass --execution bucket", []),
    ("pretrain-a-finished-run-evaluated-again-on-other-batches", PRETRAIN.replace("{tmp}/new_run", "{run}") +
     " --steps 3 --warmup_steps 0 --learning_rate 1.76e-3 --vocab {vocab} --eval_batches 2", 1,
     r"run was evaluated on 1 held-out batch, and this command asks 2 held-out batches: resumed \(or, finished, "
     r"evaluated again\), its held_out.jsonl would mix two held-out sets and its evaluation.json be replaced; give "
     r"--eval_batches 1 \(evaluate other batches with python -m albert_act.analyze held-out --init \S+run "
     r"--max_batches 2\)", ["{run}/evaluation.json", "{run}/config.json"]),
]
TRUNCATED_VOCAB = (r"truncated_vocab.model: a truncated or damaged SentencePiece model \(200 pieces and no trainer_spec "
                   r"or normalizer_spec, which a whole model ends with\)")
# Damaged weights: every command reads them through one reader (`Source`), as pre-training's resume does.
DAMAGED_FALLBACK = (r"warning: .*damaged_index_run/checkpoints/ckpt-3: unreadable \(OpError: .*\); reading the checkpoint "
                    r"before it\nread .*damaged_index_run/checkpoints/ckpt-2, the newest intact checkpoint.*\nnote: "
                    r"\S+damaged_index_run's checkpoints past update 2 do not read \(named above\): the weights of "
                    r"update 2 are read, not those of its last, 3")
ALL_TRUNCATED = (r"truncated_run: no intact checkpoint in .*truncated_run/checkpoints: .*ckpt-3: unreadable \(IndexError: "
                 r"Read less bytes than requested\)")
DAMAGED_EXPORT = (r"damaged_export/1/variables/variables.data-00000-of-00001 \(the export's weights\): damaged export, "
                  r"not readable \(OpError: .*Checksum does not match.*\); export the model again")
CASES += [
    # --- inputs checked by their content, not their name ------------------------------------------------
    ("data-utf16-corpus-skipping-invalid-lines", DATA + " --input {utf16_txt} --skip_invalid_utf8", 1, UTF16,
     ["{tmp}/records"]),
    ("tokenizer-utf16-corpus", TOKENIZER.replace("{corpus}", "{utf16_txt}"), 1, UTF16, []),
    ("data-bom-less-utf16-corpus", DATA + " --input {utf16le_txt} --skip_invalid_utf8", 1,
     r"utf16le.txt: UTF-16LE text, not UTF-8 \(its first line holds NUL bytes.* iconv -f UTF-16LE -t UTF-8", []),
    ("analyze-sentences-utf16", "albert_act.analyze sentences --init {run} --text {utf16_txt} --output_dir {tmp}/a_s",
     1, UTF16, []),
    ("pretrain-eval-a-link-to-train", PRETRAIN.replace("{eval}", "{linked_eval}"), 1,
     r"evaluation files are also training files \(1\): .*linked_eval.tfrecord is the training file .*train-.*tfrecord: "
     r"held-out numbers would measure what the model was trained on", []),
    ("pretrain-eval-a-copy-of-train", PRETRAIN.replace("{eval}", "{copied_eval}"), 1,
     r"evaluation files are also training files \(1\): .*copied_eval.tfrecord is the training file", []),
    ("data-truncated-vocab", DATA.replace("{vocab}", "{truncated_vocab}") + " --input {corpus}", 1, TRUNCATED_VOCAB,
     ["{truncated_vocab}"]),
    ("pretrain-truncated-vocab", PRETRAIN + " --vocab {truncated_vocab}", 1, TRUNCATED_VOCAB, []),
    ("finetune-truncated-vocab", FINETUNE + " --task rte --data_dir {rte} --vocab {truncated_vocab}", 1,
     TRUNCATED_VOCAB, []),
    ("finetune-probing-label-outside-the-task", FINETUNE + " --task tense --data_dir {probing_future}", 1,
     r"probing_future/past_present.txt line 3: label 'FUTURE' is not one of this task's \['PAST', 'PRES'\]",
     ["{probing_future}"]),
    ("finetune-set-seed-null", FINETUNE + " --task rte --data_dir {rte} --set seed=null", 1,
     r"seed must be an integer in \[0, 4294967295\] .*, got null \(leave it out for its default", []),
    ("finetune-probing-tab-inside-a-sentence", FINETUNE + " --task tense --data_dir {probing_tab}", 1,
     r"probing_tab/past_present.txt line 2: 4 TAB-separated fields, where SentEval's format has 3 \(split, label, "
     r"sentence\): a TAB inside the sentence\? replace it by a space", []),
    ("finetune-probing-empty-sentence", FINETUNE + " --task tense --data_dir {probing_empty}", 1,
     r"probing_empty/past_present.txt line 2: the sentence \(its third field\) is empty", []),
    ("finetune-probing-no-dev-lines", FINETUNE + " --task tense --data_dir {probing_no_va}", 1,
     r"probing_no_va/past_present.txt: no va lines: fine-tuning trains on the tr lines and keeps the epoch that does "
     r"best on the va lines", []),
    ("finetune-probing-one-label", FINETUNE + " --task tense --data_dir {probing_one_label}", 1,
     r"probing_one_label/past_present.txt: every tr line has the label 'PAST': a classifier needs two labels or more",
     []),
    ("finetune-glue-root-as-data-dir", FINETUNE + " --task rte --data_dir {glue}", 1,
     r"glue/train.tsv: missing: --data_dir is the task's own folder, and .*glue holds it: give --data_dir "
     r".*glue/RTE$", []),
    ("finetune-stsb-constant-dev-scores", FINETUNE + " --task sts-b --data_dir {stsb_constant}", 1,
     r"stsb_constant/dev.tsv: every gold label is .*2.5.*: the task's pearson and spearman, by which the best epoch "
     r"is chosen, is no number on labels that do not vary", []),
    ("finetune-probing-dev-label-never-trained", FINETUNE + " --task top_constituents --data_dir {probing_unseen}", 1,
     r"probing_unseen/top_constituents.txt line 3: label 'NP_VP_.' \(va\) is in no tr line", []),
    ("submission-partial-glue-spelled-folder", SUBMIT.replace("{tmp}/empty_models", "{glue_spelled_models}") +
     " --allow_partial", 1, r"glue_spelled_models/RTE/1 is a pretraining export, not a fine-tuned classifier",
     ["{glue_spelled_models}"]),
    ("submission-partial-no-task-folder", SUBMIT.replace("{tmp}/empty_models", "{notes_dir}") + " --allow_partial", 1,
     r"no task's model found in --models .*notes_dir \(it holds \['notes.txt'\]\); .*nothing written", ["{notes_dir}"]),
    # --- settings that make the work empty or endless ---------------------------------------------------
    ("data-max-seq-length-huge", DATA + " --input {corpus} --max_seq_length 100000000", 1,
     r"--max_seq_length must be an integer in \[5, 8192\], got 100000000", []),
    ("data-eval-fraction-all", DATA + " --input {corpus} --eval_fraction 0.999", 1,
     r"--eval_fraction must be a number in \[0, 0.5\], got 0.999", []),
    ("data-more-shards-than-instances", DATA.replace("--num_shards 1", "--num_shards 1000").replace(
        "{tmp}/records", "{tmp}/many_shards") + " --input {corpus}", 1,
     r"--num_shards 1000 but 20 documents \(\d+ for training\) gave \d+ training instances: \d+ shards would be "
     r"empty; use --num_shards \d+ or fewer", ["{tmp}/many_shards"]),
    ("data-a-2mb-line", DATA.replace("{tmp}/records", "{tmp}/one_line_records") + " --input {one_line}", 0,
     r"wrote \d+ train and 0 eval instances.*warning: 100% of the text's pieces were cut off to fit "
     r"sequences of 128: each line is read as a sentence, and one far longer than a sequence \(a document on one "
     r"line\?\) loses all but its start; give a sentence a line", []),
    ("data-a-2mb-line-in-16-shards", DATA.replace("{tmp}/records", "{tmp}/one_line_16").replace(
        "--num_shards 1", "--num_shards 16") + " --input {one_line}", 1, r"--num_shards 16 but 1 documents \(1 for "
     r"training\) gave 10 training instances: 6 shards "
     r"would be empty; use --num_shards 10 or fewer, but most of the text's pieces were cut off to fit sequences, as "
     r"each line is read as a sentence "
     r"\(a document on one line\?\): give a sentence a line", ["{tmp}/one_line_16"]),
    ("tokenizer-a-2mb-line", TOKENIZER.replace("{corpus}", "{one_line}"), 1,
     r"every line of .*one_line.txt.* is longer than 4192 bytes, and SentencePiece trains only on shorter ones", []),
    ("tokenizer-vocab-size-huge", TOKENIZER.replace("--vocab_size 30", "--vocab_size 99999999999999"), 1,
     r"--vocab_size must be an integer in \[5, 1000000\], got 99999999999999", []),
    ("finetune-max-seq-length-3", FINETUNE + " --task rte --data_dir {rte} --max_seq_length 3", 1,
     r"--max_seq_length must be an integer in \[8, 8192\], got 3", []),
    ("finetune-max-seq-length-huge", FINETUNE + " --task rte --data_dir {rte} --max_seq_length 100000000", 1,
     r"--max_seq_length must be an integer in \[8, 8192\], got 100000000", []),
    ("pretrain-override-max-iterations-huge", PRETRAIN + " --override max_iterations=100000", 1,
     r"max_iterations must be an integer in \[1, 64\], got 100000", []),
    ("export-max-seq-length-huge", EXPORT + " --max_seq_length 100000000", 1,
     r"--max_seq_length must be an integer in \[3, 8192\], got 100000000", []),
    ("export-top-k-huge", EXPORT + " --top_k 100000", 1, r"--top_k must be an integer in \[1, 1000\], got 100000", []),
    # --- leftovers and paths --------------------------------------------------------------------------------
    ("tokenizer-output-named-model", TOKENIZER.replace("{tmp}/v ", "{tmp}/named/vocab.model "), 0,
     r"wrote .*named/vocab.model \(\d+ pieces\) and .*named/vocab.vocab", []),
    ("export-output-without-version", EXPORT.replace("{tmp}/e/1", "{tmp}/unversioned_export"), 0,
     r"serve: TensorFlow Serving loads <base>/<version number>/, and .*unversioned_export is not named by a number: "
     r"export with --output .*unversioned_export/1 to serve it", []),
    ("tokenizer-output-named-vocab", TOKENIZER.replace("{tmp}/v ", "{tmp}/named_vocab/wiki.vocab "), 0,
     r"wrote .*named_vocab/wiki.model \(\d+ pieces\) and .*named_vocab/wiki.vocab", []),
    *[(f"{command.split()[0].split('.')[1]}-{flag}-{value}", f"{command} --{flag} {value}", 1,
       rf"--{flag} must be {words}, got {value}", [])
      for command, flag, value, words in (
          (DATA + " --input {corpus}", "eval_fraction", "-0.1", r"a number in \[0, 0.5\]"),
          (DATA + " --input {corpus}", "dupe_factor", "100000", r"an integer in \[1, 1000\]"),
          (DATA + " --input {corpus}", "max_ngram", "50", r"an integer in \[1, 10\]"),
          (PRETRAIN, "micro_batch_size", "1000000", r"an integer in \[1, 65536\]"),
          (PRETRAIN, "input_streams", "5000", r"an integer in \[1, 1024\]"),
          (TOKENIZER, "threads", "5000", r"an integer in \[1, 1024\]"),
          (FINETUNE + " --task rte --data_dir {rte}", "epochs", "100000", r"an integer in \[1, 10000\]"),
          (FINETUNE + " --task rte --data_dir {rte}", "max_iterations", "65", r"an integer in \[1, 64\]"))],
    ("pretrain-override-max-sequence-length-huge", PRETRAIN + " --override max_sequence_length=100000", 1,
     r"max_sequence_length must be an integer in \[1, 8192\], got 100000", []),
    ("finetune-probing-subject-a-proper-noun", FINETUNE + " --task subj_number --data_dir {probing_future}", 1,
     r"probing_future/subj_number.txt line 2: label 'NNP' is not one of this task's \['NN', 'NNS'\]", []),
    ("analyze-sentences-damaged-export", "albert_act.analyze sentences --init {damaged_export} --text {corpus} "
     "--output_dir {tmp}/a_damaged", 1, DAMAGED_EXPORT, ["{damaged_export}"]),
    ("huggingface-export-every-checkpoint-truncated", EXPORT.replace("{run}", "{truncated_run}").replace(
        "{tmp}/e/1", "{tmp}/hf_truncated") + " --format huggingface", 1, ALL_TRUNCATED, ["{truncated_run}"]),
    ("pretrain-init-from-every-checkpoint-truncated", PRETRAIN.replace("new_run", "warm_run2") +
     " --init_from {truncated_run}", 1, ALL_TRUNCATED, ["{truncated_run}", "{tmp}/warm_run2"]),
    # --- flags that mean nothing here, files given twice, huge values, damaged checkpoints -----------------
    ("export-classifier-top-k", EXPORT.replace("--kind pretraining", "--kind classifier") + " --top_k 3", 1,
     r"top_k 3 \(--top_k, or a --config file's\) is fill_mask's, which only --kind pretraining exports have \(not --kind "
     r"classifier\); drop --top_k", []),
    ("finetune-grid-with-its-own-epochs", FINETUNE + " --task rte --data_dir {rte} --grid", 1,
     r"--grid runs every learning_rate x batch_size x epochs of the paper's grid, so --batch_size 8, --epochs 1 would "
     r"be set aside: drop them, or drop --grid for one run", []),
    ("finetune-seeds-without-grid", FINETUNE + " --task rte --data_dir {rte} --seeds 3", 1,
     r"--seeds 3 goes with --grid \(seeds per grid point\); one run takes --seed", []),
    ("finetune-halting-bias-on-an-act-model", FINETUNE + " --task rte --data_dir {rte} --halting_bias 5", 1,
     r"--halting_bias sets a new halting unit's start, and .*run has its own halting unit", []),
    ("pretrain-ponder-start-after-steps", PRETRAIN + " --ponder_warmup_start 1000", 1,
     r"ponder_warmup_start 1000 is after steps=2: the ponder cost would never switch on", []),
    ("pretrain-a-shard-twice", PRETRAIN.replace("--train_files {train}", "--train_files {train} {linked_eval}"), 1,
     r"given twice in .*: each training file once, or its records count twice", []),
    ("pretrain-a-shard-and-its-copy", PRETRAIN.replace("--train_files {train}", "--train_files {train} {copied_eval}"),
     1, r"tfrecord holds the same records as .*tfrecord \(a copy: the same length and first MiB\): give each training "
     r"file once, or its records count twice", []),
    ("pretrain-global-batch-huge", PRETRAIN.replace("--global_batch_size 8", "--global_batch_size 1048576"), 1,
     r"--global_batch_size must be an integer in \[1, 65536\], got 1048576", []),
    ("data-input-a-copy", DATA + " --input {corpus} {corpus_copy}", 1,
     r"--input .*corpus_copy.txt holds the same text as .*corpus.txt \(a copy: line ends, blank lines, a "
     r"byte-order mark and the Unicode form aside\)", []),
    ("data-input-an-indented-copy", DATA + " --input {corpus} {corpus_indented}", 1,
     r"--input .*corpus_indented.txt: (\d+) of its \1 distinct sentences are also in .*corpus.txt \(the same words, as "
     r"they are read\): a copy, or a part of one \(or each made of the same sentences again and again: 19 of its 40 "
     r"repeat earlier ones in it, as a template's would\); its sentences would be both trained on and held out", []),
    ("data-input-a-copy-after-new-text", DATA + " --input {corpus} {corpus_after_more}", 1,
     r"--input .*corpus.txt: (\d+) of its \1 distinct sentences are also in .*corpus_after_more.txt", []),
    ("data-input-a-copy-with-each-documents-lines-reordered", DATA + " --input {corpus} {corpus_reordered}", 1,
     r"--input .*corpus_reordered.txt: (\d+) of its \1 distinct sentences are also in .*corpus.txt", []),
    ("tokenizer-input-a-copy-after-new-text", TOKENIZER.replace("{corpus}", "{corpus} {corpus_after_more}"), 1,
     r"--input .*corpus.txt: ([\d,]+) of its \1 distinct sentences are also in .*corpus_after_more.txt \(the same words, "
     r"as they are read\): a copy, or a part of one \(or each made of the same sentences again and again: .*\); its "
     r"sentences would count twice in the vocabulary's statistics", []),
    ("tokenizer-output-a-scheme-with-one-slash", TOKENIZER.replace("{tmp}/v", "gs:/bucket/v"), 1,
     r"--output gs:/bucket/v begins with 'gs:', a scheme with one slash: a remote path begins gs://; for a local "
     r"folder named 'gs:', write ./gs:/bucket/v", []),
    ("probing-output-dir-a-scheme-with-one-slash", "pipelines.probing --conllu {ud40} --output_dir hdfs:/nn/p", 1,
     r"--output_dir hdfs:/nn/p begins with 'hdfs:', a scheme with one slash", []),
    ("synthetic-corpus-output-remote", "pipelines.synthetic_corpus --documents 5 --output gs://bucket/c.txt", 1,
     r"--output gs://bucket/c.txt is remote: this command writes its output whole beside it and renames it", []),
    ("submission-output-remote", SUBMIT.replace("{tmp}/s.zip", "gs://bucket/s.zip"), 1,
     r"--output gs://bucket/s.zip is remote: .* write it to a local folder, then copy it", []),
    ("tokenizer-input-a-copy-with-its-lines-joined-in-pairs", TOKENIZER.replace("{corpus}", "{corpus} {corpus_joined}"),
     1, r"--input .*corpus_joined.txt: 21 of its 21 distinct sentences are also in .*corpus.txt", []),
    ("data-input-a-copy-with-each-documents-lines-joined", DATA + " --input {corpus} {corpus_joined}", 1,
     r"--input .*corpus_joined.txt: 21 of its 21 distinct sentences are also in .*corpus.txt", []),
    ("analyze-init-an-exports-base-path", "albert_act.analyze token-types --init {tmp}/export --output_dir {tmp}/a_base",
     1, r"export holds albert-act SavedModel versions \(a TensorFlow Serving base path\): give one, e.g. the newest, "
     r".*export/1$", ["{export}/saved_model.pb"]),
    ("finetune-init-an-exports-base-path", FINETUNE.replace("{run}", "{tmp}/export") + " --task rte --data_dir {rte}", 1,
     r"export holds albert-act SavedModel versions .*give one, e.g. the newest, .*export/1$", []),
    ("tokenizer-input-a-copy-with-numbered-lines", TOKENIZER.replace("{corpus}", "{corpus} {corpus_numbered}"), 1,
     r"--input .*corpus_numbered.txt: 21 of its 21 distinct sentences are also in .*corpus.txt", []),
    ("tokenizer-input-a-copy-as-html", TOKENIZER.replace("{corpus}", "{corpus} {corpus_html}"), 1,
     r"corpus_html.txt line 2: markup \(a line that is one tag, or opens and closes with tags: XML, HTML, a corpus's "
     r"\.vrt\) \('<p>It&nbsp;has.*'\), where plain text is read; give the text itself", []),
    ("data-input-its-own-text-twice", DATA.replace("{tmp}/records", "{tmp}/records_twice") + " --input "
     "{corpus_twice}", 0, r"note: \d+ of the \d+ sentences of .*corpus_twice.txt repeat earlier ones in it \(its text "
     r"twice, or more\?\): they count once for each time", []),
    ("data-input-a-copy-with-speakers-labels", DATA + " --input {corpus_spoken} {corpus}", 1,
     r"--input .*corpus.txt: 21 of its 21 distinct sentences are also in .*corpus_spoken.txt", []),
    ("tokenizer-input-a-conllu-file", TOKENIZER.replace("{corpus}", "{ud40}"), 1,
     r"ud40.conllu line \d+: a parsed file's token line \('2\\t.*': tab-separated columns, as CoNLL-U or \.dp\), where "
     r"plain text is read; give the text itself \(a CoNLL-U file's '# text = ' lines hold it: awk '/\^# newdoc/ && NR > "
     r"1 \{print \"\"\} sub\(/\^# text = /, \"\"\)' .*ud40.conllu > text.txt\)", []),
    ("data-input-a-dp-file", DATA + " --input {ptb_dp}", 1, r"ptb.dp line 2: a parsed file's token line \('Vinken\\tNNP"
     r"\\t8': .*give the text itself \(a .dp file's first column holds its words\)", []),
    ("data-input-bracketed-trees", DATA + " --input {ptb_mrg}", 1, r"ptb.mrg line 3: a bracketed tree \('    \(NP-SBJ ', "
     r"as Penn Treebank's .mrg\), where plain text is read; give the text itself", []),
    ("tokenizer-input-a-glue-table", TOKENIZER.replace("{corpus}", "{rte}/train.tsv"), 1, r"train.tsv line 2: a table's "
     r"row \(4 tab-separated columns, as from line 1: 'index', 'sentence1', 'sentence2', 'label'\), where plain text is "
     r"read; give its text column alone \(e.g. cut -f\d .*train.tsv, without line 1 if it names the columns\)", []),
    ("data-input-a-csv-copy", DATA + " --input {corpus} {corpus_csv}", 1, r"corpus_csv.txt line 2: a CSV row \('1,\"It "
     r"has a second sentence.\",0': its text a quoted field, or a label after it\), where plain text is read; give the text itself", []),
    ("data-input-subtitles-joined-after-the-text", DATA.replace("{tmp}/records", "{tmp}/records_joined") +
     " --input {corpus_then_subtitles}", 0, r"warning: .*corpus_then_subtitles.txt: 20 lines from line \d+ on "
     r"\('00:00:00,000 --> 00:00:01,000'\) are subtitle timings, read as text \(a file of another kind joined to this "
     r"one, or tables kept in the text\?\); give the text alone", []),
    ("data-input-a-yaml-list", DATA + " --input {corpus_yaml}", 1, r"corpus_yaml.txt line 2: a YAML item \(a key and its "
     r"quoted value\) \('- text: .*'\), where plain text is read; give the text itself", []),
    ("analyze-sentences-text-fasttext-lines", "albert_act.analyze sentences --init {run} --text {corpus_fasttext} "
     "--output_dir {tmp}/a_fasttext", 1, r"corpus_fasttext.txt line 2: a fastText line \(its text with its label\) "
     r"\('__label__1 .*'\), where plain text is read; give the text itself \(e.g. sed 's/ \*__label__\[\^ \]\* \*//g' "
     r".*corpus_fasttext.txt\)", []),
    ("tokenizer-input-a-csv-with-labels-after-the-text", TOKENIZER.replace("{corpus}", "{corpus_labelled_csv}"), 1,
     r"corpus_labelled.csv line 2: a CSV row \('.*,0': its text a quoted field, or a label after it\)", []),
    ("data-input-a-copy-labelled-and-paged", DATA + " --input {corpus} {corpus_relabelled}", 1,
     r"--input .*corpus_relabelled.txt: \d+ of its \d+ distinct sentences are also in .*corpus.txt \(the same words, "
     r"as they are read\): a copy, or a part of one", []),
    ("analyze-sentences-text-subtitles", "albert_act.analyze sentences --init {run} --text {subtitles} --output_dir "
     "{tmp}/a_srt", 1, r"subtitles.srt line 2: a subtitle file \(a timing line\) \('00:00:00,000 --> 00:00:01,000'\), "
     r"where plain text is read; give the text itself \(its sentences alone, a line each\)", []),
    ("analyze-parsed-bracketed-trees", "albert_act.analyze dependencies --init {run} --parsed {ptb_mrg} --output_dir "
     "{tmp}/a_mrg", 1, r"ptb.mrg line 2: a bracketed tree \('\( \(S', as Penn Treebank's .mrg\), which is not read: "
     r"give dependency trees, in CoNLL-U \(converted from them; `analyze --parsed` also reads .dp files\)", []),
    ("analyze-parsed-dp-heads-from-0", "albert_act.analyze dependencies --init {run} --parsed {ptb_dp_from_0} "
     "--output_dir {tmp}/a_dp0", 1, r"ptb_from_0.dp line 1: the word is its own HEAD \(\d+ such in the sentence\); "
     r"heads count words from 1, with 0 for the root \(counted from 0\? add 1 to each but the root's\)$", []),
    ("data-input-a-copy-with-piped-line-numbers", DATA + " --input {corpus_piped} {corpus}", 1,
     r"--input .*corpus.txt: 21 of its 21 distinct sentences are also in .*corpus_piped.txt", []),
    ("analyze-sentences-text-a-conllu-file", "albert_act.analyze sentences --init {run} --text {ud40} --output_dir "
     "{tmp}/a_conllu", 1, r"ud40.conllu line \d+: a parsed file's token line", []),
    ("probing-conllu-a-copy-with-misc-blanked", "pipelines.probing --conllu {ud40} {ud40_misc} --output_dir "
     "{tmp}/probing_misc", 1, r"--conllu .*ud40_misc.conllu: 41 of its 41 distinct sentences are also in .*ud40.conllu", []),
    ("probing-conllu-a-copy-whose-trees-are-merged-in-pairs-and-reheaded", "pipelines.probing --conllu {ud40} "
     "{ud40_merged} --output_dir {tmp}/probing_merged", 1,
     r"--conllu .*ud40_merged.conllu: 36 of its 40 distinct sentences are also in .*ud40.conllu", []),
    ("probing-conllu-forms-written-as-penn-treebank-tokens", "pipelines.probing --conllu {ud40_lrb} --output_dir "
     "{tmp}/p_lrb", 0, r"warning: \S*ud40_lrb.conllu: \d+ of its first 40 sentences hold Penn Treebank's tokens "
     r"\('(?:-LRB-|``)' on line \d+: brackets and quotes written as words\), read as words: detokenize first", []),
    ("analyze-dependencies-conllu-forms-holding-soft-hyphens", ANALYZE.replace("token-types", "dependencies").replace(
        "/a", "/a_shy") + " --parsed {ud40_shy}", 0, r"warning: \S*ud40_shy.conllu: \d+ of its first 40 sentences hold an invisible "
     r"character \(U\+00AD on line \d+: a soft hyphen", []),
    ("probing-conllu-a-blank-line-lost", "pipelines.probing --conllu {ud_run_on} --output_dir {tmp}/p_run_on", 1,
     r"ud_run_on.conllu line \d+: word ID '1' where \d+ comes next \(a new sentence without the blank line that ends "
     r"each one\)", []),
    ("probing-conllu-two-roots", "pipelines.probing --conllu {ud_2roots} --output_dir {tmp}/p_2roots", 1,
     r"ud_2roots.conllu line \d+: the sentence has 2 roots \(HEAD 0, lines \d+, \d+\); a dependency tree has one", []),
    ("analyze-parsed-a-cycle-without-root", ANALYZE.replace("token-types", "dependencies") + " --parsed {ud_cycle}", 1,
     r"ud_cycle.conllu line \d+: the sentence has 0 roots \(HEAD 0\); a dependency tree has one", []),
    ("analyze-parsed-a-copy-without-its-first-sentence", ANALYZE.replace("token-types", "dependencies") +
     " --parsed {ud40} {ud40_tail}", 1, r"--parsed .*ud40_tail.conllu: 40 of its 40 distinct sentences are also in "
     r".*ud40.conllu .*its sentences would count twice, and the intervals narrow", []),
    ("finetune-train-file-given-twice", FINETUNE.replace("{tmp}/ft", "{tmp}/ft_doubled") + " --task rte --data_dir "
     "{glue_doubled} --max_train_examples 16", 0,
     r"note: .*glue_doubled/train.tsv: 2,492 of its 4,980 rows repeat an earlier row \(the first at line 528\): each "
     r"counts once more in training", []),
    ("finetune-dev-rows-inside-train", FINETUNE + " --task rte --data_dir {glue_dev_in_train}", 1,
     r"glue_dev_in_train/dev.tsv: 277 of its 277 examples are also in .*glue_dev_in_train/train.tsv \(the same "
     r"sentences, as the model reads them\): dev numbers would measure the training data", []),
    ("finetune-train-is-dev", FINETUNE + " --task rte --data_dir {glue_train_is_dev}", 1,
     r"glue_train_is_dev/train.tsv is .*glue_train_is_dev/dev.tsv \(a link\): dev numbers would measure", []),
    ("analyze-held-out-on-training-records", "albert_act.analyze held-out --init {run} --records {train} "
     "--output_dir {tmp}/a_ho", 1, r"--records .*train-.*tfrecord is a training file of .*run", []),
    ("analyze-sentences-with-records", "albert_act.analyze sentences --init {run} --text {corpus} --records {eval} "
     "--output_dir {tmp}/a_sr", 1, r"the sentences analysis does not read --records \(it reads --text\)", []),
    ("analyze-token-types-keep-subtypes", ANALYZE + " --keep_subtypes --documents 9", 1,
     r"the token-types analysis does not read --documents, --keep_subtypes \(it reads --max_batches, --records\)", []),
    ("analyze-text-inside-the-output", "albert_act.analyze sentences --init {run} --text {earlier}/analysis/report.md "
     "--output_dir {earlier}/analysis --overwrite", 1, r"--text .*analysis/report.md lies inside --output_dir",
     ["{earlier}/analysis"]),
    ("analyze-documents-huge", "albert_act.analyze dependencies --init {run} --documents 1000000000", 1,
     r"--documents must be an integer in \[1, 100000\], got 1000000000", []),
    ("analyze-sentences-latin1", "albert_act.analyze sentences --init {run} --text {latin1_txt} --output_dir {tmp}/a_l1",
     1, r"latin1.txt line 1: not valid UTF-8 .*save the file as UTF-8 text", []),
    ("probing-conllu-plain-text", "pipelines.probing --conllu {corpus} --output_dir {tmp}/probing_out", 1,
     r"corpus.txt line 1: a sentence of plain text \('Document 0 starts here.'\), not a parsed file: this reads "
     r"CoNLL-U \(or .dp\) trees; plain sentences, one a line, are read by analyze sentences --text$", []),
    ("probing-conllu-no-match", "pipelines.probing --conllu {tmp}/nothing*.conllu --output_dir {tmp}/probing_out", 1,
     r"no file matches '.*nothing\*.conllu'", []),
    ("tokenizer-vocab-size-1", "pipelines.train_tokenizer --input {corpus} --output {tmp}/v --vocab_size 1", 1,
     r"--vocab_size must be an integer in \[5, 1000000\], got 1$", []),
    ("data-predictions-beyond-the-sequence", "pipelines.create_pretraining_data --input {corpus} --vocab {vocab} "
     "--output_dir {tmp}/d --max_seq_length 64 --max_predictions_per_seq 8192", 1,
     r"max_predictions_per_seq=8192 is more than a sequence of max_seq_length=64 can mask \(at most 62 pieces", []),
    ("probing-synthetic-negative", "pipelines.probing --synthetic_documents -5 --output_dir {tmp}/probing_out", 1,
     r"--synthetic_documents must be an integer in \[0, 1000000\], got -5", []),
    ("probing-synthetic-huge", "pipelines.probing --synthetic_documents 1000000000 --output_dir {tmp}/probing_out", 1,
     r"--synthetic_documents must be an integer in \[0, 1000000\], got 1000000000", []),
    ("export-newest-checkpoint-damaged", EXPORT.replace("{run}", "{damaged_index_run}").replace("e/1", "e_fallback/1"),
     0, DAMAGED_FALLBACK, ["{damaged_index_run}"]),
    ("bench-depth-probes-newest-checkpoint-damaged", "benchmarks.depth_probes a={damaged_index_run} --records {eval} "
     "--sentences {corpus} --output_dir {tmp}/dp_fallback", 1, r"damaged_index_run: its served depth would be of update 2 "
     r"\(its newest checkpoint that reads\) and its held-out row of update 3 \(evaluation.json\): the row would mix two "
     r"models", ["{damaged_index_run}"]),
    ("analyze-newest-checkpoint-damaged", ANALYZE.replace("{run}", "{damaged_index_run}").replace("/a", "/a_fallback"),
     0, DAMAGED_FALLBACK, ["{damaged_index_run}"]),
    ("export-every-checkpoint-truncated", EXPORT.replace("{run}", "{truncated_run}"), 1, ALL_TRUNCATED,
     ["{truncated_run}"]),
    ("analyze-every-checkpoint-truncated", ANALYZE.replace("{run}", "{truncated_run}"), 1, ALL_TRUNCATED,
     ["{truncated_run}"]),
    ("finetune-every-checkpoint-truncated", FINETUNE.replace("{run}", "{truncated_run}") + " --task rte --data_dir {rte}",
     1, ALL_TRUNCATED, ["{truncated_run}"]),
    ("pretrain-resume-every-checkpoint-truncated", PRETRAIN.replace("{tmp}/new_run", "{truncated_run}").replace(
        "--steps 2", "--steps 3 --warmup_steps 0 --learning_rate 1.76e-3"), 1,
     r"no intact checkpoint in .*truncated_run/checkpoints: .*ckpt-3: unreadable", ["{truncated_run}"]),
    ("export-damaged-export", EXPORT.replace("{run}", "{damaged_export}"), 1, DAMAGED_EXPORT, ["{damaged_export}"]),
    ("finetune-damaged-export", FINETUNE.replace("{run}", "{damaged_export}") + " --task rte --data_dir {rte}", 1,
     DAMAGED_EXPORT, ["{damaged_export}"]),
    ("analyze-damaged-export", ANALYZE.replace("{run}", "{damaged_export}"), 1, DAMAGED_EXPORT, ["{damaged_export}"]),
    # --- --config and --set, the stop message, content ------------------------------------------------
    ("pretrain-config-missing-file", "albert_act.pretrain --config {tmp}/nowhere.json --model_dir {tmp}/c1", 1,
     r"error: --config .*nowhere.json: no such file", []),
    ("export-config-missing-file", "albert_act.export --config {tmp}/nowhere.json --output {tmp}/c2/1", 1,
     r"error: --config .*nowhere.json: no such file", []),
    ("pretrain-config-null-seed", PRETRAIN + " --config {configs}/seed_null.json", 1,
     r"--config .*seed_null.json line 1: seed must be an integer in \[0, 4294967295\] .*, got null \(leave it out "
     r"for its default, 12345\)", ["{configs}"]),
    ("pretrain-config-partial-with-a-string", PRETRAIN + " --config {configs}/steps_string.json", 1,
     r"--config .*steps_string.json line 1: seed must be an integer in \[0, 4294967295\] .*, got \"7\", a string: "
     r"write the number without quotes", ["{configs}"]),
    ("pretrain-config-overrides-a-list", PRETRAIN + " --config {configs}/overrides_list.json", 1,
     r"--config .*overrides_list.json line 1: backbone_overrides must be a JSON object of key: value pairs, got \[1, 2\]",
     []),
    ("pretrain-set-overrides-not-an-object", "albert_act.pretrain --model_dir {tmp}/c3 --set backbone_overrides=5", 2,
     r"--set backbone_overrides must be a JSON object of key: value pairs \(e.g. --override KEY=VALUE\), got 5", []),
    ("pretrain-set-and-its-flag", PRETRAIN + " --set steps=3", 2,
     r"steps is given twice, as --steps 2 and as --set steps=3: give one", []),
    ("pretrain-set-and-its-flag-at-its-default", "albert_act.pretrain --model_dir {tmp}/c4 --preset demo --set "
     "preset=tiny", 2, r"preset is given twice, as --preset demo and as --set preset=\"tiny\": give one", []),
    ("pretrain-override-and-set-overrides", PRETRAIN + ' --set backbone_overrides={{"dropout":0.1}}', 2,
     r'backbone_overrides is given twice, as --override .* and as --set backbone_overrides=\{"dropout": 0.1\}: give one',
     []),
    ("pretrain-no-export-set-export-dir", PRETRAIN + " --set export_dir={tmp}/c4/1", 1,
     r"--no_export and --export_dir .*c4/1 contradict each other: give one", []),
    ("pretrain-config-of-a-copied-run", "albert_act.pretrain --config {copied_run}/config.json", 1,
     r"--config .*copied_run/config.json lies in the run .*copied_run but names model_dir .*/run, which this would "
     r"resume: pass --model_dir .*copied_run to go on with this one, or --model_dir NEW", ["{copied_run}", "{run}"]),
    ("pretrain-config-backbone-edited", "albert_act.pretrain --config {configs}/backbone_edited.json --model_dir "
     "{tmp}/c5", 1, r"--config .*backbone_edited.json line 1: backbone.hidden_dim is 48 there, but the preset 'demo' with its "
     r"backbone_overrides gives \d+ now \(the file was edited, or the preset changed since\): \"backbone\" is "
     r"derived, not read; to have that value, pass --override hidden_dim=48", []),
    ("export-config-of-an-export-pretrain-wrote", "albert_act.export --config {export}/assets/albert_act_export.json "
     "--output {tmp}/c6/1", 1, r"--config .*albert_act_export.json: an export written by pretrain at the end of a run "
     r"records that run's settings, not an export's; write it again with python -m albert_act.export --checkpoint",
     ["{export}"]),
    ("pretrain-records-of-another-vocabulary-without-stats", PRETRAIN.replace("{train}", "{nostats}/train.tfrecord")
     .replace("{eval}", "{nostats}/eval.tfrecord") + " --vocab {wiki400}", 1,
     r"nostats/train.tfrecord: made with another vocabulary than .*wiki400.model: \d+ of \d+ word starts in its first "
     r"records differ", ["{nostats}"]),
    ("analyze-sentences-truncated-export", "albert_act.analyze sentences --init {truncated_export} --text {corpus} "
     "--output_dir {tmp}/a_te", 1, r"truncated_export/1/variables/variables.data-00000-of-00001 \(the export's "
     r"weights\): damaged export, not readable", ["{truncated_export}"]),
    ("export-classifier-json-edited-labels", "albert_act.export --checkpoint {edited_labels} --kind classifier "
     "--output {tmp}/c7/1", 1, r"edited_labels/classifier.json: 3 labels \(entailment, not_entailment, maybe\) for a "
     r"model with 2 outputs \(num_classes\); was the file edited\?", ["{edited_labels}"]),
    ("export-classifier-json-edited-length", "albert_act.export --checkpoint {edited_length} --kind classifier "
     "--output {tmp}/c8/1", 1, r"edited_length/classifier.json: max_seq_length 512 exceeds the model's 64 "
     r"\(max_sequence_length\); was the file edited\?", ["{edited_length}"]),
    ("data-sequences-too-short-to-mask", DATA.replace("{tmp}/records", "{tmp}/records_short") +
     " --input {corpus} --max_seq_length 5", 0, r"warning: [\d.]+% of the maskable pieces are masked against "
     r"--masked_lm_prob 0.2: that share of a sequence's 2 maskable pieces is less than one piece, and each sequence "
     r"masks at least one; give a larger --masked_lm_prob or a longer --max_seq_length", ["{corpus}"]),
    ("data-masking-rate-below-one-piece", DATA.replace("{tmp}/records", "{tmp}/records_rare") +
     " --input {corpus} --masked_lm_prob 1e-320", 0, r"masked against --masked_lm_prob 1e-320: that share of a "
     r"sequence's \d+ maskable pieces is less than one piece", ["{corpus}"]),
    # --- depth against difficulty: the reference model -------------------------------------------------
    ("analyze-difficulty-without-reference", ANALYZE.replace("token-types", "difficulty"), 1,
     r"the difficulty mode needs --reference MODEL", []),
    ("analyze-reference-to-another-mode", ANALYZE + " --reference {export}", 1,
     r"the token-types analysis does not read --reference", []),
    ("analyze-reference-of-another-vocabulary", ANALYZE.replace("token-types", "difficulty") +
     " --reference {other_vocab_reference}", 1, r"--reference .*other_vocab_reference has another vocabulary than the "
     "model analysed", ["{other_vocab_reference}", "{run}"]),
    ("analyze-reference-nowhere", ANALYZE.replace("token-types", "difficulty") + " --reference {tmp}/nowhere", 1,
     r"--reference .*nowhere: no such run dir or export", []),
    ("pretrain-init-from-damaged-export", PRETRAIN.replace("new_run", "warm_run") + " --init_from {damaged_export}", 1,
     DAMAGED_EXPORT, ["{damaged_export}", "{tmp}/warm_run"]),
    # --- --config once and exactly; halting settings where they mean nothing -------------------------------
    ("pretrain-config-twice", PRETRAIN + " --config {configs}/steps_string.json --config {configs}/overrides_list.json",
     1, r"--config is given 2 times \(.*steps_string.json, .*overrides_list.json\): give one file", ["{configs}"]),
    ("pretrain-config-duplicate-key", PRETRAIN + " --config {configs}/duplicate_key.json", 1,
     r"duplicate_key.json line 3: 'seed' is given twice in one object", ["{configs}"]),
    ("pretrain-config-with-a-byte-order-mark", PRETRAIN.replace("new_run", "bom_run") + " --config {configs}/bom.json",
     0, r"held-out evaluation after 2 updates", ["{configs}"]),
    ("pretrain-halting-none-per-iteration", PRETRAIN + " --halting none --mlm_objective per_iteration", 1,
     r"--mlm_objective: --halting none runs every token to N_max, so there is no ponder cost to weigh or steer", []),
    ("pretrain-signed-control-auto-tau", PRETRAIN + " --target_control signed --target_iterations 2 --tau auto", 1,
     r"--target_control signed steers tau.*give --target_iterations and a number for --tau \(e.g. 0\), not 'auto'", []),
    ("pretrain-log-space-target-from-a-tau-below-its-floor", PRETRAIN + " --target_iterations 2 --tau 1.2e-38", 1,
     r"--tau 1.2e-38 with --target_iterations: --target_control tau moves tau in log space from its start, which "
     r"1.2e-38 puts at the floor 1e-07 ", []),  # (round 46 B84: trained at the floor)
    ("pretrain-log-space-target-from-tau-0", PRETRAIN + " --target_iterations 2 --tau 0", 1,
     r"--tau 0 with --target_iterations: --target_control tau moves tau in log space from its start, which 0 puts at "
     r"the floor 1e-07 .*or --target_control signed, whose tau may start at 0$", []),
    ("finetune-halting-none-with-tau", FINETUNE + " --task rte --data_dir {rte} --halting none --tau 0.5", 1,
     r"--tau 0.5 weighs the ponder cost of ACT halting; --halting none runs every token to N_max", []),
    ("pretrain-kl-without-target", PRETRAIN + " --kl_weight 0.1", 1,
     r"kl_weight 0.1 pulls each token's halting distribution toward a geometric prior.*give --target_iterations", []),
]
EMPTY_PATH = r"{flag} must be a path, got '': an empty path names no file \(the current folder is '.'\)"
CASES += [
    # --- paths mean what was typed: an empty one, the current folder ----------------------------------------
    *[(f"{command.split()[0].split('.')[1]}-{flag}-empty", command.replace(f"--{flag} {given}", f"--{flag} ''")
       if given else f"{command} --{flag} ''", 1, EMPTY_PATH.format(flag=f"--{flag}"), [])
      for command, flag, given in (  # given: the flag's value in the command, replaced by ''
          (PRETRAIN, "model_dir", "{tmp}/new_run"), (PRETRAIN, "vocab", None), (PRETRAIN, "train_files", "{train}"),
          (PRETRAIN, "init_from", None), (PRETRAIN, "config", None),
          ("albert_act.pretrain --model_dir {tmp}/demo_empty", "demo_data_dir", None),
          (FINETUNE + " --task rte --data_dir {rte}", "init", "{run}"), (FINETUNE + " --task rte", "data_dir", None),
          (FINETUNE + " --task rte --data_dir {rte}", "vocab", None), (EXPORT, "output", "{tmp}/e/1"),
          (EXPORT, "checkpoint", "{run}"), (ANALYZE, "output_dir", "{tmp}/a"), (ANALYZE, "records", None),
          (DATA + " --input {corpus}", "vocab", "{vocab}"), (DATA, "input", None),
          (SUBMIT, "data_dir", "{glue}"), (TOKENIZER, "output", "{tmp}/v"))],
    ("pretrain-config-model-dir-empty", "albert_act.pretrain --config {configs}/empty_model_dir.json", 1,
     r"--config .*empty_model_dir.json line 3: model_dir must be a path, got ''", ["{configs}"]),
    ("export-config-a-copied-export-record", "albert_act.export --config {configs}/copied_export_record.json "
     "--output {tmp}/c9/1", 1, r"--config .*copied_export_record.json: an export's record, whose paths "
     r"\(\{\"checkpoint\": \"../../gone_run\", \"output\": \".\"\}\) are relative to the export it was written in; this "
     r"file lies outside that export's assets/ folder", ["{configs}"]),
    ("export-config-path-resolved-against-the-export", "albert_act.export --config "
     "{tmp}/moved_export/1/assets/albert_act_export.json --output {tmp}/c10/1", 1,
     r"error: \S*/gone_run: no such file or folder .*\(checkpoint comes from --config .*moved_export/1/assets/"
     r"albert_act_export.json, where it is \"../../gone_run\", relative to the export the file lies in\)$",
     ["{tmp}/moved_export"]),
    # --- --config: each command takes its own file, and says which; the effective value and its source ------
    ("export-config-a-runs-config", "albert_act.export --config {run}/config.json --output {tmp}/c11/1", 1,
     r"--config .*run/config.json: not settings of an export: \w+(, \w+){4} and \d+ more; this command's --config "
     r"takes an export's assets/albert_act_export.json", ["{run}"]),
    ("pretrain-config-a-finetune-config", "albert_act.pretrain --config {configs}/finetune_config.json", 1,
     r"--config .*finetune_config.json: not settings of a pre-training run: data_dir, epochs, init, output_dir, task; "
     r"this command's --config takes a pre-training run's config.json", ["{configs}"]),
    ("finetune-config-a-runs-config", FINETUNE + " --task rte --data_dir {rte} --config {run}/config.json", 1,
     r"this command's --config takes a fine-tuning dir's finetune_config.json", ["{run}"]),
    ("pretrain-target-above-the-overridden-n-max", PRETRAIN + " --target_iterations 5", 1,
     r"target_iterations must be a number in \[1, max_iterations=3\], got 5.0 \(N_max = 3: --override "
     r"max_iterations=3 \(backbone_overrides\)\)", []),
    ("pretrain-target-above-the-presets-n-max", "albert_act.pretrain --model_dir {tmp}/c12 --target_iterations 9", 1,
     r"got 9.0 \(N_max = 6: the demo preset's\)", []),
    # --- two runs given one new --export_dir: the one that finishes second names the other, keeps its export ---
    ("pretrain-export-written-by-another-run-meanwhile", PRETRAIN.replace(" --no_export", " --export_dir "
     "{tmp}/race/1 --vocab {vocab}").replace("new_run", "race_run"), 1,
     r"--export_dir .*race/1 was written by another run \(.*/run, per .*race/1/assets/albert_act_export.json\) while "
     r"this one trained, and is left as it is; this run's weights are in its checkpoints: export them with python -m "
     r"albert_act.export --checkpoint .*race_run --kind pretraining --output <another dir>. The run itself is "
     r"finished: its held-out evaluation is in \S+race_run/evaluation.json", []),
    ("pretrain-export-being-written-by-another-run", PRETRAIN.replace(" --no_export", " --export_dir "
     "{tmp}/race2/1 --vocab {vocab}").replace("new_run", "race_run2"), 1,
     r"--export_dir .*race2/1 is in use by another run's export \(pid \d+.*; this run's weights are in its "
     r"checkpoints: export them with python -m albert_act.export --checkpoint .*race_run2",
     []),
    ("analyze-difficulty-against-itself", ANALYZE.replace("token-types", "difficulty").replace("/a", "/a_itself") +
     " --reference {export} --max_batches 1", 0, r"warning: --reference .*export/1 holds the same weights as the model "
     r"analysed: its surprisal is the model's own.*warning: --reference \S+export/1: The reference is at chance: its "
     r"mean surprisal, 5.\d\d nats, is that of a uniform guess over its 400 pieces \(ln 400 = 5.99\)",
     ["{run}", "{export}"]),
    *[(f"huggingface-export-{flag}", EXPORT + f" --format huggingface --{flag} {value}", 1,
       rf"--{flag} {value}: --format huggingface writes the weights, config and vocabulary, with no serving graph", [])
      for flag, value in (("execution", "static"), ("max_seq_length", "32"), ("top_k", "3"))],
    # --- an export's weight index lost or cut short is named as itself, not as the data it indexes -------------
    *[(f"{command.split()[0].split('.')[1]}-{damage}-index-export", command.replace("{run}", f"{{{damage}_index_export}}")
       .replace("{tmp}/new_run", "{tmp}/index_run") + extra, 1,
       rf"{damage}_index_export/1/variables/variables.index \(the export's weight index\): damaged export, "
       rf"{state} \(", [f"{{{damage}_index_export}}"])
      for command, damage, state, extra in (
          (EXPORT, "no", "missing", ""), (EXPORT, "cut", "not readable", ""), (ANALYZE, "cut", "not readable", ""),
          (FINETUNE + " --task rte --data_dir {rte}", "no", "missing", ""),
          (PRETRAIN, "cut", "not readable", " --init_from {cut_index_export}"))],
    # --- a damaged side file never skips a check: the records are checked by their content, and it is named ------
    ("pretrain-records-of-another-vocabulary-with-damaged-stats", PRETRAIN.replace("{train}", "{damaged_stats}/train"
     ".tfrecord").replace("{eval}", "{damaged_stats}/eval.tfrecord") + " --vocab {wiki400}", 1,
     r"warning: .*damaged_stats/stats.json is damaged \(.*\), so it does not say which vocabulary the records were "
     r"made with; they are checked by their content instead\n.*damaged_stats/train.tfrecord: made with another "
     r"vocabulary than .*wiki400.model: \d+ of \d+ word starts", ["{damaged_stats}"]),
    ("pretrain-records-without-their-report-on-a-larger-vocabulary", PRETRAIN.replace("{train}", "{nostats}/train"
     ".tfrecord").replace("{eval}", "{nostats}/eval.tfrecord").replace("new_run", "larger_vocab_run") +
     " --override vocabulary_size=800", 0, r"note: .*nostats/train.tfrecord: no data tool report \(stats.json\) beside "
     r"it and no --vocab, so its vocabulary is unknown; its ids reach 399 \(of \d+ records\), where the model's "
     r"vocabulary_size is 800: made with a smaller vocabulary\?", ["{nostats}"]),
    ("pretrain-damaged-stats-of-the-right-vocabulary", PRETRAIN.replace("{train}", "{damaged_stats2}/train.tfrecord")
     .replace("{eval}", "{damaged_stats2}/eval.tfrecord").replace("new_run", "stats_run") + " --vocab {vocab}", 0,
     r"warning: .*damaged_stats2/stats.json is damaged .*held-out evaluation after 2 updates", ["{damaged_stats2}"]),
    ("analyze-held-out-on-training-records-of-a-moved-export", "albert_act.analyze held-out --init {moved_export} "
     "--records {train} --output_dir {tmp}/a_moved", 1, r"--records .*train-.*tfrecord is a training file of "
     r".*moved/a/b/1 \(its content is that of one of the 2 training shards whose fingerprints the model carries\)",
     ["{moved_export}"]),
    ("pretrain-set-model-dir-empty", "albert_act.pretrain --set model_dir=", 1,
     EMPTY_PATH.format(flag="--set model_dir"), []),
    ("data-input-one-of-two-empty", DATA + " --input {corpus} ''", 1, EMPTY_PATH.format(flag="--input"), []),
    # an output that is the folder one is in, or holds it (run from {tmp}/here/inner: FOLDER below)
    ("export-output-the-current-folder", EXPORT.replace("{tmp}/e/1", "."), 1,
     r"--output \. is the current folder \(.*here/inner\); give a new folder", ["{tmp}/here"]),
    ("export-output-holds-the-current-folder", EXPORT.replace("{tmp}/e/1", ".."), 1,
     r"--output \.\. holds the current folder \(.*here/inner lies inside .*here\)", ["{tmp}/here"]),
    ("analyze-output-the-current-folder", ANALYZE.replace("{tmp}/a", "."), 1,
     r"--output_dir \. is the current folder", ["{tmp}/here"]),
    ("pretrain-model-dir-holds-the-current-folder", PRETRAIN.replace("{tmp}/new_run", "{tmp}/here"), 1,
     r"--model_dir .*here holds the current folder", ["{tmp}/here"]),
    ("data-output-the-current-folder", DATA.replace("{tmp}/records", ".") + " --input {corpus}", 1,
     r"--output_dir \. is the current folder", ["{tmp}/here"]),
    ("finetune-output-the-current-folder", FINETUNE.replace("{tmp}/ft", ".") + " --task rte --data_dir {rte}", 1,
     r"--output_dir \. is the current folder", ["{tmp}/here"]),
]
def _export_meanwhile(names):
    """Another run's export copied to the --export_dir after this run's preflight (as it ends training); it
    must be left whole."""
    shutil.copytree(names["export"], Path(names["tmp"]) / "race" / "1")
    _LEFT_WHOLE.append((Path(names["tmp"]) / "race" / "1", _snapshot(Path(names["export"]))))


def _export_being_written(names):
    """Another process holds the --export_dir (writing its export) as this run ends training."""
    _MEANWHILE_LOCKS.append(outputs.DirectoryLock(Path(names["tmp"]) / "race2" / "1", "test").acquire())


_MEANWHILE_LOCKS, _LEFT_WHOLE = [], []  # what MEANWHILE's functions hold, and what they wrote: (path, snapshot)
# What happens while a case's run trains (after its checks, before its evaluation): {case id: function(places)}.
# --- the benchmarks: flags, paths and output dirs checked before any model loads ------------------------------
CASES += [
    ("bench-adaptive-inference-no-runs", "benchmarks.adaptive_inference --runs 0", 1,
     r"--runs must be an integer in \[1, 1000\], got 0", []),
    ("bench-adaptive-inference-an-export", "benchmarks.adaptive_inference --checkpoint {export}", 1,
     r"--checkpoint .*export/1 is not a pre-training run dir \(found: export\)", []),
    ("bench-adaptive-inference-a-bad-length", "benchmarks.adaptive_inference --lengths 128 1", 1,
     r"--lengths must be an integer in \[2, 4096\], got 1", []),
    ("bench-parity-check-on-tensorflow", "benchmarks.backend_parity --check {notes_dir}", 1,
     r"--check compares Keras's JAX backend with the reference, and Keras runs on tensorflow here: run it as "
     r"KERAS_BACKEND=jax", []),
    ("bench-parity-write-over-notes", "benchmarks.backend_parity --write {notes_dir}", 1,
     r"--write .*notes_dir holds other files \(notes.txt\)", ["{notes_dir}/notes.txt"]),
    ("bench-cost-model-share-nan", "benchmarks.cost_model --share nan", 1,
     r"--share must be a number in \(0, 1\], got nan", []),
    ("bench-model-speed-no-batch", "benchmarks.model_speed --batch-size 0", 1,
     r"--batch-size must be an integer in \[1, 65536\], got 0", []),
    ("bench-replica-input-uneven-batch", "benchmarks.replica_input --batch 10 --replicas 3", 1,
     r"--batch 10 must be a multiple of --replicas 3", []),
    ("bench-replica-input-predictions-past-length", "benchmarks.replica_input --length 16 --predictions 20", 1,
     r"--predictions 20 must be at most --length 16", []),
    ("bench-data-throughput-no-vocab", "benchmarks.data_throughput --input {corpus} --vocab {tmp}/nope.model", 1,
     r"--vocab .*nope.model: no such file", []),
    ("bench-pretrain-speed-no-length", "benchmarks.pretrain_speed --lengths 0", 1,
     r"--lengths must be an integer in \[2, 4096\], got 0", []),
    ("bench-update-profile-no-runs", "benchmarks.update_profile --runs 0", 1,
     r"--runs must be an integer in \[1, 1000\], got 0", []),
    ("bench-learning-curves-remote-output", "benchmarks.learning_curves ACT={run} --output_dir gs://a-bucket/curves", 1,
     r"--output_dir gs://a-bucket/curves is remote: this command writes its output whole beside it and renames it "
     r"into place, which needs a local folder; write it to a local folder, then copy it \(gsutil cp -r\)", []),
    ("probing-remote-output", "pipelines.probing --conllu {ud40} --output_dir gs://a-bucket/probing", 1,
     r"--output_dir gs://a-bucket/probing is remote: .*needs a local folder", []),
    ("data-input-a-scheme-tensorflow-lacks", DATA + " --input hdfs://namenode/corpus.txt", 1,
     r"hdfs://namenode/corpus.txt cannot be listed: File system scheme 'hdfs' not implemented", []),
    ("bench-learning-curves-over-notes", "benchmarks.learning_curves ACT={run} --output_dir {notes_dir}", 1,
     r"notes_dir holds other files \(notes.txt\)", ["{notes_dir}/notes.txt"]),
    ("bench-glue-small-model-without-name", "benchmarks.glue_small --models {export} --tasks rte --glue {glue}", 1,
     r"give NAME=VALUE, a name and a model", []),
    ("bench-glue-small-name-twice", "benchmarks.glue_small --models A={export} A={run} --tasks rte --glue {glue}",
     1, r"the name 'A' is given twice", []),
    ("bench-glue-small-a-task-folder", "benchmarks.glue_small --models A={export} --tasks rte --glue {rte}", 1,
     r"--glue .*RTE holds no RTE folder \(the glue_data folder has one per task\)", []),
    ("bench-glue-small-over-notes", "benchmarks.glue_small --models A={export} --tasks rte --glue {glue} "
     "--output_dir {notes_dir}", 1, r"notes_dir holds other files \(notes.txt\)", ["{notes_dir}/notes.txt"]),
    ("bench-glue-small-no-epochs", "benchmarks.glue_small --models A={export} --epochs 0", 1,
     r"--epochs must be an integer in \[1, 1000\], got 0", []),
    ("bench-pretrain-speed-child-by-hand", "benchmarks.pretrain_speed --child --preset demo --lengths 16 --runs 1", 2,
     r"--child is how the benchmark starts its own measuring processes .*: run it without --child", []),
    ("bench-update-profile-child-by-hand", "benchmarks.update_profile --child --preset demo --runs 1", 2,
     r"--child is how the benchmark starts its own profiling processes .*: run it without --child", []),
    ("bench-update-profile-child-flag-alone", "benchmarks.update_profile --depth 1/6 --preset demo --runs 1", 2,
     r"--depth belongs to the benchmark's own profiling processes: choose executions and depths with --executions "
     r"and --depths", []),
    ("bench-paper-small-over-notes", "benchmarks.paper_small --glue {glue} --output_dir {notes_dir}", 1,
     r"notes_dir holds other files \(notes.txt\); the benchmark writes its runs and results there",
     ["{notes_dir}/notes.txt"]),
    ("bench-paper-small-a-task-folder", "benchmarks.paper_small --glue {rte} --output_dir {tmp}/ps", 1,
     r"--glue .*RTE holds no RTE, SST-2 folder", []),
    ("bench-probing-small-over-notes", "benchmarks.probing_small --init {export} --output_dir {notes_dir}", 1,
     r"notes_dir holds other files \(notes.txt\)", ["{notes_dir}/notes.txt"]),
    ("bench-probing-small-ud-a-file", "benchmarks.probing_small --init {export} --ud {notes_dir}/notes.txt "
     "--output_dir {tmp}/pr", 1, r"--ud \S*notes.txt is a file: give the folder holding en_ewt-ud-train.conllu", []),
    ("bench-probing-small-no-model", "benchmarks.probing_small --init {notes_dir} --output_dir {tmp}/pr", 1,
     r"notes_dir: not a pre-training run dir", []),
    ("bench-served-fill-mask-over-notes", "benchmarks.served_fill_mask --init {export} --output_dir {notes_dir}", 1,
     r"notes_dir holds other files \(notes.txt\)", ["{notes_dir}/notes.txt"]),
    ("bench-served-fill-mask-one-sentence-repeated", "benchmarks.served_fill_mask --init {export} --conllu "
     "{repeated_conllu} --sentences 20", 0, r"warning: --conllu \S+repeated.conllu: \d+ of the 20 sentences asked repeat "
     r"one asked before them: each is served and counted again", []),  # (round 46 A101: intervals over 50 copies)
    ("bench-served-fill-mask-not-conllu", "benchmarks.served_fill_mask --init {export} --conllu {corpus}", 1,
     r"corpus.txt line 1: a sentence of plain text \('Document 0 starts here.'\), not a parsed file", []),
    ("bench-warm-start-bias-nan", "benchmarks.warm_start --biases 0 nan", 1,
     r"--biases must be a number in \[-3.4028e\+38, 3.4028e\+38\] .*, got nan", []),
    ("bench-warm-start-bias-twice", "benchmarks.warm_start --biases 1 0 1.0", 1,
     r"--biases gives 1.0 twice: each value is measured once; give it once", []),
    ("bench-pretrain-speed-pattern-twice", "benchmarks.pretrain_speed --patterns tail uniform tail", 2,
     r"--patterns gives tail twice: each value is measured once; give it once", []),
    ("bench-data-throughput-a-folder", "benchmarks.data_throughput --input {notes_dir}", 1,
     r"--input .*notes_dir is a folder: give a text file", []),
    ("bench-data-throughput-vocab-and-its-size", "benchmarks.data_throughput --input {corpus} --vocab {vocab} "
     "--vocab_size 1000", 1, r"--vocab_size 1000 sizes the vocabulary trained without --vocab: give one or the other",
     []),
    ("bench-served-fill-mask-cut-index-export", "benchmarks.served_fill_mask --init {cut_index_export} --sentences 2",
     1, r"cut_index_export/1/variables/variables.index \(the export's weight index\): damaged export", []),
    ("finetune-negative-exponent", FINETUNE.replace("--epochs 1", "--epochs 1 --halting_bias -1e39") +
     " --task rte --data_dir {rte}", 1, r"--halting_bias must be a number in \[-3.4028e\+38, 3.4028e\+38\] .*, got -1e\+39", []),
    ("pretrain-tau-minus-infinity", "albert_act.pretrain --model_dir {tmp}/tau_minf --tau -inf", 1,
     r"\(--tau\) must be a number in \[0, 3.4028e\+38\] .* or 'auto', got -inf", []),
    ("pretrain-learning-rate-zero-in-float32", PRETRAIN + " --learning_rate 1e-40", 1,
     r"--learning_rate must be a learning rate in \[1e-08, 10\] \(a smaller one's steps are rounded away in "
     r"float32 weights; a larger one throws them far in one step\), got 1e-40", []),
    ("bench-glue-small-learning-rate-zero-in-float32", "benchmarks.glue_small --models A={export} --learning_rate 1e-46",
     1, r"--learning_rate must be a learning rate in \[1e-08, 10\] .*, got 1e-46", []),
    ("bench-warm-start-over-notes", "benchmarks.warm_start --output_dir {notes_dir}", 1,
     r"notes_dir holds other files \(notes.txt\); the benchmark writes its runs and results there",
     ["{notes_dir}/notes.txt"]),
    # --- round eleven: a rate whose steps float32 rounds away, and the bounds of float32 named in the message ---
    ("pretrain-learning-rate-steps-rounded-away", PRETRAIN + " --learning_rate 1.2e-38", 1,
     r"--learning_rate must be a learning rate in \[1e-08, 10\] \(a smaller one's steps are rounded away "
     r"in float32 weights; a larger one throws them far in one step\), got 1.2e-38", []),
    ("finetune-learning-rate-steps-rounded-away", FINETUNE + " --task rte --data_dir {rte} --learning_rate 1.2e-38", 1,
     r"--learning_rate must be a learning rate in \[1e-08, .*, got 1.2e-38", []),
    ("pretrain-halting-rate-steps-rounded-away", PRETRAIN + " --learning_rate 1e-3 --halting_learning_rate_scale 1.2e-38",
     1, r"halting_learning_rate_scale 1.2e-38 gives the halting unit a learning rate of 1.2e-41 \(x learning_rate "
     r"0.001\): it must be a learning rate in \[1e-08, ", []),
    ("pretrain-clip-norm-below-float32s-smallest", PRETRAIN + " --clip_norm 1e-40", 1,  # (round 46 B06: "give 0")
     r"--clip_norm must be a number in \[1.1755e-38, .*\), got 1e-40 \(0 in float32, where the model computes\)$", []),
    ("pretrain-override-dropout-1-in-float32", PRETRAIN + " --override dropout=0.99999999999", 1,  # (B07: trained)
     r"dropout must be a number in \[0, 1\), got 0.99999999999 \(1.0 in float32, where the model computes\)", []),
    ("pretrain-override-halting-bias-beyond-float32", PRETRAIN + " --override halting_bias_initializer=1e39", 1,
     r"halting_bias_initializer must be a number in \[-3.4028e\+38, 3.4028e\+38\] .*got 1e\+39", []),  # (B08)
    ("pretrain-config-halting-bias-beyond-float32", PRETRAIN + " --config {configs}/huge_bias.json", 1,
     r"halting_bias_initializer must be a number in \[-3.4028e\+38, 3.4028e\+38\] .*got 1e\+39", []),  # (B24)
    ("pretrain-set-seed-false", PRETRAIN + " --set seed=false", 1,  # (B19: "got false, true or false")
     r"seed must be an integer in \[0, 4294967295\] .*, got false, a boolean \(true or false\), not a number", []),
    ("pretrain-config-overwrite-export-set-aside", PRETRAIN + " --config {configs}/overwrite_yes.json --steps 0", 1,
     r"note: --config \S+overwrite_yes.json: its overwrite_export \(\"yes\"\) is not read \(a run's file replayed would "
     r"replace an export unasked\): pass --overwrite to replace one", []),  # (round 47 B105, B109: without a word)
    ("pretrain-config-null", PRETRAIN + " --config {configs}/null.json", 1,  # (round 47 B02: 'a JSON NoneType')
     r"null.json: a JSON null where an object \(\{...\}\) was expected", []),
    ("pretrain-config-tau-a-string", PRETRAIN + " --config {configs}/tau_string.json", 1,  # (B23: in range, as text)
     r"ponder_cost_weight \(--tau\) must be .* or 'auto', got \"0.1\", a string: write the number without quotes", []),
    ("pretrain-clip-norm-beyond-float32", PRETRAIN + " --clip_norm 3.5e38", 1,
     r"--clip_norm must be a number in \[1.1755e-38, 3.4028e\+38\] \(> 0 and finite in float32, as the model "
     r"computes\), got 3.5e\+38", []),
    ("bench-cost-model-a-share-below-one-iteration", "benchmarks.cost_model --share 0.01 --no-check", 0,
     r"running tokens only, share 0.167 \(not 0.01: 1 iteration at least\)", []),
    ("bench-cost-model-utilization-no-forecast", "benchmarks.cost_model --utilization 1e-46 --no-check", 1,
     r"--utilization must be a number in \[0.001, 1\], got 1e-46", []),
    ("bench-data-throughput-invalid-utf8", "benchmarks.data_throughput --input {bad_utf8} --vocab {vocab}", 1,
     r"--input .*bad_utf8.txt line 2: not valid UTF-8 .*; save the file as UTF-8 text", []),
    ("bench-data-throughput-too-little-text", "benchmarks.data_throughput --input {one_line_txt} --vocab {vocab}", 1,
     r"--input .*one_line.txt: too little text to measure: .*1 training instances, fewer than the data tool's 8 "
     r"shards; give more sentences \(one per line, a blank line between documents\)", []),
    ("bench-cost-model-checks-on-jax", "KERAS_BACKEND=jax benchmarks.cost_model", 1,
     r"the checks trace the model with TensorFlow, and KERAS_BACKEND is jax here: .*pass --no-check", []),
    ("bench-served-fill-mask-negative-seed", "benchmarks.served_fill_mask --init {export} --seed -1", 1,
     r"--seed must be an integer in \[0, 4294967295\] \(a seed of NumPy's and Keras's generators\), got -1", []),
    ("pretrain-config-fixed-depth-with-target-pieces", "albert_act.pretrain --config {fixed_depth_pieces_json} "
     "--model_dir {tmp}/fixed_pieces", 1, r"target_pieces unmasked steers the ponder cost of ACT halting; --halting "
     r"none runs every token to N_max \(drop it\)", []),
    # --- round twelve: seeds beyond NumPy's, inputs that are no regular file ---
    ("pretrain-seed-beyond-numpy", PRETRAIN + " --seed 4294967296", 1,
     r"--seed must be an integer in \[0, 4294967295\] \(a seed of NumPy's and Keras's generators\), got 4294967296", []),
    ("bench-glue-small-seed-beyond-numpy", "benchmarks.glue_small --models A={export} --seed 9223372036854775808", 1,
     r"--seed must be an integer in \[0, 4294967295\] .*, got 9223372036854775808", []),
    ("bench-data-throughput-a-device", "benchmarks.data_throughput --input /dev/null --vocab {vocab}", 1,
     r"--input /dev/null is not a regular file: give a text file \(it is read several times\)", []),
    ("pretrain-halting-rate-just-below-the-least", PRETRAIN + " --learning_rate 1e-8 --halting_learning_rate_scale "
     "0.9999999", 1, r"halting_learning_rate_scale 0.9999999 gives the halting unit a learning rate of 9.999999e-09 "
     r"\(x learning_rate 1e-08\)", []),
    ("bench-served-fill-mask-a-run-dir", "benchmarks.served_fill_mask --init {run} --conllu {ud40} --output_dir "
     "{tmp}/sfm_run", 1, r"is not a pre-training SavedModel \(one with a fill_mask signature\): \S+ is a pre-training "
     r"run; export it first \(python -m albert_act.export --checkpoint \S+ --kind pretraining --output <dir>/1\)", []),
    ("bench-served-fill-mask-fewer-sentences-than-asked", "benchmarks.served_fill_mask --init {export} --conllu {ud40} "
     "--sentences 500", 0, r"note: --sentences 500, but only \d+ sentences of \S+ud40.conllu can be asked .*fitting the "
     r"export's 64 positions\): the table is over \d+, and its 95% intervals are rough below 30 sentences", []),
    ("bench-served-depth-a-short-that-cuts-nothing", "benchmarks.served_depth --init {export} --records {eval} "
     "--short 1000 --output_dir {tmp}/sd_short", 1, r"--short 1000 cuts nothing of a 64-position model's segments: "
     r"give --short below 32", []),
    ("bench-served-depth-a-fine-tuning-dir", "benchmarks.served_depth --init {earlier}/ft --records {eval} "
     "--output_dir {tmp}/sd_ft", 1, r"earlier/ft is not a pre-training SavedModel \(one with an encoder_ids signature\): "
     r"it is a fine-tuning dir \(a fine-tuned classifier\); give the export of a pre-training run", []),
    ("bench-served-depth-a-hugging-face-model", "benchmarks.served_depth --init {hf_model} --records {eval} "
     "--output_dir {tmp}/sd_hf", 1, r"hf_model is not a pre-training SavedModel \(one with an encoder_ids signature\): "
     r"it is a Hugging Face ALBERT; export it first \(python -m albert_act.export --checkpoint \S+hf_model --kind "
     r"pretraining --output <dir>/1\) and give that export", []),
    ("bench-served-fill-mask-a-folder-inside-the-export", "benchmarks.served_fill_mask --init {export}/variables "
     "--conllu {ud40} --output_dir {tmp}/sfm_inside", 1, r"variables is not a pre-training SavedModel \(one with a "
     r"fill_mask signature\): it is a folder inside the SavedModel \S+export/1: give that", []),
    ("bench-learning-curves-a-run-joined-to-itself", "benchmarks.learning_curves ACT={run}+{run}/ --output_dir "
     "{tmp}/lc_twice", 1, r"'ACT=.*': \S+/ holds the same evaluations as \S+ \(the same run, or a copy\): a continuation "
     r"is a run started from the first's weights \(--init_from\); give each once", []),
    ("bench-learning-curves-a-part-the-start-of-the-first", "benchmarks.learning_curves A={curve_long}+{curve_start} "
     "--output_dir {tmp}/lc_start", 1, r"'A=.*': \S+curve_start.jsonl holds only evaluations also in \S+long.jsonl \(the "
     r"same run, or a copy of its start\)", []),
    ("bench-learning-curves-parts-in-the-wrong-order", "benchmarks.learning_curves A={curve_anneal}+{curve_long} "
     "--output_dir {tmp}/lc_order", 0, r"note: \S+long.jsonl starts at held-out MLM accuracy 0.129, nearer where "
     r"\S+anneal.jsonl started \(0.250\) than where it ended \(0.261\): no continuation of it \(the parts in the wrong "
     r"order\?\)", []),
    ("bench-learning-curves-accuracies-in-percent", "benchmarks.learning_curves A={curve_long}+{curve_percent} "
     "--output_dir {tmp}/lc_percent", 1, r"curve_percent.jsonl line 1: mlm_accuracy \d+\.\d+ is no share in \[0, 1\] "
     r"\(a percentage\?\) \(not a held-out evaluation of albert_act.pretrain\)", []),
    ("bench-learning-curves-a-baseline-that-changes-in-the-file", "benchmarks.learning_curves A={curve_rebased} "
     "--output_dir {tmp}/lc_rebased", 1, r"curve_rebased.jsonl line 3: mlm_unigram_baseline 0.06\d+, against 0.04\d+ "
     r"before it \(held-out records other than the first line's: two runs' curves in one file\?\)", []),
    ("bench-learning-curves-an-interval-that-misses-its-accuracy", "benchmarks.learning_curves A={curve_missed} "
     "--output_dir {tmp}/lc_missed", 1, r"curve_missed.jsonl line 2: sop_accuracy_interval \[0.5, 0.52\] does not "
     r"hold its sop_accuracy 0.\d+ \(not a held-out evaluation", []),
    ("bench-learning-curves-a-utf16-curve", "benchmarks.learning_curves A={curve_utf16} --output_dir {tmp}/lc_utf16",
     1, r"curve_utf16.jsonl: UTF-16 text, not UTF-8 .*convert it first: iconv -f UTF-16 -t UTF-8 \S+curve_utf16.jsonl",
     []),
    ("bench-learning-curves-one-file-under-two-names", "benchmarks.learning_curves A={curve_long} B={curve_long} "
     "--output_dir {tmp}/lc_named_twice", 1, r"A and B both read \S+long.jsonl: one run under two names would be "
     r"drawn as two; give each run once", []),
    ("bench-learning-curves-a-plus-in-a-parts-name", "benchmarks.learning_curves A={curve_long}+{curve_plus} "
     "--output_dir {tmp}/lc_plus", 0, r"plot: \S+lc_plus/learning_curves.png", []),
    ("pretrain-a-gzip-compressed-shard", PRETRAIN.replace("--train_files {train}", "--train_files {gzip_shard}"), 1,
     r"train.tfrecord.gz: not a readable TFRecord of tf.train.Examples \(.*\); a gzip-compressed file: decompress it "
     r"first \(gunzip -c \S*train.tfrecord.gz > \S*train.tfrecord\)", []),
    ("analyze-jit-compile-a-gather-run", "albert_act.analyze token-types --init {gather_run} --jit_compile "
     "--output_dir {tmp}/a_jit_gather", 0, r"written to .*a_jit_gather", []),
    ("data-input-in-a-script-the-vocabulary-cannot-read", DATA.replace("{tmp}/records", "{tmp}/records_cjk") +
     " --input {cjk_txt}", 0, r"warning: \d+% of the pieces are <unk>, and \d+% of the sentences are mostly characters "
     r"that are in no piece: --vocab .* cannot read much of this text \(another script or language\?\); train a "
     r"vocabulary on it", []),
    ("submission-a-fine-tuning-that-finished-no-epoch", SUBMIT.replace("{tmp}/empty_models", "{unfinished_models}") +
     " --allow_partial", 1, r"sts-b is a fine-tuning dir that finished no epoch \(no classifier.weights.h5\): run its "
     r"fine-tuning again \(python -m albert_act.finetune --config .*sts-b/finetune_config.json --output_dir .*sts-b\)",
     []),
    ("finetune-set-learning-rate-inf", FINETUNE + " --task rte --data_dir {rte} --set learning_rate=inf", 1,
     r"learning_rate must be a learning rate in \[1e-08, .*, got \"inf\"$", []),
    ("pretrain-export-dir-without-version", PRETRAIN.replace("--no_export", "--export_dir {tmp}/pre_unversioned "
                                                            "--vocab {vocab}").replace("{tmp}/new_run", "{tmp}/run_unv"),
     0, r"serve: TensorFlow Serving loads <base>/<version number>/, and .*pre_unversioned is not named by a number: "
     r"export with --export_dir .*pre_unversioned/1 to serve it", []),
    ("pretrain-set-a-flags-name", PRETRAIN + " --set tau=0.1", 2, r"--set tau: not a setting of PretrainConfig; --tau "
     r"is the flag of the setting ponder_cost_weight: --set ponder_cost_weight=0.1", []),
    ("pretrain-set-a-flags-name-in-quotes", PRETRAIN + """ --set 'tau="0.1"'""", 2, r"--set tau: not a setting of "
     r"PretrainConfig; --tau is the flag of the setting ponder_cost_weight: --set ponder_cost_weight=0.1$", []),  # (B57)
    ("bench-learning-curves-an-evaluation-json", "benchmarks.learning_curves A={run}/evaluation.json --output_dir "
     "{tmp}/lc_ej", 1, r"evaluation.json: one JSON document over several lines \(a run's evaluation.json\?\), not a "
     r"held-out curve of one evaluation a line; give the run dir, or its held_out.jsonl", []),
    ("bench-learning-curves-a-folder-without-a-curve", "benchmarks.learning_curves A={notes_dir} --output_dir "
     "{tmp}/curves_none", 1, r"notes_dir holds no held_out.jsonl: give a pre-training run dir \(it holds one after its "
     r"first --eval_every evaluation\) or the file itself", []),
    ("bench-parity-write-on-jax", "KERAS_BACKEND=jax benchmarks.backend_parity --write {tmp}/parity_jax", 1,
     r"--write computes the reference on Keras's TensorFlow backend, and KERAS_BACKEND is jax here", []),
    ("bench-data-throughput-vocab-and-its-default-size", "benchmarks.data_throughput --input {corpus} --vocab {vocab} "
     "--vocab_size 30000", 1, r"--vocab_size 30000 sizes the vocabulary trained without --vocab", []),
    ("tokenizer-input-a-psql-table", TOKENIZER.replace("{corpus}", "{psql_table}"), 1, r"psql_table.txt line 2: a text "
     r"table's row \(Markdown, psql, a \+---\+ box\) \('----\+------'\), where plain text is read", []),
    ("tokenizer-input-a-merges-file", TOKENIZER.replace("{corpus}", "{merges}"), 1, r"merges.txt line 1: a BPE merges "
     r"file \(merges.txt\) \('#version: 0.2'\), where plain text is read", []),
    ("data-input-a-bert-vocab", DATA + " --input {bert_vocab}", 1, r"bert_vocab.txt line 1: a vocabulary \(BERT's "
     r"vocab.txt, SentencePiece's .vocab: a piece a line\) \('\[PAD\]'\)", []),
    ("data-input-a-sentencepiece-vocab", DATA + " --input {spm_vocab}", 1, r"spm_vocab.txt line 1: a vocabulary "
     r"\(BERT's vocab.txt, SentencePiece's .vocab: a piece a line\) \('<unk>\\t0'\)", []),
    ("tokenizer-input-quoted-printable", TOKENIZER.replace("{corpus}", "{quoted_printable}"), 1,
     r"quoted_printable.txt line 2: quoted-printable text \(an e-mail's 'caf=C3=A9'\)", []),
    ("tokenizer-input-base64", TOKENIZER.replace("{corpus}", "{base64}"), 1, r"base64.txt line 2: base64 \(encoded "
     r"bytes, not text\)", []),
    ("data-input-a-parallel-corpus", DATA + " --input {parallel}", 1, r"parallel.txt line 2: a parallel corpus's line "
     r"\('source \|\|\| target'\) .*give one side alone \(e.g. sed 's/ \*\|\|\|\.\*//' .*parallel.txt, the source "
     r"side\)", []),
    ("analyze-sentences-text-raw-wikitext", "albert_act.analyze sentences --init {run} --text {wikitext} --output_dir "
     "{tmp}/a_wikitext", 1, r"wikitext.txt line 2: MediaWiki markup \(raw wikitext: .*\), where plain text is read", []),
    ("data-input-two-json-examples-before-the-text", DATA.replace("{tmp}/records", "{tmp}/records_json_head") +
     " --input {corpus_json_head}", 0, r"wrote \d+ train and \d+ eval instances", []),
    ("data-input-yaml-mapping-joined-after-the-text", DATA.replace("{tmp}/records", "{tmp}/records_then_yaml") +
     " --input {corpus_then_yaml}", 0, r"warning: .*corpus_then_yaml.txt: 12 lines from line \d+ on \('key_0: .*'\) "
     r"are a YAML item \(a key and its quoted value\), read as text", []),
    ("finetune-config-of-a-run-from-another-folder", "albert_act.finetune --config {started}/ft/finetune_config.json "
     "--output_dir {tmp}/ft_elsewhere", 1, r"--config .*started/ft/finetune_config.json: its run started in .*started "
     r"\(its output_dir 'ft' is the folder the file lies in\), and its relative paths name files from there; from "
     r".*, init 'run' would be .*/run, not .*started/run: run the command from .*started, or give --init", []),
    ("data-input-a-taggers-word-tag-output", DATA.replace("{tmp}/records", "{tmp}/records_tagged") +
     " --input {tagged_words}", 0, r"warning: .*tagged_words.txt: 0% of its first \d+ lines read as sentences \(words "
     r"with their punctuation; line 1, '.*_NN .*', does not\): is it text\?", []),
    ("tokenizer-input-a-sentencepiece-model", TOKENIZER.replace("{corpus}", "{vocab}") + " --skip_invalid_utf8", 1,
     r"vocab.model: a SentencePiece model \(--vocab takes it\), not text; give a UTF-8 text file", []),
    ("data-input-a-pdf", DATA + " --input {document_pdf} --skip_invalid_utf8", 1, r"document.pdf: a PDF document, not "
     r"text; extract its text first \(e.g. pdftotext .*document.pdf text.txt\)", []),
    ("data-input-a-bibtex-file", DATA + " --input {bibtex}", 1, r"bibtex.txt line 1: a BibTeX bibliography "
     r"\('@article\{smith2001,'\), where plain text is read", []),
    ("tokenizer-input-a-conllu-files-text-lines", TOKENIZER.replace("{corpus}", "{conllu_text}"), 1,
     r"conllu_text.txt line 2: a CoNLL-U file's text line \('# text = .*'\), where plain text is read; give the text "
     r"itself \(awk '/\^# newdoc/ && NR > 1 \{print \"\"\} sub\(/\^# text = /, \"\"\)' .*conllu_text.txt > "
     r"text.txt\)", []),
    ("tokenizer-input-an-sgml-corpus", TOKENIZER.replace("{corpus}", "{sgml}"), 1, r"sgml.txt line 1: an SGML corpus "
     r"\(TREC's <DOC>\) \('<DOC>'\), where plain text is read", []),
    ("data-input-a-csv-table-inside-the-text", DATA.replace("{tmp}/records", "{tmp}/records_csv_inside") +
     " --input {csv_inside}", 0, r"warning: .*csv_inside.txt: 12 lines from line \d+ on \('2000,Club A,0,30'\) are CSV "
     r"rows, read as text", []),
    ("data-input-double-spaced-text", DATA.replace("{tmp}/records", "{tmp}/records_double") + " --input {double_spaced}",
     0, r"warning: \d+ sentences in \d+ documents: nearly every document is one line \(a blank line after each line: "
        r"double-spaced text\?\), so sentence-order pairs are halves of one line", []),
    ("data-input-a-copy-with-news-datelines", DATA + " --input {corpus} {datelines}", 1, r"--input .*datelines.txt: \d+ "
     r"of its \d+ distinct sentences are also in .*corpus.txt", []),
    ("data-output-dir-whose-staging-folder-is-a-link", DATA.replace("{tmp}/records", "{linked_staging}") +
     " --input {corpus}", 1, r"linked_staging/_incomplete is a link, where this tool stages its shards \(and deletes "
     r"what is there\): move it away, or write to another --output_dir", ["{notes_dir}/notes.txt"]),
    ("probing-xpos-holding-upos-tags", "pipelines.probing --conllu {upos_in_xpos} --output_dir {tmp}/probing_upos", 1,
     r"upos_in_xpos.conllu: no Penn Treebank verb tag \(VBD, VBZ, ...\) among its XPOS tags \(column 5: [A-Z]+, .*UPOS "
     r"or another tag set, such as CLAWS's\?\)", []),
    ("pretrain-set-model-dir-null", PRETRAIN.replace(" --model_dir {tmp}/new_run", "") + " --set model_dir=null", 2,
     r"--set model_dir=null: model_dir takes a path, and null is none \(it would be a folder named 'null'\)", []),
    ("pretrain-init-from-its-own-model-dir", PRETRAIN.replace("{tmp}/new_run", "{run}") + " --init_from {run}", 1,
     r"--init_from .*run is the --model_dir itself: a run resumes from its own checkpoints without --init_from", []),
    ("pretrain-export-dir-inside-a-savedmodel", PRETRAIN.replace("--no_export", "--export_dir {export}/assets/1 --vocab "
                                                                  "{vocab}"), 1,
     r"--export_dir .*export/1/assets/1 is inside the SavedModel .*export/1: written there, it would be a part of that "
     r"one", ["{export}/saved_model.pb"]),
    ("export-output-inside-a-savedmodel", "albert_act.export --checkpoint {run} --kind pretraining --output "
     "{export}/variables/2", 1, r"--output .*export/1/variables/2 is inside the SavedModel .*export/1", []),
    ("analyze-records-in-a-data-runs-staging-folder", "albert_act.analyze token-types --init {run} --records "
     "{staged_records}/_incomplete/train-00000-of-00002.tfrecord --output_dir {tmp}/a_staged", 1,
     r"train-00000-of-00002.tfrecord lies in the data tool's .*staged_records/_incomplete: a run's unfinished output",
     []),
    ("pretrain-held-out-records-that-hold-training-ones", PRETRAIN.replace("{eval}", "{trained_held_out}"), 1,
     r"100% of \d+ held-out records \(.*trained_held_out.tfrecord, ...\) hold the text of training records", []),
    ("finetune-cola-given-rtes-folder", FINETUNE + " --task cola --data_dir {rte}", 1, r"RTE/train.tsv line 1: label "
     r"'sentence1' not in \['0', '1'\] \(line 1 names columns, as another task's header does; CoLA's files have no "
     r"header: is this the CoLA folder\?\)", []),
    ("finetune-into-a-fine-tuning-killed-while-it-replaced-one", FINETUNE.replace("{tmp}/ft", "{killed_overwrite}") +
     " --task rte --data_dir {rte}", 1, r"--output_dir .*killed_overwrite holds a finished fine-tuning \(results.json\); "
     r"pass --overwrite to replace it", []),  # (its earlier fine-tuning put back first: results.json)
    ("pretrain-export-dir-holding-its-init-from", PRETRAIN.replace("--no_export", "--export_dir {export} --vocab {vocab} "
                                                                    "--overwrite") + " --init_from {export}", 1,
     r"--export_dir .*export/1 holds the --init_from .*export/1 of this run: the export would replace it", []),
    ("pretrain-model-dir-inside-its-export-dir", PRETRAIN.replace("{tmp}/new_run", "{tmp}/e171/1/run").replace(
        "--no_export", "--export_dir {tmp}/e171/1 --vocab {vocab}"), 1,
     r"--export_dir .*e171/1 holds the --model_dir .*e171/1/run of this run", []),
    ("finetune-init-inside-its-output-dir", FINETUNE.replace("{run}", "{earlier}/ft").replace("{tmp}/ft", "{earlier}/ft")
     + " --task rte --data_dir {rte} --overwrite", 1, r"--init .*earlier/ft is in the --output_dir .*earlier/ft, which "
     r"this fine-tuning writes \(and --overwrite sets aside\)", ["{earlier}/ft"]),
    ("finetune-learning-rate-1e30", FINETUNE + " --task rte --data_dir {rte} --learning_rate 1e30", 1,
     r"learning_rate must be a learning rate in \[1e-08, 10\] \(a smaller one's steps are rounded away in float32 "
     r"weights; a larger one throws them far in one step\), got 1e\+30", []),
    ("pretrain-model-dir-holding-someone-elses-config-json", PRETRAIN.replace("{tmp}/new_run", "{project}"), 1,
     r"--model_dir .*project holds a config.json that is no pre-training run's \(it names no preset: a Hugging Face "
     r"model's, another tool's\?\), which a run would replace", ["{project}/config.json"]),
    ("finetune-output-dir-a-hugging-face-model", FINETUNE.replace("{tmp}/ft", "{hf_model}") + " --task rte --data_dir "
     "{rte}", 1, r"--output_dir .*hf_model holds a Hugging Face model \(config.json\); fine-tune into another dir",
     ["{hf_model}/config.json"]),
    ("bench-adaptive-inference-trained-rows-at-their-records-length", "benchmarks.adaptive_inference --runs 1 "
     "--batch_sizes 1 --lengths 8 --checkpoint {run}", 0, r"\| synthetic, \[CLS\] at cap \| 1 \| 8 \| .*\| trained run "
     r"\| 1 \| 64 \| ", []),
    ("analyze-held-out-records-holding-training-text", "albert_act.analyze held-out --init {run} --records "
     "{trained_held_out} --output_dir {tmp}/a_trained_text", 1, r"--records: 100% of \d+ records \(.*trained_held_out"
     r".tfrecord, ...\) hold the text of .*run's training records \(runs of 16 pieces in both", []),
    ("tokenizer-output-a-runs-own-vocabulary-with-overwrite", TOKENIZER.replace("--output {tmp}/v", "--output "
     "{copied_run}/vocab --overwrite"), 1, r"--output .*copied_run/vocab: .*copied_run/vocab.model is the vocabulary of a "
     r"pre-training run in .*copied_run, which reads it; a new one there leaves that unusable", ["{copied_run}/vocab.model"]),
    ("finetune-output-dir-inside-a-savedmodel", FINETUNE.replace("{tmp}/ft", "{export}/assets/ft") + " --task rte "
     "--data_dir {rte}", 1, r"--output_dir .*export/1/assets/ft is inside the SavedModel .*export/1", []),
    ("pretrain-model-dir-inside-a-savedmodel", PRETRAIN.replace("{tmp}/new_run", "{export}/variables/run"), 1,
     r"--model_dir .*export/1/variables/run is inside the SavedModel .*export/1", []),
]
MEANWHILE = {"pretrain-export-written-by-another-run-meanwhile": _export_meanwhile,
             "pretrain-export-being-written-by-another-run": _export_being_written}
# Every flag that an analysis mode does not read, given to that mode, is refused (the modes declare what they
# read: albert_act.analyze.READS), before anything loads.
MODE_FLAG_VALUES = {"records": "{eval}", "max_batches": "1", "parsed": "{empty_form}", "text": "{corpus}",
                    "reference": "{run}", "documents": "9", "keep_subtypes": ""}
CASES += [(f"analyze-{mode}-does-not-read-{flag}", f"albert_act.analyze {mode} --init {{run}} --output_dir "
           f"{{tmp}}/a_modes --{flag} {MODE_FLAG_VALUES[flag]}", 1, rf"the {mode} analysis does not read --{flag} ", [])
          for mode, reads in READS.items() for flag in MODE_FLAGS if flag not in reads]
# Cases run from another folder than the repository's: {case id: folder}.
FOLDER = {name: "{tmp}/here/inner" for name in (
    "export-output-the-current-folder", "export-output-holds-the-current-folder", "analyze-output-the-current-folder",
    "pretrain-model-dir-holds-the-current-folder", "data-output-the-current-folder", "finetune-output-the-current-folder",
    "tokenizer-output-a-scheme-with-one-slash", "probing-output-dir-a-scheme-with-one-slash",
    "synthetic-corpus-output-remote", "submission-output-remote")}
HELD = ("held_run", "held_ft", "held_export/1", "held_records")  # locked by this process for the cases above


@pytest.fixture(scope="module")
def places(tiny_run, records, shared_data, tmp_path_factory):
    """Scratch copies and bad files the cases point at; the tiny run and export are copied so that
    a case that wrongly deletes cannot harm another."""
    root = tmp_path_factory.mktemp("bad_inputs")
    run, export = root / "run", root / "export" / "1"
    shutil.copytree(tiny_run[0], run)
    shutil.copytree(tiny_run[1], export)
    (root / "notes_dir").mkdir()
    (root / "notes_dir" / "notes.txt").write_text("keep me\n")
    (root / "here" / "inner").mkdir(parents=True)  # the folder some cases run from (FOLDER)
    (root / "not_a_vocab.model").write_text("this is not a SentencePiece model\n")
    (root / "bad_utf8.txt").write_bytes(b"A fine line.\n\xff\xfe broken\n")
    (root / "empty.txt").write_text("")
    (root / "setup.exe").write_bytes(b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00")
    with zipfile.ZipFile(root / "report.docx", "w") as docx:  # (a Word document is a zip of XML files)
        docx.writestr("word/document.xml", "<w:document><w:body><w:p>The river ran.</w:p></w:body></w:document>")
    (root / "sst_tabbed").mkdir()  # SST-2 with a tab after each row, header too
    for split in ("train", "dev"):
        (root / "sst_tabbed" / f"{split}.tsv").write_text("".join(["sentence\tlabel\t\n"] + [
            f"a fine movie number {i}\t{i % 2}\t\n" for i in range(30)]))
    (root / "past_only.conllu").write_text("".join(  # every root a VBD: the tense task of one label
        f"# text = {name} ran home\n1\t{name}\t{name.lower()}\tPROPN\tNNP\t_\t2\tnsubj\t_\t_\n2\tran\trun\tVERB\tVBD\t_\t0\t"
        f"root\t_\t_\n3\thome\thome\tADV\tRB\t_\t2\tadvmod\t_\t_\n\n" for name in ("Ann", "Bob", "Cid", "Dan", "Eve", "Fay")))
    (root / "warmup_50.json").write_text(json.dumps({"preset": "demo", "warmup_steps": 50}))
    (root / "glue_csv").mkdir()  # a CSV under the .tsv name; train.tsv downloaded gzipped
    (root / "glue_csv" / "train.tsv").write_text("index,sentence1,sentence2,label\n0,A man plays.,He plays.,entailment\n")
    (root / "glue_gz").mkdir()
    (root / "glue_gz" / "train.tsv.gz").write_bytes(gzip.compress((RTE_HEADER + RTE_ROW.format(i=0)).encode()))
    (root / "glue_gz_named").mkdir()  # gzip's bytes under the name read
    (root / "glue_gz_named" / "train.tsv").write_bytes(gzip.compress((RTE_HEADER + RTE_ROW.format(i=0)).encode()))
    for name in ("glue_fifo", "glue_device", "fifo_records"):  # a named pipe with no writer, a device: never read
        (root / name).mkdir()
    os.mkfifo(root / "glue_fifo" / "train.tsv")
    (root / "glue_device" / "train.tsv").symlink_to("/dev/zero")
    shutil.copy(sorted(Path(records[0]).parent.glob(Path(records[0]).name))[0], root / "fifo_records" / "train-00000-of-00002.tfrecord")
    os.mkfifo(root / "fifo_records" / "train-00001-of-00002.tfrecord")
    for name in ("glue_xlsx", "glue_folder"):  # train.tsv a spreadsheet saved under that name; train.tsv a folder
        (root / name).mkdir()
        shutil.copy(shared_data / "glue" / "RTE" / "dev.tsv", root / name / "dev.tsv")
    with zipfile.ZipFile(root / "glue_xlsx" / "train.tsv", "w") as sheet:
        sheet.writestr("[Content_Types].xml", "<Types/>")
    (root / "glue_folder" / "train.tsv").mkdir()
    (root / "lc_own").mkdir()  # an earlier learning_curves result, and a run's evaluation.json on one line
    (root / "lc_own" / "learning_curves.json").write_text('{"ACT": []}')
    (root / "eval_one_line.json").write_text(json.dumps(json.loads((run / "evaluation.json").read_text())) + "\n")
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10")
    (root / "notes.db").write_bytes(b"SQLite format 3\x00\x10\x00\x01\x01\x00@  \x00\x00\x00\x02")
    (root / "one_line.txt").write_text("One sentence, and nothing else to learn from.\n")
    (root / "fixed_depth_pieces.json").write_text(json.dumps({"preset": "english", "halting": "none",
                                                              "target_pieces": "unmasked"}))
    (root / "empty_models").mkdir()
    corpus = root / "corpus.txt"
    corpus.write_text("".join(f"Document {d} starts here.\nIt has a second sentence.\n\n" for d in range(20)))
    rte = shared_data / "glue" / "RTE"
    variants = {"glue_empty": "", "glue_header": RTE_HEADER,
                "glue_label": RTE_HEADER + RTE_ROW.format(i=0) + RTE_ROW.format(i=1).replace("entailment", "maybe"),
                "glue_tab": RTE_HEADER + RTE_ROW.format(i=0) + RTE_ROW.format(i=1).replace("\tentailment", "\tEXTRA\tentailment"),
                "glue_short": RTE_HEADER + "0\tA man plays a guitar.\tentailment\n", "glue_nodev": None,
                "glue_renamed": "index\tpremise\thypothesis\tlabel\n" + RTE_ROW.format(i=0)}
    for name, train in variants.items():
        (root / name).mkdir()
        (root / name / "train.tsv").write_text(train if train is not None else RTE_HEADER + RTE_ROW.format(i=0))
        if name != "glue_nodev":
            shutil.copy(rte / "dev.tsv", root / name / "dev.tsv")
    (root / "glue_bom_inside").mkdir()  # SST-2's file read without utf-8-sig, written again by pandas (with its index)
    (root / "glue_bom_inside" / "train.tsv").write_text("\t\ufeffsentence\tlabel\n0\tit is a fine film .\t1\n")
    shutil.copy(rte.parent / "SST-2" / "dev.tsv", root / "glue_bom_inside" / "dev.tsv")
    vocab = Path(records[0]).parent.parent / "vocab.model"
    _bad_records(root, records)
    edited = root / "edited_run"
    shutil.copytree(tiny_run[0], edited)
    config = json.loads((edited / "config.json").read_text())
    config["halting"] = config["backbone"]["halting"] = "none"
    (edited / "config.json").write_text(json.dumps(config))
    for name, text in (("truncated_config_run", None), ("list_config_run", b"[1, 2]"),
                       ("binary_config_run", b"\xff\xfe{\x00"), ("empty_config_run", b"{}")):
        shutil.copytree(tiny_run[0], root / name)
        config = (root / name / "config.json").read_bytes()
        (root / name / "config.json").write_bytes(text if text is not None else config[: len(config) // 2])
    for name in ("empty_state_run", "empty_state_export_run"):  # TensorFlow's list of the checkpoints, left empty
        shutil.copytree(tiny_run[0], root / name)
        (root / name / "checkpoints" / "checkpoint").write_text("")
    (root / "listed").mkdir()  # train_tokenizer's two files: the model, and the list of its pieces
    shutil.copy(Path(tiny_run[0]) / "vocab.model", root / "listed" / "vocab.model")
    (root / "listed" / "vocab.vocab").write_text("<pad>\t0\n[UNK]\t0\n")
    shutil.copytree(tiny_run[0], root / "events_file_run")  # its TensorBoard folder a file
    shutil.rmtree(root / "events_file_run" / "train")
    (root / "events_file_run" / "train").write_text("x")
    shutil.copytree(tiny_run[0], root / "vocab_folder_run")  # its vocabulary a folder
    (root / "vocab_folder_run" / "vocab.model").unlink()
    (root / "vocab_folder_run" / "vocab.model").mkdir()
    shutil.copytree(tiny_run[0], root / "no_ckpt_run")  # a finished run whose checkpoints were deleted
    for part in (root / "no_ckpt_run" / "checkpoints").iterdir():
        part.unlink()
    shutil.copytree(tiny_run[0], root / "weights_folder_run")  # its final weights (a JAX run's) a folder
    (root / "weights_folder_run" / "model.weights.h5").mkdir()
    shutil.copytree(tiny_run[0], root / "vocab_emptied_run")  # the run's copy of its vocabulary emptied
    (root / "vocab_emptied_run" / "vocab.model").write_bytes(b"")
    shutil.copytree(tiny_run[0], root / "curve_deleted_run")  # a finished run, evaluated each update, curve deleted
    config = json.loads((root / "curve_deleted_run" / "config.json").read_text())
    (root / "curve_deleted_run" / "config.json").write_text(json.dumps({**config, "eval_every": 1}))
    (root / "curve_deleted_run" / "held_out.jsonl").unlink()
    for name in ("curve_copied_run", "curve_lost_run", "curve_beyond_run"):  # another run's curve copied in; a run
        # evaluated every
        (root / name).mkdir()  # update (eval_every 1) whose curve was deleted, then the run evaluated again; a line
        # past its last update
        for file in ("config.json", "evaluation.json", "held_out.jsonl"):
            shutil.copy(Path(tiny_run[0]) / file, root / name)
    point = json.loads((root / "curve_copied_run" / "held_out.jsonl").read_text())
    (root / "curve_copied_run" / "held_out.jsonl").write_text(json.dumps({**point, "sop_accuracy": 0.125}) + "\n")
    with open(root / "curve_beyond_run" / "held_out.jsonl", "a") as curve:
        curve.write(json.dumps({**point, "step": 99}) + "\n")
    config = json.loads((root / "curve_lost_run" / "config.json").read_text())
    (root / "curve_lost_run" / "config.json").write_text(json.dumps({**config, "eval_every": 1}))
    (root / "folders_run").mkdir()  # a run whose held_out.jsonl and evaluation.json are folders
    shutil.copy(Path(tiny_run[0]) / "config.json", root / "folders_run")
    (root / "folders_run" / "held_out.jsonl").mkdir()
    (root / "folders_run" / "evaluation.json").mkdir()
    shutil.copytree(tiny_run[0], root / "foreign_ckpt_run")  # another run's later checkpoint copied in
    for part in (root / "foreign_ckpt_run" / "checkpoints").glob("ckpt-3.*"):
        shutil.copy(part, part.parent / part.name.replace("ckpt-3", "ckpt-9"))
    shutil.copytree(tiny_run[0], root / "indexless_run")  # a copy cut short: every .data without its .index
    for index in (root / "indexless_run" / "checkpoints").glob("*.index"):
        index.unlink()
    for name, change in (("no_backbone_config_run", {"backbone": None}), ("string_steps_config_run", {"steps": "2"}),
                         ("null_control_config_run", {"target_control": None})):
        shutil.copytree(tiny_run[0], root / name)
        config = json.loads((root / name / "config.json").read_text())
        (root / name / "config.json").write_text(json.dumps({**config, **change}))
    _more_bad_files(root, rte)
    _look_alike_files(root, rte)
    _round_32_files(root, rte, records)
    _damaged_weights(root, run, export)
    shutil.copytree(export, root / "orphan_export")  # the export of a run since moved away
    info = root / "orphan_export" / "assets" / "albert_act_export.json"
    record = json.loads(info.read_text())
    info.write_text(json.dumps({**record, "pretraining": {**record["pretraining"], "model_dir": "/nonexistent/run"}}))
    shutil.copytree(export, root / "glue_spelled_models" / "RTE" / "1")  # a folder named as glue_data names RTE
    (root / "killed_records" / "_incomplete").mkdir(parents=True)  # a data tool killed while it moved its shards in
    shutil.copy(next(Path(records[0]).parent.glob(Path(records[0]).name)), root / "killed_records" /
                "train-00000-of-00004.tfrecord")
    (root / "run_starting").mkdir()  # a run before its first checkpoint
    shutil.copy(Path(tiny_run[0]) / "config.json", root / "run_starting" / "config.json")
    (root / "no_config_run").mkdir()  # a run whose config.json was lost
    shutil.copytree(Path(tiny_run[0]) / "checkpoints", root / "no_config_run" / "checkpoints")
    shutil.copy(vocab, root / "old_vocab.model")
    for name, text in (("analysis/report.md", "# an earlier report\n"), ("ft/results.json", "{}"),
                       ("ft/classifier.json", "{}"), ("s.zip", "an earlier zip"), ("bench/results.json", "{}"),
                       ("grid/results.json", "{}"), ("grid/finetune_config.json", "{}"), ("grid/grid/p/results.json", "{}"),
                       ("stopped_grid/finetune_config.json", "{}"), ("stopped_grid/grid/p/results.json", "{}")):
        (root / "earlier" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "earlier" / name).write_text(text)
    (root / "ft_copy").mkdir()  # a fine-tuning's record copied into another folder: it names the first
    (root / "ft_copy" / "finetune_config.json").write_text(json.dumps({"output_dir": str(root / "earlier" / "ft")}))
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto.FromString(vocab.read_bytes())
    proto.pieces[10].piece, proto.pieces[11].piece = proto.pieces[11].piece, proto.pieces[10].piece
    (root / "swapped.model").write_bytes(proto.SerializeToString())
    shutil.copytree(tiny_run[0], root / "swapped_vocab_run")  # a run of another vocabulary of the same size
    _config_files(root, tiny_run, records, shared_data)
    shutil.copy(root / "swapped.model", root / "swapped_vocab_run" / "vocab.model")
    shutil.copytree(root / "swapped_vocab_run", root / "other_vocab_reference")  # its records gone: its vocabulary
    config = json.loads((root / "other_vocab_reference" / "config.json").read_text())  # is not checked against them
    (root / "other_vocab_reference" / "config.json").write_text(json.dumps({**config, "train_files": [
        str(root / "gone" / "train-*.tfrecord")]}))
    whole = vocab.read_bytes()  # the model cut short at a piece's end: it still parses
    del proto.pieces[200:]
    for spec in ("trainer_spec", "normalizer_spec", "denormalizer_spec", "self_test_data"):
        proto.ClearField(spec)
    proto.pieces[10].piece, proto.pieces[11].piece = proto.pieces[11].piece, proto.pieces[10].piece
    assert whole.startswith(proto.SerializeToString())
    (root / "truncated_vocab.model").write_bytes(proto.SerializeToString())
    (root / "other_vocab").mkdir()  # a shard whose stats.json names another vocabulary of the same size
    shutil.copy(sorted(Path(records[0]).parent.glob(Path(records[0]).name))[-1], root / "other_vocab" / "eval.tfrecord")
    (root / "other_vocab" / "stats.json").write_text(json.dumps({"vocab": "wiki.model", "vocab_sha256": "0" * 64}))
    (root / "other_vocab_eval").mkdir()  # the same, of held-out records (the analyses refuse training ones)
    shutil.copy(sorted(Path(records[1]).parent.glob(Path(records[1]).name))[0], root / "other_vocab_eval" / "eval.tfrecord")
    shutil.copy(root / "other_vocab" / "stats.json", root / "other_vocab_eval" / "stats.json")
    (root / "old_vocab.vocab").write_text("<pad>\t0\n")
    locks = [outputs.DirectoryLock(root / name, "test").acquire() for name in HELD]
    yield {"tmp": root, "run": run, "export": export, "export_base": str(Path(export).parent), "train": records[0], "eval": records[1], "vocab": vocab,
           "records_dir": Path(records[0]).parent,
            "rte": rte, "glue": shared_data / "glue", "notes_dir": root / "notes_dir", "corpus": corpus,
            "not_a_vocab": root / "not_a_vocab.model", "bad_utf8": root / "bad_utf8.txt",
            "empty_txt": root / "empty.txt", "one_line_txt": root / "one_line.txt",
            "fixed_depth_pieces_json": root / "fixed_depth_pieces.json", "edited_run": edited, "no_weights": root / "no_weights.tfrecord",
            "truncated": root / "truncated.tfrecord", "long_records": root / "long.tfrecord", "wide_records": root / "wide.tfrecord", "partly_trained": root / "partly_trained.tfrecord", "records_moved_run": root / "records_moved_run", "relative_records_run": root / "relative_records_run", "accents_alone": root / "accents_alone.txt", "huge_word": root / "huge_word.conllu", "latin1_name": root / os.fsdecode(b"s\xe9.txt"), "three_segments": root / "three_segments.tfrecord",
           "three_labels": root / "three_labels.tfrecord", "mixed_lengths": root / "mixed_lengths.tfrecord",
           "late_mixed": root / "late_mixed.tfrecord", "doubled": root / "doubled.tfrecord", "zlib_records": root / "zlib.tfrecord", "late_corrupt": root / "late_corrupt.tfrecord",
           "unmasked_input": root / "unmasked_input.tfrecord", "no_masked": root / "no_masked.tfrecord", "real_no_masked": root / "real_no_masked.tfrecord", "int_weights": root / "int_weights.tfrecord",
            **{name: root / name for name in ("truncated_config_run", "list_config_run", "binary_config_run",
                                              "empty_config_run", "no_backbone_config_run",
                                              "string_steps_config_run", "null_control_config_run", "orphan_export", "empty_state_run",
                                              "empty_state_export_run", "indexless_run", "foreign_ckpt_run",
                                              "other_vocab_reference", "events_file_run", "vocab_folder_run",
                                              "weights_folder_run", "folders_run", "no_ckpt_run", "curve_copied_run", "curve_beyond_run",
                                              "curve_lost_run", "curve_deleted_run", "vocab_emptied_run")},
            **{name: root / name for name in variants}, "glue_utf16": root / "glue_utf16", "glue_cr": root / "glue_cr",
            "empty_form": root / "empty_form.conllu", "outside_ids": root / "outside_ids.tfrecord",
            "utf16_txt": root / "utf16.txt", "utf16le_txt": root / "utf16le.txt",
            "linked_eval": root / "linked_eval.tfrecord", "copied_eval": root / "copied_eval.tfrecord", "gzip_txt": root / "corpus.txt.gz", "cjk_txt": root / "cjk.txt", "unfinished_models": root / "unfinished_models", "gzip_shard": root / "train.tfrecord.gz", "no_config_run": root / "no_config_run", "run_starting": root / "run_starting", "killed_records": root / "killed_records", "old_vocab": root / "old_vocab",
            "text_tfrecord": root / "text.tfrecord", "bad_head": root / "bad_head.conllu", "tmp_name": root.name,
            "repeated_conllu": root / "repeated.conllu",
            **{name: root / name for name in ("damaged_index_run", "truncated_run")},
            "damaged_export": root / "damaged_export" / "1", "moved_export": root / "moved" / "a" / "b" / "1",
            "kind_edited_export": root / "kind_edited_export" / "1",
            **{name: root / name / "1" for name in ("no_index_export", "cut_index_export")},
            "truncated_export": root / "truncated_export" / "1", "other_vocab": root / "other_vocab", "other_vocab_eval": root / "other_vocab_eval", "truncated_vocab": root / "truncated_vocab.model",
            "swapped_vocab_run": root / "swapped_vocab_run",
            **{name: root / name for name in ("configs", "copied_run", "gather_run", "nostats", "damaged_stats", "damaged_stats2", "edited_labels",
                                                     "edited_length")}, "wiki400": root / "wiki400.model",
            **{name: root / name for name in ("probing_tab", "probing_empty", "probing_no_va", "probing_one_label",
                                              "stsb_constant")},
            "probing_future": root / "probing_future", "glue_spelled_models": root / "glue_spelled_models",
            "one_line": root / "one_line.txt", "corpus_copy": root / "corpus_copy.txt",
            **{name: root / f"{name}.txt" for name in ("corpus_indented", "corpus_after_more", "corpus_reordered",
                                                      "corpus_joined", "corpus_spoken", "corpus_numbered", "corpus_html",
                                                      "corpus_twice")},
            **{name: root / f"{name}.conllu" for name in ("ud40", "ud40_misc", "ud40_merged", "ud40_tail", "ud40_lrb", "ud40_shy", "ud_run_on", "ud_2roots",
                                                          "ud_cycle")},
            "latin1_txt": root / "latin1.txt", "ptb_dp": root / "ptb.dp", "ptb_dp_from_0": root / "ptb_from_0.dp", "ptb_mrg": root / "ptb.mrg",
            "subtitles": root / "subtitles.srt", "corpus_csv": root / "corpus_csv.txt", "curve_long": root / "long.jsonl", "curve_anneal": root / "anneal.jsonl",
            "curve_start": root / "curve_start.jsonl", "curve_plus": root / "anneal+v2.jsonl", "corpus_piped": root / "corpus_piped.txt", "corpus_yaml": root / "corpus_yaml.txt", "corpus_then_subtitles": root / "corpus_then_subtitles.txt", "corpus_fasttext": root / "corpus_fasttext.txt", "corpus_labelled_csv": root / "corpus_labelled.csv", "corpus_relabelled": root / "corpus_relabelled.txt", "curve_percent": root / "curve_percent.jsonl", "curve_rebased": root / "curve_rebased.jsonl", "curve_utf16": root / "curve_utf16.jsonl", "curve_missed": root / "curve_missed.jsonl", "glue_train_is_dev": root / "glue_train_is_dev", "glue_doubled": root / "glue_doubled", "glue_dev_in_train": root / "glue_dev_in_train", "probing_unseen": root / "probing_unseen", "earlier": root / "earlier", "ft_copy": root / "ft_copy", "swapped": root / "swapped.model",
            **{name: root / f"{name}.txt" for name in LOOK_ALIKES}, "started": root / "started",
            **{name: root / f"{name}.txt" for name in ("tagged_words", "bibtex", "conllu_text", "sgml", "csv_inside", "gutenberg_indented", "cloze",
                                                       "double_spaced", "datelines")},
            **{name: root / name for name in ("linked_staging", "staged_records", "killed_overwrite", "project",
                                              "hf_model")},
            "document_pdf": root / "document.pdf", "upos_in_xpos": root / "upos_in_xpos.conllu",
            "trained_held_out": root / "trained_held_out.tfrecord"}
    for lock in locks:
        lock.release()


def _config_files(root, tiny_run, records, shared_data):
    """--config files (partial, a list where an object goes, a hand-edited backbone), a copied run,
    shards without their stats.json and a 400-piece vocabulary of other text."""
    from pipelines.tokenizer import train_sentencepiece

    (root / "configs").mkdir()
    (root / "configs" / "steps_string.json").write_text(json.dumps({"seed": "7"}))
    (root / "configs" / "seed_null.json").write_text(json.dumps({"seed": None}))
    (root / "configs" / "null.json").write_text("null\n")
    (root / "configs" / "overwrite_yes.json").write_text(json.dumps({"overwrite_export": "yes"}))
    (root / "configs" / "tau_string.json").write_text(json.dumps({"ponder_cost_weight": "0.1"}))
    (root / "configs" / "huge_bias.json").write_text(json.dumps({"backbone_overrides": {"halting_bias_initializer": 1e39}}))
    (root / "configs" / "overrides_list.json").write_text(json.dumps({"backbone_overrides": [1, 2]}))
    (root / "configs" / "overrides_null.json").write_text(json.dumps({"backbone_overrides": None}))
    (root / "configs" / "eval_only.json").write_text(json.dumps({"train_files": None, "eval_files": ["e.tfrecord"]}))
    (root / "configs" / "demo_vocab.json").write_text(json.dumps({"vocab": "v.model"}))
    (root / "configs" / "duplicate_key.json").write_text('{\n "seed": 3,\n "seed": 4\n}\n')
    (root / "configs" / "finetune_config.json").write_text(json.dumps(
        {"task": "rte", "data_dir": "glue/RTE", "init": "run", "output_dir": "ft", "epochs": 1}))
    (root / "configs" / "empty_model_dir.json").write_text(json.dumps({"seed": 3, "model_dir": ""}, indent=1))
    record = {"kind": "pretraining", "export": {"checkpoint": "../../gone_run", "kind": "pretraining", "output": ".",
                                                "vocab": None}}  # an export's record: paths relative to the export
    (root / "configs" / "copied_export_record.json").write_text(json.dumps(record))
    (root / "cls_export" / "1" / "assets").mkdir(parents=True)  # an export command's record, its top_k given
    (root / "cls_export" / "1" / "assets" / "albert_act_export.json").write_text(json.dumps(
        {"kind": "pretraining", "export": {**record["export"], "top_k": 5}}))
    (root / "nested_export" / "1" / "assets").mkdir(parents=True)  # a bad value inside "export", the same key
    (root / "nested_export" / "1" / "assets" / "albert_act_export.json").write_text(json.dumps(  # valid at the top
        {"kind": "pretraining", "max_seq_length": 64, "export": {**record["export"], "max_seq_length": "64"}},
        indent=1))  # (line 3)
    (root / "moved_export" / "1" / "assets").mkdir(parents=True)
    (root / "moved_export" / "1" / "assets" / "albert_act_export.json").write_text(json.dumps(record))
    (root / "configs" / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"seed": 5}).encode())
    config = json.loads((Path(tiny_run[0]) / "config.json").read_text())
    config["backbone"]["hidden_dim"] = 48
    (root / "configs" / "backbone_edited.json").write_text(json.dumps(config))
    shutil.copytree(tiny_run[0], root / "copied_run")
    shutil.copytree(tiny_run[0], root / "gather_run")  # the same weights, as trained with execution gather
    config = json.loads((root / "gather_run" / "config.json").read_text())
    config["execution"] = config["backbone"]["execution"] = "gather"
    (root / "gather_run" / "config.json").write_text(json.dumps(config))
    shutil.copytree(tiny_run[0], root / "records_moved_run")  # a run whose held-out records were moved away
    config = json.loads((root / "records_moved_run" / "config.json").read_text())
    (root / "records_moved_run" / "config.json").write_text(json.dumps({**config, "eval_files": [
        str(root / "moved_away" / "eval-*")]}))
    shutil.copytree(root / "records_moved_run", root / "relative_records_run")  # started elsewhere, with relative ones
    (root / "relative_records_run" / "config.json").write_text(json.dumps({**config, "eval_files": [
        "data_cache/somewhere/eval-*"]}))
    (root / "nostats").mkdir()
    for name, pattern in (("train", records[0]), ("eval", records[1])):
        shutil.copy(sorted(Path(pattern).parent.glob(Path(pattern).name))[0], root / "nostats" / f"{name}.tfrecord")
    shutil.copytree(tiny_run[1], root / "moved" / "a" / "b" / "1")  # its recorded (relative) paths now lead nowhere
    shutil.copytree(tiny_run[1], root / "kind_edited_export" / "1")  # its record's kind edited to another model's
    record = root / "kind_edited_export" / "1" / "assets" / "albert_act_export.json"
    record.write_text(json.dumps({**json.loads(record.read_text()), "kind": "classifier"}))
    shutil.copytree(root / "nostats", root / "damaged_stats")  # the data tool's report beside them, cut short
    (root / "damaged_stats" / "stats.json").write_text('{"vocab": "vocab.model", "vocab_sha')
    shutil.copytree(root / "damaged_stats", root / "damaged_stats2")  # (a damaged file is named once a process)
    for name, changes in (("edited_labels", {"labels": ["entailment", "not_entailment", "maybe"]}),
                          ("edited_length", {"max_seq_length": 512})):  # a fine-tuning dir's record edited by hand
        (root / name).mkdir()
        shutil.copy(Path(tiny_run[0]) / "vocab.model", root / name / "vocab.model")
        info = {"kind": "classifier", "task": "rte", "labels": ["entailment", "not_entailment"], "num_classes": 2,
                "pair": True, "max_seq_length": 64, "backbone": config["backbone"], **changes}
        (root / name / "classifier.json").write_text(json.dumps(info))
    (root / "wiki400.model").write_bytes(train_sentencepiece(
        [str(shared_data / "wikipedia_en_sample" / "wiki_en_valid.txt")], vocab_size=400, max_sentences=3000))


def _more_bad_files(root, rte):
    """A UTF-16 and a CR-only RTE folder, a CoNLL-U sentence with an empty FORM and one with a HEAD
    beyond its words, a UTF-16 corpus, a text file named .tfrecord."""
    text = RTE_HEADER + RTE_ROW.format(i=0) + RTE_ROW.format(i=1)
    for name, data in (("glue_utf16", text.encode("utf-16")), ("glue_cr", text.replace("\n", "\r").encode())):
        (root / name).mkdir()
        (root / name / "train.tsv").write_bytes(data)
        shutil.copy(rte / "dev.tsv", root / name / "dev.tsv")
    (root / "empty_form.conllu").write_text(
        "# text = A dog\n1\tA\ta\tDET\tDT\t_\t2\tdet\t_\t_\n2\t\tdog\tNOUN\tNN\t_\t0\troot\t_\t_\n\n")
    (root / "utf16.txt").write_bytes("A first line.\nA second one.\n".encode("utf-16"))
    for name, file, rows in (("probing_future", "past_present.txt", ("tr\tPAST", "tr\tPRES", "tr\tFUTURE", "va\tPAST")),
                             ("probing_unseen", "top_constituents.txt", ("tr\tADVP_NP_VP_.", "va\tADVP_NP_VP_.",
                                                                         "va\tNP_VP_."))):
        (root / name).mkdir()
        (root / name / file).write_text("".join(f"{row}\tThe dog ran home .\n" for row in rows))
    (root / "probing_future" / "subj_number.txt").write_text("tr\tNN\tThe dog ran .\ntr\tNNP\tJohn ran .\n")
    for name, text in (("probing_tab", "tr\tPAST\tThe dog ran .\ntr\tPRES\tThe dog\truns home .\n"),
                       ("probing_empty", "tr\tPAST\tThe dog ran .\ntr\tPRES\t \n"),
                       ("probing_no_va", "tr\tPAST\tThe dog ran .\ntr\tPRES\tThe dog runs .\nte\tPAST\tIt ran .\n"),
                       ("probing_one_label", "tr\tPAST\tThe dog ran .\ntr\tPAST\tIt ran .\nva\tPAST\tHe ran .\n")):
        (root / name).mkdir()
        (root / name / "past_present.txt").write_text(text)
    stsb = rte.parent / "STS-B"  # dev scores all 2.5: no correlation is defined
    (root / "stsb_constant").mkdir()
    shutil.copy(stsb / "train.tsv", root / "stsb_constant" / "train.tsv")
    rows = (stsb / "dev.tsv").read_text().splitlines()
    (root / "stsb_constant" / "dev.tsv").write_text("\n".join(
        [rows[0]] + [row.rsplit("\t", 1)[0] + "\t2.500" for row in rows[1:]]) + "\n")
    words = ("alpha", "beta", "gamma", "delta", "house", "river", "stone", "light")
    (root / "one_line.txt").write_text(" ".join(words[(i * 7 + i // 3) % 8] for i in range(400_000)) + ".\n")
    shutil.copy(root / "corpus.txt", root / "corpus_copy.txt")
    corpus_lines = (root / "corpus.txt").read_text().splitlines()  # the same documents, read alike: indented,
    (root / "corpus_indented.txt").write_text("".join(f"  {line}\n" for line in corpus_lines))  # or after new text
    (root / "corpus_after_more.txt").write_text("A new first document.\n\n" + (root / "corpus.txt").read_text())
    (root / "corpus_reordered.txt").write_text("\n\n".join("\n".join(reversed(d.split("\n"))) for d in (  # each
        root / "corpus.txt").read_text().strip().split("\n\n")) + "\n")  # document's sentences in reverse order
    (root / "corpus_joined.txt").write_text((root / "corpus.txt").read_text().replace(".\nIt", ". It"))  # one line each
    (root / "ptb.dp").write_text("".join((rte.parent.parent / "ptb_wsj_sample_nltk" / "wsj_sample_heads.dp")
                                         .read_text().splitlines(keepends=True)[:60]))
    (root / "ptb_from_0.dp").write_text("".join(  # each head but the root's one less: 0-based, as a converter writes
        line if line.count("\t") != 2 else "{}\t{}\t{}\n".format(*(fields := line.split("\t"))[:2], max(
            int(fields[2]) - 1, 0)) for line in (root / "ptb.dp").read_text().splitlines(keepends=True)))
    (root / "ptb.mrg").write_text("".join((rte.parent.parent / "ptb_wsj_sample_nltk" / "wsj_sample_combined.mrg")
                                          .read_text().splitlines(keepends=True)[:40]))
    curves = Path(__file__).resolve().parents[1] / "docs" / "curves"  # a run, its continuation, its first lines
    shutil.copy(curves / "english_long.jsonl", root / "long.jsonl")
    for name in ("anneal.jsonl", "anneal+v2.jsonl"):
        shutil.copy(curves / "english_anneal.jsonl", root / name)
    (root / "curve_start.jsonl").write_text("".join((curves / "english_long.jsonl").read_text().splitlines(True)[:3]))
    (root / "subtitles.srt").write_text("".join(  # each line a cue: its number, its times, its text
        f"{i + 1}\n00:00:{i:02},000 --> 00:00:{i + 1:02},000\n{line}\n\n" for i, line in enumerate(corpus_lines[:20])))
    (root / "corpus_then_subtitles.txt").write_text((root / "corpus.txt").read_text() + "\n" + (
        root / "subtitles.srt").read_text())  # (cat corpus.txt film.srt)
    (root / "corpus_csv.txt").write_text("".join(f'{i},"{line}",0\n' for i, line in enumerate(corpus_lines) if line))
    (root / "corpus_yaml.txt").write_text("".join(f'- text: "{line}"\n' for line in corpus_lines if line))
    (root / "corpus_fasttext.txt").write_text("".join(f"__label__{i % 2} {line}\n" for i, line in enumerate(corpus_lines)
                                                      if line))
    (root / "corpus_labelled.csv").write_text("sentence,label\n" + "".join(f"{line},{i % 2}\n" for i, line in
                                                                           enumerate(corpus_lines) if line))
    (root / "corpus_relabelled.txt").write_text("".join(  # another line label, and a page's number at each end
        f"<{i + 1}> {line}  {i + 1}\n" if line.strip() else "\n" for i, line in enumerate(corpus_lines)))
    (root / "curve_percent.jsonl").write_text("".join(  # accuracies in percent
        json.dumps({**p, "mlm_accuracy": 100 * p["mlm_accuracy"]}) + "\n" for p in map(json.loads, (
            curves / "english_anneal.jsonl").read_text().splitlines())))
    long_points = [json.loads(line) for line in (curves / "english_long.jsonl").read_text().splitlines()]
    (root / "curve_rebased.jsonl").write_text("".join(  # another run's baseline from line 3 on: two runs in one file
        json.dumps({**p, "mlm_unigram_baseline": p["mlm_unigram_baseline"] + 0.02 * (i >= 2)}) + "\n"
        for i, p in enumerate(long_points)))
    (root / "curve_utf16.jsonl").write_bytes((curves / "english_long.jsonl").read_text().encode("utf-16"))  # (PS >)
    (root / "curve_missed.jsonl").write_text("".join(  # an interval of another evaluation on line 2
        json.dumps({**p, "sop_accuracy_interval": [0.5, 0.52] if i == 1 else p["sop_accuracy_interval"]}) + "\n"
        for i, p in enumerate(long_points)))
    (root / "curve_cut.jsonl").write_text((curves / "english_long.jsonl").read_text()[:-40])  # its last line cut
    (root / "accents_alone.txt").write_text("The river ran past the mill.\n\u0301\u0308\n")  # (no piece left)
    (root / "huge_word.conllu").write_text("1\t" + "qzjvxkwq" * 40 + "\t_\tNOUN\tNN\t_\t0\troot\t_\t_\n\n")  # 320
    (root / os.fsdecode(b"s\xe9.txt")).write_text("The river ran past the mill.\n")  # (a Latin-1 system's name)
    (root / "corpus_piped.txt").write_text("".join(f"{i}| {line}\n" for i, line in enumerate(corpus_lines)))
    (root / "corpus_html.txt").write_text("".join(  # as a web page holds it
        f"<p>{line.replace(' ', '&nbsp;')}</p>\n" if line.strip() else "\n" for line in corpus_lines))
    (root / "corpus_twice.txt").write_text((root / "corpus.txt").read_text() * 2)
    (root / "cloze.txt").write_text("".join(f"The river ran past the _____ number {i} today.\n" for i in range(12)))
    (root / "gutenberg_indented.txt").write_text("".join(  # paragraphs begun by a tab, no blank line anywhere
        f"\tThe {i}th chapter opens on a cold morning.\nNobody in house {i} had slept well.\n" for i in range(60)))
    (root / "corpus_numbered.txt").write_text("".join(f"{i + 1:6}\t{line}\n" for i, line in enumerate(corpus_lines)))
    (root / "corpus_spoken.txt").write_text("".join(  # a dialogue: each line said by one of two speakers
        f"{('Ann', 'Dr. Bo')[i % 2]}: {line}\n" if line.strip() else "\n" for i, line in enumerate(corpus_lines)))
    ud = (rte.parent.parent / "ud_english_ewt" / "en_ewt-ud-dev.conllu").read_text().split("\n\n")[:40]
    (root / "ud40.conllu").write_text("\n\n".join(ud) + "\n\n")
    (root / "ud40_misc.conllu").write_text("\n\n".join("\n".join(  # MISC (SpaceAfter=No) blanked: the words read alike
        "\t".join(f.split("\t")[:9] + ["_"]) if f.count("\t") == 9 else f for f in s.split("\n")) for s in ud) + "\n\n")
    (root / "ud40_tail.conllu").write_text("\n\n".join(ud[1:]) + "\n\n")  # all but its first sentence
    ptb_tokens = {"(": "-LRB-", ")": "-RRB-", '"': "``"}  # (brackets and quotes as Penn Treebank writes them)
    (root / "ud40_lrb.conllu").write_text(re.sub(r'^(\d+)\t([()"])\t', lambda m: f"{m[1]}\t{ptb_tokens[m[2]]}\t",
                                                 "\n\n".join(ud) + "\n\n", flags=re.M))
    (root / "ud40_shy.conllu").write_text(re.sub(r"^(\d+)\t(\w{4})(\w{4,})\t", "\\1\t\\2\u00ad\\3\t",  # soft hyphens
                                                 "\n\n".join(ud) + "\n\n", flags=re.M))
    (root / "ud_run_on.conllu").write_text(ud[0] + "\n" + "\n\n".join(ud[1:]) + "\n\n")  # one blank line lost
    (root / "ud40_merged.conllu").write_text("\n\n".join(_merged_tree(ud[i], ud[i + 1]) for i in range(0, 40, 2)) + "\n\n")

    def with_head(sentence, word, head):  # word's HEAD (column 7) set to head
        rows = [r.split("\t") for r in sentence.split("\n")]
        row = next(r for r in rows if r[0] == str(word))
        row[6] = str(head)
        return "\n".join("\t".join(r) for r in rows)

    heads = {r.split("\t")[0]: r.split("\t")[6] for r in ud[0].split("\n") if not r.startswith("#")}
    root_word = int(next(w for w, h in heads.items() if h == "0"))
    child = int(next(w for w, h in heads.items() if h == str(root_word)))
    non_root = next(int(w) for w, h in heads.items() if w.isdigit() and h != "0")
    (root / "ud_2roots.conllu").write_text(with_head(ud[0], non_root, 0) + "\n\n")
    (root / "ud_cycle.conllu").write_text(with_head(ud[0], root_word, child) + "\n\n")  # root under its child
    (root / "latin1.txt").write_bytes("Caf\u00e9 au lait.\n".encode("latin-1"))
    train_rows = (rte / "train.tsv").read_text().splitlines(keepends=True)
    dev_rows = [row.rstrip("\n").split("\t") for row in (rte / "dev.tsv").read_text().splitlines(keepends=True)[1:]]
    for name, more in (("glue_doubled", train_rows[1:]), ("glue_dev_in_train", [  # the training file given twice;
            "\t".join([i, b.upper(), a.upper(), label] if int(i) % 2 else [i, "  " + a.replace(" ", "  "), b, label])
            + "\n" for i, a, b, label in dev_rows])):  # the dev rows added to it, swapped and upper-cased or re-spaced
        (root / name).mkdir()
        shutil.copy(rte / "dev.tsv", root / name / "dev.tsv")
        (root / name / "train.tsv").write_text("".join(train_rows + more))
    (root / "glue_train_is_dev").mkdir()
    shutil.copy(rte / "dev.tsv", root / "glue_train_is_dev" / "dev.tsv")
    (root / "glue_train_is_dev" / "train.tsv").symlink_to(root / "glue_train_is_dev" / "dev.tsv")
    (root / "utf16le.txt").write_bytes("A first line.\nA second one.\n".encode("utf-16-le"))
    (root / "unfinished_models" / "sts-b").mkdir(parents=True)  # a fine-tuning stopped in its first epoch
    (root / "unfinished_models" / "sts-b" / "classifier.json").write_text("{}")
    (root / "cjk.txt").write_text("".join(f"这是第{i}个句子，我们在测试。\n" + ("\n" if i % 10 == 9 else "")
                                          for i in range(200)), encoding="utf-8")  # a script no vocabulary here reads
    (root / "corpus.txt.gz").write_bytes(gzip.compress("A first line.\nA second one.\n".encode()))
    (root / "text.tfrecord").write_text("not a TFRecord at all\n")
    (root / "bad_head.conllu").write_text("1\tA\ta\tDET\tDT\t_\t2\tdet\t_\t_\n2\tdog\tdog\tNOUN\tNN\t_\t7\troot\t_\t_\n\n")
    sentences = (rte.parent.parent / "ud_english_ewt" / "en_ewt-ud-dev.conllu").read_text().split("\n\n")
    (root / "repeated.conllu").write_text("\n\n".join(sentences[5:6] * 30 + sentences[20:24]) + "\n\n")  # (one, 30 times)


LOOK_ALIKES = ("psql_table", "merges", "bert_vocab", "spm_vocab", "quoted_printable", "base64", "parallel",
               "wikitext", "corpus_json_head", "corpus_then_yaml")


def _look_alike_files(root, rte):
    """Files that only look like text (a psql table, a merges.txt, two vocabularies, quoted-printable and base64 text,
    a parallel corpus, raw wikitext), the corpus after two JSON examples and before YAML mapping lines; a run's own
    finetune_config.json in the folder it wrote, its paths relative to where it started ({tmp}/started)."""
    import base64

    corpus = (root / "corpus.txt").read_text()
    lines = [line for line in corpus.splitlines() if line.strip()]
    texts = {"psql_table": " id | text\n----+------\n" + "".join(f"  {i} | {line}\n" for i, line in enumerate(lines)),
             "merges": "#version: 0.2\n\u0120 t\n\u0120 a\nh e\ni n\n",
             "bert_vocab": "[PAD]\n[unused0]\n[unused1]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n",
             "spm_vocab": "<unk>\t0\n<s>\t0\n</s>\t0\n\u2581the\t-3.2\n\u2581of\t-3.9\n",
             "quoted_printable": "".join(  # a paragraph cut at 75 characters, soft breaks, a space before one =20
                 re.sub(" $", "=20", text[i:i + 75]) + "=\n" for text in [" ".join(lines)] for i in range(0, len(text), 75)),
             "base64": base64.encodebytes(corpus.encode()).decode(),
             "parallel": "".join(f"{line} ||| {line.upper()}\n" for line in lines),
             "wikitext": "{{Short description|A place}}\n'''Stone''' is a [[village]] in [[Kent]].\n\n== History ==\n",
             "corpus_json_head": '{"text": "An example record."}\n{"text": "Another record."}\n\n' + corpus,
             "corpus_then_yaml": corpus + "\n" + "".join(f'key_{i}: "{line}"\n' for i, line in enumerate(lines[:12]))}
    for name in LOOK_ALIKES:
        (root / f"{name}.txt").write_text(texts[name])
    (root / "started" / "ft").mkdir(parents=True)
    (root / "started" / "run").mkdir()  # (what its relative init names, from where it started)
    (root / "started" / "ft" / "finetune_config.json").write_text(json.dumps(
        {"task": "rte", "data_dir": str(rte), "init": "run", "output_dir": "ft", "epochs": 1}))


def _round_32_files(root, rte, records):
    """A tagger's output, a PDF, a BibTeX file, a CoNLL-U file's text lines, an SGML corpus, a CSV table inside prose,
    double-spaced text and a copy with news datelines; an --output_dir whose _incomplete/ is a link; a CoNLL-U file
    whose XPOS column holds UPOS tags; a killed data run's staging folder; held-out records that hold training ones
    (re-written: another file); a fine-tuning killed while --overwrite replaced a finished one."""
    import tensorflow as tf

    corpus = (root / "corpus.txt").read_text()
    lines = [line for line in corpus.splitlines() if line.strip()]
    texts = {"tagged_words": "".join(" ".join(f"{w}_NN" for w in line.split()) + "\n" for line in lines),
             "bibtex": "@article{smith2001,\n  title = {A study of rivers},\n  author = {Smith, John},\n}\n",
             "conllu_text": "".join(f"# text = {line}\n" for line in lines),
             "sgml": "<DOC>\n<DOCNO> AP880212-0001 </DOCNO>\n<TEXT>\n" + corpus + "</TEXT>\n</DOC>\n",
             "csv_inside": corpus + "\nYear,Team,Goals,Matches\n" + "".join(f"{2000 + i},Club {chr(65 + i)},{i},30\n" for i in range(
                 12)) + "\n" + corpus,
             "double_spaced": "".join(f"{line}\n\n" for line in lines),
             "datelines": "".join(f"LONDON (Reuters) - {line}\n" if line.strip() else "\n" for line in corpus.splitlines())}
    for name, text in texts.items():
        (root / f"{name}.txt").write_text(text)
    (root / "document.pdf").write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n")
    (root / "linked_staging").mkdir()
    (root / "linked_staging" / "_incomplete").symlink_to(root / "notes_dir")
    ud = (rte.parent.parent / "ud_english_ewt" / "en_ewt-ud-dev.conllu").read_text().split("\n\n")[:40]
    (root / "upos_in_xpos.conllu").write_text("\n\n".join("\n".join(  # XPOS (column 5) set to UPOS (column 4)
        "\t".join(f[:4] + [f[3]] + f[5:]) if len(f := r.split("\t")) == 10 else r for r in s.split("\n"))
        for s in ud) + "\n\n")
    (root / "staged_records" / "_incomplete").mkdir(parents=True)
    shutil.copy(sorted(Path(records[0]).parent.glob(Path(records[0]).name))[0],
                root / "staged_records" / "_incomplete" / "train-00000-of-00002.tfrecord")
    with tf.io.TFRecordWriter(str(root / "trained_held_out.tfrecord")) as writer:  # training records, rewritten
        for record in tf.data.TFRecordDataset(sorted(str(p) for p in Path(records[0]).parent.glob(
                Path(records[0]).name))).take(40):
            writer.write(record.numpy())
    aside = root / "killed_overwrite" / ".earlier_run"  # its finished fine-tuning set aside, the new one's first files
    aside.mkdir(parents=True)
    names = ["classifier.weights.h5", "finetune_config.json", "classifier.json", "vocab.model", "results.json"]
    for name in names:
        (aside / name).write_text("{}")
    (aside / "earlier.json").write_text(json.dumps({"names": names}))
    for name in ("classifier.json", "finetune_config.json"):
        (root / "killed_overwrite" / name).write_text("{}")
    for name, files in (("project", {"config.json": '{"name": "my project", "version": 2}'}),  # someone's config.json
                        ("hf_model", {"config.json": '{"model_type": "albert"}', "model.safetensors": "weights"})):
        (root / name).mkdir()
        for file, text in files.items():
            (root / name / file).write_text(text)


def _merged_tree(first, second):
    """One valid CoNLL-U tree of two: `second`'s words numbered on after `first`'s, its root under `first`'s root."""
    rows = [r.split("\t") for r in first.split("\n") if not r.startswith("#")]
    words = max(int(r[0]) for r in rows if r[0].isdigit())
    top = next(r[0] for r in rows if r[6] == "0")

    def shifted(ident):  # 3, 3-4 (a multiword token), 3.1 (an empty node)
        return re.sub(r"\d+", lambda m: str(int(m.group()) + words), ident, count=1 if "." in ident else 2)

    for r in (r.split("\t") for r in second.split("\n") if not r.startswith("#")):
        head = "_" if r[6] == "_" else top if r[6] == "0" else str(int(r[6]) + words)
        rows.append([shifted(r[0])] + r[1:6] + [head, r[7], "_"] + r[9:])
    return "\n".join(r for r in first.split("\n") if r.startswith("#")) + "\n" + "\n".join("\t".join(r) for r in rows)


def _damaged_weights(root, run, export):
    """A run whose newest checkpoint's index is corrupt (ckpt-2, a copy of ckpt-3, is intact), a run
    whose every checkpoint's data is truncated, an export whose variables fail their checksum."""
    def spoil(path, every=None):
        data = bytearray(path.read_bytes())
        for i in range(len(data) // 2, len(data), every or len(data)):
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))

    damaged, truncated = root / "damaged_index_run", root / "truncated_run"
    shutil.copytree(run, damaged)
    for part in (damaged / "checkpoints").glob("ckpt-3.*"):
        shutil.copy(part, part.with_name(part.name.replace("ckpt-3", "ckpt-2")))
    spoil(damaged / "checkpoints" / "ckpt-3.index")
    shutil.copytree(run, truncated)
    for part in (truncated / "checkpoints").glob("ckpt-*.data-*"):
        part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    shutil.copytree(export, root / "damaged_export" / "1")
    spoil(next((root / "damaged_export" / "1" / "variables").glob("variables.data-*")), every=997)
    for name in ("no_index_export", "cut_index_export"):  # the weights' index lost, or cut short: named as itself
        shutil.copytree(export, root / name / "1")
    (root / "no_index_export" / "1" / "variables" / "variables.index").unlink()
    index = root / "cut_index_export" / "1" / "variables" / "variables.index"
    index.write_bytes(index.read_bytes()[: index.stat().st_size // 2])
    shutil.copytree(export, root / "truncated_export" / "1")  # its weights cut short: named, not saved_model.pb
    data = next((root / "truncated_export" / "1" / "variables").glob("variables.data-*"))
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])


def _bad_records(root, records):
    """A shard without masked_lm_weights, a truncated copy of a real shard, a shard of length 128, a
    shard whose ids lie outside the tiny model's vocabulary of 400."""
    from pipelines import tf_example

    def example(length, weights=True, piece=9, predictions=10, segment=0, label=0, weights_as=None, mask=1, weight=1):
        features = {"input_ids": tf_example.int64_feature([2] + [piece] * (length - 2) + [3]),
                    "input_mask": tf_example.int64_feature([mask] * length),
                    "segment_ids": tf_example.int64_feature([0] * (length // 2) + [segment] * (length - length // 2)),
                    "masked_lm_positions": tf_example.int64_feature([1] * predictions),
                    "masked_lm_ids": tf_example.int64_feature([piece] * predictions),
                    "next_sentence_labels": tf_example.int64_feature([label])}
        if weights:
            features["masked_lm_weights"] = (weights_as or tf_example.float_feature)([weight] * predictions)
        return tf_example.serialize_example(features)

    import tensorflow as tf

    for name, record in (("no_weights", example(64, weights=False)), ("long", example(128)),
                         ("outside_ids", example(64, piece=999)), ("wide", example(64, predictions=13)),
                         ("three_segments", example(64, segment=2)), ("three_labels", example(64, label=2)),
                         ("int_weights", example(64, weights_as=tf_example.int64_feature)),
                         ("unmasked_input", example(64, mask=0)), ("no_masked", example(64, weight=0, predictions=15))):
        with tf.io.TFRecordWriter(str(root / f"{name}.tfrecord")) as writer:
            for _ in range(4):
                writer.write(record)
    with tf.io.TFRecordWriter(str(root / "real_no_masked.tfrecord")) as writer:  # real records, their weights all 0
        for raw in tf.data.TFRecordDataset(sorted(Path(records[1]).parent.glob(Path(records[1]).name))).take(14):
            parsed = tf.train.Example.FromString(raw.numpy())
            weights = parsed.features.feature["masked_lm_weights"].float_list.value
            weights[:] = [0.0] * len(weights)
            writer.write(parsed.SerializeToString())
    for name, early, late in (("mixed_lengths", 4, 4), ("late_mixed", 2001, 1), ("late_corrupt", 2100, 0)):
        with tf.io.TFRecordWriter(str(root / f"{name}.tfrecord")) as writer:  # (shards of two lengths joined by cat)
            for record in [example(64)] * early + [example(128)] * late:
                writer.write(record)
    late = bytearray((root / "late_corrupt.tfrecord").read_bytes())
    late[-100] ^= 0xFF  # a byte flipped in the last record, past the first 2,000 that the checks sample
    (root / "late_corrupt.tfrecord").write_bytes(bytes(late))
    first_train = sorted(Path(records[0]).parent.glob(Path(records[0]).name))[0]
    (root / "linked_eval.tfrecord").symlink_to(first_train)
    held = [raw.numpy() for raw in tf.data.TFRecordDataset([str(p) for p in sorted(
        Path(records[1]).parent.glob(Path(records[1]).name))])]  # and an eighth as many
    with tf.io.TFRecordWriter(str(root / "doubled.tfrecord")) as writer:  # the held-out shard joined with itself
        for raw in held + held:
            writer.write(raw)
    with tf.io.TFRecordWriter(str(root / "partly_trained.tfrecord")) as writer:  # training records after them
        for raw in held + [raw.numpy() for raw in tf.data.TFRecordDataset(str(first_train)).take(len(held) // 8 + 1)]:
            writer.write(raw)
    shutil.copy(first_train, root / "copied_eval.tfrecord")
    shard = first_train.read_bytes()
    (root / "truncated.tfrecord").write_bytes(shard[: len(shard) // 3 + 7])
    (root / "train.tfrecord.gz").write_bytes(gzip.compress(shard))  # compressed, as a bucket might hold it
    with tf.io.TFRecordWriter(str(root / "zlib.tfrecord"), tf.io.TFRecordOptions(compression_type="ZLIB")) as writer:
        for raw in tf.data.TFRecordDataset(str(first_train)).take(8):  # (TensorFlow's other compression)
            writer.write(raw.numpy())


def run_main(module, argv, capsys):
    """(exit status, message) of `python -m module argv`, run in-process; a RuntimeWarning (numpy's 'Mean of empty
    slice', printed with its source line to a user) is added to the message as the user would see it."""
    import warnings

    main = importlib.import_module(module).main
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        try:
            main(argv)
            status = 0
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 1
            if isinstance(exit_.code, str):
                print(exit_.code)
        finally:
            keras.config.set_dtype_policy("float32")
    captured = capsys.readouterr()
    shown = "".join(f"{w.filename}:{w.lineno}: RuntimeWarning: {w.message}\n" for w in caught
                    if issubclass(w.category, RuntimeWarning))
    return status, shown + captured.out + captured.err


# Served signatures, as a client (TensorFlow Serving's REST, a Python caller) may call them:
# (id, signature, inputs (name: (value, dtype)), message naming the input). Vocabulary of 400, length 64.
ROW = [[2, 5, 3]]
SERVED = [
    ("fill-mask-a-scalar", "fill_mask", {"text": ("a [MASK] b", "string")}, r"text_must_be_a_list_of_strings"),
    ("fill-mask-rank-2", "fill_mask", {"text": ([["a [MASK]"], ["b"]], "string")}, r"text_must_be_a_list_of_strings"),
    ("encoder-a-scalar", "encoder", {"text": ("a b", "string")}, r"text_must_be_a_list_of_strings"),
    ("encoder-rank-3", "serving_default", {"text": ([[["a"]]], "string")}, r"text_must_be_a_list_of_strings"),
    ("encoder-latin-1-bytes", "encoder", {"text": ([b"caf\xe9 au lait"], "string")}, r"text: a string is not valid UTF-8"),
    ("fill-mask-latin-1-bytes", "fill_mask", {"text": ([b"ok", b"the caf\xe9 [MASK]"], "string")},
     r"text: a string is not valid UTF-8"),
    *[(f"encoder-ids-{name}", "encoder_ids", {"token_ids": (ids, "int32"), "segment_ids": (segments, "int32"),
                                              "padding_mask": (mask, "int32")},
       message if "_must_" in message else f"encoder_ids: {message}")
      for name, ids, segments, mask, message in (
          ("length-0", [[]], [[]], [[]], r"token_ids has no positions \(length 0\)"),
          ("padding-all-zero", [[2, 5, 3], [2, 6, 3]], [[0] * 3] * 2, [[1] * 3, [0] * 3],
           r"a row of padding_mask is all 0"),
          ("outside-the-vocabulary", [[2, 400, 3]], [[0] * 3], [[1] * 3], r"token_ids holds an id outside the vocabulary of 400"),
          ("negative", [[2, -1, 3]], [[0] * 3], [[1] * 3], r"token_ids holds a negative id"),
          ("too-long", [[5] * 65], [[0] * 65], [[1] * 65], r"token_ids is longer than the 64 positions the model takes"),
          ("segments-shape", ROW, [[0] * 4], [[1] * 3], r"segment_ids must have the shape of token_ids"),
          ("segments-values", ROW, [[0, 2, 0]], [[1] * 3], r"segment_ids must hold only 0 and 1"),
          ("mask-values", ROW, [[0] * 3], [[1, 7, 1]], r"padding_mask must hold only 0 and 1"),
          ("mask-shape", ROW, [[0] * 3], [[1, 1]], r"padding_mask must have the shape of token_ids"),
          ("rank-1", [2, 5, 3], [0] * 3, [1] * 3, r"(token_ids|segment_ids|padding_mask)_must_be_rows_of_ids"))],
]


def test_the_catalogue_is_large_and_its_ids_unique():
    ids = [case[0] for case in CASES] + [case[0] for case in SERVED]
    assert len(ids) >= 250 and len(set(ids)) == len(ids) and SLOW_CASES <= set(ids)


@functools.lru_cache(maxsize=1)
def _loaded(export):
    import tensorflow as tf

    return tf.saved_model.load(export)


@pytest.mark.parametrize("case", SERVED, ids=[case[0] for case in SERVED])
def test_bad_served_input(case, places):
    """Refused in the graph (InvalidArgumentError) or by the signature's own input check (TypeError,
    ValueError), with a message that names the input: never an answer, never a bare graph error."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    _, name, inputs, message = case
    signature = _loaded(str(places["export"])).signatures[name]
    tensors = {k: tf.reshape(tf.constant(v, getattr(tf, dtype)), (1, 0)) if v == [[]] else tf.constant(v, getattr(tf, dtype))
               for k, (v, dtype) in inputs.items()}
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError, ValueError)) as raised:
        signature(**tensors)
    named = re.search(message, str(raised.value)) or re.search(
        r"Can not cast TensorSpec\(shape=\([\d, ]*\), dtype=tf.string, name='text'\)", str(raised.value))
    assert named, str(raised.value)[-1500:]


# Cases that run real work (an export, an analysis, a 2 MB corpus) or build a model before their refusal:
# `pytest -m slow` (the default run stays within its budget).
SLOW_CASES = {"data-a-2mb-line-in-16-shards", "pretrain-a-finished-run-given-its-own-vocabulary-copy",
              "analyze-jit-compile-a-gather-run", "export-cut-index-export", "export-damaged-export",
              "analyze-held-out-records-holding-training-text", "analyze-held-out-records-with-no-masked-piece",
              "pretrain-a-run-whose-own-vocabulary-copy-was-emptied", "analyze-reference-of-another-vocabulary",
              "analyze-records-of-another-vocabulary", "analyze-held-out-on-training-records",
              "pretrain-a-finished-run-evaluated-again-on-other-batches",
              "pretrain-records-of-another-vocabulary-with-damaged-stats", "analyze-sentences-in-another-script", "pretrain-no-export-and-overwrite-set-false",
              "bench-depth-probes-its-own-export-as-reference", "analyze-held-out-on-training-records-of-a-moved-export",
              "analyze-held-out-a-byte-flipped-past-the-sample", "analyze-held-out-records-partly-trained-on",
              "pretrain-resume-with-an-empty-checkpoint-state-file", "pretrain-a-finished-run-whose-curve-was-deleted",
              "analyze-held-out-records-whose-length-changes-past-the-sample", "analyze-held-out-a-shard-joined-with-itself",
              "analyze-sentences-truncated-export", "analyze-dependencies-conllu-forms-holding-soft-hyphens",
              "pretrain-some-of-a-data-runs-shards", "bench-data-throughput-too-little-text",
              "analyze-fixed-point-on-records-with-no-masked-piece", "analyze-difficulty-on-records-with-no-masked-piece",
              "analyze-report-on-real-records-with-no-masked-piece", "export-output-without-version", "pretrain-export-dir-without-version", "export-newest-checkpoint-damaged", "analyze-newest-checkpoint-damaged",
              "data-a-2mb-line", "tokenizer-a-2mb-line", "tokenizer-output-named-model", "tokenizer-output-named-vocab",
              "pretrain-resume-every-checkpoint-truncated", "pretrain-init-from-damaged-export",
              "pretrain-init-from-every-checkpoint-truncated", "finetune-every-checkpoint-truncated",
              "finetune-damaged-export", "huggingface-export-every-checkpoint-truncated", "analyze-damaged-export",
              "analyze-every-checkpoint-truncated", "finetune-halting-bias-on-an-act-model",
              "analyze-sentences-damaged-export", "submission-partial-glue-spelled-folder",
              "analyze-difficulty-against-itself", "analyze-cut-index-export", "finetune-no-index-export",
              "pretrain-cut-index-export", "pretrain-damaged-stats-of-the-right-vocabulary",
              "pretrain-export-being-written-by-another-run", "export-no-index-export",
              "bench-served-fill-mask-cut-index-export", "export-a-run-with-an-empty-checkpoint-state-file",
              "pretrain-records-without-their-report-on-a-larger-vocabulary",
              "bench-served-fill-mask-fewer-sentences-than-asked", "pretrain-config-with-a-byte-order-mark",
              "finetune-train-file-given-twice", "pretrain-export-written-by-another-run-meanwhile",
              "bench-adaptive-inference-trained-rows-at-their-records-length"}


def _one_override_per_key(argv):
    """`argv` without the base command's --override KEY=... of a KEY that the case overrides again (the command
    line refuses a key given twice)."""
    last = {argv[i + 1].partition("=")[0]: i for i, a in enumerate(argv[:-1]) if a == "--override"}
    drop = {i for i, a in enumerate(argv[:-1]) if a == "--override" and last[argv[i + 1].partition("=")[0]] != i}
    return [a for i, a in enumerate(argv) if i not in drop and i - 1 not in drop]


@pytest.mark.parametrize("case", [pytest.param(case, id=case[0], marks=[pytest.mark.slow] if case[0] in SLOW_CASES else [])
                                  for case in CASES])
def test_bad_input(case, places, capsys, monkeypatch):
    _, command, status, message, intact = case
    names = {k: str(v) for k, v in places.items()}
    if case[0] in FOLDER:
        monkeypatch.chdir(FOLDER[case[0]].format(**names))
    if case[0] in MEANWHILE:
        from albert_act.train import pretraining_run

        evaluate = pretraining_run.held_out
        monkeypatch.setattr(pretraining_run, "held_out", lambda *a, **k: (MEANWHILE[case[0]](names), evaluate(*a, **k))[1])
    module, *argv = command.format(**names).split()
    while "=" in module:  # NAME=VALUE before the module: the environment, as a shell sets it
        name, _, value = module.partition("=")
        monkeypatch.setenv(name, value)
        module, *argv = argv
    argv = _one_override_per_key([a.strip("'") for a in argv])
    kept = [Path(path.format(**names)) for path in intact]
    before = [_snapshot(path) for path in kept]
    try:
        actual_status, output = run_main(module, argv, capsys)
    finally:
        while _MEANWHILE_LOCKS:
            _MEANWHILE_LOCKS.pop().release()
    assert actual_status == status, output[-2000:]
    assert "RuntimeWarning" not in output, output[-2000:]  # (numpy's raw words, with their source lines)
    assert re.search(message, output, re.S), output[-2000:]
    assert [_snapshot(path) for path in kept] == before, intact
    while _LEFT_WHOLE:
        path, snapshot = _LEFT_WHOLE.pop()
        assert _snapshot(path) == snapshot, path


@pytest.mark.parametrize("module, name", [("albert_act.pretrain", "config.json"),
                                          ("albert_act.finetune", "finetune_config.json"),
                                          ("albert_act.export", "albert_act_export.json")])
def test_each_help_names_the_config_file_its_command_takes(module, name, capsys):
    """--help's --config names the one kind of file the command reads, and no other kind (which it refuses)."""
    status, output = run_main(module, ["--help"], capsys)
    config_help = re.search(r"\n  --config CONFIG_JSON(.*?)\n  --", output, re.S).group(1)
    names = re.findall(r"(?:finetune_config|albert_act_export|config)\.json", config_help)
    assert status == 0 and set(names) == {name}, config_help


def test_config_from_a_pipe_is_read_once(tmp_path):
    """`cat run.json | ... --config /dev/stdin`: the pipe is read once, and its settings apply (here the
    halting of the piped file, against which a flag is then refused; nothing written)."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-m", "albert_act.pretrain", "--config", "/dev/stdin", "--model_dir",
                          str(tmp_path / "run"), "--tau", "0.5"], input='{"seed": 3, "halting": "none"}', cwd=repo,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "--tau: --halting none runs every token to N_max" in run.stderr, run.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []


def test_a_command_run_as_a_file_says_how_to_run_it(tmp_path):
    """`python benchmarks/depth_knob.py`, as one types a path: each command is part of the package, whose imports
    fail from a file's own folder; one line gives its `python -m` form (no ModuleNotFoundError traceback)."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    commands = sorted(str(path.relative_to(repo)) for folder in ("albert_act", "pipelines", "benchmarks")
                      for path in (repo / folder).glob("*.py") if 'if __name__ == "__main__"' in path.read_text())
    assert len(commands) >= 25 and "benchmarks/depth_knob.py" in commands, commands
    for command in commands:
        run = subprocess.run([sys.executable, command, "--help"], cwd=repo, capture_output=True, text=True, timeout=60)
        module = command[:-3].replace("/", ".")
        assert run.returncode == 1 and run.stderr == (f"error: {command} is part of albert-act: run it from the "
                                                      f"repository root as python -m {module}\n"), (command, run.stderr)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_command_on_a_full_standard_output_writes_its_files(tmp_path):
    """`python -m pipelines.probing ... > /dev/full`: the four task files are written whole, and the one
    line names the standard output (it ended in a traceback from the closing print)."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    with open("/dev/full", "w") as full:
        run = subprocess.run([sys.executable, "-m", "pipelines.probing", "--synthetic_documents", "20", "--output_dir",
                              str(tmp_path / "tasks")], cwd=repo, stdout=full, stderr=subprocess.PIPE, text=True,
                             timeout=300)
    assert (run.returncode, run.stderr) == (1, "error: could not write the standard output: No space left on device; "
                                               "what the command printed from then on is lost, and its work went on "
                                               "to its end\n")
    assert sorted(path.name for path in (tmp_path / "tasks").iterdir()) == [
        "obj_number.txt", "past_present.txt", "subj_number.txt", "top_constituents.txt"]
    assert all(len(path.read_text().splitlines()) > 10 for path in (tmp_path / "tasks").iterdir())


def _snapshot(path):
    """The names and checksums under `path` (a file: its bytes' checksum), to compare before and after."""
    def checksum(file):
        return hashlib.sha256(file.read_bytes()).hexdigest()

    if path.is_file():
        return ("file", checksum(path))
    return sorted((str(p.relative_to(path)), checksum(p) if p.is_file() else "dir") for p in path.rglob("*"))


def test_the_errors_page_gives_the_catalogues_true_count():
    page = (Path(__file__).resolve().parents[1] / "docs" / "errors.md").read_text()
    stated = re.search(r"holds the catalogue \((\d+) cases", page)
    assert stated and int(stated.group(1)) == len(CASES), (stated and stated.group(1), len(CASES))


def test_a_closed_standard_stream_stops_nothing(monkeypatch):
    """A command started with `>&-` or `2>&-` (sys.stdout or sys.stderr None): the progress falls back to
    plain lines (which go nowhere), and the quiet start has no stderr to quiet (it raised AttributeError)."""
    import sys

    from albert_act.base import bars, cli

    monkeypatch.setattr(sys, "stdout", None)
    assert isinstance(bars.progress_bar(10), bars.LogLines)
    monkeypatch.setattr(sys, "stderr", None)
    with cli._stderr_to_devnull():
        pass


def test_a_closed_standard_output_is_held_and_a_stop_still_says_its_line():
    """With descriptor 1 closed (`>&-`) the next file opened took number 1, and a stop's flush of the
    None stdout raised AttributeError (a traceback, or nothing where stderr was quieted): /dev/null
    holds number 1, and the stop gives its line and 130."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    held = subprocess.run([sys.executable, "-c", "import os; os.close(1); from albert_act.base import cli; "
                           "cli.hold_closed_descriptors(); os.write(2, str(os.open(os.devnull, os.O_RDONLY)).encode())"],
                          cwd=repo, capture_output=True, text=True, timeout=60)
    assert (held.returncode, held.stderr) == (0, "3")
    stop = subprocess.run([sys.executable, "-c", "import sys; from albert_act.base import cli; sys.stdout = None; "
                           "cli._stop_now()"], cwd=repo, capture_output=True, text=True, timeout=60)
    assert (stop.returncode, stop.stderr) == (130, "stopped: before any work: nothing was written\n")


def test_ctrl_c_while_the_interpreter_tears_down_after_the_command_ended_is_no_failure(tmp_path):
    """Python restores the default handlers before it tears its modules down: Ctrl-C there (an export had
    printed its result; TensorFlow's teardown takes a second) killed the process with status 130 and no line.
    A command's stops are ignored from its last exit handler on: it ends as it did (0), its output whole."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    code = ("import os, signal, time\nfrom albert_act.base import cli, entry\nclass Late:\n"
            "    def __del__(self, os=os, signal=signal, sleep=time.sleep):  # in the modules' teardown, after "
            "Python's signal handlers are gone\n"
            "        os.kill(os.getpid(), signal.SIGINT); sleep(0.3)\n"
            f"        os.write(os.open({str(tmp_path / 'after')!r}, os.O_WRONLY | os.O_CREAT), b'torn down')\n"
            "late = Late()\ndef main():\n    cli.stop_on_interrupt(); print('result')\nentry.run(main)\n")
    ended = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=60)
    assert (ended.returncode, ended.stdout, ended.stderr) == (0, "result\n", "")
    assert (tmp_path / "after").read_text() == "torn down"


def test_a_stop_during_a_commands_own_imports_says_its_line():
    """`python -m pipelines.create_pretraining_data` imports numpy and sentencepiece before its main() runs:
    Ctrl-C there was a KeyboardInterrupt traceback. The handler is installed as albert_act.base.cli is imported
    by one of the project's commands (runpy names it in __main__ first); imported elsewhere, it is not."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    code = ("import os, signal, sys, time, types\n"
            "sys.modules['__main__'].__spec__ = types.SimpleNamespace(name={name!r})  # as runpy sets it\n"
            "from albert_act.base import cli\n"
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)\n"
            "os.kill(os.getpid(), signal.SIGINT); time.sleep(5)\n")
    command = subprocess.run([sys.executable, "-c", code.format(name="pipelines.create_pretraining_data")], cwd=repo,
                             capture_output=True, text=True, timeout=60)
    assert (command.returncode, command.stdout, command.stderr) == (
        130, "False\n", "stopped: before any work: nothing was written\n")
    notebook = subprocess.run([sys.executable, "-c", code.format(name="ipykernel_launcher")], cwd=repo,
                              capture_output=True, text=True, timeout=60)
    assert notebook.stdout == "True\n" and "KeyboardInterrupt" in notebook.stderr


def test_a_benchmarks_table_is_not_dropped_without_a_word(monkeypatch, capsys):
    """A benchmark started with its standard output closed (`>&-`: sys.stdout is None, and print() drops
    everything) is refused; a table that cannot be written (`> /dev/full`) names the standard output."""
    import errno
    import sys

    from benchmarks import arguments

    def table():
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(SystemExit, match=r"^error: could not write the standard output: No space left on device; "
                                         r"nothing was written$"):
        arguments.run(table)
    monkeypatch.setattr(sys, "stdout", None)
    with pytest.raises(SystemExit, match="error: the standard output is closed: the benchmark prints its table there"):
        arguments.run(table)


class _Failing:
    """A standard output whose writes fail with `number` (errno) from the `after`-th on."""

    def __init__(self, descriptor, number, after=0):
        self.descriptor, self.number, self.after, self.written = descriptor, number, after, []

    def write(self, text):
        if len(self.written) >= self.after:
            raise OSError(self.number, os.strerror(self.number))
        self.written.append(text)
        return len(text)

    def flush(self):
        pass

    def fileno(self):
        return self.descriptor

    def isatty(self):
        return False


def test_a_standard_output_that_fails_loses_its_lines_not_the_work(tmp_path, monkeypatch, capsys):
    """`> /dev/full`: the work goes on to its end, its later lines go nowhere (the descriptor to
    /dev/null), and one line names the standard output, with status 1 where the work ended with 0;
    as for a pipe whose reader ended (`| head -1`)."""
    import errno
    import sys

    from albert_act.base import entry

    descriptor = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT)
    stream = _Failing(descriptor, errno.ENOSPC, after=1)
    monkeypatch.setattr(sys, "stdout", stream)
    done = []

    def main():
        print("first")
        print("second")
        done.append(True)

    with pytest.raises(SystemExit) as ended:
        entry.run(main)
    os.write(descriptor, b"to /dev/null")
    assert (ended.value.code, done, stream.written, (tmp_path / "out").read_text()) == (1, [True], ["first"], "")
    assert capsys.readouterr().err == ("error: could not write the standard output: No space left on device; what "
                                       "the command printed from then on is lost, and its work went on to its end\n")
    monkeypatch.setattr(sys, "stdout", _Failing(descriptor, errno.ENOSPC))
    with pytest.raises(SystemExit) as ended:
        entry.run(lambda: sys.exit(print("a line") or "error: a refusal"))
    assert ended.value.code == "error: a refusal" and capsys.readouterr().err == (
        "error: could not write the standard output: No space left on device; what the command printed from then on "
        "is lost\n")
    monkeypatch.setattr(sys, "stdout", _Failing(descriptor, errno.ENOSPC))

    def fails():
        print("a line")
        raise RuntimeError("a bug of the command's own")

    with pytest.raises(RuntimeError, match="a bug of the command's own"):  # not hidden behind exit 1
        entry.run(fails)
    assert capsys.readouterr().err == ("error: could not write the standard output: No space left on device; what "
                                       "the command printed from then on is lost\n")
    monkeypatch.setattr(sys, "stdout", _Failing(descriptor, errno.EPIPE))
    with pytest.raises(SystemExit) as ended:
        entry.run(main)
    assert (ended.value.code, len(done)) == (1, 2)
    assert capsys.readouterr().err.startswith("error: could not write the standard output: Broken pipe; what the "
                                              "command printed from then on is lost, and its work went on to its end")
    assert entry.lost_line() is None
    os.close(descriptor)


@pytest.mark.parametrize("module", ["albert_act.pretrain", "albert_act.finetune", "albert_act.analyze",
                                    "benchmarks.cost_model"])
@pytest.mark.parametrize("backend", ["torch", "bogus"])
def test_commands_refuse_a_keras_backend_they_do_not_run_on(module, backend, monkeypatch, capsys):
    """KERAS_BACKEND=torch (or a typo) is named in one line before Keras loads (Keras's refusal is a
    traceback from its import; torch is not even installed here)."""
    monkeypatch.setenv("KERAS_BACKEND", backend)
    status, output = run_main(module, [], capsys)
    assert (status, output.strip()) == (1, f"error: KERAS_BACKEND says the backend is {backend!r} here: albert-act "
                                           "runs on Keras's tensorflow backend, and pre-training also on jax "
                                           "(KERAS_BACKEND=jax); set KERAS_BACKEND to one of those")


@pytest.mark.parametrize("module", ["albert_act.finetune", "albert_act.analyze", "albert_act.export",
                                    "albert_act.glue_submission", "benchmarks.glue_small", "benchmarks.served_depth",
                                    "benchmarks.probing_small", "benchmarks.depth_probes"])
@pytest.mark.parametrize("said", ["KERAS_BACKEND", "keras.json"])
def test_tensorflow_commands_refuse_the_jax_backend_up_front(module, said, monkeypatch, capsys, tmp_path):
    """A shell that still exports KERAS_BACKEND=jax after a JAX pre-training, or a keras.json (KERAS_HOME, ~/.keras)
    that says jax (round 31 F086, F087: a traceback): the commands that build TensorFlow graphs say so in one line,
    before any work (they ended in a traceback deep in Keras)."""
    if said == "KERAS_BACKEND":
        monkeypatch.setenv("KERAS_BACKEND", "jax")
    else:
        monkeypatch.delenv("KERAS_BACKEND", raising=False)
        monkeypatch.setenv("KERAS_HOME", str(tmp_path))
        (tmp_path / "keras.json").write_text('{"backend": "jax"}')
        said = str(tmp_path / "keras.json")
    status, output = run_main(module, ["--help-is-not-reached"], capsys)
    assert status == 1
    assert output.strip().endswith(f"runs on Keras's TensorFlow backend, and {said} says jax here: run it with "
                                   "KERAS_BACKEND=tensorflow (pre-training, python -m albert_act.pretrain, runs on "
                                   "both; its checkpoints are read here alike)"), output


def test_a_hidden_flag_stays_hidden_in_help():
    """A flag hidden from --help (argparse.SUPPRESS) gets no range appended: update_profile's
    --micro_batch showed as "==SUPPRESS==; an integer >= 1"."""
    import argparse

    from albert_act.base import cli

    parser = cli.parser("x", "doc")
    parser.add_argument("--hidden", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--shown", type=int, default=2)
    cli.parse_checked(parser, [], {"hidden": "int>=1", "shown": "int>=1"})
    text = parser.format_help()
    assert "SUPPRESS" not in text and "--hidden" not in text and "(default: 2); an integer >= 1" in text


def test_a_stop_that_a_library_turned_into_its_own_error_is_a_stop(capsys):
    """Ctrl-C inside Keras's symbolic build of a model came back as Keras's ValueError ("Could not automatically
    infer the output shape"): with the signal pending, the work ends with its stop line and status 130, not as a
    refusal of the input."""
    from albert_act.base import cli

    with pytest.raises(SystemExit) as ended:
        with cli.failures(None, "kept", "0 of 18 grid points finished"):
            cli._PENDING[0] = 2  # (as `_interrupt` sets it, raising KeyboardInterrupt into the library)
            raise ValueError("Exception encountered when calling AdaptiveDepthEncoder.call()")
    assert ended.value.code == 130 and capsys.readouterr().err == "stopped: 0 of 18 grid points finished\n"
    assert cli._PENDING[0] is None
    with pytest.raises(SystemExit, match="^error: a bad value$"):
        with cli.failures(None, "kept", "stopped"):
            raise ValueError("a bad value")
