"""The MLX reference for bench/run_llm.sh: greedy generation with mlx-lm's
Llama model class and KVCache on MLX's CPU build, from the same model
directory as examples/llm, timed as examples/llm times itself (prefill:
the prompt up to the first new token; decode: each token after it). The
loop is mlx-lm's generate_step: the next step is queued with
mx.async_eval before the current token is read.

mlx_lm/__init__ imports transformers and huggingface_hub, which the model
classes do not use: the package is entered without running it.
mlx_lm.utils.load_model's quantization rule (a layer is quantized where
the weights have its .scales) is restated here for the same reason.

Usage: /work/venv-mlx/bin/python bench/llm_ref.py MODEL_DIR PROMPT_IDS N
(PROMPT_IDS as examples/llm's -p: 1,2,3). Prints examples/llm's lines.
"""
import importlib.util
import json
import os
import sys
import time
import types

import mlx.core as mx
import mlx.nn as nn


def enter_mlx_lm():
    spec = importlib.util.find_spec("mlx_lm")
    if spec is None:
        sys.exit("mlx-lm is not installed: pip install --no-deps mlx-lm==0.31.1")
    pkg = types.ModuleType("mlx_lm")
    pkg.__path__ = list(spec.submodule_search_locations)
    sys.modules["mlx_lm"] = pkg


enter_mlx_lm()
from mlx_lm.models import llama  # noqa: E402


def load(path):
    config = json.load(open(os.path.join(path, "config.json")))
    weights = mx.load(os.path.join(path, "model.safetensors"))
    model = llama.Model(llama.ModelArgs.from_dict(config))
    q = config.get("quantization")
    if q:
        nn.quantize(model, q["group_size"], q["bits"], mode=q.get("mode", "affine"),
                    class_predicate=lambda p, m: hasattr(m, "to_quantized") and f"{p}.scales" in weights)
    model.load_weights(list(weights.items()))
    mx.eval(model.parameters())
    return model


def main():
    path, prompt, n = sys.argv[1], [int(t) for t in sys.argv[2].split(",")], int(sys.argv[3])
    t0 = time.perf_counter()
    model = load(path)
    t_load = time.perf_counter() - t0
    cache = model.make_cache()

    def step(tokens):
        logits = model(tokens[None], cache=cache)[:, -1, :]
        return mx.argmax(logits, axis=-1)

    t0 = time.perf_counter()
    y = step(mx.array(prompt))
    out = [y.item()]
    t_prefill = time.perf_counter() - t0
    t0 = time.perf_counter()
    nxt = step(y)
    mx.async_eval(nxt)
    for i in range(1, n):
        y = nxt
        if i + 1 < n:
            nxt = step(y)
            mx.async_eval(nxt)
        out.append(y.item())
    t_decode = time.perf_counter() - t0
    print(" ".join(map(str, out)))
    print("load: %.3f s" % t_load, file=sys.stderr)
    print("prefill: %d tokens in %.3f s, %.2f tokens/s" % (len(prompt), t_prefill, len(prompt) / t_prefill),
          file=sys.stderr)
    print("decode: %d tokens in %.3f s, %.2f tokens/s" % (n - 1, t_decode, (n - 1) / t_decode), file=sys.stderr)


if __name__ == "__main__":
    main()
