/*
 * urdf_parse.c — URDF text into urdf_robot with libexpat. Only <robot> and the elements armd
 * needs are read: <link> with <inertial> (<origin>, <mass>, <inertia>), <joint> with <origin>,
 * <parent>, <child>, <axis>, <limit>, <dynamics>, <mimic>. Every other element and everything
 * inside it (visual, collision, material, transmission, gazebo, ...) is skipped; a <joint>
 * inside <transmission> is therefore not a joint. Each element keeps the line of its start tag.
 */
#include <ctype.h>
#include <expat.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/armurdf/urdf_internal.h"

typedef enum { K_SKIP = 0, K_ROBOT, K_LINK, K_JOINT, K_INERTIAL, K_LEAF } kind;

#define DEPTH_KNOWN 4 /* robot > link > inertial > mass: deeper elements are never read */
#define RULES_MAX   8

typedef struct parse_ctx parse_ctx;
typedef void (*elem_fn)(parse_ctx *c, const XML_Char **attrs, int line);

/* What an element is, where it may appear (its parent's table) and who reads it. */
typedef struct {
    const char *name;
    kind k;
    elem_fn fn;
} elem_rule;

struct parse_ctx {
    XML_Parser xp;
    urdf_robot *r;
    urdf_error *err;
    bool failed;
    int depth;                  /* open elements */
    int skip_from;              /* > 0: inside a skipped element opened at this depth */
    kind open[DEPTH_KNOWN + 1]; /* the kind of the open element at each depth */
    int open_line[DEPTH_KNOWN + 1];
    int seen[DEPTH_KNOWN + 1][RULES_MAX]; /* line of each child rule met so far, 0 = none */
    const char *elem;                     /* the element being read, for messages */
    int cap_links, cap_joints;
};

