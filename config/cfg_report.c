/* cfg_report.c — the loader's messages: collected with (file, line), sorted, then printed. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_internal.h"

/* Empties a report. */
void cfg_report_init(cfg_report *r)
{
    memset(r, 0, sizeof(*r));
}

/* Frees the report's lines and empties it. */
void cfg_report_free(cfg_report *r)
{
    for (int i = 0; i < r->n_lines; i++) free(r->lines[i]);
    free(r->lines);
    cfg_report_init(r);
}

/* Prints every line, then "FILE: N errors, M warnings". */
void cfg_report_print(const cfg_report *r, FILE *out)
{
    for (int i = 0; i < r->n_lines; i++) fprintf(out, "%s\n", r->lines[i]);
    fprintf(out, "%s: %d error%s, %d warning%s\n", r->file[0] ? r->file : "config", r->n_errors,
            r->n_errors == 1 ? "" : "s", r->n_warnings, r->n_warnings == 1 ? "" : "s");
}

/* Adds one message; text is already formatted without the "file:line: " prefix. */
static void msg_push(cfg_ctx *c, int file, int line, bool is_error, char *text)
{
    if (!text) {
        c->oom = true;
        return;
    }
    if (c->n_m == c->cap_m) {
        int cap = c->cap_m ? 2 * c->cap_m : 16;
        cfg_msg *m = realloc(c->m, (size_t)cap * sizeof(*m));
        if (!m) {
            free(text);
            c->oom = true;
            return;
        }
        c->m = m;
        c->cap_m = cap;
    }
    c->m[c->n_m] = (cfg_msg){file, line, c->n_m, is_error, text};
    c->n_m++;
    if (is_error)
        c->n_errors++;
    else
        c->n_warnings++;
}

/* Adds a free-form message at file:line. */
void cfg_msg_add(cfg_ctx *c, int file, int line, bool is_error, const char *fmt, ...)
{
    va_list ap;
    char *text = NULL;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0) text = NULL;
    va_end(ap);
    msg_push(c, file, line, is_error, text);
}

/* Formats "[section] key: " + (warning: ) + message. */
static void vkeymsg(cfg_ctx *c, int file, int line, const char *section, const char *key,
                    bool is_error, const char *fmt, va_list ap)
{
    char *body = NULL, *text = NULL;
    if (vasprintf(&body, fmt, ap) < 0) {
        c->oom = true;
        return;
    }
    const char *warn = is_error ? "" : "warning: ";
    int rc;
    if (section && key)
        rc = asprintf(&text, "[%s] %s: %s%s", section, key, warn, body);
    else if (section)
        rc = asprintf(&text, "[%s]: %s%s", section, warn, body);
    else
        rc = asprintf(&text, "%s%s", warn, body);
    free(body);
    msg_push(c, file, line, is_error, rc < 0 ? NULL : text);
}

/* Reports an error about a key (or a section when key is NULL). */
void cfg_err(cfg_ctx *c, int file, int line, const char *section, const char *key, const char *fmt,
             ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkeymsg(c, file, line, section, key, true, fmt, ap);
    va_end(ap);
}

/* Reports a warning about a key (or a section when key is NULL). */
void cfg_warn(cfg_ctx *c, int file, int line, const char *section, const char *key, const char *fmt,
              ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkeymsg(c, file, line, section, key, false, fmt, ap);
    va_end(ap);
}

/* Orders messages by file, then line, then the order they were found. */
static int msg_cmp(const void *pa, const void *pb)
{
    const cfg_msg *a = pa, *b = pb;
    if (a->file != b->file) return a->file < b->file ? -1 : 1;
    if (a->line != b->line) return a->line < b->line ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Moves the sorted messages into rep as "file:line: text" lines. */
void cfg_msgs_to_report(cfg_ctx *c, cfg_report *rep)
{
    if (c->oom) cfg_msg_add(c, 0, 0, true, "out of memory while loading");
    if (c->n_m) qsort(c->m, (size_t)c->n_m, sizeof(*c->m), msg_cmp);
    if (rep) {
        if (c->n_files > 0) snprintf(rep->file, sizeof(rep->file), "%s", c->files[0]);
        char **lines = realloc(rep->lines, (size_t)(rep->n_lines + c->n_m + 1) * sizeof(char *));
        if (lines) {
            rep->lines = lines;
            rep->cap = rep->n_lines + c->n_m + 1;
        }
        for (int i = 0; lines && i < c->n_m; i++) {
            char *line = NULL;
            const char *f = c->m[i].file < c->n_files ? c->files[c->m[i].file] : "config";
            int rc = c->m[i].line > 0 ? asprintf(&line, "%s:%d: %s", f, c->m[i].line, c->m[i].text)
                                      : asprintf(&line, "%s: %s", f, c->m[i].text);
            if (rc >= 0) rep->lines[rep->n_lines++] = line;
        }
        rep->n_errors += c->n_errors;
        rep->n_warnings += c->n_warnings;
    }
    for (int i = 0; i < c->n_m; i++) free(c->m[i].text);
    c->n_m = 0;
}

/* Frees everything the loader allocated. */
void cfg_ctx_free(cfg_ctx *c)
{
    for (int i = 0; i < c->n_files; i++) free(c->files[i]);
    free(c->files);
    for (int i = 0; i < c->n_e; i++) {
        free(c->e[i].section);
        free(c->e[i].key);
        free(c->e[i].value);
    }
    free(c->e);
    for (int i = 0; i < c->n_s; i++) free(c->s[i].name);
    free(c->s);
    for (int i = 0; i < c->n_m; i++) free(c->m[i].text);
    free(c->m);
    memset(c, 0, sizeof(*c));
}
