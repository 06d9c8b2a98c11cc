/**
 * The strategy lab (Max): pick an example strategy or write one, run a replay over a window, watch
 * the job (queued → running → done), then its equity curve and drawdown, with the trades marked on
 * the curve and the metrics beside it. One job is read every second while it runs (not a list).
 */
import { AreaSeries, createSeriesMarkers, LineSeries, type SeriesMarker, type UTCTimestamp } from "lightweight-charts"
import { useEffect, useRef, useState } from "preact/hooks"
import { data, dataKey, HttpError } from "../api.js"
import { makeChart } from "../chart.js"
import { compact } from "../format.js"

const EXAMPLES: Readonly<Record<string, object>> = {
  "Confluence, take profit 50%": { chain: "solana", entry: { source: "pattern", pattern: "confluence" }, exit: { take_profit_pct: 50 }, sizing: { usd_per_trade: 10, max_concurrent: 1 } },
  "Large moves, take profit 30%, stop 20%": {
    chain: "solana",
    entry: { source: "pattern", pattern: "large_move" },
    exit: { take_profit_pct: 30, stop_loss_pct: 20 },
    sizing: { usd_per_trade: 25, max_concurrent: 3 }
  },
  "New tickers, take profit 100%": { chain: "solana", entry: { source: "pattern", pattern: "new_ticker" }, exit: { take_profit_pct: 100 }, sizing: { usd_per_trade: 10, max_concurrent: 5 } }
}

interface EquityPoint {
  readonly t_ms: number
  readonly equity_usd: string
  readonly drawdown_pct: number
}
interface ReplayTrade {
  readonly asset: string
  readonly entry_at: string
  readonly exit_at: string
  readonly pnl_usd: string
  readonly pnl_pct: number
  readonly close_reason: string
}
interface Result {
  readonly verdict: string
  readonly verdict_reason: string
  readonly trade_count: number
  readonly pnl_usd: string
  readonly max_drawdown_pct: number
  readonly start_usd: string
  readonly final_usd: string
  readonly win_rate: number | null
  readonly profit_factor: number | null
  readonly sharpe: number | null
  readonly fees_paid_usd: string
  readonly equity: ReadonlyArray<EquityPoint>
  readonly trades: ReadonlyArray<ReplayTrade>
}
interface Job {
  readonly job_id: string
  readonly status: "queued" | "running" | "done" | "failed"
  readonly result: Result | null
  readonly error: { readonly code: string; readonly message: string } | null
}

const JOB_MS = 1000
const sec = (ms: number) => Math.floor(ms / 1000) as UTCTimestamp

const EquityChart = ({ result }: { result: Result }) => {
  const el = useRef<HTMLDivElement>(null)
  const dd = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (el.current === null || dd.current === null) return
    const points = dedupe(result.equity)
    const chart = makeChart(el.current)
    const equity = chart.addSeries(LineSeries, { color: "#58a6ff", lineWidth: 2 })
    equity.setData(points.map((p) => ({ time: sec(p.t_ms), value: Number(p.equity_usd) })))
    const markers: Array<SeriesMarker<UTCTimestamp>> = []
    for (const t of result.trades) {
      markers.push({ time: sec(Date.parse(t.entry_at)), position: "belowBar", color: "#3fb950", shape: "arrowUp", text: "in" })
      markers.push({ time: sec(Date.parse(t.exit_at)), position: "aboveBar", color: Number(t.pnl_usd) >= 0 ? "#3fb950" : "#f85149", shape: "arrowDown", text: "out" })
    }
    markers.sort((a, b) => a.time - b.time)
    createSeriesMarkers(equity, markers)
    chart.timeScale().fitContent()
    const ddChart = makeChart(dd.current)
    const area = ddChart.addSeries(AreaSeries, { lineColor: "#f85149", topColor: "rgba(248,81,73,0.05)", bottomColor: "rgba(248,81,73,0.4)", invertFilledArea: true })
    area.setData(points.map((p) => ({ time: sec(p.t_ms), value: -p.drawdown_pct })))
    ddChart.timeScale().fitContent()
    return () => {
      chart.remove()
      ddChart.remove()
    }
  }, [result])
  return (
    <>
      <h2>Equity (USD)</h2>
      <div class="chart" ref={el} data-testid="equity" />
      <h2>Drawdown (%)</h2>
      <div class="chart small" ref={dd} data-testid="drawdown" />
    </>
  )
}

/** One point per second (the chart's time unit): the last of each second wins. */
const dedupe = (points: ReadonlyArray<EquityPoint>): ReadonlyArray<EquityPoint> => {
  const out: EquityPoint[] = []
  for (const p of points) {
    if (out.length > 0 && sec(out[out.length - 1]!.t_ms) === sec(p.t_ms)) out[out.length - 1] = p
    else out.push(p)
  }
  return out
}

