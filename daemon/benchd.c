/* benchd.c: the node daemon.
 *
 *   benchd --inventory [--json] [--sysfs-root DIR]    print the inventory and exit
 *   benchd [-c FILE] [--listen ADDR:PORT] [--socket PATH] [--foreground]
 *
 * main() reads like the list of what the daemon does: configuration, log,
 * token, first inventory, HTTP server, READY=1, then a loop that waits for
 * signals (SIGHUP reloads, SIGTERM and SIGINT stop) and pings the systemd
 * watchdog; then the same steps undone in reverse.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "buf.h"
#include "conf.h"
#include "daemon.h"
#include "health-report.h"
#include "datasets.h"
#include "fs.h"
#include "http.h"
#include "inventory.h"
#include "log.h"
#include "notify.h"
#include "nvml.h"
#include "bd-paths.h"

#define DEFAULT_CONF BD_SYSCONFDIR "/benchd/benchd.conf"

enum { OPT_SYSFS_ROOT = 256, OPT_LISTEN, OPT_SOCKET, OPT_VERSION, OPT_DEFAULTS, OPT_TOKEN_FILE, OPT_STATE_DIR, OPT_NVML };

static const char *arg_conf;
static const char *arg_listen, *arg_socket, *arg_sysfs_root, *arg_token_file, *arg_state_dir, *arg_nvml;
static bool arg_foreground, arg_inventory, arg_json;

/* A path from the command line, from the directory benchd was started in:
 * the daemon works from / and reads its configuration again on SIGHUP. */
static const char *absolute(const char *path)
{
        return path[0] ? fs_path_clean(path) : path;
}

static void usage(FILE *f)
{
        fprintf(f, "usage: benchd [-c FILE] [--listen ADDR:PORT] [--socket PATH] [--foreground]\n"
                   "       benchd --inventory [--json] [--sysfs-root DIR] [--nvml-library LIB]\n\n"
                   "The benchd node daemon: inventories the node (CPUs, NUMA, GPUs, NICs, storage,\n"
                   "software), its PCI topology and the binding of one rank per GPU, and serves them\n"
                   "over HTTP/JSON with Prometheus metrics.\n\n"
                   "  -c, --config FILE      configuration file (default %s if it exists)\n"
                   "      --listen ADDR:PORT TCP address of the API (default 127.0.0.1:9410; '' for none)\n"
                   "      --socket PATH      also serve the API on a Unix socket\n"
                   "      --token-file FILE  bearer token for mutating requests (created when missing)\n"
                   "      --state-dir DIR    where benchd keeps its state\n"
                   "  -f, --foreground       stay in the foreground (as under systemd)\n"
                   "  -i, --inventory        print the inventory and exit\n"
                   "  -j, --json             with --inventory: as JSON\n"
                   "      --sysfs-root DIR   read DIR/sys, DIR/proc and DIR/etc instead of the live ones\n"
                   "      --nvml-library LIB the NVML library to load (default libnvidia-ml.so.1; with\n"
                   "                         --sysfs-root: that machine's recorded answers)\n"
                   "      --print-defaults   print a configuration file with every default and exit\n"
                   "  -h, --help             show this help\n"
                   "      --version          show the version\n\n"
                   "Endpoints: GET /v1/health, /v1/inventory, /v1/topology, /v1/binding?ranks=N,\n"
                   "/v1/signals, /v1/datasets, /v1/datasets/NAME, /v1/health/report, /metrics;\n"
                   "POST /v1/inventory/refresh, /v1/health/report,\n"
                   "/v1/datasets/NAME/stage, /v1/datasets/NAME/verify, DELETE /v1/datasets/NAME\n"
                   "(token).  See benchd(8).\n",
                DEFAULT_CONF);
}

static int parse_args(int argc, char **argv)
{
        static const struct option longopts[] = {
                { "config", required_argument, NULL, 'c' },
                { "listen", required_argument, NULL, OPT_LISTEN },
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "token-file", required_argument, NULL, OPT_TOKEN_FILE },
                { "state-dir", required_argument, NULL, OPT_STATE_DIR },
                { "foreground", no_argument, NULL, 'f' },
                { "inventory", no_argument, NULL, 'i' },
                { "json", no_argument, NULL, 'j' },
                { "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },
                { "nvml-library", required_argument, NULL, OPT_NVML },
                { "print-defaults", no_argument, NULL, OPT_DEFAULTS },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                { NULL, 0, NULL, 0 },
        };
        int c;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":c:fijh", longopts, NULL)) != -1) {
                switch (c) {
                case 'c': arg_conf = absolute(optarg); break;
                case OPT_LISTEN: arg_listen = optarg; break;
                case OPT_SOCKET: arg_socket = absolute(optarg); break;
                case OPT_TOKEN_FILE: arg_token_file = absolute(optarg); break;
                case OPT_STATE_DIR: arg_state_dir = absolute(optarg); break;
                case 'f': arg_foreground = true; break;
                case 'i': arg_inventory = true; break;
                case 'j': arg_json = true; break;
                case OPT_SYSFS_ROOT: arg_sysfs_root = absolute(optarg); break;
                case OPT_NVML: arg_nvml = strchr(optarg, '/') ? absolute(optarg) : optarg; break;
                case OPT_DEFAULTS: conf_write_defaults(stdout); return 0;
                case 'h': usage(stdout); return 0;
                case OPT_VERSION: printf("benchd %s\n", PACKAGE_VERSION); return 0;
                case ':':
                        fprintf(stderr, "benchd: option '%s' needs an argument (see --help)\n", argv[optind - 1]);
                        return -2;
                default:
                        fprintf(stderr, "benchd: unknown option '%s' (see --help)\n", argv[optind - 1]);
                        return -2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "benchd: unexpected argument '%s' (see --help)\n", argv[optind]);
                return -2;
        }
        if (arg_json && !arg_inventory) {
                fprintf(stderr, "benchd: --json goes with --inventory\n");
                return -2;
        }
        return 1;
}

