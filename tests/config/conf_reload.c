/* conf_reload.c — for each "key = value" line of an INI file, whether cfg_compare (the code a
 * reload runs) applies a change of that key live or needs a restart: the line's value is changed
 * (numbers scaled, stepped or negated, words swapped for another allowed one, an x added to a
 * name or path) until the file still
 * loads without errors, and the key is looked up in cfg_compare's two lists. Prints
 * "SECTION<TAB>KEY<TAB>live|restart|unchecked" per key line, for test_conf_page.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

#define MAX_TEXT (1 << 20)
#define MAX_LINE 512

/* Words an enum or bool key may take; a changed word is tried from this list. */
static const char *const words[] = {"computed_torque",
                                    "pd_gravity",
                                    "gravity_comp",
                                    "device",
                                    "differentiate",
                                    "desired",
                                    "measured",
                                    "torque_off",
                                    "damp",
                                    "off",
                                    "detect",
                                    "react",
                                    "stop",
                                    "retract",
                                    "float",
                                    "none",
                                    "zv",
                                    "zvd",
                                    "ei",
                                    "standard",
                                    "modified",
                                    "revolute",
                                    "prismatic",
                                    "true",
                                    "false",
                                    "dxl2",
                                    "armlink",
                                    NULL};

/* value with every number token changed by variant v (0..7); 0 when it has no number or v is
 * past the last variant. Tokens that are not plain numbers ("pi/2") stay. */
static int change_numbers(const char *value, int v, char *out, size_t len)
{
    char buf[MAX_LINE], *save = NULL;
    snprintf(buf, sizeof buf, "%s", value);
    out[0] = 0;
    int changed = 0;
    for (char *t = strtok_r(buf, " ,\t", &save); t; t = strtok_r(NULL, " ,\t", &save)) {
        char *end;
        double x = strtod(t, &end), y = x;
        bool num = *end == 0 && end != t;
        if (num) {
            switch (v) {
            case 0:
                y = x != 0 ? x * 1.01 : 0.001;
                break;
            case 1:
                y = x != 0 ? x * 0.99 : 0.01;
                break;
            case 2:
                y = x + 1;
                break;
            case 3:
                y = x - 1;
                break;
            case 4:
                y = x + 20;
                break;
            case 5:
                y = x * 2;
                break;
            case 6:
                y = x / 2;
                break;
            case 7:
                y = -x;
                break;
            default:
                return 0;
            }
            changed = 1;
        }
        size_t n = strlen(out);
        if (num)
            snprintf(out + n, len - n, "%s%.17g", n ? " " : "", y);
        else
            snprintf(out + n, len - n, "%s%s", n ? " " : "", t);
    }
    return changed;
}

/* Is "[sec] key" (or "] key" of any section, for [safety]'s per-joint keys reported per joint)
 * in the comma-separated list? */
static bool listed(const char *list, const char *sec, const char *key)
{
    char item[256];
    snprintf(item, sizeof item, "[%s] %s", sec, key);
    size_t n = strlen(item);
    for (const char *p = strstr(list, item); p; p = strstr(p + 1, item))
        if (p[n] == 0 || p[n] == ',') return true;
    snprintf(item, sizeof item, "] %s", key);
    n = strlen(item);
    if (strcmp(sec, "safety") != 0) return false;
    for (const char *p = strstr(list, item); p; p = strstr(p + 1, item))
        if (p[n] == 0 || p[n] == ',') return true;
    return false;
}

/* The text with line number target replaced by "key = value". */
static void with_line(char *const *lines, int n, int target, const char *key, const char *value,
                      char *out, size_t len)
{
    size_t used = 0;
    for (int i = 0; i < n && used < len; i++) {
        int w = i == target ? snprintf(out + used, len - used, "%s = %s\n", key, value)
                            : snprintf(out + used, len - used, "%s\n", lines[i]);
        used += w > 0 ? (size_t)w : 0;
    }
}

/* Loads argv[1], then tries a change of each key line; see the head comment. */
int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: conf_reload FILE.ini\n");
        return 2;
    }
    static char text[MAX_TEXT], variant[MAX_TEXT + 4096];
    static char *lines[8192];
    static armd_config base, cand;
    FILE *f = fopen(argv[1], "r");
    size_t got = f ? fread(text, 1, MAX_TEXT - 1, f) : 0;
    if (!f || got == 0) {
        fprintf(stderr, "conf_reload: cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(f);
    text[got] = 0;
    int n = 0;
    for (char *p = text, *nl; p && *p && n < 8192; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl) *nl = 0;
        lines[n++] = p;
    }
    with_line(lines, n, -1, "", "", variant, sizeof variant);
    cfg_report rep;
    cfg_report_init(&rep);
    if (cfg_load_string(variant, argv[1], &base, &rep) != 0) {
        cfg_report_print(&rep, stderr);
        return 1;
    }
    cfg_report_free(&rep);
    char sec[128] = "";
    for (int i = 0; i < n; i++) {
        char key[128], value[MAX_LINE], nv[MAX_LINE + 8];
        const char *l = lines[i];
        if (l[0] == '[') {
            snprintf(sec, sizeof sec, "%.*s", (int)strcspn(l + 1, "]"), l + 1);
            continue;
        }
        if (sscanf(l, " %127[a-z0-9_] = %511[^;\n]", key, value) != 2) continue;
        for (size_t k = strlen(value); k > 0 && value[k - 1] == ' '; k--) value[k - 1] = 0;
        const char *verdict = "unchecked";
        for (int v = 0; !strcmp(verdict, "unchecked"); v++) {
            if (!change_numbers(value, v, nv, sizeof nv)) {
                int w = v - 8; /* then the words */
                if (w < 0) continue;
                if (w > (int)(sizeof words / sizeof words[0]) - 1) break;
                if (!words[w]) /* last: a name or path with an x added */
                    snprintf(nv, sizeof nv, "%sx", value);
                else if (!strcmp(words[w], value))
                    continue;
                else
                    snprintf(nv, sizeof nv, "%s", words[w]);
            }
            with_line(lines, n, i, key, nv, variant, sizeof variant);
            cfg_report_init(&rep);
            int errors = cfg_load_string(variant, argv[1], &cand, &rep);
            cfg_report_free(&rep);
            if (errors) continue;
            char live[8192], restart[8192];
            cfg_compare(&base, &cand, live, sizeof live, restart, sizeof restart);
            if (listed(live, sec, key))
                verdict = "live";
            else if (listed(restart, sec, key))
                verdict = "restart";
        }
        const char *shown = !strncmp(sec, "joint ", 6)  ? "joint NAME"
                            : !strncmp(sec, "tool ", 5) ? "tool NAME"
                                                        : sec;
        printf("%s\t%s\t%s\n", shown, key, verdict);
    }
    return 0;
}
