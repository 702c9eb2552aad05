#!/usr/bin/env python3
"""Writes models/small_cnn.onnx: the model the README's first command optimizes.

A residual block as PyTorch exports it (Conv, BatchNormalization, Relu, Add), then global average
pooling, Flatten, a Gemm classifier and Softmax; batch size symbolic ("N"), opset 13, fixed seed.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv_bn(prefix, channels_in, channels_out, rng, inits):
    inits += [
        numpy_helper.from_array(rng.standard_normal((channels_out, channels_in, 3, 3)).astype(np.float32) * 0.2, f"{prefix}.w"),
        numpy_helper.from_array(rng.standard_normal(channels_out).astype(np.float32) * 0.1, f"{prefix}.b"),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, channels_out).astype(np.float32), f"{prefix}.bn.scale"),
        numpy_helper.from_array(rng.standard_normal(channels_out).astype(np.float32) * 0.1, f"{prefix}.bn.bias"),
        numpy_helper.from_array(rng.standard_normal(channels_out).astype(np.float32) * 0.1, f"{prefix}.bn.mean"),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, channels_out).astype(np.float32), f"{prefix}.bn.var"),
    ]
    return [
        helper.make_node("Conv", ["IN", f"{prefix}.w", f"{prefix}.b"], [f"{prefix}.conv"], name=f"{prefix}.conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", [f"{prefix}.conv", f"{prefix}.bn.scale", f"{prefix}.bn.bias",
                                                f"{prefix}.bn.mean", f"{prefix}.bn.var"],
                         [f"{prefix}.bn"], name=f"{prefix}.bn", epsilon=1e-5),
    ]


def build():
    rng = np.random.default_rng(2019)
    inits = []
    stem = conv_bn("stem", 3, 16, rng, inits)
    stem[0].input[0] = "input"
    block1 = conv_bn("block.conv1", 16, 16, rng, inits)
    block1[0].input[0] = "stem.relu"
    block2 = conv_bn("block.conv2", 16, 16, rng, inits)
    block2[0].input[0] = "block.relu1"
    inits += [
        numpy_helper.from_array(rng.standard_normal((10, 16)).astype(np.float32) * 0.3, "fc.w"),
        numpy_helper.from_array(rng.standard_normal(10).astype(np.float32) * 0.1, "fc.b"),
    ]
    nodes = stem + [helper.make_node("Relu", ["stem.bn"], ["stem.relu"], name="stem.relu")]
    nodes += block1 + [helper.make_node("Relu", ["block.conv1.bn"], ["block.relu1"], name="block.relu1")]
    nodes += block2 + [
        helper.make_node("Add", ["block.conv2.bn", "stem.relu"], ["block.sum"], name="block.add"),
        helper.make_node("Relu", ["block.sum"], ["block.out"], name="block.relu2"),
        helper.make_node("GlobalAveragePool", ["block.out"], ["pool"], name="pool"),
        helper.make_node("Flatten", ["pool"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 32, 32])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 10])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="graphsub-models")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "small_cnn.onnx")
    onnx.save(build(), out)
    print("wrote", os.path.normpath(out))
