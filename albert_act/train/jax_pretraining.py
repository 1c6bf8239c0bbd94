"""Pre-training on Keras 3's JAX backend, where TensorFlow is absent (a GPU or TPU host with JAX).

    KERAS_BACKEND=jax python -m albert_act.pretrain --preset english --train_files 'DATA/train-*.tfrecord' ...

The same run as the TensorFlow one (`albert_act.train.pretraining_run`), from the same command line: `PretrainConfig`
and its presets; the model (bucket is `albert_act.model.switched_halting` here, gather runs as bucket and while as
static: the same numbers); the loss (`losses.Objective`); LAMB with ALBERT's maths and the halting unit's settings
(`lamb.run_optimizer`); the schedule; tau's ramp, --tau auto and --target_iterations (`ponder`); micro-batches summed
with the whole update's masked-token and sequence counts; the held-out evaluation (`pretraining_summaries`: the same
numbers, intervals and depth line), held_out.jsonl, evaluation.json and config.json. What differs:
- input: the data tool's token corpus in the folder of each TFRecord pattern (train-* -> tokens-train.npz, eval-* ->
  tokens-eval.npz; `pipelines.token_corpus`), the same instances made on the fly, fresh masks once the dupe factor's
  passes are read; held out: once, pairs only;
- checkpoints: <model_dir>/checkpoints/jax-<update>.npz (weights, LAMB's state, tau, the input's position), written
  whole; re-running the command resumes exactly; at the end, <model_dir>/model.weights.h5 (Keras', any backend's);
- data parallelism: each micro-batch's rows are split over the host's devices (one mesh axis, "batch"; XLA's SPMD
  partitioner sums the gradients), as MirroredStrategy splits them; no TensorBoard events (the curve: held_out.jsonl).
"""

import os
import time

import jax
import jax.numpy as jnp
import keras
import numpy as np

from albert_act import distribution
from albert_act.base import artifacts, bars, outputs, text_files
from albert_act.io.newest_intact import NPZ_READ_ERRORS, finite, newest_intact
from albert_act.model.halting import ponder_weight_in_force
from albert_act.train.ponder import AUTO_SHARE, held_depth, ponder_ramp, steered_tau
from albert_act.train.pretraining_config import ADDED_SETTINGS, AUTO, accumulation, config_record, run_parts
from albert_act.train.resumption import another_run, changed_settings, check_results_kept, check_run_entries, run_record
from albert_act.train.pretraining_summaries import (depth_line, depth_spread, depth_sums_of, evaluation_sums,
                                                    held_out_curve, one_depth_warning, summarize)
from pipelines import token_corpus

SUM_KEYS = ("mlm_loss_sum", "mlm_objective_sum", "mlm_correct", "mlm_weight", "sop_loss_sum", "sop_correct",
            "ponder_cost_sum", "kl_sum", "examples", "overflows")


