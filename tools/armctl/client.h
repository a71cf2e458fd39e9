/*
 * client.h — armctl's connection to armd: newline-delimited JSON over the UNIX socket.
 */
#ifndef ARMCTL_CLIENT_H
#define ARMCTL_CLIENT_H

#include <jansson.h>
#include <stddef.h>

typedef struct armctl_conn armctl_conn;

/* Connects to path; NULL with a message in err on failure. */
armctl_conn *conn_open(const char *path, char *err, size_t err_len);
void conn_close(armctl_conn *c);

/* Sends {"id", "method", "params"} (params may be NULL; reference stolen) and waits for the
 * reply with that id; notifications arriving meanwhile are kept for conn_next(). Returns the
 * result (new reference), or NULL with "code: message" of the daemon's error (or of a
 * transport failure) in err. */
json_t *conn_call(armctl_conn *c, const char *method, json_t *params, char *err, size_t err_len);
/* The next notification (new reference), waiting at most timeout_ms (-1 = forever). NULL on
 * timeout (*closed = 0) or when the connection ended (*closed = 1). */
json_t *conn_next(armctl_conn *c, int timeout_ms, int *closed);

#endif
