// Counts the heap allocations of the process it is preloaded into (LD_PRELOAD), for
// Tests/IntegrationTests/FastPathAllocationTests.swift: a cache hit must allocate nothing
// beyond what libmicrohttpd's response API needs.
//
// Build: cc -shared -fPIC -O2 -o alloc_counter.so alloc_counter.c
// Run:   LD_PRELOAD=./alloc_counter.so HTTPDNS_ALLOC_COUNTER=/tmp/counts httpdnsd ...
//
// malloc, calloc, realloc, reallocarray, posix_memalign, aligned_alloc, memalign, valloc and
// pvalloc are counted and forwarded to glibc's own (__libc_malloc, ...); free is counted too.
// The counts live in the file HTTPDNS_ALLOC_COUNTER names, mapped shared, so that the test
// reads them with pread at any moment (no signal, nothing asked of the process). While the
// file's `recording` word is non-zero (the test writes it), every allocation also records its
// call stack (glibc's backtrace) in the file's site table under that word's value, so that a
// failing test can say where the allocations come from. See `struct shared` for the layout,
// which the test reads at fixed offsets.
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

#define MAGIC 0x31434f4c4c41ULL /* "ALLOC1" */
#define THREADS 256
#define SITES 2048
#define FRAMES 14

struct thread_count {
    _Atomic uint32_t tid; /* 0: free slot */
    uint32_t pad;
    _Atomic uint64_t allocations;
};

struct site {
    _Atomic uint64_t key; /* hash of window and frames; 0: free slot */
    _Atomic uint64_t count;
    uint32_t window; /* `recording` when the site was recorded */
    uint32_t tid;
    uint32_t frames;
    uint32_t pad;
    uint64_t frame[FRAMES]; /* return addresses, innermost first (this library's frame dropped) */
};

/* Offsets: magic 0, pid 8, allocations 16, frees 24, recording 32, lost 36, threads 40,
   sites 40 + THREADS * 16. */
struct shared {
    uint64_t magic;
    uint64_t pid;
    _Atomic uint64_t allocations;
    _Atomic uint64_t frees;
    _Atomic uint32_t recording;
    _Atomic uint32_t lost; /* sites not recorded: table full, or an allocation inside backtrace */
    struct thread_count threads[THREADS];
    struct site sites[SITES];
};

static struct shared fallback;
static struct shared *counts = &fallback;
static __thread __attribute__((tls_model("initial-exec"))) uint32_t thread_id;
static __thread __attribute__((tls_model("initial-exec"))) int in_backtrace;

static void count_thread(void) {
    if (thread_id == 0) thread_id = (uint32_t)gettid();
    uint32_t slot = thread_id % THREADS;
    for (int probe = 0; probe < THREADS; probe++, slot = (slot + 1) % THREADS) {
        uint32_t seen = atomic_load_explicit(&counts->threads[slot].tid, memory_order_relaxed);
        if (seen == 0) {
            uint32_t expected = 0;
            if (atomic_compare_exchange_strong(&counts->threads[slot].tid, &expected, thread_id)) seen = thread_id;
            else seen = expected;
        }
        if (seen == thread_id) {
            atomic_fetch_add_explicit(&counts->threads[slot].allocations, 1, memory_order_relaxed);
            return;
        }
    }
}

static void record_site(uint32_t window) {
    void *frame[FRAMES + 1];
    in_backtrace = 1;
    int depth = backtrace(frame, FRAMES + 1);
    in_backtrace = 0;
    /* frame[0] is in this library (the caller of record_site is inlined into it or is it). */
    int frames = depth > 1 ? depth - 1 : 0;
    uint64_t key = 1469598103934665603ULL ^ window;
    for (int index = 0; index < frames; index++) key = (key ^ (uint64_t)(uintptr_t)frame[index + 1]) * 1099511628211ULL;
    if (key == 0) key = 1;
    uint32_t slot = (uint32_t)(key % SITES);
    for (int probe = 0; probe < SITES; probe++, slot = (slot + 1) % SITES) {
        struct site *site = &counts->sites[slot];
        uint64_t expected = 0;
        if (atomic_compare_exchange_strong(&site->key, &expected, key)) {
            site->window = window;
            site->tid = thread_id;
            site->frames = (uint32_t)frames;
            for (int index = 0; index < frames; index++) site->frame[index] = (uint64_t)(uintptr_t)frame[index + 1];
            atomic_fetch_add_explicit(&site->count, 1, memory_order_relaxed);
            return;
        }
        if (expected == key) {
            atomic_fetch_add_explicit(&site->count, 1, memory_order_relaxed);
            return;
        }
    }
    atomic_fetch_add_explicit(&counts->lost, 1, memory_order_relaxed);
}

static inline void counted(void) {
    atomic_fetch_add_explicit(&counts->allocations, 1, memory_order_relaxed);
    count_thread();
    uint32_t window = atomic_load_explicit(&counts->recording, memory_order_relaxed);
    if (window == 0) return;
    if (in_backtrace) {
        atomic_fetch_add_explicit(&counts->lost, 1, memory_order_relaxed);
        return;
    }
    record_site(window);
}

void *malloc(size_t size) {
    counted();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    counted();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (pointer != NULL && size == 0) {
        atomic_fetch_add_explicit(&counts->frees, 1, memory_order_relaxed);
    } else {
        counted();
    }
    return __libc_realloc(pointer, size);
}

void *reallocarray(void *pointer, size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(pointer, total);
}

void free(void *pointer) {
    if (pointer != NULL) atomic_fetch_add_explicit(&counts->frees, 1, memory_order_relaxed);
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    counted();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    counted();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment == 0 || alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    counted();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

void *valloc(size_t size) {
    counted();
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    counted();
    return __libc_pvalloc(size);
}

/* Maps the counter file and keeps the variables from reaching the process's children. */
__attribute__((constructor)) static void start_counting(void) {
    const char *path = getenv("HTTPDNS_ALLOC_COUNTER");
    if (path == NULL || *path == 0) return;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    if (ftruncate(fd, sizeof(struct shared)) != 0) {
        close(fd);
        return;
    }
    void *mapping = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (mapping == MAP_FAILED) return;
    struct shared *shared = mapping;
    shared->pid = (uint64_t)getpid();
    shared->magic = MAGIC;
    /* backtrace loads libgcc_s on its first call (allocating): do that now. */
    void *frame[2];
    in_backtrace = 1;
    backtrace(frame, 2);
    in_backtrace = 0;
    counts = shared;
    unsetenv("LD_PRELOAD");
    unsetenv("HTTPDNS_ALLOC_COUNTER");
}
