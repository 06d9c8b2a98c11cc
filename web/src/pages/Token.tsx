/**
 * One token: candles at the intervals the OHLCV route serves and its trade tape (market-data
 * service, with the data key), the market record's curve and migration state, a quote for a typed
 * amount, verify and the metadata. Live: the market record (one row) is read every second; when
 * its trade count moves, the newest bar moves to its price at once (`liveBar`), and the tape and
 * the newest candles are read again, and for a few seconds after (the history store writes in
 * batches, so a trade reaches the record first).
 */
import { CandlestickSeries, HistogramSeries, type IChartApi, type ISeriesApi, type UTCTimestamp } from "lightweight-charts"
import { useEffect, useRef, useState } from "preact/hooks"
import { api, data, dataKey, HttpError } from "../api.js"
import { type Bar, liveBar } from "../bars.js"
import { makeChart, tinyPrice } from "../chart.js"
import { age, bps, compact, fromRaw, shortAddress, toRaw } from "../format.js"

type Chain = "solana" | "hood"

interface Market {
  readonly lifecycle: string
  readonly buysOpen: boolean
  readonly sellsOpen: boolean
  readonly venue: string
  readonly graduationVenue: string
  readonly feeBps: number
  readonly poolAddress: string | null
  readonly curveAddress: string
  readonly decimals: number
  readonly quoteDecimals: number
  readonly creator: string
  readonly createdAt: string
  readonly progressBps: number | null
  readonly price: string | null
  readonly marketCap: string | null
  readonly volume24h: string
  readonly tradesTotal: number
  readonly lastTradeAt: string | null
  readonly metadata: { readonly name: string; readonly symbol: string; readonly image: string | null; readonly socials: unknown }
  readonly migration: { readonly status: string; readonly reserveRaw?: string; readonly thresholdRaw?: string; readonly progressBps?: number; readonly migratedAt?: string | null }
}

interface Candle {
  readonly t: string
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  readonly volume: string
}

interface Trade {
  readonly id: string
  readonly signature: string
  readonly at: string
  readonly side: "buy" | "sell"
  readonly venue: string
  readonly trader: string
  readonly amount: string
  readonly quote: string
}

const INTERVALS = [
  { id: "1m", seconds: 60 },
  { id: "5m", seconds: 300 },
  { id: "15m", seconds: 900 },
  { id: "1h", seconds: 3600 },
  { id: "4h", seconds: 14400 },
  { id: "1D", seconds: 86400 }
] as const
type IntervalId = (typeof INTERVALS)[number]["id"]
/** Candles drawn per interval (the route allows far more; this is a screen's worth). */
const CANDLES_SHOWN = 300
const RECORD_MS = 1000
/** Seconds of re-reads after the trade count moved (the history store's batch delay). */
const SETTLE_TICKS = 5

const isImageUrl = (u: string | null): u is string => u !== null && /^(https?:\/\/|\/)[^\s]+\.(png|jpe?g|gif|webp)$/i.test(u)

const toBar = (c: Candle) => ({ time: (Date.parse(c.t) / 1000) as UTCTimestamp, open: c.open, high: c.high, low: c.low, close: c.close })
const toVolume = (c: Candle) => ({
  time: (Date.parse(c.t) / 1000) as UTCTimestamp,
  value: Number(c.volume),
  color: c.close >= c.open ? "rgba(63,185,80,0.5)" : "rgba(248,81,73,0.5)"
})

