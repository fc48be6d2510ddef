/* image.h: what benchctl's container images record about themselves
 * (cmd-image.c writes it, benchctl image info and the launch scripts read
 * it). */
#ifndef BD_IMAGE_H
#define BD_IMAGE_H

/* The image's record: JSON, in the image's root file system */
#define IMAGE_INFO_PATH "/usr/share/benchd/image.json"
/* ...and as a label of an OCI image's configuration */
#define IMAGE_INFO_LABEL "io.benchd.image-info"
/* The name of an OCI image when none is given (tag latest), as DSS8440.json expects */
#define IMAGE_DEFAULT_REPO "benchd/trainers"
/* image build removes cache files unused for this long */
#define IMAGE_CACHE_DAYS 30

#endif
