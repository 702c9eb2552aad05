#!/usr/bin/env python3
"""Writes the small ONNX models the onnx_io tests read into models/ (deterministic; re-runnable).

Needs the `onnx` and `numpy` Python packages (pip install onnx numpy). The models use IR version 8
and opset 13, which the ONNX 1.12 library that graphsub links checks and infers.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
IR_VERSION = 8
OPSET = 13
FLOAT = TensorProto.FLOAT


def tensor_info(name, shape, dtype=FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def weight(name, shape, seed):
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return numpy_helper.from_array(values, name)


def model_of(graph, opsets=(("", OPSET),)):
    model = helper.make_model(
        graph,
        producer_name="graphsub-test-models",
        opset_imports=[helper.make_opsetid(domain, version) for domain, version in opsets],
    )
    model.ir_version = IR_VERSION
    return model


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    path = os.path.join(MODELS, name)
    with open(path, "wb") as out:
        out.write(model.SerializeToString())
    print("wrote", os.path.relpath(path))


def cycle():
    """a = Add(x, d); d = Relu(a): no topological order exists."""
    nodes = [
        helper.make_node("Add", ["x", "d"], ["a"], name="add"),
        helper.make_node("Relu", ["a"], ["d"], name="relu"),
    ]
    graph = helper.make_graph(nodes, "cycle", [tensor_info("x", [2])], [tensor_info("a", [2])])
    save(model_of(graph), "cycle.onnx", check=False)


def shape_mismatch():
    """Add of [2,3] and [4,5]: the checker passes it, strict shape inference does not."""
    nodes = [helper.make_node("Add", ["x", "y"], ["z"], name="add")]
    graph = helper.make_graph(
        nodes, "shape_mismatch", [tensor_info("x", [2, 3]), tensor_info("y", [4, 5])],
        [tensor_info("z", [None, None])])
    save(model_of(graph), "shape_mismatch.onnx")


def symbolic_dims():
    """y = Relu(MatMul(x, w)) with a batch dimension named N."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="matmul"),
        helper.make_node("Relu", ["h"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "symbolic_dims", [tensor_info("x", ["N", 3])], [tensor_info("y", ["N", 4])],
        initializer=[weight("w", [3, 4], 1)])
    save(model_of(graph), "symbolic_dims.onnx")


def shuffle_nodes(source, shuffled):
    """ShuffleNet's channel shuffle of `source` in two groups, as PyTorch exports it for a dynamic
    batch N: the Reshape targets are computed at run time from Shape, Gather, Div, Unsqueeze and
    Concat."""
    def const(name, values):
        return helper.make_node("Constant", [], [name], name=name,
                                value=helper.make_tensor(name, TensorProto.INT64, [len(values)] if
                                                         isinstance(values, list) else [],
                                                         values if isinstance(values, list) else [values]))
    nodes = []
    for axis in range(4):
        nodes += [const(f"i{axis}", axis),
                  helper.make_node("Shape", [source], [f"s{axis}"], name=f"shape{axis}"),
                  helper.make_node("Gather", [f"s{axis}", f"i{axis}"], [f"d{axis}"], name=f"gather{axis}", axis=0)]
    nodes += [const("groups", 2), const("axes", [0]), const("two", [2]), const("minus_one", [-1]),
              helper.make_node("Div", ["d1", "groups"], ["per_group"], name="div")]
    for name in ("d0", "per_group", "d2", "d3"):
        nodes.append(helper.make_node("Unsqueeze", [name, "axes"], [name + "_1d"], name="unsqueeze_" + name))
    nodes += [
        helper.make_node("Concat", ["d0_1d", "two", "per_group_1d", "d2_1d", "d3_1d"], ["split_shape"],
                         name="concat_split", axis=0),
        helper.make_node("Reshape", [source, "split_shape"], ["grouped"], name="reshape_split"),
        helper.make_node("Transpose", ["grouped"], ["swapped"], name="transpose", perm=[0, 2, 1, 3, 4]),
        helper.make_node("Concat", ["d0_1d", "minus_one", "d2_1d", "d3_1d"], ["flat_shape"], name="concat_flat",
                         axis=0),
        helper.make_node("Reshape", ["swapped", "flat_shape"], [shuffled], name="reshape_flat"),
    ]
    return nodes


def channel_shuffle():
    """ShuffleNet's channel shuffle (shuffle_nodes) of a convolution's output, read by a Relu."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1])]
    nodes += shuffle_nodes("c", "shuffled")
    nodes.append(helper.make_node("Relu", ["shuffled"], ["y"], name="relu"))
    graph = helper.make_graph(
        nodes, "channel_shuffle", [tensor_info("x", ["N", 8, 4, 4])], [tensor_info("y", ["N", 8, 4, 4])],
        initializer=[weight("w", [8, 8, 1, 1], 7)])
    save(model_of(graph), "channel_shuffle.onnx")


def shuffle_unit():
    """A ShuffleNet-v2 unit: a convolution's output shuffled (shuffle_nodes), split in halves, one
    half convolved and concatenated with the other. The shuffle and Split become two Gathers
    (rewrite/channel_shuffle.h)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1])]
    nodes += shuffle_nodes("c", "shuffled")
    nodes += [
        helper.make_node("Split", ["shuffled", "halves"], ["kept", "branch"], name="split", axis=1),
        helper.make_node("Conv", ["branch", "w2"], ["branch_conv"], name="branch_conv", kernel_shape=[1, 1]),
        helper.make_node("Relu", ["branch_conv"], ["branch_relu"], name="branch_relu"),
        helper.make_node("Concat", ["kept", "branch_relu"], ["y"], name="concat", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "shuffle_unit", [tensor_info("x", ["N", 16, 6, 6])], [tensor_info("y", ["N", 16, 6, 6])],
        initializer=[weight("w", [16, 16, 1, 1], 30), weight("w2", [8, 8, 1, 1], 31),
                     numpy_helper.from_array(np.array([8, 8], dtype=np.int64), "halves")])
    save(model_of(graph), "shuffle_unit.onnx")


def shuffle_stage_end():
    """The last ShuffleNet-v2 unit of a stage, as the next stage reads it: a convolution's output
    shuffled (shuffle_nodes) and read by a depthwise 3x3 convolution (then a 1x1 one) and by a 1x1
    convolution. The shuffle is folded into their weights (rewrite/channel_shuffle.h)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1])]
    nodes += shuffle_nodes("c", "shuffled")
    nodes += [
        helper.make_node("Conv", ["shuffled", "w_dw", "b_dw"], ["dw"], name="depthwise", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[2, 2], group=16),
        helper.make_node("Conv", ["dw", "w_pw"], ["left"], name="left_conv", kernel_shape=[1, 1]),
        helper.make_node("Conv", ["shuffled", "w_right"], ["right"], name="right_conv", kernel_shape=[1, 1],
                         strides=[2, 2]),
        helper.make_node("Concat", ["left", "right"], ["y"], name="concat", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "shuffle_stage_end", [tensor_info("x", ["N", 16, 6, 6])], [tensor_info("y", ["N", 24, 3, 3])],
        initializer=[weight("w", [16, 16, 1, 1], 32), weight("w_dw", [16, 1, 3, 3], 33), weight("b_dw", [16], 34),
                     weight("w_pw", [12, 16, 1, 1], 35), weight("w_right", [12, 16, 1, 1], 36)])
    save(model_of(graph), "shuffle_stage_end.onnx")


def packed_attention():
    """The packed q, k, v projection of PyTorch's multi-head attention as its TorchScript export
    writes it, for a sequence S and batch N: one product, then Reshape [0, 0, 3, 24], Unsqueeze,
    a 5-D Transpose, Squeeze and a Gather per q, k and v. The chain becomes one Reshape and
    three Gathers (rewrite/view_chains.h)."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["proj"], name="in_proj"),
        helper.make_node("Reshape", ["proj", "unflatten"], ["parts"], name="unflatten"),
        helper.make_node("Unsqueeze", ["parts", "axes_0"], ["lifted"], name="unsqueeze"),
        helper.make_node("Transpose", ["lifted"], ["swapped"], name="transpose", perm=[3, 1, 2, 0, 4]),
        helper.make_node("Squeeze", ["swapped", "axes_3"], ["packed"], name="squeeze"),
    ]
    for i, name in enumerate(("q", "k", "v")):
        nodes.append(helper.make_node("Gather", ["packed", "index_%d" % i], [name], name="select_" + name, axis=0))
    nodes += [
        helper.make_node("Mul", ["q", "k"], ["qk"], name="mul"),
        helper.make_node("Add", ["qk", "v"], ["y"], name="add"),
    ]
    ints = lambda name, values: numpy_helper.from_array(np.array(values, dtype=np.int64), name)
    graph = helper.make_graph(
        nodes, "packed_attention", [tensor_info("x", ["S", "N", 24])], [tensor_info("y", ["S", "N", 24])],
        initializer=[weight("w", [24, 72], 37), ints("unflatten", [0, 0, 3, 24]), ints("axes_0", [0]),
                     ints("axes_3", [3])] + [numpy_helper.from_array(np.array(i, dtype=np.int64), "index_%d" % i)
                                             for i in range(3)])
    save(model_of(graph), "packed_attention.onnx")