/* Records the first error (FILE:LINE: <owner> <elem>: message) and stops the parser. */
static void fail(parse_ctx *c, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(parse_ctx *c, int line, const char *fmt, ...)
{
    if (c->failed) return;
    char msg[768], owner[192] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kind k = c->depth >= 2 ? c->open[2] : K_SKIP;
    const char *owner_name = NULL;
    if (k == K_LINK && c->r->n_links > 0) owner_name = c->r->link[c->r->n_links - 1].name;
    if (k == K_JOINT && c->r->n_joints > 0) owner_name = c->r->joint[c->r->n_joints - 1].name;
    const char *what = k == K_LINK ? "link" : "joint";
    if ((k == K_LINK || k == K_JOINT) && owner_name)
        snprintf(owner, sizeof owner, "<%s name=\"%.100s\">", what, owner_name);
    else if (k == K_LINK || k == K_JOINT)
        snprintf(owner, sizeof owner, "<%s>", what);
    const char *inner = c->depth >= 4 ? " <inertial>" : "";
    if (owner[0] && c->depth >= 3)
        urdf_fail(c->err, c->r->file, line, "%s%s <%s>: %s", owner, inner, c->elem, msg);
    else if (owner[0])
        urdf_fail(c->err, c->r->file, line, "%s: %s", owner, msg);
    else
        urdf_fail(c->err, c->r->file, line, "<%s>: %s", c->elem, msg);
    c->failed = true;
    XML_StopParser(c->xp, XML_FALSE);
}

/* The value of attribute name, or NULL. */
static const char *attr(const XML_Char **attrs, const char *name)
{
    for (int i = 0; attrs[i]; i += 2)
        if (strcmp(attrs[i], name) == 0) return attrs[i + 1];
    return NULL;
}

/* The message for text that is not n numbers. */
static void not_numbers(parse_ctx *c, int line, const char *key, const char *text, int n)
{
    if (n == 1)
        fail(c, line, "%s: expected a number, got '%.60s'", key, text);
    else
        fail(c, line, "%s: expected %d numbers, got '%.60s'", key, n, text);
}

/* Parses exactly n finite numbers separated by white space from attribute key's text. */
static bool numbers(parse_ctx *c, int line, const char *key, const char *text, int n, double *out)
{
    const char *p = text;
    for (int i = 0; i < n; i++) {
        char *end;
        while (isspace((unsigned char)*p)) p++;
        double v = strtod(p, &end);
        if (end == p || (*end && !isspace((unsigned char)*end))) {
            not_numbers(c, line, key, text, n);
            return false;
        }
        if (!isfinite(v)) {
            fail(c, line, "%s: '%.*s' is not a finite number", key,
                 (int)(end - p < 40 ? end - p : 40), p);
            return false;
        }
        out[i] = v;
        p = end;
    }
    while (isspace((unsigned char)*p)) p++;
    if (*p) {
        not_numbers(c, line, key, text, n);
        return false;
    }
    return true;
}

/* An optional numeric attribute: true when present and valid (then *out is set). */
static bool opt_number(parse_ctx *c, const XML_Char **attrs, int line, const char *key, double *out)
{
    const char *v = attr(attrs, key);
    return v && numbers(c, line, key, v, 1, out);
}

/* A required name attribute: non-empty, no control characters. NULL after an error. */
static char *name_attr(parse_ctx *c, const XML_Char **attrs, int line, const char *key)
{
    const char *v = attr(attrs, key);
    if (!v || !v[0]) {
        fail(c, line, "needs a non-empty %s attribute", key);
        return NULL;
    }
    for (const char *p = v; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            fail(c, line, "%s contains a control character (a tab, a line break, ...)", key);
            return NULL;
        }
    char *s = strdup(v);
    if (!s) fail(c, line, "out of memory");
    return s;
}

/* Appends one zeroed element of size sz to an array of *count (capacity *cap); NULL (and the
 * error recorded) when out of memory. */
static void *append(parse_ctx *c, void **arr, int *count, int *cap, size_t sz, int line)
{
    if (*count == *cap) {
        int ncap = *cap ? *cap * 2 : 16;
        void *p = realloc(*arr, (size_t)ncap * sz);
        if (!p) {
            fail(c, line, "out of memory");
            return NULL;
        }
        *arr = p;
        *cap = ncap;
    }
    void *e = (char *)*arr + (size_t)(*count)++ * sz;
    memset(e, 0, sz);
    return e;
}

/* The link (joint) whose element is open: the last one appended. */
static urdf_link *cur_link(parse_ctx *c)
{
    return &c->r->link[c->r->n_links - 1];
}
static urdf_joint *cur_joint(parse_ctx *c)
{
    return &c->r->joint[c->r->n_joints - 1];
}

/* <origin xyz rpy>: both optional, 0 0 0 by default. */
static void read_origin(parse_ctx *c, const XML_Char **attrs, int line, urdf_origin *o)
{
    const char *xyz = attr(attrs, "xyz"), *rpy = attr(attrs, "rpy");
    if (xyz && !numbers(c, line, "xyz", xyz, 3, o->xyz)) return;
    if (rpy) numbers(c, line, "rpy", rpy, 3, o->rpy);
}

/* <link name>: a new link, a root and a leaf until joints say otherwise. */
static void on_link(parse_ctx *c, const XML_Char **attrs, int line)
{
    urdf_robot *r = c->r;
    urdf_link *l = append(c, (void **)&r->link, &r->n_links, &c->cap_links, sizeof *l, line);
    if (!l) return;
    l->line = line;
    l->parent_joint = l->first_child = -1;
    l->name = name_attr(c, attrs, line, "name");
}

/* <inertial>: mass and inertia follow (on_end checks that both came). */
static void on_inertial(parse_ctx *c, const XML_Char **attrs, int line)
{
    (void)attrs;
    urdf_link *l = cur_link(c);
    l->has_inertial = true;
    l->inertial_line = line;
}

/* <inertial><origin>: the COM frame in the link frame. */
static void on_inertial_origin(parse_ctx *c, const XML_Char **attrs, int line)
{
    read_origin(c, attrs, line, &cur_link(c)->com);
}

/* <mass value> [kg], >= 0. */
static void on_mass(parse_ctx *c, const XML_Char **attrs, int line)
{
    urdf_link *l = cur_link(c);
    if (!attr(attrs, "value")) {
        fail(c, line, "needs a value attribute [kg]");
        return;
    }
    char b[URDF_NUM_LEN];
    if (opt_number(c, attrs, line, "value", &l->mass) && !(l->mass >= 0))
        fail(c, line, "value: %s kg is negative", urdf_num(l->mass, b));
}

/* <inertia ixx ... izz> [kg m^2], about the COM in the COM frame's axes; all six required. */
static void on_inertia(parse_ctx *c, const XML_Char **attrs, int line)
{
    static const char *const keys[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
    for (int k = 0; k < 6 && !c->failed; k++) {
        if (!attr(attrs, keys[k])) {
            fail(c, line, "needs the attribute %s [kg m^2] (ixx ixy ixz iyy iyz izz)", keys[k]);
            return;
        }
        opt_number(c, attrs, line, keys[k], &cur_link(c)->inertia[k]);
    }
}

/* <joint name type>: the type decides everything else; floating and planar are read (and
 * refused only if the chain or a lumped branch uses them). */
static void on_joint(parse_ctx *c, const XML_Char **attrs, int line)
{
    urdf_robot *r = c->r;
    urdf_joint *j = append(c, (void **)&r->joint, &r->n_joints, &c->cap_joints, sizeof *j, line);
    if (!j) return;
    j->line = line;
    j->parent = j->child = j->next_sibling = -1;
    j->axis[0] = 1;
    j->multiplier = 1;
    if (!(j->name = name_attr(c, attrs, line, "name"))) return;
    const char *t = attr(attrs, "type");
    for (int k = URDF_FIXED; t && k <= URDF_PLANAR; k++)
        if (strcmp(t, urdf_type_name((urdf_joint_type)k)) == 0) {
            j->type = (urdf_joint_type)k;
            return;
        }
    fail(c, line,
         "type '%.40s' is not a URDF joint type (revolute, continuous, prismatic, fixed, "
         "floating, planar)",
         t ? t : "");
}

/* <joint><origin>: the joint frame in the parent link frame. */
static void on_joint_origin(parse_ctx *c, const XML_Char **attrs, int line)
{
    read_origin(c, attrs, line, &cur_joint(c)->origin);
}

/* <parent link>: resolved to an index by urdf_tree_resolve. */
static void on_parent(parse_ctx *c, const XML_Char **attrs, int line)
{
    cur_joint(c)->parent_line = line;
    cur_joint(c)->parent_name = name_attr(c, attrs, line, "link");
}

/* <child link>: resolved to an index by urdf_tree_resolve. */
static void on_child(parse_ctx *c, const XML_Char **attrs, int line)
{
    cur_joint(c)->child_line = line;
    cur_joint(c)->child_name = name_attr(c, attrs, line, "link");
}

/* <axis xyz>: as written (urdf_merge.c normalises it where it is used). */
static void on_axis(parse_ctx *c, const XML_Char **attrs, int line)
{
    urdf_joint *j = cur_joint(c);
    const char *xyz = attr(attrs, "xyz");
    j->axis_line = line;
    if (xyz) numbers(c, line, "xyz", xyz, 3, j->axis);
}

/* <limit lower upper effort velocity>: each optional here; the chain checks what it needs. */
static void on_limit(parse_ctx *c, const XML_Char **attrs, int line)
{
    urdf_joint *j = cur_joint(c);
    j->has_limit = true;
    j->limit_line = line;
    j->has_lower = opt_number(c, attrs, line, "lower", &j->lower);
    j->has_upper = opt_number(c, attrs, line, "upper", &j->upper);
    j->has_effort = opt_number(c, attrs, line, "effort", &j->effort);
    j->has_velocity = opt_number(c, attrs, line, "velocity", &j->velocity);
}

/* <dynamics damping friction>: viscous [N m s/rad | N s/m] and Coulomb [N m | N], >= 0. */
static void on_dynamics(parse_ctx *c, const XML_Char **attrs, int line)
{
    urdf_joint *j = cur_joint(c);
    j->dynamics_line = line;
    j->has_damping = opt_number(c, attrs, line, "damping", &j->damping);
    j->has_friction = opt_number(c, attrs, line, "friction", &j->friction);
    char b[URDF_NUM_LEN];
    if (j->has_damping && !(j->damping >= 0))
        fail(c, line, "damping: %s is negative", urdf_num(j->damping, b));
    else if (j->has_friction && !(j->friction >= 0))
        fail(c, line, "friction: %s is negative", urdf_num(j->friction, b));
}

/* <mimic joint multiplier offset>: q = multiplier q_joint + offset (defaults 1, 0). */
static void on_mimic(parse_ctx *c, const XML_Char **attrs, int line)
{
    urdf_joint *j = cur_joint(c);
    j->mimic_line = line;
    if (!(j->mimic = name_attr(c, attrs, line, "joint"))) return;
    opt_number(c, attrs, line, "multiplier", &j->multiplier);
    opt_number(c, attrs, line, "offset", &j->offset);
}

/* Children read under each kind of parent; the rest are skipped. */
static const elem_rule robot_rules[] = {
    {"link", K_LINK, on_link}, {"joint", K_JOINT, on_joint}, {NULL, K_SKIP, NULL}};
static const elem_rule link_rules[] = {{"inertial", K_INERTIAL, on_inertial}, {NULL, K_SKIP, NULL}};
static const elem_rule inertial_rules[] = {{"origin", K_LEAF, on_inertial_origin},
                                           {"mass", K_LEAF, on_mass},
                                           {"inertia", K_LEAF, on_inertia},
                                           {NULL, K_SKIP, NULL}};
static const elem_rule joint_rules[] = {
    {"origin", K_LEAF, on_joint_origin}, {"parent", K_LEAF, on_parent},
    {"child", K_LEAF, on_child},         {"axis", K_LEAF, on_axis},
    {"limit", K_LEAF, on_limit},         {"dynamics", K_LEAF, on_dynamics},
    {"mimic", K_LEAF, on_mimic},         {NULL, K_SKIP, NULL}};

/* The table of children read under an element of kind parent (NULL: skip them all). */
static const elem_rule *rules_under(kind parent)
{
    switch (parent) {
    case K_ROBOT:
        return robot_rules;
    case K_LINK:
        return link_rules;
    case K_INERTIAL:
        return inertial_rules;
    case K_JOINT:
        return joint_rules;
    default:
        return NULL;
    }
}

/* Opening tags: dispatches by the parent's table, skips unknown subtrees, refuses a part given
 * twice. */
static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    parse_ctx *c = ud;
    if (c->failed) return;
    int d = ++c->depth;
    if (c->skip_from) return;
    int line = (int)XML_GetCurrentLineNumber(c->xp);
    c->elem = name;
    if (d == 1) {
        if (strcmp(name, "robot") != 0) {
            fail(c, line, "the root element must be <robot>");
            return;
        }
        c->open[1] = K_ROBOT;
        memset(c->seen[1], 0, sizeof c->seen[1]);
        const char *rn = attr(attrs, "name");
        if (!(c->r->name = strdup(rn ? rn : ""))) fail(c, line, "out of memory");
        return;
    }
    const elem_rule *rules = d <= DEPTH_KNOWN ? rules_under(c->open[d - 1]) : NULL;
    int k = 0;
    while (rules && rules[k].name && strcmp(rules[k].name, name) != 0) k++;
    if (!rules || !rules[k].name) {
        c->skip_from = d;
        return;
    }
    /* a link or joint is one of many; each of their parts may appear once */
    if (rules[k].k != K_LINK && rules[k].k != K_JOINT && c->seen[d - 1][k]) {
        fail(c, line, "appears twice in one <%s> (first at line %d)",
             c->open[d - 1] == K_LINK       ? "link"
             : c->open[d - 1] == K_INERTIAL ? "inertial"
                                            : "joint",
             c->seen[d - 1][k]);
        return;
    }
    c->seen[d - 1][k] = line;
    c->open[d] = rules[k].k;
    c->open_line[d] = line;
    memset(c->seen[d], 0, sizeof c->seen[d]);
    rules[k].fn(c, attrs, line);
}

/* Closing tags: the parts a <joint> and an <inertial> cannot do without. */
static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    parse_ctx *c = ud;
    int d = c->depth--;
    if (c->failed) return;
    if (c->skip_from) {
        if (c->skip_from == d) c->skip_from = 0;
        return;
    }
    c->elem = name;
    c->depth = d; /* messages below name the element being closed */
    if (c->open[d] == K_INERTIAL && (!c->seen[d][1] || !c->seen[d][2]))
        fail(c, c->open_line[d], "needs <mass> and <inertia>");
    else if (c->open[d] == K_JOINT && (!c->seen[d][1] || !c->seen[d][2]))
        fail(c, c->open_line[d], "needs <parent link=\"...\"/> and <child link=\"...\"/>");
    c->depth = d - 1;
}

