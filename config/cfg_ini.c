/*
 * cfg_ini.c — reads the main file and its drop-ins into sections and entries.
 *
 * inih splits "key = value" and strips inline comments; our reader feeds it one line at a time
 * so we know each line's number, and it handles what inih would get wrong silently: over-long
 * lines (Debian's inih splits them at 200 bytes), indented lines (inih would treat them as
 * continuations of the previous value), section headers (we normalise and check them here, so
 * inih only sees key lines) and malformed lines (each one reported, not just the first).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "config/cfg_internal.h"

static const char *const known_sections[] = {"arm",    "driver",     "socket",    "realtime",
                                             "safety", "trajectory", "impedance", NULL};

/* Registers a file name for messages; returns its index (or -1 out of memory). */
int cfg_ctx_add_file(cfg_ctx *c, const char *name)
{
    char **f = realloc(c->files, (size_t)(c->n_files + 1) * sizeof(*f));
    if (!f) return c->oom = true, -1;
    c->files = f;
    f[c->n_files] = strdup(name);
    if (!f[c->n_files]) return c->oom = true, -1;
    return c->n_files++;
}

/* The first record of a section by normalised name (any file), or NULL. */
const cfg_section *cfg_section_find(const cfg_ctx *c, const char *name)
{
    for (int i = 0; i < c->n_s; i++)
        if (strcmp(c->s[i].name, name) == 0) return &c->s[i];
    return NULL;
}

/* The entry section/key (any file), or NULL. */
cfg_entry *cfg_entry_find(cfg_ctx *c, const char *section, const char *key)
{
    for (int i = 0; i < c->n_e; i++)
        if (strcmp(c->e[i].section, section) == 0 && strcmp(c->e[i].key, key) == 0) return &c->e[i];
    return NULL;
}

/* Is s a valid arm or joint name: 1..63 of [A-Za-z0-9_.-]? */
bool cfg_valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= CFG_NAME_MAX) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.') return false;
    return true;
}

/* Records a section header; returns the stored normalised name (or NULL out of memory). */
static const char *section_add(cfg_ctx *c, const char *name, bool known)
{
    if (c->n_s == c->cap_s) {
        int cap = c->cap_s ? 2 * c->cap_s : 16;
        cfg_section *s = realloc(c->s, (size_t)cap * sizeof(*s));
        if (!s) return c->oom = true, NULL;
        c->s = s;
        c->cap_s = cap;
    }
    char *dup = strdup(name);
    if (!dup) return c->oom = true, NULL;
    c->s[c->n_s++] = (cfg_section){dup, c->cur_file, c->lineno, known};
    return dup;
}

/* Handles a "[...]" line (leading whitespace removed): checks it, records the section and sets
 * the current section (NULL when rejected, so its keys are skipped without more noise). */