static int print_inventory(void)
{
        struct inventory *inv = xcalloc(1, sizeof(*inv));
        nvml_set_library(arg_nvml);
        inventory_scan(inv, arg_sysfs_root ? arg_sysfs_root : "/");
        if (arg_json) {
                cJSON *j = inventory_json(inv);
                char *text = cJSON_Print(j);
                puts(text);
                free(text);
                cJSON_Delete(j);
        } else
                inventory_print(inv, stdout);
        const cJSON *w;
        cJSON_ArrayForEach(w, inv->warnings)
                fprintf(stderr, "benchd: warning: %s\n", w->valuestring);
        inventory_release(inv);
        free(inv);
        return fflush(stdout) == 0 ? 0 : 1;
}

/* The file (when any) and then the command line. */
static int load_conf(struct conf *c, struct bd_err *err)
{
        int r;
        conf_init(c);
        if (arg_conf) {
                r = conf_load(c, arg_conf, err);
                if (r < 0)
                        return r;
        } else {
                r = conf_load(c, DEFAULT_CONF, err);
                if (r < 0 && r != -ENOENT)
                        return r;
        }
        if (arg_listen && (r = conf_set(c, "listen", arg_listen, err)) < 0)
                return r;
        if (arg_socket && (r = conf_set(c, "socket", arg_socket, err)) < 0)
                return r;
        if (arg_sysfs_root && (r = conf_set(c, "sysfs_root", arg_sysfs_root, err)) < 0)
                return r;
        if (arg_nvml && (r = conf_set(c, "nvml_library", arg_nvml, err)) < 0)
                return r;
        if (arg_state_dir && (r = conf_set(c, "state_dir", arg_state_dir, err)) < 0)
                return r;
        if (arg_token_file && (r = conf_set(c, "token_file", arg_token_file, err)) < 0)
                return r;
        return 0;
}

#ifdef HAVE_MICROHTTPD
static void reload(struct daemon *d)
{
        struct conf c;
        struct bd_err err;
        const char *key;
        (void) notify_sendf("RELOADING=1\nSTATUS=reloading %s", d->conf_path ? d->conf_path : "the configuration");
        if (load_conf(&c, &err) < 0) {
                log_error("reload: %s; keeping the running configuration", err.msg);
                conf_release(&c);
        } else {
                pthread_mutex_lock(&d->lock);
                if (conf_needs_restart(&d->conf, &c, &key))
                        log_warning("reload: '%s' changed; it takes effect at the next start", key);
                struct conf old = d->conf;
                /* keep what needs a restart as it is running */
                free(c.listen), c.listen = old.listen, old.listen = NULL;
                free(c.socket), c.socket = old.socket, old.socket = NULL;
                free(c.state_dir), c.state_dir = old.state_dir, old.state_dir = NULL;
                c.threads = old.threads;
                c.max_connections = old.max_connections;
                c.per_ip_connections = old.per_ip_connections;
                c.connection_timeout = old.connection_timeout;
                c.request_timeout = old.request_timeout;
                c.max_header_bytes = old.max_header_bytes;
                c.max_body_bytes = old.max_body_bytes;
                d->conf = c;
                pthread_mutex_unlock(&d->lock);
                conf_release(&old);
                log_max_level = c.log_level;
                if (daemon_load_token(d, true, &err) < 0)
                        log_warning("%s: mutating requests are refused", err.msg);
                log_notice("configuration reloaded");
        }
        daemon_inventory_rescan(d);
        (void) notify_send("READY=1\nSTATUS=serving");
}

/* In the background: the parent waits for the child to be serving (or to
 * fail) and exits with its status, so a failed start is seen. */
