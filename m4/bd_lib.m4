# SYNOPSIS
#   BD_CHECK_LIB(NAME, DESCRIPTION, HEADER, LIBRARY, FUNCTION, DEBIAN-PACKAGE, [REQUIRED])
#
# DESCRIPTION
#   Looks for an external library through its header and one of its functions.
#   Adds --with-NAME[=yes|no|auto].  Not given (auto): use it when found, say so in
#   the summary otherwise.  yes (or REQUIRED non-empty): stop with the Debian
#   package to install.  no: skip.  On success: AC_DEFINE(HAVE_<NAME>),
#   <NAME>_LIBS substituted, AM_CONDITIONAL(HAVE_<NAME>), and bd_have_<name>=yes.
AC_DEFUN([BD_CHECK_LIB], [
  m4_pushdef([UP], m4_translit([$1], [a-z-], [A-Z_]))
  m4_pushdef([LO], m4_translit([$1], [-], [_]))
  AC_ARG_WITH([$1],
    [AS_HELP_STRING([--with-$1], [use $2 (default: ]m4_ifval([$7], [required], [auto])[)])],
    [], [with_[]LO=m4_ifval([$7], [yes], [auto])])
  bd_have_[]LO=no
  UP[]_LIBS=
  AS_IF([test "x$with_[]LO" != xno], [
    bd_save_LIBS=$LIBS
    AC_CHECK_HEADER([$3], [
      AC_SEARCH_LIBS([$5], [$4], [
        bd_have_[]LO=yes
        AS_IF([test "x$ac_cv_search_$5" != "xnone required"],
              [UP[]_LIBS=$ac_cv_search_$5])
      ])
    ])
    LIBS=$bd_save_LIBS
    AS_IF([test "x$bd_have_[]LO" = xno && test "x$with_[]LO" = xyes],
      [AC_MSG_ERROR([$2 not found ($3, -l$4): install the Debian package '$6'])])
  ])
  AS_IF([test "x$bd_have_[]LO" = xyes],
    [AC_DEFINE([HAVE_]UP, [1], [Define if $2 is available])])
  AC_SUBST(UP[_LIBS])
  AM_CONDITIONAL([HAVE_]UP, [test "x$bd_have_[]LO" = xyes])
  m4_popdef([LO])
  m4_popdef([UP])
])

# BD_PREFER_STATIC(LIB, FUNCTION, EXTRA-LIBS, VARIABLE)
# With --enable-static-sqlite (the default), sets VARIABLE to link LIB from
# its static archive when LIB was found and FUNCTION links that way.
AC_DEFUN([BD_PREFER_STATIC], [
  bd_static_$1=no
  AS_IF([test "x$enable_static_sqlite" = xyes && test "x$bd_have_$1" = xyes], [
    AC_MSG_CHECKING([whether $1 links from lib$1.a])
    bd_save_LIBS=$LIBS
    LIBS="-l:lib$1.a $3 $LIBS"
    AC_LINK_IFELSE([AC_LANG_CALL([], [$2])], [bd_static_$1=yes; $4="-l:lib$1.a $3"])
    LIBS=$bd_save_LIBS
    AC_MSG_RESULT([$bd_static_$1])
  ])
])
