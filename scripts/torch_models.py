#!/usr/bin/env python3
"""A zoo of real PyTorch models exported to ONNX, for graphsub's speed benchmark and checks.

Builds torchvision classifiers, transformer encoders (PyTorch's own and BERT-base), an LSTM and a
ResNeXt block written as 32 explicit branches, all with random weights (nothing is downloaded;
`torch.manual_seed(0)` before each build, so exports are reproducible; biases, norm scales and
other tensors that initialization leaves constant get small random variation, as a trained
model's have), batch 1 and 224x224 images
(299 for Inception-v3), and exports them with PyTorch's TorchScript exporter (`NAME_opsetN.onnx`,
symbolic batch and sequence dims) or, with `--exporter dynamo`, with the dynamo exporter that
`torch.onnx.export` uses by default since torch 2.9 (`NAME_dynamo.onnx`: torch's default opset,
static shapes, input names only: what a user's plain call writes). Importable: `MODELS` maps a
name to its builder and `export(name, opset, folder, exporter)` writes the ONNX file once. From the
command line it exports the models and prints name, path, ONNX node count and size:

  python3 scripts/torch_models.py --folder DIR [--opset 17] [--exporter dynamo] [--models NAME ...]
  python3 scripts/torch_models.py --folder DIR --extra
  python3 scripts/torch_models.py --folder DIR --quantized
  python3 scripts/torch_models.py --list [--extra | --quantized]

`EXTRA_MODELS` (`--extra`) are more architectures for robustness checks, not in the speed
benchmark: GPT-2, DistilBERT, RoBERTa, T5's and Whisper's encoders (transformers' default
configs), Swin-T, MaxViT-T, RegNet-Y, MnasNet, VGG-11, AlexNet, EfficientNet-V2-S, Wide
ResNet-50, three torchvision segmentation models (their "out" map) and two torchvision detectors
(boxes, scores, labels), and fifteen of timm's newer architectures (MobileOne, RepViT, FastViT
and RepVGG with their training-time branches). `QUANTIZED_MODELS` (`--quantized`) are int8 forms of zoo models made by
onnxruntime's quantization tools (dynamic for the transformers, static QDQ for the CNNs).

Needs torch, torchvision, (for BERT) transformers and (for the extra `tf_` models) timm: not part of CI, because those packages are
several GB.
"""
import argparse
import os
import sys

# Builder: () -> (module in eval mode, example args, input names, dynamic axes or None, sizes of
# the symbolic dimensions to run the model at).


def torch_randn(*shape):
    import torch
    torch.manual_seed(0)
    return torch.randn(*shape)


def torchvision_model(name):
    """A torchvision classifier on one image; its batch dimension is left symbolic."""
    def build():
        import torch
        import torchvision
        torch.manual_seed(0)
        kwargs = {"aux_logits": False, "init_weights": True} if name in ("inception_v3", "googlenet") else {}
        model = getattr(torchvision.models, name)(weights=None, **kwargs).eval()
        size = 299 if name == "inception_v3" else 224
        return model, (torch_randn(1, 3, size, size),), ["input"], {"input": {0: "batch"}}, {"batch": 2}
    return build


def timm_model(name):
    """A timm classifier on one image (needs `pip install timm`); its batch dimension symbolic.
    The `tf_` ports pad as TensorFlow's "same" does, with pads computed from the input size."""
    def build():
        import timm
        import torch
        torch.manual_seed(0)
        model = timm.create_model(name, pretrained=False).eval()
        return model, (torch_randn(1, 3, 224, 224),), ["input"], {"input": {0: "batch"}}, {"batch": 2}
    return build


def transformer_encoder():
    """PyTorch's TransformerEncoder: 4 layers, width 256, 8 heads."""
    import torch
    torch.manual_seed(0)
    torch.backends.mha.set_fastpath_enabled(False)  # the fused kernel has no ONNX export
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False).eval()
    # The TorchScript exporter bakes the traced sizes into attention's reshapes: check at those.
    return model, (torch_randn(2, 16, 256),), ["tokens"], {"tokens": {0: "batch", 1: "sequence"}}, \
        {"batch": 2, "sequence": 16}


