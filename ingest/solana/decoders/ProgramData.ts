/**
 * svc-curve's events in a transaction's log messages: the payloads of the `Program data: <base64>`
 * lines logged while svc-curve is the running (innermost) program, in log order, each with its
 * event index. Other programs' data lines (through CPI or their own instructions) are skipped by
 * tracking the invoke stack from the runtime's `invoke [n]` / `success` / `failed` lines.
 * Never throws: malformed base64 yields whatever bytes Node decodes, and those fail the event
 * decoders, which answer `none`.
 */
import type { Address } from "@solana/kit"

const INVOKE = /^Program (\w+) invoke \[(\d+)\]$/
const DONE = /^Program (\w+) (success|failed: .*)$/
const DATA_PREFIX = "Program data: "
export const LOG_TRUNCATED = "Log truncated"

export interface ProgramDataEvent {
  readonly eventIndex: number
  readonly data: Uint8Array
}

export interface ProgramDataEvents {
  readonly events: ReadonlyArray<ProgramDataEvent>
  /** The validator cut the log: events logged after the cut are lost. */
  readonly truncated: boolean
}

export const programDataEvents = (logs: ReadonlyArray<string>, programId: Address): ProgramDataEvents => {
  const stack: string[] = []
  const events: ProgramDataEvent[] = []
  let truncated = false
  for (const line of logs) {
    const invoke = INVOKE.exec(line)
    if (invoke !== null) {
      stack.push(invoke[1] ?? "")
      continue
    }
    if (DONE.test(line)) {
      stack.pop()
      continue
    }
    if (line === LOG_TRUNCATED) {
      truncated = true
      continue
    }
    if (line.startsWith(DATA_PREFIX) && stack[stack.length - 1] === programId) {
      events.push({ eventIndex: events.length, data: new Uint8Array(Buffer.from(line.slice(DATA_PREFIX.length), "base64")) })
    }
  }
  return { events, truncated }
}
