/* ppcl's CPU runtime: a native thread pool running the work-groups of a launch.
 *
 * Built once with the system C compiler through ppcl's kernel cache and loaded with ctypes
 * (ppcl/devices/cpu/native.py). A launch is one call, ppcl_pool_run(pool, task): the calling
 * thread publishes the task, claims chunks of consecutive work-groups from an atomic counter
 * and runs them; the pool's workers, spinning for a short while after their last chunk and
 * sleeping on a condition variable after that, claim the other chunks. The caller returns when
 * every chunk has run. Only one task is published at a time; a caller that finds the pool busy
 * (another thread's launch) runs its whole task itself, so concurrent launches never wait for
 * each other.
 *
 * Faults: kernel code runs with this thread's jump buffer armed. SIGSEGV, SIGBUS, SIGFPE and
 * SIGILL raised by a kernel jump back here and the launch returns the signal number (the
 * faulting address is kept per thread), so the interpreter survives and reports it. SIGINT
 * (Ctrl-C) received by a thread that is running or waiting for a launch abandons the launch:
 * the call returns PPCL_INTERRUPTED at once, workers stop claiming chunks, and the pool is
 * marked abandoned (workers that never return stay behind; the caller makes a new pool). Every
 * other signal, and every signal outside kernel code, goes to the handler installed before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PPCL_INTERRUPTED (-1)
#define PPCL_NO_MEMORY (-2)
#define LOCAL_ALIGN 128
#define CHUNKS_PER_THREAD 4
#define SPIN_NS 200000L
#define WAIT_SLICE_NS 20000000L
#define ALT_STACK_BYTES (64 * 1024)

typedef void (*ppcl_kernel_fn)(void **args, const void *launch, size_t first_group,
                               size_t last_group, char *local_mem);

/* One launch, prepared by the caller once per kernel, shape and argument block. */
typedef struct ppcl_task {
    ppcl_kernel_fn fn;
    void **args;
    const void *launch;
    size_t num_groups;
    size_t local_bytes;
    size_t flags;         /* PPCL_TASK_ALONE: the calling thread runs every group itself;
                             PPCL_TASK_MEASURE: fill in the times below */
    long total_ns;        /* measured: the whole call */
    long caller_ns;       /* measured on the pool: the calling thread's time in its chunks */
    size_t caller_chunks; /* measured on the pool: the chunks the calling thread ran */
    size_t chunks;        /* measured on the pool: the chunks of the launch */
} ppcl_task;

#define PPCL_TASK_ALONE 1
#define PPCL_TASK_MEASURE 2

typedef struct ppcl_job {
    const ppcl_task *task;
    size_t chunk;
    size_t num_chunks;
    atomic_size_t next;      /* next chunk to claim */
    atomic_size_t done;      /* chunks finished */
    atomic_int cancel;       /* a fault or an interrupt: claim nothing more */
    atomic_int fault;        /* first signal a chunk raised, 0 if none */
    atomic_uintptr_t fault_address;
    atomic_int caller_sleeping;
} ppcl_job;

typedef struct ppcl_pool {
    int threads;             /* threads taking part, the caller included */
    int started;
    pthread_t *workers;
    atomic_int busy;         /* a task is published */
    _Atomic(ppcl_job *) current;
    atomic_ulong generation; /* bumped each time a task is published */
    atomic_int users;        /* workers looking at current */
    atomic_int sleepers;
    atomic_int stop;
    atomic_int abandoned;
    pthread_mutex_t mutex;
    pthread_cond_t wake;     /* workers sleep here */
    pthread_cond_t finished; /* a caller waiting for its last chunks sleeps here */
    ppcl_job job;            /* the published job (one at a time) */
} ppcl_pool;

/* ------------------------------------------------------------------ per-thread state */

static __thread sigjmp_buf *tls_jump;          /* armed while kernel code runs */
static __thread volatile sig_atomic_t tls_signal;
static __thread volatile uintptr_t tls_address;
static __thread volatile sig_atomic_t tls_interrupted;
static __thread uintptr_t tls_last_fault_address;
static __thread char *tls_local;
static __thread size_t tls_local_size;
static __thread void *tls_alt_stack;