class JaxPretrainer:
    """The model, LAMB, tau and the compiled update and evaluation for one resolved `PretrainConfig`."""

    def __init__(self, config):
        self.config = config
        self.devices = jax.local_devices()
        self.kind = jax.default_backend()  # "cpu", "gpu" or "tpu"
        self.accumulation = accumulation(config, len(self.devices))
        self.precision = distribution.resolve_precision(config.precision, self.kind)
        # gather's dynamic widths become bucket's static ones (switched_halting), while's loop the static one:
        # the same numbers, and what XLA compiles on JAX
        execution = {"gather": "bucket", "while": "static"}.get(config.execution, config.execution)
        self.objective, self.backbone, self.model, self.schedule, self.optimizer = run_parts(config, execution)
        self.tau = -1.0 if config.ponder_cost_weight == AUTO else float(config.ponder_cost_weight)
        self.tau_proportional = 0.0
        self.train_corpus, self.trained_on = None, ""  # fingerprints: this run's training corpus, a checkpoint's
        self.state = {"trainable": [v.value for v in self.model.trainable_variables],
                      "non_trainable": [v.value for v in self.model.non_trainable_variables],
                      "optimizer": [v.value for v in self.optimizer.variables]}
        self.mesh = jax.sharding.Mesh(np.asarray(self.devices), ("batch",)) if len(self.devices) > 1 else None
        self._update, self._evaluate = jax.jit(self._update_fn), jax.jit(self._evaluate_fn)

    # --- tau (the TensorFlow run's rules, `albert_act.train.ponder`) -------------------------------

    def tau_at(self, update):
        """tau applied at 0-based update `update`: the weight in force times the warm-up ramp."""
        config, signed = self.config, self.config.target_control == "signed"
        stored = self.tau + self.tau_proportional if signed else self.tau
        ramp = float(ponder_ramp(update, config.ponder_warmup_start, config.ponder_warmup_steps))
        return float(ponder_weight_in_force(stored, config.halting, signed)) * ramp

    def after_update(self, update, result):
        """--tau auto's calibration on the update where the ponder cost starts, then --target_iterations'
        steering after every update; returns a line to print, or None."""
        config = self.config
        if config.halting != "none" and config.ponder_cost_weight == AUTO and self.tau < 0 and \
                update >= max(config.ponder_warmup_start, 1):
            self.tau = AUTO_SHARE * (result["mlm_loss"] + result["sop_loss"]) / max(result["ponder_cost"], 1e-6)
            return f"--tau auto at update {update}: tau = {self.tau:.3g}"
        if config.target_iterations is not None and update > config.ponder_warmup_start:
            self.tau, self.tau_proportional = steered_tau(
                self.tau, held_depth(result, config.target_pieces) - config.target_iterations, config.target_control,
                AUTO_SHARE * (result["mlm_loss"] + result["sop_loss"]) / max(result["ponder_cost"], 1e-6))
        return None

    # --- the compiled functions ----------------------------------------------------------------------

    def _loss(self, trainable, non_trainable, inputs, labels, mlm_weight, examples, tau):
        outputs, non_trainable = self.model.stateless_call(trainable, non_trainable, inputs, training=True)
        sums = self.objective.sums(outputs, labels)
        loss = self.objective.losses(sums, mlm_weight, examples, tau)["loss"]
        sums["depth"] = jnp.sum(depth_sums_of(outputs, inputs, labels), axis=0)
        sums["overflows"] = jnp.sum(outputs["overflows"])
        return loss, (sums, non_trainable)

    def _update_fn(self, state, batch, tau):
        """One optimizer update from a global batch whose arrays are (accumulation, rows, ...)."""
        inputs, labels = batch
        mlm_weight = jnp.sum(labels["masked_lm_weights"])  # the whole update's: global denominators
        examples = float(self.config.global_batch_size)
        gradient_of = jax.value_and_grad(self._loss, has_aux=True)

        def micro_step(carry, micro):
            gradients, sums, non_trainable = carry
            (_, (micro_sums, non_trainable)), micro_gradients = gradient_of(
                state["trainable"], non_trainable, *micro, mlm_weight, examples, tau)
            gradients = [a + g for a, g in zip(gradients, micro_gradients)]
            return (gradients, {k: sums[k] + micro_sums[k] for k in sums}, non_trainable), None

        zero_sums = {k: jnp.zeros(()) for k in SUM_KEYS}
        zero_sums["depth"] = jnp.zeros((7, 5))  # token_types.TOKEN_TYPES x PARTS
        zeros = [jnp.zeros_like(v) for v in state["trainable"]]
        (gradients, sums, non_trainable), _ = jax.lax.scan(micro_step, (zeros, zero_sums, state["non_trainable"]),
                                                           (inputs, labels))
        norm = jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in gradients))
        scale = jnp.minimum(1.0, self.config.clip_norm / jnp.maximum(norm, 1e-12))
        trainable, optimizer = self.optimizer.stateless_apply(state["optimizer"], [g * scale for g in gradients],
                                                              state["trainable"])
        sums["gradient_norm"] = norm
        return {"trainable": trainable, "non_trainable": non_trainable, "optimizer": optimizer}, sums

    def _evaluate_fn(self, state, inputs, labels):
        variables = self.model.trainable_variables + self.model.non_trainable_variables
        with keras.StatelessScope(state_mapping=list(zip(variables, state["trainable"] + state["non_trainable"]))):
            return evaluation_sums(self.model, inputs, labels, self.objective)

    # --- what a step is given ------------------------------------------------------------------------

    def shard(self, batch):
        """The batch's rows split over the devices (axis 1 of (accumulation, rows, ...) arrays)."""
        if self.mesh is None:
            return batch
        spec = jax.sharding.NamedSharding(self.mesh, jax.sharding.PartitionSpec(None, "batch"))
        return jax.tree_util.tree_map(lambda a: jax.device_put(a, spec), batch)

    def update(self, batch, update):
        """Update `update` (0-based) from a global batch of (inputs, labels) arrays; the summed sums (numpy)."""
        split = jax.tree_util.tree_map(lambda a: a.reshape(self.accumulation, -1, *a.shape[1:]), batch)
        self.state, sums = self._update(self.state, self.shard(split), jnp.float32(self.tau_at(update)))
        return {k: np.asarray(v) for k, v in sums.items()}

    def evaluate(self, corpus_path, update):
        """The held-out evaluation (`summarize`d, as the TensorFlow run's) on a token corpus, once, pairs only."""
        stream = token_corpus.InstanceStream(token_corpus.TokenCorpus(corpus_path), held_out=True)
        totals, per_sequence = None, ("depth", "accuracy")
        batch_size = self.config.micro_batch_size * len(self.devices)
        for i, batch in enumerate(iter(lambda: stream.batch(batch_size), None)):
            if self.config.eval_batches is not None and i >= self.config.eval_batches:
                break
            sums = {k: np.asarray(v) for k, v in self._evaluate(self.state, *batch).items()}
            totals = sums if totals is None else {
                k: np.concatenate([totals[k], sums[k]]) if k in per_sequence else totals[k] + sums[k] for k in totals}
        if totals is None:
            raise ValueError(f"no held-out instances in {corpus_path}")
        result = summarize(totals, self.tau_at(max(update - 1, 0)), self.objective.kl_weight)
        unit = self.backbone.encoder.halting_unit
        if unit is not None:
            self.sync_model()
            result["halting_unit"] = {"kernel_norm": float(np.linalg.norm(np.asarray(unit.dense.kernel.value))),
                                      "bias": float(np.asarray(unit.dense.bias.value)[0])}
        return result

    def sync_model(self):
        """The Keras variables set to the state's values (for saving the weights)."""
        for variable, value in zip(self.model.trainable_variables, self.state["trainable"]):
            variable.assign(value)
        for variable, value in zip(self.model.non_trainable_variables, self.state["non_trainable"]):
            variable.assign(value)

    # --- checkpoints ---------------------------------------------------------------------------------

    def save(self, directory, update, position, keep):
        """checkpoints/jax-<update>.npz, written whole (a file beside it, renamed); the newest `keep` kept."""
        artifacts.check_run_in_place(directory, f"the checkpoint of update {update}")
        folder = os.path.join(directory, artifacts.CHECKPOINTS)
        text_files.makedirs(folder)
        arrays = {f"trainable/{v.path}": np.asarray(a) for v, a in zip(self.model.trainable_variables,
                                                                       self.state["trainable"])}
        arrays.update({f"non_trainable/{v.path}": np.asarray(a)
                       for v, a in zip(self.model.non_trainable_variables, self.state["non_trainable"])})
        arrays.update({f"optimizer/{i}": np.asarray(a) for i, a in enumerate(self.state["optimizer"])})
        arrays.update(update=np.int64(update), position=np.asarray(position, np.int64),
                      tau=np.float64(self.tau), tau_proportional=np.float64(self.tau_proportional),
                      train_corpus=np.str_(self.train_corpus or ""))
        path = os.path.join(folder, f"{artifacts.JAX_CHECKPOINT_PREFIX}{update}.npz")
        partial = path + ".partial"
        try:
            with open(partial, "wb") as f:
                np.savez(f, **arrays)
            os.replace(partial, path)
        finally:  # (a full disk, a stop: no leftover that fills the disk again on the re-run)
            if os.path.exists(partial):
                os.remove(partial)
        for old in sorted(checkpoints(directory))[:-keep]:
            os.remove(checkpoints(directory)[old])

    def restore(self, path, update=None):
        """The state of checkpoint `path` (of update `update`, its name's); returns (update, input
        position). ValueError for one of another model, with non-finite values, or of another update."""
        def read(data, key, variable):
            array = finite(key, data[key])
            if tuple(array.shape) != tuple(variable.shape):
                raise ValueError(f"{key} has shape {tuple(array.shape)}, the model's {tuple(variable.shape)}: "
                                 "a checkpoint of another model")
            return jnp.asarray(array)

        with np.load(path, allow_pickle=False) as data:
            self.state = {
                "trainable": [read(data, f"trainable/{v.path}", v) for v in self.model.trainable_variables],
                "non_trainable": [read(data, f"non_trainable/{v.path}", v) for v in self.model.non_trainable_variables],
                "optimizer": [read(data, f"optimizer/{i}", v) for i, v in enumerate(self.optimizer.variables)]}
            self.tau, self.tau_proportional = (float(finite(key, data[key])) for key in ("tau", "tau_proportional"))
            if update not in (None, int(data["update"])):
                raise ValueError(f"it says update {int(data['update'])}, its name {update}")
            self.trained_on = str(data["train_corpus"]) if "train_corpus" in data.files else ""
            return int(data["update"]), tuple(int(x) for x in data["position"])


