/* cfg_value.c — typed reading of entries: numbers, lists, enums, with exact messages. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfg_internal.h"

/* Parses a whole token as a finite number: a decimal ("0.4318", "-1e-3") or a multiple of pi
 * ("pi", "-pi/2", "0.5*pi", "3*pi/4"). */
bool cfg_parse_number(const char *tok, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(tok, &end);
    if (end != tok && *end == 0 && errno == 0 && isfinite(v)) {
        *out = v;
        return true;
    }
    const char *p = tok;
    double sign = 1, k = 1, div = 1;
    if (*p == '-' || *p == '+') sign = *p++ == '-' ? -1 : 1;
    if (strncmp(p, "pi", 2) != 0) {
        k = strtod(p, &end);
        if (end == p || *end != '*' || !isfinite(k) || isalpha((unsigned char)*p)) return false;
        p = end + 1;
        if (strncmp(p, "pi", 2) != 0) return false;
    }
    p += 2;
    if (*p == '/') {
        div = strtod(p + 1, &end);
        if (end == p + 1 || *end != 0 || div == 0 || !isfinite(div) || isalpha((unsigned char)p[1]))
            return false;
        p = end;
    }
    if (*p) return false;
    v = sign * k * M_PI / div;
    if (!isfinite(v)) return false;
    *out = v;
    return true;
}

/* Splits value at whitespace and commas into at most max tokens of < 64 characters; returns
 * the count, or -1 if there are more (or a token is too long). */
int cfg_tokens(const char *value, char tok[][64], int max)
{
    int n = 0;
    const char *p = value;
    for (;;) {
        while (*p && (isspace((unsigned char)*p) || *p == ',')) p++;
        if (!*p) return n;
        const char *s = p;
        while (*p && !isspace((unsigned char)*p) && *p != ',') p++;
        if (n == max || p - s >= 64) return -1;
        memcpy(tok[n], s, (size_t)(p - s));
        tok[n][p - s] = 0;
        n++;
    }
}

/* Reports a required key that is absent, at its section's header line. */
void cfg_missing(cfg_ctx *c, const char *section, const char *key)
{
    const cfg_section *s = cfg_section_find(c, section);
    cfg_err(c, s ? s->file : 0, s ? s->line : 0, section, key, "missing required key");
}

/* Finds and marks the entry; reports "missing" for required absent keys and an empty value. */
static cfg_entry *take(cfg_ctx *c, const char *sec, const char *key, bool required)
{
    cfg_entry *e = cfg_entry_find(c, sec, key);
    if (!e) {
        if (required) cfg_missing(c, sec, key);
        return NULL;
    }
    e->used = true;
    if (!e->value[0]) {
        cfg_err(c, e->file, e->line, sec, key, "missing value");
        return NULL;
    }
    return e;
}

static bool in_range(double v, cfg_range r)
{
    return (r.lo_open ? v > r.lo : v >= r.lo) && (r.hi_open ? v < r.hi : v <= r.hi);
}

/* Formats a bound without trailing zeros. */
static void fmt_num(char *buf, size_t n, double v)
{
    snprintf(buf, n, "%.6g", v);
}

/* "TOK is out of range: must be LO to HI UNIT" (or "> LO", "<= HI" ...). */
void cfg_range_error(cfg_ctx *c, const cfg_entry *e, const char *tok, cfg_range r, const char *unit)
{
    char lo[32], hi[32], rng[96];
    fmt_num(lo, sizeof(lo), r.lo);
    fmt_num(hi, sizeof(hi), r.hi);
    const char *u = unit && *unit ? unit : "";
    const char *sp = *u ? " " : "";
    bool has_lo = r.lo > -1e299, has_hi = r.hi < 1e299;
    if (has_lo && has_hi && !r.lo_open && !r.hi_open)
        snprintf(rng, sizeof(rng), "%s to %s%s%s", lo, hi, sp, u);
    else if (has_lo && has_hi)
        snprintf(rng, sizeof(rng), "%s %s and %s %s%s%s", r.lo_open ? ">" : ">=", lo,
                 r.hi_open ? "<" : "<=", hi, sp, u);
    else if (has_lo)
        snprintf(rng, sizeof(rng), "%s %s%s%s", r.lo_open ? ">" : ">=", lo, sp, u);
    else
        snprintf(rng, sizeof(rng), "%s %s%s%s", r.hi_open ? "<" : "<=", hi, sp, u);
    cfg_err(c, e->file, e->line, e->section, e->key, "%s is out of range: must be %s", tok, rng);
}

/* Parses tokens[0..n) as numbers in range r into out; reports the first bad one. */
static bool numbers(cfg_ctx *c, const cfg_entry *e, char tok[][64], int n, cfg_range r,
                    const char *unit, double *out)
{
    for (int i = 0; i < n; i++) {
        double v;
        if (!cfg_parse_number(tok[i], &v)) {
            cfg_err(c, e->file, e->line, e->section, e->key, "expected a number, got '%s'", tok[i]);
            return false;
        }
        if (!in_range(v, r)) {
            cfg_range_error(c, e, tok[i], r, unit);
            return false;
        }
        out[i] = v;
    }
    return true;
}