const Metrics = ({ r }: { r: Result }) => (
  <dl class="facts" data-testid="metrics">
    <dt>Verdict</dt>
    <dd>
      {r.verdict} <span class="muted">{r.verdict_reason}</span>
    </dd>
    <dt>Trades</dt>
    <dd>{r.trade_count}</dd>
    <dt>P&amp;L</dt>
    <dd class={Number(r.pnl_usd) >= 0 ? "up" : "down"}>${compact(r.pnl_usd)}</dd>
    <dt>Start → final</dt>
    <dd>
      ${compact(r.start_usd)} → ${compact(r.final_usd)}
    </dd>
    <dt>Max drawdown</dt>
    <dd>{r.max_drawdown_pct}%</dd>
    <dt>Win rate</dt>
    <dd>{r.win_rate === null ? "–" : `${(r.win_rate * 100).toFixed(1)}%`}</dd>
    <dt>Profit factor</dt>
    <dd>{r.profit_factor ?? "–"}</dd>
    <dt>Sharpe</dt>
    <dd>{r.sharpe ?? "–"}</dd>
    <dt>Fees</dt>
    <dd>${compact(r.fees_paid_usd)}</dd>
  </dl>
)

const isoMinute = (ms: number) => new Date(ms).toISOString().slice(0, 16)

export const Lab = () => {
  const [example, setExample] = useState(Object.keys(EXAMPLES)[0]!)
  const [text, setText] = useState(JSON.stringify(EXAMPLES[example], null, 2))
  const [from, setFrom] = useState(isoMinute(Date.now() - 24 * 3600_000))
  const [to, setTo] = useState(isoMinute(Date.now()))
  const [job, setJob] = useState<Job | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const key = dataKey()
  useEffect(() => {
    if (job === undefined || job.status === "done" || job.status === "failed") return
    const abort = new AbortController()
    const timer = setTimeout(() => {
      data<Job>(`/v1/strategy-lab/replay/${job.job_id}`, { signal: abort.signal })
        .then(setJob)
        .catch((e: unknown) => {
          if (!abort.signal.aborted) setError(String(e))
        })
    }, JOB_MS)
    return () => {
      abort.abort()
      clearTimeout(timer)
    }
  }, [job])
  const run = async (e: Event) => {
    e.preventDefault()
    setError(undefined)
    let definition: unknown
    try {
      definition = JSON.parse(text)
    } catch {
      setError("The strategy is not valid JSON")
      return
    }
    try {
      const started = await data<{ job_id: string }>("/v1/strategy-lab/replay", {
        method: "POST",
        body: { definition, from: new Date(`${from}Z`).toISOString(), to: new Date(`${to}Z`).toISOString() }
      })
      setJob({ job_id: started.job_id, status: "queued", result: null, error: null })
    } catch (err) {
      const body = err instanceof HttpError ? (err.body as { error?: string | { message?: string } } | undefined) : undefined
      setError(typeof body?.error === "string" ? body.error : (body?.error?.message ?? String(err)))
    }
  }
  return (
    <section aria-labelledby="lab-title">
      <div class="titlebar">
        <h1 id="lab-title">Strategy lab</h1>
        {key === "" && <span class="muted">add the data key (a Max account's) to run replays</span>}
      </div>
      <div class="grid2">
        <div class="stack">
          <div class="panel">{job?.result != null ? <EquityChart result={job.result} /> : <p class="muted">Run a replay to see its equity curve, drawdown and trades.</p>}</div>
        </div>
        <div class="stack">
          <form class="panel" onSubmit={run}>
            <div class="controls">
              <label>
                Example{" "}
                <select
                  value={example}
                  onChange={(e) => {
                    setExample(e.currentTarget.value)
                    setText(JSON.stringify(EXAMPLES[e.currentTarget.value], null, 2))
                  }}
                >
                  {Object.keys(EXAMPLES).map((k) => (
                    <option key={k} value={k}>
                      {k}
                    </option>
                  ))}
                </select>
              </label>
            </div>
            <label>
              Strategy (JSON)
              <textarea value={text} onInput={(e) => setText(e.currentTarget.value)} spellcheck={false} />
            </label>
            <div class="controls">
              <label>
                From (UTC) <input type="datetime-local" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
              </label>
              <label>
                To (UTC) <input type="datetime-local" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
              </label>
            </div>
            <div class="controls">
              <button type="submit" disabled={key === "" || job?.status === "queued" || job?.status === "running"}>
                Run replay
              </button>
              <span role="status" data-testid="job-status">
                {job === undefined ? "" : `job ${job.status}`}
              </span>
            </div>
            {error !== undefined && <p role="alert" class="error">{error}</p>}
            {job?.error != null && <p role="alert" class="error">{job.error.message}</p>}
          </form>
          {job?.result != null && (
            <div class="panel">
              <h2>Metrics</h2>
              <Metrics r={job.result} />
            </div>
          )}
        </div>
      </div>
    </section>
  )
}
