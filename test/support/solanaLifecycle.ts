/**
 * A whole svc-curve lifecycle on a ledger, with real signed transactions: create, buy, sell, the
 * buy that completes the curve, migrate, a pool swap and the creator's fee claim. Shared by the
 * decoder tests and the ingest integration test so both read the same chain history.
 */
import type { KeyPairSigner } from "@solana/kit"
import {
  getBuyInstruction,
  getClaimCreatorFeeInstruction,
  getMigrateInstruction,
  getPoolSwapInstruction,
  getSellInstruction
} from "../../src/chain/solana/client/CurveInstructions.js"
import { getCreateAssociatedTokenInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import type { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { ataOf, expectOk, launchCurve, type LaunchedCurve, send, tokenBalance } from "../../src/chain/solana/localnet/testkit.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"

export const SOL = 1_000_000_000n

export interface Actors {
  readonly creator: KeyPairSigner
  readonly trader: KeyPairSigner
  readonly keeper: KeyPairSigner
}

export type Step = "create" | "buy" | "sell" | "complete" | "migrate" | "poolSwap" | "claim"

export interface LifecycleRun {
  readonly curve: LaunchedCurve
  readonly signatures: Readonly<Record<Step, string>>
  /** Tokens the first buy received and the sell sold back. */
  readonly firstBuyOutRaw: bigint
  readonly soldRaw: bigint
}

/** A small curve (V = 1 SOL, G = 2 SOL) taken from launch to a claimed creator fee. */
export const runLifecycle = async (
  ledger: Ledger,
  a: Actors,
  options: { readonly name?: string; readonly afterEach?: (step: Step) => void } = {}
): Promise<LifecycleRun> => {
  const after = options.afterEach ?? (() => {})
  const curve = await launchCurve(ledger, a.creator, WSOL_MINT_ADDRESS, {
    virtualQuoteRaw: SOL,
    thresholdRaw: 2n * SOL,
    mode: "exp-a",
    creatorFeeBps: 100,
    stakerAllocationBps: 500,
    name: options.name ?? "Lifecycle",
    symbol: "LIFE",
    uri: "https://example.com/life.json"
  })
  after("create")
  const mint = curve.mint.address
  const ata = ataOf(a.trader.address, mint)
  const trade = { trader: a.trader, mint, quoteMint: WSOL_MINT_ADDRESS, minAmountOutRaw: 0n }
  const buy = expectOk(
    ledger,
    await send(ledger, a.trader, [
      getCreateAssociatedTokenInstruction({ payer: a.trader, ata, owner: a.trader.address, mint }),
      await getBuyInstruction({ ...trade, amountInRaw: SOL / 2n })
    ])
  )
  after("buy")
  const firstBuyOutRaw = tokenBalance(ledger, ata)
  const soldRaw = firstBuyOutRaw / 2n
  const sell = expectOk(ledger, await send(ledger, a.trader, [await getSellInstruction({ ...trade, amountInRaw: soldRaw })]))
  after("sell")
  const complete = expectOk(ledger, await send(ledger, a.trader, [await getBuyInstruction({ ...trade, amountInRaw: 3n * SOL })]))
  after("complete")
  const migrate = expectOk(
    ledger,
    await send(ledger, a.keeper, [await getMigrateInstruction({ keeper: a.keeper, mint, quoteMint: WSOL_MINT_ADDRESS })])
  )
  after("migrate")
  const poolSwap = expectOk(
    ledger,
    await send(ledger, a.trader, [await getPoolSwapInstruction({ ...trade, side: "buy", amountInRaw: SOL / 4n })])
  )
  after("poolSwap")
  const claim = expectOk(
    ledger,
    await send(ledger, a.creator, [await getClaimCreatorFeeInstruction({ creator: a.creator, mint, quoteMint: WSOL_MINT_ADDRESS })])
  )
  after("claim")
  return {
    curve,
    signatures: {
      create: curve.signature,
      buy: buy.signature,
      sell: sell.signature,
      complete: complete.signature,
      migrate: migrate.signature,
      poolSwap: poolSwap.signature,
      claim: claim.signature
    },
    firstBuyOutRaw,
    soldRaw
  }
}
