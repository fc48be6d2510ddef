/* test-oci.c: client/image/sha256.h against the FIPS 180-4 vectors and sha256sum,
 * and client/image/oci.h: an archive from a small layer, read back header by header
 * (order, modes, owners, mtime, checksums), every blob named by its digest,
 * the manifest, config, index.json and manifest.json pointing at the right
 * digests and sizes, GNU tar reading it, the same bytes twice, base-256
 * sizes, and failures that name the file and leave nothing behind. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "json.h"
#include "oci.h"
#include "sha256.h"
#include "tap.h"

static char dir[] = "/tmp/benchd-test-oci.XXXXXX";


static void test_vectors(void)
{
        static const struct {
                const char *msg, *want;
        } v[] = {
                { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
                { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
                { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
                { "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                  "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
                  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
        };
        char hex[SHA256_HEX_SIZE];
        for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
                sha256_hex_of(v[i].msg, strlen(v[i].msg), hex);
                char what[80];
                snprintf(what, sizeof(what), "sha256 of a %zu-byte message", strlen(v[i].msg));
                is_str(hex, v[i].want, what);
        }

        /* one million 'a', fed 1000 at a time */
        char a[1000];
        memset(a, 'a', sizeof(a));
        struct sha256_ctx c;
        uint8_t d[SHA256_DIGEST_SIZE];
        sha256_init(&c);
        for (int i = 0; i < 1000; i++)
                sha256_update(&c, a, sizeof(a));
        sha256_final(&c, d);
        sha256_hex(d, hex);
        is_str(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", "sha256 of a million 'a'");

        /* any chunking gives the one-shot digest */
        uint8_t data[3000];
        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (uint8_t)(i * 131 + (i >> 5));
        char want[SHA256_HEX_SIZE];
        sha256_hex_of(data, sizeof(data), want);
        int same = 1;
        for (size_t step = 1; step <= 130; step++) {
                sha256_init(&c);
                for (size_t off = 0; off < sizeof(data); off += step)
                        sha256_update(&c, data + off, off + step <= sizeof(data) ? step : sizeof(data) - off);
                sha256_final(&c, d);
                sha256_hex(d, hex);
                same &= strcmp(hex, want) == 0;
        }
        ok(same, "chunked updates (1 to 130 bytes at a time) equal one update");

        /* every length around the padding boundaries, against sha256sum */
        char path[256];
        snprintf(path, sizeof(path), "%s/data", dir);
        int agree = 1, files = 1;
        for (size_t len = 0; len <= 200; len++) {
                if (len > 10 && len % 64 > 2 && len % 64 < 54)
                        continue;
                if (fs_write_new(path, data, len, 0644, NULL) < 0) {
                        files = 0;
                        break;
                }
                uint64_t size = 0;
                char mine[SHA256_HEX_SIZE], cmd[512], theirs[80] = "";
                sha256_hex_of(data, len, mine);
                agree &= sha256_file(path, hex, &size, NULL) == 0 && streq(hex, mine) && size == len;
                snprintf(cmd, sizeof(cmd), "sha256sum '%s'", path);
                FILE *p = popen(cmd, "r");
                if (p) {
                        if (!fgets(theirs, sizeof(theirs), p))
                                theirs[0] = '\0';
                        pclose(p);
                }
                agree &= strncmp(theirs, mine, 64) == 0;
                unlink(path);
        }
        ok(files, "test files written");
        ok(agree, "sha256_update and sha256_file agree with sha256sum at every padding boundary");

        struct bd_err err = { "" };
        snprintf(path, sizeof(path), "%s/missing", dir);
        is_int(sha256_file(path, hex, NULL, &err), -ENOENT, "sha256_file of a missing file fails");
        like(err.msg, path, "naming the file");
}

/* ---- reading an archive back ---- */

struct entry {
        char name[101];
        char type;
        unsigned mode;
        uint64_t size;
        const char *data;
};

static uint64_t octal(const char *f, size_t w)
{
        uint64_t v = 0;
        for (size_t i = 0; i < w && f[i] >= '0' && f[i] <= '7'; i++)
                v = v * 8 + (uint64_t)(f[i] - '0');
        return v;
}

static uint64_t tar_size(const uint8_t *hdr)
{
        if (!(hdr[124] & 0x80))
                return octal((const char *)hdr + 124, 12);
        uint64_t v = 0;
        for (int i = 1; i < 12; i++)
                v = v << 8 | hdr[124 + i];
        return v;
}

