/**
 * Shared by the atomic bundle tests: a client's signature over a built leg (decode the wire, sign,
 * re-encode, as an agent would), a ladder-priced bundle assembled on a localnet's blockhash and
 * signed by its parties, and an account with a production key (the usage and fee rows need both).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { createNoopSigner, generateKeyPairSigner, getBase64Decoder, getTransactionDecoder, getTransactionEncoder, type KeyPairSigner, signTransaction } from "@solana/kit"
import type { Effect } from "effect"
import { assembleAtomicBundle } from "../../src/chain/solana/launch/AtomicBundle.js"
import { isLaunchPlan, planLaunch } from "../../src/chain/solana/launch/LaunchTransaction.js"
import type { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { insertAccount } from "../../src/services/accounts/AccountRepository.js"
import { insertKey } from "../../src/services/keys/KeyRepository.js"
import { type Ladder, priceLadder } from "../../src/services/launch/atomic/PricingLadder.js"
import { swapKey } from "./tradeRows.js"

const SOL = 1_000_000_000n
export const atomicTerms = { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL, supplyRaw: 1_000_000_000_000_000n, stakerAllocationBps: 50n, curveFeeBps: 100n, creatorFeeBps: 0n, mode: "open" as const }

export const clientSign = async (wireBase64: string, signer: KeyPairSigner): Promise<string> => {
  const tx = getTransactionDecoder().decode(new Uint8Array(Buffer.from(wireBase64, "base64")))
  return getBase64Decoder().decode(new Uint8Array(getTransactionEncoder().encode(await signTransaction([signer.keyPair], tx))))
}

export interface SignedBundle {
  readonly ladder: Extract<Ladder, { _tag: "Priced" }>
  readonly wires: ReadonlyArray<string>
  readonly mint: string
  readonly curve: string
  readonly lastValidBlockHeight: bigint
}

/** Prices `amounts` on the standard terms, assembles the bundle on the ledger's blockhash, and signs every leg as its party would. */
export const signedBundle = async (ledger: Ledger, creator: KeyPairSigner, buyers: ReadonlyArray<KeyPairSigner>, amounts: ReadonlyArray<bigint>): Promise<SignedBundle> => {
  const treasury = (await generateKeyPairSigner()).address
  const mint = await generateKeyPairSigner()
  const plan = planLaunch(atomicTerms, 0n, { bps: 50n, treasury })
  if (!isLaunchPlan(plan)) throw new Error("plan")
  const ladder = priceLadder({ curveParams: plan.curveParams, amountsRaw: amounts, platformFeeBps: 50n, referred: false })
  if (ladder._tag !== "Priced") throw new Error("unpriced")
  const lifetime = ledger.latestBlockhash()
  const bundle = await assembleAtomicBundle({
    launch: {
      payer: createNoopSigner(creator.address),
      mint,
      quoteMint: WSOL_MINT_ADDRESS,
      terms: atomicTerms,
      name: "Atomic Test",
      symbol: "ATT",
      metadataUri: "https://example.com/a.json",
      devBuyRaw: 0n,
      platformFee: { bps: 50n, treasury },
      lifetime,
      bundleTip: { account: ledger.tipAccounts[0]!, lamports: 100_000n }
    },
    launchPlan: plan,
    legs: ladder.legs.map((l, i) => ({ buyer: createNoopSigner(buyers[i]!.address), amountInRaw: l.amountInRaw, minAmountOutRaw: l.minAmountOutRaw, platformFeeRaw: l.platformFeeRaw })),
    treasury,
    lifetime
  })
  const wires = await Promise.all(bundle.legs.map((l, i) => clientSign(l.wireBase64, i === 0 ? creator : buyers[i - 1]!)))
  return { ladder, wires, mint: mint.address, curve: bundle.curve, lastValidBlockHeight: lifetime.lastValidBlockHeight }
}

let keySeq = 0
/** A Pro account and a production key on it; returns both ids. */
export const keyedAccount = async (run: <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>) => {
  const account = await run(insertAccount({ plan: "pro", agentEnabled: true, isAdmin: false }, Date.now()))
  const n = ++keySeq
  const keyId = `key-atomic-${process.pid}-${n}`
  await run(
    insertKey(
      swapKey({ id: keyId, prefix: `at${String(n).padStart(6, "0")}`, accountId: account.id, scopes: ["launch:write", "swap:write"], rateLimitPerMin: 300, dailyLaunchCap: 50 }),
      Date.now()
    )
  )
  return { accountId: account.id, keyId }
}
