/**
 * The part of autocannon 8's programmatic API the bench uses. autocannon ships no typings and
 * `@types/autocannon` is not a dependency we take for one file.
 */
declare module "autocannon" {
  import type { EventEmitter } from "node:events"

  namespace autocannon {
    interface Options {
      url: string
      connections?: number
      pipelining?: number
      /** Seconds. */
      duration?: number
      /** Unset: the main thread (no worker threads). */
      workers?: number
      method?: string
      headers?: Record<string, string>
      /** Seconds. */
      timeout?: number
      title?: string
    }

    /** hdr-histogram-percentiles-obj: whole units (ms for latency), coarse below 1 ms. */
    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      p50: number
      p90: number
      p99: number
      p99_9: number
      total: number
    }

    interface Result {
      title?: string
      url: string
      requests: Histogram
      latency: Histogram
      throughput: Histogram
      /** Seconds. */
      duration: number
      errors: number
      timeouts: number
      mismatches: number
      non2xx: number
      "1xx": number
      "2xx": number
      "3xx": number
      "4xx": number
      "5xx": number
      statusCodeStats: Record<string, { count: number }>
    }

    interface Instance extends EventEmitter {
      stop(): void
      /** statusCode, response bytes, response time in ms with sub-ms precision (process.hrtime). */
      on(event: "response", listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): this
      on(event: "done", listener: (result: Result) => void): this
      on(event: string, listener: (...args: Array<unknown>) => void): this
    }
  }

  function autocannon(options: autocannon.Options, callback: (err: Error | null, result: autocannon.Result) => void): autocannon.Instance

  export = autocannon
}
