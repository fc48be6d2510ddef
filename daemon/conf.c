/* conf.c: the configuration table and the file parser. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchd-defaults.h"
#include "conf.h"
#include "fs.h"
#include "log.h"
#include "strutil.h"

enum conf_type { T_STRING, T_PATH, T_LISTEN, T_INT, T_ACCESS, T_LEVEL };

enum conf_flags {
        CONF_RESTART = 1 << 0,  /* takes effect at the next start, not on SIGHUP */
};

struct conf_entry {
        const char *name;
        enum conf_type type;
        size_t offset;
        const char *dflt;
        long min, max;          /* T_INT */
        unsigned flags;
        const char *help;
};

#define S(field) offsetof(struct conf, field)

static const struct conf_entry table[] = {
        { "listen", T_LISTEN, S(listen), "127.0.0.1:" BD_PORT_STR, 0, 0, CONF_RESTART,
          "TCP address and port of the HTTP API (ADDR:PORT, [IPv6]:PORT; empty: none)" },
        { "socket", T_PATH, S(socket), "", 0, 0, CONF_RESTART, "also serve the API on this Unix socket" },
        { "threads", T_INT, S(threads), "4", 1, 64, CONF_RESTART, "HTTP worker threads (epoll thread pool)" },
        { "max_connections", T_INT, S(max_connections), "256", 1, 65536, CONF_RESTART,
          "connections served at once; more are refused" },
        { "per_ip_connections", T_INT, S(per_ip_connections), "64", 0, 65536, CONF_RESTART,
          "connections at once from one address (0: no limit)" },
        { "connection_timeout", T_INT, S(connection_timeout), "30", 1, 3600, CONF_RESTART,
          "seconds an idle connection is kept while a request is read or answered" },
        { "request_timeout", T_INT, S(request_timeout), "10", 1, 3600, CONF_RESTART,
          "seconds a client has to send a request's line and headers (from connecting or the last answer)" },
        { "max_header_bytes", T_INT, S(max_header_bytes), "16384", 4096, 1048576, CONF_RESTART,
          "largest request line plus headers; larger requests get 431" },
        { "max_body_bytes", T_INT, S(max_body_bytes), "65536", 0, 16777216, CONF_RESTART,
          "largest request body; larger ones get 413" },
        { "read_access", T_ACCESS, S(read_access), "local", 0, 0, 0,
          "who may read (GET): 'local' (loopback and the Unix socket) or 'any'" },
        { "token_file", T_PATH, S(token_file), BD_TOKEN_FILE, 0, 0, 0,
          "bearer token that mutating requests must send; created (mode 0600) when missing" },
        { "state_dir", T_PATH, S(state_dir), "/var/lib/benchd", 0, 0, CONF_RESTART,
          "where benchd keeps its state" },
        { "sysfs_root", T_PATH, S(sysfs_root), "/", 0, 0, 0,
          "read /sys, /proc and /etc under this directory (recorded machines in tests)" },
        { "nvml_library", T_STRING, S(nvml_library), "", 0, 0, CONF_RESTART,
          "the NVML library to load ('': libnvidia-ml.so.1); naming one also reads NVML for a recorded sysfs_root "
          "(recorded answers)" },
        { "inventory_ttl", T_INT, S(inventory_ttl), "5", 0, 86400, 0,
          "seconds an inventory is served before the node is read again" },
        { "log_level", T_LEVEL, S(log_level), "info", 0, 0, 0, "err, warning, notice, info or debug" },
        { "stage_allow", T_STRING, S(stage_allow), "/scratch /raid /local", 0, 0, 0,
          "directories dataset staging may write under (space-separated; not /tmp or /var/tmp: "
          "benchd.service makes them private)" },
        { "node_name", T_STRING, S(node_name), "", 0, 0, 0,
          "the node's name in the scheduler (Slurm's NodeName) where it is not its host name ('': the host name); "
          "benchctl health matches and drains by it" },
};

/* T_STRING, T_PATH and T_LISTEN: an allocated string */
static bool is_string(const struct conf_entry *e)
{
        return e->type == T_STRING || e->type == T_PATH || e->type == T_LISTEN;
}

