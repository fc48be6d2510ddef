/* oci.c: an OCI image layout and a docker-archive in one tar file
 * (oci.h), written with a small ustar writer of its own. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "oci.h"
#include "sha256.h"

#define TAR_BLOCK 512
#define COPY_CHUNK (1u << 20)
#define BLOB_DIR "blobs/sha256/"

#define MT_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_LAYER "application/vnd.oci.image.layer.v1.tar"

/* ---- the tar writer ---- */

/* An octal field of width w: w - 1 digits and a NUL (the value fits). */
static void tar_octal(uint8_t *field, size_t w, uint64_t v)
{
        field[w - 1] = '\0';
        for (size_t i = w - 1; i-- > 0; v >>= 3)
                field[i] = (uint8_t)('0' + (v & 7));
}

void oci_tar_header(uint8_t hdr[512], const char *name, uint64_t size, unsigned mode, char type)
{
        memset(hdr, 0, TAR_BLOCK);
        memcpy(hdr, name, strnlen(name, 99));
        tar_octal(hdr + 100, 8, mode & 07777);
        tar_octal(hdr + 108, 8, 0);             /* uid */
        tar_octal(hdr + 116, 8, 0);             /* gid */
        if (size < (UINT64_C(1) << 33)) {
                tar_octal(hdr + 124, 12, size);
        } else {                                /* GNU base-256: a marker byte, then big-endian */
                hdr[124] = 0x80;
                for (int i = 11; i >= 1; i--, size >>= 8)
                        hdr[124 + i] = (uint8_t)size;
        }
        tar_octal(hdr + 136, 12, 0);            /* mtime */
        hdr[156] = (uint8_t)type;
        memcpy(hdr + 257, "ustar", 6);          /* magic, NUL-terminated */
        memcpy(hdr + 263, "00", 2);             /* version */
        tar_octal(hdr + 329, 8, 0);             /* devmajor */
        tar_octal(hdr + 337, 8, 0);             /* devminor */
        /* the checksum counts its own field as spaces; 6 digits, NUL, space */
        memset(hdr + 148, ' ', 8);
        unsigned sum = 0;
        for (int i = 0; i < TAR_BLOCK; i++)
                sum += hdr[i];
        tar_octal(hdr + 148, 7, sum);
        hdr[155] = ' ';
}

struct tar_out {
        int fd;
        const char *path;       /* the archive, for errors */
        uint64_t off;           /* bytes written so far */
};

static int out_write(struct tar_out *t, const void *data, size_t len, struct bd_err *err)
{
        const char *p = data;
        while (len > 0) {
                ssize_t n = write(t->fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return bd_err_set(err, -errno, "cannot write '%s': %s", t->path, strerror(errno));
                }
                p += n;
                len -= (size_t)n;
                t->off += (uint64_t)n;
        }
        return 0;
}

/* Zeros up to the next block boundary. */
static int out_pad(struct tar_out *t, struct bd_err *err)
{
        static const uint8_t zero[TAR_BLOCK];
        size_t rest = (size_t)(t->off % TAR_BLOCK);
        return rest ? out_write(t, zero, TAR_BLOCK - rest, err) : 0;
}

static int out_dir(struct tar_out *t, const char *name, struct bd_err *err)
{
        uint8_t hdr[TAR_BLOCK];
        oci_tar_header(hdr, name, 0, 0755, '5');
        return out_write(t, hdr, sizeof(hdr), err);
}

static int out_file(struct tar_out *t, const char *name, const void *data, size_t len, struct bd_err *err)
{
        uint8_t hdr[TAR_BLOCK];
        oci_tar_header(hdr, name, len, 0644, '0');
        int r = out_write(t, hdr, sizeof(hdr), err);
        if (r == 0)
                r = out_write(t, data, len, err);
        return r < 0 ? r : out_pad(t, err);
}

/* A JSON document as a blob: its digest (hex) and size are those of the exact
 * bytes written. */
