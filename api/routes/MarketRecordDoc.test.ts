/**
 * The documented market record (`MarketRecordDoc.ts`) names every member the actor's
 * `marketRecord` writes, with its type, in every lifecycle and migration status on both chains:
 * each record is checked against the JSON Schema the OpenAPI document carries (Ajv, 2020-12, as
 * the contract check of the end-to-end tests does), where a member without its schema
 * (`additionalProperties: false`) or a wrong type fails. (Feed rows: `test/conformance/feedRows.test.ts`.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import { JSONSchema, Schema } from "effect"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { marketRecord } from "../../actors/market/MarketRecord.js"
import { ChainClock, coreOf, SimMarket } from "../../test/support/marketSim.js"
import { MarketRecordDoc } from "./MarketRecordDoc.js"

const SOL = 1_000_000_000n
const ETH = 10n ** 18n


/** Each state's events, built on one market per chain and status. */
const states = (): ReadonlyArray<readonly [string, ReadonlyArray<ChainEvent>]> => {
  const out: Array<readonly [string, ReadonlyArray<ChainEvent>]> = []
  for (const chain of ["solana", "hood"] as const) {
    const unit = chain === "solana" ? SOL : ETH
    const fresh = (name: string) => new SimMarket(new ChainClock(chain), { mint: chain === "solana" ? `So1Doc${name}` : `0xdoc${name}` })
    const t = fresh("trading")
    out.push([`${chain} trading`, [t.created(), ...t.buy("a", unit / 10n)]])
    const d = fresh("done")
    const done = [d.created(), ...d.buy("w", 100n * unit)]
    out.push([`${chain} completed`, done])
    const p = [...done, d.progress("in_progress", 2, d.clock.nowMs + 60_000)]
    out.push([`${chain} in_progress`, p])
    out.push([`${chain} delayed`, [...p, d.progress("delayed", 9)]])
    const g = fresh("migrated")
    out.push([`${chain} migrated`, [g.created(), ...g.buy("w", 100n * unit), g.migrated(chain === "solana" ? 150 : 30)]])
  }
  const r = new SimMarket(new ChainClock("hood"), { mint: "0xdocrecovery" })
  out.push(["hood recovery", [r.created(), ...r.buy("w", 10n * ETH), r.progress("in_progress", 4, r.clock.nowMs + 1000), r.progress("cancelled", 4)]])
  return out
}

const ajv = new Ajv2020({ strict: false, allErrors: true })
const validatorOf = (schema: Schema.Schema.Any) => ajv.compile(JSONSchema.make(schema, { target: "jsonSchema2020-12" }) as object)

describe("the documented market record", () => {
  const record = validatorOf(MarketRecordDoc)
  for (const [name, events] of states()) {
    it(`${name}: the record as written validates`, () => {
      const core = coreOf(events)
      const written = JSON.parse(JSON.stringify(marketRecord(core, core.lastEventAtMs)))
      expect(record(written), `${name}: ${JSON.stringify(record.errors)}`).toBe(true)
    })
  }
  it("a member the schema does not name fails", () => {
    const core = coreOf(states()[0]![1])
    expect(record({ ...JSON.parse(JSON.stringify(marketRecord(core, core.lastEventAtMs))), extra: 1 })).toBe(false)
  })
})
