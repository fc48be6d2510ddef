# trainer/torchvision/: benchd-tv-maskrcnn, torchvision's Mask R-CNN trained
# with benchd-maskrcnn's command line and logs (Python 3: Debian's
# python3-torch and python3-torchvision at run time, nothing at build time).
# The program is its source with the package's version put in.
bin_SCRIPTS += benchd-tv-maskrcnn
CLEANFILES += benchd-tv-maskrcnn
EXTRA_DIST += trainer/torchvision/benchd-tv-maskrcnn.py
benchd-tv-maskrcnn: $(top_srcdir)/trainer/torchvision/benchd-tv-maskrcnn.py Makefile
	$(AM_V_GEN)sed -e 's|[@]PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
		$(top_srcdir)/trainer/torchvision/benchd-tv-maskrcnn.py > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@
