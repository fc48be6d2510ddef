# SYNOPSIS
#   BD_CHECK_CUDA
#
# DESCRIPTION
#   --with-cuda[=DIR] (default: auto, looking in /usr/local/cuda) finds nvcc, the
#   CUDA runtime, cuDNN, cuBLAS and NCCL.  All of them or the CUDA path is off.
#   --with-cuda-arch=LIST (space or comma separated SM numbers, e.g. "80 90")
#   defaults to the data-centre and common architectures the installed nvcc
#   supports.  Sets HAVE_CUDA, HAVE_NCCL, CUDA_CFLAGS, CUDA_LIBS, NCCL_LIBS,
#   NVCC, NVCC_GENCODE, CUDA_DIR and CUDA_ARCH_LIST (what make deb-cuda
#   builds with) and bd_cuda_summary.
AC_DEFUN([BD_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda[=DIR]], [CUDA toolkit with cuDNN, cuBLAS and NCCL (default: auto, /usr/local/cuda)])],
    [], [with_cuda=auto])
  AC_ARG_WITH([cuda-arch],
    [AS_HELP_STRING([--with-cuda-arch=LIST], [GPU architectures to build for, e.g. "80 90" (default: what nvcc supports)])],
    [], [with_cuda_arch=])
  bd_have_cuda=no
  bd_have_nccl=no
  bd_cuda_summary="no"
  CUDA_CFLAGS=
  CUDA_LIBS=
  NCCL_LIBS=
  NVCC=
  NVCC_GENCODE=
  CUDA_DIR=
  CUDA_ARCH_LIST=
  AS_CASE([$with_cuda],
    [no], [bd_cuda_dir=],
    [yes|auto], [bd_cuda_dir=/usr/local/cuda],
    [bd_cuda_dir=$with_cuda])
  AS_IF([test -n "$bd_cuda_dir"], [
    bd_missing=
    AS_IF([test -x "$bd_cuda_dir/bin/nvcc"], [NVCC="$bd_cuda_dir/bin/nvcc"], [bd_missing="$bd_missing nvcc"])
    bd_cuda_libdir="$bd_cuda_dir/lib64"
    test -d "$bd_cuda_libdir" || bd_cuda_libdir="$bd_cuda_dir/lib"
    bd_save_CPPFLAGS=$CPPFLAGS
    bd_save_LIBS=$LIBS
    bd_save_LDFLAGS=$LDFLAGS
    CPPFLAGS="$CPPFLAGS -I$bd_cuda_dir/include"
    LDFLAGS="$LDFLAGS -L$bd_cuda_libdir"
    for bd_h in cuda_runtime.h cudnn.h cublas_v2.h nccl.h; do
      AC_MSG_CHECKING([for $bd_h in $bd_cuda_dir])
      AS_IF([test -f "$bd_cuda_dir/include/$bd_h"],
        [AC_MSG_RESULT([yes])], [AC_MSG_RESULT([no]); bd_missing="$bd_missing $bd_h"])
    done
    AC_CHECK_LIB([cudart], [cudaMalloc], [:], [bd_missing="$bd_missing libcudart"])
    AC_CHECK_LIB([cudnn], [cudnnCreate], [:], [bd_missing="$bd_missing libcudnn"])
    AC_CHECK_LIB([cublas], [cublasCreate_v2], [:], [bd_missing="$bd_missing libcublas"])
    AC_CHECK_LIB([nccl], [ncclCommInitRank], [bd_have_nccl=yes], [bd_missing="$bd_missing libnccl"])
    CPPFLAGS=$bd_save_CPPFLAGS
    LIBS=$bd_save_LIBS
    LDFLAGS=$bd_save_LDFLAGS
    AS_IF([test -z "$bd_missing"], [
      bd_have_cuda=yes
      CUDA_CFLAGS="-isystem $bd_cuda_dir/include"
      CUDA_LIBS="-L$bd_cuda_libdir -Wl,-rpath,$bd_cuda_libdir -lcudnn -lcublas -lcudart"
      NCCL_LIBS="-L$bd_cuda_libdir -Wl,-rpath,$bd_cuda_libdir -lnccl"
      AS_IF([test -z "$with_cuda_arch"], [
        bd_supported=`$NVCC --list-gpu-arch 2>/dev/null | sed -n 's/^compute_//p' | tr '\n' ' '`
        for bd_a in 70 75 80 86 89 90 100 120; do
          AS_CASE([" $bd_supported "], [*" $bd_a "*], [with_cuda_arch="$with_cuda_arch $bd_a"])
        done
      ])
      with_cuda_arch=`echo $with_cuda_arch | tr ',' ' '`
      for bd_a in $with_cuda_arch; do
        NVCC_GENCODE="$NVCC_GENCODE -gencode arch=compute_$bd_a,code=sm_$bd_a"
      done
      CUDA_DIR=$bd_cuda_dir
      CUDA_ARCH_LIST=`echo $with_cuda_arch`
      bd_cuda_version=`$NVCC --version 2>/dev/null | sed -n 's/.*release \([[0-9.]]*\).*/\1/p'`
      bd_cuda_summary="yes (CUDA $bd_cuda_version in $bd_cuda_dir, cuDNN, cuBLAS, NCCL; arch:$with_cuda_arch)"
    ], [
      AS_IF([test "x$with_cuda" != xauto],
        [AC_MSG_ERROR([CUDA requested but missing in $bd_cuda_dir:$bd_missing])])
      bd_cuda_summary="no (missing in $bd_cuda_dir:$bd_missing)"
      bd_have_nccl=no
    ])
  ], [bd_cuda_summary="no (disabled)"])
  AS_IF([test "x$bd_have_cuda" = xyes], [AC_DEFINE([HAVE_CUDA], [1], [Define if CUDA, cuDNN and cuBLAS are available])])
  AS_IF([test "x$bd_have_nccl" = xyes], [AC_DEFINE([HAVE_NCCL], [1], [Define if NCCL is available])])
  AC_SUBST([CUDA_CFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([NCCL_LIBS])
  AC_SUBST([NVCC])
  AC_SUBST([NVCC_GENCODE])
  AC_SUBST([CUDA_DIR])
  AC_SUBST([CUDA_ARCH_LIST])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$bd_have_cuda" = xyes])
  AM_CONDITIONAL([HAVE_NCCL], [test "x$bd_have_nccl" = xyes])
])
