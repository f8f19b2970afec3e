/* Owns mlx_device_info: the key/value description of a device. For the CPU
 * it holds what MLX's CPU backend reports, "device_name" (the model name
 * from /proc/cpuinfo, or the machine name where there is none, as on most
 * aarch64 kernels) and "architecture" (uname's machine), plus
 * "memory_size" (physical memory in bytes, a size value, named as MLX's
 * Metal backend names it) because it is a true fact programs ask for. A GPU
 * has no facts here: its info is empty, as in MLX built without a GPU. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "handles/device.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

enum { MAX_ENTRIES = 3 };

typedef struct entry {
    const char *key; /* static */
    bool is_string;
    char *text; /* owned, when is_string */
    size_t size;
} entry;

typedef struct mc_device_info {
    size_t n;
    entry e[MAX_ENTRIES];
} mc_device_info;

static void destroy(mc_device_info *info)
{
    if (!info)
        return;
    for (size_t i = 0; i < info->n; i++)
        mc_xfree(info->e[i].text);
    mc_xfree(info);
}

static int add_string(const char *fn, mc_device_info *info, const char *key, const char *text)
{
    char *c = mc_xstrdup(text);
    if (!c)
        return mc_error_oom(fn, strlen(text) + 1);
    info->e[info->n++] = (entry){.key = key, .is_string = true, .text = c};
    return 0;
}

static void add_size(mc_device_info *info, const char *key, size_t size)
{
    info->e[info->n++] = (entry){.key = key, .is_string = false, .size = size};
}

/* The text after "model name\t: " in /proc/cpuinfo, into buf; false if
 * there is no such line. */
static bool cpu_model_name(char *buf, size_t n)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return false;
    char line[512];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        char *p = strstr(line, ": ");
        if (!p)
            continue;
        p += 2;
        p[strcspn(p, "\n")] = '\0';
        snprintf(buf, n, "%s", p);
        found = true;
    }
    fclose(f);
    return found;
}

static size_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

static mc_device_info *describe(const char *fn, const mc_device *dev)
{
    mc_device_info *info = mc_xcalloc(1, sizeof *info);
    if (!info) {
        mc_error_oom(fn, sizeof *info);
        return NULL;
    }
    if (dev->type != MLX_CPU)
        return info;
    struct utsname u;
    const char *arch = uname(&u) == 0 ? u.machine : "unknown";
    char name[256];
    if (!cpu_model_name(name, sizeof name))
        snprintf(name, sizeof name, "%s", arch);
    if (add_string(fn, info, "device_name", name) || add_string(fn, info, "architecture", arch)) {
        destroy(info);
        return NULL;
    }
    size_t mem = physical_memory();
    if (mem)
        add_size(info, "memory_size", mem);
    return info;
}

static mc_device_info *checked(mlx_device_info h, const char *fn)
{
    if (!h.ctx)
        mc_error("[%s] Expected a non-empty mlx_device_info (the handle's ctx is NULL).", fn);
    return h.ctx;
}

/* The entry of key, or NULL; reports only a NULL key (with *bad set). */
static entry *find(mc_device_info *info, const char *key, const char *fn, int *bad)
{
    *bad = 0;
    if (!key) {
        *bad = mc_error("[%s] The key is NULL.", fn);
        return NULL;
    }
    for (size_t i = 0; i < info->n; i++)
        if (strcmp(info->e[i].key, key) == 0)
            return &info->e[i];
    return NULL;
}

mlx_device_info mlx_device_info_new(void) { return (mlx_device_info){NULL}; }

int mlx_device_info_get(mlx_device_info *info, mlx_device dev)
{
    static const char fn[] = "mlx_device_info_get";
    if (!info)
        return mc_error("[%s] The output info pointer is NULL.", fn);
    mc_device *d = mc_device_checked(dev, fn);
    if (!d)
        return 1;
    mc_device_info *fresh = describe(fn, d);
    if (!fresh)
        return 1;
    /* Keep an existing object (copies of the handle see the new facts). */
    mc_device_info *old = info->ctx;
    if (!old) {
        info->ctx = fresh;
        return 0;
    }
    mc_device_info tmp = *old;
    *old = *fresh;
    *fresh = tmp;
    destroy(fresh);
    return 0;
}

int mlx_device_info_free(mlx_device_info info)
{
    destroy(info.ctx);
    return 0;
}

int mlx_device_info_has_key(bool *exists, mlx_device_info info, const char *key)
{
    static const char fn[] = "mlx_device_info_has_key";
    if (!exists)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_device_info *i = checked(info, fn);
    if (!i)
        return 1;
    int bad;
    entry *e = find(i, key, fn, &bad);
    if (bad)
        return 1;
    *exists = e != NULL;
    return 0;
}

/* mlx-c returns 2, without reporting, for an absent key or a value of the
 * other kind: a program probes with these, so that is not an error. */
int mlx_device_info_is_string(bool *is_string, mlx_device_info info, const char *key)
{
    static const char fn[] = "mlx_device_info_is_string";
    if (!is_string)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_device_info *i = checked(info, fn);
    if (!i)
        return 1;
    int bad;
    entry *e = find(i, key, fn, &bad);
    if (bad)
        return 1;
    if (!e)
        return 2;
    *is_string = e->is_string;
    return 0;
}

int mlx_device_info_get_string(const char **value, mlx_device_info info, const char *key)
{
    static const char fn[] = "mlx_device_info_get_string";
    if (!value)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_device_info *i = checked(info, fn);
    if (!i)
        return 1;
    int bad;
    entry *e = find(i, key, fn, &bad);
    if (bad)
        return 1;
    if (!e || !e->is_string)
        return 2;
    *value = e->text;
    return 0;
}

int mlx_device_info_get_size(size_t *value, mlx_device_info info, const char *key)
{
    static const char fn[] = "mlx_device_info_get_size";
    if (!value)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_device_info *i = checked(info, fn);
    if (!i)
        return 1;
    int bad;
    entry *e = find(i, key, fn, &bad);
    if (bad)
        return 1;
    if (!e || e->is_string)
        return 2;
    *value = e->size;
    return 0;
}

int mlx_device_info_get_keys(mlx_vector_string *keys, mlx_device_info info)
{
    static const char fn[] = "mlx_device_info_get_keys";
    if (!keys)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    mc_device_info *i = checked(info, fn);
    if (!i)
        return 1;
    const char *names[MAX_ENTRIES];
    for (size_t k = 0; k < i->n; k++)
        names[k] = i->e[k].key;
    return mlx_vector_string_set_data(keys, names, i->n);
}
