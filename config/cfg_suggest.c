/* cfg_suggest.c — "did you mean" for unknown keys and sections. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "config/cfg_internal.h"

/* Levenshtein distance between a and b (insert, delete, substitute cost 1), case-insensitive;
 * words longer than 63 characters count as far from everything. */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 1000;
    int row[64];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int sub = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int best = sub;
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The known name closest to word: edit distance at most 2 (and less than the name's length),
 * or else a known name that is word's first '_'-separated part ("kd_gain" -> "kd"). */
const char *cfg_suggest(const char *word, const char *const *known)
{
    const char *best = NULL;
    int best_d = 3;
    for (int i = 0; known[i]; i++) {
        int d = edit_distance(word, known[i]);
        if (d < best_d && d < (int)strlen(known[i])) best = known[i], best_d = d;
    }
    if (best) return best;
    for (int i = 0; known[i]; i++) {
        size_t n = strlen(known[i]);
        if (strncasecmp(word, known[i], n) == 0 && word[n] == '_') return known[i];
    }
    return NULL;
}
