/*
 * replay_main.c — runs a fuzz target over files named on the command line (or every file in
 * named directories) when the build has no libFuzzer (-Dfuzz=false): the corpus becomes a
 * regression test under any compiler and under ASan + UBSan.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feeds one file's bytes to the target; returns 0 or -1 when the file cannot be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) break;
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) return -1;
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, errors = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (argv[i][0] == '-') continue; /* libFuzzer flags are ignored here */
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *dir = opendir(argv[i]);
            struct dirent *e;
            while (dir && (e = readdir(dir))) {
                if (e->d_name[0] == '.') continue;
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
                errors += replay_file(path) != 0;
                files++;
            }
            if (dir) closedir(dir);
        } else {
            errors += replay_file(argv[i]) != 0;
            files++;
        }
    }
    printf("replayed %d inputs, %d unreadable\n", files, errors);
    return errors || files == 0;
}
