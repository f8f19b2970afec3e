#!/usr/bin/env python3
"""Fails when a library source includes a header of a higher layer.

The layers, bottom up (docs/architecture.md): each folder may include its
own headers and those of the folders below it, and the public headers
(mlx/c/) except from simd/, whose kernels know only pointers and lengths.
Run by meson test (suite c); prints every upward include it finds.
Usage: check_layers.py SOURCE_ROOT
"""
import os
import re
import sys

LAYERS = ['simd', 'runtime', 'array', 'handles', 'graph', 'distributed', 'io', 'ops', 'compile',
          'transforms', 'api']
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(root, path):
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == 'simd':
        return 'simd'
    if rel[0] == 'src' and len(rel) > 2:
        return rel[1]
    return None


def check_file(root, path, layer):
    problems = []
    here = os.path.dirname(path)
    with open(path, encoding='utf-8') as f:
        for lineno, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            top = target.split('/')[0]
            where = f'{os.path.relpath(path, root)}:{lineno}'
            if target.startswith('mlx/c/'):
                if layer == 'simd':
                    problems.append(f'{where}: simd/ includes the public header "{target}"')
            elif '/' not in target:
                if not os.path.exists(os.path.join(here, target)):
                    problems.append(f'{where}: "{target}" is not a header of its own folder')
            elif top not in RANK:
                problems.append(f'{where}: "{target}" is in no layer ({", ".join(LAYERS)})')
            elif RANK[top] > RANK[layer]:
                problems.append(f'{where}: {layer}/ includes "{target}" of the higher layer {top}/')
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    root = os.path.abspath(root)
    problems, files = [], 0
    for top in ('src', 'simd'):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(('.c', '.h')):
                    continue
                path = os.path.join(dirpath, name)
                layer = layer_of(root, path)
                if layer is None:
                    problems.append(f'{os.path.relpath(path, root)}: not inside a layer folder')
                    continue
                if layer not in RANK:
                    problems.append(f'{os.path.relpath(path, root)}: {layer}/ is not a known layer')
                    continue
                files += 1
                problems += check_file(root, path, layer)
    for p in problems:
        print(p)
    if files == 0:
        print('no sources found under', root)
        return 1
    print(f'{files} files checked, {len(problems)} upward includes')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