static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

static void free_thread_state(void *unused)
{
    (void)unused;
    free(tls_local);
    tls_local = NULL;
    tls_local_size = 0;
}

static void make_thread_key(void) { pthread_key_create(&thread_key, free_thread_state); }

static char *local_block(size_t bytes)
{
    if (bytes == 0)
        return NULL;
    if (bytes > tls_local_size) {
        void *block = NULL;
        size_t size = (bytes + LOCAL_ALIGN - 1) & ~(size_t)(LOCAL_ALIGN - 1);
        if (posix_memalign(&block, LOCAL_ALIGN, size) != 0)
            return NULL;
        memset(block, 0, size);
        free(tls_local);
        tls_local = block;
        tls_local_size = size;
        pthread_once(&thread_key_once, make_thread_key);
        pthread_setspecific(thread_key, (void *)1);
    }
    return tls_local;
}

/* A stack for signal handlers, so a kernel that overflows its stack can still be reported. */
static void ensure_alt_stack(void)
{
    if (tls_alt_stack != NULL)
        return;
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE)) {
        tls_alt_stack = (void *)1; /* the thread has one already (Python's faulthandler) */
        return;
    }
    stack_t stack;
    stack.ss_sp = malloc(ALT_STACK_BYTES);
    if (stack.ss_sp == NULL)
        return;
    stack.ss_size = ALT_STACK_BYTES;
    stack.ss_flags = 0;
    if (sigaltstack(&stack, NULL) == 0)
        tls_alt_stack = stack.ss_sp;
    else
        free(stack.ss_sp);
}

/* ------------------------------------------------------------------ signals */

static const int caught_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGINT};
#define N_CAUGHT (sizeof caught_signals / sizeof caught_signals[0])
static struct sigaction previous[N_CAUGHT];
static int installed[N_CAUGHT];
static pthread_mutex_t install_mutex = PTHREAD_MUTEX_INITIALIZER;

static int signal_slot(int sig)
{
    for (size_t i = 0; i < N_CAUGHT; i++)
        if (caught_signals[i] == sig)
            return (int)i;
    return -1;
}

static void pass_on(int sig, siginfo_t *info, void *context)
{
    int slot = signal_slot(sig);
    if (slot < 0)
        return;
    struct sigaction *old = &previous[slot];
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction != NULL)
            old->sa_sigaction(sig, info, context);
        return;
    }
    if (old->sa_handler == SIG_IGN)
        return;
    if (old->sa_handler == SIG_DFL) {
        /* Default action: restore it and let the signal act as if we were never here (a
           fault re-executes the faulting instruction; SIGINT is raised again). */
        sigaction(sig, old, NULL);
        if (sig == SIGINT)
            raise(sig);
        return;
    }
    old->sa_handler(sig);
}

static void on_signal(int sig, siginfo_t *info, void *context)
{
    sigjmp_buf *jump = tls_jump;
    if (sig == SIGINT) {
        tls_interrupted = 1;
        pass_on(sig, info, context); /* Python's handler: KeyboardInterrupt once we return */
        if (jump != NULL) {
            tls_jump = NULL;
            tls_signal = SIGINT;
            siglongjmp(*jump, 1);
        }
        return;
    }
    if (jump != NULL) {
        tls_jump = NULL;
        tls_signal = sig;
        tls_address = (uintptr_t)(info != NULL ? info->si_addr : NULL);
        siglongjmp(*jump, 1);
    }
    pass_on(sig, info, context);
}

