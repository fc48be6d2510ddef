# etc/: benchd's configuration and systemd units
benchdconfdir = $(sysconfdir)/benchd
dist_benchdconf_DATA = etc/benchd.conf
systemdunitdir = $(SYSTEMD_UNIT_DIR)
systemdunit_DATA = etc/benchd.service etc/benchd.socket
EXTRA_DIST += etc/README.md etc/benchd.service.in etc/benchd.socket.in
CLEANFILES += etc/benchd.service etc/benchd.socket
edit_unit = $(MKDIR_P) etc && sed -e 's|[@]bindir[@]|$(bindir)|g' -e 's|[@]sysconfdir[@]|$(sysconfdir)|g'
etc/benchd.service: $(top_srcdir)/etc/benchd.service.in Makefile
	$(AM_V_GEN)$(edit_unit) $(top_srcdir)/etc/benchd.service.in > $@.tmp && mv $@.tmp $@
etc/benchd.socket: $(top_srcdir)/etc/benchd.socket.in Makefile
	$(AM_V_GEN)$(edit_unit) $(top_srcdir)/etc/benchd.socket.in > $@.tmp && mv $@.tmp $@