def shifted_windows():
    """Swin-style window partition as the TorchScript exporter writes it, for a batch N of 6 x 6
    maps in windows of 4: the pad to a multiple of 4 computed from the dims (Mod, Sub), its pads
    laid out as torch's F.pad does (Concat, Reshape [-1, 2], a reversing Slice, Transpose,
    Reshape [-1]), the windows' Reshape target computed from the padded tensor's Shape, and a
    mask built at run time by ScatterND into a ConstantOfShape of the padded size. Import leaves
    the Pad opaque (its pads are computed); once they are folded it is modelled, its output typed,
    and every Shape after it resolves: the mask becomes a weight."""
    ints = lambda name, values: numpy_helper.from_array(np.array(values, dtype=np.int64), name)
    scalar = lambda name, value: numpy_helper.from_array(np.array(value, dtype=np.int64), name)
    nodes = [helper.make_node("Shape", ["x"], ["dims"], name="dims")]
    for axis, name in ((1, "pad_h"), (2, "pad_w")):
        nodes += [
            helper.make_node("Gather", ["dims", "axis_%d" % axis], [name + "_size"], name=name + "_size", axis=0),
            helper.make_node("Mod", [name + "_size", "four"], [name + "_rest"], name=name + "_rest"),
            helper.make_node("Sub", ["four", name + "_rest"], [name + "_gap"], name=name + "_gap"),
            helper.make_node("Mod", [name + "_gap", "four"], [name], name=name),
            helper.make_node("Unsqueeze", [name, "axes_0"], [name + "_1d"], name=name + "_1d"),
        ]
    nodes += [
        helper.make_node("Concat", ["zeros_3", "pad_w_1d", "zero_1", "pad_h_1d", "zeros_2"], ["pairs"],
                         name="pairs", axis=0),
        helper.make_node("Reshape", ["pairs", "by_pair"], ["pair_rows"], name="pair_rows"),
        helper.make_node("Slice", ["pair_rows", "minus_1", "very_negative", "axes_0", "minus_1"], ["axis_rows"],
                         name="axis_rows"),
        helper.make_node("Transpose", ["axis_rows"], ["begins_ends"], name="begins_ends", perm=[1, 0]),
        helper.make_node("Reshape", ["begins_ends", "flat"], ["pads"], name="pads"),
        helper.make_node("Pad", ["x", "pads"], ["padded"], name="pad"),
        helper.make_node("Shape", ["padded"], ["padded_dims"], name="padded_dims"),
    ]
    for axis, name in ((0, "batch"), (1, "rows"), (2, "cols")):
        nodes.append(helper.make_node("Gather", ["padded_dims", "axis_%d" % axis], [name], name=name, axis=0))
    for name in ("rows", "cols"):
        nodes += [helper.make_node("Div", [name, "four"], [name + "_windows"], name=name + "_windows"),
                  helper.make_node("Unsqueeze", [name + "_windows", "axes_0"], [name + "_windows_1d"],
                                   name=name + "_windows_1d"),
                  helper.make_node("Unsqueeze", [name, "axes_0"], [name + "_1d"], name=name + "_1d")]
    fill = lambda value: helper.make_tensor("fill", FLOAT, [1], [value])
    nodes += [
        helper.make_node("Unsqueeze", ["batch", "axes_0"], ["batch_1d"], name="batch_1d"),
        helper.make_node("Concat", ["batch_1d", "rows_windows_1d", "four_1d", "cols_windows_1d", "four_1d", "four_1d"],
                         ["window_dims"], name="window_dims", axis=0),
        helper.make_node("Reshape", ["padded", "window_dims"], ["split_windows"], name="split_windows"),
        helper.make_node("Transpose", ["split_windows"], ["windows"], name="windows", perm=[0, 1, 3, 2, 4, 5]),
        helper.make_node("Concat", ["rows_1d", "cols_1d"], ["mask_size"], name="mask_size", axis=0),
        helper.make_node("ConstantOfShape", ["mask_size"], ["blank"], name="blank", value=fill(0.0)),
        helper.make_node("Concat", ["two_1d", "cols_1d"], ["band_size"], name="band_size", axis=0),
        helper.make_node("ConstantOfShape", ["band_size"], ["bands"], name="bands", value=fill(1.0)),
        helper.make_node("ScatterND", ["blank", "band_rows", "bands"], ["mask"], name="mask"),
        helper.make_node("Reshape", ["mask", "mask_windows"], ["mask_split"], name="mask_split"),
        helper.make_node("Transpose", ["mask_split"], ["mask_by_window"], name="mask_by_window", perm=[0, 2, 1, 3]),
        helper.make_node("Unsqueeze", ["mask_by_window", "axes_0_5"], ["mask_6d"], name="mask_6d"),
        helper.make_node("Add", ["windows", "mask_6d"], ["y"], name="add_mask"),
    ]
    graph = helper.make_graph(
        nodes, "shifted_windows", [tensor_info("x", ["N", 6, 6, 4])], [tensor_info("y", ["N", 2, 2, 4, 4, 4])],
        initializer=[scalar("axis_0", 0), scalar("axis_1", 1), scalar("axis_2", 2), scalar("four", 4),
                     ints("four_1d", [4]), ints("two_1d", [2]), ints("axes_0", [0]), ints("zeros_3", [0, 0, 0]),
                     ints("zero_1", [0]), ints("zeros_2", [0, 0]), ints("by_pair", [-1, 2]), ints("flat", [-1]),
                     ints("minus_1", [-1]), ints("very_negative", [-(2**63) + 1]),
                     ints("band_rows", [[0], [5]]), ints("mask_windows", [2, 4, 2, 4]), ints("axes_0_5", [0, 5])])
    save(model_of(graph), "shifted_windows.onnx")


