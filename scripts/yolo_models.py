#!/usr/bin/env python3
"""Exports Ultralytics YOLO detectors with random weights to ONNX, as a YOLO user would with
`model.export(format="onnx")`: object detectors graphsub's speed benchmark times beside the
classification networks.

Needs torch and ultralytics, which pin their own numpy; keep them out of the interpreter
graphsub's tests use, e.g.

    python3 -m venv /tmp/yoloenv && /tmp/yoloenv/bin/pip install ultralytics onnx
    /tmp/yoloenv/bin/python scripts/yolo_models.py --folder /tmp/yolo_models
    python3 scripts/bench_speed.py --models --onnx /tmp/yolo_models/*.onnx

Each model is built from its configuration (`YOLO("yolov8n.yaml")`: no weights downloaded),
seeded, its batch norms varied as a trained model's are (random initialization leaves them at
scale one, shift and mean zero, variance one), and exported at 640 x 640, batch 1, opset 17,
without onnxslim, as the exporter writes it. `--simplify` runs onnxslim as `model.export` does
by default (it needs `pip install onnxslim`), and names the files `<model>_slim.onnx`;
`--dynamic` exports a symbolic batch and image size (`<model>_dynamic.onnx`), for which graphsub
needs the sizes to measure at (`--dim batch=1 --dim height=640 --dim width=640`).
`--quantized` also writes `<model>_qdq.onnx`: onnxruntime's `quantize_static` in the QDQ format
(uint8 activations, int8 kernels per output channel), calibrated on four seeded random images
(the ranges, not accuracy, are what a speed benchmark needs; it needs the onnxruntime package).
"""
import argparse
import os
import shutil
import sys
import tempfile

#: Configuration file of each exported model.
MODELS = {
    "yolov8n": "yolov8n.yaml",
    "yolo11n": "yolo11n.yaml",
    "yolov8s": "yolov8s.yaml",
    "yolov8n_seg": "yolov8n-seg.yaml",
    "yolov5n": "yolov5n.yaml",
    "yolov9t": "yolov9t.yaml",
    "yolov10n": "yolov10n.yaml",
    "yolo12n": "yolo12n.yaml",
    "yolo26n": "yolo26n.yaml",
    "yolo11n_pose": "yolo11n-pose.yaml",
    "yolo11n_obb": "yolo11n-obb.yaml",
    "yolo11n_cls": "yolo11n-cls.yaml",
    "yolov6n": "yolov6n.yaml",
    "rtdetr_l": "rtdetr-l.yaml",
}


def vary_batch_norms(model, torch):
    """Draws every batch norm's parameters and statistics (seeded by the caller)."""
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            with torch.no_grad():
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0, 0.1)
                module.running_mean.normal_(0, 0.1)
                module.running_var.uniform_(0.5, 1.5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", required=True, help="where the .onnx files go")
    parser.add_argument("--models", nargs="*", choices=sorted(MODELS), help="default: all")
    parser.add_argument("--size", type=int, default=640, help="image size")
    parser.add_argument("--simplify", action="store_true", help="run onnxslim, as the exporter does by default")
    parser.add_argument("--dynamic", action="store_true", help="a symbolic batch and image size")
    parser.add_argument("--quantized", action="store_true", help="also write <model>_qdq.onnx (quantize_static, QDQ)")
    args = parser.parse_args()

    import numpy as np
    import torch
    from torch_models import quantize_qdq  # scripts/ is this script's folder
    from ultralytics import RTDETR, YOLO

    os.makedirs(args.folder, exist_ok=True)
    for name in args.models or MODELS:
        torch.manual_seed(0)  # each model's weights the same whichever others are exported
        with tempfile.TemporaryDirectory() as work:
            # The exporter writes next to the model's own file; build and export in a scratch
            # directory so nothing lands in the working directory.
            previous = os.getcwd()
            os.chdir(work)
            try:
                # RT-DETR has a class of its own; YOLO() refuses its configuration.
                model = (RTDETR if name.startswith("rtdetr") else YOLO)(MODELS[name])
                vary_batch_norms(model.model, torch)
                written = model.export(format="onnx", opset=17, imgsz=args.size, simplify=args.simplify,
                                       dynamic=args.dynamic)
            finally:
                os.chdir(previous)
            suffix = ("_slim" if args.simplify else "") + ("_dynamic" if args.dynamic else "")
            path = os.path.join(args.folder, name + suffix + ".onnx")
            shutil.move(os.path.join(work, written), path)
        print("wrote", path, flush=True)
        if args.quantized:
            quantized = path[:-len(".onnx")] + "_qdq.onnx"
            rng = np.random.default_rng(0)
            quantize_qdq(path, quantized, [{"images": rng.random((1, 3, args.size, args.size)).astype(np.float32)}
                                           for _ in range(4)], per_channel=True)
            print("wrote", quantized, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
