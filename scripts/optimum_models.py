#!/usr/bin/env python3
"""Exports decoder-only language models with random weights to ONNX through Hugging Face optimum, as an
LLM user would (`optimum-cli export onnx --task text-generation-with-past`): one model per
decoder taking input_ids, attention_mask, position_ids and the key/value cache of every layer,
returning the logits and the updated cache, every length symbolic.

optimum 2.3 (optimum-onnx 0.1) needs transformers 4.x, while torch_models.py's exports use 5.x;
keep it in a virtual environment of its own that sees the system's torch, e.g.

    python3 -m venv --system-site-packages /tmp/optenv
    /tmp/optenv/bin/pip install --no-deps optimum optimum-onnx && /tmp/optenv/bin/pip install "transformers<4.58"
    /tmp/optenv/bin/python scripts/optimum_models.py --folder /tmp/optimum_models
    python3 scripts/bench_speed.py --models --onnx /tmp/optimum_models/*.onnx

LLaMA, Qwen2, Mistral, Phi-3 and Gemma have torch_models.py's `decoder_config` sizes (4 layers of
width 512, 8 query heads sharing 4 key/value heads, a vocabulary of 8,000), GPT-2 the same width
and depth with 8 heads; weights drawn from seed 0, and every bias and norm scale that
initialization leaves constant varied a little (torch_models.vary_constant_weights: a trained
model has no zero biases). bench_speed.py
times them as one decoding step: 1 new token after 127 cached ones. Nothing here needs the
network once the packages are installed.
"""
import argparse
import os
import shutil
import sys
import tempfile

from torch_models import decoder_config, vary_constant_weights


def gpt2_config(transformers):
    """GPT-2's layers at a small size: 4 layers of width 512, 8 heads, a vocabulary of 8,000."""
    return transformers.GPT2Config(n_layer=4, n_embd=512, n_head=8, vocab_size=8000, attn_implementation="eager")


def like_llama(config_class):
    """decoder_config's sizes for a LLaMA-like config class of transformers."""
    return lambda transformers: decoder_config(getattr(transformers, config_class))


#: transformers' causal-LM class of each exported model, and its config from the module.
MODELS = {
    "o_llama": ("LlamaForCausalLM", like_llama("LlamaConfig")),
    "o_qwen2": ("Qwen2ForCausalLM", like_llama("Qwen2Config")),
    "o_mistral": ("MistralForCausalLM", like_llama("MistralConfig")),
    "o_phi3": ("Phi3ForCausalLM", lambda transformers: decoder_config(transformers.Phi3Config, pad_token_id=0)),
    "o_gemma": ("GemmaForCausalLM", lambda transformers: decoder_config(transformers.GemmaConfig, head_dim=64)),
    "o_gpt2": ("GPT2LMHeadModel", gpt2_config),
}

#: Real sizes, exported only when named with --models, random weights: Qwen2.5-0.5B's
#: configuration (24 layers of width 896, 14 query heads sharing 2 key/value heads, a vocabulary
#: of 151,936 tied to the output head; 2.5 GB of float32 weights as exported) and TinyLlama-1.1B's
#: (22 layers of width 2048, 32 query heads sharing 4 key/value heads, a vocabulary of 32,000;
#: 4.4 GB).
LARGE = {
    "o_tinyllama_1_1b": ("LlamaForCausalLM", lambda transformers: transformers.LlamaConfig(
        hidden_size=2048, intermediate_size=5632, num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4,
        vocab_size=32000, max_position_embeddings=2048, rope_theta=10000.0, rms_norm_eps=1e-5,
        attn_implementation="eager")),
    "o_qwen2_5_0_5b": ("Qwen2ForCausalLM", lambda transformers: transformers.Qwen2Config(
        hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
        vocab_size=151936, max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
        tie_word_embeddings=True, attn_implementation="eager")),
}


#: Encoders as `optimum-cli export onnx --task feature-extraction` writes them (input_ids,
#: attention_mask and, for BERT, token_type_ids in; last_hidden_state out; batch and sequence
#: symbolic), exported only when named with --models: sentence-embedding models, what ONNX on a
#: CPU most often serves. all-MiniLM-L6-v2's configuration (BERT, 6 layers of width 384, 12
#: heads), DistilBERT-base's (6 layers of width 768) and RoBERTa-base's (12 layers of width 768),
#: and ViT-B/16's image encoder (pixel_values in, 224 x 224). Random weights.
ENCODERS = {
    "o_minilm_l6": ("BertModel", "feature-extraction", lambda transformers: transformers.BertConfig(
        hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536, vocab_size=30522,
        attn_implementation="eager")),
    "o_distilbert": ("DistilBertModel", "feature-extraction",
                     lambda transformers: transformers.DistilBertConfig(attn_implementation="eager")),
    "o_roberta": ("RobertaModel", "feature-extraction",
                  lambda transformers: transformers.RobertaConfig(vocab_size=50265, max_position_embeddings=514,
                                                                  type_vocab_size=1, attn_implementation="eager")),
    "o_vit": ("ViTModel", "feature-extraction",
              lambda transformers: transformers.ViTConfig(attn_implementation="eager")),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", required=True, help="where the .onnx files go")
    parser.add_argument("--models", nargs="*", choices=sorted({**MODELS, **LARGE, **ENCODERS}),
                        help="default: the small decoders (not the real-size ones, " + ", ".join(sorted(LARGE)) +
                        ", nor the encoders, " + ", ".join(sorted(ENCODERS)) + ")")
    args = parser.parse_args()

    import onnx
    import torch
    import transformers
    from optimum.exporters.onnx import main_export

    os.makedirs(args.folder, exist_ok=True)
    for name in args.models or MODELS:
        if name in ENCODERS:
            model_class, task, config = ENCODERS[name]
        else:
            (model_class, config), task = {**MODELS, **LARGE}[name], "text-generation-with-past"
        torch.manual_seed(0)  # each model's weights the same whichever others are exported
        model = getattr(transformers, model_class)(config(transformers)).eval()
        # Zero biases and norm scales of one, as random initialization leaves them, let rules such
        # as eliminate-add-zero win what they never win on a trained model (torch_models.py).
        vary_constant_weights(model)
        with tempfile.TemporaryDirectory() as scratch:
            source, exported = os.path.join(scratch, "model"), os.path.join(scratch, "onnx")
            model.save_pretrained(source)
            if name == "o_vit":  # optimum reads the image size from a preprocessor config
                transformers.ViTImageProcessor().save_pretrained(source)
            main_export(source, output=exported, task=task, opset=18)
            path = os.path.join(args.folder, name + ".onnx")
            if not any(entry.startswith("model.onnx_data") for entry in os.listdir(exported)):
                shutil.move(os.path.join(exported, "model.onnx"), path)
            else:  # weights in a file beside it (over 2 GB): kept beside the model under its name
                onnx.save_model(onnx.load(os.path.join(exported, "model.onnx")), path, save_as_external_data=True,
                                location=name + ".onnx.data")
        print("wrote", path, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
