# debian/: binary packages (benchd, benchctl, benchd-trainers).
#   make deb   builds them with dpkg-buildpackage -b from this tree's
#              distribution files, in deb-build/, and leaves the .deb files
#              and a lintian report in deb/
EXTRA_DIST += debian/control debian/rules debian/changelog debian/copyright debian/source/format \
	debian/benchd.install debian/benchctl.install debian/benchd-trainers.install debian/local.mk \
	debian/build-debs.sh
# make deb-cuda  the same with the build profile "cuda": the trainers with
#              the CUDA backend, built against the CUDA installation this
#              tree was configured with (CUDA_DIR) for its GPU architectures
#              (CUDA_ARCH_LIST); the packages in deb-cuda/, for benchctl
#              image build --cuda
.PHONY: deb deb-cuda
deb: distdir
	$(SHELL) $(top_srcdir)/debian/build-debs.sh deb $(distdir) $(top_srcdir) $(VERSION)
deb-cuda: distdir
	@if [ -z "$(CUDA_DIR)" ]; then \
	  echo "make deb-cuda: this tree was configured without CUDA (./configure --with-cuda[=DIR])" >&2; exit 1; fi
	DEB_BUILD_PROFILES=cuda CUDA_HOME="$(CUDA_DIR)" CUDA_ARCH="$(CUDA_ARCH_LIST)" \
	  $(SHELL) $(top_srcdir)/debian/build-debs.sh deb-cuda $(distdir) $(top_srcdir) $(VERSION)
# make deb's and deb-cuda's outputs, and the lock and log of the tests' make deb
clean-local:
	rm -rf deb deb-build deb.tmp deb.lock deb-make.log deb-cuda deb-cuda-build deb-cuda.tmp deb-cuda-make.log