def checkpoints(directory):
    """{update: path} of a JAX run's checkpoints."""
    return artifacts.jax_checkpoints_on_disk(os.path.join(directory, artifacts.CHECKPOINTS))


def run_jax_pretraining(config, progress=True):
    """The whole run on JAX; returns the final held-out evaluation, as `run_pretraining` does (no export:
    `python -m albert_act.export --checkpoint <model_dir> --kind pretraining --output DIR` on a machine with
    TensorFlow writes one)."""
    config = config.resolved()
    train_path, eval_path = token_corpus.token_files(config.train_files), token_corpus.token_files(
        config.eval_files, held_out=True)
    _check_resumable(config)  # first (again under the lock): a run resumed with another --preset is told that
    corpus = _check_corpora(config, train_path, eval_path)
    with outputs.DirectoryLock(config.model_dir, "pre-training run", "--model_dir", say=progress):
        _check_resumable(config)
        trainer = JaxPretrainer(config)
        trainer.train_corpus = corpus.fingerprint()
        update, position = _resume(trainer, config, progress)
        if update and trainer.trained_on and trainer.trained_on != trainer.train_corpus:
            raise ValueError(f"{config.model_dir} was trained on another corpus than {train_path} (its checkpoint's "
                             f"{trainer.trained_on}, this one's {trainer.train_corpus}): resume with the records it "
                             "was trained on (a moved copy is the same), or use a new --model_dir")
        text_files.makedirs(config.model_dir)
        artifacts.write_json(os.path.join(config.model_dir, artifacts.CONFIG),
                             {**config_record(config), "backend": "jax"})
        if config.vocab:
            text_files.write_bytes(os.path.join(config.model_dir, artifacts.VOCAB), text_files.read_bytes(config.vocab))
        stream = token_corpus.InstanceStream(corpus, seed=config.seed, position=position)
        if progress:
            print(f"pre-training {config.preset} ({config.halting}) on JAX, {trainer.kind} x{len(trainer.devices)}, "
                  f"{trainer.precision}, global batch {config.global_batch_size} = {trainer.accumulation} x "
                  f"{config.micro_batch_size} x {len(trainer.devices)}, input {train_path}"
                  f"{f', resumed at update {update}' if update else ''}", flush=True)
        _train(trainer, config, stream, eval_path, update, progress)
        return _finish(trainer, config, eval_path)


