/**
 * The signals WebSocket (`/v1/signals/stream` on the market-data service), live: the snapshot of
 * the newest matching signals, then each new one. A browser cannot send `Authorization` on a
 * WebSocket, so the key is offered as the `bearer.<key>` subprotocol beside `curvestream.v1`
 * (the server answers `curvestream.v1` alone). Filterable by kind (the stream's `event_kind`,
 * reconnecting with the new filter), chain and quality. Keeps the newest `KEEP` signals.
 */
import { useEffect, useState } from "preact/hooks"
import { dataKey, dataSocketUrl } from "../api.js"
import { age, compact, shortAddress } from "../format.js"
import { onLink } from "../router.js"

const PATTERNS = ["confluence", "deployer", "large_move", "dormancy", "intra_book", "new_ticker", "distribution", "kol_mention"] as const
type Pattern = (typeof PATTERNS)[number]
const KEEP = 300

interface Signal {
  readonly id: string
  readonly pattern: Pattern
  readonly chain: "solana" | "hood"
  readonly asset: string
  readonly symbol: string | null
  readonly direction: string
  readonly size_usd: string | null
  readonly mcap_usd: string | null
  readonly confidence: number
  readonly quality: string
  readonly at?: string
  readonly ts?: string
}

type Message = { readonly type: "snapshot"; readonly signals: ReadonlyArray<Signal> } | { readonly type: "signal"; readonly signal: Signal }

const atOf = (s: Signal): string | undefined => s.at ?? s.ts

export const Signals = () => {
  const [kinds, setKinds] = useState<ReadonlySet<Pattern>>(new Set(PATTERNS))
  const [chain, setChain] = useState<"solana" | "hood">("solana")
  const [quality, setQuality] = useState("all")
  const [signals, setSignals] = useState<ReadonlyArray<Signal>>([])
  const [status, setStatus] = useState("connecting")
  const key = dataKey()
  const kindParam = kinds.size === PATTERNS.length ? "" : [...kinds].join(",")
  useEffect(() => {
    if (key === "" || kinds.size === 0) return
    setSignals([])
    setStatus("connecting")
    const query = `chain=${chain}&quality=${quality}${kindParam === "" ? "" : `&event_kind=${kindParam}`}`
    const ws = new WebSocket(dataSocketUrl(`/v1/signals/stream?${query}`), ["curvestream.v1", `bearer.${key}`])
    ws.onopen = () => setStatus("live")
    ws.onclose = (e) => setStatus(e.code === 1000 || e.code === 1001 ? "closed" : `closed (${e.code}${e.reason === "" ? "" : `: ${e.reason}`})`)
    ws.onmessage = (e) => {
      const m = JSON.parse(String(e.data)) as Message
      if (m.type === "snapshot") setSignals([...m.signals].reverse().slice(0, KEEP))
      else if (m.type === "signal") setSignals((old) => [m.signal, ...old].slice(0, KEEP))
    }
    return () => ws.close(1000)
  }, [key, chain, quality, kindParam])
  const now = Date.now()
  const toggle = (p: Pattern) => {
    const next = new Set(kinds)
    if (next.has(p)) next.delete(p)
    else next.add(p)
    setKinds(next)
  }
  return (
    <section aria-labelledby="signals-title">
      <div class="titlebar">
        <h1 id="signals-title">Signals</h1>
        <span class="muted" role="status" data-testid="stream-status">
          {key === "" ? "add the data key to connect" : status}
        </span>
        <label>
          Chain{" "}
          <select value={chain} onChange={(e) => setChain(e.currentTarget.value as "solana" | "hood")}>
            <option value="solana">Solana</option>
            <option value="hood">Hood</option>
          </select>
        </label>
        <label>
          Quality{" "}
          <select value={quality} onChange={(e) => setQuality(e.currentTarget.value)}>
            {["all", "curated", "high", "medium", "low"].map((q) => (
              <option key={q} value={q}>
                {q}
              </option>
            ))}
          </select>
        </label>
      </div>
      <fieldset class="controls">
        <legend class="sr">Kinds</legend>
        {PATTERNS.map((p) => (
          <label key={p}>
            <input type="checkbox" checked={kinds.has(p)} onChange={() => toggle(p)} /> {p}
          </label>
        ))}
      </fieldset>
      <div class="panel">
        <table data-testid="signals">
          <thead>
            <tr>
              <th scope="col">Age</th>
              <th scope="col">Kind</th>
              <th scope="col">Token</th>
              <th scope="col">Direction</th>
              <th scope="col" class="num">Size USD</th>
              <th scope="col" class="num">Mcap USD</th>
              <th scope="col" class="num">Confidence</th>
              <th scope="col">Quality</th>
            </tr>
          </thead>
          <tbody>
            {signals.map((s) => (
              <tr key={s.id} data-pattern={s.pattern}>
                <td>{age(atOf(s), now)}</td>
                <td>{s.pattern}</td>
                <td>
                  <a href={`/token/${s.chain}/${encodeURIComponent(s.asset)}`} onClick={onLink}>
                    {s.symbol ?? shortAddress(s.asset)}
                  </a>
                </td>
                <td class={s.direction === "bullish" ? "up" : s.direction === "bearish" ? "down" : ""}>{s.direction}</td>
                <td class="num">{compact(s.size_usd)}</td>
                <td class="num">{compact(s.mcap_usd)}</td>
                <td class="num">{s.confidence}</td>
                <td>{s.quality}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {signals.length === 0 && <p class="muted empty">No signals yet{kinds.size === 0 ? ": pick at least one kind" : ""}.</p>}
      </div>
    </section>
  )
}
