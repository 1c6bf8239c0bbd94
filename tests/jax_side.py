"""The JAX half of tests/test_jax_backend.py, run as `python tests/jax_side.py IN.npz OUT.npz` in a
process where TensorFlow cannot be imported (`sys.modules["tensorflow"] = None` before anything else).

IN holds the model's config (JSON), its weights (.weights.h5, written by the TensorFlow side), the
inputs, the labels, the JAX executions to run and how many LAMB updates to take. OUT gets, for each
execution (prefixed "<execution>/"), the outputs of the weights as given, the loss and its gradient
for every trainable variable (by path), and the loss after each update.
"""

import json
import os
import sys

os.environ["KERAS_BACKEND"] = "jax"
sys.modules["tensorflow"] = None  # `import tensorflow` anywhere below raises ImportError

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

from albert_act import AlbertActBackbone, AlbertActPretrainingModel  # noqa: E402
from albert_act.train.lamb import Lamb  # noqa: E402
from albert_act.train.losses import Objective  # noqa: E402


def main(source, destination):
    given = dict(np.load(source, allow_pickle=False))
    spec = json.loads(str(given["spec"]))
    inputs = {k: given[k] for k in ("token_ids", "segment_ids", "padding_mask", "masked_positions")}
    labels = {k: given[k] for k in ("masked_lm_ids", "masked_lm_weights", "sentence_order_label")}
    result = {"backend": np.asarray(keras.backend.backend())}
    for execution in spec["jax_executions"]:
        result.update({f"{execution}/{k}": v for k, v in run(spec, execution, inputs, labels).items()})
    result["tensorflow_loaded"] = np.asarray("tensorflow" in sys.modules and sys.modules["tensorflow"] is not None)
    np.savez(destination, **result)


def run(spec, execution, inputs, labels):
    """The outputs, loss and gradients of the given weights in `execution`, and the loss along LAMB's updates."""
    objective = Objective(spec["mlm_objective"], spec["kl_weight"], tuple(spec["prior"]) if spec["prior"] else None)
    backbone = AlbertActBackbone(**{**spec["backbone"], "execution": execution}, return_details=objective.iteration_outputs)
    model = AlbertActPretrainingModel(backbone, iteration_outputs=objective.iteration_outputs)
    model.load_weights(spec["weights"])
    trainable = [v.value for v in model.trainable_variables]
    frozen = [v.value for v in model.non_trainable_variables]

    def loss_fn(trainable):
        outputs, _ = model.stateless_call(trainable, frozen, inputs, training=True)
        sums = objective.sums(outputs, labels)
        return objective.losses(sums, sums["mlm_weight"], sums["examples"], spec["tau"])["loss"], outputs

    optimizer = Lamb(learning_rate=spec["learning_rate"])
    optimizer.build(model.trainable_variables)

    def step(trainable, state):  # (one function compiled: the first call's outputs and gradients are the given weights')
        (loss, outputs), gradients = jax.value_and_grad(loss_fn, has_aux=True)(trainable)
        return (loss, outputs, gradients, *optimizer.stateless_apply(state, gradients, trainable))

    step = jax.jit(step)
    state = [v.value for v in optimizer.variables]
    losses = []
    for update in range(spec["updates"]):
        loss, outputs, gradients, trainable, state = step(trainable, state)
        losses.append(float(loss))
        if update == 0:
            result = {f"output/{k}": np.asarray(v) for k, v in outputs.items()}
            result["loss"] = np.asarray(loss)
            result.update({f"gradient/{v.path}": np.asarray(g) for v, g in zip(model.trainable_variables, gradients)})
    result["losses"] = np.asarray(losses)
    return result


if __name__ == "__main__":
    main(*sys.argv[1:3])