def keyword_transformer(make, call):
    """A transformers model from make() (random weights) on 1 x 32 tokens, traced through
    call(model, input_ids, attention_mask), which passes keywords as the tracer cannot."""
    import torch

    class Keywords(torch.nn.Module):
        """make()'s model, called by call with keyword arguments."""
        def __init__(self):
            super().__init__()
            self.bert = make().eval()

        def forward(self, input_ids, attention_mask):
            return call(self.bert, input_ids, attention_mask)

    torch.manual_seed(0)
    model = Keywords().eval()
    torch.manual_seed(0)
    ids = torch.randint(0, 1000, (1, 32))
    return model, (ids, torch.ones_like(ids)), ["input_ids", "attention_mask"], \
        {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}, \
        {"batch": 1, "sequence": 32}


def bert_base():
    """BERT-base (transformers, eager attention) on 32 tokens, returning its last hidden state."""
    from transformers import BertConfig, BertModel
    return keyword_transformer(lambda: BertModel(BertConfig(attn_implementation="eager")),
                        lambda bert, ids, mask: bert(input_ids=ids, attention_mask=mask,
                                                     use_cache=False).last_hidden_state)


def bert_classifier():
    """BERT-base with a sequence-classification head (transformers' BertForSequenceClassification,
    eager attention, 2 labels) on 32 tokens, returning its logits: the pooler reads token 0."""
    from transformers import BertConfig, BertForSequenceClassification
    return keyword_transformer(lambda: BertForSequenceClassification(BertConfig(attn_implementation="eager", num_labels=2)),
                        lambda bert, ids, mask: bert(input_ids=ids, attention_mask=mask).logits)


def rnn_lstm():
    """A 2-layer LSTM (input 128, hidden 256, batch first) over 32 steps, with a Linear head."""
    import torch

    class Tagger(torch.nn.Module):
        """LSTM then a Linear layer on every step's output."""
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(input_size=128, hidden_size=256, num_layers=2, batch_first=True)
            self.head = torch.nn.Linear(256, 128)

        def forward(self, x):
            return self.head(self.lstm(x)[0])

    torch.manual_seed(0)
    return Tagger().eval(), (torch_randn(1, 32, 128),), ["sequence"], None, {}


def resnext_branches():
    """A ResNeXt block (cardinality 32, width 4) written as 32 explicit branches, summed with the input."""
    import torch
    nn = torch.nn

    class Block(nn.Module):
        """relu(x + sum of 32 branches 1x1 conv 256->4, relu, 3x3 conv 4->4, relu, 1x1 conv 4->256)."""
        def __init__(self, channels=256, branches=32, width=4):
            super().__init__()
            self.branches = nn.ModuleList(nn.Sequential(
                nn.Conv2d(channels, width, 1), nn.ReLU(),
                nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
                nn.Conv2d(width, channels, 1)) for _ in range(branches))

        def forward(self, x):
            total = x
            for branch in self.branches:
                total = total + branch(x)
            return torch.relu(total)

    torch.manual_seed(0)
    return Block().eval(), (torch_randn(1, 256, 56, 56),), ["input"], None, {}


def unet(upsampling):
    """A U-Net (Ronneberger et al.'s shape, widths 32 to 512, batch norms) on one 256 x 256 image:
    each decoder level concatenates the encoder's map with the upsampled one and convolves it
    (3 x 3), the form the concatenation layout forms rewrite. `upsampling`: "bilinear" (a
    bilinear resize, then a 1 x 1 convolution) or "transpose" (a 2 x 2 transposed convolution)."""
    def build():
        import torch
        nn = torch.nn

        def block(inputs, outputs):
            return nn.Sequential(nn.Conv2d(inputs, outputs, 3, padding=1, bias=False), nn.BatchNorm2d(outputs),
                                 nn.ReLU(), nn.Conv2d(outputs, outputs, 3, padding=1, bias=False),
                                 nn.BatchNorm2d(outputs), nn.ReLU())

        class UNet(nn.Module):
            def __init__(self, width=32):
                super().__init__()
                widths = [width << level for level in range(5)]
                self.first = block(3, widths[0])
                self.downs = nn.ModuleList(block(widths[i], widths[i + 1]) for i in range(4))
                self.ups = nn.ModuleList(
                    nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2) if upsampling == "transpose"
                    else nn.Conv2d(widths[i + 1], widths[i], 1) for i in reversed(range(4)))
                self.decoders = nn.ModuleList(block(2 * widths[i], widths[i]) for i in reversed(range(4)))
                self.head = nn.Conv2d(widths[0], 2, 1)

            def forward(self, x):
                maps = [self.first(x)]
                for down in self.downs:
                    maps.append(down(nn.functional.max_pool2d(maps[-1], 2)))
                y = maps.pop()
                for up, decoder in zip(self.ups, self.decoders):
                    if upsampling == "transpose":
                        y = up(y)
                    else:
                        y = up(nn.functional.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False))
                    y = decoder(torch.cat([maps.pop(), y], 1))
                return self.head(y)

        torch.manual_seed(0)
        return UNet().eval(), (torch_randn(1, 3, 256, 256),), ["input"], None, {}
    return build


