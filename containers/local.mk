# containers/: images of the trainers (need the network and a runtime)
EXTRA_DIST += containers/README.md containers/benchd-trainers.def containers/Dockerfile
.PHONY: container-sif container-docker
container-sif: dist-gzip
	@rt=$$(command -v apptainer || command -v singularity) || \
	  { echo "container-sif: neither apptainer nor singularity is installed" >&2; exit 1; }; \
	$$rt build --build-arg VERSION=$(VERSION) benchd-trainers.sif $(top_srcdir)/containers/benchd-trainers.def
container-docker: dist-gzip
	@command -v docker >/dev/null || { echo "container-docker: docker is not installed" >&2; exit 1; }; \
	docker build --build-arg VERSION=$(VERSION) -t benchd/trainers:$(VERSION) -t benchd/trainers:latest \
	  -f $(top_srcdir)/containers/Dockerfile .
