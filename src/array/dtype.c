/* Owns the dtype table and MLX's type promotion rule. */
#include "array/dtype.h"
#include "simd/dtype.h"

/* simd/ indexes its kernel tables by its own dtype codes and the layers
 * above hand it mlx_dtype values unchanged: the two enums must agree. */
#define MC_SAME_DTYPE(X) _Static_assert((int)MC_SIMD_##X == (int)MLX_##X, "simd/dtype.h disagrees with mlx_dtype on " #X)
MC_SAME_DTYPE(BOOL);
MC_SAME_DTYPE(UINT8);
MC_SAME_DTYPE(UINT16);
MC_SAME_DTYPE(UINT32);
MC_SAME_DTYPE(UINT64);
MC_SAME_DTYPE(INT8);
MC_SAME_DTYPE(INT16);
MC_SAME_DTYPE(INT32);
MC_SAME_DTYPE(INT64);
MC_SAME_DTYPE(FLOAT16);
MC_SAME_DTYPE(FLOAT32);
MC_SAME_DTYPE(FLOAT64);
MC_SAME_DTYPE(BFLOAT16);
MC_SAME_DTYPE(COMPLEX64);
#undef MC_SAME_DTYPE
_Static_assert(MC_NUM_DTYPES * 4 <= 64, "the element sizes of dtype.h fit 4 bits each in 64");
_Static_assert((int)MC_SIMD_NUM_DTYPES == (int)MC_NUM_DTYPES, "simd/dtype.h and mlx_dtype count different dtypes");

typedef struct mc_dtype_info {
    const char *name;
    unsigned char kind;
} mc_dtype_info;

static const mc_dtype_info dtype_info[MC_NUM_DTYPES] = {
    [MLX_BOOL] = {"bool", MC_KIND_BOOL},
    [MLX_UINT8] = {"uint8", MC_KIND_UINT},
    [MLX_UINT16] = {"uint16", MC_KIND_UINT},
    [MLX_UINT32] = {"uint32", MC_KIND_UINT},
    [MLX_UINT64] = {"uint64", MC_KIND_UINT},
    [MLX_INT8] = {"int8", MC_KIND_INT},
    [MLX_INT16] = {"int16", MC_KIND_INT},
    [MLX_INT32] = {"int32", MC_KIND_INT},
    [MLX_INT64] = {"int64", MC_KIND_INT},
    [MLX_FLOAT16] = {"float16", MC_KIND_FLOAT},
    [MLX_FLOAT32] = {"float32", MC_KIND_FLOAT},
    [MLX_FLOAT64] = {"float64", MC_KIND_FLOAT},
    [MLX_BFLOAT16] = {"bfloat16", MC_KIND_FLOAT},
    [MLX_COMPLEX64] = {"complex64", MC_KIND_COMPLEX},
};

const char *mc_dtype_name(int d) { return mc_dtype_valid(d) ? dtype_info[d].name : "unknown"; }

mc_kind mc_dtype_kind(mlx_dtype d) { return (mc_kind)dtype_info[d].kind; }

/* MLX's promotion table (mlx/dtype.cpp), indexed in mlx-c enum order:
 * bool, u8, u16, u32, u64, i8, i16, i32, i64, f16, f32, f64, bf16, c64. */
#define B MLX_BOOL
#define U8 MLX_UINT8
#define U16 MLX_UINT16
#define U32 MLX_UINT32
#define U64 MLX_UINT64
#define I8 MLX_INT8
#define I16 MLX_INT16
#define I32 MLX_INT32
#define I64 MLX_INT64
#define F16 MLX_FLOAT16
#define F32 MLX_FLOAT32
#define F64 MLX_FLOAT64
#define BF MLX_BFLOAT16
#define C64 MLX_COMPLEX64
static const unsigned char promotion[MC_NUM_DTYPES][MC_NUM_DTYPES] = {
    /*        b    u8   u16  u32  u64  i8   i16  i32  i64  f16  f32  f64  bf16 c64 */
    /* b  */ {B,   U8,  U16, U32, U64, I8,  I16, I32, I64, F16, F32, F64, BF,  C64},
    /* u8 */ {U8,  U8,  U16, U32, U64, I16, I16, I32, I64, F16, F32, F64, BF,  C64},
    /* u16*/ {U16, U16, U16, U32, U64, I32, I32, I32, I64, F16, F32, F64, BF,  C64},
    /* u32*/ {U32, U32, U32, U32, U64, I64, I64, I64, I64, F16, F32, F64, BF,  C64},
    /* u64*/ {U64, U64, U64, U64, U64, F32, F32, F32, F32, F16, F32, F64, BF,  C64},
    /* i8 */ {I8,  I16, I32, I64, F32, I8,  I16, I32, I64, F16, F32, F64, BF,  C64},
    /* i16*/ {I16, I16, I32, I64, F32, I16, I16, I32, I64, F16, F32, F64, BF,  C64},
    /* i32*/ {I32, I32, I32, I64, F32, I32, I32, I32, I64, F16, F32, F64, BF,  C64},
    /* i64*/ {I64, I64, I64, I64, F32, I64, I64, I64, I64, F16, F32, F64, BF,  C64},
    /* f16*/ {F16, F16, F16, F16, F16, F16, F16, F16, F16, F16, F32, F64, F32, C64},
    /* f32*/ {F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F32, F64, F32, C64},
    /* f64*/ {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, C64},
    /* bf16*/{BF,  BF,  BF,  BF,  BF,  BF,  BF,  BF,  BF,  F32, F32, F64, BF,  C64},
    /* c64*/ {C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64, C64},
};

mlx_dtype mc_promote(mlx_dtype a, mlx_dtype b) { return (mlx_dtype)promotion[a][b]; }
