import WorkloadKit

print(WorkloadCatalog([]).names)