/* Install the handlers (once; again if something replaced them since). */
int ppcl_install_signal_handlers(void)
{
    pthread_mutex_lock(&install_mutex);
    int count = 0;
    for (size_t i = 0; i < N_CAUGHT; i++) {
        struct sigaction current;
        if (sigaction(caught_signals[i], NULL, &current) != 0)
            continue;
        int ours = (current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_signal;
        if (ours) {
            count++;
            continue;
        }
        if (caught_signals[i] == SIGINT && !(current.sa_flags & SA_SIGINFO)
            && (current.sa_handler == SIG_IGN || current.sa_handler == SIG_DFL))
            continue; /* nobody handles Ctrl-C: leave its default alone */
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = on_signal;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigemptyset(&action.sa_mask);
        previous[i] = current;
        if (sigaction(caught_signals[i], &action, NULL) == 0) {
            installed[i] = 1;
            count++;
        }
    }
    pthread_mutex_unlock(&install_mutex);
    return count;
}

/* The address of the last fault a kernel raised in the calling thread. */
uintptr_t ppcl_last_fault_address(void) { return tls_last_fault_address; }

/* ------------------------------------------------------------------ running chunks */

static void unblock(int sig)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/* Run groups [first, last) of a task; 0, or the signal that stopped it. */
static int run_groups(const ppcl_task *task, size_t first, size_t last, char *local)
{
    sigjmp_buf jump;
    if (sigsetjmp(jump, 0) != 0) {
        int sig = tls_signal;
        tls_last_fault_address = tls_address;
        unblock(sig); /* we left the handler by a jump: its signal may still be blocked */
        return sig;
    }
    tls_jump = &jump;
    task->fn(task->args, task->launch, first, last, local);
    tls_jump = NULL;
    return 0;
}

static void record_fault(ppcl_job *job, int sig)
{
    int none = 0;
    if (atomic_compare_exchange_strong(&job->fault, &none, sig))
        atomic_store(&job->fault_address, tls_last_fault_address);
    atomic_store(&job->cancel, 1);
}

/* Claim and run chunks of ``job`` until none is left; returns how many this thread ran. */
static size_t work_on(ppcl_job *job, char *local)
{
    const ppcl_task *task = job->task;
    size_t ran = 0;
    for (;;) {
        if (atomic_load_explicit(&job->cancel, memory_order_relaxed))
            break;
        size_t index = atomic_fetch_add(&job->next, 1);
        if (index >= job->num_chunks)
            break;
        size_t first = index * job->chunk;
        size_t last = first + job->chunk < task->num_groups ? first + job->chunk
                                                             : task->num_groups;
        int sig = run_groups(task, first, last, local);
        ran++;
        if (sig != 0) {
            record_fault(job, sig);
            if (sig == SIGINT)
                return ran;
        }
    }
    return ran;
}

static void finish_chunks(ppcl_pool *pool, ppcl_job *job, size_t ran)
{
    if (ran == 0)
        return;
    size_t done = atomic_fetch_add(&job->done, ran) + ran;
    if (done >= job->num_chunks && atomic_load(&job->caller_sleeping)) {
        pthread_mutex_lock(&pool->mutex);
        pthread_cond_broadcast(&pool->finished);
        pthread_mutex_unlock(&pool->mutex);
    }
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void *worker_main(void *arg)
{
    ppcl_pool *pool = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* Ctrl-C goes to the threads that launch */
    ensure_alt_stack();
    unsigned long seen = atomic_load(&pool->generation);
    for (;;) {
        long spin_until = now_ns() + SPIN_NS;
        unsigned spins = 0;
        while (atomic_load_explicit(&pool->generation, memory_order_acquire) == seen
               && !atomic_load_explicit(&pool->stop, memory_order_relaxed)) {
            cpu_relax();
            if ((++spins & 255) == 0 && now_ns() > spin_until) {
                pthread_mutex_lock(&pool->mutex);
                atomic_fetch_add(&pool->sleepers, 1);
                while (atomic_load(&pool->generation) == seen && !atomic_load(&pool->stop))
                    pthread_cond_wait(&pool->wake, &pool->mutex);
                atomic_fetch_sub(&pool->sleepers, 1);
                pthread_mutex_unlock(&pool->mutex);
            }
        }
        if (atomic_load(&pool->stop))
            return NULL;
        seen = atomic_load(&pool->generation);
        atomic_fetch_add(&pool->users, 1);
        ppcl_job *job = atomic_load(&pool->current);
        if (job != NULL) {
            char *local = local_block(job->task->local_bytes);
            if (local == NULL && job->task->local_bytes != 0) {
                record_fault(job, PPCL_NO_MEMORY);
            } else {
                size_t ran = work_on(job, local);
                finish_chunks(pool, job, ran);
            }
        }
        atomic_fetch_sub(&pool->users, 1);
    }
}

/* ------------------------------------------------------------------ the pool */

ppcl_pool *ppcl_pool_create(int threads)
{
    ppcl_pool *pool = calloc(1, sizeof *pool);
    if (pool == NULL)
        return NULL;
    pool->threads = threads < 1 ? 1 : threads;
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->finished, NULL);
    ppcl_install_signal_handlers();
    return pool;
}

/* Workers start on the first launch that can use them. */
static int start_workers(ppcl_pool *pool)
{
    pthread_mutex_lock(&pool->mutex);
    if (!pool->started) {
        int count = pool->threads - 1;
        pool->workers = calloc((size_t)(count > 0 ? count : 1), sizeof(pthread_t));
        int made = 0;
        for (int i = 0; pool->workers != NULL && i < count; i++)
            if (pthread_create(&pool->workers[i], NULL, worker_main, pool) == 0)
                made++;
        pool->threads = made + 1;
        pool->started = 1;
    }
    pthread_mutex_unlock(&pool->mutex);
    return pool->threads;
}

int ppcl_pool_threads(ppcl_pool *pool) { return pool->threads; }
int ppcl_pool_abandoned(ppcl_pool *pool) { return atomic_load(&pool->abandoned); }

/* Run the whole task in the calling thread. */
static int run_alone(const ppcl_task *task, char *local)
{
    int sig = run_groups(task, 0, task->num_groups, local);
    return sig == SIGINT ? PPCL_INTERRUPTED : sig;
}

/* Whether every chunk of ``job`` has run, or, after a fault, every chunk that was claimed. */
static int settled(ppcl_pool *pool, ppcl_job *job)
{
    if (atomic_load_explicit(&job->done, memory_order_acquire) >= job->num_chunks)
        return 1;
    return atomic_load(&job->cancel) && atomic_load(&pool->users) == 0;
}

/* Wait until the published job has settled; PPCL_INTERRUPTED on Ctrl-C. */
static int wait_for_chunks(ppcl_pool *pool, ppcl_job *job)
{
    long spin_until = now_ns() + SPIN_NS;
    unsigned spins = 0;
    while (!settled(pool, job)) {
        if (tls_interrupted)
            return PPCL_INTERRUPTED;
        cpu_relax();
        if ((++spins & 255) != 0 || now_ns() < spin_until)
            continue;
        pthread_mutex_lock(&pool->mutex);
        atomic_store(&job->caller_sleeping, 1);
        while (!settled(pool, job) && !tls_interrupted) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += WAIT_SLICE_NS;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&pool->finished, &pool->mutex, &until);
        }
        atomic_store(&job->caller_sleeping, 0);
        pthread_mutex_unlock(&pool->mutex);
    }
    return 0;
}

