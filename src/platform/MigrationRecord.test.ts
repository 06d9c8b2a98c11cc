import { describe, expect, it } from "vitest"
import { foreignMigration } from "./MigrationRecord.js"

const shipped = [
  { id: 1, name: "init" },
  { id: 2, name: "trades" }
]

describe("foreignMigration", () => {
  it("accepts records that are this build's, in any order, repeated, or fewer (pending ones are applied after)", () => {
    expect(foreignMigration([], shipped)).toBeUndefined()
    expect(foreignMigration([{ id: 2, name: "trades" }, { id: 1, name: "init" }, { id: 1, name: "init" }], shipped)).toBeUndefined()
    expect(foreignMigration([{ id: 1, name: "init" }], shipped)).toBeUndefined()
  })

  it("names a recorded id whose name differs from this build's", () => {
    expect(foreignMigration([{ id: 1, name: "init" }, { id: 2, name: "trades_granules" }], shipped)).toBe(
      'migration 2 is recorded as "trades_granules", and this build\'s migration 2 is "trades": the data was migrated by a different build; open it with that build or start from an empty data directory'
    )
  })

  it("names a recorded id this build does not have", () => {
    expect(foreignMigration([{ id: 3, name: "later" }], shipped)).toMatch(/^migration 3 \("later"\) is recorded, and this build has no migration 3: /)
  })
})