static int out_json_blob(struct tar_out *t, const cJSON *doc, char hex[SHA256_HEX_SIZE], size_t *ret_size,
                         struct bd_err *err)
{
        _cleanup_free_ char *text = cJSON_PrintUnformatted(doc);
        if (!text)
                return bd_err_set(err, -ENOMEM, "cannot write '%s': out of memory", t->path);
        size_t len = strlen(text);
        sha256_hex_of(text, len, hex);
        _cleanup_free_ char *name = xasprintf(BLOB_DIR "%s", hex);
        *ret_size = len;
        return out_file(t, name, text, len, err);
}

/* The layer, streamed from fd (st_size bytes) and hashed on the way: the
 * header goes out with a placeholder name and is rewritten in place once the
 * digest is known, so the file is read once and the digest is that of the
 * bytes in the archive.  A layer that changes size meanwhile is an error. */
static int out_layer(struct tar_out *t, int fd, const char *layer, uint64_t size, char hex[SHA256_HEX_SIZE],
                     struct bd_err *err)
{
        uint8_t hdr[TAR_BLOCK];
        uint64_t hdr_off = t->off;
        oci_tar_header(hdr, BLOB_DIR "0000000000000000000000000000000000000000000000000000000000000000",
                       size, 0644, '0');
        int r = out_write(t, hdr, sizeof(hdr), err);
        if (r < 0)
                return r;
        _cleanup_free_ uint8_t *buf = xmalloc(COPY_CHUNK);
        struct sha256_ctx c;
        sha256_init(&c);
        for (uint64_t left = size;;) {
                size_t want = left > COPY_CHUNK ? COPY_CHUNK : (size_t)left;
                ssize_t n = read(fd, buf, want ? want : 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return bd_err_set(err, -errno, "cannot read '%s': %s", layer, strerror(errno));
                }
                if ((n == 0 && left > 0) || (n > 0 && left == 0))
                        return bd_err_set(err, -EIO, "'%s' changed size while being read", layer);
                if (n == 0)
                        break;
                sha256_update(&c, buf, (size_t)n);
                r = out_write(t, buf, (size_t)n, err);
                if (r < 0)
                        return r;
                left -= (uint64_t)n;
        }
        uint8_t d[SHA256_DIGEST_SIZE];
        sha256_final(&c, d);
        sha256_hex(d, hex);
        r = out_pad(t, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *name = xasprintf(BLOB_DIR "%s", hex);
        oci_tar_header(hdr, name, size, 0644, '0');
        ssize_t w = pwrite(t->fd, hdr, sizeof(hdr), (off_t)hdr_off);
        if (w < 0)
                return bd_err_set(err, -errno, "cannot write '%s': %s", t->path, strerror(errno));
        if (w != (ssize_t)sizeof(hdr))
                return bd_err_set(err, -EIO, "cannot write '%s': short write", t->path);
        return 0;
}

/* ---- image references ---- */

static bool is_lower_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
        return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* A registry host, with an optional port: "registry.example.com:5000". */
static bool valid_domain(const char *s, size_t n)
{
        size_t host = strcspn(s, ":");
        if (host > n)
                host = n;
        if (host == 0 || !is_alnum(s[0]) || !is_alnum(s[host - 1]))
                return false;
        for (size_t i = 0; i < host; i++)
                if (!is_alnum(s[i]) && s[i] != '.' && s[i] != '-')
                        return false;
        if (host == n)
                return true;
        if (host + 1 == n)
                return false;
        for (size_t i = host + 1; i < n; i++)
                if (s[i] < '0' || s[i] > '9')
                        return false;
        return true;
}

/* A path component: lowercase letters and digits, separated by '.', '_',
 * '__' or dashes, as the distribution spec has it (loosely). */
static bool valid_component(const char *s, size_t n)
{
        if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!is_lower_alnum(s[i]) && !strchr("._-", s[i]))
                        return false;
        return true;
}

static bool valid_tag(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 128 || s[0] == '.' || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!is_alnum(s[i]) && !strchr("_.-", s[i]))
                        return false;
        return true;
}

