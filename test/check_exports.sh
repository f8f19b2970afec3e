#!/bin/sh
# Checks the dynamic symbol table of the shared library: it must export
# only mlx-c's names (mlx_*, _mlx_*, including mlx_cpu_* and data objects
# such as mlx_array_empty), never internal mc_* or third-party symbols, and
# it must export a few names every mlx-c program needs.
# Usage: check_exports.sh NM LIBRARY
set -u
nm_prog=$1
lib=$2
syms=$("$nm_prog" -D --defined-only "$lib") || { echo "nm failed on $lib"; exit 1; }
[ -n "$syms" ] || { echo "no dynamic symbols in $lib"; exit 1; }

# name (version suffix stripped) and type letter of each defined symbol
table=$(printf '%s\n' "$syms" | awk 'NF >= 2 { n = $NF; sub(/@.*/, "", n); print $(NF-1), n }')

bad=$(printf '%s\n' "$table" | awk '
    $2 ~ /^_?mlx_/ { next }
    $2 == "_init" || $2 == "_fini" || $2 == "_edata" || $2 == "_end" || $2 == "__bss_start" { next }
    # a sanitizer build adds its own instrumentation symbols (__odr_asan.*)
    $2 ~ /^__(odr_asan|asan|ubsan|tsan)/ { next }
    { print $2 }')
status=0
if [ -n "$bad" ]; then
    echo "symbols exported that are not part of the mlx-c API:"
    printf '  %s\n' $bad
    status=1
fi

# names a program linking against mlx-c expects, with their kind
for want in T:mlx_array_new T:mlx_array_free T:mlx_add T:mlx_eval T:mlx_set_error_handler \
            T:_mlx_error T:mlx_cpu_last_error T:mlx_array_item_float16 T:mlx_array_data_bfloat16 \
            T:mlx_dtype_size D:mlx_array_empty; do
    kind=${want%%:*}
    name=${want#*:}
    line=$(printf '%s\n' "$table" | awk -v n="$name" '$2 == n { print $1 }')
    if [ -z "$line" ]; then
        echo "missing export: $name"
        status=1
        continue
    fi
    case "$kind:$line" in
    T:T | D:D | D:R | D:B) ;;
    *) echo "export $name has symbol type $line, expected a $( [ "$kind" = T ] && echo function || echo data object)"
       status=1 ;;
    esac
done

count=$(printf '%s\n' "$table" | grep -c ' _\{0,1\}mlx_')
[ $status -eq 0 ] && echo "ok: $count mlx-c symbols exported, nothing else"
exit $status
