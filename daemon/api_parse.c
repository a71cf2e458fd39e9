/*
 * api_parse.c — the parser thread: long request lines parsed, and their trees freed, off the
 * main thread (see api_internal.h).
 *
 * jansson takes some 40 ms to parse a request line of 1 MiB on a 2-core VM and 15 ms to free
 * its tree; on the main thread that is as long again that a new connection's estop waits. A
 * line over API_PARSE_INLINE bytes is therefore handed here: the main thread goes on serving
 * the other clients (and every estop) while this thread parses it, and a completed parse comes
 * back through an ev_async watcher of the lowest priority: one per loop iteration, after that
 * iteration's socket events. The trees of such requests come back here to be freed. jansson's
 * reference counts are atomic (jansson_config.h: JSON_HAVE_ATOMIC_BUILTINS), so the main
 * thread may keep a reference to a part of a tree (a request's id) that this thread frees the
 * rest of; nothing else of a tree is shared.
 *
 * Threads: api_parser_start, _submit, _release, _stop and the done callback run on the main
 * thread; parse_body on the parser thread. The two share the job lists under one mutex.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/api_internal.h"

typedef struct parse_job {
    void *ctx;       /* whose line (NULL: a tree to free) */
    char *line;      /* the line (malloc'd; freed once parsed) */
    size_t len;      /* ... its length [bytes] */
    json_t *req;     /* the parsed request (NULL: malformed, je says why) or the tree to free */
    json_error_t je; /* where the parse failed */
    struct parse_job *next;
} parse_job;

struct api_parser {
    struct ev_loop *loop;
    api_parsed_fn done;
    ev_async wake; /* the parser thread finished a line */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;                      /* under mu: the thread ends once its list is done */
    bool joined;                    /* main thread's: the thread has ended */
    parse_job *todo, **todo_tail;   /* under mu: lines to parse, trees to free, in order */
    parse_job *ready, **ready_tail; /* under mu: lines parsed, for the main thread */
};

/* The parser thread: takes jobs in order; a line is parsed and goes to the ready list (the
 * main thread is woken), a tree is freed. Ends when asked, once its list is empty. */
static void *parse_body(void *arg)
{
    api_parser *p = arg;
    pthread_setname_np(pthread_self(), "armd-parse");
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && !p->todo) pthread_cond_wait(&p->cv, &p->mu);
        if (!p->todo) break; /* asked to stop, and every job done */
        parse_job *j = p->todo;
        p->todo = j->next;
        if (!p->todo) p->todo_tail = &p->todo;
        pthread_mutex_unlock(&p->mu);
        if (!j->ctx) { /* a tree to free */
            json_decref(j->req);
            free(j);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        j->req = json_loadb(j->line, j->len, JSON_REJECT_DUPLICATES, &j->je);
        free(j->line);
        j->line = NULL;
        j->next = NULL;
        pthread_mutex_lock(&p->mu);
        *p->ready_tail = j;
        p->ready_tail = &j->next;
        ev_async_send(p->loop, &p->wake);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Main thread: hands the first parsed line to its owner (the tree is then the owner's); true
 * when more are ready. */
static bool deliver_one(api_parser *p)
{
    pthread_mutex_lock(&p->mu);
    parse_job *j = p->ready;
    if (j) {
        p->ready = j->next;
        if (!p->ready) p->ready_tail = &p->ready;
    }
    bool more = p->ready != NULL;
    pthread_mutex_unlock(&p->mu);
    if (j) {
        p->done(j->ctx, j->req, &j->je);
        free(j);
    }
    return more;
}

/* Main thread: one parsed line per loop iteration (it wakes itself again for the next), so
 * that the other clients are served between two long requests. */
static void wake_cb(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)revents;
    if (deliver_one(w->data)) ev_async_send(loop, w);
}

api_parser *api_parser_start(struct ev_loop *loop, api_parsed_fn done)
{
    api_parser *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->loop = loop;
    p->done = done;
    p->todo_tail = &p->todo;
    p->ready_tail = &p->ready;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    ev_async_init(&p->wake, wake_cb);
    ev_set_priority(&p->wake, EV_MINPRI); /* after the sockets' watchers of the same turn */
    p->wake.data = p;
    ev_async_start(loop, &p->wake);
    /* the main loop's signals stay the main thread's */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&p->thread, NULL, parse_body, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        ev_async_stop(loop, &p->wake);
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    return p;
}

/* Appends a job to the thread's list and wakes it. */
static void queue(api_parser *p, parse_job *j)
{
    pthread_mutex_lock(&p->mu);
    *p->todo_tail = j;
    p->todo_tail = &j->next;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int api_parser_submit(api_parser *p, void *ctx, const char *line, size_t len)
{
    if (!p || p->joined) return -1; /* stopping: the caller parses it */
    parse_job *j = calloc(1, sizeof *j);
    char *copy = j ? malloc(len) : NULL;
    if (!copy) {
        free(j);
        return -1;
    }
    memcpy(copy, line, len);
    *j = (parse_job){.ctx = ctx, .line = copy, .len = len};
    queue(p, j);
    return 0;
}

void api_parser_release(api_parser *p, json_t *tree)
{
    parse_job *j = tree && p && !p->joined ? calloc(1, sizeof *j) : NULL;
    if (!j) { /* nothing to free, the thread gone, or no memory to hand it over: here */
        json_decref(tree);
        return;
    }
    j->req = tree;
    queue(p, j);
}

void api_parser_stop(api_parser *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL); /* after the lines queued: ~0.1 s for each of 1 MiB */
    p->joined = true;
    ev_async_stop(p->loop, &p->wake);
    while (deliver_one(p)) continue; /* every line queued gets its run, hence its answer */
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
