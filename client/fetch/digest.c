/* digest.c: SHA-1 and SHA-256 through libcrypto where loadable, else the
 * portable C (digest.h). */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "macro.h"

struct crypto_fns {
        void *(*ctx_new)(void);
        void (*ctx_free)(void *);
        int (*init)(void *, const void *, void *);
        int (*update)(void *, const void *, size_t);
        int (*final)(void *, unsigned char *, unsigned int *);
        const void *(*sha1)(void);
        const void *(*sha256)(void);
};

static struct crypto_fns crypto;
static bool crypto_ok;
static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;

static void crypto_load(void)
{
        const char *force = getenv("BENCHD_DIGEST");
        if (force && streq(force, "builtin"))
                return;
        void *h = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
        if (!h)
                return;
        *(void **)&crypto.ctx_new = dlsym(h, "EVP_MD_CTX_new");
        *(void **)&crypto.ctx_free = dlsym(h, "EVP_MD_CTX_free");
        *(void **)&crypto.init = dlsym(h, "EVP_DigestInit_ex");
        *(void **)&crypto.update = dlsym(h, "EVP_DigestUpdate");
        *(void **)&crypto.final = dlsym(h, "EVP_DigestFinal_ex");
        *(void **)&crypto.sha1 = dlsym(h, "EVP_sha1");
        *(void **)&crypto.sha256 = dlsym(h, "EVP_sha256");
        crypto_ok = crypto.ctx_new && crypto.ctx_free && crypto.init && crypto.update && crypto.final &&
                    crypto.sha1 && crypto.sha256;
}

const char *digest_backend(void)
{
        pthread_once(&crypto_once, crypto_load);
        return crypto_ok ? "libcrypto" : "built-in";
}

const char *digest_name(enum digest_kind kind)
{
        return kind == DIGEST_SHA1 ? "SHA-1" : "SHA-256";
}

void digest_init(struct digest *d, enum digest_kind kind)
{
        pthread_once(&crypto_once, crypto_load);
        d->kind = kind;
        d->evp = NULL;
        if (crypto_ok && (d->evp = crypto.ctx_new())) {
                if (crypto.init(d->evp, kind == DIGEST_SHA1 ? crypto.sha1() : crypto.sha256(), NULL) == 1)
                        return;
                crypto.ctx_free(d->evp);
                d->evp = NULL;
        }
        if (kind == DIGEST_SHA1)
                sha1_init(&d->c.sha1);
        else
                sha256_init(&d->c.sha256);
}

void digest_update(struct digest *d, const void *data, size_t len)
{
        if (d->evp)
                crypto.update(d->evp, data, len);
        else if (d->kind == DIGEST_SHA1)
                sha1_update(&d->c.sha1, data, len);
        else
                sha256_update(&d->c.sha256, data, len);
}

void digest_final_hex(struct digest *d, char hex[DIGEST_HEX_MAX])
{
        unsigned char md[64];
        unsigned int n = d->kind == DIGEST_SHA1 ? SHA1_DIGEST_SIZE : SHA256_DIGEST_SIZE;
        if (d->evp) {
                crypto.final(d->evp, md, &n);
                crypto.ctx_free(d->evp);
                d->evp = NULL;
        } else if (d->kind == DIGEST_SHA1)
                sha1_final(&d->c.sha1, md);
        else
                sha256_final(&d->c.sha256, md);
        digest_hex(md, n, hex);
}

void digest_release(struct digest *d)
{
        if (d->evp)
                crypto.ctx_free(d->evp);
        d->evp = NULL;
}
