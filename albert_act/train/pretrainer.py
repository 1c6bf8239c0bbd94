"""The pre-training step: `Pretrainer` builds the model and LAMB for a resolved `PretrainConfig`, the
ponder-cost weight tau (its warm-up ramp and `--tau auto`), the accumulating train step under any
tf.distribute strategy, and the held-out evaluation."""

import numpy as np
import tensorflow as tf

from albert_act import distribution
from albert_act.analysis import token_types
from albert_act.model.halting import ponder_weight_in_force
from albert_act.train.losses import Objective
from albert_act.train.ponder import AUTO_SHARE, held_depth, ponder_ramp, steered_tau  # noqa: F401 (AUTO_SHARE: the API)
from albert_act.train.pretraining_config import AUTO, accumulation, run_parts
from albert_act.train.pretraining_summaries import depth_sums_of, evaluation_sums, summarize
from pipelines.pretraining_dataset import guarded, make_pretraining_dataset

PER_SEQUENCE = ("depth", "accuracy")  # evaluation outputs kept per held-out sequence (gathered, not summed)


# Scalar sums of a step (see pretraining_loss.loss_sums); "depth" (token_types.depth_sums) comes beside them.
SUM_KEYS = ("mlm_loss_sum", "mlm_objective_sum", "mlm_correct", "mlm_weight", "sop_loss_sum", "sop_correct",
            "ponder_cost_sum", "kl_sum", "examples", "overflows")



