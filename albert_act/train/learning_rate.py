"""ALBERT's learning rate: linear warmup, then linear decay to 0, counted in optimizer updates."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="albert_act")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """lr(step) = peak * step / warmup for step < warmup, else peak * (1 - step / total_steps).

    As ALBERT (and BERT): the decay line runs from step 0 to `total_steps`, and
    warmup replaces its beginning. `step` is the optimizer's update count, so
    gradient accumulation does not stretch the schedule.
    """

    def __init__(self, peak_learning_rate, warmup_steps, total_steps):
        if total_steps < 1 or not 0 <= warmup_steps <= total_steps:
            raise ValueError(
                f"need 0 <= warmup_steps <= total_steps and total_steps >= 1, got "
                f"warmup_steps={warmup_steps}, total_steps={total_steps}"
            )
        self.peak_learning_rate = peak_learning_rate
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps

    def __call__(self, step):
        step = ops.cast(step, "float32")
        decayed = self.peak_learning_rate * ops.maximum(1.0 - step / self.total_steps, 0.0)
        if self.warmup_steps == 0:
            return decayed
        warmup = self.peak_learning_rate * step / self.warmup_steps
        return ops.where(step < self.warmup_steps, warmup, decayed)

    def get_config(self):
        return {"peak_learning_rate": self.peak_learning_rate, "warmup_steps": self.warmup_steps,
                "total_steps": self.total_steps}
