#!/usr/bin/env python3
"""Writes test/fixtures/llm/: two tiny Llama-architecture models in MLX's
format, made with mlx-lm's own model class (mlx_lm.models.llama) and
random weights, and what MLX computes with them. test/test_llm.c loads
each through examples/llm/ and compares.

  float/  float32 weights, an untied lm_head, rope_scaling "llama3"
  q4/     the same kind of model quantized to 4 bits (affine, group 64)
          as mlx-lm quantizes (nn.quantize on every Linear and the
          Embedding whose last axis divides by the group size), tied
          embeddings (the logits are the embedding's as_linear), plain rope

Each directory has config.json and model.safetensors as mlx-lm writes
them, and expected.safetensors with
  prompt         int32 (P,)       the fixed prompt
  logits         float32 (P, V)   the logits of every prompt position
  greedy         int32 (N,)       the greedy continuation (argmax)
  decode_logits  float32 (N, V)   the logits each greedy step saw: row 0
                                  is the prompt's last row, row i > 0 the
                                  logits after feeding greedy[i-1] through
                                  mlx-lm's KVCache
The seed is chosen so that every greedy step's best logit leads the
second by at least MARGIN, so the tokens are a stable thing to compare,
and so that the continuation has at least 3 different tokens (tied embeddings
easily make a token its own best successor).

mlx_lm/__init__ imports transformers and huggingface_hub (tokenizers and
the hub), which the model classes do not use; the package is entered
without running it, so only mlx (and numpy) are needed. mlx_lm.utils's
quantize_model also imports them, so its rule is restated in quantize().

Needs MLX's CPU wheel and mlx-lm (0.31.1: the last release whose
requirements accept mlx 0.31.1) in a venv CI never depends on:
    /work/venv-mlx/bin/pip install 'mlx[cpu]==0.31.1' numpy
    /work/venv-mlx/bin/pip install --no-deps mlx-lm==0.31.1
Run (from the repository root):
    /work/venv-mlx/bin/python scripts/make_llm_fixtures.py
"""
import importlib.util
import json
import os
import sys
import types

import mlx.core as mx
import mlx.nn as nn
from mlx.utils import tree_flatten
import numpy as np


def enter_mlx_lm():
    """Makes `mlx_lm.models.*` importable without mlx_lm/__init__.py."""
    spec = importlib.util.find_spec("mlx_lm")
    if spec is None:
        sys.exit("mlx-lm is not installed: pip install --no-deps mlx-lm==0.31.1")
    pkg = types.ModuleType("mlx_lm")
    pkg.__path__ = list(spec.submodule_search_locations)
    sys.modules["mlx_lm"] = pkg


enter_mlx_lm()
from mlx_lm.models import cache as lm_cache  # noqa: E402
from mlx_lm.models import llama  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "llm")
PROMPT = [1, 17, 42, 99, 5, 64, 3, 77, 120, 8, 33, 56]
STEPS = 10
MARGIN = 2e-3

BASE = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "rms_norm_eps": 1e-5,
    "vocab_size": 128,
    "max_position_embeddings": 2048,
    "rope_theta": 10000.0,
    "rope_traditional": False,
}
VARIANTS = {
    "float": dict(BASE, tie_word_embeddings=False,
                  rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0, "original_max_position_embeddings": 64}),
    "q4": dict(BASE, tie_word_embeddings=True),
}


def quantize(model, config, group_size=64, bits=4):
    """mlx_lm.utils.quantize_model's rule: every module with to_quantized
    whose weight's last axis divides by the group size, and the config's
    "quantization" (and "quantization_config") entry."""
    nn.quantize(model, group_size, bits, mode="affine",
                class_predicate=lambda _, m: hasattr(m, "to_quantized") and m.weight.shape[-1] % group_size == 0)
    params = {"group_size": group_size, "bits": bits, "mode": "affine"}
    config["quantization"] = params
    config["quantization_config"] = params


def make_model(config, seed):
    mx.random.seed(seed)
    model = llama.Model(llama.ModelArgs.from_dict(config))
    # nn.RMSNorm starts at ones: draw them too, so a norm weight applied
    # in the wrong place shows in the logits
    for layer in model.layers:
        for norm in (layer.input_layernorm, layer.post_attention_layernorm):
            norm.weight = 1.0 + 0.2 * mx.random.normal(norm.weight.shape)
    model.model.norm.weight = 1.0 + 0.2 * mx.random.normal(model.model.norm.weight.shape)
    # larger block outputs spread the logits, so greedy choices are clear,
    # and keep a token's own embedding from deciding them where the
    # embeddings are tied
    for layer in model.layers:
        layer.self_attn.o_proj.weight = 8.0 * layer.self_attn.o_proj.weight
        layer.mlp.down_proj.weight = 8.0 * layer.mlp.down_proj.weight
    mx.eval(model.parameters())
    return model


def run(model):
    """The prompt's logits, then greedy decoding through KVCache."""
    cache = model.make_cache()
    logits = model(mx.array([PROMPT]), cache=cache)[0]
    rows, tokens = [logits[-1]], []
    for _ in range(STEPS):
        tok = int(mx.argmax(rows[-1]).item())
        tokens.append(tok)
        rows.append(model(mx.array([[tok]]), cache=cache)[0, -1])
    decode = mx.stack(rows[:-1])
    mx.eval(logits, decode)
    return logits, tokens, decode


def margin_ok(decode):
    top2 = np.sort(np.array(decode), axis=-1)[:, -2:]
    return float((top2[:, 1] - top2[:, 0]).min()) >= MARGIN


def write(name, config):
    for seed in range(100):
        cfg = json.loads(json.dumps(config))
        model = make_model(cfg, seed)
        if name == "q4":
            quantize(model, cfg)
            mx.eval(model.parameters())
        logits, tokens, decode = run(model)
        if margin_ok(decode) and len(set(tokens)) >= 3:
            break
    else:
        sys.exit(f"{name}: no seed gives greedy margins of {MARGIN} and varied tokens")
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    weights = dict(tree_flatten(model.parameters()))
    mx.save_safetensors(os.path.join(d, "model.safetensors"), weights, metadata={"format": "mlx"})
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(dict(sorted(cfg.items())), f, indent=4)
        f.write("\n")
    mx.save_safetensors(os.path.join(d, "expected.safetensors"), {
        "prompt": mx.array(PROMPT, dtype=mx.int32),
        "logits": logits.astype(mx.float32),
        "greedy": mx.array(tokens, dtype=mx.int32),
        "decode_logits": decode.astype(mx.float32),
    }, metadata={"mlx": mx.__version__, "seed": str(seed)})
    print(f"{name}: seed {seed}, greedy {tokens}")


for name, config in VARIANTS.items():
    write(name, config)
