/**
 * The assembled bundle lands on the localnet as one bundle once each party signs its legs as a
 * client would (decode the wire, sign, re-encode), the tip paid inside the launch; a leg whose
 * bytes or minimum changed is not the built leg, nor is a leg missing a signature.
 */
import { createNoopSigner, generateKeyPairSigner } from "@solana/kit"
import { atomicTerms, clientSign } from "../../../../test/support/atomicBundles.js"
import { describe, expect, it } from "vitest"
import { devSigner } from "../client/DevSigners.js"
import { Ledger } from "../localnet/Ledger.js"
import { WSOL_MINT_ADDRESS } from "../program/ProgramIds.js"
import { assembleAtomicBundle, readSignedLeg, sameMessage } from "./AtomicBundle.js"
import { deliveredTokensRaw } from "./BuyLegTransaction.js"
import { isLaunchPlan, planLaunch } from "./LaunchTransaction.js"

const SOL = 1_000_000_000n
const terms = atomicTerms

describe("atomic bundle assembly", () => {
  it("lands whole once signed, tip in the launch; changed or unsigned legs are not the built ones", async () => {
    const ledger = new Ledger()
    const creator = await devSigner(0)
    const buyer = await devSigner(1)
    const treasury = (await generateKeyPairSigner()).address
    const mint = await generateKeyPairSigner()
    const plan = planLaunch(terms, 0n, { bps: 50n, treasury })
    if (!isLaunchPlan(plan)) throw new Error("plan")
    const lifetime = ledger.latestBlockhash()
    const input = (minOut: bigint) => ({
      launch: {
        payer: createNoopSigner(creator.address),
        mint,
        quoteMint: WSOL_MINT_ADDRESS,
        terms,
        name: "Atomic",
        symbol: "ATM",
        metadataUri: "https://example.com/a.json",
        devBuyRaw: 0n,
        platformFee: { bps: 50n, treasury },
        lifetime,
        bundleTip: { account: ledger.tipAccounts[2]!, lamports: 100_000n }
      },
      launchPlan: plan,
      legs: [{ buyer: createNoopSigner(buyer.address), amountInRaw: SOL, minAmountOutRaw: minOut, platformFeeRaw: 5_000_000n }],
      treasury,
      lifetime
    })
    const built = await assembleAtomicBundle(input(1n))
    expect(built.legs).toHaveLength(2)
    const launchSigned = await clientSign(built.legs[0]!.wireBase64, creator)
    const buySigned = await clientSign(built.legs[1]!.wireBase64, buyer)
    expect(sameMessage(built.legs[1]!, readSignedLeg(buySigned)!)).toBe(true)
    expect(sameMessage(built.legs[1]!, readSignedLeg(built.legs[1]!.wireBase64)!)).toBe(false) // unsigned
    const repriced = await assembleAtomicBundle(input(2n))
    expect(sameMessage(built.legs[1]!, readSignedLeg(await clientSign(repriced.legs[1]!.wireBase64, buyer))!)).toBe(false)
    const tampered = Buffer.from(buySigned, "base64")
    tampered[tampered.length - 3] = tampered[tampered.length - 3]! ^ 1
    expect(sameMessage(built.legs[1]!, readSignedLeg(tampered.toString("base64"))!)).toBe(false)
    expect(readSignedLeg("not a transaction")).toBeUndefined()
    const tipBefore = ledger.getBalance(ledger.tipAccounts[2]!)
    const r = ledger.submitBundle([launchSigned, buySigned].map((s) => new Uint8Array(Buffer.from(s, "base64"))), { minLamports: 100_000n })
    if (r._tag !== "Landed") throw new Error(r.detail)
    expect(ledger.getBalance(ledger.tipAccounts[2]!) - tipBefore).toBe(100_000n)
    const buyTx = ledger.getTransaction(r.signatures[1]!)!
    expect(deliveredTokensRaw(buyTx.preTokenBalances, buyTx.postTokenBalances, buyer.address, mint.address)).toBeGreaterThan(0n)
  })
})
