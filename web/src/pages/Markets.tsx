/**
 * The four feed buckets on both chains, live: one whole read each, then `since_seq` deltas every
 * second (`applyFeed`). `finalstretch` has no deltas (the route always answers it whole), so it is
 * read again only after a delta of another bucket showed a change, at most every 2 s.
 */
import { useEffect, useState } from "preact/hooks"
import { api } from "../api.js"
import { applyFeed, type Chain, emptyView, type FeedResponse, type FeedRow, type FeedView } from "../feed.js"
import { age, bps, compact } from "../format.js"
import { onLink } from "../router.js"

const BUCKETS = [
  { id: "new", title: "New" },
  { id: "onfire", title: "On fire" },
  { id: "finalstretch", title: "Final stretch" },
  { id: "graduated", title: "Graduated" }
] as const
type BucketId = (typeof BUCKETS)[number]["id"]

const DELTA_MS = 1000
const FINAL_STRETCH_MIN_MS = 2000

type Views = Readonly<Record<BucketId, FeedView>>
const initialViews: Views = { new: emptyView, onfire: emptyView, finalstretch: emptyView, graduated: emptyView }

const read = (bucket: BucketId, cursor: number | undefined, signal: AbortSignal) =>
  api<FeedResponse>(`/api/v1/markets/feed?bucket=${bucket}&limit=100${cursor === undefined ? "" : `&since_seq=${cursor}`}`, signal)

export const useFeeds = (): { views: Views; error: string | undefined } => {
  const [views, setViews] = useState<Views>(initialViews)
  const [error, setError] = useState<string | undefined>(undefined)
  useEffect(() => {
    const abort = new AbortController()
    let current = initialViews
    let lastFinalStretch = 0
    let timer: ReturnType<typeof setTimeout> | undefined
    const tick = async () => {
      try {
        const next: Record<BucketId, FeedView> = { ...current }
        let changed = false
        for (const bucket of ["new", "onfire", "graduated"] as const) {
          const res = await read(bucket, current[bucket].cursor, abort.signal)
          next[bucket] = applyFeed(current[bucket], res)
          if (next[bucket] !== current[bucket] && (res.tokens.length > 0 || res.removed.length > 0)) changed = true
        }
        const now = Date.now()
        if (current.finalstretch.cursor === undefined || (changed && now - lastFinalStretch >= FINAL_STRETCH_MIN_MS)) {
          next.finalstretch = applyFeed(emptyView, await read("finalstretch", undefined, abort.signal))
          lastFinalStretch = now
        }
        current = next
        setViews(next)
        setError(undefined)
      } catch (e) {
        if (abort.signal.aborted) return
        setError(e instanceof Error ? e.message : String(e))
      }
      if (!abort.signal.aborted) timer = setTimeout(tick, DELTA_MS)
    }
    void tick()
    return () => {
      abort.abort()
      clearTimeout(timer)
    }
  }, [])
  return { views, error }
}

const Progress = ({ value }: { value: number | null | undefined }) => (
  <div class="progress" role="progressbar" aria-label="Progress to graduation" aria-valuemin={0} aria-valuemax={100} aria-valuenow={value === null || value === undefined ? undefined : value / 100}>
    <div style={{ width: `${Math.min(100, (value ?? 0) / 100)}%` }} />
    <span>{bps(value)}</span>
  </div>
)

const Row = ({ row, now }: { row: FeedRow; now: number }) => (
  <tr data-address={row.address} data-chain={row.chain}>
    <td>
      <a href={`/token/${row.chain}/${encodeURIComponent(row.address)}`} onClick={onLink}>
        <strong>{row.symbol ?? "?"}</strong> <span class="muted">{row.name ?? ""}</span>
      </a>
    </td>
    <td>
      <span class={`chip ${row.chain}`}>{row.chain}</span>
    </td>
    <td>{row.lifecycle === "trading" ? <Progress value={row.progressBps} /> : <span class="muted">{row.lifecycle ?? ""}</span>}</td>
    <td class="num" data-field="price">{compact(row.price)}</td>
    <td class="num" data-field="volume24h">{compact(row.volume24h)}</td>
    <td class="num">{compact(row.marketCap)}</td>
    <td class="num" data-field="trades">{row.tradesTotal ?? "–"}</td>
    <td class="num">{age(row.createdAt, now)}</td>
  </tr>
)

export const Markets = () => {
  const { views, error } = useFeeds()
  const [chain, setChain] = useState<Chain | "all">("all")
  const now = Date.now()
  return (
    <section aria-labelledby="markets-title">
      <div class="titlebar">
        <h1 id="markets-title">Markets</h1>
        <fieldset class="segmented">
          <legend class="sr">Chain</legend>
          {(["all", "solana", "hood"] as const).map((c) => (
            <label key={c}>
              <input type="radio" name="chain" value={c} checked={chain === c} onChange={() => setChain(c)} />
              {c === "all" ? "Both chains" : c === "solana" ? "Solana" : "Hood"}
            </label>
          ))}
        </fieldset>
      </div>
      {error !== undefined && <p role="alert" class="error">Feed unavailable: {error}</p>}
      <div class="buckets">
        {BUCKETS.map((b) => {
          const rows = views[b.id].rows.filter((r) => chain === "all" || r.chain === chain)
          return (
            <section key={b.id} class="bucket" data-bucket={b.id} aria-labelledby={`bucket-${b.id}`}>
              <h2 id={`bucket-${b.id}`}>
                {b.title} <span class="muted">{views[b.id].cursor === undefined ? "loading" : rows.length}</span>
              </h2>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Token</th>
                    <th scope="col">Chain</th>
                    <th scope="col">Progress</th>
                    <th scope="col" class="num">Price</th>
                    <th scope="col" class="num">Vol 24h</th>
                    <th scope="col" class="num">Mcap</th>
                    <th scope="col" class="num">Trades</th>
                    <th scope="col" class="num">Age</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.slice(0, 50).map((r) => (
                    <Row key={`${r.chain}:${r.address}`} row={r} now={now} />
                  ))}
                </tbody>
              </table>
              {rows.length === 0 && views[b.id].cursor !== undefined && <p class="muted empty">Nothing here yet.</p>}
            </section>
          )
        })}
      </div>
    </section>
  )
}
