/*
 * api_harness.h — the socket API's unit-test harness: setup opens the server (daemon/api*.c)
 * on a real UNIX socket and libev loop with the fake control thread (fake_ctl.c), max_clients 4;
 * the client-side helpers drive the loop between their writes and reads.
 */
#ifndef ARMD_TESTS_API_HARNESS_H
#define ARMD_TESTS_API_HARNESS_H

#include <ev.h>
#include <jansson.h>
#include <stddef.h>

#include "daemon/api.h"

extern struct ev_loop *loop;
extern api_server *srv;
extern char sock_path[108];

/* cmocka setups and teardown: the server with the API's default timeouts, or with 0.3 s stall
 * and idle timeouts; teardown closes it and checks the socket file is gone. */
int setup(void **state);
int setup_short_timeouts(void **state);
int teardown(void **state);
/* A connected client socket (the loop run a few times: accepted). */
int connect_client(void);
/* Sends all of data, running the loop meanwhile. */
void send_all(int fd, const char *data, size_t len);
/* Reads one line, running the server loop meanwhile; returns it parsed, or NULL at EOF. */
json_t *read_line(int fd);
/* Runs the server loop for about `seconds` of real time. */
void run_loop_for(double seconds);
/* Sends line and a newline; returns the next line read. */
json_t *request(int fd, const char *line);
/* The error code and message of a reply (NULL: none). */
const char *error_code(json_t *reply);
const char *error_message(json_t *reply);
/* Sends method with params (id 3); the reply must be invalid_params with a message naming
 * names (cmocka failure otherwise). */
void expect_invalid(int fd, const char *method, const char *params, const char *names);

#endif