def _check_corpora(config, train_path, eval_path):
    """What the TensorFlow run's preflight checks of its records, for the token corpora: not the same file
    for training and held out, made with the model's vocabulary (its size, and the --vocab given) and
    with one vocabulary, and a held-out corpus that makes instances. Returns the training corpus, read."""
    rows, length = (config.backbone_config()[key] for key in ("vocabulary_size", "max_sequence_length"))
    if config.vocab:
        from pipelines.create_pretraining_data import vocab_fingerprint
        from pipelines.tokenizer import Tokenizer

        fingerprint = vocab_fingerprint(Tokenizer.for_model(config.vocab, rows).model_proto)
    train, held_out = token_corpus.TokenCorpus(train_path), token_corpus.TokenCorpus(eval_path)
    if train.fingerprint() == held_out.fingerprint():  # (the same file, or a copy: told by its documents)
        raise ValueError(f"{eval_path} holds the documents of the training corpus {train_path}: held-out numbers need "
                         f"documents the model is not trained on ({token_corpus.TOKENS_EVAL})")
    for path, corpus in ((train_path, train), (eval_path, held_out)):
        if len(corpus.word_start) != rows:
            raise ValueError(f"{path}: made with a {len(corpus.word_start)}-piece vocabulary, but the model's "
                             f"vocabulary_size is {rows}: make the data with the model's vocabulary")
        if corpus.config.max_seq_length > length:
            raise ValueError(f"{path}: makes sequences of {corpus.config.max_seq_length} pieces, longer than the "
                             f"model's max_sequence_length {length}: make the data with --max_seq_length {length}, "
                             f"or pass --override max_sequence_length={corpus.config.max_seq_length}")
        if config.vocab and corpus.vocabulary != fingerprint:
            raise ValueError(f"{path}: made with another vocabulary than --vocab {config.vocab}: its ids would mean "
                             "other pieces; make the records with that vocabulary")
    if train.vocabulary != held_out.vocabulary:
        raise ValueError(f"{eval_path} was made with another vocabulary than {train_path}: its ids would mean other "
                         "pieces; make the held-out records with the training records' vocabulary")
    share = token_corpus.shared_documents(train, held_out)
    if share > 0.2:  # (as the TensorFlow run's preflight refuses such records: `record_overlap.REFUSED`)
        raise ValueError(f"{share:.0%} of the held-out documents of {eval_path} hold the text of training documents "
                         f"({train_path}): runs of {token_corpus.WINDOW} pieces in both. Made by two data runs of the "
                         "same text (another --seed or --eval_fraction?), the held-out numbers would measure what the "
                         "model was trained on: give the training and held-out corpora of one data run")
    if token_corpus.InstanceStream(held_out, held_out=True).batch(1) is None:
        raise ValueError(f"{eval_path}: makes no held-out instance ({len(held_out)} documents); make the records "
                         "with held-out documents (--eval_fraction above 0, or a held-out text)")
    return train


