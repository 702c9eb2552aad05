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
without onnxslim, as the exporter writes it.
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
    args = parser.parse_args()

    import torch
    from ultralytics import YOLO

    os.makedirs(args.folder, exist_ok=True)
    for name in args.models or MODELS:
        torch.manual_seed(0)  # each model's weights the same whichever others are exported
        with tempfile.TemporaryDirectory() as work:
            # The exporter writes next to the model's own file; build and export in a scratch
            # directory so nothing lands in the working directory.
            previous = os.getcwd()
            os.chdir(work)
            try:
                model = YOLO(MODELS[name])
                vary_batch_norms(model.model, torch)
                written = model.export(format="onnx", opset=17, imgsz=args.size, simplify=False, dynamic=False)
            finally:
                os.chdir(previous)
            path = os.path.join(args.folder, name + ".onnx")
            shutil.move(os.path.join(work, written), path)
        print("wrote", path, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
