/* MC_TLS_FAST: the TLS model of thread-locals read on every op. */
#ifndef MC_RUNTIME_TLS_H
#define MC_RUNTIME_TLS_H

/* A shared library's thread-local is reached through a __tls_get_addr call
 * by default; initial-exec makes it one load relative to the thread pointer.
 * Such variables take room in the static TLS block, which a library loaded
 * with dlopen must find free, so only small ones (a pointer, a counter) use
 * it: the few hot ones, a pointer or a small struct of list heads. */
#if defined(__GNUC__)
#define MC_TLS_FAST __attribute__((tls_model("initial-exec")))
#else
#define MC_TLS_FAST
#endif

#endif