def segmentation_model(name):
    """A torchvision segmentation model (no auxiliary head) on one 224 x 224 image, returning its
    "out" map; its batch dimension is left symbolic."""
    def build():
        import torch
        import torchvision

        class Out(torch.nn.Module):
            """The model's "out" entry: the exporters take tensors, not dicts."""
            def __init__(self):
                super().__init__()
                self.model = getattr(torchvision.models.segmentation, name)(
                    weights=None, weights_backbone=None, aux_loss=False).eval()

            def forward(self, x):
                return self.model(x)["out"]

        torch.manual_seed(0)
        return Out().eval(), (torch_randn(1, 3, 224, 224),), ["input"], {"input": {0: "batch"}}, {"batch": 2}
    return build


def detection_model(name, **options):
    """A torchvision detector on one 320 x 320 image, returning its boxes, scores and labels: the
    post-processing (NonMaxSuppression in an If, TopK, NonZero, RoiAlign) shapes most values from
    data, and some of them have a rank ONNX cannot infer. `options` go to the model (a score
    threshold of 0, so that random weights still detect boxes and a check compares some)."""
    def build():
        import torch
        import torchvision

        class Detections(torch.nn.Module):
            """The detector on one image tensor: the exporters take tensors, not lists or dicts."""
            def __init__(self):
                super().__init__()
                self.model = getattr(torchvision.models.detection, name)(
                    weights=None, weights_backbone=None, **options).eval()

            def forward(self, image):
                found = self.model([image])[0]
                return found["boxes"], found["scores"], found["labels"]

        torch.manual_seed(0)
        return Detections().eval(), (torch.rand(3, 320, 320),), ["image"], None, {}
    return build


def gpt2():
    """GPT-2 (transformers' GPT2Model, default config, eager attention) on 32 tokens."""
    from transformers import GPT2Config, GPT2Model
    return keyword_transformer(lambda: GPT2Model(GPT2Config(attn_implementation="eager")),
                               lambda model, ids, mask: model(input_ids=ids, attention_mask=mask,
                                                              use_cache=False).last_hidden_state)


def distilbert():
    """DistilBERT (transformers' DistilBertModel, default config, eager attention) on 32 tokens."""
    from transformers import DistilBertConfig, DistilBertModel
    return keyword_transformer(lambda: DistilBertModel(DistilBertConfig(attn_implementation="eager")),
                               lambda model, ids, mask: model(input_ids=ids, attention_mask=mask).last_hidden_state)


def roberta():
    """RoBERTa-base (transformers' RobertaModel, eager attention; position ids by CumSum) on 32 tokens."""
    from transformers import RobertaConfig, RobertaModel
    return keyword_transformer(lambda: RobertaModel(RobertaConfig(attn_implementation="eager")),
                               lambda model, ids, mask: model(input_ids=ids, attention_mask=mask).last_hidden_state)


def t5_encoder():
    """T5's encoder (transformers' T5EncoderModel, default config: t5-small's sizes) on 32 tokens."""
    from transformers import T5Config, T5EncoderModel
    return keyword_transformer(lambda: T5EncoderModel(T5Config()),
                               lambda model, ids, mask: model(input_ids=ids, attention_mask=mask).last_hidden_state)


def whisper_encoder():
    """Whisper's audio encoder (transformers' WhisperModel, default config) on 80 mel bins x 3000 frames."""
    import torch
    from transformers import WhisperConfig, WhisperModel

    class Encoder(torch.nn.Module):
        """The encoder's last hidden state."""
        def __init__(self):
            super().__init__()
            self.encoder = WhisperModel(WhisperConfig(attn_implementation="eager")).get_encoder().eval()

        def forward(self, features):
            return self.encoder(features).last_hidden_state

    torch.manual_seed(0)
    return Encoder().eval(), (torch_randn(1, 80, 3000),), ["features"], {"features": {0: "batch"}}, {"batch": 1}


