import { describe, expect, it } from "vitest"
import { ErrorCodes } from "../../domain/ErrorCodes.js"
import { oversizeRefusal } from "./SolanaLaunch.js"
import { errorCodeOf } from "../../../api/LaunchCodes.js"
import { fromSolana } from "./LaunchError.js"
import { launchError, SolanaLaunchFailureReason, SolanaLaunchReasonTraits } from "./SolanaLaunchError.js"

describe("SolanaLaunchError", () => {
  it("an oversized launch is TRANSACTION_TOO_LARGE carrying txBytes, overBy and maxNameBytes", () => {
    const e = oversizeRefusal({ txBytes: 1240, limit: 1232, maxNameBytes: 24, fits: false, overBy: 8 })
    expect(e).toMatchObject({ reason: "transaction_too_large", txBytes: 1240, overBy: 8, maxNameBytes: 24, retryable: false, definitive: true })
    expect(errorCodeOf(fromSolana(e))).toBe("TRANSACTION_TOO_LARGE")
  })

  it("only a confirmation timeout leaves the outcome open", () => {
    const open = Object.entries(SolanaLaunchReasonTraits).filter(([, t]) => !t.definitive).map(([r]) => r)
    expect(open).toEqual(["confirmation_timeout"])
  })

  it("each reason's retryable hint is its spec code's", () => {
    for (const reason of SolanaLaunchFailureReason.literals) {
      const code = errorCodeOf(fromSolana(launchError(reason, "m")))
      const traits = SolanaLaunchReasonTraits[reason]
      expect([reason, traits.retryable]).toEqual([reason, ErrorCodes[code].retryable])
    }
  })
})
