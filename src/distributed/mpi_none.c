/* The MPI backend of a build without MPI (meson -Dmpi=disabled, or no MPI
 * found): MPI is not available, so the groups never ask for more than
 * mc_mpi_available() and mc_mpi_launched(); the rest reports. */
#include "distributed/mpi_backend.h"
#include "runtime/error.h"

bool mc_mpi_available(void) { return false; }
bool mc_mpi_launched(void) { return false; }

int mc_mpi_world(mc_mpi_comm **out, int *rank, int *size, const char **why)
{
    (void)out;
    (void)rank;
    (void)size;
    *why = "Cannot initialize MPI: this build of mlx-cpu has no MPI";
    return 1;
}

static int mc_mpi_none(const char *fn) { return mc_error("[%s] This build of mlx-cpu has no MPI.", fn); }

int mc_mpi_split(mc_mpi_comm *c, int color, int key, mc_mpi_comm **out, int *rank, int *size, const char *fn)
{
    (void)c, (void)color, (void)key, (void)out, (void)rank, (void)size;
    return mc_mpi_none(fn);
}
void mc_mpi_comm_free(mc_mpi_comm *c) { (void)c; }
int mc_mpi_agree(mc_mpi_comm *c, int op, mlx_dtype dt, size_t count, const char *fn)
{
    (void)c, (void)op, (void)dt, (void)count;
    return mc_mpi_none(fn);
}
int mc_mpi_all_reduce(mc_mpi_comm *c, int op, const void *in, void *out, size_t count, mlx_dtype dt,
                      const char *fn)
{
    (void)c, (void)op, (void)in, (void)out, (void)count, (void)dt;
    return mc_mpi_none(fn);
}
int mc_mpi_all_gather(mc_mpi_comm *c, const void *in, void *out, size_t count, mlx_dtype dt, const char *fn)
{
    (void)c, (void)in, (void)out, (void)count, (void)dt;
    return mc_mpi_none(fn);
}
int mc_mpi_sum_scatter(mc_mpi_comm *c, const void *in, void *out, size_t count, mlx_dtype dt, const char *fn)
{
    (void)c, (void)in, (void)out, (void)count, (void)dt;
    return mc_mpi_none(fn);
}
int mc_mpi_send(mc_mpi_comm *c, const void *buf, size_t count, mlx_dtype dt, int dst, const char *fn)
{
    (void)c, (void)buf, (void)count, (void)dt, (void)dst;
    return mc_mpi_none(fn);
}
int mc_mpi_recv(mc_mpi_comm *c, void *buf, size_t count, mlx_dtype dt, int src, const char *fn)
{
    (void)c, (void)buf, (void)count, (void)dt, (void)src;
    return mc_mpi_none(fn);
}
void mc_mpi_finalize(void) {}
void mc_mpi_keep(void *p) { (void)p; }