def conv_relu():
    """y = Relu(Conv(x, w, b)): fusing the Relu into the Conv is undone on export."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, "conv_relu", [tensor_info("x", [1, 3, 8, 8])], [tensor_info("y", [1, 4, 8, 8])],
        initializer=[weight("w", [4, 3, 3, 3], 8), weight("b", [4], 9)])
    save(model_of(graph), "conv_relu.onnx")


def squeeze_excitation_graph(name, transposed):
    """A convolution and its squeeze-and-excitation scale, scale * image (torchvision's order),
    batch N: the layout form of onnxruntime's CPU target (rules/layout.rules) applies to the Mul.
    `transposed`: the first convolution's weight is stored transposed, with a Transpose node
    before the Conv that export folds (so a result differs from the input once written)."""
    first = "w"
    nodes = []
    if transposed:
        first = "wt"
        nodes.append(helper.make_node("Transpose", ["wt"], ["w"], name="weight_transpose", perm=[1, 0, 2, 3]))
    nodes += [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
              helper.make_node("Relu", ["c"], ["r"], name="relu"),
              helper.make_node("GlobalAveragePool", ["r"], ["m"], name="squeeze"),
              helper.make_node("Conv", ["m", "w1", "b1"], ["e1"], name="reduce", kernel_shape=[1, 1]),
              helper.make_node("Relu", ["e1"], ["e2"], name="relu_e"),
              helper.make_node("Conv", ["e2", "w2", "b2"], ["e3"], name="expand", kernel_shape=[1, 1]),
              helper.make_node("Sigmoid", ["e3"], ["s"], name="gate"),
              helper.make_node("Mul", ["s", "r"], ["y"], name="scale")]
    return helper.make_graph(
        nodes, name, [tensor_info("x", ["N", 8, 16, 16])], [tensor_info("y", ["N", 16, 16, 16])],
        initializer=[weight(first, [8, 16, 3, 3] if transposed else [16, 8, 3, 3], 10), weight("b", [16], 11),
                     weight("w1", [4, 16, 1, 1], 12), weight("b1", [4], 13), weight("w2", [16, 4, 1, 1], 14),
                     weight("b2", [16], 15)])


def squeeze_excitation():
    save(model_of(squeeze_excitation_graph("squeeze_excitation", False)), "squeeze_excitation.onnx")


def squeeze_excitation_transposed():
    save(model_of(squeeze_excitation_graph("squeeze_excitation_transposed", True)),
         "squeeze_excitation_transposed.onnx")


def c2f_block():
    """YOLOv8's C2f block, small: a 1x1 convolution's SiLU split in halves, the second half through
    a 3x3 convolution and its SiLU, the three concatenated and read by a 1x1 convolution, batch
    N. Two kinds of onnxruntime's layout forms (rules/layout.rules) apply: the split SiLU as two
    convolutions, the concatenation before a convolution as a sum of convolutions."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c"], name="cv1", kernel_shape=[1, 1]),
             helper.make_node("Sigmoid", ["c"], ["s"], name="cv1_sigmoid"),
             helper.make_node("Mul", ["c", "s"], ["m"], name="cv1_silu"),
             helper.make_node("Split", ["m", "halves"], ["p", "q"], name="split", axis=1),
             helper.make_node("Conv", ["q", "w2", "b2"], ["r"], name="m0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["r"], ["rs"], name="m0_sigmoid"),
             helper.make_node("Mul", ["r", "rs"], ["rm"], name="m0_silu"),
             helper.make_node("Concat", ["p", "q", "rm"], ["cat"], name="concat", axis=1),
             helper.make_node("Conv", ["cat", "w3", "b3"], ["y"], name="cv2", kernel_shape=[1, 1])]
    graph = helper.make_graph(
        nodes, "c2f_block", [tensor_info("x", ["N", 8, 16, 16])], [tensor_info("y", ["N", 16, 16, 16])],
        initializer=[weight("w1", [16, 8, 1, 1], 50), weight("b1", [16], 51),
                     numpy_helper.from_array(np.array([8, 8], dtype=np.int64), "halves"),
                     weight("w2", [8, 8, 3, 3], 52), weight("b2", [8], 53),
                     weight("w3", [16, 24, 1, 1], 54), weight("b3", [16], 55)])
    save(model_of(graph), "c2f_block.onnx")


