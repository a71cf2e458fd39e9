/*
 * api_json.c — the text of the socket API's JSON values: one compact line, each real in the
 * shortest form that reads back as the same double (15, 16 or 17 significant digits, as
 * JavaScript and Python print numbers). jansson's dump has a single precision for every real,
 * which either cuts a timestamp (10 digits: whole seconds of a wall clock, 10 µs of a
 * monotonic one) or prints 0.7 as 0.69999999999999996 (17 digits). Main thread; no state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/api_internal.h"

typedef struct {
    char *p;
    size_t len, cap;
    bool failed; /* out of memory */
} text_buf;

/* Appends n bytes to b (growing it), or marks it failed. */
static void put(text_buf *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (b->len + n + 2 > b->cap) { /* room for the '\n' and the terminating 0 */
        size_t cap = b->cap ? b->cap : 512;
        while (cap < b->len + n + 2) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* Appends a JSON string literal of s[0 .. n): quote, backslash and control characters escaped
 * as jansson does (UTF-8 passes through). */
static void put_string(text_buf *b, const char *s, size_t n)
{
    put(b, "\"", 1);
    size_t run = 0; /* bytes s[i - run .. i) need no escape */
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\') {
            run++;
            continue;
        }
        put(b, s + i - run, run);
        run = 0;
        char esc[8];
        const char *short_form = ch == '"'    ? "\\\""
                                 : ch == '\\' ? "\\\\"
                                 : ch == '\n' ? "\\n"
                                 : ch == '\t' ? "\\t"
                                 : ch == '\r' ? "\\r"
                                 : ch == '\b' ? "\\b"
                                 : ch == '\f' ? "\\f"
                                              : NULL;
        if (!short_form) snprintf(esc, sizeof esc, "\\u%04x", ch);
        put(b, short_form ? short_form : esc, strlen(short_form ? short_form : esc));
    }
    put(b, s + n - run, run);
    put(b, "\"", 1);
}

/* Appends the real x (finite: jansson holds no other) in the fewest significant digits, from
 * 15 up, that read back as x; ".0" is added to a whole number so that it stays a real. */
static void put_real(text_buf *b, double x)
{
    char s[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(s, sizeof s, "%.*g", digits, x);
        if (strtod(s, NULL) == x) break;
    }
    if (!strpbrk(s, ".eE")) strcat(s, ".0");
    put(b, s, strlen(s));
}

/* Appends the text of v. */
static void put_value(text_buf *b, const json_t *v)
{
    char s[32];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *member;
        bool first = true;
        put(b, "{", 1);
        json_object_foreach((json_t *)v, key, member)
        {
            if (!first) put(b, ",", 1);
            first = false;
            put_string(b, key, strlen(key));
            put(b, ":", 1);
            put_value(b, member);
        }
        put(b, "}", 1);
        break;
    }
    case JSON_ARRAY:
        put(b, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i) put(b, ",", 1);
            put_value(b, json_array_get(v, i));
        }
        put(b, "]", 1);
        break;
    case JSON_STRING:
        put_string(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        snprintf(s, sizeof s, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        put(b, s, strlen(s));
        break;
    case JSON_REAL:
        put_real(b, json_real_value(v));
        break;
    case JSON_TRUE:
        put(b, "true", 4);
        break;
    case JSON_FALSE:
        put(b, "false", 5);
        break;
    case JSON_NULL:
        put(b, "null", 4);
        break;
    }
}

char *api_json_line(const json_t *v, size_t *len)
{
    text_buf b = {NULL, 0, 0, false};
    put_value(&b, v);
    put(&b, "\n", 1);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    b.p[b.len] = 0;
    *len = b.len;
    return b.p;
}