class Pretrainer:
    """Model, optimizer and the compiled steps for one resolved `PretrainConfig`."""

    def __init__(self, config, strategy, kind):
        self.config, self.strategy, self.kind = config, strategy, kind
        replicas = strategy.num_replicas_in_sync
        self.accumulation = accumulation(config, replicas)
        self.precision = distribution.resolve_precision(config.precision, kind)
        self.jit_compile = distribution.resolve_jit(config.jit_compile, kind, replicas)
        with strategy.scope():
            self.objective, self.backbone, self.model, self.schedule, self.optimizer = run_parts(config)
            # Full tau, checkpointed: "auto" starts at -1 (not calibrated yet; no ponder cost meanwhile).
            auto = config.ponder_cost_weight == AUTO
            self.tau = tf.Variable(-1.0 if auto else float(config.ponder_cost_weight), trainable=False,
                                   name="ponder_cost_weight")
            # --target_control signed: the proportional part of tau (`steered_tau`), checkpointed beside it.
            self.tau_proportional = tf.Variable(0.0, trainable=False, name="ponder_cost_weight_proportional")

    # --- the ponder-cost weight ------------------------------------------------------------------

    def tau_at(self, update):
        """tau applied at 0-based optimizer update `update` (a tensor in the step, a number outside).

        The weight in force (`ponder_weight_in_force`: 0 at fixed depth) times the warm-up ramp."""
        config = self.config
        ramp = ponder_ramp(update, config.ponder_warmup_start, config.ponder_warmup_steps)
        signed = config.target_control == "signed"
        stored = self.tau + self.tau_proportional if signed else self.tau
        return ponder_weight_in_force(stored, config.halting, signed) * ramp

    def checkpoint_contents(self):
        """tau as the checkpoint holds it: its value, and with --target_control signed its proportional part."""
        contents = {"ponder_cost_weight": self.tau}
        if self.config.target_control == "signed":
            contents["ponder_cost_weight_proportional"] = self.tau_proportional
        return contents

    def calibrate_tau(self, mlm_loss, sop_loss, ponder_cost):
        """--tau auto: sets tau so that tau x ponder cost = AUTO_SHARE x (MLM + SOP); returns it."""
        tau = AUTO_SHARE * (mlm_loss + sop_loss) / max(ponder_cost, 1e-6)
        self.tau.assign(tau)
        return tau

    def steer_tau(self, update, result):
        """--target_iterations: after 1-based update `update` (`result`: its summarized outputs), moves tau
        toward the value that gives the target depth; returns tau. --target_control tau: log tau moves by
        TARGET_RATE x (mean N - target); signed: tau moves by SIGNED_RATE x (mean N - target) x the tau
        --tau auto would set on this update, and may go below 0. Nothing before the ponder cost starts
        (or while tau awaits --tau auto's calibration)."""
        config, tau = self.config, float(self.tau.numpy())
        if config.target_iterations is None or update <= config.ponder_warmup_start:
            return tau
        tau, proportional = steered_tau(
            tau, held_depth(result, config.target_pieces) - config.target_iterations, config.target_control,
            AUTO_SHARE * (result["mlm_loss"] + result["sop_loss"]) / max(result["ponder_cost"], 1e-6))
        self.tau.assign(tau)
        self.tau_proportional.assign(proportional)
        return tau + proportional

    def calibrates_at(self, update):
        """--tau auto: whether tau is set after 1-based update `update` (the first with the ponder cost on)."""
        config = self.config
        return config.halting != "none" and config.ponder_cost_weight == AUTO and float(self.tau.numpy()) < 0 and \
            update >= max(config.ponder_warmup_start, 1)

    # --- what an update is --------------------------------------------------------------------

    def batch_line(self):
        """"global batch G = accumulation x micro-batch x replicas", for the run's first line."""
        config = self.config
        return (f"global batch {config.global_batch_size} = {self.accumulation} x {config.micro_batch_size} x "
                f"{self.strategy.num_replicas_in_sync}")

    def mean_gradient_norm(self, sums):
        """The mean gradient norm of the updates whose step outputs were summed into `sums`."""
        return sums["gradient_norm"] / (sums["examples"] / self.config.global_batch_size)

    # --- the training step -------------------------------------------------------------------

    def replica_step(self, inputs, labels):
        """One optimizer update from this replica's rows of the global batch (`distribute_rows`), in micro-batches."""
        config, context = self.config, tf.distribute.get_replica_context()
        variables = self.model.trainable_variables
        # Global denominators: the accumulated gradient is exactly the global-batch gradient.
        mlm_weight = context.all_reduce("sum", tf.reduce_sum(labels["masked_lm_weights"]))
        examples = float(config.global_batch_size)
        split = lambda t: tf.reshape(t, [self.accumulation, -1, *t.shape[1:]])  # noqa: E731
        inputs, labels = tf.nest.map_structure(split, inputs), tf.nest.map_structure(split, labels)
        tau = self.tau_at(self.optimizer.iterations)  # the same for every micro-batch of the update

        def micro_step(i, gradients, sums):
            micro_inputs = {k: v[i] for k, v in inputs.items()}
            micro_labels = {k: v[i] for k, v in labels.items()}
            with tf.GradientTape() as tape:
                outputs = self.model(micro_inputs, training=True)
                batch_sums = self.objective.sums(outputs, micro_labels)
                loss = self.objective.losses(batch_sums, mlm_weight, examples, tau)["loss"]
            grads = tape.gradient(loss, variables)
            gradients = [a + tf.convert_to_tensor(g) for a, g in zip(gradients, grads)]
            batch_sums["depth"] = tf.reduce_sum(depth_sums_of(outputs, micro_inputs, micro_labels), axis=0)
            batch_sums["overflows"] = tf.reduce_sum(outputs["overflows"])  # tokens a capacity made halt early
            return i + 1, gradients, {k: sums[k] + batch_sums[k] for k in sums}

        zero_sums = {k: tf.constant(0.0) for k in SUM_KEYS}
        zero_sums["depth"] = tf.zeros([len(token_types.TOKEN_TYPES), len(token_types.PARTS)])
        gradients = [tf.zeros_like(v) for v in variables]
        _, gradients, sums = tf.while_loop(
            lambda i, *_: i < self.accumulation, micro_step, (tf.constant(0), gradients, zero_sums)
        )
        gradients = context.all_reduce("sum", gradients)
        gradients, norm = tf.clip_by_global_norm(gradients, config.clip_norm)
        # Keras' optimizer sums gradients over replicas once more: hand it each replica's share.
        replicas = float(self.strategy.num_replicas_in_sync)
        self.optimizer.apply_gradients(zip([g / replicas for g in gradients], variables))
        sums["gradient_norm"] = norm / replicas  # summed over replicas below
        return sums

    def make_train_step(self, parse=None):
        """A tf.function of an iterator, or a tuple of them (input streams, whose batches are this
        worker's rows in order): one update from the next batch, parsed (inputs, labels), or
        serialized records that `parse` turns into parsed rows."""
        workers = distribution.input_worker(self.strategy)[1]

        @tf.function
        def train_step(iterators):
            if not isinstance(iterators, tuple):
                iterators = (iterators,)
            batch = tf.nest.map_structure(lambda *rows: tf.concat(rows, 0), *[next(i) for i in iterators]) \
                if len(iterators) > 1 else next(iterators[0])
            inputs, labels = parse(batch) if parse else batch
            inputs, labels = distribution.distribute_rows(self.strategy, (inputs, labels), workers)
            per_replica = self.strategy.run(replica_step, args=(inputs, labels))
            return {k: self.strategy.reduce("sum", v, axis=None) for k, v in per_replica.items()}

        replica_step = self.compiled(self.replica_step)
        return train_step

    def compiled(self, replica_fn):
        return distribution.compiled(replica_fn, self.jit_compile)

    # --- evaluation ----------------------------------------------------------------------------

    def replica_eval(self, inputs, labels):
        return replica_eval(self.model, inputs, labels, self.objective)

    def evaluate(self, eval_files):
        config = self.config
        result = evaluate_model(self.model, self.strategy, eval_files, config.micro_batch_size, config.eval_batches,
                                self.jit_compile, float(self.tau_at(self.optimizer.iterations.numpy() - 1)),
                                self.objective)
        unit = self.backbone.encoder.halting_unit
        if unit is not None:
            result["halting_unit"] = {"kernel_norm": float(np.linalg.norm(unit.dense.kernel.numpy())),
                                      "bias": float(unit.dense.bias.numpy()[0])}
        return result