def _check_resumable(config):
    """A model dir resumes only the run it holds: the same settings but `RESUMABLE_CHANGES`, and a JAX
    run's checkpoints (a TensorFlow run's are read by the TensorFlow backend); a dir of other files
    (an export, someone's data) is not written among."""
    check_run_entries(config.model_dir)
    path = os.path.join(config.model_dir, artifacts.CONFIG)
    if artifacts.checkpoints_on_disk(os.path.join(config.model_dir, artifacts.CHECKPOINTS)):
        raise ValueError(f"{config.model_dir} holds a TensorFlow run's checkpoints; resume it without "
                         "KERAS_BACKEND=jax, or use a new --model_dir")
    others, saved = text_files.visible_entries(config.model_dir), checkpoints(config.model_dir)
    record = run_record(path, bool(saved)) if os.path.exists(path) else None  # (a damaged one: named)
    if record is None and saved:  # as the TensorFlow run's preflight says it
        raise artifacts.settings_lost(config.model_dir)
    if others and not (record is not None and artifacts.is_run_record(record)):  # (not a Hugging Face one)
        raise ValueError(f"--model_dir {config.model_dir} holds other files ({', '.join(others[:5])}) and no run "
                         f"(a run's {artifacts.CONFIG}); pre-train into a new or empty dir, or a run dir to resume it")
    if record is not None and not saved:  # (deleted from a finished run: its results kept, not replaced)
        check_results_kept(config.model_dir, record.get("checkpoint_every", config.checkpoint_every))
    if record is None or not saved:
        return
    previous, current = {**ADDED_SETTINGS, **record}, config_record(config)
    previous = {k: v for k, v in previous.items() if k not in ("backend", artifacts.TRAIN_SHARDS, artifacts.EVAL_SHARDS)}
    differing = changed_settings(previous, current)
    if differing:
        raise another_run(config.model_dir, differing)
    before, now = previous.get("eval_batches"), config.eval_batches
    if before != now and {artifacts.HELD_OUT_CURVE, artifacts.EVALUATION} & set(others):  # (as the TensorFlow run's
        held_out = token_corpus.TokenCorpus(token_corpus.token_files(config.eval_files, held_out=True))
        stream = token_corpus.InstanceStream(held_out, held_out=True)  # preflight: batches past the held-out end are none)
        batches = sum(1 for _ in iter(lambda: stream.batch(config.micro_batch_size * jax.local_device_count()), None))
        if not all(b is None or b >= batches for b in (before, now)):
            raise ValueError(artifacts.other_eval_batches(config.model_dir, before, now))