const useCandles = (chain: Chain, mint: string, interval: IntervalId, refresh: number, enabled: boolean, market: Market | undefined) => {
  const el = useRef<HTMLDivElement>(null)
  const chart = useRef<{ chart: IChartApi; candles: ISeriesApi<"Candlestick">; volume: ISeriesApi<"Histogram"> } | undefined>(undefined)
  const [count, setCount] = useState<number | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  /** The newest bar drawn (from the history route or moved live); its close is on the element as `data-close`. */
  const [last, setLast] = useState<Bar | undefined>(undefined)
  useEffect(() => {
    if (el.current === null || !enabled) return
    const c = makeChart(el.current)
    const candles = c.addSeries(CandlestickSeries, { upColor: "#3fb950", downColor: "#f85149", borderVisible: false, wickUpColor: "#3fb950", wickDownColor: "#f85149", priceFormat: tinyPrice })
    const volume = c.addSeries(HistogramSeries, { priceScaleId: "volume", priceFormat: { type: "volume" } })
    c.priceScale("volume").applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } })
    chart.current = { chart: c, candles, volume }
    return () => {
      chart.current = undefined
      c.remove()
    }
  }, [enabled])
  useEffect(() => {
    if (!enabled) return
    const abort = new AbortController()
    const step = INTERVALS.find((i) => i.id === interval)!.seconds
    const from = new Date(Date.now() - CANDLES_SHOWN * step * 1000).toISOString()
    data<{ candles: ReadonlyArray<Candle> }>(`/v1/market/token/${encodeURIComponent(mint)}/history?chain=${chain}&interval=${interval}&from=${from}`, { signal: abort.signal })
      .then((r) => {
        const c = chart.current
        if (c === undefined) return
        const bars = r.candles.map(toBar)
        c.candles.setData(bars)
        c.volume.setData(r.candles.map(toVolume))
        setLast(bars[bars.length - 1])
        if (refresh === 0) c.chart.timeScale().fitContent()
        setCount(r.candles.length)
        setError(undefined)
      })
      .catch((e: unknown) => {
        if (!abort.signal.aborted) setError(e instanceof Error ? e.message : String(e))
      })
    return () => abort.abort()
  }, [chain, mint, interval, refresh, enabled])
  useEffect(() => {
    const c = chart.current
    if (c === undefined || market?.price == null || market.lastTradeAt === null) return
    const step = INTERVALS.find((i) => i.id === interval)!.seconds
    const bar = liveBar(last, Number(market.price), Date.parse(market.lastTradeAt), step)
    if (bar === undefined || (bar.time === last?.time && bar.close === last.close && bar.high === last.high && bar.low === last.low)) return
    c.candles.update(bar)
    setLast(bar)
  }, [market?.tradesTotal, market?.price, last, interval])
  return { el, count, error, close: last?.close }
}

const useMarket = (chain: Chain, mint: string) => {
  const [market, setMarket] = useState<Market | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [refresh, setRefresh] = useState(0)
  useEffect(() => {
    const abort = new AbortController()
    let timer: ReturnType<typeof setTimeout> | undefined
    let lastTrades: number | undefined
    let settle = 0
    const tick = async () => {
      try {
        const r = await api<{ market: Market }>(`/api/v1/markets/${chain}/${encodeURIComponent(mint)}`, abort.signal)
        setMarket(r.market)
        setError(undefined)
        if (lastTrades !== undefined && r.market.tradesTotal !== lastTrades) settle = SETTLE_TICKS
        lastTrades = r.market.tradesTotal
        if (settle > 0) {
          settle--
          setRefresh((n) => n + 1)
        }
      } catch (e) {
        if (abort.signal.aborted) return
        setError(e instanceof HttpError && e.status === 404 ? "No such market (yet): it appears once the chain's event reaches the engine." : String(e))
      }
      if (!abort.signal.aborted) timer = setTimeout(tick, RECORD_MS)
    }
    void tick()
    return () => {
      abort.abort()
      clearTimeout(timer)
    }
  }, [chain, mint])
  return { market, error, refresh }
}

const useTape = (chain: Chain, mint: string, refresh: number, enabled: boolean) => {
  const [trades, setTrades] = useState<ReadonlyArray<Trade> | undefined>(undefined)
  useEffect(() => {
    if (!enabled) return
    const abort = new AbortController()
    data<{ trades: ReadonlyArray<Trade> }>(`/v1/market/token/${encodeURIComponent(mint)}/trades?chain=${chain}&limit=50`, { signal: abort.signal })
      .then((r) => setTrades(r.trades))
      .catch(() => undefined)
    return () => abort.abort()
  }, [chain, mint, refresh, enabled])
  return trades
}

