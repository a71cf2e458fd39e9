/*
 * pty.h — the simulated serial line: a pseudo-terminal in raw mode whose slave is reachable
 * through a symlink, as a USB-serial adapter would be through /dev/serial/by-id/...
 */
#ifndef ARMSIM_PTY_H
#define ARMSIM_PTY_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int master;          /* armsim reads requests from and writes replies to this */
    int slave_keep;      /* slave kept open so the master never sees a hang-up between clients */
    char slave_name[64]; /* /dev/pts/N */
    char link[4096];     /* the symlink made, "" if none */
} armsim_pty;

/* Opens the pty, puts the slave in raw mode and makes link_path a symlink to it (replacing a
 * symlink already there, refusing to replace any other file). 0, or -1 with err filled. */
int pty_open(armsim_pty *p, const char *link_path, char *err, size_t errlen);
/* Writes all n bytes to the master (waits while the line is full). 0, or -1 on error. */
int pty_write_all(armsim_pty *p, const uint8_t *buf, size_t n);
/* Removes the symlink (if it still points at our slave) and closes everything. */
void pty_close(armsim_pty *p);

#endif
