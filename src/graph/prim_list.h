/* The list of primitives: one row per primitive, in id order. A row names
 * the id and the descriptor (mc_prim_info) that the primitive's family file
 * defines beside its rules. primitive.h turns the list into the id enum and
 * the descriptors' declarations, primitives.c into the table, so a row can
 * neither be missing from one of them nor sit out of order.
 *
 * Adding a primitive: one row here, and its descriptor and rules in its
 * family file (docs/architecture.md has a worked example). */
#ifndef MC_GRAPH_PRIM_LIST_H
#define MC_GRAPH_PRIM_LIST_H

#define MC_PRIM_LIST(X)                                                                            \
    /* compile: a traced input (prims_placeholder.c) */                                           \
    X(MC_PRIM_PLACEHOLDER, mc_prim_placeholder)                                                    \
    /* data movement (prims_copy.c) */                                                             \
    X(MC_PRIM_ASTYPE, mc_prim_astype)                                                              \
    X(MC_PRIM_COPY, mc_prim_copy)                                                                  \
    /* shape views (prims_view.c) */                                                               \
    X(MC_PRIM_RESHAPE, mc_prim_reshape)                                                            \
    X(MC_PRIM_TRANSPOSE, mc_prim_transpose)                                                        \
    X(MC_PRIM_BROADCAST, mc_prim_broadcast)                                                        \
    X(MC_PRIM_EXPAND_DIMS, mc_prim_expand_dims)                                                    \
    X(MC_PRIM_SQUEEZE, mc_prim_squeeze)                                                            \
    X(MC_PRIM_FLATTEN, mc_prim_flatten)                                                            \
    X(MC_PRIM_UNFLATTEN, mc_prim_unflatten)                                                        \
    /* strided views (prims_slice.c) */                                                            \
    X(MC_PRIM_SLICE, mc_prim_slice)                                                                \
    X(MC_PRIM_AS_STRIDED, mc_prim_as_strided)                                                      \
    X(MC_PRIM_DIAGONAL, mc_prim_diagonal)                                                          \
    X(MC_PRIM_CONTIGUOUS, mc_prim_contiguous)                                                      \
    /* creation (prims_create.c) */                                                                \
    X(MC_PRIM_ARANGE, mc_prim_arange)                                                              \
    /* elementwise: one primitive per family, the function in the params */                        \
    X(MC_PRIM_UNARY, mc_prim_unary)                     /* prims_unary.c */                        \
    X(MC_PRIM_STOP_GRADIENT, mc_prim_stop_gradient)     /* prims_unary.c */                        \
    X(MC_PRIM_BINARY, mc_prim_binary)                   /* prims_binary.c */                       \
    X(MC_PRIM_WHERE, mc_prim_select)                    /* prims_select.c */                       \
    /* reductions and scans (prims_reduce.c, prims_reduce_fused.c, prims_scan.c) */                \
    X(MC_PRIM_REDUCE, mc_prim_reduce)                                                              \
    X(MC_PRIM_ARGREDUCE, mc_prim_argreduce)                                                        \
    X(MC_PRIM_SCAN, mc_prim_scan)                                                                  \
    X(MC_PRIM_SOFTMAX, mc_prim_softmax)                                                            \
    X(MC_PRIM_LOGSUMEXP, mc_prim_logsumexp)                                                        \
    /* sorting and selection along an axis (prims_sort.c) */                                       \
    X(MC_PRIM_SORT, mc_prim_sort)                                                                  \
    X(MC_PRIM_ARGSORT, mc_prim_argsort)                                                            \
    X(MC_PRIM_PARTITION, mc_prim_partition)                                                        \
    X(MC_PRIM_ARGPARTITION, mc_prim_argpartition)                                                  \
    /* indexing and layout (prims_index.c) */                                                      \
    X(MC_PRIM_CONCATENATE, mc_prim_concatenate)                                                    \
    X(MC_PRIM_GATHER_AXIS, mc_prim_gather_axis)                                                    \
    X(MC_PRIM_SCATTER_AXIS, mc_prim_scatter_axis)       /* prims_scatter.c */                      \
    X(MC_PRIM_GATHER, mc_prim_gather)                   /* prims_gather.c */                       \
    X(MC_PRIM_SCATTER, mc_prim_scatter)                 /* prims_scatter.c */                      \
    X(MC_PRIM_SLICE_UPDATE, mc_prim_slice_update)                                                  \
    X(MC_PRIM_PAD, mc_prim_pad)                                                                    \
    X(MC_PRIM_NUMBER_OF_ELEMENTS, mc_prim_number_of_elements)                                      \
    /* linear algebra (prims_matmul.c, BLAS calls in blas.c) */                                    \
    X(MC_PRIM_MATMUL, mc_prim_matmul)                                                              \
    X(MC_PRIM_ADDMM, mc_prim_addmm)                                                                \
    /* products by index, mask, segment (prims_mm_ext.c, mm_ext_eval.c); prims_depends.c */        \
    X(MC_PRIM_GATHER_MM, mc_prim_gather_mm)                                                        \
    X(MC_PRIM_BLOCK_MASKED_MM, mc_prim_block_masked_mm)                                            \
    X(MC_PRIM_SEGMENTED_MM, mc_prim_segmented_mm)                                                  \
    X(MC_PRIM_DEPENDS, mc_prim_depends)                                                            \
    /* factorizations through LAPACK (prims_linalg.c, LAPACK calls in linalg_kernels.c) */        \
    X(MC_PRIM_INVERSE, mc_prim_inverse)                                                            \
    X(MC_PRIM_CHOLESKY, mc_prim_cholesky)                                                          \
    X(MC_PRIM_QRF, mc_prim_qrf)                                                                    \
    X(MC_PRIM_SVD, mc_prim_svd)                                                                    \
    X(MC_PRIM_EIG, mc_prim_eig)                                                                    \
    X(MC_PRIM_EIGH, mc_prim_eigh)                                                                  \
    X(MC_PRIM_LUF, mc_prim_luf)                                                                    \
    X(MC_PRIM_SOLVE, mc_prim_solve)                                                                \
    X(MC_PRIM_CONVOLUTION, mc_prim_convolution) /* prims_conv.c */                                 \
    /* the rest of ops.h: dtype views, fp8, hadamard (prims_misc.c) */                               \
    X(MC_PRIM_VIEW, mc_prim_view)                                                                  \
    X(MC_PRIM_CONVERT_FP8, mc_prim_convert_fp8)                                                    \
    X(MC_PRIM_HADAMARD, mc_prim_hadamard)                                                          \
    /* quantization (prims_quant.c, kernels in simd/quant*.c) */                                    \
    X(MC_PRIM_QUANTIZE, mc_prim_quantize)                                                          \
    X(MC_PRIM_DEQUANTIZE, mc_prim_dequantize)                                                      \
    X(MC_PRIM_QUANTIZED_MATMUL, mc_prim_quantized_matmul)                                          \
    X(MC_PRIM_QQMATMUL, mc_prim_qqmatmul)                                                          \
    /* random numbers from a key (prims_random.c) */                                              \
    X(MC_PRIM_RANDOM_BITS, mc_prim_random_bits)                                                    \
    X(MC_PRIM_RANDOM_DIST, mc_prim_random_dist)                                                    \
    X(MC_PRIM_RANDOM_PERMUTATION, mc_prim_random_permutation)                                      \
    /* Fourier transforms (prims_fft.c, KissFFT calls in fft_plan.c) */                             \
    X(MC_PRIM_FFT, mc_prim_fft)                                                                    \
    /* fast.h's fused operations (prims_fast.c, attention in fast_sdpa.c) */                       \
    X(MC_PRIM_RMS_NORM, mc_prim_rms_norm)                                                          \
    X(MC_PRIM_LAYER_NORM, mc_prim_layer_norm)                                                      \
    X(MC_PRIM_ROPE, mc_prim_rope)                                                                  \
    X(MC_PRIM_SDPA, mc_prim_sdpa)                                                                  \
    /* a function with its own derivative rules (prims_custom.c) */                               \
    X(MC_PRIM_CUSTOM, mc_prim_custom)                                                              \
    /* a fused elementwise chain built by compile (prims_fused.c) */                               \
    X(MC_PRIM_FUSED, mc_prim_fused)                                                                \
    /* communication between processes (distributed/prims_distributed.c) */                         \
    X(MC_PRIM_ALL_REDUCE, mc_prim_all_reduce)                                                      \
    X(MC_PRIM_ALL_GATHER, mc_prim_all_gather)                                                      \
    X(MC_PRIM_REDUCE_SCATTER, mc_prim_reduce_scatter)                                              \
    X(MC_PRIM_SEND, mc_prim_send)                                                                  \
    X(MC_PRIM_RECV, mc_prim_recv)

#endif
