/*
 * posix_thread.c - threads on POSIX: the parallel loops (store checks,
 * recipe parsing, view links), the download threads, and the mutexes and
 * conditions they share.
 */
#define _GNU_SOURCE /* _SC_NPROCESSORS_ONLN, sched_getaffinity */
#include "platform/platform.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

/* The CPUs this process may run on: a container or `taskset` narrows the
 * affinity mask below what the machine has online. */
unsigned cfa_plat_cpu_count(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	/* Online processors, not configured ones; a container's CPU quota is
	 * not taken into account. */
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

struct thread_item {
	void (*fn)(void *item);
	void *item;
};

static void *thread_main(void *arg)
{
	struct thread_item *t = arg;
	t->fn(t->item);
	return NULL;
}

/* Items past this many run in the calling thread, one after another, while
 * the threads work on theirs. */
#define MAX_THREADS 16

void cfa_plat_parallel(void (*fn)(void *item), void *base, size_t size, size_t n)
{
	struct thread_item items[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	/* Only threads that started are joined: joining a pthread_t that
	 * pthread_create did not fill is undefined. */
	bool started[MAX_THREADS] = {false};
	size_t i, nt = n < MAX_THREADS ? n : MAX_THREADS;

	/* One item runs here: a thread for it would only add its start, its
	 * stack and a malloc arena of its own, the most of a short command's
	 * time. */
	if (n == 1) {
		fn(base);
		return;
	}
	for (i = 0; i < nt; i++) {
		/* items lives on this stack frame, which outlives every
		 * thread: all are joined before return. */
		items[i] = (struct thread_item){fn, (char *)base + i * size};
		started[i] = pthread_create(&tid[i], NULL, thread_main, &items[i]) == 0;
		/* No thread (EAGAIN at a process or system limit): the item
		 * still runs, here, before the next thread is started. */
		if (!started[i])
			fn(items[i].item);
	}
	for (i = nt; i < n; i++)
		fn((char *)base + i * size);
	for (i = 0; i < nt; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
}

struct cfa_thread {
	pthread_t id;
	void (*fn)(void *);
	void *arg;
};

/* t is owned by the caller through cfa_plat_thread_join, which frees it after
 * the thread has ended. */
static void *own_thread_main(void *arg)
{
	struct cfa_thread *t = arg;

	t->fn(t->arg);
	return NULL;
}

int cfa_plat_thread_start(void (*fn)(void *), void *arg, struct cfa_thread **out)
{
	struct cfa_thread *t = malloc(sizeof(*t));
	int rc;

	if (!t)
		return ENOMEM;
	t->fn = fn;
	t->arg = arg;
	/* fn and arg are set before the thread starts, so it never sees them
	 * unset. */
	if ((rc = pthread_create(&t->id, NULL, own_thread_main, t)) != 0) {
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void cfa_plat_thread_join(struct cfa_thread *t)
{
	if (!t)
		return;
	pthread_join(t->id, NULL);
	free(t);
}

struct cfa_mutex {
	pthread_mutex_t m;
};

struct cfa_mutex *cfa_plat_mutex_new(void)
{
	struct cfa_mutex *m = malloc(sizeof(*m));

	if (m && pthread_mutex_init(&m->m, NULL) != 0) {
		free(m);
		return NULL;
	}
	return m;
}

void cfa_plat_mutex_lock(struct cfa_mutex *m)
{
	/* A NULL mutex makes locking a no-op rather than a crash. */
	if (m)
		pthread_mutex_lock(&m->m);
}

void cfa_plat_mutex_unlock(struct cfa_mutex *m)
{
	if (m)
		pthread_mutex_unlock(&m->m);
}

void cfa_plat_mutex_free(struct cfa_mutex *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->m);
	free(m);
}

struct cfa_cond {
	pthread_cond_t c;
};

struct cfa_cond *cfa_plat_cond_new(void)
{
	struct cfa_cond *c = malloc(sizeof(*c));

	if (c && pthread_cond_init(&c->c, NULL) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

void cfa_plat_cond_wait(struct cfa_cond *c, struct cfa_mutex *m)
{
	/* May wake without a broadcast (a spurious wakeup): callers test
	 * their condition in a loop. */
	pthread_cond_wait(&c->c, &m->m);
}

void cfa_plat_cond_broadcast(struct cfa_cond *c)
{
	pthread_cond_broadcast(&c->c);
}

void cfa_plat_cond_free(struct cfa_cond *c)
{
	if (!c)
		return;
	pthread_cond_destroy(&c->c);
	free(c);
}
