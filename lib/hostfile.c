/* hostfile.c: Open MPI's hostfile (hostfile.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "hostfile.h"
#include "macro.h"
#include "strutil.h"
#include "system.h"

#define BLANKS " \t\r"

static bool host_ok(const char *s)
{
        /* a name or an address: letters, digits, '.', '-', '_', ':' (IPv6), '[' ']' */
        return *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:[]") == strlen(s);
}

static int option(const char *word, const char *label, int line, struct bd_err *err)
{
        const char *eq = strchr(word, '=');
        size_t n = eq ? (size_t)(eq - word) : strlen(word);
        if (!eq || !((n == 5 && !strncmp(word, "slots", n)) || (n == 9 && !strncmp(word, "max_slots", n)) ||
                     (n == 9 && !strncmp(word, "max-slots", n))))
                return bd_err_set(err, -EINVAL, "%s:%d: '%.64s': not an option of a host (slots=N, max_slots=N)",
                                  label, line, word);
        char *end;
        errno = 0;
        long v = strtol(eq + 1, &end, 10);
        if (end == eq + 1 || *end || errno || v < 1 || v > 1000000)
                return bd_err_set(err, -EINVAL, "%s:%d: '%.64s': a whole number from 1", label, line, word);
        return 0;
}

int hostfile_parse(const char *text, const char *label, char ***ret, struct bd_err *err)
{
        char **v = xcalloc(1, sizeof(*v));
        size_t n = 0;
        _cleanup_free_ char *copy = xstrdup(text);
        int line = 0, r = 0;
        char *save = NULL;
        for (char *p = copy, *l; r == 0 && (l = strsep(&p, "\n")) != NULL;) {
                line++;
                char *hash = strchr(l, '#');
                if (hash)
                        *hash = '\0';
                char *host = strtok_r(l, BLANKS, &save);
                if (!host)
                        continue;
                if (!host_ok(host)) {
                        r = bd_err_set(err, -EINVAL, "%s:%d: '%.64s' is not a host name or address", label, line,
                                       host);
                        break;
                }
                for (char *w = strtok_r(NULL, BLANKS, &save); w && r == 0; w = strtok_r(NULL, BLANKS, &save))
                        r = option(w, label, line, err);
                for (size_t k = 0; k < n && r == 0; k++)
                        if (streq(v[k], host))
                                r = bd_err_set(err, -EINVAL, "%s:%d: host '%.64s' named again", label, line, host);
                if (r < 0)
                        break;
                v = xrealloc(v, (n + 2) * sizeof(*v));
                v[n++] = xstrdup(host);
                v[n] = NULL;
        }
        if (r == 0 && n == 0)
                r = bd_err_set(err, -EINVAL, "%s: no host", label);
        if (r < 0) {
                strv_free(v);
                return r;
        }
        *ret = v;
        return 0;
}

int hostfile_read(const char *path, char ***ret, struct bd_err *err)
{
        const char *home = getenv("HOME");
        _cleanup_free_ char *p = path[0] == '~' && path[1] == '/' && home ? xasprintf("%s%s", home, path + 1)
                                                                         : xstrdup(path);
        _cleanup_free_ char *text = NULL;
        int r = fs_read_file(p, 16u << 20, &text, NULL, err);
        if (r < 0)
                return r;
        return hostfile_parse(text, p, ret, err);
}
