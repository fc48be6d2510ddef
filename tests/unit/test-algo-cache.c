/* test-algo-cache.c: the on-disk convolution algorithm cache
 * (trainer/ops/algo-cache.h): its file's text, the file name per GPU model
 * and library, other devices' files, malformed files named by line, the
 * merge of a save with what another rank wrote meanwhile. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "algo-cache.h"
#include "fs.h"
#include "macro.h"
#include "tap.h"

static int parse(struct bd_algo_cache *c, const char *text, bool *other, struct bd_err *err)
{
        return bd_algo_cache_parse(c, text, strlen(text), "f.txt", other, err);
}

/* err's message after parsing text into an empty H200 cache, or "(parsed)" */
static const char *bad(const char *text)
{
        static struct bd_err err;
        struct bd_algo_cache c;
        bd_algo_cache_init(&c, "NVIDIA H200", 91002);
        int r = parse(&c, text, NULL, &err);
        size_t n = c.n;
        bd_algo_cache_free(&c);
        if (r == 0)
                return "(parsed)";
        if (r != -EINVAL || n != 0)
                return "(wrong status, or entries kept)";
        return err.msg;
}

int main(void)
{
        struct bd_err err = { "" };
        struct bd_algo_cache c;
        bd_algo_cache_init(&c, "NVIDIA H200", 91002);

        /* set, get, format, parse back */
        ok(bd_algo_cache_set(&c, 0xfedcba9876543210ULL, 1, 4, 3) == 0, "set an entry");
        ok(bd_algo_cache_set(&c, 0x10ULL, 6, 0, 5) == 0, "  and another");
        ok(bd_algo_cache_set(&c, 0x10ULL, 7, 1, 0) == 0, "  the same key again replaces it");
        is_int(c.n, 2, "  two entries");
        is_int(bd_algo_cache_set(&c, 0x11ULL, 64, 0, 0), -EINVAL, "an algorithm beyond 63: -EINVAL");
        is_int(bd_algo_cache_set(&c, 0x11ULL, 0, -1, 0), -EINVAL, "  a negative one too");
        const struct bd_algo_entry *e = bd_algo_cache_get(&c, 0x10ULL);
        ok(e && e->fwd == 7 && e->bwd_data == 1 && e->bwd_filter == 0, "get: the last set");
        ok(!bd_algo_cache_get(&c, 0x12ULL), "get: NULL for a key not there");
        char *text = bd_algo_cache_format(&c);
        is_str(text,
               "benchd-conv-algos 1\ndevice NVIDIA H200\nlibrary 91002\n"
               "# key (a shape, its types and the math allowed)  forward  backward-data  backward-filter\n"
               "0000000000000010 7 1 0\nfedcba9876543210 1 4 3\n",
               "format: the header and the entries sorted by key");
        struct bd_algo_cache d;
        bd_algo_cache_init(&d, "NVIDIA H200", 91002);
        bool other = true;
        ok(parse(&d, text, &other, &err) == 0 && !other, "the formatted text parses, same device and library");
        ok(d.n == 2 && bd_algo_cache_get(&d, 0xfedcba9876543210ULL) &&
                   bd_algo_cache_get(&d, 0xfedcba9876543210ULL)->bwd_data == 4,
           "  with the same entries");
        is_int(d.added, 0, "  a load adds nothing to save");
        bd_algo_cache_free(&d);

        /* another GPU model or library: nothing taken */
        bd_algo_cache_init(&d, "NVIDIA A100-SXM4-80GB", 91002);
        ok(parse(&d, text, &other, &err) == 0 && other && d.n == 0, "another device's file: parsed, nothing taken");
        bd_algo_cache_free(&d);
        bd_algo_cache_init(&d, "NVIDIA H200", 90100);
        ok(parse(&d, text, &other, &err) == 0 && other && d.n == 0, "another library's file: the same");
        bd_algo_cache_free(&d);
        free(text);

        /* blank lines, comments, CRLF and spaces */
        bd_algo_cache_init(&d, "NVIDIA H200", 91002);
        ok(parse(&d, "benchd-conv-algos 1\r\n\r\n# a comment\r\ndevice  NVIDIA H200\r\nlibrary 91002\r\n"
                     "  00000000000000ab\t2  3 4\r\n",
                 &other, &err) == 0 &&
                   d.n == 1 && bd_algo_cache_get(&d, 0xab)->bwd_filter == 4,
           "blank lines, comments, CRLF, tabs and runs of blanks");
        bd_algo_cache_free(&d);

        /* malformed files: one line naming the file and line, nothing kept */
        is_str(bad(""), "f.txt:1: not a convolution algorithm cache (no 'benchd-conv-algos 1' line)", "empty");
        is_str(bad("benchd-conv-algos 2\n"), "f.txt:1: not a convolution algorithm cache (no 'benchd-conv-algos 1' line)",
               "another format version");
        is_str(bad("benchd-conv-algos 1\nlibrary 1\n"), "f.txt: no device line", "no device");
        is_str(bad("benchd-conv-algos 1\ndevice x\n"), "f.txt: no library line", "no library");
        is_str(bad("benchd-conv-algos 1\n0000000000000001 1 1 1\ndevice x\nlibrary 1\n"),
               "f.txt:2: an entry before the device and library lines", "an entry before the header");
        is_str(bad("benchd-conv-algos 1\ndevice x\ndevice y\nlibrary 1\n"), "f.txt:3: a second device line",
               "two device lines");
        is_str(bad("benchd-conv-algos 1\ndevice x\nlibrary 1\nlibrary 2\n"), "f.txt:4: a second library line",
               "two library lines");
        is_str(bad("benchd-conv-algos 1\ndevice x\nlibrary 1x\n"), "f.txt:3: library: a version number",
               "a library that is no number");
        const char *entry_err = "f.txt:4: an entry is 16 hex digits and three algorithm numbers of 0 to 63";
        const char *entries[] = {
                "000000000000001 1 1 1",        /* 15 digits */
                "00000000000000010 1 1 1",      /* 17 */
                "000000000000000G 1 1 1",       /* not hex */
                "000000000000000A 1 1 1",       /* upper case: not what format writes */
                "0000000000000001 1 1",         /* two algorithms */
                "0000000000000001 1 1 1 1",     /* four */
                "0000000000000001 1 1 64",      /* beyond 63 */
                "0000000000000001 1 1 -1",
                "0000000000000001 1 1 99999999999999999999",
                "0000000000000001 1x 1 1",
        };
        for (size_t i = 0; i < ARRAY_SIZE(entries); i++) {
                char t[256], what[128];
                snprintf(t, sizeof(t), "benchd-conv-algos 1\ndevice x\nlibrary 1\n%s\n", entries[i]);
                snprintf(what, sizeof(what), "a bad entry: '%s'", entries[i]);
                is_str(bad(t), entry_err, what);
        }
        is_str(bad("benchd-conv-algos 1\ndevice x\nlibrary 1\n0000000000000001 1 1 1\n0000000000000002 1 1 1\0\n"),
               "(parsed)", "the text ends at len (a NUL beyond it is not read)");
        {
                const char t[] = "benchd-conv-algos 1\ndevice x\0y\nlibrary 1\n";
                struct bd_algo_cache z;
                bd_algo_cache_init(&z, "x", 1);
                ok(bd_algo_cache_parse(&z, t, sizeof(t) - 1, "f.txt", NULL, &err) == -EINVAL, "a NUL byte: -EINVAL");
                is_str(err.msg, "f.txt: not a text file (a NUL byte)", "  saying so");
                bd_algo_cache_free(&z);
        }

        /* the file name: per device and library, the name made safe */
        char *f = bd_algo_cache_file(&c, "/cache");
        is_str(f, "/cache/conv-algos-NVIDIA_H200-91002.txt", "the file of H200 and cuDNN 91002");
        free(f);
        bd_algo_cache_init(&d, "Tesla V100-SXM2-32GB/../x", 8907);
        f = bd_algo_cache_file(&d, "d");
        is_str(f, "d/conv-algos-Tesla_V100-SXM2-32GB_.._x-8907.txt", "  a '/' in the name cannot leave the directory");
        free(f);

        /* save and load: a missing file is empty; a save merges with what
         * another rank saved since; nothing added: nothing written */
        char dir[] = "/tmp/test-algo-cache.XXXXXX";
        ok(mkdtemp(dir) != NULL, "a scratch directory");
        char *path = xasprintf("%s/sub/conv.txt", dir);
        ok(bd_algo_cache_load(&d, path, &err) == 0 && d.n == 0, "load: a missing file is an empty cache");
        bd_algo_cache_free(&d);
        bd_algo_cache_init(&d, "NVIDIA H200", 91002);
        ok(bd_algo_cache_save(&d, path, &err) == 0 && access(path, F_OK) < 0, "save with nothing added: no file");
        ok(bd_algo_cache_set(&d, 0x20, 1, 1, 1) == 0 && bd_algo_cache_set(&d, 0x10, 2, 2, 2) == 0, "rank A measures two");
        ok(bd_algo_cache_save(&d, path, &err) == 0, "  saves (the directory made)");
        struct bd_algo_cache b;
        bd_algo_cache_init(&b, "NVIDIA H200", 91002);
        ok(bd_algo_cache_set(&b, 0x30, 3, 3, 3) == 0 && bd_algo_cache_set(&b, 0x10, 5, 5, 5) == 0,
           "rank B, loaded before A saved, measures two");
        ok(bd_algo_cache_save(&b, path, &err) == 0, "  saves after A");
        struct bd_algo_cache l;
        bd_algo_cache_init(&l, "NVIDIA H200", 91002);
        ok(bd_algo_cache_load(&l, path, &err) == 0, "the next run loads the file");
        ok(l.n == 3 && bd_algo_cache_get(&l, 0x20) && bd_algo_cache_get(&l, 0x30) &&
                   bd_algo_cache_get(&l, 0x10)->fwd == 5,
           "  A's and B's entries, B's where both measured");
        bd_algo_cache_free(&l);
        /* a file of another device is written over by a save */
        bd_algo_cache_init(&l, "NVIDIA A100", 91002);
        ok(bd_algo_cache_set(&l, 0x40, 4, 4, 4) == 0 && bd_algo_cache_save(&l, path, &err) == 0,
           "a save for another device over the file");
        bd_algo_cache_free(&l);
        bd_algo_cache_init(&l, "NVIDIA A100", 91002);
        ok(bd_algo_cache_load(&l, path, &err) == 0 && l.n == 1 && bd_algo_cache_get(&l, 0x40),
           "  holds that device's entry only");
        bd_algo_cache_free(&l);
        /* a malformed file: load names it; a save writes over it */
        FILE *fp = fopen(path, "w");
        if (fp) {
                fputs("benchd-conv-algos 1\ndevice NVIDIA A100\nlibrary 91002\nnonsense\n", fp);
                fclose(fp);
        }
        bd_algo_cache_init(&l, "NVIDIA A100", 91002);
        is_int(bd_algo_cache_load(&l, path, &err), -EINVAL, "load of a malformed file: -EINVAL");
        like(err.msg, ":4: an entry is 16 hex digits", "  naming its line");
        ok(bd_algo_cache_set(&l, 0x50, 0, 0, 0) == 0 && bd_algo_cache_save(&l, path, &err) == 0,
           "  a save writes over it");
        bd_algo_cache_free(&l);
        bd_algo_cache_init(&l, "NVIDIA A100", 91002);
        ok(bd_algo_cache_load(&l, path, &err) == 0 && l.n == 1, "  which then loads");
        bd_algo_cache_free(&l);
        /* a save where the directory cannot be made */
        char *blocked = xasprintf("%s/file/conv.txt", dir), *file = xasprintf("%s/file", dir);
        fp = fopen(file, "w");
        if (fp)
                fclose(fp);
        is_int(bd_algo_cache_save(&b, blocked, &err), -ENOTDIR, "a save under a file: -ENOTDIR");
        like(err.msg, "cannot create its directory", "  saying so");
        unlink(file);
        unlink(path);
        char *sub = xasprintf("%s/sub", dir);
        rmdir(sub);
        rmdir(dir);
        free(sub);
        free(blocked);
        free(file);
        free(path);
        bd_algo_cache_free(&b);
        bd_algo_cache_free(&d);
        bd_algo_cache_free(&c);
        return done_testing();
}