const QuoteForm = ({ chain, mint, market }: { chain: Chain; mint: string; market: Market }) => {
  const [side, setSide] = useState<"buy" | "sell">("buy")
  const [amount, setAmount] = useState("1")
  const [answer, setAnswer] = useState<{ quote?: Record<string, unknown>; error?: string } | undefined>(undefined)
  const decimalsIn = side === "buy" ? market.quoteDecimals : market.decimals
  const decimalsOut = side === "buy" ? market.decimals : market.quoteDecimals
  const submit = async (e: Event) => {
    e.preventDefault()
    const raw = toRaw(amount, decimalsIn)
    if (raw === undefined || raw === "0") {
      setAnswer({ error: `Enter an amount with at most ${decimalsIn} decimals` })
      return
    }
    try {
      const r = await api<{ quote: Record<string, unknown> }>(`/api/v1/markets/${chain}/${encodeURIComponent(mint)}/quote?side=${side}&amountIn=${raw}`)
      setAnswer({ quote: r.quote })
    } catch (err) {
      const body = err instanceof HttpError ? (err.body as { error?: { message?: string } } | undefined) : undefined
      setAnswer({ error: body?.error?.message ?? String(err) })
    }
  }
  const out = answer?.quote?.amountOut
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="quote-title">
      <h2 id="quote-title">Quote</h2>
      <div class="controls">
        <label>
          <span class="sr">Side</span>
          <select value={side} onChange={(e) => setSide(e.currentTarget.value as "buy" | "sell")}>
            <option value="buy">Buy with quote</option>
            <option value="sell">Sell tokens</option>
          </select>
        </label>
        <label>
          <span class="sr">Amount in</span>
          <input inputMode="decimal" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} size={14} aria-label="Amount in" />
        </label>
        <button type="submit">Quote</button>
      </div>
      {answer?.error !== undefined && <p role="alert" class="error">{answer.error}</p>}
      {typeof out === "string" && (
        <dl class="facts" data-testid="quote">
          <dt>You get</dt>
          <dd>
            {compact(fromRaw(out, decimalsOut))} {side === "buy" ? market.metadata.symbol : "quote"}
          </dd>
          {typeof answer?.quote?.minAmountOut === "string" && (
            <>
              <dt>At least</dt>
              <dd>{compact(fromRaw(answer.quote.minAmountOut, decimalsOut))}</dd>
            </>
          )}
          {typeof answer?.quote?.crossesGraduation === "boolean" && (
            <>
              <dt>Graduates</dt>
              <dd>{answer.quote.crossesGraduation ? "yes" : "no"}</dd>
            </>
          )}
        </dl>
      )}
    </form>
  )
}

const Verify = ({ chain, mint }: { chain: Chain; mint: string }) => {
  const [v, setV] = useState<Record<string, unknown> | undefined>(undefined)
  useEffect(() => {
    const abort = new AbortController()
    api<Record<string, unknown>>(`/api/v1/verify/${chain}/${encodeURIComponent(mint)}`, abort.signal)
      .then(setV)
      .catch(() => undefined)
    return () => abort.abort()
  }, [chain, mint])
  if (v === undefined) return null
  const attribution = v.attribution as { signer?: string } | undefined
  return (
    <>
      <dt>Verified</dt>
      <dd>{v.candleLaunched === true ? "launched here" : "not launched by this service"}</dd>
      {typeof v.launchedVia === "string" && (
        <>
          <dt>Via</dt>
          <dd>{v.launchedVia}</dd>
        </>
      )}
      {attribution?.signer !== undefined && (
        <>
          <dt>Signer</dt>
          <dd>{shortAddress(attribution.signer)}</dd>
        </>
      )}
    </>
  )
}