/* Run every work-group of ``task``; 0, a signal number, PPCL_INTERRUPTED or PPCL_NO_MEMORY. */
/* A large copy run as a launch (ppcl/devices/cpu/device.py, CPUDevice.transfer): group g
   copies bytes [g * PPCL_COPY_BLOCK, (g + 1) * PPCL_COPY_BLOCK) of the args[2] bytes from
   args[1] to args[0], so the pool's threads share the memory traffic of one copy. */
#define PPCL_COPY_BLOCK ((size_t)256 * 1024)

void ppcl_copy_groups(void **args, const void *launch, size_t first_group, size_t last_group,
                      char *local_mem)
{
    (void)launch; (void)local_mem;
    char *dst = (char *)args[0];
    const char *src = (const char *)args[1];
    size_t n = *(const size_t *)args[2];
    size_t lo = first_group * PPCL_COPY_BLOCK, hi = last_group * PPCL_COPY_BLOCK;
    if (hi > n) hi = n;
    if (lo < hi) memcpy(dst + lo, src + lo, hi - lo);
}

static int pool_run(ppcl_pool *pool, ppcl_task *task);

/* Run ``task`` on the pool (or alone, see PPCL_TASK_ALONE); with PPCL_TASK_MEASURE, the task
   gets the times the CPU device chooses between the two from (ppcl/devices/cpu/alone.py). */
