// zlib from Debian's zlib1g-dev: deflate with a gzip wrapper for pprof's *.pb.gz files.
#include <zlib.h>
