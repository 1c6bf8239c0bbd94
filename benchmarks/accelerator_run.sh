#!/usr/bin/env bash
# One prepared window on a machine with an accelerator and JAX but no TensorFlow (and nothing to
# download): everything a first GPU window should measure, in about 10 minutes, results in $OUT.
#
#   1. installs the carried wheels (keras, namex, optree) and checks that JAX sees the accelerator;
#   2. the backend parity check: this model's outputs, iterations and gradients on the accelerator
#      against a TensorFlow reference written on the CPU (benchmarks/backend_parity.py);
#   3. the throughput table: pieces/s and MFU of whole updates, fixed depth and ACT, float32 and
#      mixed bfloat16, widths 128 to 768 (benchmarks/jax_throughput.py);
#   4. a training leg: the english preset at width $LEG_WIDTH on the carried token corpus for at most
#      $LEG_SECONDS; its config, held-out curve and weights (a JAX run dir that
#      `python -m albert_act.export --checkpoint` reads on a machine with TensorFlow).
#
# Prepared beside the checkout (docs/accelerators.md gives the commands), all under .accelerator/:
#   wheels/*.whl        keras, namex, optree for the accelerator's Python
#   parity/             python -m benchmarks.backend_parity --write .accelerator/parity
#   english/            vocab.model, train/tokens-train.npz, valid/tokens-train.npz (the data tool's)
# Run: bash benchmarks/accelerator_run.sh      (OUT defaults to runs/accelerator)
# On a CPU with keras and jax installed it runs too (no wheels needed), which is how it is tested:
#   WIDTHS="32" PRECISIONS="float32" LEG_WIDTH=32 LEG_STEPS=4 bash benchmarks/accelerator_run.sh
set -uo pipefail
cd "$(dirname "$0")/.."
PREPARED=${PREPARED:-.accelerator}
OUT=${OUT:-runs/accelerator}
WIDTHS=${WIDTHS:-128 256 512 768}
PRECISIONS=${PRECISIONS:-float32 mixed_bfloat16}
THROUGHPUT_BATCH=${THROUGHPUT_BATCH:-64}
LEG_WIDTH=${LEG_WIDTH:-256}
LEG_STEPS=${LEG_STEPS:-4000}
LEG_SECONDS=${LEG_SECONDS:-240}
# The leg's flags beyond the preset: one micro-batch of 128 per update, bfloat16, and the depth recipe.
LEG_FLAGS=${LEG_FLAGS:---global_batch_size 128 --micro_batch_size 128 --precision mixed_bfloat16}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
export KERAS_BACKEND=jax PYTHONUNBUFFERED=1
say() { echo "== $(date +%H:%M:%S) $*" | tee -a "$LOG"; }

say "1. wheels and devices"
if ls "$PREPARED"/wheels/*.whl > /dev/null 2>&1; then
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        "$PREPARED"/wheels/*.whl || exit 1
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
"$PYTHON" -c "import jax, keras; print('jax', jax.__version__, 'keras', keras.__version__, jax.devices())" 2>&1 | tee -a "$LOG"

say "2. parity against the TensorFlow reference"
if [ -d "$PREPARED/parity" ]; then
    "$PYTHON" -m benchmarks.backend_parity --check "$PREPARED/parity" 2>&1 | tail -1 | tee "$OUT/parity.json" | tee -a "$LOG"
else
    echo "no $PREPARED/parity (python -m benchmarks.backend_parity --write $PREPARED/parity on a TensorFlow machine)" | tee -a "$LOG"
fi

say "3. throughput"
# shellcheck disable=SC2086
timeout 330 "$PYTHON" -m benchmarks.jax_throughput --widths $WIDTHS --precisions $PRECISIONS \
    --batch "$THROUGHPUT_BATCH" 2>&1 | tee -a "$LOG" | grep -E "^(device|\|)" > "$OUT/throughput.md"

say "4. training leg: english at width $LEG_WIDTH, at most ${LEG_SECONDS}s"
RUN="$OUT/run"
if [ -f "$PREPARED/english/train/tokens-train.npz" ]; then
    HEADS=$(( LEG_WIDTH / 64 > 2 ? LEG_WIDTH / 64 : 2 ))
    # shellcheck disable=SC2086
    timeout --signal=INT "$LEG_SECONDS" "$PYTHON" -m albert_act.pretrain --preset english \
        --train_files "$PREPARED/english/train/tokens-train.npz" --eval_files "$PREPARED/english/valid/tokens-train.npz" \
        --vocab "$PREPARED/english/vocab.model" --model_dir "$RUN" --execution static \
        --override hidden_dim="$LEG_WIDTH" --override num_heads="$HEADS" --override intermediate_dim=$(( 4 * LEG_WIDTH )) \
        --steps "$LEG_STEPS" --warmup_steps $(( LEG_STEPS / 20 )) --eval_every 500 --checkpoint_every 100 \
        --keep_checkpoints 1 $LEG_FLAGS 2>&1 | tail -60 >> "$LOG"
    # The newest checkpoint's weights and tau alone (LAMB's state would triple the file): what export reads.
    "$PYTHON" - "$RUN" <<'EOF' 2>&1 | tee -a "$LOG"
import os, sys
import numpy as np
run = sys.argv[1]
folder = os.path.join(run, "checkpoints")
names = sorted((n for n in os.listdir(folder) if n.startswith("jax-") and n.endswith(".npz")),
               key=lambda n: int(n[4:-4])) if os.path.isdir(folder) else []
if names:
    path = os.path.join(folder, names[-1])
    with np.load(path) as data:
        kept = {k: data[k] for k in data.files if not k.startswith("optimizer/")}
    np.savez(path + ".weights", **kept)
    os.replace(path + ".weights.npz", path)
    print(f"weights of {names[-1]} kept in {path} ({os.path.getsize(path) / 2**20:.1f} MiB)")
    final = os.path.join(run, "model.weights.h5")  # the same weights again: the 8 files that come back are these
    if os.path.exists(final):
        os.remove(final)
else:
    print("no checkpoint written")
EOF
else
    echo "no $PREPARED/english/train/tokens-train.npz: no training leg" | tee -a "$LOG"
fi
say "done: $(ls -R "$OUT" | tr '\n' ' ')"
