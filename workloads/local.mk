# workloads/: the bundled workload files (workloads/README.md), built into
# every program (lib/local.mk makes lib/bd-workloads.c of them).  The
# workloads are listed in this order: 'benchctl workloads', the schema, the
# sections of 'benchctl show'; the abstract bases after them.
BD_WORKLOAD_FILES = workloads/ssd.json workloads/maskrcnn.json workloads/allreduce.json workloads/fasterrcnn.json \
	workloads/torchvision-maskrcnn.json \
	workloads/gluoncv-maskrcnn.json workloads/ngc-maskrcnn.json workloads/mxnet-ssd.json workloads/gluoncv-fasterrcnn.json \
	workloads/mila-convnet.json workloads/mila-ssd.json \
	workloads/benchd-trainer.json workloads/benchd-common.json
EXTRA_DIST += workloads/README.md workloads/local.mk $(BD_WORKLOAD_FILES)