def decoder_config(config_class, **extra):
    """A small decoder-only language model's config: 4 layers of width 512, 8 query heads sharing
    4 key/value heads (grouped-query attention), a gated SiLU MLP, RMSNorm and rotary positions,
    as LLaMA-style models have them; a vocabulary of 8,000 keeps the file small."""
    return config_class(hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
                        num_key_value_heads=4, vocab_size=8000, max_position_embeddings=2048,
                        attn_implementation="eager", **extra)


def llama_decoder():
    """A LLaMA-style decoder (transformers' LlamaModel, decoder_config's sizes, causal mask) on 32
    tokens, without a key/value cache."""
    from transformers import LlamaConfig, LlamaModel
    return keyword_transformer(lambda: LlamaModel(decoder_config(LlamaConfig)),
                               lambda model, ids, mask: model(input_ids=ids, attention_mask=mask,
                                                              use_cache=False).last_hidden_state)


def qwen2_decoder():
    """A Qwen2-style decoder (transformers' Qwen2Model: LLaMA's layers with biases on the query,
    key and value projections; decoder_config's sizes) on 32 tokens, without a key/value cache."""
    from transformers import Qwen2Config, Qwen2Model
    return keyword_transformer(lambda: Qwen2Model(decoder_config(Qwen2Config)),
                               lambda model, ids, mask: model(input_ids=ids, attention_mask=mask,
                                                              use_cache=False).last_hidden_state)


def llama_decode_step():
    """One decoding step of the LLaMA-style decoder with its key/value cache, as generation runs
    it: 1 new token after 127 cached ones. Inputs: input_ids [batch, sequence], attention_mask
    [batch, total_sequence] and per layer the cached keys and values [batch, 4, past_sequence,
    64]; outputs: the last hidden state and the updated cache [batch, 4, total_sequence, 64]."""
    import torch
    from transformers import DynamicCache, LlamaConfig, LlamaModel
    config = decoder_config(LlamaConfig)
    layers = config.num_hidden_layers

    class Step(torch.nn.Module):
        """LlamaModel on a cache given as tensors, returning the cache as tensors."""
        def __init__(self):
            super().__init__()
            self.model = LlamaModel(config).eval()

        def forward(self, input_ids, attention_mask, *past):
            cache = DynamicCache(ddp_cache_data=[(past[2 * i], past[2 * i + 1]) for i in range(layers)], config=config)
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
            present = [t for layer in out.past_key_values.layers for t in (layer.keys, layer.values)]
            return (out.last_hidden_state, *present)

    torch.manual_seed(0)
    model = Step().eval()
    past_length = 127
    ids = torch.randint(0, 1000, (1, 1))
    mask = torch.ones(1, past_length + 1, dtype=torch.long)
    past = [torch_randn(1, config.num_key_value_heads, past_length, 64) for _ in range(2 * layers)]
    cache_names = [f"past_{kind}_{i}" for i in range(layers) for kind in ("key", "value")]
    output_names = ["last_hidden_state"] + [f"present_{kind}_{i}" for i in range(layers) for kind in ("key", "value")]
    dynamic_axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total_sequence"},
                    "last_hidden_state": {0: "batch", 1: "sequence"}}
    dynamic_axes.update({name: {0: "batch", 2: "past_sequence"} for name in cache_names})
    dynamic_axes.update({name: {0: "batch", 2: "total_sequence"} for name in output_names[1:]})
    dims = {"batch": 1, "sequence": 1, "past_sequence": past_length, "total_sequence": past_length + 1}
    return model, (ids, mask, *past), ["input_ids", "attention_mask"] + cache_names, dynamic_axes, dims, output_names


MODELS = {
    "resnet18": torchvision_model("resnet18"),
    "resnet50": torchvision_model("resnet50"),
    "inception_v3": torchvision_model("inception_v3"),
    "squeezenet1_1": torchvision_model("squeezenet1_1"),
    "mobilenet_v2": torchvision_model("mobilenet_v2"),
    "transformer_encoder": transformer_encoder,
    "bert_base": bert_base,
    "bert_classifier": bert_classifier,
    "resnext50_32x4d": torchvision_model("resnext50_32x4d"),
    "densenet121": torchvision_model("densenet121"),
    "googlenet": torchvision_model("googlenet"),
    "shufflenet_v2_x1_0": torchvision_model("shufflenet_v2_x1_0"),
    "efficientnet_b0": torchvision_model("efficientnet_b0"),
    "mobilenet_v3_large": torchvision_model("mobilenet_v3_large"),
    "convnext_tiny": torchvision_model("convnext_tiny"),
    "vit_b_16": torchvision_model("vit_b_16"),
    "rnn_lstm": rnn_lstm,
    "resnext_branches": resnext_branches,
}

