#!/usr/bin/env python3
"""bench/lib/merge_bound.py N K... - the least write amplification of any compaction
schedule that keeps at most K files in a partition receiving N equal commits.

    python3 bench/lib/merge_bound.py 925 6 8 10 12

A schedule here merges the newest files of a partition (its files form a stack, oldest
at the bottom; floe's generational planner and LSM trees work so). After every commit and
the merges that follow it the partition holds at most K files. The cost of a merge is the
size of its output (the bytes a rewrite writes), in commits; write amplification is the
total cost over N. Dynamic program over the last merge that reached the bottom file:

    T(m, k)  least cost of m commits kept in at most k files   (T(m, k) = 0 for m <= k)
    F(t, k)  least cost of ending with one file of t commits, at most k files before
    F(t, k) = t + min over t' < t of  F(t', k) + T(t - t' - 1, k - 1)
    T(m, k) = min over 1 <= t <= m of  F(t, k) + T(m - t, k - 1)
    T(m, 1) = 2 + 3 + ... + m

Pure Python, O(N^2 K): about a second of CPU for N = 925, K = 16. Checked against an
exhaustive search of every such schedule for N <= 14, K <= 4.
"""
import sys


def bound(n, kmax):
    inf = float("inf")
    t_prev = [(m * (m + 1) // 2 - 1) if m >= 2 else 0 for m in range(n + 1)]
    out = {1: t_prev[n]}
    for k in range(2, kmax + 1):
        f = [inf] * (n + 1)
        f[0] = f[1] = 0
        for t in range(2, n + 1):
            f[t] = t + min(f[tp] + t_prev[t - tp - 1] for tp in range(t))
        cur = [0] * (n + 1)
        for m in range(k + 1, n + 1):
            cur[m] = min(f[t] + t_prev[m - t] for t in range(1, m + 1))
        out[k] = cur[n]
        t_prev = cur
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: merge_bound.py N K...")
    n = int(sys.argv[1])
    ks = sorted(int(x) for x in sys.argv[2:])
    costs = bound(n, ks[-1])
    print("| files kept at most | least bytes rewritten / appended |")
    print("|---|---|")
    for k in ks:
        print(f"| {k} | {costs[k] / n:.2f}x |")


if __name__ == "__main__":
    main()
