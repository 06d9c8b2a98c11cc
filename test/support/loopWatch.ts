/**
 * A vitest setup file (`vitest.config.ts`): watches each test file's event loop. Vitest's worker
 * talks to the runner over an RPC with a fixed 60 s timeout; a worker whose loop is held past it
 * (synchronous work, or a loop starved on a loaded machine) fails the whole run with
 * `[vitest-worker]: Timeout calling "onTaskUpdate"` although every test passed, and names no file.
 * This names it: the file's longest stall (how late a 250 ms tick ran) goes to stderr when it
 * passed `CURVESTREAM_LOOP_WARN_MS` (default 10 s), and, when `CURVESTREAM_LOOP_REPORT` names a
 * file, every test file's longest stall is appended to it as one JSON line.
 */
import { appendFileSync } from "node:fs"
import { afterAll, beforeAll } from "vitest"
import { suiteFile } from "./suiteFile.js"

const TICK_MS = 250
const warnMs = Number(process.env.CURVESTREAM_LOOP_WARN_MS ?? 10_000)
const report = process.env.CURVESTREAM_LOOP_REPORT

let last = 0
let longest = 0
let longestAt = ""
let timer: ReturnType<typeof setInterval> | undefined

beforeAll(() => {
  last = performance.now()
  timer = setInterval(() => {
    const now = performance.now()
    const stall = now - last - TICK_MS
    if (stall > longest) {
      longest = stall
      longestAt = new Date().toISOString()
    }
    last = now
  }, TICK_MS)
  timer.unref()
})

afterAll((suite) => {
  if (timer !== undefined) clearInterval(timer)
  const file = suiteFile(suite)
  const stallMs = Math.round(longest)
  if (stallMs > warnMs) process.stderr.write(`loop-watch: ${file}: the event loop stalled ${stallMs} ms (ending ${longestAt})\n`)
  if (report !== undefined && report !== "") appendFileSync(report, `${JSON.stringify({ file, stallMs, at: longestAt })}\n`)
})