static int checksum_ok(const uint8_t *hdr)
{
        unsigned sum = 0;
        for (int i = 0; i < 512; i++)
                sum += i >= 148 && i < 156 ? ' ' : hdr[i];
        return octal((const char *)hdr + 148, 8) == sum;
}

/* Splits an archive into its entries; 0 when every header is sound (ustar,
 * checksum, owner 0:0, mtime 0) and it ends with two zero blocks. */
static int tar_parse(const char *data, size_t len, struct entry *e, size_t max, size_t *ret_n)
{
        size_t off = 0, n = 0;
        static const uint8_t zero[512];
        while (off + 512 <= len) {
                const uint8_t *h = (const uint8_t *)data + off;
                if (!memcmp(h, zero, 512))
                        break;
                if (n == max || !checksum_ok(h) || memcmp(h + 257, "ustar\0" "00", 8) ||
                    octal((const char *)h + 108, 8) || octal((const char *)h + 116, 8) ||
                    octal((const char *)h + 136, 12) || h[136] != '0')
                        return -1;
                memcpy(e[n].name, h, 100);
                e[n].name[100] = '\0';
                e[n].type = (char)h[156];
                e[n].mode = (unsigned)octal((const char *)h + 100, 8);
                e[n].size = tar_size(h);
                e[n].data = data + off + 512;
                off += 512 + (e[n].size + 511) / 512 * 512;
                if (off > len)
                        return -1;
                n++;
        }
        if (off + 1024 > len || memcmp(data + off, zero, 512) || memcmp(data + off + 512, zero, 512))
                return -1;
        *ret_n = n;
        return 0;
}

static const struct entry *find(const struct entry *e, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (streq(e[i].name, name))
                        return &e[i];
        return NULL;
}

static cJSON *parse_entry(const struct entry *e)
{
        return e ? cJSON_ParseWithLength(e->data, e->size) : NULL;
}

/* "sha256:<hex>" -> the blob's entry */
static const struct entry *blob(const struct entry *e, size_t n, const char *digest)
{
        if (!digest || strncmp(digest, "sha256:", 7))
                return NULL;
        char name[128];
        snprintf(name, sizeof(name), "blobs/sha256/%s", digest + 7);
        return find(e, n, name);
}

static const char *str_at(const cJSON *array, int i)
{
        return cJSON_GetStringValue(cJSON_GetArrayItem(array, i));
}

