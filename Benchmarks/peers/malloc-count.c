/*
 * A malloc counter for `make bench` (part cpu), loaded with LD_PRELOAD into the program measured.
 *
 * Counts every allocation call (malloc, calloc, realloc, memalign, posix_memalign, aligned_alloc, valloc) in every
 * thread and forwards it to glibc's allocator unchanged, so the program allocates exactly as it would without it.
 * The count lives in the first 8 bytes of the file named by MALLOC_COUNT_FILE, mapped shared: the benchmark reads
 * it before and after a run of commands without stopping or signalling the program.
 *
 * Build: cc -O2 -shared -fPIC -o malloc-count.so Benchmarks/peers/malloc-count.c
 * Run:   MALLOC_COUNT_FILE=/tmp/count LD_PRELOAD=./malloc-count.so PROGRAM...
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* Calls made before the file is mapped (the loader, other constructors) go here and are carried over. */
static _Atomic uint64_t early;
static _Atomic uint64_t *counter = &early;

static inline void count(void) { atomic_fetch_add_explicit(counter, 1, memory_order_relaxed); }

__attribute__((constructor)) static void map_counter(void) {
    const char *path = getenv("MALLOC_COUNT_FILE");
    if (path == NULL || *path == '\0') return;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    if (ftruncate(fd, sizeof(uint64_t)) != 0) {
        close(fd);
        return;
    }
    void *page = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (page == MAP_FAILED) return;
    _Atomic uint64_t *mapped = page;
    atomic_fetch_add_explicit(mapped, atomic_load(&early), memory_order_relaxed);
    counter = mapped;
}

void *malloc(size_t size) {
    count();
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
    count();
    return __libc_calloc(n, size);
}

void *realloc(void *pointer, size_t size) {
    count();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    count();
    return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    count();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
