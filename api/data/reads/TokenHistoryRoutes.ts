/**
 * Spec 4.5 `GET /v1/market/token/{address}/history`: OHLCV candles (1m to 1D, 30 days by default)
 * with a summary, and the same history drawn as an SVG chart (`/chart.svg`, at most
 * `CHART_CANDLES_MAX` candles). A range covering more candles than a read allows is refused with
 * a 400 naming `interval` and the `limit`.
 */
import { Effect } from "effect"
import { validationFailed } from "../../../src/domain/ApiError.js"
import { type Candle, candlesMax, type CandleInterval, intervalMinutes } from "../../../src/services/marketdata/MarketData.js"
import { json } from "../../Http.js"
import { type Param, param, timeParam } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { DAY_MS, intQ, iso, type ReadDeps } from "./internal/shared.js"
import { type Token, tokenRoute } from "./internal/token.js"
import { CHART_CANDLES_MAX, CHART_HEIGHT, CHART_WIDTH, ohlcvSvg } from "./OhlcvChart.js"
import { answer } from "../../OpenApi.js"
import { TokenHistory } from "./internal/responses.js"

export const HISTORY_DEFAULT_DAYS = 30
/** Candles the chart shows by default (the newest of its interval). */
const CHART_CANDLES_DEFAULT = 200

const INTERVALS: Record<string, CandleInterval> = { "1m": "1m", "5m": "5m", "15m": "15m", "1h": "1h", "4h": "4h", "1d": "1d" }

/** `interval` (any case; `1D` is a day) with the read's default. */
const intervalQ = (description: string, dflt: CandleInterval): Param<CandleInterval> =>
  param({
    description,
    schema: { type: "string", default: dflt },
    decode: (raw, name) => (raw === undefined ? dflt : (INTERVALS[raw.toLowerCase()] ?? validationFailed(name, "interval must be one of 1m, 5m, 15m, 1h, 4h, 1D")))
  })

const intervalName = (i: CandleInterval): Exclude<CandleInterval, "1d"> | "1D" => (i === "1d" ? "1D" : i)

const candleRow = (t: Token, c: Candle) => ({
  t: iso(c.startMs),
  open: c.open * t.priceScale,
  high: c.high * t.priceScale,
  low: c.low * t.priceScale,
  close: c.close * t.priceScale,
  volume: t.quote(c.volumeQuoteRaw),
  volume_usd: t.usd(c.volumeQuoteRaw),
  volume_tokens: t.tokens(c.volumeTokenRaw),
  trades: c.trades,
  buys: c.buys,
  sells: c.sells
})

export const tokenHistoryRoutes = (deps: ReadDeps): ReadonlyArray<RouteDef> => {
  /** Reads the candles of `interval` over `from..to` (defaults: now, and 30 days or `dfltCandles` back), at most `maxCandles` of them. */
  const readHistory = (
    t: Token,
    range: { readonly interval: CandleInterval; readonly from: number | undefined; readonly to: number | undefined },
    maxCandles: number,
    dfltCandles?: number
  ) =>
    Effect.gen(function* () {
      const { interval } = range
      const stepMs = intervalMinutes[interval] * 60_000
      const toMs = range.to ?? deps.nowMs()
      const fromMs = range.from ?? (dfltCandles === undefined ? toMs - HISTORY_DEFAULT_DAYS * DAY_MS : toMs - dfltCandles * stepMs)
      if (fromMs >= toMs) return yield* validationFailed("from", "from must be before to")
      const count = Math.ceil(toMs / stepMs) - Math.floor(fromMs / stepMs)
      if (count > maxCandles) {
        return yield* validationFailed("interval", `The range covers ${count} ${interval} candles; at most ${maxCandles} per request (use a wider interval)`, {
          limit: maxCandles
        })
      }
      return yield* deps.data.candles(t.core.chain, t.core.mint, interval, fromMs, toMs)
    })

  const history = tokenRoute(
    deps,
    {
      suffix: "/history",
      operationId: "dataTokenHistory",
      summary: "OHLCV candles (1m, 5m, 15m, 1h, 4h, 1D) with a summary; 30 days by default",
      query: {
        interval: intervalQ("1m, 5m, 15m, 1h (default), 4h or 1D", "1h"),
        from: timeParam("ISO 8601 or epoch ms; default to - 30 days"),
        to: timeParam("ISO 8601 or epoch ms; default now")
      },
      responses: { 200: answer("OHLCV candles with a summary", TokenHistory) }
    },
    (t, range) =>
      Effect.gen(function* () {
        const series = yield* readHistory(t, range, candlesMax)
        const s = series.summary
        return json(200, {
          chain: t.core.chain,
          address: t.core.mint,
          interval: intervalName(series.interval),
          price_unit: `${t.quoteAsset ?? "quote"} per whole token`,
          from: iso(series.fromMs),
          to: iso(series.toMs),
          candles: series.candles.map((c) => candleRow(t, c)),
          summary:
            s === null
              ? null
              : {
                  open: s.open * t.priceScale,
                  high: s.high * t.priceScale,
                  low: s.low * t.priceScale,
                  close: s.close * t.priceScale,
                  change: s.change * t.priceScale,
                  change_pct: s.changePct,
                  volume: t.quote(s.volumeQuoteRaw),
                  volume_usd: t.usd(s.volumeQuoteRaw),
                  volume_tokens: t.tokens(s.volumeTokenRaw),
                  trades: s.trades,
                  buys: s.buys,
                  sells: s.sells
                }
        } satisfies typeof TokenHistory.Type)
      })
  )

  const chart = tokenRoute(
    deps,
    {
      suffix: "/chart.svg",
      operationId: "dataTokenChart",
      summary: "OHLCV chart as SVG (at most 500 candles; default the last 200 of the interval)",
      query: {
        interval: intervalQ("1m, 5m, 15m (default), 1h, 4h or 1D", "15m"),
        from: timeParam("ISO 8601 or epoch ms"),
        to: timeParam("ISO 8601 or epoch ms; default now"),
        width: intQ("Pixels", CHART_WIDTH.min, CHART_WIDTH.max, CHART_WIDTH.default),
        height: intQ("Pixels", CHART_HEIGHT.min, CHART_HEIGHT.max, CHART_HEIGHT.default)
      },
      responses: { 200: { description: "image/svg+xml" } }
    },
    (t, { width, height, ...range }) =>
      Effect.gen(function* () {
        const series = yield* readHistory(t, range, CHART_CANDLES_MAX, CHART_CANDLES_DEFAULT)
        const body = ohlcvSvg({
          title: `${t.core.identity.name} (${t.core.identity.symbol})`,
          interval: intervalName(series.interval),
          candles: series.candles,
          priceScale: t.priceScale,
          width,
          height
        })
        return { status: 200, body, contentType: "image/svg+xml; charset=utf-8", headers: [["Cache-Control", "private, max-age=15"]] }
      })
  )

  return [history, chart]
}
