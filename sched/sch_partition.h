/*
 * sch_partition — contiguous stage partitions of a layer list.
 *
 * Stage s holds layers [first[s], first[s+1]); first[0] = 0 and
 * first[n_stages] = n_layers; every stage has at least one layer.
 * Ownership: heap object, sch_partition_free (NULL ok). Cost: O(stages).
 */
#ifndef SCH_PARTITION_H
#define SCH_PARTITION_H

struct sch_partition {
    int n_stages;
    int n_layers;
    int *first; /* [n_stages + 1] */
};

struct sch_partition *sch_partition_new(int n_stages, int n_layers);
void sch_partition_free(struct sch_partition *p);
/* A copy of p (NULL when out of memory). */
struct sch_partition *sch_partition_copy(const struct sch_partition *p);
/* Whether a and b cut the same layers into the same stages. */
int sch_partition_equal(const struct sch_partition *a, const struct sch_partition *b);
/* Equal layer counts; the first n_layers % n_stages stages get one more. */
int sch_partition_uniform(int n_stages, int n_layers, struct sch_partition **out);
/* GPipe's own partitioner as its library implements it (tensorflow/lingvo,
 * lingvo/core/gpipe.py PartitionSequentialLayers: "partition layers so
 * that each partition costs roughly the same flops"): with cost[i] each
 * layer's estimated cost (Lingvo: its forward FLOPs, FPropMeta) and c_i the
 * running total through layer i, layer i goes to stage
 * min(floor(c_i / total x n_stages), n_stages - 1). Where that leaves a
 * stage empty (a layer dearer than a stage's share; Lingvo would make it
 * an empty stage), each cut is pushed right to at least one past the cut
 * before it, then back left to at most n_layers - (n_stages - s), so every
 * stage has a layer. All costs 0: uniform. PS_EINVAL for a negative or
 * non-finite cost or total. */
int sch_partition_lingvo(int n_stages, const double *cost, int n_layers,
                         struct sch_partition **out);
/* "3,5,4,4" (layers per stage, must sum to n_layers and have n_stages
 * entries) or "uniform". */
int sch_partition_parse(const char *spec, int n_stages, int n_layers,
                        struct sch_partition **out);
/* Writes "3,5,4,4" into buf; what does not fit in n bytes ends at an entry,
 * as "3,5,... (1024 stages)", never in the middle of a number. */
void sch_partition_format(const struct sch_partition *p, char *buf, int n);
int sch_partition_layers(const struct sch_partition *p, int s);

#endif