def class_token_head():
    """A transformer's last layer and a classifier reading its first token (ViT's class token):
    x [N, 5, 8] through a layer norm, an MLP with an erf GELU and the residual, a layer norm, then
    Gather(axis 1, 0) and Gemm, at opset 17. The narrowing rules (rules/narrow.rules) move the
    Gather to the top, so the layer runs on one token."""
    def const(name, value):
        return numpy_helper.from_array(np.array(value, dtype=np.float32), name)
    nodes = [helper.make_node("LayerNormalization", ["x", "g1", "b1"], ["n"], name="ln_2", axis=-1, epsilon=1e-6),
             helper.make_node("MatMul", ["n", "w1"], ["m1"], name="fc1"),
             helper.make_node("Add", ["bias1", "m1"], ["a"], name="fc1_bias"),
             helper.make_node("Div", ["a", "root2"], ["d"], name="gelu_div"),
             helper.make_node("Erf", ["d"], ["e"], name="gelu_erf"),
             helper.make_node("Add", ["e", "one"], ["e1"], name="gelu_add"),
             helper.make_node("Mul", ["a", "e1"], ["p"], name="gelu_mul"),
             helper.make_node("Mul", ["p", "half"], ["gelu"], name="gelu_half"),
             helper.make_node("MatMul", ["gelu", "w2"], ["m2"], name="fc2"),
             helper.make_node("Add", ["bias2", "m2"], ["mlp"], name="fc2_bias"),
             helper.make_node("Add", ["x", "mlp"], ["z"], name="residual"),
             helper.make_node("LayerNormalization", ["z", "g2", "b2"], ["f"], name="ln", axis=-1, epsilon=1e-6),
             helper.make_node("Gather", ["f", "token"], ["cls"], name="class_token", axis=1),
             helper.make_node("Gemm", ["cls", "head", "head_bias"], ["y"], name="head", transB=1)]
    initializer = [weight("g1", [8], 30), weight("b1", [8], 31), weight("w1", [8, 32], 32), weight("bias1", [32], 33),
                   const("root2", 1.4142135), const("one", 1.0), const("half", 0.5), weight("w2", [32, 8], 34),
                   weight("bias2", [8], 35), weight("g2", [8], 36), weight("b2", [8], 37),
                   numpy_helper.from_array(np.array(0, dtype=np.int64), "token"), weight("head", [10, 8], 38),
                   weight("head_bias", [10], 39)]
    graph = helper.make_graph(nodes, "class_token_head", [tensor_info("x", ["N", 5, 8])], [tensor_info("y", ["N", 10])],
                              initializer=initializer)
    save(model_of(graph, (("", 17),)), "class_token_head.onnx")


def window_attention():
    """Attention within windows written with Einsum, as MaxViT's export does: x [N, 3, 7, 16] (3
    windows of 7 tokens) to q, k and v by MatMul, scores Einsum("bgid,bgjd->bgij"), scaled,
    Softmax, the weighted sum Einsum("bgij,bgjd->bgid"), and an output projection, at opset 17.
    Both Einsums are products, written as MatMul by rewrite/einsum_lowering.h."""
    nodes = [helper.make_node("MatMul", ["x", "wq"], ["q"], name="to_q"),
             helper.make_node("MatMul", ["x", "wk"], ["k"], name="to_k"),
             helper.make_node("MatMul", ["x", "wv"], ["v"], name="to_v"),
             helper.make_node("Einsum", ["q", "k"], ["scores"], name="scores", equation="bgid,bgjd->bgij"),
             helper.make_node("Mul", ["scores", "scale"], ["scaled"], name="scale"),
             helper.make_node("Softmax", ["scaled"], ["p"], name="softmax", axis=-1),
             helper.make_node("Einsum", ["p", "v"], ["attended"], name="weighted_sum", equation="bgij,bgjd->bgid"),
             helper.make_node("MatMul", ["attended", "wo"], ["y"], name="out")]
    initializer = [weight("wq", [16, 16], 40), weight("wk", [16, 16], 41), weight("wv", [16, 16], 42),
                   numpy_helper.from_array(np.array(0.25, dtype=np.float32), "scale"), weight("wo", [16, 16], 43)]
    graph = helper.make_graph(nodes, "window_attention", [tensor_info("x", ["N", 3, 7, 16])],
                              [tensor_info("y", ["N", 3, 7, 16])], initializer=initializer)
    save(model_of(graph, (("", 17),)), "window_attention.onnx")


