/**
 * The launch transaction (`LaunchTransaction.ts`: planLaunch → assembleLaunchTransaction →
 * sizeLaunch, as SolanaLaunch's dry run and launch build it) against the real runtime:
 * - the signed bytes are exactly `sizeLaunch`'s `txBytes`, and LiteSVM decodes them and verifies
 *   both signatures (it fails only for want of svc-curve, which runs on our ledger alone);
 * - `maxNameBytes` is the largest name whose signed transaction fits 1,232 bytes, by signing the
 *   boundary names (the packet limit is the network's: LiteSVM executes bigger transactions, our
 *   ledger refuses them as an RPC node does; pinned below);
 * - the launch's non-svc-curve instructions (the payer's ATA, the treasury's ATA, the fee leg) run
 *   identically on both from the state create_curve leaves, and their real compute units plus
 *   svc-curve's count on our ledger fit LAUNCH_COMPUTE_UNIT_LIMIT.
 * The worst case is drawn: a 10-byte symbol, a 200-byte uri, a priority fee, a dev buy and a fee leg.
 */
import { createHash } from "node:crypto"
import {
  type Address,
  createKeyPairSignerFromPrivateKeyBytes,
  type KeyPairSigner,
  getSignatureFromTransaction,
  getTransactionEncoder,
  type Instruction,
  signTransactionMessageWithSigners
} from "@solana/kit"
import { beforeAll, describe, expect, it } from "vitest"
import { findEconomics } from "../../src/domain/Economics.js"
import { findQuotePair } from "../../src/domain/QuotePairs.js"
import { getTransferSolInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { buildAndSignTransaction } from "../../src/chain/solana/client/Transactions.js"
import {
  assembleLaunchTransaction,
  isLaunchPlan,
  LAUNCH_COMPUTE_UNIT_LIMIT,
  type LaunchInstructionRole,
  type LaunchTransactionInput,
  planLaunch,
  sizeLaunch,
  SOLANA_TRANSACTION_BYTES_MAX
} from "../../src/chain/solana/launch/LaunchTransaction.js"
import { TREASURY_ADDRESS } from "../../src/chain/solana/localnet/DevKeys.js"
import { type GenesisAccount, LAMPORTS_PER_SOL } from "../../src/chain/solana/localnet/Ledger.js"
import { SYMBOL_BYTES_MAX, URI_BYTES_MAX } from "../../src/chain/solana/program/accounts/Metadata.js"
import { SYSTEM_PROGRAM_ID } from "../../src/chain/solana/program/ProgramIds.js"
import { SvmTwin } from "../support/svmTwin.js"
import { associatedTokenGenesis, walletGenesis } from "../support/svmTwinWorld.js"

const QUOTE_ASSETS = ["sol", "usdc", "svc"] as const
type QuoteAsset = (typeof QUOTE_ASSETS)[number]
const DEV_BUY: Record<QuoteAsset, bigint> = { sol: LAMPORTS_PER_SOL / 10n, usdc: 100_000_000n, svc: 100_000_000n }
const QUOTE_HOLDINGS = 1_000_000_000_000n

const seed = (label: string) => new Uint8Array(createHash("sha256").update(`curvestream/fidelity/launch/${label}`).digest())
let payer: KeyPairSigner
let mint: KeyPairSigner

beforeAll(async () => {
  payer = await createKeyPairSignerFromPrivateKeyBytes(seed("payer"))
  mint = await createKeyPairSignerFromPrivateKeyBytes(seed("mint"))
})

const quoteMintOf = (q: QuoteAsset): Address => findQuotePair("solana", q)!.address as Address

/** The payer, funded, and its quote token account on an SPL pair. */
const payerGenesis = (q: QuoteAsset): GenesisAccount[] => {
  const wallet = walletGenesis(payer.address, 100n * LAMPORTS_PER_SOL)
  return q === "sol" ? [wallet] : [wallet, associatedTokenGenesis(payer.address, quoteMintOf(q), QUOTE_HOLDINGS)]
}

const launchInput = (q: QuoteAsset, twin: SvmTwin, name: string): LaunchTransactionInput => {
  const economics = findEconomics("solana", q)!
  const tier = economics.tiers[0]!
  return {
    payer,
    mint,
    quoteMint: quoteMintOf(q),
    terms: {
      virtualQuoteRaw: tier.virtualQuoteRaw,
      thresholdRaw: tier.thresholdRaw,
      supplyRaw: economics.tokenSupplyRaw,
      stakerAllocationBps: 50n,
      curveFeeBps: economics.curveFeeBps,
      creatorFeeBps: 0n,
      mode: "open"
    },
    name,
    symbol: "S".repeat(SYMBOL_BYTES_MAX),
    metadataUri: `https://${"u".repeat(URI_BYTES_MAX - "https://".length)}`,
    devBuyRaw: DEV_BUY[q],
    platformFee: { bps: 100n, treasury: TREASURY_ADDRESS },
    lifetime: twin.ledger.latestBlockhash(),
    computeUnitPriceMicroLamports: 1_000n
  }
}

const planOf = (i: LaunchTransactionInput) => {
  const p = planLaunch(i.terms, i.devBuyRaw, i.platformFee)
  if (!isLaunchPlan(p)) throw new Error(`unplannable: ${p.reason}`)
  return p
}

const signedLaunch = async (i: LaunchTransactionInput) => {
  const assembled = await assembleLaunchTransaction(i, planOf(i))
  const signed = await signTransactionMessageWithSigners(assembled.message)
  return { assembled, wire: new Uint8Array(getTransactionEncoder().encode(signed)), signature: getSignatureFromTransaction(signed) }
}

/** Compute units of each top-level instruction, from our ledger's logs ("consumed" at depth 1). */
const topLevelUnits = (logs: ReadonlyArray<string>): number[] => {
  const out: number[] = []
  let depth = 0
  for (const line of logs) {
    const invoke = / invoke \[(\d+)\]$/.exec(line)
    if (invoke !== null) depth = Number(invoke[1])
    const consumed = /^Program \S+ consumed (\d+) of \d+ compute units$/.exec(line)
    if (consumed !== null) {
      if (depth === 1) out.push(Number(consumed[1]))
      depth -= 1
    }
  }
  return out
}

const CURVE_ROLES: ReadonlySet<LaunchInstructionRole> = new Set(["create_curve", "dev_buy"])

describe("the launch transaction against the real runtime", () => {
  for (const q of QUOTE_ASSETS) {
    it(`${q}: signed size, maxNameBytes at the packet limit, and the non-svc-curve instructions' real compute units`, async () => {
      const twin = new SvmTwin({ genesisAccounts: payerGenesis(q) })
      const sized = await sizeLaunch(launchInput(q, twin, "N"), planOf(launchInput(q, twin, "N")))
      const max = sized.maxNameBytes
      expect(max).toBeGreaterThan(0)
      const input = launchInput(q, twin, "N".repeat(max))
      const { assembled, wire, signature } = await signedLaunch(input)
      // The fully signed bytes are what sizeLaunch measured (its empty signature slots are 64 bytes too).
      expect(wire.length).toBe((await sizeLaunch(input, planOf(input))).txBytes)
      expect(wire.length).toBeLessThanOrEqual(SOLANA_TRANSACTION_BYTES_MAX)
      if (max < 32) {
        const over = await signedLaunch(launchInput(q, twin, "N".repeat(max + 1)))
        expect(over.wire.length).toBeGreaterThan(SOLANA_TRANSACTION_BYTES_MAX)
        expect(twin.ledger.submit(over.wire)).toMatchObject({ _tag: "Rejected", error: "SanitizeFailure" })
      }

      // The real runtime decodes the packet and verifies both signatures; it stops at svc-curve,
      // which only our ledger runs (no fee: the program account is missing at load).
      const real = twin.runBoth(wire)
      expect(real.svm).toMatchObject({ status: "refused", err: "InvalidProgramForExecution" })
      const record = twin.ledger.getTransaction(signature)
      expect(record?.err, record?.logMessages.join("\n")).toBeNull()

      // Ours: svc-curve's units (create_curve and the dev buy, CPIs included), by instruction.
      const units = topLevelUnits(record!.logMessages)
      expect(units).toHaveLength(assembled.roles.length)
      const curveUnits = assembled.roles.reduce((sum, role, k) => sum + (CURVE_ROLES.has(role) ? units[k]! : 0), 0)

      // The other instructions, from the state create_curve leaves (the mint), on both runtimes.
      const mintAccount = twin.ledger.getAccount(mint.address)!
      const rest = new SvmTwin({ genesisAccounts: [...payerGenesis(q), { address: mint.address, account: mintAccount }] })
      const others = assembled.message.instructions.filter((_, k) => {
        const role = assembled.roles[k]!
        return role !== "compute_budget" && !CURVE_ROLES.has(role)
      }) as Instruction[]
      expect(others.length).toBe(q === "sol" ? 2 : 3)
      const restWire = await rest.sign(payer, others, { computeUnitLimit: LAUNCH_COMPUTE_UNIT_LIMIT, computeUnitPriceMicroLamports: 1_000n })
      const compared = rest.expectSame(restWire, `${q}: the launch's non-svc-curve instructions`)
      expect(compared.ours.err).toBeNull()
      const realUnits = Number(compared.svm.computeUnits)
      console.log(
        `launch ${q}: ${wire.length} bytes with a ${max}-byte name; real units for ${others.length} non-svc-curve instructions and the budget ${realUnits}, svc-curve (localnet count) ${curveUnits}, limit ${LAUNCH_COMPUTE_UNIT_LIMIT}`
      )
      expect(realUnits + curveUnits).toBeLessThanOrEqual(LAUNCH_COMPUTE_UNIT_LIMIT)
    })
  }

  it("the 1,232-byte packet limit is the network's: LiteSVM executes a bigger transaction, our ledger refuses it as an RPC node does", async () => {
    const twin = new SvmTwin({ genesisAccounts: payerGenesis("sol") })
    // A System transfer padded by a System instruction with long data (it fails alike on both).
    const sized = async (extra: number) =>
      buildAndSignTransaction({
        feePayer: payer,
        lifetime: twin.ledger.latestBlockhash(),
        instructions: [
          getTransferSolInstruction({ from: payer, to: TREASURY_ADDRESS, lamports: 1n }),
          { programAddress: SYSTEM_PROGRAM_ID, accounts: [], data: new Uint8Array(extra) }
        ]
      })
    const base = (await sized(0)).wireBytes.length
    // Data of 128 bytes or more takes a 2-byte length prefix.
    const at = (await sized(SOLANA_TRANSACTION_BYTES_MAX - base - 1)).wireBytes
    const over = (await sized(SOLANA_TRANSACTION_BYTES_MAX - base)).wireBytes
    expect([at.length, over.length]).toEqual([SOLANA_TRANSACTION_BYTES_MAX, SOLANA_TRANSACTION_BYTES_MAX + 1])
    expect(twin.expectSame(at, "a transaction of exactly 1,232 bytes").ours.status).toBe("landed")
    const c = twin.runBoth(over)
    expect(c.ours).toMatchObject({ status: "refused", err: "SanitizeFailure" })
    expect(c.svm.status).toBe("landed")
  })
})
