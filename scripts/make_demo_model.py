#!/usr/bin/env python3
"""Writes the demo models: models/grouped_cnn.onnx, the model the README's first command
optimizes, and models/small_cnn.onnx, which tests read.

grouped_cnn: a small RegNet-style network as PyTorch writes it with its batch normalizations
unfolded (Conv, BatchNormalization, Relu, Add): a stem, two bottleneck blocks whose 3x3
convolutions have groups of 8 channels (the second with stride 2), a RepVGG-style block
(a 3x3 and a 1x1 convolution and a batch normalization of the input, summed), global average
pooling, Flatten, a Gemm classifier and Softmax; input [N, 3, 96, 96], opset 17, fixed seed.
What `optimize` finds in it depends on the target it measures on (on onnxruntime with AVX-512,
the 8-channel groups regrouped into 16-channel ones and the RepVGG branches summed into one 3x3
convolution).

small_cnn: a residual block as PyTorch exports it (Conv, BatchNormalization, Relu, Add), then
global average pooling, Flatten, a Gemm classifier and Softmax; batch size symbolic ("N"),
opset 13, fixed seed.
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


def conv_bn_node(name, source, channels_in, channels_out, kernel, rng, inits, stride=1, group=1):
    """Conv (no bias) then BatchNormalization, as PyTorch writes conv-bn pairs: name.bn is the output."""
    inits += [
        numpy_helper.from_array(rng.standard_normal((channels_out, channels_in // group, kernel, kernel)).astype(np.float32)
                                * np.float32(np.sqrt(2.0 / (channels_in // group * kernel * kernel))), f"{name}.w"),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, channels_out).astype(np.float32), f"{name}.bn.scale"),
        numpy_helper.from_array(rng.standard_normal(channels_out).astype(np.float32) * 0.1, f"{name}.bn.bias"),
        numpy_helper.from_array(rng.standard_normal(channels_out).astype(np.float32) * 0.1, f"{name}.bn.mean"),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, channels_out).astype(np.float32), f"{name}.bn.var"),
    ]
    pad = kernel // 2
    return [
        helper.make_node("Conv", [source, f"{name}.w"], [f"{name}.conv"], name=f"{name}.conv", kernel_shape=[kernel, kernel],
                         pads=[pad] * 4, strides=[stride, stride], group=group),
        helper.make_node("BatchNormalization", [f"{name}.conv", f"{name}.bn.scale", f"{name}.bn.bias", f"{name}.bn.mean",
                                                f"{name}.bn.var"], [f"{name}.bn"], name=f"{name}.bn", epsilon=1e-5),
    ]


def relu(name, source):
    return helper.make_node("Relu", [source], [name], name=name)


def bottleneck(name, source, channels_in, channels, stride, rng, inits):
    """1x1, grouped 3x3 (groups of 8 channels), 1x1, with a projected shortcut; name.out is the output."""
    nodes = conv_bn_node(f"{name}.a", source, channels_in, channels, 1, rng, inits) + [relu(f"{name}.a.relu", f"{name}.a.bn")]
    nodes += conv_bn_node(f"{name}.b", f"{name}.a.relu", channels, channels, 3, rng, inits, stride, channels // 8)
    nodes += [relu(f"{name}.b.relu", f"{name}.b.bn")]
    nodes += conv_bn_node(f"{name}.c", f"{name}.b.relu", channels, channels, 1, rng, inits)
    nodes += conv_bn_node(f"{name}.proj", source, channels_in, channels, 1, rng, inits, stride)
    nodes += [helper.make_node("Add", [f"{name}.c.bn", f"{name}.proj.bn"], [f"{name}.sum"], name=f"{name}.add"),
              relu(f"{name}.out", f"{name}.sum")]
    return nodes


def repvgg(name, source, channels, rng, inits):
    """relu(bn(conv3x3(x)) + bn(conv1x1(x)) + bn(x)); name.out is the output."""
    nodes = conv_bn_node(f"{name}.dense", source, channels, channels, 3, rng, inits)
    nodes += conv_bn_node(f"{name}.point", source, channels, channels, 1, rng, inits)
    inits += [
        numpy_helper.from_array(rng.uniform(0.5, 1.5, channels).astype(np.float32), f"{name}.id.scale"),
        numpy_helper.from_array(rng.standard_normal(channels).astype(np.float32) * 0.1, f"{name}.id.bias"),
        numpy_helper.from_array(rng.standard_normal(channels).astype(np.float32) * 0.1, f"{name}.id.mean"),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, channels).astype(np.float32), f"{name}.id.var"),
    ]
    nodes += [
        helper.make_node("BatchNormalization", [source, f"{name}.id.scale", f"{name}.id.bias", f"{name}.id.mean",
                                                f"{name}.id.var"], [f"{name}.id.bn"], name=f"{name}.id.bn", epsilon=1e-5),
        helper.make_node("Add", [f"{name}.dense.bn", f"{name}.point.bn"], [f"{name}.sum1"], name=f"{name}.add1"),
        helper.make_node("Add", [f"{name}.sum1", f"{name}.id.bn"], [f"{name}.sum"], name=f"{name}.add2"),
        relu(f"{name}.out", f"{name}.sum"),
    ]
    return nodes


def classifier_model(name, nodes, last, inits, features, rng, fc_scale, input_size, opset):
    """nodes (their result the value `last`) then global average pooling, Flatten, a Gemm classifier of
    10 classes and Softmax, as a checked model with input [N, 3, input_size, input_size]."""
    inits += [
        numpy_helper.from_array(rng.standard_normal((10, features)).astype(np.float32) * fc_scale, "fc.w"),
        numpy_helper.from_array(rng.standard_normal(10).astype(np.float32) * 0.1, "fc.b"),
    ]
    nodes = nodes + [
        helper.make_node("GlobalAveragePool", [last], ["pool"], name="pool"),
        helper.make_node("Flatten", ["pool"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, input_size, input_size])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 10])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="graphsub-models")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def build_grouped():
    rng = np.random.default_rng(2026)
    inits = []
    nodes = conv_bn_node("stem", "input", 3, 32, 3, rng, inits, 2) + [relu("stem.relu", "stem.bn")]
    nodes += bottleneck("block1", "stem.relu", 32, 64, 1, rng, inits)
    nodes += bottleneck("block2", "block1.out", 64, 128, 2, rng, inits)
    nodes += repvgg("block3", "block2.out", 128, rng, inits)
    return classifier_model("grouped_cnn", nodes, "block3.out", inits, 128, rng, 0.1, 96, 17)


def build():
    rng = np.random.default_rng(2019)
    inits = []
    stem = conv_bn("stem", 3, 16, rng, inits)
    stem[0].input[0] = "input"
    block1 = conv_bn("block.conv1", 16, 16, rng, inits)
    block1[0].input[0] = "stem.relu"
    block2 = conv_bn("block.conv2", 16, 16, rng, inits)
    block2[0].input[0] = "block.relu1"
    nodes = stem + [helper.make_node("Relu", ["stem.bn"], ["stem.relu"], name="stem.relu")]
    nodes += block1 + [helper.make_node("Relu", ["block.conv1.bn"], ["block.relu1"], name="block.relu1")]
    nodes += block2 + [
        helper.make_node("Add", ["block.conv2.bn", "stem.relu"], ["block.sum"], name="block.add"),
        helper.make_node("Relu", ["block.sum"], ["block.out"], name="block.relu2"),
    ]
    return classifier_model("small_cnn", nodes, "block.out", inits, 16, rng, 0.3, 32, 13)


if __name__ == "__main__":
    models = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
    for name, model in (("grouped_cnn.onnx", build_grouped()), ("small_cnn.onnx", build())):
        out = os.path.join(models, name)
        onnx.save(model, out)
        print("wrote", os.path.normpath(out))