/* "127.0.0.1:9410", "[::1]:9410", "*:9410" (every IPv4 address) */
int conf_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len, struct bd_err *err)
{
        _cleanup_free_ char *host = NULL;
        const char *colon;
        long port;
        memset(ss, 0, sizeof(*ss));
        if (spec[0] == '[') {
                const char *end = strchr(spec, ']');
                if (!end || end[1] != ':')
                        return bd_err_set(err, -EINVAL, "expected [IPv6]:PORT, not '%s'", spec);
                host = xstrndup(spec + 1, (size_t)(end - spec - 1));
                colon = end + 1;
        } else {
                colon = strrchr(spec, ':');
                if (!colon)
                        return bd_err_set(err, -EINVAL, "expected ADDR:PORT, [IPv6]:PORT or *:PORT, not '%s'", spec);
                host = xstrndup(spec, (size_t)(colon - spec));
        }
        if (str_parse_long(colon + 1, &port) < 0 || port < 1 || port > 65535)
                return bd_err_set(err, -EINVAL, "'%s': expected a port from 1 to 65535", spec);
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
        if (streq(host, "*") || streq(host, "0.0.0.0") || !*host) {
                in->sin_family = AF_INET;
                in->sin_addr.s_addr = htonl(INADDR_ANY);
                in->sin_port = htons((uint16_t)port);
                *len = sizeof(*in);
        } else if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                in->sin_port = htons((uint16_t)port);
                *len = sizeof(*in);
        } else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t)port);
                *len = sizeof(*in6);
        } else
                return bd_err_set(err, -EINVAL, "'%s': '%s' is not an IPv4 or IPv6 address", spec, host);
        return 0;
}


static const struct conf_entry *lookup(const char *key)
{
        for (size_t i = 0; i < ARRAY_SIZE(table); i++)
                if (streq(table[i].name, key))
                        return &table[i];
        return NULL;
}

static void set_string(void *field, const char *value)
{
        free(*(char **)field);
        *(char **)field = xstrdup(value);
}

static int set_entry(struct conf *c, const struct conf_entry *e, const char *value, struct bd_err *err,
                     const char *where)
{
        void *field = (char *)c + e->offset;
        struct sockaddr_storage ss;
        socklen_t len;
        struct bd_err why;
        long n;
        int level;
        switch (e->type) {
        case T_LISTEN:
                if (value[0] && conf_parse_listen(value, &ss, &len, &why) < 0)
                        return bd_err_set(err, -EINVAL, "%s'%s': %s", where, e->name, why.msg);
                set_string(field, value);
                return 0;
        case T_PATH:
                /* a daemon's working directory is / : relative would mean
                 * something else once it is in the background */
                if (value[0] && value[0] != '/')
                        return bd_err_set(err, -EINVAL, "%s'%s': expected an absolute path, not '%s'", where, e->name,
                                          value);
                /* fall through */
        case T_STRING:
                set_string(field, value);
                return 0;
        case T_INT:
                if (str_parse_long(value, &n) < 0 || n < e->min || n > e->max)
                        return bd_err_set(err, -EINVAL, "%s'%s': expected an integer from %ld to %ld, not '%s'", where,
                                          e->name, e->min, e->max, value);
                *(int *)field = (int)n;
                return 0;
        case T_ACCESS:
                if (streq(value, "local"))
                        *(enum read_access *)field = READ_LOCAL;
                else if (streq(value, "any"))
                        *(enum read_access *)field = READ_ANY;
                else
                        return bd_err_set(err, -EINVAL, "%s'%s': expected 'local' or 'any', not '%s'", where, e->name,
                                          value);
                return 0;
        case T_LEVEL:
                level = log_level_parse(value);
                if (level < 0)
                        return bd_err_set(err, -EINVAL,
                                          "%s'%s': expected err, warning, notice, info or debug, not '%s'", where,
                                          e->name, value);
                *(int *)field = level;
                return 0;
        }
        return -EINVAL;
}