static void section_header(cfg_ctx *c, const char *line, size_t len)
{
    const char *close = memchr(line, ']', len);
    c->cur_section = NULL;
    if (!close) {
        cfg_msg_add(c, c->cur_file, c->lineno, true, "expected ']' to close the section header");
        return;
    }
    char inner[CFG_LINE_MAX + 1];
    const char *a = line + 1, *b = close;
    while (a < b && isspace((unsigned char)*a)) a++;
    while (b > a && isspace((unsigned char)b[-1])) b--;
    snprintf(inner, sizeof(inner), "%.*s", (int)(b - a), a);
    const char *rest = close + 1, *end = line + len;
    while (rest < end && isspace((unsigned char)*rest)) rest++;
    if (rest < end && *rest != ';' && *rest != '#') {
        cfg_err(c, c->cur_file, c->lineno, inner, NULL, "unexpected text after ']'");
        return;
    }
    char norm[CFG_LINE_MAX + 8];
    /* named sections: [joint NAME], [tool NAME] */
    static const char *const kinds[] = {"joint", "tool", NULL};
    const char *kind = NULL;
    for (int i = 0; kinds[i] && !kind; i++) {
        size_t n = strlen(kinds[i]);
        if (strncmp(inner, kinds[i], n) == 0 && (!inner[n] || isspace((unsigned char)inner[n])))
            kind = kinds[i];
    }
    bool is_joint = kind == kinds[0];
    if (kind) {
        const char *name = inner + strlen(kind);
        while (isspace((unsigned char)*name)) name++;
        if (!*name) {
            cfg_err(c, c->cur_file, c->lineno, inner, NULL, "a %s section needs a name: [%s NAME]",
                    kind, kind);
            return;
        }
        if (!cfg_valid_name(name)) {
            cfg_err(c, c->cur_file, c->lineno, inner, NULL,
                    "%s name '%s' must be 1 to %d letters, digits, '_', '-' or '.'", kind, name,
                    CFG_NAME_MAX - 1);
            return;
        }
        snprintf(norm, sizeof(norm), "%s %s", kind, name);
    } else {
        bool known = false;
        for (int i = 0; known_sections[i]; i++) known |= strcmp(inner, known_sections[i]) == 0;
        if (!known) {
            /* near misses: a known name, or "joint NAME" / "tool NAME" with a misspelt kind */
            char first[CFG_LINE_MAX + 1];
            snprintf(first, sizeof(first), "%s", inner);
            char *sp = first;
            while (*sp && !isspace((unsigned char)*sp)) sp++;
            const char *tail = sp;
            while (*tail && isspace((unsigned char)*tail)) tail++;
            tail = inner + (tail - first);
            *sp = 0;
            const char *s = cfg_suggest(inner, known_sections);
            const char *k = *tail ? cfg_suggest(first, kinds) : NULL;
            if (s)
                cfg_err(c, c->cur_file, c->lineno, inner, NULL,
                        "unknown section; did you mean [%s]?", s);
            else if (k)
                cfg_err(c, c->cur_file, c->lineno, inner, NULL,
                        "unknown section; did you mean [%s %s]?", k, tail);
            else
                cfg_err(c, c->cur_file, c->lineno, inner, NULL,
                        "unknown section (known: arm, driver, socket, realtime, safety, "
                        "trajectory, impedance, joint NAME, tool NAME)");
            return;
        }
        snprintf(norm, sizeof(norm), "%s", inner);
    }
    /* repeated in this file? a joint named in a drop-in must exist in the main file */
    for (int i = 0; i < c->n_s; i++) {
        if (strcmp(c->s[i].name, norm) != 0 || c->s[i].file != c->cur_file) continue;
        if (is_joint)
            cfg_err(c, c->cur_file, c->lineno, norm, NULL,
                    "duplicate joint name '%s' (first at line %d)", norm + 6, c->s[i].line);
        else
            cfg_err(c, c->cur_file, c->lineno, norm, NULL, "duplicate section (first at line %d)",
                    c->s[i].line);
        return;
    }
    if (is_joint && c->cur_file > 0) {
        const cfg_section *m = cfg_section_find(c, norm);
        if (!m || m->file != 0) {
            cfg_err(c, c->cur_file, c->lineno, norm, NULL,
                    "no joint '%s' in %s; a drop-in can only change joints defined there", norm + 6,
                    c->files[0]);
            return;
        }
    }
    c->cur_section = section_add(c, norm, true);
}

/* Checks a key line: it needs '=' (or ':') before any inline comment and a key before it. */
static bool key_line_ok(cfg_ctx *c, const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (line[i] == ';' && i > 0 && isspace((unsigned char)line[i - 1])) break;
        if (line[i] == '=' || line[i] == ':') {
            if (i == 0) {
                cfg_msg_add(c, c->cur_file, c->lineno, true, "missing key name before '%c'",
                            line[i]);
                return false;
            }
            return true;
        }
    }
    cfg_msg_add(c, c->cur_file, c->lineno, true,
                "expected 'key = value' or '[section]', got '%.*s%s'", len > 40 ? 40 : (int)len,
                line, len > 40 ? "..." : "");
    return false;
}

/* fgets-style reader for inih: the next line, checked; problem lines are passed as empty. */
static char *reader(char *str, int num, void *stream)
{
    cfg_ctx *c = stream;
    if (c->pos >= c->len || num < 3) return NULL;
    const char *line = c->src + c->pos;
    const char *nl = memchr(line, '\n', c->len - c->pos);
    size_t len = nl ? (size_t)(nl - line) : c->len - c->pos;
    c->pos += len + (nl ? 1 : 0);
    c->lineno++;
    if (len && line[len - 1] == '\r') len--;
    size_t raw_len = len;
    if (c->lineno == 1 && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) line += 3, len -= 3;
    while (len && isspace((unsigned char)*line)) line++, len--;
    while (len && isspace((unsigned char)line[len - 1])) len--;
    str[0] = '\n';
    str[1] = 0;
    if (raw_len > CFG_LINE_MAX || len + 2 > (size_t)num) {
        cfg_msg_add(c, c->cur_file, c->lineno, true, "line too long (%zu characters, at most %d)",
                    raw_len, CFG_LINE_MAX);
        return str;
    }
    if (memchr(line, 0, len)) {
        cfg_msg_add(c, c->cur_file, c->lineno, true, "line contains a NUL byte");
        return str;
    }
    if (len == 0 || *line == ';' || *line == '#') return str;
    if (*line == '[') {
        c->seen_header = true;
        section_header(c, line, len);
        return str;
    }
    if (!key_line_ok(c, line, len)) return str;
    memcpy(str, line, len);
    str[len] = '\n';
    str[len + 1] = 0;
    return str;
}

