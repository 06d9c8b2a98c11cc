/** lightweight-charts with the page's colours; one place so every chart looks the same. */
import { type ChartOptions, createChart, type DeepPartial, type IChartApi } from "lightweight-charts"

const options: DeepPartial<ChartOptions> = {
  autoSize: true,
  layout: { background: { color: "#161b22" }, textColor: "#c9d1d9", attributionLogo: false },
  grid: { vertLines: { color: "#21262d" }, horzLines: { color: "#21262d" } },
  rightPriceScale: { borderColor: "#30363d" },
  timeScale: { borderColor: "#30363d", timeVisible: true, secondsVisible: false },
  crosshair: { mode: 0 }
}

export const makeChart = (el: HTMLElement, extra: DeepPartial<ChartOptions> = {}): IChartApi => createChart(el, { ...options, ...extra })

/** A price format for tiny prices (curve tokens often cost 1e-8 of their quote). */
export const tinyPrice = { type: "price" as const, precision: 10, minMove: 1e-10 }
