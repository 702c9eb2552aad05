#!/usr/bin/env python3
"""Exports Keras applications with random weights to ONNX through tf2onnx, as a TensorFlow user
would: the channels-last networks graphsub's speed benchmark times beside the PyTorch exports.

Needs tensorflow (or tensorflow-cpu) and tf2onnx, which pin their own numpy and protobuf; keep
them out of the interpreter graphsub's tests use, e.g.

    python3 -m venv /tmp/tfenv && /tmp/tfenv/bin/pip install tensorflow-cpu tf2onnx
    /tmp/tfenv/bin/python scripts/keras_models.py --folder /tmp/keras_models
    python3 scripts/bench_speed.py --models --onnx /tmp/keras_models/*.onnx

Each model is `keras.applications.NAME(weights=None)` (no download; weights drawn from seed 0 for each model,
then every weight initialization leaves constant varied a little, as a trained model's are),
traced as a tf.function of a [batch, size, size, 3] float input with a symbolic batch and
converted at opset 17. Nothing here needs the network once the packages are installed.
"""
import argparse
import os
import sys

#: Keras application class and input size of each exported model.
MODELS = {
    "k_resnet50": ("ResNet50", 224),
    "k_mobilenet_v2": ("MobileNetV2", 224),
    "k_efficientnet_b0": ("EfficientNetB0", 224),
    "k_inception_v3": ("InceptionV3", 299),
    "k_densenet121": ("DenseNet121", 224),
    "k_mobilenet_v3_large": ("MobileNetV3Large", 224),
    "k_xception": ("Xception", 299),
    "k_mobilenet_v3_small": ("MobileNetV3Small", 224),
    "k_efficientnet_v2_b0": ("EfficientNetV2B0", 224),
    "k_nasnet_mobile": ("NASNetMobile", 224),
    "k_resnet50_v2": ("ResNet50V2", 224),
    "k_densenet169": ("DenseNet169", 224),
    "k_mobilenet": ("MobileNet", 224),
    "k_inception_resnet_v2": ("InceptionResNetV2", 299),
    "k_efficientnet_v2_s": ("EfficientNetV2S", 224),
}


def vary_constant_weights(model):
    """Gives every floating weight whose elements are all equal small random variation (seeded),
    as torch_models.vary_constant_weights does: random initialization leaves biases and batch
    norms' betas and means zero and their gammas and variances one, which a trained model never
    has, and rules such as eliminate-add-zero would otherwise win on the benchmark what they never
    win on a real model. Variances stay positive."""
    import numpy as np
    rng = np.random.default_rng(1)
    for weight in model.weights:
        values = np.asarray(weight.numpy())
        if values.size == 0 or values.dtype.kind != "f" or not np.all(values == values.flat[0]):
            continue
        if "variance" in weight.name:
            weight.assign((rng.random(values.shape) + 0.5).astype(values.dtype))
        else:
            weight.assign((values + 0.02 * rng.standard_normal(values.shape)).astype(values.dtype))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", required=True, help="where the .onnx files go")
    parser.add_argument("--models", nargs="*", choices=sorted(MODELS), help="default: all")
    parser.add_argument("--opset", type=int, default=17)
    args = parser.parse_args()

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf
    import tf2onnx

    os.makedirs(args.folder, exist_ok=True)
    for name in args.models or MODELS:
        keras.utils.set_random_seed(0)  # each model's weights the same whichever others are exported
        application, size = MODELS[name]
        model = getattr(keras.applications, application)(weights=None, input_shape=(size, size, 3))
        vary_constant_weights(model)
        spec = (tf.TensorSpec((None, size, size, 3), tf.float32, name="input"),)
        function = tf.function(lambda x, model=model: model(x, training=False))
        path = os.path.join(args.folder, name + ".onnx")
        tf2onnx.convert.from_function(function, input_signature=spec, opset=args.opset, output_path=path)
        print("wrote", path, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