static const char *const *key_names(void)
{
        static const char *names[ARRAY_SIZE(table) + 1];
        for (size_t i = 0; i < ARRAY_SIZE(table); i++)
                names[i] = table[i].name;
        return names;
}

static int unknown_key(const char *where, const char *key, struct bd_err *err)
{
        const char *near = str_closest_word(key, key_names());
        if (near)
                return bd_err_set(err, -EINVAL, "%sunknown key '%s' (did you mean '%s'?)", where, key, near);
        return bd_err_set(err, -EINVAL, "%sunknown key '%s'", where, key);
}

void conf_init(struct conf *c)
{
        memset(c, 0, sizeof(*c));
        for (size_t i = 0; i < ARRAY_SIZE(table); i++)
                (void) set_entry(c, &table[i], table[i].dflt, NULL, "");
}

void conf_release(struct conf *c)
{
        for (size_t i = 0; i < ARRAY_SIZE(table); i++)
                if (is_string(&table[i])) {
                        char **p = (char **)((char *)c + table[i].offset);
                        free(*p);
                        *p = NULL;
                }
}

int conf_set(struct conf *c, const char *key, const char *value, struct bd_err *err)
{
        const struct conf_entry *e = lookup(key);
        if (!e)
                return unknown_key("", key, err);
        return set_entry(c, e, value, err, "");
}

static char *trim(char *s)
{
        char *end;
        while (*s == ' ' || *s == '\t')
                s++;
        end = s + strlen(s);
        while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
                *--end = '\0';
        return s;
}

int conf_load(struct conf *c, const char *path, struct bd_err *err)
{
        _cleanup_free_ char *text = NULL;
        bool seen[ARRAY_SIZE(table)] = { false };
        char where[600];
        size_t len;
        int r = fs_read_file(path, 1u << 20, &text, &len, NULL);
        if (r < 0)
                return bd_err_set(err, r, "cannot read '%s': %s", path, strerror(-r));
        if (strlen(text) != len)
                return bd_err_set(err, -EINVAL, "%s: holds a NUL byte", path);
        char *save = NULL, *line = text;
        int lineno = 0;
        for (char *next; line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                lineno++;
                char *hash = strchr(line, '#');
                if (hash)
                        *hash = '\0';
                char *s = trim(line);
                if (!*s)
                        continue;
                snprintf(where, sizeof(where), "%s:%d: ", path, lineno);
                char *eq = strchr(s, '=');
                if (!eq)
                        return bd_err_set(err, -EINVAL, "%sexpected 'key = value'", where);
                *eq = '\0';
                char *key = trim(s), *value = trim(eq + 1);
                const struct conf_entry *e = lookup(key);
                if (!e)
                        return unknown_key(where, key, err);
                size_t idx = (size_t)(e - table);
                if (seen[idx])
                        return bd_err_set(err, -EINVAL, "%s'%s' is set twice", where, key);
                seen[idx] = true;
                r = set_entry(c, e, value, err, where);
                if (r < 0)
                        return r;
        }
        (void) save;
        return 0;
}

bool conf_needs_restart(const struct conf *old, const struct conf *new, const char **ret_key)
{
        for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
                const struct conf_entry *e = &table[i];
                const void *a = (const char *)old + e->offset, *b = (const char *)new + e->offset;
                bool same;
                if (!(e->flags & CONF_RESTART))
                        continue;
                if (is_string(e))
                        same = streq(*(char *const *)a, *(char *const *)b);
                else
                        same = *(const int *)a == *(const int *)b;
                if (!same) {
                        *ret_key = e->name;
                        return true;
                }
        }
        return false;
}

void conf_write_defaults(FILE *f)
{
        fprintf(f, "# benchd.conf: the node daemon's configuration (benchd(8)).\n"
                   "# 'key = value' lines; '#' starts a comment.  The values below are the defaults.\n"
                   "# SIGHUP reloads the file; keys marked (restart) take effect at the next start.\n");
        for (size_t i = 0; i < ARRAY_SIZE(table); i++)
                fprintf(f, "\n# %s%s\n#%s = %s\n", table[i].help, table[i].flags & CONF_RESTART ? " (restart)" : "",
                        table[i].name, table[i].dflt);
}
