/*
 * gen_drv_corpus.c — writes seed transcripts for a driver fuzz target (linked with it):
 * for each configuration variant, the driver's life with every reply from the target's device
 * model valid, recorded as the raw bytes that arrived (RAW operations: real transcripts the
 * fuzzer mutates byte by byte), plus the same life as a script of REPLY operations.
 *
 *   gen_drv_corpus OUTDIR HEADER... (each HEADER 10 hex digits: the 5 configuration bytes)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/drivers/drv_life.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLIES 160 /* REPLY operations: enough for probe, enable, cycles, disable */

static uint8_t transcript[1 << 16];
static size_t transcript_len;

/* Appends arrived bytes as RAW operations of at most 255 bytes. */
static void record(const uint8_t *b, size_t n)
{
    while (n > 0) {
        size_t k = n > 255 ? 255 : n;
        if (transcript_len + 2 + k > sizeof transcript) return;
        transcript[transcript_len++] = 1; /* RAW */
        transcript[transcript_len++] = (uint8_t)k;
        memcpy(transcript + transcript_len, b, k);
        transcript_len += k;
        b += k;
        n -= k;
    }
}

/* Writes n bytes to DIR/NAME; returns 0 or -1. */
static int save(const char *dir, const char *name, const uint8_t *b, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n) {
        fprintf(stderr, "gen_drv_corpus: cannot write %s\n", path);
        if (f) fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gen_drv_corpus OUTDIR HEADER...\n");
        return 2;
    }
    for (int a = 2; a < argc; a++) {
        uint8_t script[DRV_LIFE_HEADER + 2 * REPLIES];
        unsigned h[DRV_LIFE_HEADER];
        if (strlen(argv[a]) != 2 * DRV_LIFE_HEADER ||
            sscanf(argv[a], "%2x%2x%2x%2x%2x", &h[0], &h[1], &h[2], &h[3], &h[4]) != 5) {
            fprintf(stderr, "gen_drv_corpus: bad header '%s'\n", argv[a]);
            return 2;
        }
        for (int i = 0; i < DRV_LIFE_HEADER; i++) script[i] = (uint8_t)h[i];
        for (int i = 0; i < REPLIES; i++) {
            script[DRV_LIFE_HEADER + 2 * i] = 2;     /* REPLY */
            script[DRV_LIFE_HEADER + 2 * i + 1] = 0; /* unmutated */
        }
        memcpy(transcript, script, DRV_LIFE_HEADER);
        transcript_len = DRV_LIFE_HEADER;
        fake_port_recorder = record;
        LLVMFuzzerTestOneInput(script, sizeof script);
        fake_port_recorder = NULL;
        char name[64];
        snprintf(name, sizeof name, "transcript-%s", argv[a]);
        if (save(argv[1], name, transcript, transcript_len) < 0) return 1;
        snprintf(name, sizeof name, "replies-%s", argv[a]);
        if (save(argv[1], name, script, sizeof script) < 0) return 1;
        LLVMFuzzerTestOneInput(transcript, transcript_len); /* the transcript replays */
    }
    return 0;
}