def replica_eval(model, inputs, labels, objective=Objective()):
    """Sums (and per-sequence rows) of one replica's evaluation batch (`evaluation_sums`); static shapes,
    so XLA compiles it."""
    return evaluation_sums(model, inputs, labels, objective)


def evaluate_model(model, strategy, eval_files, batch_size, eval_batches=None, jit_compile=False, tau=0.0,
                   objective=Objective()):
    """`summarize`d held-out evaluation of an `AlbertActPretrainingModel` (built in `strategy`'s scope) on
    pre-training records: MLM and SOP accuracy with 95% intervals over sequences and their baselines,
    the losses (tau weighs the ponder cost in the reported total, `objective` says what else it holds)
    and the iteration table with E. batch_size: per replica; eval_batches: at most this many batches
    (None: every record)."""
    compiled = distribution.compiled(lambda inputs, labels: replica_eval(model, inputs, labels, objective),
                                     jit_compile)

    @tf.function
    def eval_step(batch):
        per_replica = strategy.run(compiled, args=batch)
        return {k: strategy.gather(v, axis=0) if k in PER_SEQUENCE
                else strategy.reduce("sum", v, axis=None) for k, v in per_replica.items()}

    dataset = strategy.distribute_datasets_from_function(
        lambda context: make_pretraining_dataset(eval_files, batch_size * strategy.num_replicas_in_sync,
                                                 training=False, input_context=context))
    totals = None
    for i, element in enumerate(guarded(dataset, eval_files)):  # (a corrupt or misshapen record: named)
        if eval_batches is not None and i >= eval_batches:
            break
        sums = {k: v.numpy() for k, v in eval_step(element).items()}
        totals = sums if totals is None else {
            k: np.concatenate([totals[k], sums[k]]) if k in PER_SEQUENCE else totals[k] + sums[k] for k in totals}
    if totals is None:
        raise ValueError(f"no evaluation records in {eval_files}")
    if not totals["mlm_weight"]:  # (intervals of 0/0)
        raise ValueError(f"{eval_files}: no record read holds a masked piece (masked_lm_weights all 0), so the MLM "
                         "accuracy would be of nothing; give records made by pipelines.create_pretraining_data")
    return summarize(totals, tau, objective.kl_weight)


