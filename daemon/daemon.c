/* daemon.c: inventory snapshots and the bearer token. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "fs.h"
#include "log.h"

static struct inv_snapshot *snapshot_take(const char *root, const char *node_name)
{
        struct inv_snapshot *s = xcalloc(1, sizeof(*s));
        atomic_init(&s->ref, 1);
        s->started = clock_monotonic();
        inventory_scan(&s->inv, root);
        cJSON *j = inventory_json(&s->inv);
        /* the scheduler's name for the node: the conf's, else its host name */
        cJSON *host = cJSON_GetObjectItemCaseSensitive(j, "host");
        if (cJSON_IsObject(host))
                cJSON_AddStringToObject(host, "node_name", node_name && *node_name ? node_name : s->inv.hostname);
        char *text = cJSON_PrintUnformatted(j);
        cJSON_Delete(j);
        if (!text)
                text = xstrdup("{}");
        s->json = xasprintf("%s\n", text);
        s->json_len = strlen(s->json);
        free(text);
        s->taken = clock_monotonic();
        return s;
}

void daemon_inventory_put(struct inv_snapshot *s)
{
        if (s && atomic_fetch_sub(&s->ref, 1) == 1) {
                inventory_release(&s->inv);
                free(s->json);
                free(s);
        }
}

struct inv_snapshot *daemon_inventory_get(struct daemon *d, double max_age)
{
        struct inv_snapshot *s, *old = NULL;
        double now = clock_monotonic();
        pthread_mutex_lock(&d->lock);
        if (max_age < 0)
                max_age = d->conf.inventory_ttl;
        for (;;) {
                if (d->snap && d->snap->started >= now - max_age)
                        break;
                if (!d->scanning) {
                        /* one request scans, outside the lock: the others
                         * (health checks, the API, /metrics) go on with the
                         * snapshot it replaces instead of waiting for sysfs */
                        _cleanup_free_ char *root = xstrdup(d->conf.sysfs_root);
                        _cleanup_free_ char *name = xstrdup(d->conf.node_name ? d->conf.node_name : "");
                        d->scanning = true;
                        pthread_mutex_unlock(&d->lock);
                        struct inv_snapshot *n = snapshot_take(root, name);
                        pthread_mutex_lock(&d->lock);
                        d->scanning = false;
                        pthread_cond_broadcast(&d->scanned);
                        old = d->snap;
                        d->snap = n;
                        const cJSON *w;
                        cJSON_ArrayForEach(w, n->inv.warnings)
                                log_debug("inventory: %s", w->valuestring);
                        break;
                }
                if (d->snap && max_age > 0)
                        break;
                /* no snapshot yet, or a scan started after this request is asked for */
                pthread_cond_wait(&d->scanned, &d->lock);
        }
        s = d->snap;
        atomic_fetch_add(&s->ref, 1);
        pthread_mutex_unlock(&d->lock);
        daemon_inventory_put(old);
        return s;
}

void daemon_inventory_rescan(struct daemon *d)
{
        daemon_inventory_put(daemon_inventory_get(d, 0));
}

static int token_read(const char *path, char **ret, struct bd_err *err)
{
        struct stat st;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        char buf[512];
        ssize_t n;
        if (fd < 0)
                return bd_err_set(err, -errno, "cannot open token file '%s': %s", path, strerror(errno));
        if (fstat(fd, &st) < 0)
                return bd_err_set(err, -errno, "token file '%s': %s", path, strerror(errno));
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
                return bd_err_set(err, -EPERM,
                                  "token file '%s' must be a regular file owned by uid %u and readable by it only "
                                  "(mode 0600)",
                                  path, (unsigned)geteuid());
        n = read(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                return bd_err_set(err, -errno, "cannot read token file '%s': %s", path, strerror(errno));
        buf[n] = '\0';
        buf[strcspn(buf, " \t\r\n")] = '\0';
        if (strlen(buf) < 16)
                return bd_err_set(err, -EINVAL, "token file '%s': the token is shorter than 16 characters", path);
        *ret = xstrdup(buf);
        return 0;
}

static int token_create(const char *path, struct bd_err *err)
{
        unsigned char raw[32];
        char hex[sizeof(raw) * 2 + 2];
        _cleanup_free_ char *dir = xstrdup(path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = '\0';
                if (fs_mkdir_p(dir, 0700) < 0)
                        return bd_err_set(err, -errno, "cannot create '%s' for the token: %s", dir, strerror(errno));
        }
        if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
                return bd_err_set(err, -EIO, "getrandom: %s", strerror(errno));
        for (size_t i = 0; i < sizeof(raw); i++)
                snprintf(hex + 2 * i, 3, "%02x", raw[i]);
        hex[sizeof(raw) * 2] = '\n';
        hex[sizeof(raw) * 2 + 1] = '\0';
        return fs_write_atomic(path, hex, strlen(hex), 0600, err);
}

int daemon_load_token(struct daemon *d, bool create, struct bd_err *err)
{
        char *token = NULL;
        pthread_mutex_lock(&d->lock);
        _cleanup_free_ char *path = xstrdup(d->conf.token_file);
        pthread_mutex_unlock(&d->lock);
        int r = token_read(path, &token, err);
        if (r == -ENOENT && create) {
                r = token_create(path, err);
                if (r == 0) {
                        log_notice("created a new token in '%s'", path);
                        r = token_read(path, &token, err);
                }
        }
        if (r < 0)
                return r;
        pthread_mutex_lock(&d->lock);
        free(d->token);
        d->token = token;
        pthread_mutex_unlock(&d->lock);
        return 0;
}

bool daemon_token_ok(struct daemon *d, const char *authorization)
{
        const char *given;
        unsigned char diff = 0;
        size_t n, m;
        bool ok;
        if (!authorization || strncasecmp(authorization, "Bearer ", 7))
                return false;
        given = authorization + 7;
        while (*given == ' ')
                given++;
        pthread_mutex_lock(&d->lock);
        if (!d->token) {
                pthread_mutex_unlock(&d->lock);
                return false;
        }
        n = strlen(d->token);
        m = strlen(given);
        for (size_t i = 0; i < n; i++)
                diff |= (unsigned char)(d->token[i] ^ (i < m ? given[i] : 0));
        ok = diff == 0 && n == m;
        pthread_mutex_unlock(&d->lock);
        return ok;
}
