/**
 * The SVG picture of a replay (`GET /v1/strategy-lab/replay/{job_id}/chart.svg`): the equity
 * curve on top, the drawdown below, hand-built SVG text.
 *
 * Invariants:
 * - Well-formed XML whatever the input: every text is escaped (`& < > " '`), every number
 *   written is finite (non-finite values are drawn as 0).
 * - Bounded: at most `chartPointsMax` points are drawn (evenly sampled, first and last kept),
 *   so the document stays under `chartBytesMax`.
 * - Equity is parsed from the exact decimal strings only for drawing (floats are fine here).
 */
import type { EquityPoint } from "./Engine.js"

export const chartPointsMax = 1_000
export const chartBytesMax = 64 * 1024

export const escapeXml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&apos;"))

const W = 800
const H = 420
const PAD_L = 70
const PAD_R = 20
const TOP = 40
const EQ_H = 230
const DD_TOP = TOP + EQ_H + 40
const DD_H = 90

const fin = (x: number) => (Number.isFinite(x) ? x : 0)
const n1 = (x: number) => fin(x).toFixed(1)

/** Evenly samples `points` down to `max`, keeping the first and last. */
export const samplePoints = <A>(points: ReadonlyArray<A>, max: number): ReadonlyArray<A> => {
  if (points.length <= max) return points
  const out: Array<A> = []
  const step = (points.length - 1) / (max - 1)
  for (let i = 0; i < max; i++) out.push(points[Math.round(i * step)]!)
  return out
}

export interface ChartInput {
  readonly title: string
  readonly equity: ReadonlyArray<EquityPoint>
  readonly maxDrawdownPct: number
  readonly pnlUsd: string
}

export const equityChartSvg = (input: ChartInput): string => {
  const pts = samplePoints(input.equity, chartPointsMax)
  const xs = pts.map((p) => fin(p.t_ms))
  const eq = pts.map((p) => fin(Number(p.equity_usd)))
  const dd = pts.map((p) => Math.max(0, fin(p.drawdown_pct)))
  const x0 = xs.length > 0 ? Math.min(...xs) : 0
  const x1 = xs.length > 0 ? Math.max(...xs) : 1
  const eMin = eq.length > 0 ? Math.min(...eq) : 0
  const eMax = eq.length > 0 ? Math.max(...eq) : 1
  const eSpan = eMax - eMin || Math.max(1, Math.abs(eMax))
  const ddMax = Math.max(1, ...dd)
  const sx = (t: number) => PAD_L + ((t - x0) / (x1 - x0 || 1)) * (W - PAD_L - PAD_R)
  const sy = (v: number) => TOP + EQ_H - ((v - eMin) / eSpan) * EQ_H
  const sd = (v: number) => DD_TOP + (v / ddMax) * DD_H
  const line = pts.map((_, i) => `${i === 0 ? "M" : "L"}${n1(sx(xs[i]!))},${n1(sy(eq[i]!))}`).join("")
  const area =
    pts.length === 0
      ? ""
      : `M${n1(sx(xs[0]!))},${DD_TOP}` +
        pts.map((_, i) => `L${n1(sx(xs[i]!))},${n1(sd(dd[i]!))}`).join("") +
        `L${n1(sx(xs[xs.length - 1]!))},${DD_TOP}Z`
  const label = (ms: number) => escapeXml(Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 16).replace("T", " ") : "")
  const parts = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<title>${escapeXml(input.title)}</title>`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${PAD_L}" y="22" font-size="14" fill="#111">${escapeXml(input.title)}</text>`,
    `<text x="${W - PAD_R}" y="22" text-anchor="end" fill="#444">P&amp;L ${escapeXml(input.pnlUsd)} USD · max drawdown ${escapeXml(fin(input.maxDrawdownPct).toFixed(2))}%</text>`,
    `<line x1="${PAD_L}" y1="${TOP + EQ_H}" x2="${W - PAD_R}" y2="${TOP + EQ_H}" stroke="#ccc"/>`,
    `<text x="${PAD_L - 6}" y="${TOP + 4}" text-anchor="end" fill="#444">${escapeXml(eMax.toFixed(2))}</text>`,
    `<text x="${PAD_L - 6}" y="${TOP + EQ_H}" text-anchor="end" fill="#444">${escapeXml(eMin.toFixed(2))}</text>`,
    `<text x="${PAD_L}" y="${TOP - 6}" fill="#444">equity (USD)</text>`,
    pts.length > 0 ? `<path d="${line}" fill="none" stroke="#1f6feb" stroke-width="1.5"/>` : `<text x="${W / 2}" y="${TOP + EQ_H / 2}" text-anchor="middle" fill="#888">no data</text>`,
    `<text x="${PAD_L}" y="${DD_TOP - 6}" fill="#444">drawdown (%)</text>`,
    `<line x1="${PAD_L}" y1="${DD_TOP}" x2="${W - PAD_R}" y2="${DD_TOP}" stroke="#ccc"/>`,
    `<text x="${PAD_L - 6}" y="${DD_TOP + DD_H}" text-anchor="end" fill="#444">-${escapeXml(ddMax.toFixed(1))}</text>`,
    area === "" ? "" : `<path d="${area}" fill="#f85149" fill-opacity="0.35" stroke="#f85149" stroke-width="1"/>`,
    `<text x="${PAD_L}" y="${H - 8}" fill="#444">${label(x0)}</text>`,
    `<text x="${W - PAD_R}" y="${H - 8}" text-anchor="end" fill="#444">${label(x1)}</text>`,
    `</svg>`
  ]
  return parts.join("\n")
}
