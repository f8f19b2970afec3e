/* Owns mlx_version. mlx-c v0.6.0, whose API this library implements, is
 * built against MLX v0.31.1 (the tag its CMakeLists.txt fetches), and MLX's
 * behaviour is followed as of that version; mlx_version reports it, as
 * mlx-c reports the MLX it wraps. */
#include "mlx/c/version.h"

#include "handles/string.h"

int mlx_version(mlx_string *str_) { return mc_string_assign("mlx_version", str_, "0.31.1"); }
