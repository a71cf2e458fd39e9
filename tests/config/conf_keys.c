/* conf_keys.c — prints every INI key the loader accepts, one "SECTION<TAB>KEY" line each, from
 * the loader's own tables (cfg_section_names, cfg_known_keys in config.h), for
 * test_conf_page.py to compare with armd.conf(5). */
#include <stdio.h>

#include "config/config.h"

/* Every (section, key) of the loader's schema on stdout; 1 when a section has no key table. */
int main(void)
{
    for (int s = 0; cfg_section_names[s]; s++) {
        const char *const *keys = cfg_known_keys(cfg_section_names[s]);
        if (!keys) {
            fprintf(stderr, "conf_keys: section [%s] has no key table in config/cfg_arm.c\n",
                    cfg_section_names[s]);
            return 1;
        }
        for (int k = 0; keys[k]; k++) printf("%s\t%s\n", cfg_section_names[s], keys[k]);
    }
    return 0;
}