static int daemonize(int *ret_ready_fd)
{
        int p[2];
        pid_t pid;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid > 0) {
                char status = 1;
                close(p[1]);
                if (read(p[0], &status, 1) != 1)
                        status = 1;
                _exit(status);
        }
        close(p[0]);
        if (setsid() < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid > 0)
                _exit(0);
        if (chdir("/") < 0)
                return -errno;
        *ret_ready_fd = p[1];
        return 0;
}

static void ready_report(int *fd, char status)
{
        if (*fd >= 0) {
                if (status == 0) {
                        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                        if (null >= 0) {
                                dup2(null, STDIN_FILENO);
                                dup2(null, STDOUT_FILENO);
                                dup2(null, STDERR_FILENO);
                                close(null);
                        }
                        log_use_syslog();
                }
                if (write(*fd, &status, 1) < 0) {
                        /* the parent is gone: nothing to tell */
                }
                close(*fd);
                *fd = -1;
        }
}

/* The watchdog is fed only while the shared state can be locked: a daemon
 * stuck on its lock gets restarted. */
static bool healthy(struct daemon *d)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 2;
        if (pthread_mutex_timedlock(&d->lock, &ts) != 0)
                return false;
        pthread_mutex_unlock(&d->lock);
        return true;
}

static int serve(void)
{
        struct daemon d = { .lock = PTHREAD_MUTEX_INITIALIZER, .scanned = PTHREAD_COND_INITIALIZER,
                            .report_save = PTHREAD_MUTEX_INITIALIZER };
        struct http_server *http = NULL;
        struct bd_err err;
        sigset_t set;
        int ready_fd = -1, r, ret = 1;
        uint64_t wd_usec;

        log_init("benchd");
        /* Memory stays flat under load: one malloc arena for all HTTP threads
         * (a request allocates a few small buffers; per-thread arenas each
         * kept their own fragments and RSS crept up), and a fixed mmap
         * threshold so inventory snapshots (about 200 KiB) go back to the
         * system when freed. */
        mallopt(M_ARENA_MAX, 1);
        mallopt(M_MMAP_THRESHOLD, 64 * 1024);
        r = load_conf(&d.conf, &err);
        if (r < 0) {
                log_error("%s", err.msg);
                conf_release(&d.conf);
                return 1;
        }
        d.conf_path = arg_conf;
        log_max_level = d.conf.log_level;
        nvml_set_library(d.conf.nvml_library);
        if (!arg_foreground && (r = daemonize(&ready_fd)) < 0) {
                log_error_errno(r, "cannot go to the background: %m");
                goto out;
        }
        sigemptyset(&set);
        sigaddset(&set, SIGHUP);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        pthread_sigmask(SIG_BLOCK, &set, NULL);         /* before any thread starts: they inherit it */
        signal(SIGPIPE, SIG_IGN);
        d.start_time = clock_monotonic();
        d.start_wall = clock_wall();
        if (daemon_load_token(&d, true, &err) < 0)
                log_warning("%s: mutating requests are refused", err.msg);
        daemon_inventory_rescan(&d);
        d.datasets = datasets_new(&d);
        daemon_health_report_load(&d);
        r = http_start(&d, api_handle, &http, &err);
        if (r < 0) {
                log_error("%s", err.msg);
                goto out;
        }
        log_notice("serving on %s", http_describe(http));
        (void) notify_sendf("READY=1\nSTATUS=serving on %s\nMAINPID=%d", http_describe(http), (int)getpid());
        ready_report(&ready_fd, 0);
        wd_usec = notify_watchdog_usec();
        for (;;) {
                struct timespec timeout = { .tv_sec = 60 };
                siginfo_t info;
                if (wd_usec) {
                        timeout.tv_sec = (time_t)(wd_usec / 2 / 1000000);
                        timeout.tv_nsec = (long)(wd_usec / 2 % 1000000 * 1000);
                }
                int sig = sigtimedwait(&set, &info, &timeout);
                if (sig == SIGHUP) {
                        log_notice("SIGHUP: reloading");
                        reload(&d);
                } else if (sig == SIGTERM || sig == SIGINT) {
                        log_notice("%s: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
                        break;
                }
                if (wd_usec && healthy(&d))
                        (void) notify_send("WATCHDOG=1");
        }
        (void) notify_send("STOPPING=1\nSTATUS=stopping");
        ret = 0;
out:
        ready_report(&ready_fd, (char)ret);
        http = http_stop(http);
        d.datasets = datasets_free(d.datasets);
        if (d.report)
                health_report_release(d.report);
        free(d.report);
        daemon_inventory_put(d.snap);
        free(d.token);
        conf_release(&d.conf);
        return ret;
}

#endif

int main(int argc, char **argv)
{
        int r = parse_args(argc, argv);
        if (r <= 0)
                return r == 0 ? 0 : 2;
        if (arg_inventory)
                return print_inventory();
#ifndef HAVE_MICROHTTPD
        fprintf(stderr, "benchd: built without libmicrohttpd: only --inventory is available\n");
        return 1;
#else
        return serve();
#endif
}