/* Splits ref into its name and tag ("latest" when there is none), both
 * allocated; -EINVAL when it is no valid name[:tag]. */
static int ref_split(const char *ref, char **ret_name, char **ret_tag)
{
        if (!ref || !*ref)
                return -EINVAL;
        const char *slash = strrchr(ref, '/');
        const char *colon = strrchr(slash ? slash : ref, ':');
        size_t name_len = colon ? (size_t)(colon - ref) : strlen(ref);
        const char *tag = colon ? colon + 1 : "latest";
        if (!valid_tag(tag) || name_len == 0)
                return -EINVAL;
        const char *first_end = memchr(ref, '/', name_len);
        for (const char *p = ref; p < ref + name_len;) {
                const char *end = memchr(p, '/', (size_t)(ref + name_len - p));
                size_t n = end ? (size_t)(end - p) : (size_t)(ref + name_len - p);
                bool domain = p == ref && first_end && (memchr(p, '.', n) || memchr(p, ':', n) ||
                                                        (n == 9 && !memcmp(p, "localhost", 9)));
                if (domain ? !valid_domain(p, n) : !valid_component(p, n))
                        return -EINVAL;
                p += n + (end != NULL);
                if (end && p == ref + name_len)
                        return -EINVAL; /* a trailing '/' */
        }
        *ret_name = xstrndup(ref, name_len);
        *ret_tag = xstrdup(tag);
        return 0;
}

char *oci_ref_full_name(const char *ref)
{
        _cleanup_free_ char *name = NULL, *tag = NULL;
        if (ref_split(ref, &name, &tag) < 0)
                return NULL;
        const char *slash = strchr(name, '/');
        size_t n = slash ? (size_t)(slash - name) : 0;
        bool domain = slash && (memchr(name, '.', n) || memchr(name, ':', n) ||
                                (n == 9 && !memcmp(name, "localhost", 9)));
        if (domain)
                return xasprintf("%s:%s", name, tag);
        return xasprintf("docker.io/%s%s:%s", slash ? "" : "library/", name, tag);
}

/* ---- the JSON documents ---- */

static void add_digest(cJSON *o, const char *key, const char *hex)
{
        _cleanup_free_ char *s = xasprintf("sha256:%s", hex);
        cJSON_AddStringToObject(o, key, s);
}

/* Sizes as exact integers (cJSON's doubles would print 1e+15 one day). */
static void add_size(cJSON *o, uint64_t size)
{
        char s[24];
        snprintf(s, sizeof(s), "%" PRIu64, size);
        cJSON_AddRawToObject(o, "size", s);
}

static cJSON *descriptor(const char *media_type, const char *hex, uint64_t size)
{
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "mediaType", media_type);
        add_digest(d, "digest", hex);
        add_size(d, size);
        return d;
}

static cJSON *config_json(const struct oci_image *img, const char *layer_hex)
{
        cJSON *cfg = cJSON_CreateObject();
        cJSON_AddStringToObject(cfg, "architecture", img->arch ? img->arch : "amd64");
        cJSON *c = cJSON_AddObjectToObject(cfg, "config");
        if (img->env) {
                cJSON *env = cJSON_AddArrayToObject(c, "Env");
                for (const char *const *e = img->env; *e; e++)
                        cJSON_AddItemToArray(env, cJSON_CreateString(*e));
        }
        if (img->labels) {
                cJSON *labels = cJSON_AddObjectToObject(c, "Labels");
                for (const char *const *l = img->labels; l[0] && l[1]; l += 2) {
                        if (cJSON_GetObjectItemCaseSensitive(labels, l[0]))
                                cJSON_DeleteItemFromObjectCaseSensitive(labels, l[0]); /* the last one wins */
                        cJSON_AddStringToObject(labels, l[0], l[1]);
                }
        }
        if (img->created)
                cJSON_AddStringToObject(cfg, "created", img->created);
        cJSON *h = cJSON_CreateObject();
        if (img->created)
                cJSON_AddStringToObject(h, "created", img->created);
        cJSON_AddStringToObject(h, "created_by", "benchd: root file system");
        cJSON_AddItemToArray(cJSON_AddArrayToObject(cfg, "history"), h);
        cJSON_AddStringToObject(cfg, "os", "linux");
        cJSON *rootfs = cJSON_AddObjectToObject(cfg, "rootfs");
        cJSON_AddStringToObject(rootfs, "type", "layers");
        _cleanup_free_ char *diff_id = xasprintf("sha256:%s", layer_hex);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(rootfs, "diff_ids"), cJSON_CreateString(diff_id));
        return cfg;
}

