# systems/: the bundled system configurations
systemsdir = $(pkgdatadir)/systems
dist_systems_DATA = \
	systems/DSS8440.json systems/C4140.json systems/2xC4140.json systems/4xC4140.json \
	systems/p3dn.json systems/24xp3dn.json systems/local.json systems/4xlocal.json \
	systems/4xlocal-ch.json systems/local-podman.json systems/24xlocal.json systems/p3.16xlarge.json
EXTRA_DIST += systems/README.md
baselinesdir = $(pkgdatadir)/systems/baselines
dist_baselines_DATA = systems/baselines/local.json