static const char *key_str(const cJSON *o, const char *key)
{
        return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static int run(const char *cmd)
{
        return system(cmd) == 0;
}

static void test_archive(void)
{
        _cleanup_free_ char *root = xasprintf("%s/root", dir);
        _cleanup_free_ char *layer = xasprintf("%s/layer.tar", dir);
        _cleanup_free_ char *out = xasprintf("%s/image.tar", dir);
        _cleanup_free_ char *make_layer = xasprintf(
                 "set -e; mkdir -p '%1$s/etc' '%1$s/bin'; echo 12.7 > '%1$s/etc/debian_version';"
                 " printf '#!/bin/sh\\necho hi\\n' > '%1$s/bin/hi'; chmod 755 '%1$s/bin/hi';"
                 " tar -C '%1$s' --owner=0 --group=0 --numeric-owner -cf '%2$s' .", root, layer);
        if (!ok(run(make_layer), "a layer tar made with tar"))
                return;

        static const char *const env[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                           "BENCHD_IMAGE=1", NULL };
        static const char *const labels[] = { "org.opencontainers.image.version", "0.1.0",
                                              "org.benchd.kind", "trainers", NULL };
        struct oci_image img = {
                .layer_tar = layer,
                .ref = "benchd/trainers:0.1.0",
                .created = "2025-01-02T03:04:05Z",
                .env = env,
                .labels = labels,
                .arch = "amd64",
        };
        struct bd_err err = { "" };
        int r = oci_archive_write(&img, out, &err);
        is_int(r, 0, "oci_archive_write succeeds");
        if (r < 0) {
                printf("# %s\n", err.msg);
                return;
        }
        struct stat st;
        ok(stat(out, &st) == 0 && (st.st_mode & 07777) == 0644 && st.st_size % 512 == 0,
           "the archive is there, mode 0644, whole blocks");

        _cleanup_free_ char *data = NULL, *layer_data = NULL;
        size_t len = 0, layer_len = 0;
        if (fs_read_file(out, 64 << 20, &data, &len, NULL) < 0 ||
            fs_read_file(layer, 64 << 20, &layer_data, &layer_len, NULL) < 0) {
                ok(0, "the archive and the layer read back");
                return;
        }
        struct entry e[16];
        size_t n = 0;
        if (!ok(tar_parse(data, len, e, ARRAY_SIZE(e), &n) == 0,
                "every header is ustar with a good checksum, 0:0 and mtime 0; two zero blocks end it"))
                return;
        is_int(n, 8, "eight entries");
        static const char *const order[] = { "oci-layout", "blobs/", "blobs/sha256/", NULL, NULL, NULL,
                                             "index.json", "manifest.json" };
        int in_order = n == 8, modes = n == 8, named = 1;
        for (size_t i = 0; i < n && i < 8; i++) {
                if (order[i])
                        in_order &= streq(e[i].name, order[i]);
                else
                        in_order &= strncmp(e[i].name, "blobs/sha256/", 13) == 0;
                modes &= e[i].type == '5' ? e[i].mode == 0755 && e[i].size == 0 : e[i].type == '0' && e[i].mode == 0644;
                if (strncmp(e[i].name, "blobs/sha256/", 13) == 0 && e[i].type == '0') {
                        char hex[SHA256_HEX_SIZE];
                        sha256_hex_of(e[i].data, e[i].size, hex);
                        named &= streq(e[i].name + 13, hex);
                }
        }
        ok(in_order, "entries in the fixed order: oci-layout, blobs/, blobs/sha256/, 3 blobs, index.json, "
           "manifest.json");
        ok(modes, "directories 0755, files 0644");
        ok(named, "every blob is named by the sha256 of its content");

        const struct entry *layout = find(e, n, "oci-layout");
        ok(layout && layout->size == 30 && !memcmp(layout->data, "{\"imageLayoutVersion\":\"1.0.0\"}", 30),
           "oci-layout says 1.0.0");

        _cleanup_json_ cJSON *index = parse_entry(find(e, n, "index.json"));
        is_int(json_int(index, "schemaVersion", 0), 2, "index.json: schemaVersion 2");
        const cJSON *mds = json_get(index, "manifests");
        is_int(cJSON_GetArraySize(mds), 1, "index.json: one manifest");
        const cJSON *md = cJSON_GetArrayItem(mds, 0);
        is_str(json_str(md, "mediaType", NULL), "application/vnd.oci.image.manifest.v1+json",
               "of the OCI manifest type");
        const struct entry *me = blob(e, n, json_str(md, "digest", NULL));
        ok(me, "index.json points at a manifest blob");
        ok(me && (uint64_t)json_num(md, "size", -1) == me->size, "with its size");
        const cJSON *ann = json_get(md, "annotations");
        /* (keys with dots: not for json_str's dotted paths) */
        is_str(key_str(ann, "org.opencontainers.image.ref.name"), "0.1.0", "ref.name is the tag");
        is_str(key_str(ann, "io.containerd.image.name"), "docker.io/benchd/trainers:0.1.0",
               "io.containerd.image.name is the full name");

        _cleanup_json_ cJSON *manifest = parse_entry(me);
        is_int(json_int(manifest, "schemaVersion", 0), 2, "manifest: schemaVersion 2");
        is_str(json_str(manifest, "config.mediaType", NULL), "application/vnd.oci.image.config.v1+json",
               "manifest: config media type");
        const struct entry *ce = blob(e, n, json_str(manifest, "config.digest", NULL));
        ok(ce && (uint64_t)json_num(manifest, "config.size", -1) == ce->size, "manifest: the config's digest and size");
        const cJSON *ld = cJSON_GetArrayItem(json_get(manifest, "layers"), 0);
        is_int(cJSON_GetArraySize(json_get(manifest, "layers")), 1, "manifest: one layer");
        is_str(json_str(ld, "mediaType", NULL), "application/vnd.oci.image.layer.v1.tar", "of the uncompressed type");
        const struct entry *le = blob(e, n, json_str(ld, "digest", NULL));
        ok(le && (uint64_t)json_num(ld, "size", -1) == le->size, "manifest: the layer's digest and size");
        ok(le && le->size == layer_len && !memcmp(le->data, layer_data, layer_len), "the layer blob is the layer tar");

        _cleanup_json_ cJSON *config = parse_entry(ce);
        is_str(json_str(config, "architecture", NULL), "amd64", "config: architecture");
        is_str(json_str(config, "os", NULL), "linux", "config: os");
        is_str(json_str(config, "created", NULL), "2025-01-02T03:04:05Z", "config: created");
        is_str(json_str(config, "rootfs.type", NULL), "layers", "config: rootfs type");
        const cJSON *diff = cJSON_GetArrayItem(json_get(config, "rootfs.diff_ids"), 0);
        is_str(cJSON_GetStringValue(diff), json_str(ld, "digest", ""), "config: the diff_id is the layer digest");
        const cJSON *cenv = json_get(config, "config.Env");
        ok(cJSON_GetArraySize(cenv) == 2 && streq(str_at(cenv, 1), "BENCHD_IMAGE=1"),
           "config: Env");
        const cJSON *cl = json_get(config, "config.Labels");
        ok(cJSON_GetArraySize(cl) == 2 && streq(key_str(cl, "org.benchd.kind"), "trainers"),
           "config: Labels");
        is_int(cJSON_GetArraySize(json_get(config, "history")), 1, "config: one history entry");

        _cleanup_json_ cJSON *docker = parse_entry(find(e, n, "manifest.json"));
        const cJSON *dm = cJSON_GetArrayItem(docker, 0);
        ok(cJSON_IsArray(docker) && cJSON_GetArraySize(docker) == 1, "manifest.json: one image");
        ok(ce && streq(json_str(dm, "Config", NULL), ce->name), "manifest.json: Config is the config blob");
        const cJSON *tags = json_get(dm, "RepoTags");
        ok(cJSON_GetArraySize(tags) == 1 && streq(str_at(tags, 0), "benchd/trainers:0.1.0"),
           "manifest.json: RepoTags is the ref");
        const cJSON *layers = json_get(dm, "Layers");
        ok(le && cJSON_GetArraySize(layers) == 1 && streq(str_at(layers, 0), le->name),
           "manifest.json: Layers is the layer blob");

        _cleanup_free_ char *list = xasprintf("tar -tvf '%1$s' >/dev/null 2>'%2$s/tar.err' && ! test -s '%2$s/tar.err'",
                                              out, dir);
        ok(run(list), "GNU tar lists it without a complaint");
        _cleanup_free_ char *extract = xasprintf("mkdir -p '%1$s/x' && tar -C '%1$s/x' -xf '%2$s' &&"
                                                 " cmp -s '%1$s/x/%3$s' '%4$s'",
                                                 dir, out, le ? le->name : "none", layer);
        ok(run(extract), "and extracts the layer blob as it was");

        /* the same inputs give the same bytes */
        _cleanup_free_ char *out2 = xasprintf("%s/image2.tar", dir);
        _cleanup_free_ char *data2 = NULL;
        size_t len2 = 0;
        ok(oci_archive_write(&img, out2, NULL) == 0 && fs_read_file(out2, 64 << 20, &data2, &len2, NULL) == 0 &&
           len2 == len && !memcmp(data, data2, len), "a second archive is byte for byte the same");

        /* a tag-less ref becomes :latest */
        img.ref = "localhost:5000/bench";
        img.env = NULL;
        img.labels = NULL;
        img.created = NULL;
        _cleanup_free_ char *data3 = NULL;
        size_t len3 = 0, n3 = 0;
        struct entry e3[16];
        ok(oci_archive_write(&img, out2, NULL) == 0 && fs_read_file(out2, 64 << 20, &data3, &len3, NULL) == 0 &&
           tar_parse(data3, len3, e3, ARRAY_SIZE(e3), &n3) == 0, "an image without env, labels or time");
        _cleanup_json_ cJSON *docker3 = parse_entry(find(e3, n3, "manifest.json"));
        is_str(str_at(json_get(cJSON_GetArrayItem(docker3, 0), "RepoTags"), 0), "localhost:5000/bench:latest",
               "a ref without a tag gets :latest");
}

/* No temporary (*.tmp.*) and no bad*.tar in the test directory. */
static int no_leftovers(void)
{
        DIR *d = opendir(dir);
        if (!d)
                return 0;
        int clean = 1;
        for (struct dirent *de; (de = readdir(d));)
                if (strstr(de->d_name, ".tmp.") || strncmp(de->d_name, "bad", 3) == 0)
                        clean = 0;
        closedir(d);
        return clean;
}

static void test_errors(void)
{
        char layer[300], out[256];
        snprintf(layer, sizeof(layer), "%s/no-such-layer.tar", dir);
        snprintf(out, sizeof(out), "%s/bad.tar", dir);
        struct oci_image img = { .layer_tar = layer, .ref = "benchd/trainers:0.1.0" };
        struct bd_err err = { "" };
        is_int(oci_archive_write(&img, out, &err), -ENOENT, "a missing layer is an error");
        like(err.msg, layer, "that names the layer");
        ok(access(out, F_OK) < 0 && no_leftovers(), "and leaves no archive and no temporary");

        snprintf(layer, sizeof(layer), "%s/layer.tar", dir);
        static const char *const bad_refs[] = { "", "Benchd/x:1", "benchd/x:", "benchd//x", "benchd/x/", "x@sha256:00",
                                                "bench d", ":1", "benchd/x:-1" };
        int rejected = 1;
        for (size_t i = 0; i < ARRAY_SIZE(bad_refs); i++) {
                img.ref = bad_refs[i];
                rejected &= oci_archive_write(&img, out, &err) == -EINVAL && strstr(err.msg, bad_refs[i]);
        }
        ok(rejected, "invalid refs are rejected, naming the ref");
        img.ref = "benchd/x:1";
        static const char *const odd[] = { "a", "1", "b", NULL };
        img.labels = odd;
        is_int(oci_archive_write(&img, out, &err), -EINVAL, "an odd label list is rejected");
        like(err.msg, "'b'", "naming the label");
        img.labels = NULL;
        static const char *const env[] = { "NOEQUALS", NULL };
        img.env = env;
        is_int(oci_archive_write(&img, out, &err), -EINVAL, "an env entry without '=' is rejected");
        img.env = NULL;

        char missing_dir[300];
        snprintf(missing_dir, sizeof(missing_dir), "%s/none/bad.tar", dir);
        is_int(oci_archive_write(&img, missing_dir, &err), -ENOENT, "an output in a missing directory fails");
        like(err.msg, missing_dir, "naming the output");
        is_int(oci_archive_write(&img, "/dev/null", &err), -EINVAL, "an output that is no regular file is refused");
        struct stat st;
        ok(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode), "and stays what it was");
        ok(access(out, F_OK) < 0 && no_leftovers(), "nothing is left behind by any of them");

        static const struct {
                const char *ref, *want;
        } names[] = {
                { "ubuntu", "docker.io/library/ubuntu:latest" },
                { "benchd/x:1", "docker.io/benchd/x:1" },
                { "registry.example.com:5000/a/b:v2", "registry.example.com:5000/a/b:v2" },
                { "localhost/a", "localhost/a:latest" },
        };
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                _cleanup_free_ char *full = oci_ref_full_name(names[i].ref);
                is_str(full, names[i].want, names[i].ref);
        }
        ok(!oci_ref_full_name("Bad/Name"), "no full name for a bad ref");
}

