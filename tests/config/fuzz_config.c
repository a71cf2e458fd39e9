/* fuzz_config.c — arbitrary bytes into cfg_load_string: no crash, no leak, no hang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Loads the input as an INI text (cut at the first NUL, as a C string would be), checks the
 * report's counts agree with its lines, and frees everything. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    static armd_config cfg;
    cfg_report rep;
    cfg_report_init(&rep);
    int errors = cfg_load_string(text, "fuzz.ini", &cfg, &rep);
    if (errors != rep.n_errors || rep.n_lines < rep.n_errors) abort();
    char changed[512], restart[512];
    cfg_compare(&cfg, &cfg, changed, sizeof(changed), restart, sizeof(restart));
    if (changed[0] || restart[0]) abort(); /* a config never differs from itself */
    cfg_report_free(&rep);
    free(text);
    return 0;
}