def data_shaped_rows():
    """Rows whose count is read from the data, then reshaped by a target computed from their
    shape, as transformer exports shape their embeddings (BERT's Expand of a computed shape): ids
    [N, S] int64; rows = Expand(row [1, 8], [max(ids) + 1, 8]); r = Reshape(rows, [2 x rows, 4]);
    y = Relu(r @ w). No static analysis sizes rows or r, nor the Reshape target: graphsub's
    measuring instance takes them from one run (lib/pipeline/measure_sizes.h)."""
    def ints(name, value):
        return numpy_helper.from_array(np.array(value, dtype=np.int64), name)
    nodes = [helper.make_node("ReduceMax", ["ids"], ["largest"], name="largest", keepdims=0),
             helper.make_node("Add", ["largest", "one"], ["count"], name="count"),
             helper.make_node("Unsqueeze", ["count", "axis0"], ["count1"], name="count1"),
             helper.make_node("Concat", ["count1", "width"], ["target"], name="target", axis=0),
             helper.make_node("Expand", ["row", "target"], ["rows"], name="rows"),
             helper.make_node("Shape", ["rows"], ["rows_shape"], name="rows_shape"),
             helper.make_node("Gather", ["rows_shape", "zero"], ["height"], name="height", axis=0),
             helper.make_node("Mul", ["height", "two"], ["doubled"], name="doubled"),
             helper.make_node("Unsqueeze", ["doubled", "axis0"], ["doubled1"], name="doubled1"),
             helper.make_node("Concat", ["doubled1", "half_width"], ["halves"], name="halves", axis=0),
             helper.make_node("Reshape", ["rows", "halves"], ["r"], name="reshape"),
             helper.make_node("MatMul", ["r", "w"], ["m"], name="project"),
             helper.make_node("Relu", ["m"], ["y"], name="relu")]
    initializer = [ints("one", 1), ints("axis0", [0]), ints("width", [8]), weight("row", [1, 8], 50), ints("zero", 0),
                   ints("two", 2), ints("half_width", [4]), weight("w", [4, 4], 51)]
    graph = helper.make_graph(nodes, "data_shaped_rows", [tensor_info("ids", ["N", "S"], TensorProto.INT64)],
                              [tensor_info("y", [None, 4])], initializer=initializer)
    save(model_of(graph, (("", 17),)), "data_shaped_rows.onnx")


def traced_size():
    """y = Relu(Reshape(x, [3, 4])) with x float32[N, 6]: the target holds the size it was traced
    at (N = 2), as the TorchScript exporter writes the traced sequence length into attention's
    reshapes, so the model runs with N = 2 only."""
    shape = numpy_helper.from_array(np.array([3, 4], dtype=np.int64), "shape")
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
        helper.make_node("Relu", ["r"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(nodes, "traced_size", [tensor_info("x", ["N", 6])], [tensor_info("y", [3, 4])],
                              initializer=[shape])
    save(model_of(graph), "traced_size.onnx")


def near_ties():
    """y = ArgMax(BatchNormalization(Conv(x)), axis 1) over two channels equal but for rounding:
    the second computes 3 w * x and scales it by 1/3. Folding the batch norm into the convolution
    (a rewrite, or onnxruntime's own optimizations) rounds them otherwise, and the ArgMax flips
    wherever they were near-equal."""
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((1, 4, 3, 3)).astype(np.float32)
    b0 = rng.standard_normal(1).astype(np.float32)
    three = np.float32(3)
    inits = [numpy_helper.from_array(np.concatenate([w0, w0 * three]), "w"),
             numpy_helper.from_array(np.concatenate([b0, b0 * three]), "b"),
             numpy_helper.from_array(np.array([1, 1 / 3], dtype=np.float32), "scale"),
             numpy_helper.from_array(np.zeros(2, dtype=np.float32), "bias"),
             numpy_helper.from_array(np.zeros(2, dtype=np.float32), "mean"),
             numpy_helper.from_array(np.ones(2, dtype=np.float32), "var")]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["n"], name="norm",
                         epsilon=0.0),
        helper.make_node("ArgMax", ["n"], ["y"], name="argmax", axis=1, keepdims=1),
    ]
    graph = helper.make_graph(nodes, "near_ties", [tensor_info("x", ["N", 4, 8, 8])],
                              [tensor_info("y", ["N", 1, 8, 8], TensorProto.INT64)], initializer=inits)
    save(model_of(graph), "near_ties.onnx")


def unsorted_nodes():
    """y = Relu(Sigmoid(Neg(x))), the nodes listed last to first."""
    nodes = [
        helper.make_node("Relu", ["s"], ["y"], name="relu"),
        helper.make_node("Sigmoid", ["n"], ["s"], name="sigmoid"),
        helper.make_node("Neg", ["x"], ["n"], name="neg"),
    ]
    graph = helper.make_graph(nodes, "unsorted", [tensor_info("x", [2, 3])], [tensor_info("y", [2, 3])])
    save(model_of(graph), "unsorted_nodes.onnx", check=False)


def constants():
    """Constant nodes of each attribute kind feeding Add, Mul and Reshape."""
    nodes = [
        helper.make_node("Constant", [], ["c_tensor"], name="c_tensor",
                         value=numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3))),
        helper.make_node("Constant", [], ["c_float"], name="c_float", value_float=2.0),
        helper.make_node("Constant", [], ["c_shape"], name="c_shape", value_ints=[3, 2]),
        helper.make_node("Add", ["x", "c_tensor"], ["a"], name="add"),
        helper.make_node("Mul", ["a", "c_float"], ["m"], name="mul"),
        helper.make_node("Reshape", ["m", "c_shape"], ["y"], name="reshape"),
    ]
    graph = helper.make_graph(nodes, "constants", [tensor_info("x", [2, 3])], [tensor_info("y", [3, 2])])
    save(model_of(graph), "constants.onnx")


def fold_transpose():
    """y = MatMul(x, Transpose(w)): the Transpose reads only a weight, so export folds it."""
    nodes = [
        helper.make_node("Transpose", ["w"], ["wt"], name="transpose", perm=[1, 0]),
        helper.make_node("MatMul", ["x", "wt"], ["y"], name="matmul"),
    ]
    graph = helper.make_graph(
        nodes, "fold_transpose", [tensor_info("x", [2, 4])], [tensor_info("y", [2, 3])],
        initializer=[weight("w", [3, 4], 2)])
    save(model_of(graph), "fold_transpose.onnx")