export const Token = ({ chain, mint }: { chain: Chain; mint: string }) => {
  const [interval, setIntervalId] = useState<IntervalId>("1m")
  const { market, error, refresh } = useMarket(chain, mint)
  const hasKey = dataKey() !== ""
  const candles = useCandles(chain, mint, interval, refresh, hasKey, market)
  const trades = useTape(chain, mint, refresh, hasKey)
  const now = Date.now()
  useEffect(() => {
    if (market !== undefined) document.title = `${market.metadata.symbol} · curvestream`
  }, [market?.metadata.symbol])
  return (
    <section aria-labelledby="token-title">
      <div class="token-head">
        {market !== undefined && isImageUrl(market.metadata.image) && <img src={market.metadata.image} alt="" />}
        <div>
          <h1 id="token-title">
            {market?.metadata.symbol ?? shortAddress(mint)} <span class="muted">{market?.metadata.name ?? ""}</span>
          </h1>
          <span class={`chip ${chain}`}>{chain}</span> <code>{mint}</code>
        </div>
      </div>
      {error !== undefined && <p role="alert" class="error">{error}</p>}
      <div class="grid2">
        <div class="stack">
          <div class="panel">
            <div class="controls" role="group" aria-label="Candle interval">
              {INTERVALS.map((i) => (
                <button key={i.id} type="button" aria-pressed={interval === i.id} onClick={() => setIntervalId(i.id)}>
                  {i.id}
                </button>
              ))}
              <span class="muted" data-testid="candle-count">
                {candles.count === undefined ? "" : `${candles.count} candles`}
              </span>
            </div>
            {hasKey ? <div class="chart" ref={candles.el} data-testid="candles" data-close={candles.close} /> : <p class="muted">Add the data key (top right) to see candles and trades.</p>}
            {candles.error !== undefined && <p role="alert" class="error">{candles.error}</p>}
          </div>
          <div class="panel tape" aria-labelledby="tape-title">
            <h2 id="tape-title">Trades</h2>
            <table data-testid="tape">
              <thead>
                <tr>
                  <th scope="col">Age</th>
                  <th scope="col">Side</th>
                  <th scope="col" class="num">Tokens</th>
                  <th scope="col" class="num">Quote</th>
                  <th scope="col">Trader</th>
                  <th scope="col">Venue</th>
                </tr>
              </thead>
              <tbody>
                {(trades ?? []).map((t) => (
                  <tr key={t.id} data-signature={t.signature}>
                    <td>{age(t.at, now)}</td>
                    <td class={t.side === "buy" ? "up" : "down"}>{t.side}</td>
                    <td class="num">{compact(t.amount)}</td>
                    <td class="num">{compact(t.quote)}</td>
                    <td>
                      <code>{shortAddress(t.trader)}</code>
                    </td>
                    <td>{t.venue}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {trades !== undefined && trades.length === 0 && <p class="muted empty">No trades yet.</p>}
          </div>
        </div>
        <div class="stack">
          {market !== undefined && (
            <div class="panel" aria-labelledby="state-title">
              <h2 id="state-title">Curve</h2>
              <dl class="facts" data-testid="state">
                <dt>Lifecycle</dt>
                <dd data-field="lifecycle">{market.lifecycle}</dd>
                <dt>Progress</dt>
                <dd>{bps(market.progressBps)}</dd>
                <dt>Raised</dt>
                <dd>
                  {market.migration.reserveRaw !== undefined ? compact(fromRaw(market.migration.reserveRaw, market.quoteDecimals)) : "–"} /{" "}
                  {market.migration.thresholdRaw !== undefined ? compact(fromRaw(market.migration.thresholdRaw, market.quoteDecimals)) : "–"}
                </dd>
                <dt>Migration</dt>
                <dd>{market.migration.status}</dd>
                <dt>Venue</dt>
                <dd>
                  {market.venue} → {market.graduationVenue}
                </dd>
                <dt>Trading</dt>
                <dd>
                  buys {market.buysOpen ? "open" : "closed"}, sells {market.sellsOpen ? "open" : "closed"}, fee {bps(market.feeBps)}
                </dd>
                <dt>Price</dt>
                <dd data-field="price">{compact(market.price)}</dd>
                <dt>Market cap</dt>
                <dd>{compact(market.marketCap)}</dd>
                <dt>Volume 24h</dt>
                <dd>{compact(market.volume24h)}</dd>
                <dt>Trades</dt>
                <dd data-field="trades">{market.tradesTotal}</dd>
                <dt>Created</dt>
                <dd>{age(market.createdAt, now)} ago</dd>
                <dt>Creator</dt>
                <dd>
                  <code>{shortAddress(market.creator)}</code>
                </dd>
              </dl>
            </div>
          )}
          {market !== undefined && <QuoteForm chain={chain} mint={mint} market={market} />}
          <div class="panel" aria-labelledby="meta-title">
            <h2 id="meta-title">Metadata</h2>
            {market !== undefined && (
              <dl class="facts">
                <dt>Name</dt>
                <dd>{market.metadata.name}</dd>
                <dt>Symbol</dt>
                <dd>{market.metadata.symbol}</dd>
                <dt>Metadata URI</dt>
                <dd>{market.metadata.image ?? "–"}</dd>
                <dt>Socials</dt>
                <dd>{market.metadata.socials === null ? "none given" : JSON.stringify(market.metadata.socials)}</dd>
                <Verify chain={chain} mint={mint} />
              </dl>
            )}
          </div>
        </div>
      </div>
    </section>
  )
}
