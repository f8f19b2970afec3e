#!/usr/bin/env python3
"""Writes a 4-bit Llama model of about 1.2 billion parameters for
bench/run_llm.sh: config.json and model.safetensors laid out as mlx-lm
saves a quantized model (affine, group size 64, tied embeddings; scales,
biases and norms in float32, or in bfloat16 as mlx-community's models
have them), with the shapes of Llama 3.2 1B (hidden 2048,
16 layers, 32 query and 8 key/value heads of 64, MLP 8192, vocabulary
128256, llama3 rope scaling). The packed weights are random words and the
scales small: decoding speed does not depend on the values, and random
codes keep the activations finite. About 0.7 GB; made at bench time, never
committed. Needs numpy only.

Usage: python3 bench/make_llm_model.py OUT_DIR [float32|bfloat16]

float32 is the default because MLX's CPU build multiplies bfloat16 (and
float16) quantized matrices about 20 to 40 times slower than float32 ones
(one 8192 x 2048 4-bit product with one row: 96 ms in float32, 1.9 s in
bfloat16, measured with MLX 0.31.1 on this machine under load), which
would leave the MLX reference hours per run.
"""
import json
import os
import struct
import sys

import numpy as np

CONFIG = {
    "model_type": "llama",
    "hidden_size": 2048,
    "num_hidden_layers": 16,
    "intermediate_size": 8192,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "vocab_size": 128256,
    "rms_norm_eps": 1e-5,
    "rope_theta": 500000.0,
    "rope_traditional": False,
    "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                     "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
    "max_position_embeddings": 131072,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
    "quantization": {"group_size": 64, "bits": 4, "mode": "affine"},
}
GROUP, BITS = 64, 4


def bf16(a):
    """float32 values as bfloat16 bits (round to nearest even)."""
    u = np.asarray(a, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def tensors(rng, dt):
    """(name, safetensors dtype, array) of every tensor, floats in dt."""
    def fl(a):
        return ("BF16", bf16(a)) if dt == "bfloat16" else ("F32", np.asarray(a, np.float32))

    c = CONFIG
    H, I, V, hd = c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["head_dim"]
    q_out, kv_out = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd

    def quantized(prefix, out_dim, in_dim):
        # codes 0..15 times scale plus bias: values in about +-0.03
        words = rng.integers(0, 2**32, size=(out_dim, in_dim * BITS // 32), dtype=np.uint32)
        scales = rng.uniform(0.002, 0.006, size=(out_dim, in_dim // GROUP)).astype(np.float32)
        yield (prefix + ".weight", "U32", words)
        yield (prefix + ".scales",) + fl(scales)
        yield (prefix + ".biases",) + fl(-7.5 * scales)

    yield from quantized("model.embed_tokens", V, H)
    yield ("model.norm.weight",) + fl(np.ones(H))
    for i in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % i
        yield (p + "input_layernorm.weight",) + fl(np.ones(H))
        yield (p + "post_attention_layernorm.weight",) + fl(np.ones(H))
        for name, o, n in (("self_attn.q_proj", q_out, H), ("self_attn.k_proj", kv_out, H),
                           ("self_attn.v_proj", kv_out, H), ("self_attn.o_proj", H, q_out),
                           ("mlp.gate_proj", I, H), ("mlp.up_proj", I, H), ("mlp.down_proj", H, I)):
            yield from quantized(p + name, o, n)


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] not in ("float32", "bfloat16")):
        sys.exit(__doc__)
    out = sys.argv[1]
    dt = sys.argv[2] if len(sys.argv) == 3 else "float32"
    CONFIG["torch_dtype"] = dt
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    items = list(tensors(rng, dt))
    header, offset = {"__metadata__": {"format": "mlx"}}, 0
    for name, sdt, a in items:
        header[name] = {"dtype": sdt, "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = os.path.join(out, "model.safetensors.tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, _, a in items:
            f.write(np.ascontiguousarray(a).tobytes())
    os.replace(tmp, os.path.join(out, "model.safetensors"))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=4, sort_keys=True)
    params = sum(a.size * (32 // BITS if sdt == "U32" else 1) for n, sdt, a in items if not n.endswith(("scales", "biases")))
    print("wrote %s: %.2f B parameters, %.1f MB of tensors (%s)" % (out, params / 1e9, offset / 1e6, dt))


if __name__ == "__main__":
    main()