# More architectures, for robustness (torch_models_check.py --extra): exported and optimized
# with --check, not part of the speed benchmark's table.
EXTRA_MODELS = {
    "gpt2": gpt2,
    "distilbert": distilbert,
    "roberta": roberta,
    "t5_encoder": t5_encoder,
    "whisper_encoder": whisper_encoder,
    "llama_decoder": llama_decoder,
    "qwen2_decoder": qwen2_decoder,
    "llama_decode_step": llama_decode_step,
    "swin_t": torchvision_model("swin_t"),
    "maxvit_t": torchvision_model("maxvit_t"),
    "regnet_y_400mf": torchvision_model("regnet_y_400mf"),
    "mnasnet1_0": torchvision_model("mnasnet1_0"),
    "vgg11": torchvision_model("vgg11"),
    "alexnet": torchvision_model("alexnet"),
    "efficientnet_v2_s": torchvision_model("efficientnet_v2_s"),
    "wide_resnet50_2": torchvision_model("wide_resnet50_2"),
    "deeplabv3_mobilenet_v3_large": segmentation_model("deeplabv3_mobilenet_v3_large"),
    "lraspp_mobilenet_v3_large": segmentation_model("lraspp_mobilenet_v3_large"),
    "fcn_resnet50": segmentation_model("fcn_resnet50"),
    "ssdlite320_mobilenet_v3_large": detection_model("ssdlite320_mobilenet_v3_large"),
    "fasterrcnn_mobilenet_v3_large_320_fpn": detection_model("fasterrcnn_mobilenet_v3_large_320_fpn",
                                                             box_score_thresh=0.0),
    "tf_efficientnet_b0": timm_model("tf_efficientnet_b0"),
    "tf_mobilenetv3_large_100": timm_model("tf_mobilenetv3_large_100"),
    "unet_bilinear": unet("bilinear"),
    "unet_transpose": unet("transpose"),
    # timm's newer architectures (2026-12-07). MobileOne, RepViT, FastViT and RepVGG are exported
    # as timm builds them, with their training-time branches (not reparameterized).
    **{name: timm_model(name) for name in (
        "mobilevit_xs", "levit_128s", "efficientformer_l1", "ghostnet_100", "rexnet_100", "poolformer_s12",
        "deit_tiny_patch16_224", "fastvit_t8", "repvit_m1", "edgenext_x_small", "mobileone_s0", "lcnet_050",
        "hrnet_w18_small", "regnety_002", "repvgg_a0")},
}

# Integer-quantized forms of zoo models, as they are deployed on CPUs: onnxruntime's
# quantize_dynamic (int8 weights, activations quantized at run time: DynamicQuantizeLinear and
# MatMulInteger) for the transformers, quantize_static in the QDQ format (QuantizeLinear and
# DequantizeLinear around each convolution, calibrated on four random images) for the CNNs.
# Name -> (the float model, "dynamic" or "qdq").
QUANTIZED_MODELS = {
    "bert_base_int8": ("bert_base", "dynamic"),
    "bert_classifier_int8": ("bert_classifier", "dynamic"),
    "vit_b_16_int8": ("vit_b_16", "dynamic"),
    "resnet50_int8_qdq": ("resnet50", "qdq"),
    "mobilenet_v2_int8_qdq": ("mobilenet_v2", "qdq"),
}

ALL_MODELS = {**MODELS, **EXTRA_MODELS, **{name: None for name in QUANTIZED_MODELS}}


def vary_constant_weights(model):
    """Gives every floating parameter and buffer whose elements are all equal small random
    variation (seeded): random initialization leaves biases zero and norm scales one, which a
    trained model never has, and a rule such as eliminate-add-zero would otherwise win on the
    benchmark what it never wins on a real model. Running variances stay positive."""
    import torch
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
            if not tensor.is_floating_point() or tensor.numel() == 0:
                continue
            flat = tensor.reshape(-1)
            if not bool((flat == flat[0]).all()):
                continue
            if name.endswith("running_var"):
                tensor.copy_(torch.rand(tensor.shape, generator=generator) + 0.5)
            else:
                tensor.add_(0.02 * torch.randn(tensor.shape, generator=generator))


