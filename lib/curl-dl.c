/* curl-dl.c: libcurl through dlopen. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>

#include "curl-dl.h"

static struct curl_fns fns;
static bool loaded;
static char failure[512];

#define SYM(field, name)                                                                        \
        do {                                                                                    \
                *(void **)&fns.field = dlsym(lib, name);                                        \
                if (!fns.field) {                                                               \
                        snprintf(failure, sizeof(failure), "libcurl.so.4 lacks %s", name);      \
                        return false;                                                           \
                }                                                                               \
        } while (0)

static bool load(void)
{
        void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        CURLcode (*global_init)(long);
        if (!lib) {
                snprintf(failure, sizeof(failure), "cannot load libcurl: %s", dlerror());
                return false;
        }
        SYM(easy_init, "curl_easy_init");
        SYM(easy_setopt, "curl_easy_setopt");
        SYM(easy_perform, "curl_easy_perform");
        SYM(easy_getinfo, "curl_easy_getinfo");
        SYM(easy_cleanup, "curl_easy_cleanup");
        SYM(easy_strerror, "curl_easy_strerror");
        SYM(multi_init, "curl_multi_init");
        SYM(multi_add_handle, "curl_multi_add_handle");
        SYM(multi_remove_handle, "curl_multi_remove_handle");
        SYM(multi_perform, "curl_multi_perform");
        SYM(multi_poll, "curl_multi_poll");
        SYM(multi_info_read, "curl_multi_info_read");
        SYM(multi_cleanup, "curl_multi_cleanup");
        SYM(slist_append, "curl_slist_append");
        SYM(slist_free_all, "curl_slist_free_all");
        *(void **)&global_init = dlsym(lib, "curl_global_init");
        if (!global_init || global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                snprintf(failure, sizeof(failure), "libcurl failed to initialise");
                return false;
        }
        return true;
}

const struct curl_fns *curl_fns(struct bd_err *err)
{
        static bool tried;
        if (!tried) {
                tried = true;
                loaded = load();
        }
        if (!loaded) {
                bd_err_set(err, -ENOSYS, "%s", failure);
                return NULL;
        }
        return &fns;
}
