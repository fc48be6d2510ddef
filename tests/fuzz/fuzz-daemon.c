/* fuzz-daemon.c: benchd without a socket (fuzz-daemon.h). */
#include "config.h"

#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "datasets.h"
#include "fs.h"
#include "fuzz-daemon.h"
#include "fuzz.h"
#include "json.h"
#include "log.h"
#include "bd-paths.h"

/* What http_arg() and http_header() call: the values of the request being
 * answered, whose conn is a struct fuzz_request.  Header names are compared
 * without case, arguments with, as libmicrohttpd does. */
const char *MHD_lookup_connection_value(struct MHD_Connection *connection, enum MHD_ValueKind kind, const char *key)
{
        const struct fuzz_request *f = (const struct fuzz_request *)(const void *)connection;
        if (!f || !key)
                return NULL;
        if (kind == MHD_GET_ARGUMENT_KIND) {
                for (size_t i = 0; i < f->nargs; i++)
                        if (streq(f->args[i][0], key))
                                return f->args[i][1];
        } else if (kind == MHD_HEADER_KIND) {
                for (size_t i = 0; i < f->nheaders; i++)
                        if (!strcasecmp(f->headers[i][0], key))
                                return f->headers[i][1];
        }
        return NULL;
}

static const char coco_state[] =
        "benchd-stage 1\nname=coco\nsrc=/shared/coco\ndst=/scratch/coco\nmode=copy\nstate=complete\npid=4242\n"
        "started=1700000000.000\nfinished=1700000100.500\nverified=1700000100.500\n"
        "manifest=0123456789abcdef0123456789abcdef\nfiles=3\nbytes=1024\nfiles_copied=3\nbytes_copied=1024\n"
        "files_present=0\nfiles_repaired=0\nerrors=0\nworkers=16\nbwlimit=0\nverify=0\ndelete=0\nfsync=end\n";
static const char old_state[] =
        "benchd-stage 1\nname=old\nsrc=/shared/old\ndst=/scratch/old%20copy\nmode=verify\nstate=failed\npid=1\n"
        "started=1600000000.000\nfinished=0.000\nverified=0.000\nfiles=2\nbytes=10\nfiles_copied=0\n"
        "bytes_copied=0\nfiles_present=1\nfiles_repaired=0\nerrors=1\nerror=bad%0Anews\nworkers=4\nbwlimit=0\n"
        "verify=1\ndelete=0\nfsync=none\nsuspect=a/b%25c\n";

static void set(struct conf *c, const char *key, const char *value)
{
        struct bd_err err = { "" };
        FUZZ_CHECK(conf_set(c, key, value, &err) == 0, "conf_set %s: %s", key, err.msg);
}

struct daemon *fuzz_daemon(void)
{
        static struct daemon *d;
        if (d)
                return d;
        log_max_level = getenv("FUZZ_LOG") ? LOG_DEBUG : LOG_CRIT;
        _cleanup_free_ char *state = fuzz_path("state");
        _cleanup_free_ char *stage = xasprintf("%s/stage", state);
        _cleanup_free_ char *coco = xasprintf("%s/coco.state", stage);
        _cleanup_free_ char *old = xasprintf("%s/old.state", stage);
        FUZZ_CHECK(fs_mkdir_p(stage, 0700) == 0, "cannot create '%s'", stage);
        fuzz_write(coco, coco_state, strlen(coco_state));
        fuzz_write(old, old_state, strlen(old_state));

        d = xcalloc(1, sizeof(*d));
        pthread_mutex_init(&d->lock, NULL);
        pthread_mutex_init(&d->report_save, NULL);
        conf_init(&d->conf);
        set(&d->conf, "sysfs_root", BD_SRCDIR "/tests/fixtures/sysfs/p3dn");
        set(&d->conf, "state_dir", state);
        set(&d->conf, "inventory_ttl", "86400");
        set(&d->conf, "stage_allow", "");
        FUZZ_CHECK(d->conf.read_access == READ_LOCAL, "reads are not limited to local clients by default");
        d->token = xstrdup(FUZZ_TOKEN);
        d->start_time = clock_monotonic();
        d->start_wall = clock_wall();
        d->datasets = datasets_new(d);
        FUZZ_CHECK(d->datasets, "no dataset staging in '%s'", state);
        daemon_inventory_put(daemon_inventory_get(d, -1));
        return d;
}

void fuzz_check_response(const struct http_response *rs)
{
        FUZZ_CHECK(rs->status >= 200 && rs->status <= 599, "status %d", rs->status);
        FUZZ_CHECK(rs->body && rs->content_type, "status %d without a body or its type", rs->status);
        FUZZ_CHECK(strlen(rs->body) == rs->len, "a body of %zu bytes says it has %zu", strlen(rs->body), rs->len);
        if (rs->status == 405)
                FUZZ_CHECK(rs->allow && *rs->allow, "a 405 without the methods allowed");
        if (rs->status == 401)
                FUZZ_CHECK(rs->auth_challenge, "a 401 without WWW-Authenticate");
        if (strncmp(rs->content_type, "application/json", 16))
                return;
        FUZZ_CHECK(fuzz_utf8_valid(rs->body), "a JSON answer (%d) that is not UTF-8: %s", rs->status, rs->body);
        _cleanup_json_ cJSON *j = cJSON_ParseWithLength(rs->body, rs->len);
        FUZZ_CHECK(j, "an answer (%d) that is not JSON: %s", rs->status, rs->body);
        if (rs->status < 400)
                return;
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
        FUZZ_CHECK(cJSON_IsString(e) && e->valuestring[0] && json_int(j, "status", 0) == rs->status,
                   "an error (%d) that is not {\"error\", \"status\"}: %s", rs->status, rs->body);
}