static cJSON *manifest_json(const char *config_hex, uint64_t config_size, const char *layer_hex,
                            uint64_t layer_size)
{
        cJSON *m = cJSON_CreateObject();
        cJSON_AddNumberToObject(m, "schemaVersion", 2);
        cJSON_AddStringToObject(m, "mediaType", MT_MANIFEST);
        cJSON_AddItemToObject(m, "config", descriptor(MT_CONFIG, config_hex, config_size));
        cJSON_AddItemToArray(cJSON_AddArrayToObject(m, "layers"), descriptor(MT_LAYER, layer_hex, layer_size));
        return m;
}

static cJSON *index_json(const char *manifest_hex, uint64_t manifest_size, const char *full_name,
                         const char *tag)
{
        cJSON *idx = cJSON_CreateObject();
        cJSON_AddNumberToObject(idx, "schemaVersion", 2);
        cJSON_AddStringToObject(idx, "mediaType", MT_INDEX);
        cJSON *d = descriptor(MT_MANIFEST, manifest_hex, manifest_size);
        cJSON *a = cJSON_AddObjectToObject(d, "annotations");
        cJSON_AddStringToObject(a, "io.containerd.image.name", full_name);
        cJSON_AddStringToObject(a, "org.opencontainers.image.ref.name", tag);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(idx, "manifests"), d);
        return idx;
}

/* Docker's manifest.json: what `docker load` reads (and podman's docker-archive). */
static cJSON *docker_manifest_json(const char *config_hex, const char *layer_hex, const char *repo_tag)
{
        cJSON *list = cJSON_CreateArray();
        cJSON *m = cJSON_CreateObject();
        _cleanup_free_ char *config = xasprintf(BLOB_DIR "%s", config_hex);
        _cleanup_free_ char *layer = xasprintf(BLOB_DIR "%s", layer_hex);
        cJSON_AddStringToObject(m, "Config", config);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(m, "RepoTags"), cJSON_CreateString(repo_tag));
        cJSON_AddItemToArray(cJSON_AddArrayToObject(m, "Layers"), cJSON_CreateString(layer));
        cJSON_AddItemToArray(list, m);
        return list;
}

/* ---- the archive ---- */

static int write_entries(struct tar_out *t, const struct oci_image *img, int layer_fd, uint64_t layer_size,
                         const char *name, const char *tag, struct bd_err *err)
{
        static const char layout[] = "{\"imageLayoutVersion\":\"1.0.0\"}";
        char layer_hex[SHA256_HEX_SIZE], config_hex[SHA256_HEX_SIZE], manifest_hex[SHA256_HEX_SIZE];
        size_t config_size, manifest_size, index_size;
        int r = out_file(t, "oci-layout", layout, strlen(layout), err);
        if (r == 0)
                r = out_dir(t, "blobs/", err);
        if (r == 0)
                r = out_dir(t, BLOB_DIR, err);
        if (r == 0)
                r = out_layer(t, layer_fd, img->layer_tar, layer_size, layer_hex, err);
        if (r < 0)
                return r;

        _cleanup_json_ cJSON *config = config_json(img, layer_hex);
        r = out_json_blob(t, config, config_hex, &config_size, err);
        if (r < 0)
                return r;
        _cleanup_json_ cJSON *manifest = manifest_json(config_hex, config_size, layer_hex, layer_size);
        r = out_json_blob(t, manifest, manifest_hex, &manifest_size, err);
        if (r < 0)
                return r;

        _cleanup_free_ char *full_name = oci_ref_full_name(img->ref);
        _cleanup_free_ char *repo_tag = xasprintf("%s:%s", name, tag);
        _cleanup_json_ cJSON *index = index_json(manifest_hex, manifest_size, full_name, tag);
        _cleanup_json_ cJSON *docker = docker_manifest_json(config_hex, layer_hex, repo_tag);
        _cleanup_free_ char *index_text = cJSON_PrintUnformatted(index);
        _cleanup_free_ char *docker_text = cJSON_PrintUnformatted(docker);
        if (!index_text || !docker_text)
                return bd_err_set(err, -ENOMEM, "cannot write '%s': out of memory", t->path);
        index_size = strlen(index_text);
        r = out_file(t, "index.json", index_text, index_size, err);
        if (r == 0)
                r = out_file(t, "manifest.json", docker_text, strlen(docker_text), err);
        if (r < 0)
                return r;

        /* the end of the archive: two zero blocks */
        static const uint8_t zero[2 * TAR_BLOCK];
        return out_write(t, zero, sizeof(zero), err);
}

