/* urdf_tree.c — the URDF's tree: names to indices, each link's parent joint and child joints;
 * a duplicate name, a missing link and a link with two parents (a closed loop) are refused. */
#include <stdlib.h>
#include <string.h>

#include "tools/armurdf/urdf_internal.h"

/* Name accessors for the sorted indices. */
static const char *link_name(const urdf_robot *r, int i)
{
    return r->link[i].name;
}
static const char *joint_name(const urdf_robot *r, int i)
{
    return r->joint[i].name;
}

typedef struct {
    const urdf_robot *r;
    const char *(*name)(const urdf_robot *, int);
} by_name;

/* qsort_r order: by name, then by index (so the first of two equal names is the earlier). */
static int cmp_index(const void *a, const void *b, void *ctx)
{
    const by_name *k = ctx;
    int ia = *(const int *)a, ib = *(const int *)b;
    int c = strcmp(k->name(k->r, ia), k->name(k->r, ib));
    return c ? c : (ia > ib) - (ia < ib);
}

/* Binary search of name in the sorted index; -1 when absent (or the first of equal names). */
static int find(const urdf_robot *r, const int *sorted, int n,
                const char *(*name)(const urdf_robot *, int), const char *key)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcmp(name(r, sorted[mid]), key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && strcmp(name(r, sorted[lo]), key) == 0 ? sorted[lo] : -1;
}

int urdf_find_link(const urdf_robot *r, const char *name)
{
    return find(r, r->link_by_name, r->n_links, link_name, name);
}

int urdf_find_joint(const urdf_robot *r, const char *name)
{
    return find(r, r->joint_by_name, r->n_joints, joint_name, name);
}

/* Sorts the indices 0..n-1 by name into *out; refuses a name given twice. */
static int sort_names(urdf_robot *r, int n, const char *(*name)(const urdf_robot *, int),
                      const char *what, int *(*out), urdf_error *err)
{
    int *idx = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!idx) return urdf_fail_opt(err, "out of memory");
    for (int i = 0; i < n; i++) idx[i] = i;
    by_name k = {r, name};
    qsort_r(idx, (size_t)n, sizeof *idx, cmp_index, &k);
    *out = idx;
    for (int i = 1; i < n; i++)
        if (strcmp(name(r, idx[i - 1]), name(r, idx[i])) == 0) {
            int first = name == link_name ? r->link[idx[i - 1]].line : r->joint[idx[i - 1]].line;
            int again = name == link_name ? r->link[idx[i]].line : r->joint[idx[i]].line;
            return urdf_fail(err, r->file, again,
                             "<%s name=\"%.100s\">: defined twice (first at line %d)", what,
                             name(r, idx[i]), first);
        }
    return 0;
}

/* One joint's <parent> and <child> to link indices. */
static int resolve_joint(urdf_robot *r, int ji, urdf_error *err)
{
    urdf_joint *j = &r->joint[ji];
    j->parent = urdf_find_link(r, j->parent_name);
    if (j->parent < 0)
        return urdf_fail(err, r->file, j->parent_line,
                         "<joint name=\"%.100s\"> <parent>: no link named '%.100s'", j->name,
                         j->parent_name);
    j->child = urdf_find_link(r, j->child_name);
    if (j->child < 0)
        return urdf_fail(err, r->file, j->child_line,
                         "<joint name=\"%.100s\"> <child>: no link named '%.100s'", j->name,
                         j->child_name);
    if (j->parent == j->child)
        return urdf_fail(err, r->file, j->line,
                         "<joint name=\"%.100s\">: link '%.100s' is its own parent (a closed loop)",
                         j->name, j->child_name);
    urdf_link *c = &r->link[j->child];
    if (c->parent_joint >= 0) {
        const urdf_joint *o = &r->joint[c->parent_joint];
        return urdf_fail(err, r->file, j->line,
                         "<joint name=\"%.100s\">: link '%.100s' already has the parent joint "
                         "'%.100s' (line %d): a link with two parents closes a loop, which a URDF "
                         "tree and armd's serial chain cannot represent",
                         j->name, c->name, o->name, o->line);
    }
    c->parent_joint = ji;
    return 0;
}

int urdf_tree_resolve(urdf_robot *r, urdf_error *err)
{
    if (sort_names(r, r->n_links, link_name, "link", &r->link_by_name, err) ||
        sort_names(r, r->n_joints, joint_name, "joint", &r->joint_by_name, err))
        return -1;
    for (int i = 0; i < r->n_joints; i++)
        if (resolve_joint(r, i, err)) return -1;
    /* child lists in file order: push front from the last joint */
    for (int i = r->n_joints - 1; i >= 0; i--) {
        urdf_link *p = &r->link[r->joint[i].parent];
        r->joint[i].next_sibling = p->first_child;
        p->first_child = i;
    }
    return 0;
}
