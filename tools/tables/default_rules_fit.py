"""Small decision trees over shape features, and the ordered lists in their leaves, for
tools/tables/fit_default_rules.py. Pure Python and deterministic (ties go to the smaller name), so
that the generated rules are the same byte for byte on every machine.

An item is one point with vals = {action: value} (lower is better; log of a time ratio) and
miss = the value of any action it has no time for (the fallback the rules leave it to). A tree
splits the items by one feature at a threshold while both sides keep min_shapes shapes and the
split lowers the cost (the best single action's on each side); a leaf's action is the one of
lowest cost, kept only where it beats the fallback by `margin` per item.
"""
import collections

from default_rules_data import EDGES


class Item:
    __slots__ = ("feat", "shape", "vals", "miss", "point")

    def __init__(self, point, vals, miss):
        self.point, self.feat, self.shape, self.vals, self.miss = point, point.feat, point.shape, vals, miss


def deltas(items):
    """{action: sum over items of (value - miss)} (items without the action count 0)."""
    d = collections.defaultdict(float)
    for it in items:
        for a, v in it.vals.items():
            d[a] += v - it.miss
    return d


def best_of(d):
    """(action, delta) of the lowest delta; (None, 0) when none is below 0."""
    best, bd = None, 0.0
    for a in sorted(d):
        if d[a] < bd - 1e-12:
            best, bd = a, d[a]
    return best, bd


def roundest(lo, hi):
    """The integer in (lo, hi] that is a multiple of the largest power of two."""
    p = 1
    while (lo // (p * 2) + 1) * (p * 2) <= hi:
        p *= 2
    return (lo // p + 1) * p


def threshold(feature, lo, hi):
    """The split point T (items with value < T go low) between adjacent values lo < hi, or None.
    M splits only at bucket edges (a rule covers whole buckets, as tuned keys do)."""
    if feature == "m":
        edges = [e for e in EDGES if lo <= e < hi]
        return edges[-1] + 1 if edges else None
    return roundest(lo, hi)


class Node:
    def __init__(self, items):
        self.items = items
        self.split = None  # (feature, T)
        self.lo = self.hi = None
        self.action = None
        self.list = []

    def leaves(self, path=()):
        if self.split is None:
            yield path, self
            return
        f, t = self.split
        yield from self.lo.leaves(path + ((f, "<", t),))
        yield from self.hi.leaves(path + ((f, ">=", t),))

    def find(self, feat):
        node = self
        while node.split is not None:
            f, t = node.split
            node = node.lo if feat[f] < t else node.hi
        return node


def grow(items, features, depth, min_shapes):
    """A tree of at most `depth` levels."""
    node = Node(items)
    if depth == 0:
        return node
    base = sum(it.miss for it in items) + best_of(deltas(items))[1]
    best = None
    for f in features:
        order = sorted(items, key=lambda it: (it.feat[f], it.shape))
        left = collections.defaultdict(float)
        right = deltas(order)
        left_shapes = collections.Counter()
        right_shapes = collections.Counter(it.shape for it in order)
        left_miss, total_miss = 0.0, sum(it.miss for it in order)
        for i in range(len(order) - 1):
            it = order[i]
            for a, v in it.vals.items():
                left[a] += v - it.miss
                right[a] -= v - it.miss
            left_miss += it.miss
            left_shapes[it.shape] += 1
            right_shapes[it.shape] -= 1
            if right_shapes[it.shape] == 0:
                del right_shapes[it.shape]
            a, b = it.feat[f], order[i + 1].feat[f]
            if a == b or len(left_shapes) < min_shapes or len(right_shapes) < min_shapes:
                continue
            t = threshold(f, a, b)
            if t is None:
                continue
            cost = left_miss + min(0.0, min(left.values(), default=0.0)) + \
                (total_miss - left_miss) + min(0.0, min(right.values(), default=0.0))
            if best is None or cost < best[0] - 1e-9:
                best = (cost, f, t)
    if best is None or best[0] > base - 1e-9:
        return node
    _, f, t = best
    node.split = (f, t)
    node.lo = grow([it for it in items if it.feat[f] < t], features, depth - 1, min_shapes)
    node.hi = grow([it for it in items if it.feat[f] >= t], features, depth - 1, min_shapes)
    return node


def merge_alike(node, action_of):
    """Folds every split whose two sides are leaves with the same action_of(leaf) into one leaf."""
    if node.split is None:
        return
    merge_alike(node.lo, action_of)
    merge_alike(node.hi, action_of)
    if node.lo.split is None and node.hi.split is None and action_of(node.lo) == action_of(node.hi):
        node.split, node.lo, node.hi = None, None, None


def front_list(items, k):
    """An ordered list of actions, the first an item has a value for applying to it: each step
    puts in front the action that lowers the items' total the most, up to k."""
    cur = [it.miss for it in items]
    out = []
    for _ in range(k):
        d = collections.defaultdict(float)
        for i, it in enumerate(items):
            for a, v in it.vals.items():
                d[a] += v - cur[i]
        a, gain = best_of(d)
        if a is None:
            break
        if a in out:  # moved to the front: behind the others it no longer applied anywhere
            out.remove(a)
        out.insert(0, a)
        for i, it in enumerate(items):
            if a in it.vals:
                cur[i] = it.vals[a]
    return out


def list_value(actions, item):
    for a in actions:
        if a in item.vals:
            return item.vals[a]
    return item.miss


def box_of(path):
    """{feature: (lo, hi)} (inclusive integer bounds, None = open) of a leaf's path."""
    box = {}
    for f, op, t in path:
        lo, hi = box.get(f, (None, None))
        if op == "<":
            hi = t - 1 if hi is None else min(hi, t - 1)
        else:
            lo = t if lo is None else max(lo, t)
        box[f] = (lo, hi)
    return box