def export_path(name, opset=17, folder=".", exporter="torchscript"):
    """Where export writes the model."""
    suffix = "dynamo" if exporter == "dynamo" else f"opset{opset}"
    return os.path.join(folder, f"{name}_{suffix}.onnx")


def export(name, opset=17, folder=".", exporter="torchscript"):
    """Exports the model (once) and returns its path and the sizes to run it at (none for a
    dynamo export, whose shapes are static)."""
    import torch
    path = export_path(name, opset, folder, exporter)
    if name in QUANTIZED_MODELS:
        return export_quantized(name, opset, folder, exporter)
    model, args, input_names, dynamic_axes, dims, *output_names = ALL_MODELS[name]()
    vary_constant_weights(model)
    if exporter == "dynamo":
        dims = {}
    if os.path.exists(path):
        return path, dims
    # PyTorch's fused attention kernel has no ONNX export; every model that uses
    # nn.MultiheadAttention (ViT too, not only the encoder that switches it off) needs it off.
    torch.backends.mha.set_fastpath_enabled(False)
    with torch.no_grad():
        if exporter == "dynamo":
            torch.onnx.export(model, args, path, dynamo=True, input_names=input_names, external_data=False)
        else:
            torch.onnx.export(model, args, path, opset_version=opset, dynamo=False, input_names=input_names,
                              output_names=output_names[0] if output_names else None,
                              dynamic_axes=dynamic_axes, do_constant_folding=True)
    return path, dims


def export_quantized(name, opset, folder, exporter):
    """Exports the float model (once), quantizes it with onnxruntime's tools, and returns the
    quantized model's path and the float model's sizes."""
    import numpy as np
    from onnxruntime.quantization import QuantType, quantize_dynamic
    base, mode = QUANTIZED_MODELS[name]
    source, dims = export(base, opset, folder, exporter)
    path = export_path(name, opset, folder, exporter)
    if os.path.exists(path):
        return path, dims
    if mode == "dynamic":
        quantize_dynamic(source, path, weight_type=QuantType.QInt8)
        return path, dims

    rng = np.random.default_rng(0)
    quantize_qdq(source, path, [{"input": rng.standard_normal((1, 3, 224, 224)).astype(np.float32)} for _ in range(4)])
    return path, dims


def quantize_qdq(source, path, feeds, per_channel=False):
    """Writes `source` quantized by onnxruntime's quantize_static in the QDQ format (uint8
    activations, int8 weights), calibrated on `feeds` (input dicts; seeded random images: the
    ranges, not accuracy, are what a speed benchmark needs). Needs the onnxruntime package."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Feeds(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter(feeds)

        def get_next(self):
            return next(self.feeds, None)

    prepared = path + ".prepared.onnx"
    quant_pre_process(source, prepared)
    try:
        quantize_static(prepared, path, Feeds(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, per_channel=per_channel)
    finally:
        os.remove(prepared)


def describe(path):
    """Number of ONNX nodes (main graph) and file size in MB."""
    import onnx
    model = onnx.load(path, load_external_data=False)
    return len(model.graph.node), os.path.getsize(path) / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", help="where the .onnx files are written")
    parser.add_argument("--opset", type=int, default=17, help="of the TorchScript exporter")
    parser.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript")
    parser.add_argument("--models", nargs="+", default=None, choices=list(ALL_MODELS), metavar="NAME",
                        help="default: the benchmark's models (MODELS)")
    parser.add_argument("--extra", action="store_true", help="the extra architectures (EXTRA_MODELS) instead")
    parser.add_argument("--quantized", action="store_true", help="the quantized models (QUANTIZED_MODELS) instead")
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    args = parser.parse_args()
    chosen = QUANTIZED_MODELS if args.quantized else EXTRA_MODELS if args.extra else MODELS
    if args.list:
        print("\n".join(chosen))
        return 0
    if not args.folder:
        parser.error("--folder is required (or --list)")
    os.makedirs(args.folder, exist_ok=True)
    for name in args.models or list(chosen):
        try:
            path, _ = export(name, args.opset, args.folder, args.exporter)
        except Exception as error:  # PyTorch cannot export this model at this opset
            print(f"SKIP {name} {' '.join(str(error).split())[:200]}", flush=True)
            continue
        nodes, megabytes = describe(path)
        print(f"{name} {path} nodes={nodes} size={megabytes:.1f}MB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
