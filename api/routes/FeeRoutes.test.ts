/** The fee claim body, decoded by its Schema as the router does: `{dryRun: true}`, `{}` or none. */
import { describe, expect, it } from "vitest"
import { schemaBodyDecoder } from "../Router.js"
import { FeeClaimBody } from "./FeeRoutes.js"

const decode = schemaBodyDecoder(FeeClaimBody)

describe("fee claim body", () => {
  it("reads no body and {} as a claim, dryRun as sent, and ignores other members", () => {
    expect([undefined, {}, { dryRun: false }, { dryRun: true }, { dryRun: true, other: 1 }].map(decode)).toEqual([
      { dryRun: false },
      { dryRun: false },
      { dryRun: false },
      { dryRun: true },
      { dryRun: true }
    ])
  })
  it("refuses a dryRun that is not a boolean naming dryRun, and a body that is not an object naming body", () => {
    for (const [body, field] of [
      [{ dryRun: "true" }, "dryRun"],
      [{ dryRun: null }, "dryRun"],
      [{ dryRun: 1 }, "dryRun"],
      ["x", "body"],
      [null, "body"],
      [[], "body"]
    ] as const) {
      expect(decode(body)).toMatchObject({ _tag: "ApiError", code: "VALIDATION_FAILED", field })
    }
  })
})
