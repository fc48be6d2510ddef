/* curl-dl.h: libcurl, loaded with dlopen the first time a command needs it.
 *
 * Linking libcurl costs every process start its whole dependency tree
 * (TLS, Kerberos, LDAP: about 14 million instructions of constructors, 10 ms
 * on a busy 2-core machine), which 'benchctl submit' and every rank's
 * benchd-bind would pay for nothing.  Only the commands that talk HTTP load
 * it.  curl/curl.h gives the types and constants; the functions are called
 * through this table:
 *
 *     const struct curl_fns *C = curl_fns(&err);
 *     if (!C) ... err.msg says why ("libcurl.so.4: cannot open ...")
 *     CURL *h = C->easy_init();
 */
#ifndef BD_CURL_DL_H
#define BD_CURL_DL_H

#include <curl/curl.h>

#include "err.h"

struct curl_fns {
        CURL *(*easy_init)(void);
        CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
        CURLcode (*easy_perform)(CURL *);
        CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
        void (*easy_cleanup)(CURL *);
        const char *(*easy_strerror)(CURLcode);
        CURLM *(*multi_init)(void);
        CURLMcode (*multi_add_handle)(CURLM *, CURL *);
        CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
        CURLMcode (*multi_perform)(CURLM *, int *);
        CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
        CURLMsg *(*multi_info_read)(CURLM *, int *);
        CURLMcode (*multi_cleanup)(CURLM *);
        struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
        void (*slist_free_all)(struct curl_slist *);
};

/* The loaded library, or NULL with err set.  Not thread-safe on first use. */
const struct curl_fns *curl_fns(struct bd_err *err);

#endif
