# SYNOPSIS
#   BD_CHECK_FUZZING
#
# DESCRIPTION
#   --enable-fuzzing builds the libFuzzer harnesses of tests/fuzz/ (make fuzz).
#   It needs a compiler that links -fsanitize=fuzzer (clang): configure stops
#   with an error naming CC=clang otherwise.  When on, every object of the
#   build is compiled with FUZZ_CFLAGS (coverage for libFuzzer, AddressSanitizer,
#   UBSan that aborts), added to SAN_CFLAGS, and the harnesses link with
#   FUZZ_LDFLAGS (libFuzzer's main).  Sets ENABLE_FUZZING and bd_fuzz_summary.
AC_DEFUN([BD_CHECK_FUZZING], [
  AC_ARG_ENABLE([fuzzing],
    [AS_HELP_STRING([--enable-fuzzing], [build the libFuzzer harnesses of tests/fuzz (make fuzz; needs clang)])],
    [], [enable_fuzzing=no])
  FUZZ_CFLAGS=
  FUZZ_LDFLAGS=
  bd_fuzz_summary="no (--enable-fuzzing with CC=clang: make fuzz)"
  AS_IF([test "x$enable_fuzzing" = xyes], [
    AC_MSG_CHECKING([whether $CC links libFuzzer harnesses (-fsanitize=fuzzer)])
    bd_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -fsanitize=fuzzer,address,undefined"
    dnl no main(): libFuzzer brings its own
    AC_LINK_IFELSE([AC_LANG_SOURCE([[
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return size && data[0] == 'x'; }
]])], [bd_fuzz_ok=yes], [bd_fuzz_ok=no])
    CFLAGS=$bd_save_CFLAGS
    AC_MSG_RESULT([$bd_fuzz_ok])
    AS_IF([test "x$bd_fuzz_ok" != xyes],
      [AC_MSG_ERROR([--enable-fuzzing needs a compiler with libFuzzer (-fsanitize=fuzzer): configure with CC=clang (Debian: apt-get install clang)])])
    dnl instrumented loops do not vectorise: clang says so of every '#pragma omp simd' (-Wpass-failed)
    FUZZ_CFLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -Wno-pass-failed"
    FUZZ_LDFLAGS="-fsanitize=fuzzer"
    SAN_CFLAGS="$SAN_CFLAGS $FUZZ_CFLAGS"
    bd_fuzz_summary="yes (make fuzz; bench/fuzz.sh runs them)"
  ])
  AC_SUBST([FUZZ_CFLAGS])
  AC_SUBST([FUZZ_LDFLAGS])
  AM_CONDITIONAL([ENABLE_FUZZING], [test "x$enable_fuzzing" = xyes])
])
