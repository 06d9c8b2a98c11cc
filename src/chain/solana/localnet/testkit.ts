/**
 * Helpers for driving a Ledger with real kit-built transactions: sign and submit instructions,
 * launch a curve, read token balances and decoded accounts. Test support only (no source module
 * imports it: `test/conformance/layers.test.ts`); production reads tokens through `LedgerTokens.ts`.
 * Every transaction goes through the same wire path a client would use.
 */
import { type Address, generateKeyPairSigner, type Instruction, type KeyPairSigner, type TransactionSigner } from "@solana/kit"
import { findCurveAddresses, getCreateCurveInstruction, type CurveAddressSet } from "../client/CurveInstructions.js"
import { buildAndSignTransaction, type SignedTransaction } from "../client/Transactions.js"
import { type CurveAccount, decodeCurve } from "../program/accounts/Curve.js"
import { decodeFeeVault, type FeeVaultAccount } from "../program/accounts/FeeVault.js"
import { decodePool, type PoolAccount } from "../program/accounts/Pool.js"
import type { CreateCurveArgs } from "../program/Instructions.js"
import type { Ledger, SubmitResult } from "./Ledger.js"

export interface SendOptions {
  readonly version?: "legacy" | 0
  readonly computeUnitLimit?: number
  readonly computeUnitPriceMicroLamports?: bigint
}

export const signInstructions = (
  ledger: Ledger,
  feePayer: TransactionSigner,
  instructions: ReadonlyArray<Instruction>,
  o: SendOptions = {}
): Promise<SignedTransaction> =>
  buildAndSignTransaction({
    feePayer,
    lifetime: ledger.latestBlockhash(),
    instructions,
    ...(o.version === undefined ? {} : { version: o.version }),
    ...(o.computeUnitLimit === undefined ? {} : { computeUnitLimit: o.computeUnitLimit }),
    ...(o.computeUnitPriceMicroLamports === undefined ? {} : { computeUnitPriceMicroLamports: o.computeUnitPriceMicroLamports })
  })

export const send = async (
  ledger: Ledger,
  feePayer: TransactionSigner,
  instructions: ReadonlyArray<Instruction>,
  o: SendOptions = {}
): Promise<SubmitResult & { readonly wireBytes: Uint8Array }> => {
  const signed = await signInstructions(ledger, feePayer, instructions, o)
  return { ...ledger.submit(signed.wireBytes), wireBytes: signed.wireBytes }
}

/** Throws with the transaction's logs unless it landed without error. */
export const expectOk = (ledger: Ledger, r: SubmitResult): SubmitResult & { _tag: "Landed" } => {
  if (r._tag === "Landed" && r.err === null) return r
  const logs = r._tag === "Landed" ? (ledger.getTransaction(r.signature)?.logMessages ?? []) : []
  const { wireBytes: _omit, ...shown } = r as SubmitResult & { wireBytes?: unknown }
  throw new Error(`transaction did not succeed: ${JSON.stringify(shown, (_, v) => (typeof v === "bigint" ? v.toString() : v))}\n${logs.join("\n")}`)
}

// The token reads live in production (`LedgerTokens.ts`, the local faucet uses them); the tests import them from here too.
export { ataOf, tokenBalance } from "./LedgerTokens.js"

export const readCurve = (ledger: Ledger, address: Address): CurveAccount => {
  const c = decodeCurve(ledger.getAccount(address)?.data ?? new Uint8Array(0))
  if (c === undefined) throw new Error(`no curve at ${address}`)
  return c
}

export const readPool = (ledger: Ledger, address: Address): PoolAccount => {
  const p = decodePool(ledger.getAccount(address)?.data ?? new Uint8Array(0))
  if (p === undefined) throw new Error(`no pool at ${address}`)
  return p
}

export const readFeeVault = (ledger: Ledger, address: Address): FeeVaultAccount => {
  const f = decodeFeeVault(ledger.getAccount(address)?.data ?? new Uint8Array(0))
  if (f === undefined) throw new Error(`no fee vault at ${address}`)
  return f
}

export interface LaunchedCurve {
  readonly mint: KeyPairSigner
  readonly addresses: CurveAddressSet
  readonly signature: string
}

export const launchCurve = async (
  ledger: Ledger,
  creator: TransactionSigner,
  quoteMint: Address,
  args: Partial<CreateCurveArgs> & Pick<CreateCurveArgs, "virtualQuoteRaw" | "thresholdRaw">
): Promise<LaunchedCurve> => {
  const mint = await generateKeyPairSigner()
  const ix = await getCreateCurveInstruction({
    creator,
    mint,
    quoteMint,
    supplyRaw: 1_000_000_000_000_000n,
    stakerAllocationBps: 50,
    mode: "open",
    creatorFeeBps: 0,
    name: "Test Token",
    symbol: "TEST",
    uri: "https://example.com/t.json",
    ...args
  })
  const r = expectOk(ledger, await send(ledger, creator, [ix]))
  return { mint, addresses: await findCurveAddresses(mint.address), signature: r.signature }
}
