/**
 * A preload for an engine under measurement (`NODE_OPTIONS=--import <this file>`, with
 * `SPAN_COUNT_FILE=<path>`): counts every span Effect's tracer opens, by name (`Effect.fn` and
 * `Effect.withSpan` spans, and `@effect/sql`'s `sql.execute`, one per statement), and on SIGUSR2
 * writes the counts so far to that file as JSON. `bench/spanCount.ts` reads it before and after a
 * number of requests: spans and SQL statements per request. Effect is loaded from the engine's own
 * checkout (its working directory), so the counter wraps the tracer the engine uses; an earlier
 * checkout with its own `node_modules` is counted the same way.
 */
import { writeFileSync } from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

const out = process.env.SPAN_COUNT_FILE
if (out !== undefined && out !== "") {
  const { Effect } = await import(pathToFileURL(path.join(process.cwd(), "node_modules/effect/dist/esm/index.js")).href)
  // The default tracer (the native one): a plain object whose `span` every new span goes through.
  const tracer = Effect.runSync(Effect.tracer)
  const counts = new Map()
  const open = tracer.span
  const count = (name) => counts.set(name, (counts.get(name) ?? 0) + 1)
  tracer.span = function (name, ...rest) {
    count(name)
    const span = open.call(this, name, ...rest)
    if (name === "sql.execute") {
      // The statement's text arrives as an attribute once compiled: counted by its first 240 characters (the key reads share their first ~110).
      const attribute = span.attribute
      span.attribute = function (key, value) {
        if (key === "db.query.text") count(`  sql: ${String(value).replace(/\s+/g, " ").trim().slice(0, 240)}`)
        return attribute.call(this, key, value)
      }
    }
    return span
  }
  process.on("SIGUSR2", () => writeFileSync(out, JSON.stringify(Object.fromEntries(counts))))
}
