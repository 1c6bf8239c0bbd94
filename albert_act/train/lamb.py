"""LAMB with ALBERT's maths (google-research/albert `lamb_optimizer.py`), as a Keras optimizer.

Per variable w with gradient g, at learning rate lr:

    m = beta_1 m + (1 - beta_1) g
    v = beta_2 v + (1 - beta_2) g^2
    u = m / (sqrt(v) + epsilon)                     no bias correction
    u = u + weight_decay w                          unless w is excluded from decay
    r = ||w|| / ||u|| if both > 0 else 1            unless w is excluded from adaptation (then 1)
    w = w - lr s r u                                s: the variable's learning-rate scale (1 unless set)

Excluded from both by default: LayerNorm parameters and biases (variables whose
path contains "layer_norm", "LayerNorm" or "bias"). `keras.optimizers.Lamb`
differs (bias correction, decoupled decay), hence this class.
"""

import re

import keras
from keras import ops

EXCLUDED = ("layer_norm", "LayerNorm", "bias")
# The halting unit's variables (their path), which --no-halting_trust_ratio and --halting_learning_rate_scale address.
HALTING_VARIABLES = "halting_unit"


@keras.saving.register_keras_serializable(package="albert_act")
class Lamb(keras.optimizers.Optimizer):
    """ALBERT's LAMB. Weight decay lives inside the trust ratio, so Keras' own
    `weight_decay` argument is not used; pass `weight_decay_rate`.

    Args:
        learning_rate: float or `keras.optimizers.schedules.LearningRateSchedule`.
        weight_decay_rate: float (ALBERT: 0.01).
        beta_1, beta_2, epsilon: moments and epsilon (0.9, 0.999, 1e-6).
        exclude_from_weight_decay, exclude_from_layer_adaptation: regex fragments
            matched against each variable's path.
        learning_rate_scales: {regex fragment: scale}: a variable whose path matches one takes
            the learning rate times that scale (the first match; e.g. the halting unit's own rate).
    """

    def __init__(
        self,
        learning_rate=1.76e-3,
        weight_decay_rate=0.01,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        exclude_from_weight_decay=EXCLUDED,
        exclude_from_layer_adaptation=EXCLUDED,
        learning_rate_scales=None,
        name="lamb",
        **kwargs,
    ):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.weight_decay_rate = weight_decay_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.exclude_from_weight_decay = tuple(exclude_from_weight_decay)
        self.exclude_from_layer_adaptation = tuple(exclude_from_layer_adaptation)
        self.learning_rate_scales = {str(k): float(v) for k, v in (learning_rate_scales or {}).items()}

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._m = [self.add_variable_from_reference(v, "m") for v in var_list]
        self._v = [self.add_variable_from_reference(v, "v") for v in var_list]
        # Decided once by path (update_step may see the backend variable, without a path).
        matches = lambda v, patterns: any(re.search(p, v.path) for p in patterns)  # noqa: E731
        self._decays = [not matches(v, self.exclude_from_weight_decay) for v in var_list]
        self._adapts = [not matches(v, self.exclude_from_layer_adaptation) for v in var_list]
        self._scales = [next((s for p, s in self.learning_rate_scales.items() if re.search(p, v.path)), 1.0)
                        for v in var_list]

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        m, v = self._m[index], self._v[index]
        gradient = ops.cast(gradient, variable.dtype)
        learning_rate = ops.cast(learning_rate, variable.dtype)
        self.assign(m, self.beta_1 * m + (1.0 - self.beta_1) * gradient)
        self.assign(v, self.beta_2 * v + (1.0 - self.beta_2) * ops.square(gradient))
        update = m / (ops.sqrt(v) + self.epsilon)
        if self.weight_decay_rate and self._decays[index]:
            update = update + self.weight_decay_rate * variable
        ratio = 1.0
        if self._adapts[index]:
            w_norm = ops.sqrt(ops.sum(ops.square(variable)))
            u_norm = ops.sqrt(ops.sum(ops.square(update)))
            ratio = ops.where((w_norm > 0) & (u_norm > 0), w_norm / ops.maximum(u_norm, 1e-30), 1.0)
        if self._scales[index] != 1.0:
            learning_rate = learning_rate * self._scales[index]
        self.assign_sub(variable, ratio * learning_rate * update)

    def get_config(self):
        config = super().get_config()
        config.update(
            weight_decay_rate=self.weight_decay_rate,
            beta_1=self.beta_1,
            beta_2=self.beta_2,
            epsilon=self.epsilon,
            exclude_from_weight_decay=list(self.exclude_from_weight_decay),
            exclude_from_layer_adaptation=list(self.exclude_from_layer_adaptation),
            learning_rate_scales=dict(self.learning_rate_scales),
        )
        return config


def run_optimizer(config, schedule):
    """LAMB for a resolved config: ALBERT's exclusions, and the halting unit's own settings
    (--no-halting_trust_ratio: its kernel out of the trust ratio and weight decay, as biases are;
    --halting_learning_rate_scale)."""
    excluded = EXCLUDED if config.halting_trust_ratio else EXCLUDED + (HALTING_VARIABLES,)
    scales = {HALTING_VARIABLES: config.halting_learning_rate_scale} if config.halting_learning_rate_scale != 1.0 \
        else None
    return Lamb(schedule, weight_decay_rate=config.weight_decay_rate, exclude_from_weight_decay=excluded,
                exclude_from_layer_adaptation=excluded, learning_rate_scales=scales)
