/* urdf_chain.c — which links are the base and the tip, and the joints between them. */
#include <stdlib.h>
#include <string.h>

#include "tools/armurdf/urdf_internal.h"

/* Appends the names of the n links idx[] as "'a', 'b', 'c'" (at most 8, then "and N more"). */
static void list_links(const urdf_robot *r, const int *idx, int n, char *out, size_t len)
{
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < n && k < len; i++) {
        int w = i < 8 ? snprintf(out + k, len - k, "%s'%.60s'", i ? ", " : "", r->link[idx[i]].name)
                      : snprintf(out + k, len - k, " and %d more", n - 8);
        if (w < 0) break;
        k += (size_t)w;
        if (i >= 8) break;
    }
}

/* The base: opt->base, or the only link without a parent joint. */
static int find_base(const urdf_robot *r, const urdf_options *opt, int *roots, urdf_error *err)
{
    if (opt->base) {
        int b = urdf_find_link(r, opt->base);
        if (b < 0)
            return urdf_fail_opt(err, "--base %.100s: %s has no link of that name", opt->base,
                                 r->file);
        return b;
    }
    int n = 0;
    for (int i = 0; i < r->n_links; i++)
        if (r->link[i].parent_joint < 0) roots[n++] = i;
    if (n == 1) return roots[0];
    if (n == 0)
        return urdf_fail(err, r->file, r->link[0].line,
                         "<robot>: no root link: every link has a parent joint (a closed loop)");
    char names[600];
    list_links(r, roots, n, names, sizeof names);
    return urdf_fail(err, r->file, r->link[roots[1]].line,
                     "<robot>: %d root links (links without a parent joint): %s; a URDF has one "
                     "(choose the base with --base LINK)",
                     n, names);
}

/* Marks below[] for every link under base (base included); collects the leaves. Refuses a
 * loop back to the base. */
static int walk_below(const urdf_robot *r, int base, char *below, int *stack, int *leaves,
                      int *n_leaves, urdf_error *err)
{
    int top = 0;
    *n_leaves = 0;
    stack[top++] = base;
    below[base] = 1;
    while (top > 0) {
        int l = stack[--top];
        if (r->link[l].first_child < 0) leaves[(*n_leaves)++] = l;
        for (int j = r->link[l].first_child; j >= 0; j = r->joint[j].next_sibling) {
            int c = r->joint[j].child;
            if (below[c])
                return urdf_fail(err, r->file, r->joint[j].line,
                                 "<joint name=\"%.100s\">: leads back to link '%.100s' (a closed "
                                 "loop)",
                                 r->joint[j].name, r->link[c].name);
            below[c] = 1;
            stack[top++] = c;
        }
    }
    return 0;
}

/* qsort order of link indices (file order). */
static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The tip: opt->tip (under the base), or the only leaf under the base. */
static int find_tip(const urdf_robot *r, const urdf_options *opt, int base, const char *below,
                    int *leaves, int n_leaves, urdf_error *err)
{
    if (opt->tip) {
        int t = urdf_find_link(r, opt->tip);
        if (t < 0)
            return urdf_fail_opt(err, "--tip %.100s: %s has no link of that name", opt->tip,
                                 r->file);
        if (!below[t])
            return urdf_fail_opt(err, "--tip %.100s: the link is not below the base '%.100s'",
                                 opt->tip, r->link[base].name);
        if (t == base)
            return urdf_fail_opt(err, "--tip %.100s: the tip is the base: no joints between them",
                                 opt->tip);
        return t;
    }
    if (n_leaves == 1 && leaves[0] == base)
        return urdf_fail(err, r->file, r->link[base].line,
                         "<link name=\"%.100s\">: the base has no child joints: no arm to import",
                         r->link[base].name);
    if (n_leaves == 1) return leaves[0];
    char names[600];
    /* file order reads better than the walk's */
    qsort(leaves, (size_t)n_leaves, sizeof *leaves, cmp_int);
    list_links(r, leaves, n_leaves, names, sizeof names);
    return urdf_fail_opt(err,
                         "%s: %d leaf links below '%.100s': %s; choose the end of the arm with "
                         "--tip LINK",
                         r->file, n_leaves, r->link[base].name, names);
}

int urdf_chain_find(const urdf_robot *r, const urdf_options *opt, urdf_path *path, urdf_error *err)
{
    memset(path, 0, sizeof *path);
    size_t n = (size_t)r->n_links;
    int *stack = malloc(n * sizeof(int)), *leaves = malloc(n * sizeof(int));
    char *below = calloc(n, 1);
    int rc = -1;
    if (!stack || !leaves || !below) {
        urdf_fail_opt(err, "out of memory");
        goto out;
    }
    int n_leaves;
    if ((path->base = find_base(r, opt, stack, err)) < 0 ||
        walk_below(r, path->base, below, stack, leaves, &n_leaves, err) ||
        (path->tip = find_tip(r, opt, path->base, below, leaves, n_leaves, err)) < 0)
        goto out;
    /* up from the tip: each link below the base has one parent joint */
    for (int l = path->tip; l != path->base; l = r->joint[r->link[l].parent_joint].parent)
        path->n++;
    if (!(path->joint = malloc(sizeof(int) * (size_t)path->n))) {
        urdf_fail_opt(err, "out of memory");
        goto out;
    }
    int k = path->n;
    for (int l = path->tip; l != path->base; l = r->joint[r->link[l].parent_joint].parent)
        path->joint[--k] = r->link[l].parent_joint;
    rc = 0;
out:
    free(stack);
    free(leaves);
    free(below);
    return rc;
}
