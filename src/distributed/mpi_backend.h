/* The MPI backend: what the groups and the collective primitives ask of
 * MPI, behind an opaque communicator, so that nothing above this file
 * needs mpi.h. A build without MPI links mpi_none.c, which says MPI is not
 * available. Every call that fails reports one "[fn] ..." error and
 * returns non-zero. */
#ifndef MC_DISTRIBUTED_MPI_BACKEND_H
#define MC_DISTRIBUTED_MPI_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "array/dtype.h"

typedef struct mc_mpi_comm mc_mpi_comm;

enum mc_mpi_op { MC_MPI_SUM, MC_MPI_MAX, MC_MPI_MIN, MC_MPI_GATHER, MC_MPI_SUM_SCATTER };

/* A result of the waiting calls besides 0 and 1: the operation timed out
 * and MPI may still read or write the buffers it was given, so the caller
 * must keep them alive for the rest of the process. An error is reported. */
enum { MC_MPI_ABANDONED = 2 };

/* Keeps p reachable for the rest of the process: memory that MPI may
 * still use after an operation was abandoned (a deliberate leak, which
 * leak checkers then do not report). */
void mc_mpi_keep(void *p);

/* Whether this build has MPI. */
bool mc_mpi_available(void);

/* Whether this process was started by an MPI launcher (mpirun, srun...). */
bool mc_mpi_launched(void);

/* Initialises MPI once (MPI_THREAD_MULTIPLE) and gives its world
 * communicator with this process's rank and the world's size; or returns
 * 1 with *why saying why MPI cannot start (nothing is reported: without
 * strict, that only means the singleton group). */
int mc_mpi_world(mc_mpi_comm **out, int *rank, int *size, const char **why);

/* The processes of c passing the same color, ordered by key: a new
 * communicator the caller frees with mc_mpi_comm_free. Collective. */
int mc_mpi_split(mc_mpi_comm *c, int color, int key, mc_mpi_comm **out, int *rank, int *size, const char *fn);
void mc_mpi_comm_free(mc_mpi_comm *c);

/* Checks that every process of c is in the same collective (op) on the
 * same dtype and count, waiting at most the timeout for all of them
 * (MLX_CPU_MPI_CHECK=0: no check). */
int mc_mpi_agree(mc_mpi_comm *c, int op, mlx_dtype dt, size_t count, const char *fn);

/* Sum, max or min of count elements over c; in == out reduces in place.
 * Checks first, as mc_mpi_agree; a small reduction in a group of a few
 * (mpi_backend.c) is one exchange that carries the check and the data,
 * and is checked whatever MLX_CPU_MPI_CHECK says, at no extra cost. */
int mc_mpi_all_reduce(mc_mpi_comm *c, int op, const void *in, void *out, size_t count, mlx_dtype dt,
                      const char *fn);
/* count elements of every process, concatenated in rank order into out. */
int mc_mpi_all_gather(mc_mpi_comm *c, const void *in, void *out, size_t count, mlx_dtype dt, const char *fn);
/* The sum over c of in (size * count elements), block r to rank r. */
int mc_mpi_sum_scatter(mc_mpi_comm *c, const void *in, void *out, size_t count, mlx_dtype dt, const char *fn);
/* Messages to and from one rank; the receiver checks the dtype and count
 * that arrive against the ones it expects. */
int mc_mpi_send(mc_mpi_comm *c, const void *buf, size_t count, mlx_dtype dt, int dst, const char *fn);
int mc_mpi_recv(mc_mpi_comm *c, void *buf, size_t count, mlx_dtype dt, int src, const char *fn);

/* Finalises MPI if this library initialised it (at exit). */
void mc_mpi_finalize(void);

#endif