/* inih callback: stores one key = value of the current section. */
static int handler(void *user, const char *section, const char *name, const char *value)
{
    cfg_ctx *c = user;
    (void)section; /* sections are tracked by the reader */
    if (!c->cur_section) {
        /* before any header; keys under a rejected header are skipped (reported already) */
        if (!c->seen_header)
            cfg_msg_add(c, c->cur_file, c->lineno, true,
                        "%s: key outside of any section; put it under [arm], [driver], ...", name);
        return 1;
    }
    cfg_entry *e = cfg_entry_find(c, c->cur_section, name);
    if (e && e->file == c->cur_file) {
        cfg_err(c, c->cur_file, c->lineno, c->cur_section, name, "duplicate key (first at line %d)",
                e->line);
        return 1;
    }
    char *v = strdup(value);
    if (!v) return c->oom = true, 1;
    if (e) { /* a drop-in overrides an earlier file */
        free(e->value);
        e->value = v;
        e->file = c->cur_file;
        e->line = c->lineno;
        return 1;
    }
    if (c->n_e == c->cap_e) {
        int cap = c->cap_e ? 2 * c->cap_e : 64;
        cfg_entry *ne = realloc(c->e, (size_t)cap * sizeof(*ne));
        if (!ne) return free(v), c->oom = true, 1;
        c->e = ne;
        c->cap_e = cap;
    }
    char *s = strdup(c->cur_section), *k = strdup(name);
    if (!s || !k) return free(s), free(k), free(v), c->oom = true, 1;
    c->e[c->n_e++] = (cfg_entry){s, k, v, c->cur_file, c->lineno, false};
    return 1;
}

/* Parses one file's text (len bytes, may hold NULs) into sections and entries. */
void cfg_parse_text(cfg_ctx *c, int file, const char *text, size_t len)
{
    c->src = text;
    c->pos = 0;
    c->len = len;
    c->cur_file = file;
    c->lineno = 0;
    c->cur_section = NULL;
    c->seen_header = false;
    ini_parse_stream(reader, c, handler, c); /* syntax errors were reported by the reader */
}

/* Reads and parses one file; -1 (reported) if it cannot be read. */
int cfg_parse_path(cfg_ctx *c, const char *path)
{
    int file = cfg_ctx_add_file(c, path);
    if (file < 0) return -1;
    FILE *f = fopen(path, "rb");
    if (!f) {
        cfg_msg_add(c, file, 0, true, "cannot open: %s", strerror(errno));
        return -1;
    }
    char *buf = malloc(CFG_FILE_MAX + 1);
    if (!buf) {
        fclose(f);
        c->oom = true;
        return -1;
    }
    size_t n = fread(buf, 1, CFG_FILE_MAX + 1, f);
    int err = ferror(f);
    fclose(f);
    if (err) {
        cfg_msg_add(c, file, 0, true, "cannot read: %s", strerror(EIO));
    } else if (n > CFG_FILE_MAX) {
        cfg_msg_add(c, file, 0, true, "file too large (more than %d bytes)", CFG_FILE_MAX);
    } else {
        cfg_parse_text(c, file, buf, n);
        free(buf);
        return 0;
    }
    free(buf);
    return -1;
}

int cfg_sibling_path(const char *path, const char *suffix, char *out, size_t len)
{
    size_t n = strlen(path);
    if (n > 4 && strcmp(path + n - 4, ".ini") == 0) n -= 4;
    if (n + strlen(suffix) >= len || n > (size_t)INT32_MAX) {
        if (len) out[0] = 0;
        return -1;
    }
    snprintf(out, len, "%.*s%s", (int)n, path, suffix);
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Parses MAIN.d/ *.ini (MAIN without ".ini") in lexical (byte) order, if the folder exists. */
void cfg_parse_dropins(cfg_ctx *c, const char *main_path)
{
    char dir[CFG_PATH_MAX + 8];
    if (cfg_sibling_path(main_path, ".d", dir, sizeof dir) != 0) return;
    DIR *d = opendir(dir);
    if (!d) return;
    char **names = NULL;
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d)) && count < 256) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] == '.' || l < 5 || strcmp(de->d_name + l - 4, ".ini") != 0) continue;
        char **nn = realloc(names, (size_t)(count + 1) * sizeof(*nn));
        if (!nn) break;
        names = nn;
        if (asprintf(&names[count], "%s/%s", dir, de->d_name) < 0) break;
        count++;
    }
    closedir(d);
    if (count) qsort(names, (size_t)count, sizeof(*names), name_cmp);
    for (int i = 0; i < count; i++) {
        cfg_parse_path(c, names[i]);
        free(names[i]);
    }
    free(names);
}