static int check_image(const struct oci_image *img, char **ret_name, char **ret_tag, struct bd_err *err)
{
        if (!img->layer_tar)
                return bd_err_set(err, -EINVAL, "no layer given for the image");
        if (ref_split(img->ref, ret_name, ret_tag) < 0)
                return bd_err_set(err, -EINVAL, "'%s': not a valid image name[:tag]", img->ref ? img->ref : "");
        for (const char *const *e = img->env; e && *e; e++)
                if (!strchr(*e, '=') || **e == '=')
                        return bd_err_set(err, -EINVAL, "environment entry '%s': expected NAME=VALUE", *e);
        size_t n = 0;
        for (const char *const *l = img->labels; l && *l; l++, n++)
                if (n % 2 == 0 && !**l)
                        return bd_err_set(err, -EINVAL, "an image label with an empty name");
        if (n % 2)
                return bd_err_set(err, -EINVAL, "image label '%s' has no value", img->labels[n - 1]);
        return 0;
}

int oci_archive_write(const struct oci_image *img, const char *out_path, struct bd_err *err)
{
        _cleanup_free_ char *name = NULL, *tag = NULL;
        int r = check_image(img, &name, &tag, err);
        if (r < 0)
                return r;

        _cleanup_close_ int layer_fd = open(img->layer_tar, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (layer_fd < 0)
                return bd_err_set(err, -errno, "cannot open '%s': %s", img->layer_tar, strerror(errno));
        struct stat layer_st;
        if (fstat(layer_fd, &layer_st) < 0)
                return bd_err_set(err, -errno, "cannot stat '%s': %s", img->layer_tar, strerror(errno));
        if (!S_ISREG(layer_st.st_mode))
                return bd_err_set(err, -EINVAL, "'%s': not a regular file", img->layer_tar);

        /* rename() would put a file in the place of a device or a FIFO (-o /dev/stdout) */
        struct stat out_st;
        if (stat(out_path, &out_st) == 0 && !S_ISREG(out_st.st_mode))
                return bd_err_set(err, -EINVAL, "cannot write '%s': not a regular file", out_path);

        _cleanup_free_ char *tmp = xasprintf("%s.tmp.XXXXXX", out_path);
        _cleanup_close_ int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return bd_err_set(err, -errno, "cannot create a file next to '%s': %s", out_path,
                                  strerror(errno));
        struct tar_out t = { .fd = fd, .path = out_path };
        r = write_entries(&t, img, layer_fd, (uint64_t)layer_st.st_size, name, tag, err);
        if (r == 0 && (fchmod(fd, 0644) < 0 || fsync(fd) < 0 || close(TAKE_FD(fd)) < 0 ||
                       rename(tmp, out_path) < 0))
                r = bd_err_set(err, -errno, "cannot write '%s': %s", out_path, strerror(errno));
        if (r < 0)
                (void) unlink(tmp);
        return r;
}