/* <!ENTITY>: refused (no entity expansion at all, so no amplification). */
static void XMLCALL on_entity(void *ud, const XML_Char *name, int is_param, const XML_Char *value,
                              int value_len, const XML_Char *base, const XML_Char *sys,
                              const XML_Char *pub, const XML_Char *notation)
{
    (void)is_param, (void)value, (void)value_len, (void)base, (void)sys, (void)pub, (void)notation;
    parse_ctx *c = ud;
    c->elem = "!ENTITY";
    fail(c, (int)XML_GetCurrentLineNumber(c->xp),
         "entity '%.60s': entity declarations are not "
         "supported in a URDF",
         name);
}

void urdf_free(urdf_robot *r)
{
    if (!r) return;
    for (int i = 0; i < r->n_links; i++) free(r->link[i].name);
    for (int i = 0; i < r->n_joints; i++) {
        free(r->joint[i].name);
        free(r->joint[i].parent_name);
        free(r->joint[i].child_name);
        free(r->joint[i].mimic);
    }
    free(r->link);
    free(r->joint);
    free(r->link_by_name);
    free(r->joint_by_name);
    free(r->file);
    free(r->name);
    free(r);
}

int urdf_parse(const char *text, size_t len, const char *file, urdf_robot **out, urdf_error *err)
{
    *out = NULL;
    urdf_robot *r = calloc(1, sizeof *r);
    if (!r || !(r->file = strdup(file))) {
        free(r);
        return urdf_fail_opt(err, "out of memory");
    }
    if (len > URDF_MAX_BYTES) {
        urdf_free(r);
        return urdf_fail(err, file, 1, "%zu bytes: larger than the %d MiB a URDF may have", len,
                         URDF_MAX_BYTES >> 20);
    }
    parse_ctx c = {.r = r, .err = err, .elem = "robot"};
    c.xp = XML_ParserCreate(NULL);
    if (!c.xp) {
        urdf_free(r);
        return urdf_fail_opt(err, "out of memory");
    }
    XML_SetUserData(c.xp, &c);
    XML_SetElementHandler(c.xp, on_start, on_end);
    XML_SetEntityDeclHandler(c.xp, on_entity);
    enum XML_Status st = XML_Parse(c.xp, text, (int)len, XML_TRUE);
    if (st != XML_STATUS_OK && !c.failed) {
        urdf_fail(err, file, (int)XML_GetCurrentLineNumber(c.xp), "not valid XML: %s",
                  XML_ErrorString(XML_GetErrorCode(c.xp)));
        c.failed = true;
    }
    XML_ParserFree(c.xp);
    if (!c.failed && r->n_links == 0) {
        urdf_fail(err, file, 1, "<robot>: no <link>");
        c.failed = true;
    }
    if (c.failed || urdf_tree_resolve(r, err) != 0) {
        urdf_free(r);
        return -1;
    }
    *out = r;
    return 0;
}