/* One number in range r. */
bool cfg_get_num(cfg_ctx *c, const char *sec, const char *key, bool required, cfg_range r,
                 const char *unit, double *out)
{
    double v[1];
    return cfg_get_vec(c, sec, key, required, 1, r, unit, v) && (*out = v[0], true);
}

/* Exactly n numbers, each in range r. */
bool cfg_get_vec(cfg_ctx *c, const char *sec, const char *key, bool required, int n, cfg_range r,
                 const char *unit, double *out)
{
    cfg_entry *e = take(c, sec, key, required);
    if (!e) return false;
    char tok[CFG_MAX_TOKENS][64];
    int k = cfg_tokens(e->value, tok, CFG_MAX_TOKENS);
    if (k != n) {
        if (n == 1 && k != 0)
            cfg_err(c, e->file, e->line, sec, key, "expected one number, got '%s'", e->value);
        else if (k < 0)
            cfg_err(c, e->file, e->line, sec, key, "expected %d numbers, got more", n);
        else
            cfg_err(c, e->file, e->line, sec, key, "expected %d numbers, got %d", n, k);
        return false;
    }
    double tmp[CFG_MAX_TOKENS];
    if (!numbers(c, e, tok, n, r, unit, tmp)) return false;
    memcpy(out, tmp, (size_t)n * sizeof(double));
    return true;
}

/* One number, or n numbers (`what` says what they are: "one per servo"); returns the count
 * given (1 or n), 0 when absent or wrong. */
int cfg_get_list(cfg_ctx *c, const char *sec, const char *key, int n, const char *what, cfg_range r,
                 const char *unit, double *out)
{
    cfg_entry *e = take(c, sec, key, false);
    if (!e) return 0;
    char tok[CFG_MAX_TOKENS][64];
    int k = cfg_tokens(e->value, tok, CFG_MAX_TOKENS);
    if (k != 1 && k != n) {
        char got[16];
        if (k < 0)
            snprintf(got, sizeof(got), "more");
        else
            snprintf(got, sizeof(got), "%d", k);
        if (n == 1)
            cfg_err(c, e->file, e->line, sec, key, "expected one number, got %s", got);
        else
            cfg_err(c, e->file, e->line, sec, key, "expected 1 or %d values (%s), got %s", n, what,
                    got);
        return 0;
    }
    double tmp[CFG_MAX_TOKENS];
    if (!numbers(c, e, tok, k, r, unit, tmp)) return 0;
    memcpy(out, tmp, (size_t)k * sizeof(double));
    return k;
}

/* One integer in lo..hi. */
bool cfg_get_int(cfg_ctx *c, const char *sec, const char *key, bool required, long lo, long hi,
                 const char *unit, int *out)
{
    cfg_entry *e = take(c, sec, key, required);
    if (!e) return false;
    char tok[2][64];
    int k = cfg_tokens(e->value, tok, 1);
    char *end;
    errno = 0;
    long v = k == 1 ? strtol(tok[0], &end, 10) : 0;
    if (k != 1 || *end || end == tok[0] || errno) {
        cfg_err(c, e->file, e->line, sec, key, "expected an integer, got '%s'", e->value);
        return false;
    }
    if (v < lo || v > hi) {
        cfg_range_error(c, e, tok[0], (cfg_range){(double)lo, (double)hi, false, false}, unit);
        return false;
    }
    *out = (int)v;
    return true;
}

/* true/false, yes/no, on/off, 1/0. */
bool cfg_get_bool(cfg_ctx *c, const char *sec, const char *key, bool *out)
{
    static const char *const t[] = {"true", "yes", "on", "1"}, *const f[] = {"false", "no", "off",
                                                                             "0"};
    cfg_entry *e = take(c, sec, key, false);
    if (!e) return false;
    for (int i = 0; i < 4; i++) {
        if (strcmp(e->value, t[i]) == 0) return *out = true, true;
        if (strcmp(e->value, f[i]) == 0) return *out = false, true;
    }
    cfg_err(c, e->file, e->line, sec, key, "expected true or false, got '%s'", e->value);
    return false;
}

/* A string that fits in size bytes. */
bool cfg_get_str(cfg_ctx *c, const char *sec, const char *key, bool required, char *out,
                 size_t size)
{
    cfg_entry *e = take(c, sec, key, required);
    if (!e) return false;
    if (strlen(e->value) >= size) {
        cfg_err(c, e->file, e->line, sec, key, "too long (at most %zu characters)", size - 1);
        return false;
    }
    snprintf(out, size, "%s", e->value);
    return true;
}

/* One of names[] (NULL-terminated); *out = its index. */
bool cfg_get_enum(cfg_ctx *c, const char *sec, const char *key, bool required,
                  const char *const *names, int *out)
{
    cfg_entry *e = take(c, sec, key, required);
    if (!e) return false;
    for (int i = 0; names[i]; i++)
        if (strcmp(e->value, names[i]) == 0) return *out = i, true;
    char list[256] = "";
    for (int i = 0; names[i]; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof(list) - l, "%s%s", i ? (names[i + 1] ? ", " : " or ") : "",
                 names[i]);
    }
    const char *s = cfg_suggest(e->value, names);
    if (s)
        cfg_err(c, e->file, e->line, sec, key, "expected %s, got '%s'; did you mean '%s'?", list,
                e->value, s);
    else
        cfg_err(c, e->file, e->line, sec, key, "expected %s, got '%s'", list, e->value);
    return false;
}
