/**
 * Submit's check of the client legs: exactly the client-signer legs in leg order; a wrong count is
 * a consuming `shape` refusal; altered bytes, a changed minimum, a leg signed by the wrong key, an
 * unsigned leg or legs out of order are `bytes` refusals naming the position; server legs are left
 * for the service to sign.
 */
import { createNoopSigner, generateKeyPairSigner } from "@solana/kit"
import { atomicTerms as terms, clientSign as sign } from "../../../../test/support/atomicBundles.js"
import { describe, expect, it } from "vitest"
import { devSigner } from "../../../chain/solana/client/DevSigners.js"
import { assembleAtomicBundle } from "../../../chain/solana/launch/AtomicBundle.js"
import { isLaunchPlan, planLaunch } from "../../../chain/solana/launch/LaunchTransaction.js"
import { WSOL_MINT_ADDRESS } from "../../../chain/solana/program/ProgramIds.js"
import { type BuiltLeg, checkSubmittedLegs } from "./SubmitCheck.js"

const SOL = 1_000_000_000n
const lifetime = { blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 500n }

const build = async (minOut: bigint) => {
  const [creator, a, b] = await Promise.all([devSigner(0), devSigner(1), devSigner(2)])
  const treasury = (await generateKeyPairSigner()).address
  const plan = planLaunch(terms, 0n, { bps: 50n, treasury })
  if (!isLaunchPlan(plan)) throw new Error("plan")
  const mint = await generateKeyPairSigner()
  const bundle = await assembleAtomicBundle({
    launch: { payer: createNoopSigner(creator.address), mint, quoteMint: WSOL_MINT_ADDRESS, terms, name: "S", symbol: "S", metadataUri: "https://e.com/s.json", devBuyRaw: 0n, platformFee: { bps: 50n, treasury }, lifetime, bundleTip: { account: treasury, lamports: 100_000n } },
    launchPlan: plan,
    legs: [a, b, a].map((buyer, i) => ({ buyer: createNoopSigner(buyer.address), amountInRaw: SOL + BigInt(i), minAmountOutRaw: minOut, platformFeeRaw: 1n })),
    treasury,
    lifetime
  })
  // Leg 0 (launch) and 2 are the main payer's (server); 1 and 3 are a linked wallet's (client).
  const legs: BuiltLeg[] = bundle.legs.map((assembled, index) => ({ index, signer: index === 1 || index === 3 ? "client" : "server", assembled }))
  return { legs, a, b }
}

describe("checkSubmittedLegs", () => {
  it("accepts exactly the client legs in order and leaves the server legs to sign", async () => {
    const { legs, a } = await build(10n)
    const one = await sign(legs[1]!.assembled.wireBase64, a)
    const three = await sign(legs[3]!.assembled.wireBase64, a)
    expect(checkSubmittedLegs(legs, [one, three])).toEqual({ _tag: "Accepted", wires: [null, one, null, three] })
  })

  it("a wrong leg count is a consuming shape refusal (never padded)", async () => {
    const { legs, a } = await build(10n)
    const one = await sign(legs[1]!.assembled.wireBase64, a)
    for (const sent of [[one], [one, one, one], []]) expect(checkSubmittedLegs(legs, sent)).toMatchObject({ _tag: "Refused", kind: "shape", field: "signedTxsBase64" })
  })

  it("altered bytes, a changed minimum, the wrong signer, no signature or swapped order are bytes refusals naming the position", async () => {
    const { legs, a, b } = await build(10n)
    const one = await sign(legs[1]!.assembled.wireBase64, a)
    const three = await sign(legs[3]!.assembled.wireBase64, a)
    const tampered = Buffer.from(three, "base64")
    tampered[tampered.length - 1] = tampered[tampered.length - 1]! ^ 1
    const repriced = await build(11n)
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [[one, tampered.toString("base64")], "signedTxsBase64[1]"],
      [[await sign(repriced.legs[1]!.assembled.wireBase64, a), three], "signedTxsBase64[0]"],
      [[one, await sign(legs[3]!.assembled.wireBase64, b).catch(() => legs[3]!.assembled.wireBase64)], "signedTxsBase64[1]"],
      [[legs[1]!.assembled.wireBase64, three], "signedTxsBase64[0]"],
      [[three, one], "signedTxsBase64[0]"],
      [["not base64 at all", three], "signedTxsBase64[0]"]
    ]
    for (const [sent, field] of cases) expect(checkSubmittedLegs(legs, sent)).toMatchObject({ _tag: "Refused", kind: "bytes", field })
  })
})
