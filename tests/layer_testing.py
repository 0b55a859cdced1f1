"""`run_layer_test`: the checks every tfm layer must pass; each `tests/layers/test_<layer>.py` calls it once
per layer, beside reference numbers worked by hand or with a few lines of NumPy.

One call runs: config round trip, an eager call and a symbolic one (a functional model on
`keras.Input`s) with the weight counts each build leaves and the same output from both routes
for the same weights and input, one `fit` step, `.keras` save/load giving the same output, and
the output dtype under `mixed_bfloat16`.
"""

import os

import keras
import numpy as np


def _pick(outputs, output_index):
    if isinstance(outputs, dict):
        return outputs[output_index]
    if isinstance(outputs, (tuple, list)):
        return outputs[0 if output_index is None else output_index]
    return outputs


def _numpy(x):
    return np.asarray(keras.ops.convert_to_numpy(keras.ops.cast(x, "float32")))


def _check_weights(layer, trainable, non_trainable, route):
    assert layer.built, f"the {route} call left the layer unbuilt"
    got = len(layer.trainable_weights), len(layer.non_trainable_weights)
    assert got == (trainable, non_trainable), (
        f"after the {route} call: {got[0]} trainable and {got[1]} non-trainable weights, "
        f"expected {trainable} and {non_trainable}: {[w.path for w in layer.weights]}")


def run_layer_test(
    layer_cls,
    init_kwargs,
    input_data,
    *,
    expected_output_shape,
    expected_num_trainable_weights,
    expected_num_non_trainable_weights=0,
    call_kwargs=None,
    output_index=None,
    mixed_dtype="bfloat16",
    run_fit=True,
    run_saving=True,
    tmp_path=None,
    atol=1e-5,
):
    """Run the standard layer checks and return the eager output.

    Args:
        layer_cls: the layer class.
        init_kwargs: dict of constructor arguments.
        input_data: dict `name -> np.ndarray`, the tensor arguments of `call`
            (passed by keyword; their order is the functional model's input order).
        expected_output_shape: tuple, the shape of the checked output.
        expected_num_trainable_weights: int, `len(layer.trainable_weights)` once built (eager or
            symbolic call alike).
        expected_num_non_trainable_weights: int, `len(layer.non_trainable_weights)` once built.
        call_kwargs: dict of non-tensor `call` arguments (flags), passed as-is.
        output_index: which output to check when `call` returns a tuple or dict.
        mixed_dtype: expected dtype of the checked output under `mixed_bfloat16`,
            or None to skip that check.
        run_fit: run one `fit` step on a model wrapping the layer.
        run_saving: save to `.keras`, load, and compare outputs.
        tmp_path: folder for the `.keras` file (pytest's `tmp_path`).
        atol: tolerance between routes that should agree (eager vs symbolic, saved vs loaded).
    """
    call_kwargs = dict(call_kwargs or {})
    names = list(input_data)
    counts = expected_num_trainable_weights, expected_num_non_trainable_weights

    # Config round trip.
    layer = layer_cls(**init_kwargs)
    config = layer.get_config()
    clone = layer_cls.from_config(config)
    assert clone.get_config() == config, (clone.get_config(), config)
    for key in init_kwargs:
        assert key in config, f"get_config() lacks __init__ argument {key!r}"

    # Eager call: builds the layer from concrete shapes.
    eager = layer(**input_data, **call_kwargs)
    _check_weights(layer, *counts, "eager")
    out = _numpy(_pick(eager, output_index))
    assert tuple(out.shape) == tuple(expected_output_shape), (out.shape, expected_output_shape)
    assert np.all(np.isfinite(out)), "non-finite output"

    # Symbolic call inside a functional model: builds a fresh layer from keras.Input shapes (batch None).
    inputs = {
        name: keras.Input(shape=np.shape(arr)[1:], dtype=str(np.asarray(arr).dtype), name=name)
        for name, arr in input_data.items()
    }
    sym_layer = layer_cls.from_config(config)
    sym_out = _pick(sym_layer(**inputs, **call_kwargs), output_index)
    _check_weights(sym_layer, *counts, "symbolic")
    assert tuple(sym_out.shape) == (None, *expected_output_shape[1:]), sym_out.shape
    model = keras.Model([inputs[n] for n in names], sym_out)
    args = [input_data[n] for n in names]

    # The two routes agree: the symbolic layer with the eager layer's weights gives the eager output.
    sym_layer.set_weights(layer.get_weights())
    ref = _numpy(model(args, training=False))
    np.testing.assert_allclose(ref, out, atol=atol, rtol=1e-5, err_msg="symbolic and eager outputs differ")

    if run_fit:
        model.compile(optimizer="adam", loss="mse")
        target = np.zeros_like(ref, dtype="float32")
        history = model.fit(args, target, epochs=1, batch_size=len(args[0]), verbose=0)
        assert np.isfinite(history.history["loss"][0])
        ref = _numpy(model(args, training=False))

    if run_saving:
        assert tmp_path is not None, "pass tmp_path to test saving"
        path = os.path.join(str(tmp_path), f"{layer_cls.__name__}.keras")
        model.save(path)
        loaded = keras.saving.load_model(path)
        np.testing.assert_allclose(_numpy(loaded(args, training=False)), ref, atol=atol, rtol=1e-5)

    if mixed_dtype is not None:
        mp_layer = layer_cls(**{**init_kwargs, "dtype": "mixed_bfloat16"})
        mp_out = _pick(mp_layer(**input_data, **call_kwargs), output_index)
        assert keras.backend.standardize_dtype(mp_out.dtype) == mixed_dtype, (mp_out.dtype, mixed_dtype)
        assert np.all(np.isfinite(_numpy(mp_out)))
    return eager