static void test_header(void)
{
        uint8_t h[512];
        oci_tar_header(h, "blobs/sha256/x", 1000, 0644, '0');
        ok(checksum_ok(h) && !memcmp(h + 124, "00000001750", 12) && !memcmp(h + 100, "0000644", 8),
           "a small size in octal");
        uint64_t top = (UINT64_C(1) << 33) - 1;
        oci_tar_header(h, "f", top, 0644, '0');
        ok(checksum_ok(h) && !memcmp(h + 124, "77777777777", 12), "8 GiB - 1 still in octal");
        uint64_t big = (UINT64_C(9) << 30) + 12345;
        oci_tar_header(h, "f", big, 0644, '0');
        ok(checksum_ok(h) && h[124] == 0x80 && tar_size(h) == big, "9 GiB in base-256");

        /* GNU tar reads a base-256 size: a sparse archive of one 9 GiB entry */
        char path[256], cmd[512];
        snprintf(path, sizeof(path), "%s/big.tar", dir);
        oci_tar_header(h, "big", big, 0644, '0');
        uint64_t end = 512 + (big + 511) / 512 * 512;
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int made = fd >= 0 && write(fd, h, 512) == 512 && ftruncate(fd, (off_t)(end + 1024)) == 0;
        if (fd >= 0)
                close(fd);
        if (made) {
                snprintf(cmd, sizeof(cmd), "tar --numeric-owner -tvf '%s' 2>&1 | grep -q ' %llu .* big$'", path,
                         (unsigned long long)big);
                ok(run(cmd), "GNU tar reads the base-256 size");
        } else {
                ok(1, "# SKIP no sparse files here");
        }
        unlink(path);
}

int main(void)
{
        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        test_vectors();
        test_header();
        test_archive();
        test_errors();
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                printf("# cannot remove %s\n", dir);
        return done_testing();
}
