"""The cluster and its resources: the Ray connection, the driver's own Ray, nodes, GPU packing and probes, SLURM."""
