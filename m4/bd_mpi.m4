# SYNOPSIS
#   BD_CHECK_MPI
#
# DESCRIPTION
#   --with-mpi[=MPICC] (default: auto) finds an MPI C compiler wrapper (mpicc) and
#   takes its compile and link flags (Open MPI's --showme, MPICH's -show), so the
#   trainers are built with the project's CC.  Sets HAVE_MPI, MPI_CFLAGS, MPI_LIBS.
AC_DEFUN([BD_CHECK_MPI], [
  AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi[=MPICC]], [MPI for the trainers (default: auto, mpicc on PATH)])],
    [], [with_mpi=auto])
  bd_have_mpi=no
  MPI_CFLAGS=
  MPI_LIBS=
  bd_mpi_summary=no
  AS_IF([test "x$with_mpi" != xno], [
    AS_CASE([$with_mpi], [yes|auto], [AC_PATH_PROG([MPICC], [mpicc])], [MPICC=$with_mpi])
    AS_IF([test -n "$MPICC" && test -x "$MPICC"], [
      MPI_CFLAGS=`$MPICC --showme:compile 2>/dev/null`
      MPI_LIBS=`$MPICC --showme:link 2>/dev/null`
      bd_mpi_kind="Open MPI"
      AS_IF([test -z "$MPI_LIBS"], [
        bd_mpi_kind=MPICH
        MPI_CFLAGS=`$MPICC -compile_info 2>/dev/null | sed 's/^[[^ ]]* //'`
        MPI_LIBS=`$MPICC -link_info 2>/dev/null | sed 's/^[[^ ]]* //'`
      ])
      bd_save_CPPFLAGS=$CPPFLAGS
      bd_save_LIBS=$LIBS
      CPPFLAGS="$CPPFLAGS $MPI_CFLAGS"
      LIBS="$MPI_LIBS $LIBS"
      AC_MSG_CHECKING([whether MPI programs link])
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[MPI_Init(0, 0); MPI_Finalize();]])],
        [bd_have_mpi=yes], [bd_have_mpi=no])
      AC_MSG_RESULT([$bd_have_mpi])
      CPPFLAGS=$bd_save_CPPFLAGS
      LIBS=$bd_save_LIBS
    ])
    AS_IF([test "x$bd_have_mpi" = xyes], [
      bd_mpi_summary="yes ($bd_mpi_kind, $MPICC)"
    ], [
      AS_IF([test "x$with_mpi" != xauto], [AC_MSG_ERROR([MPI not found: install the Debian packages 'libopenmpi-dev openmpi-bin'])])
      bd_mpi_summary="no (install libopenmpi-dev openmpi-bin): trainers and allreduce benchmark not built"
      MPI_CFLAGS=
      MPI_LIBS=
    ])
  ], [bd_mpi_summary="no (disabled)"])
  AS_IF([test "x$bd_have_mpi" = xyes], [AC_DEFINE([HAVE_MPI], [1], [Define if MPI is available])])
  AC_SUBST([MPI_CFLAGS])
  AC_SUBST([MPI_LIBS])
  AM_CONDITIONAL([HAVE_MPI], [test "x$bd_have_mpi" = xyes])
])
