# man/: the manual pages
dist_man_MANS = man/benchctl.1 man/benchctl-weights.1 man/benchd-bind.1 man/benchd-allreduce.1 man/benchd.8 man/benchd-ssd.1 man/benchd-maskrcnn.1 man/benchd-tv-maskrcnn.1
EXTRA_DIST += man/README.md