int ppcl_pool_run(ppcl_pool *pool, ppcl_task *task)
{
    if (!(task->flags & PPCL_TASK_MEASURE))
        return pool_run(pool, task);
    long start = now_ns();
    task->caller_chunks = task->chunks = 0;
    int status = pool_run(pool, task);
    task->total_ns = now_ns() - start;
    return status;
}

static int pool_run(ppcl_pool *pool, ppcl_task *task)
{
    if (task->num_groups == 0)
        return 0;
    tls_interrupted = 0;
    ensure_alt_stack();
    char *local = local_block(task->local_bytes);
    if (local == NULL && task->local_bytes != 0)
        return PPCL_NO_MEMORY;
    int threads = pool->started ? pool->threads : start_workers(pool);
    int expected = 0;
    if (threads == 1 || task->num_groups == 1 || (task->flags & PPCL_TASK_ALONE)
        || atomic_load(&pool->abandoned)
        || !atomic_compare_exchange_strong(&pool->busy, &expected, 1))
        return run_alone(task, local);

    ppcl_job *job = &pool->job;
    size_t chunk = task->num_groups / ((size_t)threads * CHUNKS_PER_THREAD);
    job->task = task;
    job->chunk = chunk == 0 ? 1 : chunk;
    job->num_chunks = (task->num_groups + job->chunk - 1) / job->chunk;
    atomic_store(&job->next, 0);
    atomic_store(&job->done, 0);
    atomic_store(&job->cancel, 0);
    atomic_store(&job->fault, 0);
    atomic_store(&job->caller_sleeping, 0);
    atomic_store(&pool->current, job);
    atomic_fetch_add(&pool->generation, 1);
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->mutex);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->mutex);
    }

    long work_start = (task->flags & PPCL_TASK_MEASURE) ? now_ns() : 0;
    size_t ran = work_on(job, local);
    if (task->flags & PPCL_TASK_MEASURE) {
        task->caller_ns = now_ns() - work_start;
        task->caller_chunks = ran;
        task->chunks = job->num_chunks;
    }
    int status = 0;
    if (atomic_load(&job->fault) == SIGINT) {
        status = PPCL_INTERRUPTED;
    } else {
        atomic_fetch_add(&job->done, ran);
        status = wait_for_chunks(pool, job);
    }
    if (status == PPCL_INTERRUPTED) {
        /* Chunks may still run (or never end) on the workers: leave the job and the pool to
           them; the caller makes a new pool. */
        atomic_store(&job->cancel, 1);
        atomic_store(&pool->abandoned, 1);
        return PPCL_INTERRUPTED;
    }
    atomic_store(&pool->current, NULL);
    for (unsigned spins = 1; atomic_load(&pool->users) != 0; spins++) {
        cpu_relax();
        if ((spins & 1023) == 0)
            sched_yield(); /* a worker between claims was preempted */
    }
    int fault = atomic_load(&job->fault);
    if (fault != 0)
        tls_last_fault_address = atomic_load(&job->fault_address);
    atomic_store(&pool->busy, 0);
    return fault;
}

/* Stop the workers of a pool that is no longer used (an abandoned pool is left as it is). */
void ppcl_pool_destroy(ppcl_pool *pool)
{
    if (pool == NULL || atomic_load(&pool->abandoned))
        return;
    pthread_mutex_lock(&pool->mutex);
    atomic_store(&pool->stop, 1);
    pthread_cond_broadcast(&pool->wake);
    int started = pool->started;
    pthread_mutex_unlock(&pool->mutex);
    if (started)
        for (int i = 0; i < pool->threads - 1; i++)
            pthread_join(pool->workers[i], NULL);
    free(pool->workers);
    pthread_mutex_destroy(&pool->mutex);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->finished);
    free(pool);
}
