/**
 * What a replay's range read (`ReplayRead.ts`) holds of each token: points in chain order, the
 * segments read of a token (disjoint, in chain order; only their unfed trades are kept) and the
 * min-heap that merges them. Plain data and functions: the read's rounds mutate them in place.
 */
import type { ReplayTrade } from "../../../../clickhouse/queries/Replay.js"

/** A point in chain order: after the trade `(t, p)`, or after all of millisecond `t` when `p` is `END`. */
export interface Key {
  readonly t: number
  readonly p: string
}
export const END = "\uffff"
export const cmp = (a: Key, b: Key): number => a.t - b.t || (a.p === b.p ? 0 : a.p === END ? 1 : b.p === END ? -1 : a.p < b.p ? -1 : 1)
export const after = (t: number): Key => ({ t, p: END })

/** A stretch read of one token: every trade in `(from, to]`, the unfed ones `buf[head..]`. */
export interface Segment {
  readonly from: Key
  to: Key
  buf: Array<ReplayTrade>
  head: number
}

/** What has been read of one token: disjoint segments in chain order. */
export interface TokenFeed {
  readonly chain: string
  readonly asset: string
  segs: Array<Segment>
  /** Rows asked for per read: grows when the token runs out while it needs trades. */
  rowsMax: number
}

/** The index of the segment holding `point` (`from <= point <= to`), or -1. */
export const segmentAt = (f: TokenFeed, point: Key): number => {
  for (let i = f.segs.length - 1; i >= 0; i--) {
    const g = f.segs[i]!
    if (cmp(g.from, point) <= 0) return cmp(g.to, point) >= 0 ? i : -1
  }
  return -1
}

/** From segment `i`, the last of the segments that follow it without a gap. */
export const runEnd = (f: TokenFeed, i: number): number => {
  while (i + 1 < f.segs.length && cmp(f.segs[i + 1]!.from, f.segs[i]!.to) === 0) i++
  return i
}

/** Whether segments `i..j` hold an unfed trade after `point`. */
export const unfedAfter = (f: TokenFeed, i: number, j: number, point: Key): boolean => {
  for (let k = j; k >= i; k--) {
    const g = f.segs[k]!
    if (g.head < g.buf.length) return cmp(g.buf[g.buf.length - 1]!, point) > 0
  }
  return false
}

/** A binary min-heap (the merge of the segments' next trades, the read ends of tokens that need trades). */
export class Heap<A> {
  private readonly items: Array<A> = []
  constructor(private readonly less: (a: A, b: A) => boolean) {}
  get size() {
    return this.items.length
  }
  peek(): A | undefined {
    return this.items[0]
  }
  push(a: A): void {
    const h = this.items
    h.push(a)
    let i = h.length - 1
    while (i > 0) {
      const up = (i - 1) >> 1
      if (!this.less(h[i]!, h[up]!)) break
      ;[h[i], h[up]] = [h[up]!, h[i]!]
      i = up
    }
  }
  pop(): A | undefined {
    const h = this.items
    const top = h[0]
    const last = h.pop()
    if (h.length > 0 && last !== undefined) {
      h[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r
        if (m === i) break
        ;[h[i], h[m]] = [h[m]!, h[i]!]
        i = m
      }
    }
    return top
  }
}
