#!/usr/bin/env python3
"""Writes the node tests of the pip-installed onnx package as ONNX test data folders.

The onnx wheel carries its backend node tests as Python (onnx.backend.test.case.node), not as
files; this runs them and writes each as the ONNX test data layout that libonnx-testdata uses and
scripts/roundtrip_check.py reads: <output>/node/<test name>/model.onnx and
test_data_set_<i>/{input,output}_<j>.pb. With --min-opset, only the tests whose model imports the
default domain at that opset or later are written (the opsets Debian's test data lacks).
"""
import argparse
import os
import shutil
import sys
import warnings

import onnx
from onnx import numpy_helper
from onnx.backend.test.case import node


def serialized(value, type_proto, name):
    """One test input or output as the proto its declared type calls for."""
    kind = type_proto.WhichOneof("value")
    if isinstance(value, onnx.TensorProto):
        return value.SerializeToString()
    if kind == "map_type":
        return numpy_helper.from_dict(value, name).SerializeToString()
    if kind == "sequence_type":
        return numpy_helper.from_list(value, name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, name).SerializeToString()
    return numpy_helper.from_array(value, name).SerializeToString()


def default_opset(model):
    return max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)


def write_case(case, folder):
    if os.path.exists(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    graph = case.model.graph
    for i, (inputs, outputs) in enumerate(case.data_sets):
        data = os.path.join(folder, f"test_data_set_{i}")
        os.makedirs(data)
        for prefix, values, declared in (("input", inputs, graph.input), ("output", outputs, graph.output)):
            for j, value in enumerate(values):
                with open(os.path.join(data, f"{prefix}_{j}.pb"), "wb") as f:
                    f.write(serialized(value, declared[j].type, declared[j].name))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", required=True, help="folder to write <output>/node/<test>/ into")
    parser.add_argument("--min-opset", type=int, default=0, help="only tests at this default-domain opset or later")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node.collect_testcases()
    written = 0
    for case in cases:
        if case.model is None or not case.data_sets or default_opset(case.model) < args.min_opset:
            continue
        write_case(case, os.path.join(args.output, "node", case.name))
        written += 1
    print(f"wrote {written} node tests of onnx {onnx.__version__} into {args.output}/node", file=sys.stderr)


if __name__ == "__main__":
    main()
