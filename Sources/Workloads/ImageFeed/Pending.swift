// The ImageFeed workload is built in its own issue; this file keeps the target compiling until then.