def external_data():
    """y = Add(x, w) with w's 64 floats in external_data.onnx.data at offset 16."""
    w = weight("w", [8, 8], 3)
    raw = w.raw_data
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "external_data.onnx.data"), ("offset", "16"),
                       ("length", str(len(raw)))):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    graph = helper.make_graph(
        nodes, "external_data", [tensor_info("x", [8, 8])], [tensor_info("y", [8, 8])], initializer=[w])
    with open(os.path.join(MODELS, "external_data.onnx.data"), "wb") as out:
        out.write(bytes(16) + raw)
    save(model_of(graph), "external_data.onnx", check=False)


def custom_op():
    """A node of a domain ONNX does not know between two modelled ones: it stays opaque."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Frobnicate", ["r"], ["f"], name="frob", domain="com.example",
                         strength=0.5, mode="fast", doc_string="kept verbatim"),
        helper.make_node("Sigmoid", ["f"], ["y"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "custom_op", [tensor_info("x", ["N", 3])], [tensor_info("y", ["N", 3])],
        value_info=[tensor_info("f", ["N", 3])])
    save(model_of(graph, (("", OPSET), ("com.example", 1))), "custom_op.onnx")


def cumulative_sum():
    """y = 2 relu(cumsum(x, axis 1)): CumSum, a standard operator graphsub does not model, so
    --check runs in onnxruntime."""
    nodes = [
        helper.make_node("CumSum", ["x", "axis"], ["c"], name="cumsum"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "two"], ["y"], name="double"),
    ]
    graph = helper.make_graph(
        nodes, "cumulative_sum", [tensor_info("x", ["N", 4])], [tensor_info("y", ["N", 4])],
        initializer=[numpy_helper.from_array(np.array(1, dtype=np.int64), "axis"),
                     numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")])
    save(model_of(graph), "cumulative_sum.onnx")


def input_default():
    """An initializer also listed as a graph input (IR >= 4): an input with a default value."""
    nodes = [helper.make_node("Mul", ["x", "scale"], ["y"], name="mul")]
    graph = helper.make_graph(
        nodes, "input_default", [tensor_info("x", [2, 2]), tensor_info("scale", [2, 2])],
        [tensor_info("y", [2, 2])], initializer=[weight("scale", [2, 2], 4)])
    graph.doc_string = "graph doc"
    model = model_of(graph)
    helper.set_model_props(model, {"author": "graphsub", "purpose": "metadata round trip"})
    save(model, "input_default.onnx")


def sparse_initializer():
    """y = Total(s) (a custom op: ONNX's own ops take no sparse tensors) where s is a sparse
    initializer with two non-zeros."""
    values = numpy_helper.from_array(np.array([1.5, -2.0], dtype=np.float32), "s")
    indices = numpy_helper.from_array(np.array([1, 4], dtype=np.int64), "s_indices")
    sparse = helper.make_sparse_tensor(values, indices, [2, 3])
    nodes = [helper.make_node("Total", ["s"], ["y"], name="total", domain="com.example")]
    graph = helper.make_graph(nodes, "sparse", [], [tensor_info("y", [2, 3])])
    graph.sparse_initializer.extend([sparse])
    save(model_of(graph, (("", OPSET), ("com.example", 1))), "sparse_initializer.onnx")


def sparse_weight():
    """y = Relu(MatMul(x, w)) where w is a 4 x 3 sparse initializer with three non-zeros. ONNX's
    shape inference types a sparse initializer as a sparse tensor, which MatMul refuses; the IR
    spec and onnxruntime read it as the dense tensor it stores."""
    values = numpy_helper.from_array(np.array([2.0, -1.0, 0.5], dtype=np.float32), "w")
    indices = numpy_helper.from_array(np.array([0, 4, 11], dtype=np.int64), "w_indices")
    sparse = helper.make_sparse_tensor(values, indices, [4, 3])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
             helper.make_node("Relu", ["m"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "sparse_weight", [tensor_info("x", [2, 4])], [tensor_info("y", [2, 3])])
    graph.sparse_initializer.extend([sparse])
    save(model_of(graph), "sparse_weight.onnx")


def if_outer_scope():
    """y = If(cond) whose branches read r = Relu(x) from the enclosing graph (an implicit input)."""
    then_branch = helper.make_graph(
        [helper.make_node("Identity", ["r"], ["then_y"], name="then_identity")], "then_branch", [],
        [tensor_info("then_y", [2])])
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["r"], ["else_y"], name="else_neg")], "else_branch", [],
        [tensor_info("else_y", [2])])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_branch,
                         else_branch=else_branch),
    ]
    graph = helper.make_graph(
        nodes, "if_outer_scope", [tensor_info("x", [2]), tensor_info("cond", [], TensorProto.BOOL)],
        [tensor_info("y", [2])])
    save(model_of(graph), "if_outer_scope.onnx")


def typed_tensors():
    """Initializers stored in the typed data fields (not raw_data), one per element type, each
    passed through an Identity to an output."""
    tensors = [
        helper.make_tensor("f32", TensorProto.FLOAT, [2], [1.5, -2.0]),
        helper.make_tensor("f64", TensorProto.DOUBLE, [2], [0.25, 1e300]),
        helper.make_tensor("f16", TensorProto.FLOAT16, [2], np.array([1.0, -0.5], dtype=np.float16)),
        helper.make_tensor("i8", TensorProto.INT8, [3], [-128, 0, 127]),
        helper.make_tensor("u16", TensorProto.UINT16, [2], [0, 65535]),
        helper.make_tensor("i32", TensorProto.INT32, [2], [-7, 2147483647]),
        helper.make_tensor("i64", TensorProto.INT64, [2], [-(2**62), 5]),
        helper.make_tensor("u64", TensorProto.UINT64, [1], [2**63 + 1]),
        helper.make_tensor("flags", TensorProto.BOOL, [3], [True, False, True]),
        helper.make_tensor("words", TensorProto.STRING, [2], [b"graph", b"sub"]),
    ]
    nodes = [helper.make_node("Identity", [t.name], [t.name + "_out"], name=t.name) for t in tensors]
    outputs = [tensor_info(t.name + "_out", list(t.dims), t.data_type) for t in tensors]
    graph = helper.make_graph(nodes, "typed_tensors", [], outputs, initializer=tensors)
    save(model_of(graph), "typed_tensors.onnx")


def hard_swish_blocks():
    """Keras's activations as tf2onnx writes them, at opset 17: x [N, 8, 8, 4] channels-last, a
    convolution between Transposes, its hard swish x * (relu6(x + 3) * 1/6), a squeeze-and-
    excitation gate relu6(m + 3) * 1/6 of the mean over the image, and a second convolution with
    YOLOv5's hard swish x * hardtanh(x + 3, 0, 6) / 6. `optimize` writes the chains as HardSwish
    and HardSigmoid (rewrite/activation_forms.h); a batch normalization after the first
    convolution gives the search a substitution beside them."""
    def scalar(name, value):
        return numpy_helper.from_array(np.array(value, dtype=np.float32), name)

    nodes = [helper.make_node("Transpose", ["x"], ["xt"], name="to_nchw", perm=[0, 3, 1, 2]),
             helper.make_node("Conv", ["xt", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["cb"],
                              name="bn"),
             helper.make_node("Transpose", ["cb"], ["h"], name="to_nhwc", perm=[0, 2, 3, 1]),
             helper.make_node("Add", ["h", "three"], ["h3"], name="swish_add"),
             helper.make_node("Clip", ["h3", "zero", "six"], ["h6"], name="swish_relu6"),
             helper.make_node("Mul", ["h6", "sixth"], ["hs"], name="swish_scale"),
             helper.make_node("Mul", ["h", "hs"], ["a"], name="swish"),
             helper.make_node("ReduceMean", ["a"], ["m"], name="squeeze", axes=[1, 2], keepdims=1),
             helper.make_node("Add", ["m", "three"], ["m3"], name="gate_add"),
             helper.make_node("Clip", ["m3", "zero", "six"], ["m6"], name="gate_relu6"),
             helper.make_node("Mul", ["m6", "sixth"], ["g"], name="gate_scale"),
             helper.make_node("Mul", ["a", "g"], ["e"], name="excite"),
             helper.make_node("Transpose", ["e"], ["et"], name="to_nchw_2", perm=[0, 3, 1, 2]),
             helper.make_node("Conv", ["et", "w2", "b2"], ["z"], name="conv_2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["z", "three"], ["z3"], name="yolo_add"),
             helper.make_node("Clip", ["z3", "zero", "six"], ["z6"], name="yolo_hardtanh"),
             helper.make_node("Mul", ["z", "z6"], ["zz"], name="yolo_mul"),
             helper.make_node("Div", ["zz", "six"], ["y"], name="yolo_div")]
    graph = helper.make_graph(
        nodes, "hard_swish_blocks", [tensor_info("x", ["N", 8, 8, 4])], [tensor_info("y", ["N", 8, 8, 8])],
        initializer=[weight("w", [8, 4, 3, 3], 30), weight("b", [8], 31), weight("w2", [8, 8, 3, 3], 32),
                     weight("b2", [8], 33), weight("bn_scale", [8], 34), weight("bn_bias", [8], 35),
                     weight("bn_mean", [8], 36),
                     numpy_helper.from_array(np.linspace(0.5, 2.0, 8).astype(np.float32), "bn_var"),
                     scalar("three", 3.0), scalar("zero", 0.0), scalar("six", 6.0),
                     scalar("sixth", 1.0 / 6)])
    save(model_of(graph, (("", 17),)), "hard_swish_blocks.onnx")


def grouped_query_attention():
    """One LLaMA-style attention block as Hugging Face's exports write it, at opset 17, x [batch,
    sequence, 16]: an RMSNorm with rsqrt as Reciprocal(Sqrt) (the dynamo exporter's form), query,
    key and value products with 4 query heads sharing 2 key/value heads, repeat_kv as Unsqueeze,
    Expand and Reshape to shapes computed from Shape(x) (with the Where(Equal(shape, -1), 1, shape)
    torch writes for expand), softmax attention and the output product with a residual.
    `optimize` writes the Reciprocal as Div(1, Sqrt) (rewrite/rsqrt_form.h), the Expands' shapes
    as literals, and reads the shapes that stay computed from x's dims
    (rewrite/shape_arithmetic.h)."""
    def ints(name, values):
        return numpy_helper.from_array(np.array(values, dtype=np.int64), name)

    def scalar(name, value):
        return numpy_helper.from_array(np.array(value, dtype=np.float32), name)

    def node(op, inputs, outputs, **attrs):
        return helper.make_node(op, inputs, outputs, name=outputs[0], **attrs)

    nodes = [node("Pow", ["x", "two"], ["squares"]),
             node("ReduceMean", ["squares"], ["variance"], axes=[-1], keepdims=1),
             node("Add", ["variance", "epsilon"], ["shifted"]),
             node("Sqrt", ["shifted"], ["root"]),
             node("Reciprocal", ["root"], ["inverse"]),
             node("Mul", ["x", "inverse"], ["normed"]),
             node("Mul", ["normed", "norm_weight"], ["h"]),
             node("MatMul", ["h", "wq"], ["q"]),
             node("MatMul", ["h", "wk"], ["k"]),
             node("MatMul", ["h", "wv"], ["v"]),
             node("Shape", ["x"], ["x_shape"]),
             node("Gather", ["x_shape", "zero"], ["b"], axis=0),
             node("Gather", ["x_shape", "one"], ["s"], axis=0),
             node("Unsqueeze", ["b", "axis_0"], ["b1"]),
             node("Unsqueeze", ["s", "axis_0"], ["s1"]),
             node("Concat", ["b1", "s1", "four", "four"], ["q_shape"], axis=0),
             node("Concat", ["b1", "s1", "two_i", "four"], ["kv_shape"], axis=0),
             node("Reshape", ["q", "q_shape"], ["q4"]),
             node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3])]
    for name in ("k", "v"):
        nodes += [node("Reshape", [name, "kv_shape"], [name + "4"]),
                  node("Transpose", [name + "4"], [name + "h"], perm=[0, 2, 1, 3]),
                  node("Unsqueeze", [name + "h", "axis_2"], [name + "u"]),
                  node("Concat", ["b1", "two_i", "two_i", "s1", "four"], [name + "_sizes"], axis=0),
                  node("Equal", [name + "_sizes", "minus_ones"], [name + "_unset"]),
                  node("Where", [name + "_unset", "ones", name + "_sizes"], [name + "_expand_shape"]),
                  node("Expand", [name + "u", name + "_expand_shape"], [name + "e"]),
                  node("Concat", ["b1", "four", "s1", "four"], [name + "_heads_shape"], axis=0),
                  node("Reshape", [name + "e", name + "_heads_shape"], [name + "r"])]
    nodes += [node("Transpose", ["kr"], ["kt"], perm=[0, 1, 3, 2]),
              node("MatMul", ["qh", "kt"], ["scores"]),
              node("Mul", ["scores", "scale"], ["scaled"]),
              node("Softmax", ["scaled"], ["p"], axis=-1),
              node("MatMul", ["p", "vr"], ["o"]),
              node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
              node("Concat", ["b1", "s1", "sixteen"], ["o_shape"], axis=0),
              node("Reshape", ["ot", "o_shape"], ["merged"]),
              node("MatMul", ["merged", "wo"], ["projected"]),
              node("Add", ["x", "projected"], ["y"])]
    graph = helper.make_graph(
        nodes, "grouped_query_attention", [tensor_info("x", ["batch", "sequence", 16])],
        [tensor_info("y", ["batch", "sequence", 16])],
        initializer=[scalar("two", 2.0), scalar("epsilon", 1e-6), weight("norm_weight", [16], 40),
                     weight("wq", [16, 16], 41), weight("wk", [16, 8], 42), weight("wv", [16, 8], 43),
                     weight("wo", [16, 16], 44), scalar("scale", 0.5),
                     ints("zero", 0), ints("one", 1), ints("axis_0", [0]), ints("axis_2", [2]), ints("two_i", [2]),
                     ints("four", [4]), ints("sixteen", [16]), ints("minus_ones", [-1, -1, -1, -1, -1]),
                     ints("ones", [1, 1, 1, 1, 1])])
    save(model_of(graph, (("", 17),)), "grouped_query_attention.onnx")


def qdq_branches():
    """Two 3x3 convolutions of one input in onnxruntime's QDQ form, as quantize_static writes a
    model: the input quantized to uint8 and dequantized, each kernel int8 per output channel and
    each bias int32, both dequantized, each output quantized and dequantized. onnxruntime runs
    each convolution as one QLinearConv; merged into one convolution (merge-convs-bias), its
    kernel a concatenation of dequantized kernels, it runs in float."""
    rng = np.random.default_rng(60)
    x_scale, y_scale = np.float32(0.02), np.float32(0.05)
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["x_q"], name="x_quantize"),
             helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zero"], ["x_dq"], name="x_dequantize")]
    initializers = [numpy_helper.from_array(np.array(x_scale), "x_scale"),
                    numpy_helper.from_array(np.array(128, dtype=np.uint8), "x_zero"),
                    numpy_helper.from_array(np.array(y_scale), "y_scale"),
                    numpy_helper.from_array(np.array(128, dtype=np.uint8), "y_zero")]
    outputs = []
    for k in (1, 2):
        w_scale = (rng.random(16) * 0.01 + 0.005).astype(np.float32)
        initializers += [
            numpy_helper.from_array(rng.integers(-127, 128, (16, 16, 3, 3)).astype(np.int8), f"w{k}_q"),
            numpy_helper.from_array(w_scale, f"w{k}_scale"),
            numpy_helper.from_array(np.zeros(16, dtype=np.int8), f"w{k}_zero"),
            numpy_helper.from_array(rng.integers(-1000, 1000, 16).astype(np.int32), f"b{k}_q"),
            numpy_helper.from_array((w_scale * x_scale).astype(np.float32), f"b{k}_scale"),
            numpy_helper.from_array(np.zeros(16, dtype=np.int32), f"b{k}_zero")]
        nodes += [
            helper.make_node("DequantizeLinear", [f"w{k}_q", f"w{k}_scale", f"w{k}_zero"], [f"w{k}"],
                             name=f"w{k}_dequantize", axis=0),
            helper.make_node("DequantizeLinear", [f"b{k}_q", f"b{k}_scale", f"b{k}_zero"], [f"b{k}"],
                             name=f"b{k}_dequantize", axis=0),
            helper.make_node("Conv", ["x_dq", f"w{k}", f"b{k}"], [f"c{k}"], name=f"conv{k}", kernel_shape=[3, 3],
                             pads=[1, 1, 1, 1]),
            helper.make_node("QuantizeLinear", [f"c{k}", "y_scale", "y_zero"], [f"c{k}_q"], name=f"conv{k}_quantize"),
            helper.make_node("DequantizeLinear", [f"c{k}_q", "y_scale", "y_zero"], [f"y{k}"],
                             name=f"conv{k}_dequantize")]
        outputs.append(tensor_info(f"y{k}", ["N", 16, 24, 24]))
    graph = helper.make_graph(nodes, "qdq_branches", [tensor_info("x", ["N", 16, 24, 24])], outputs,
                              initializer=initializers)
    save(model_of(graph), "qdq_branches.onnx")


def main():
    os.makedirs(MODELS, exist_ok=True)
    for build in (cycle, shape_mismatch, symbolic_dims, unsorted_nodes, constants, fold_transpose,
                  external_data, custom_op, cumulative_sum, input_default, sparse_initializer, sparse_weight,
                  if_outer_scope,
                  typed_tensors, channel_shuffle, shuffle_unit,
                  shuffle_stage_end, packed_attention, shifted_windows, conv_relu, squeeze_excitation, squeeze_excitation_transposed,
                  class_token_head, window_attention, data_shaped_rows, traced_size, near_ties, hard_swish_blocks,
                  grouped_query_attention, c2f_block, qdq_branches):
        build()
    return 0


if __name__ == "__main__":
    sys.exit(main())
