import { describe, expect, it } from "vitest"
import { decideIdentity, type IdentityFacts } from "./ChainIdentity.js"

const facts = (over: Partial<IdentityFacts>): IdentityFacts => ({
  recorded: "genesis:A",
  observed: "genesis:A",
  derivedState: true,
  embedded: true,
  resetAllowed: false,
  ...over
})

describe("decideIdentity", () => {
  it("changes nothing on the recorded chain, whatever the mode or flag", () => {
    for (const embedded of [true, false]) for (const resetAllowed of [true, false]) {
      expect(decideIdentity(facts({ embedded, resetAllowed }))._tag).toBe("Same")
    }
  })

  it("records a first chain when nothing was derived yet", () => {
    expect(decideIdentity(facts({ recorded: undefined, derivedState: false }))._tag).toBe("Record")
    expect(decideIdentity(facts({ recorded: undefined, derivedState: false, embedded: false }))._tag).toBe("Record")
  })

  it("rebuilds an embedded chain that is not the recorded one, or whose state predates identities", () => {
    expect(decideIdentity(facts({ observed: "genesis:B" }))._tag).toBe("Rebuild")
    expect(decideIdentity(facts({ recorded: undefined }))._tag).toBe("Rebuild")
  })

  it("refuses a configured node on another chain unless RESET_CHAIN_STATE names it", () => {
    expect(decideIdentity(facts({ observed: "genesis:B", embedded: false }))._tag).toBe("Refuse")
    expect(decideIdentity(facts({ observed: "genesis:B", embedded: false, resetAllowed: true }))._tag).toBe("Rebuild")
  })

  it("adopts a configured node's state from before identities were recorded (or rebuilds it when asked)", () => {
    expect(decideIdentity(facts({ recorded: undefined, embedded: false }))._tag).toBe("Adopt")
    expect(decideIdentity(facts({ recorded: undefined, embedded: false, resetAllowed: true }))._tag).toBe("Rebuild")
  })
})
