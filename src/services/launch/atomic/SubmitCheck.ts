/**
 * `/launch/atomic/submit`'s check of the client legs (launch spec 2.4, 4 rules 8 and 9), pure:
 * `signedTxsBase64` must hold exactly the build's client-signer legs, in leg order, never padded.
 * A wrong count is a `shape` refusal (the bundle was consumed; build again); a leg that is not its
 * built message signed by every signer (altered bytes, a changed minimum, a missing signature) is a
 * `bytes` refusal (`UNRECOGNIZED_TRANSACTION`: nothing was signed or sent, resubmittable until the
 * build expires). On success, every leg's wire in bundle order, the server legs left for the
 * service to sign.
 */
import { type AssembledLeg, readSignedLeg, sameMessage } from "../../../chain/solana/launch/AtomicBundle.js"

export interface BuiltLeg {
  readonly index: number
  readonly signer: "server" | "client"
  readonly assembled: AssembledLeg
}

export type SubmitCheck =
  | {
      readonly _tag: "Accepted"
      /** Per leg in bundle order: the client's signed wire, or null for a server leg still to sign. */
      readonly wires: ReadonlyArray<string | null>
    }
  | { readonly _tag: "Refused"; readonly kind: "shape" | "bytes"; readonly field: string; readonly detail: string }

export const checkSubmittedLegs = (legs: ReadonlyArray<BuiltLeg>, signedTxsBase64: ReadonlyArray<string>): SubmitCheck => {
  const clientLegs = legs.filter((l) => l.signer === "client")
  if (signedTxsBase64.length !== clientLegs.length) {
    return {
      _tag: "Refused",
      kind: "shape",
      field: "signedTxsBase64",
      detail: `expected exactly ${clientLegs.length} signed client leg(s) in leg order, got ${signedTxsBase64.length}`
    }
  }
  const byIndex = new Map<number, string>()
  for (let i = 0; i < clientLegs.length; i++) {
    const leg = clientLegs[i]!
    const signed = readSignedLeg(signedTxsBase64[i]!)
    if (signed === undefined || !sameMessage(leg.assembled, signed)) {
      return {
        _tag: "Refused",
        kind: "bytes",
        field: `signedTxsBase64[${i}]`,
        detail: `signedTxsBase64[${i}] is not leg ${leg.index} as built and signed by its payer`
      }
    }
    byIndex.set(leg.index, signedTxsBase64[i]!)
  }
  return { _tag: "Accepted", wires: legs.map((l) => byIndex.get(l.index) ?? null) }
}
