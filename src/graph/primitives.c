/* The primitives table: one entry per primitive id (primitive.h). Each
 * family's entries sit in its own block; their functions live in the
 * family's prims_*.c file. */
#include "graph/primitive.h"
#include "graph/prims.h"

const mc_prim_info mc_prims[MC_PRIM_COUNT] = {
    [MC_PRIM_NONE_] = {"Data", 0, NULL, NULL, NULL, NULL},
    [MC_PRIM_PLACEHOLDER] = {"Placeholder", 0, mc_placeholder_infer, mc_placeholder_eval, NULL, NULL},
    /* data movement */
    [MC_PRIM_ASTYPE] = {"AsType", 1, mc_astype_infer, mc_astype_eval, NULL, NULL},
    [MC_PRIM_COPY] = {"Copy", 1, mc_astype_infer, mc_astype_eval, NULL, NULL},
    /* views */
    [MC_PRIM_RESHAPE] = {"Reshape", 1, mc_reshape_infer, mc_reshape_eval, mc_dims_print, NULL},
    [MC_PRIM_TRANSPOSE] = {"Transpose", 1, mc_transpose_infer, mc_transpose_eval, mc_dims_print, NULL},
    [MC_PRIM_BROADCAST] = {"Broadcast", 1, mc_broadcast_infer, mc_broadcast_eval, mc_dims_print, NULL},
    [MC_PRIM_SLICE] = {"Slice", 1, mc_slice_infer, mc_slice_eval, NULL, NULL},
    [MC_PRIM_AS_STRIDED] = {"AsStrided", 1, mc_as_strided_infer, mc_as_strided_eval, NULL, NULL},
    [MC_PRIM_EXPAND_DIMS] = {"ExpandDims", 1, mc_expand_dims_infer, mc_expand_dims_eval, NULL, NULL},
    [MC_PRIM_SQUEEZE] = {"Squeeze", 1, mc_squeeze_infer, mc_squeeze_eval, NULL, NULL},
    [MC_PRIM_FLATTEN] = {"Flatten", 1, mc_flatten_infer, mc_reshape_like_eval, NULL, NULL},
    [MC_PRIM_UNFLATTEN] = {"Unflatten", 1, mc_unflatten_infer, mc_reshape_like_eval, NULL, NULL},
    [MC_PRIM_DIAGONAL] = {"Diagonal", 1, mc_diagonal_infer, mc_diagonal_eval, NULL, NULL},
    [MC_PRIM_CONTIGUOUS] = {"Contiguous", 1, mc_contiguous_infer, mc_contiguous_eval, NULL, NULL},
    /* creation */
    [MC_PRIM_ARANGE] = {"Arange", 0, mc_arange_infer, mc_arange_eval, NULL, NULL},
    /* elementwise unary */
    [MC_PRIM_UNARY] = {"Unary", 1, mc_unary_infer, mc_unary_eval, NULL, mc_unary_name},
    [MC_PRIM_STOP_GRADIENT] = {"StopGradient", 1, mc_stop_gradient_infer, mc_stop_gradient_eval, NULL, NULL},
    /* elementwise binary */
    [MC_PRIM_BINARY] = {"Binary", 2, mc_binary_infer, mc_binary_eval, NULL, mc_binary_name},
    /* selection */
    [MC_PRIM_WHERE] = {"Select", 3, mc_select_infer, mc_select_eval, NULL, NULL},
    /* reductions and scans */
    [MC_PRIM_REDUCE] = {"Reduce", 1, mc_reduce_infer, mc_reduce_eval, mc_reduce_print, mc_reduce_name},
    [MC_PRIM_ARGREDUCE] = {"ArgReduce", 1, mc_argreduce_infer, mc_argreduce_eval, NULL, mc_argreduce_name},
    [MC_PRIM_SCAN] = {"Scan", 1, mc_scan_infer, mc_scan_eval, NULL, mc_scan_name},
    [MC_PRIM_SOFTMAX] = {"Softmax", 1, mc_softmax_infer, mc_softmax_eval, NULL, NULL},
    [MC_PRIM_LOGSUMEXP] = {"LogSumExp", 1, mc_logsumexp_infer, mc_logsumexp_eval, NULL, NULL},
    /* indexing and layout */
    [MC_PRIM_CONCATENATE] = {"Concatenate", -1, mc_concat_infer, mc_concat_eval, NULL, NULL},
    [MC_PRIM_GATHER_AXIS] = {"GatherAxis", 2, mc_gather_axis_infer, mc_gather_axis_eval, NULL, mc_gather_axis_name},
    [MC_PRIM_SLICE_UPDATE] = {"SliceUpdate", 2, mc_slice_update_infer, mc_slice_update_eval, NULL, NULL},
    [MC_PRIM_PAD] = {"Pad", 2, mc_pad_infer, mc_pad_eval, NULL, NULL},
    [MC_PRIM_NUMBER_OF_ELEMENTS] = {"NumberOfElements", 1, mc_numel_infer, mc_numel_eval, NULL, NULL},
    /* linear algebra */
    [MC_PRIM_MATMUL] = {"Matmul", 2, mc_matmul_infer, mc_matmul_eval, NULL, NULL},
    [MC_PRIM_ADDMM] = {"AddMM", 3, mc_addmm_infer, mc_addmm_eval, mc_addmm_print, NULL},
    /* compile */
    [MC_PRIM_FUSED] = {"Compiled", -1, mc_fused_infer, mc_fused_eval, NULL, mc_fused_name},
};

/* Every id below MC_PRIM_COUNT must have an entry with infer and eval, or
 * a node of it could be built and crash; test_graph checks the table. */
_Static_assert(sizeof mc_prims / sizeof mc_prims[0] == MC_PRIM_COUNT, "one entry per primitive");
