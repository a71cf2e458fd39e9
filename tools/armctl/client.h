/*
 * client.h — armctl's connection to armd: newline-delimited JSON over the UNIX socket.
 */
#ifndef ARMCTL_CLIENT_H
#define ARMCTL_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct armctl_conn armctl_conn;

/* A connection to the socket at path, opened by the first conn_call (so that a command's usage
 * errors come before any connection); a failure to connect fails that call and every later one
 * with the reason. */
armctl_conn *conn_new(const char *path);
void conn_close(armctl_conn *c);
/* Why connecting failed, or NULL (connected, or not tried yet). */
const char *conn_error(const armctl_conn *c);
/* The message for a socket the user may not open (EACCES): names the socket, the group to join
 * and how. */
void conn_permission_text(const char *path, const char *group, char *out, size_t out_len);

/* Sends {"id", "method", "params"} (params may be NULL; reference stolen) and waits for the
 * reply with that id; notifications arriving meanwhile are kept for conn_next(). Returns the
 * result (new reference), or NULL with "code: message" of the daemon's error (or of a
 * transport failure) in err. */
json_t *conn_call(armctl_conn *c, const char *method, json_t *params, char *err, size_t err_len);
/* The next notification (new reference), waiting at most timeout_ms (-1 = forever). NULL on
 * timeout (*closed = 0) or when the connection ended (*closed = 1). */
json_t *conn_next(armctl_conn *c, int timeout_ms, int *closed);

#endif
