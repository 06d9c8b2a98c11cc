import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { launchMintSeed, launchMintSigner } from "./LaunchMint.js"

const secret = new Uint8Array(32).fill(1)
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex")

describe("launch mint derivation", () => {
  it("is the same keypair for the same attempt, and a different one for another secret", async () => {
    const id = { accountId: "acct-1", clientLaunchId: "launch-1", attempt: 1 }
    expect((await launchMintSigner(secret, id)).address).toBe((await launchMintSigner(secret, id)).address)
    expect((await launchMintSigner(new Uint8Array(32).fill(2), id)).address).not.toBe((await launchMintSigner(secret, id)).address)
  })

  it("differs whenever the account, the id or the attempt differs, also where a plain concatenation would collide (property)", () => {
    const part = fc.string({ maxLength: 12 })
    fc.assert(
      fc.property(part, part, fc.nat(1_000), part, part, fc.nat(1_000), (a1, c1, n1, a2, c2, n2) => {
        fc.pre(a1 !== a2 || c1 !== c2 || n1 !== n2)
        expect(hex(launchMintSeed(secret, { accountId: a1, clientLaunchId: c1, attempt: n1 }))).not.toBe(
          hex(launchMintSeed(secret, { accountId: a2, clientLaunchId: c2, attempt: n2 }))
        )
      })
    )
    expect(hex(launchMintSeed(secret, { accountId: "ab", clientLaunchId: "c", attempt: 1 }))).not.toBe(
      hex(launchMintSeed(secret, { accountId: "a", clientLaunchId: "bc", attempt: 1 }))
    )
  })

  it("refuses a secret under 32 bytes and an attempt that is not a whole number", () => {
    expect(() => launchMintSeed(new Uint8Array(31), { accountId: "a", clientLaunchId: "c", attempt: 1 })).toThrow(RangeError)
    expect(launchMintSeed(new Uint8Array(32), { accountId: "a", clientLaunchId: "c", attempt: 1 })).toHaveLength(32)
    expect(() => launchMintSeed(secret, { accountId: "a", clientLaunchId: "c", attempt: 1.5 })).toThrow(RangeError)
    expect(() => launchMintSeed(secret, { accountId: "a", clientLaunchId: "c", attempt: -1 })).toThrow(RangeError)
  })
})
