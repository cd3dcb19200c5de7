// Tests arrive with the workload.
