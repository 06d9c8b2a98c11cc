/**
 * A token's OHLCV as a hand-built SVG: candles (green up, red down), a volume strip under them,
 * the price range on the left axis and the title (the token's name and symbol, XML-escaped).
 *
 * Bounds: width 320..2000 and height 200..1200 pixels (clamped by the route); at most
 * `CHART_CANDLES_MAX` candles are drawn (the newest; the route asks for no more), so the document
 * is at most a few hundred kilobytes. Prices are floats: a picture, never an amount.
 */
import type { Candle } from "../../../src/services/marketdata/MarketData.js"

export const CHART_CANDLES_MAX = 500
export const CHART_WIDTH = { min: 320, max: 2000, default: 800 } as const
export const CHART_HEIGHT = { min: 200, max: 1200, default: 400 } as const

/** XML text and attribute escaping (the five predefined entities; control characters dropped). */
export const escapeXml = (s: string): string =>
  s
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")

const fmt = (n: number): string => (Number.isFinite(n) ? Number(n.toFixed(2)).toString() : "0")

/** A short label for a price (quote per whole token). */
const priceLabel = (p: number): string => (p === 0 ? "0" : Math.abs(p) >= 1 ? p.toPrecision(6) : p.toPrecision(4))

export interface ChartInput {
  readonly title: string
  readonly interval: string
  readonly candles: ReadonlyArray<Candle>
  /** Multiplies `trades.price` (quote raw per token raw) into quote per whole token. */
  readonly priceScale: number
  readonly width: number
  readonly height: number
}

export const ohlcvSvg = (input: ChartInput): string => {
  const { width, height } = input
  const candles = input.candles.slice(-CHART_CANDLES_MAX)
  const padL = 70
  const padR = 10
  const padT = 28
  const volH = Math.round(height * 0.18)
  const padB = 20
  const plotW = width - padL - padR
  const plotH = height - padT - padB - volH - 6
  const parts: Array<string> = []
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${padL}" y="18" font-size="13" fill="#111">${escapeXml(`${input.title} · ${input.interval}`)}</text>`
  )
  if (candles.length === 0) {
    parts.push(`<text x="${width / 2}" y="${height / 2}" text-anchor="middle" fill="#777">no trades in range</text>`, "</svg>")
    return parts.join("")
  }
  let lo = Infinity
  let hi = -Infinity
  let vMax = 0n
  for (const c of candles) {
    lo = Math.min(lo, c.low * input.priceScale)
    hi = Math.max(hi, c.high * input.priceScale)
    if (c.volumeQuoteRaw > vMax) vMax = c.volumeQuoteRaw
  }
  if (hi === lo) {
    hi = hi * 1.01 + 1e-18
    lo = lo * 0.99
  }
  const y = (p: number) => padT + ((hi - p * input.priceScale) / (hi - lo)) * plotH
  const step = plotW / candles.length
  const bodyW = Math.max(1, step * 0.7)
  const volTop = padT + plotH + 6
  parts.push(
    `<line x1="${padL}" y1="${padT}" x2="${padL}" y2="${padT + plotH}" stroke="#999"/>`,
    `<text x="${padL - 4}" y="${padT + 4}" text-anchor="end" fill="#333">${escapeXml(priceLabel(hi))}</text>`,
    `<text x="${padL - 4}" y="${padT + plotH}" text-anchor="end" fill="#333">${escapeXml(priceLabel(lo))}</text>`
  )
  candles.forEach((c, i) => {
    const x = padL + i * step + (step - bodyW) / 2
    const mid = x + bodyW / 2
    const up = c.close >= c.open
    const color = up ? "#16a34a" : "#dc2626"
    const top = y(Math.max(c.open, c.close))
    const bottom = y(Math.min(c.open, c.close))
    parts.push(
      `<line x1="${fmt(mid)}" y1="${fmt(y(c.high))}" x2="${fmt(mid)}" y2="${fmt(y(c.low))}" stroke="${color}"/>`,
      `<rect x="${fmt(x)}" y="${fmt(top)}" width="${fmt(bodyW)}" height="${fmt(Math.max(1, bottom - top))}" fill="${color}"/>`
    )
    if (vMax > 0n) {
      // Bigint ratio in per-mille: volumes can exceed 2^53.
      const h = (Number((c.volumeQuoteRaw * 1000n) / vMax) / 1000) * volH
      parts.push(`<rect x="${fmt(x)}" y="${fmt(volTop + volH - h)}" width="${fmt(bodyW)}" height="${fmt(h)}" fill="${color}" opacity="0.5"/>`)
    }
  })
  const first = candles[0]!
  const last = candles[candles.length - 1]!
  parts.push(
    `<text x="${padL}" y="${height - 5}" fill="#333">${escapeXml(new Date(first.startMs).toISOString().slice(0, 16).replace("T", " "))}</text>`,
    `<text x="${width - padR}" y="${height - 5}" text-anchor="end" fill="#333">${escapeXml(new Date(last.startMs).toISOString().slice(0, 16).replace("T", " "))} UTC</text>`,
    "</svg>"
  )
  return parts.join("")
}
