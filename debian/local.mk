# debian/: binary packages (benchd, benchctl, benchd-trainers).
#   make deb   builds them with dpkg-buildpackage -b from this tree's
#              distribution files, in deb-build/, and leaves the .deb files
#              and a lintian report in deb/
EXTRA_DIST += debian/control debian/rules debian/changelog debian/copyright debian/source/format \
	debian/benchd.install debian/benchctl.install debian/benchd-trainers.install debian/local.mk
.PHONY: deb
deb: distdir
	@for t in dpkg-buildpackage dh; do command -v $$t >/dev/null || \
	  { echo "make deb: $$t is not installed (apt-get install dpkg-dev debhelper)" >&2; exit 1; }; done
	@v=$$(dpkg-parsechangelog -l $(top_srcdir)/debian/changelog -S Version); \
	  if [ "$${v%%-*}" != "$(VERSION)" ]; then \
	    echo "make deb: debian/changelog says $$v, configure.ac says $(VERSION)" >&2; exit 1; fi
	rm -rf deb-build deb.tmp && mkdir deb-build deb.tmp && mv $(distdir) deb-build/
	cd deb-build/$(distdir) && DEB_BUILD_OPTIONS="nocheck parallel=$$(nproc)" \
	  dpkg-buildpackage -b -us -uc > ../build.log 2>&1 || \
	  { tail -20 ../build.log >&2; echo "make deb: dpkg-buildpackage failed, log in deb-build/build.log" >&2; exit 1; }
	mv deb-build/*.deb deb-build/*.buildinfo deb-build/*.changes deb.tmp/
	-command -v lintian >/dev/null && lintian --no-tag-display-limit deb.tmp/*.changes > deb.tmp/lintian.txt 2>&1
	rm -rf deb deb-build && mv deb.tmp deb
	@ls deb/*.deb
# make deb's outputs, and the lock and log of the tests' make deb
clean-local:
	rm -rf deb deb-build deb.tmp deb.lock deb-make.log