def _resume(trainer, config, progress):
    """(update, input position) of the newest intact checkpoint restored (`newest_intact`, as the
    TensorFlow run and `Source` read theirs), or (0, start) on a fresh run."""
    restored = newest_intact(checkpoints(config.model_dir), lambda update, path: trainer.restore(path, update),
                             os.path.join(config.model_dir, artifacts.CHECKPOINTS), errors=NPZ_READ_ERRORS,
                             say=lambda line: print(line, flush=True) if progress else None, read_as="resumed from")
    if restored:
        return restored[2]
    if config.init_from:
        raise ValueError("--init_from: not on the JAX backend yet; warm-start on TensorFlow (KERAS_BACKEND unset)")
    return 0, (0, 0, 0)


def _train(trainer, config, stream, eval_path, update, progress):
    shown = ["loss", "mlm_acc", "sop_acc", "iterations"]
    bar = bars.progress_bar(config.steps, shown) if progress else None
    window, start = None, time.perf_counter()
    while update < config.steps:
        batch = stream.batch(config.global_batch_size)
        sums = trainer.update(batch, update)
        tau = trainer.tau_at(update)
        update += 1
        result = summarize(sums, tau, trainer.objective.kl_weight)
        note = trainer.after_update(update, result)
        if note and progress:
            print(f"\n{note}", flush=True)
        if not np.isfinite(result["loss"]):
            raise FloatingPointError(f"non-finite loss at step {update}; stopped without saving")
        if bar is not None:
            bar.update(update, [("loss", result["loss"]), ("mlm_acc", result["mlm_accuracy"]),
                                ("sop_acc", result["sop_accuracy"]), ("iterations", result["iterations"]["all"]["mean"])])
        window = sums if window is None else {k: window[k] + sums[k] for k in window}
        if config.eval_every and update % config.eval_every == 0 and update < config.steps:
            held_out(trainer, config, eval_path, update, progress)
        if update % config.checkpoint_every == 0 or update == config.steps:
            trainer.save(config.model_dir, update, stream.position, config.keep_checkpoints)
    if progress and window is not None:
        seconds = time.perf_counter() - start
        print(f"\n{window['examples'] / max(seconds, 1e-9):.1f} sequences/s over this session's updates", flush=True)


def held_out(trainer, config, eval_path, update, progress):
    """The held-out evaluation at `update`: one line of held_out.jsonl (later lines replaced, as a resumed
    run writes them again), printed with the depth line."""
    evaluation = trainer.evaluate(eval_path, update)
    artifacts.check_run_in_place(config.model_dir, f"the evaluation of update {update}")
    path = os.path.join(config.model_dir, artifacts.HELD_OUT_CURVE)
    text, line = held_out_curve(path, text_files.read_bytes(path) if os.path.exists(path) else b"",
                                update, evaluation, trainer.tau_at(update - 1))
    spread = line["depth_spread"]
    text_files.write_bytes(path, text.encode("utf-8"))
    if progress:
        low, high = evaluation["mlm_accuracy_interval"]
        print(f"\nheld out at update {update}: MLM {evaluation['mlm_accuracy']:.3f} [{low:.3f}, {high:.3f}] (loss "
              f"{evaluation['mlm_loss']:.3f}), SOP {evaluation['sop_accuracy']:.3f}, mean N "
              f"{line['mean_iterations']:.2f}, tau {line['ponder_cost_weight']:.3g}", flush=True)
        if config.halting != "none":
            print(depth_line(spread), flush=True)
    return evaluation


def _finish(trainer, config, eval_path):
    from albert_act.analysis import token_types

    update = config.steps
    evaluation = held_out(trainer, config, eval_path, update, progress=False)
    evaluation["step"] = update
    evaluation["model_dir"] = config.model_dir
    evaluation["table"] = token_types.markdown_table(evaluation["iterations"], trainer.backbone.max_iterations,
                                                     evaluation["differences"])
    if config.halting != "none":
        spread = depth_spread(evaluation)
        warning = one_depth_warning(spread) if update >= config.ponder_warmup_start + config.ponder_warmup_steps \
            else None
        evaluation["depth"] = depth_line(spread).strip() + (f"\n{warning}" if warning else "")
    trainer.sync_model()
    trainer.model.save_weights(os.path.join(config.model_dir, artifacts.JAX_FINAL_WEIGHTS))
    artifacts.write_json(os.path.join(config.model_dir, artifacts.EVALUATION), evaluation)
    return evaluation
