/* core/observer.c — event subscribers and the global step.
 *
 * Observers are few (the summary writer, a test) and change rarely, so a
 * small fixed table under a mutex is enough; emitting copies the table's
 * live entries first so an observer may remove itself.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include "core/internal.h"

enum { MAX_OBSERVERS = 32 };

typedef struct observer {
    int id;
    gb_observer_fn fn;
    void *user;
    unsigned kinds;
} observer;

static observer observers[MAX_OBSERVERS];
static int next_id = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Read without the lock by every emitter, on any thread. */
static _Atomic unsigned subscribed_kinds;

static void recompute_kinds(void) {
    unsigned k = 0;
    for (int i = 0; i < MAX_OBSERVERS; i++)
        if (observers[i].fn) k |= observers[i].kinds;
    subscribed_kinds = k;
}

int gb_observer_add(gb_observer_fn fn, void *user, unsigned kinds) {
    if (!fn) return 0;
    int id = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OBSERVERS; i++) {
        if (!observers[i].fn) {
            id = next_id++;
            observers[i] = (observer){id, fn, user, kinds};
            break;
        }
    }
    recompute_kinds();
    pthread_mutex_unlock(&lock);
    return id;
}

void gb_observer_remove(int id) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OBSERVERS; i++)
        if (observers[i].id == id) observers[i] = (observer){0};
    recompute_kinds();
    pthread_mutex_unlock(&lock);
}

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double gb__now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

bool gb_observer_wants(unsigned kinds) {
    return atomic_load_explicit(&subscribed_kinds, memory_order_relaxed) & kinds;
}

void gb_observer_emit(const gb_event *ev) {
    if (!(atomic_load_explicit(&subscribed_kinds, memory_order_relaxed) & ev->kind)) return;
    observer snapshot[MAX_OBSERVERS];
    int n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OBSERVERS; i++)
        if (observers[i].fn && (observers[i].kinds & ev->kind)) snapshot[n++] = observers[i];
    pthread_mutex_unlock(&lock);
    gb_event copy = *ev;
    if (copy.wall_time == 0) copy.wall_time = wall_now();
    if (!copy.message) copy.message = "";
    gb_call_site site = gb__call_site();
    for (int i = 0; i < n; i++) snapshot[i].fn(&copy, snapshot[i].user);
    gb__call_site_restore(site);
}

static _Atomic int64_t current_step;
static _Atomic bool step_set;

void gb_set_step(int64_t step) {
    current_step = step;
    step_set = true;
    if (atomic_load_explicit(&gb__prof_on, memory_order_relaxed)) gb__prof_step(step);
}

void gb_clear_step(void) { step_set = false; }

bool gb_get_step(int64_t *step) {
    if (step_set && step) *step = current_step;
    return step_set;
}
