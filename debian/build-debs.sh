#!/bin/sh
# debian/build-debs.sh OUT DISTDIR SRCDIR VERSION: the recipe of make deb and
# make deb-cuda (debian/local.mk).  Builds the binary packages from DISTDIR
# (make distdir's copy of the tree, moved away) with dpkg-buildpackage -b in
# OUT-build/, and leaves the .deb files and a lintian report in OUT/ (made
# in OUT.tmp/ and renamed: OUT is whole or absent).  The environment passes
# through: DEB_BUILD_PROFILES, CUDA_HOME, CUDA_ARCH (debian/rules).
set -eu
out=$1 distdir=$2 srcdir=$3 version=$4
for t in dpkg-buildpackage dh dpkg-parsechangelog; do
    command -v "$t" >/dev/null ||
        { echo "make $out: $t is not installed (apt-get install dpkg-dev debhelper)" >&2; exit 1; }
done
v=$(dpkg-parsechangelog -l "$srcdir/debian/changelog" -S Version)
if [ "${v%%-*}" != "$version" ]; then
    echo "make $out: debian/changelog says $v, configure.ac says $version" >&2
    exit 1
fi
rm -rf "$out-build" "$out.tmp"
mkdir "$out-build" "$out.tmp"
mv "$distdir" "$out-build/"
(cd "$out-build/$distdir" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
    dpkg-buildpackage -b -us -uc > ../build.log 2>&1) || {
    tail -20 "$out-build/build.log" >&2
    echo "make $out: dpkg-buildpackage failed, log in $out-build/build.log" >&2
    exit 1
}
mv "$out-build"/*.deb "$out-build"/*.buildinfo "$out-build"/*.changes "$out.tmp/"
if command -v lintian >/dev/null; then
    lintian --no-tag-display-limit "$out.tmp"/*.changes > "$out.tmp/lintian.txt" 2>&1 || :
fi
rm -rf "$out" "$out-build"
mv "$out.tmp" "$out"
ls "$out"/*.deb
