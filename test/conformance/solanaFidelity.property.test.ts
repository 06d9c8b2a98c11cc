/**
 * Random sequences of the transactions the engine and the localnet build (SOL transfers,
 * create-account, ATA create and create-idempotent, mint, transfer and transfer-checked, burn,
 * close, wrap and sync-native, v0 or legacy, with or without a compute budget, now and then with
 * a corrupted signature or an unknown blockhash), each sent to our
 * ledger and to LiteSVM and compared after every transaction (`SvmTwin.expectSame`). Keys are
 * deterministic, so a seed replays the same wire bytes: the seed is printed; replay with
 * `FIDELITY_SEED=<seed> npx vitest run test/conformance/solanaFidelity.property.test.ts`
 * (`FIDELITY_RUNS=<n>` for a longer hunt than the suite's 100 sequences).
 *
 * Compute-unit limits are drawn where both runtimes agree by construction: 10 (below any
 * program's first charge: exhausted on both) or ample (none, or 400,000). Between the two the
 * localnet's per-program counts and the real BPF meter differ; docs/solana-program.md "Fidelity".
 */
import { type Address, type Instruction, type KeyPairSigner } from "@solana/kit"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  getBurnInstruction,
  getCloseAccountInstruction,
  getCreateAccountInstruction,
  getCreateAssociatedTokenInstruction,
  getMintToInstruction,
  getSyncNativeInstruction,
  getTokenTransferCheckedInstruction,
  getTokenTransferInstruction,
  getTransferSolInstruction
} from "../../src/chain/solana/client/SplInstructions.js"
import { SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { LAMPORTS_PER_SOL, minimumBalanceForRentExemption } from "../../src/chain/solana/localnet/Ledger.js"
import type { SendOptions } from "../../src/chain/solana/localnet/testkit.js"
import { buildAndSignTransaction } from "../../src/chain/solana/client/Transactions.js"
import type { Comparison } from "../support/svmTwin.js"
import { ata, createWorld, FRESH_COUNT, HOLDER_COUNT, WALLET_COUNT, type World } from "../support/svmTwinWorld.js"

const rent = minimumBalanceForRentExemption
/** 100 in the suite; `FIDELITY_RUNS=<n>` runs a longer hunt. */
const RUNS = process.env["FIDELITY_RUNS"] === undefined ? 100 : Number(process.env["FIDELITY_RUNS"])
const MAX_STEPS = 20

/** A signer by index over wallets then fresh keys. */
type Who = number
const SIGNERS = WALLET_COUNT + FRESH_COUNT
const who = fc.integer({ min: 0, max: SIGNERS - 1 })
const walletIndex = fc.integer({ min: 0, max: WALLET_COUNT - 1 })
/** Mostly the genesis token holders, sometimes another wallet or a fresh key. */
const holder = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: HOLDER_COUNT - 1 }) }, { weight: 1, arbitrary: who })
/** Mostly the mint authority (wallets[0]). */
const authority = fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: walletIndex })
const whichMint = fc.oneof({ weight: 3, arbitrary: fc.constant("mint" as const) }, { weight: 2, arbitrary: fc.constant("wsol" as const) })
const lamports = fc.constantFrom(1n, rent(0) - 1n, rent(0), LAMPORTS_PER_SOL, 250n * LAMPORTS_PER_SOL)
const tokenAmount = fc.constantFrom(0n, 1n, 1_000_000n, 5n * LAMPORTS_PER_SOL, 10n ** 15n)

const action = fc.oneof(
  fc.record({ kind: fc.constant("transfer" as const), payer: walletIndex, from: who, to: who, lamports }),
  fc.record({
    kind: fc.constant("createAccount" as const),
    payer: walletIndex,
    target: who,
    space: fc.constantFrom(0, 82, 165),
    short: fc.boolean(),
    owner: fc.constantFrom(SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID)
  }),
  fc.record({ kind: fc.constant("createAta" as const), payer: walletIndex, owner: who, mint: whichMint, idempotent: fc.boolean() }),
  fc.record({ kind: fc.constant("mintTo" as const), authority, owner: holder, mint: whichMint, amount: tokenAmount }),
  fc.record({
    kind: fc.constant("tokenTransfer" as const),
    payer: walletIndex,
    owner: holder,
    to: holder,
    mint: whichMint,
    amount: tokenAmount,
    checked: fc.option(fc.constantFrom(6, 9), { nil: undefined })
  }),
  fc.record({ kind: fc.constant("burn" as const), payer: walletIndex, owner: holder, mint: whichMint, amount: tokenAmount }),
  fc.record({ kind: fc.constant("close" as const), payer: walletIndex, owner: holder, mint: whichMint, to: who }),
  fc.record({ kind: fc.constant("wrap" as const), owner: walletIndex, lamports }),
  fc.record({ kind: fc.constant("sync" as const), payer: walletIndex, owner: holder, mint: whichMint }),
  fc.constant({ kind: "advanceSlot" as const })
)

const options = fc.record({
  version: fc.constantFrom(0 as const, "legacy" as const),
  computeUnitLimit: fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant(10) },
    { weight: 2, arbitrary: fc.constant(400_000) }
  ),
  computeUnitPriceMicroLamports: fc.constantFrom(undefined, 1n, 1_000_000n),
  /** A corrupted first signature, or a blockhash neither runtime knows (refusals, no trace). */
  tamper: fc.oneof(
    { weight: 10, arbitrary: fc.constant("none" as const) },
    { weight: 1, arbitrary: fc.constant("signature" as const) },
    { weight: 1, arbitrary: fc.constant("blockhash" as const) }
  )
})

/** A well-formed blockhash no ledger or LiteSVM instance produced. */
const UNKNOWN_BLOCKHASH = "4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM"

type Action = typeof action extends fc.Arbitrary<infer A> ? A : never

/** `also`: a second action's instructions in the same transaction (atomic: one failure undoes both). */
const step = fc.record({ action, also: fc.option(action, { nil: undefined, freq: 4 }), options })

const signerOf = (w: World, i: Who): KeyPairSigner => (i < WALLET_COUNT ? w.wallets[i]! : w.fresh[i - WALLET_COUNT]!)

/** The fee payer and instructions of an action, or null for a slot advance. */
const build = (w: World, a: Action): { payer: KeyPairSigner; instructions: Instruction[] } | null => {
  const s = (i: Who) => signerOf(w, i)
  const mintOf = (m: "mint" | "wsol"): Address => (m === "mint" ? w.mint : WSOL_MINT_ADDRESS)
  switch (a.kind) {
    case "advanceSlot":
      return null
    case "transfer":
      return { payer: s(a.payer), instructions: [getTransferSolInstruction({ from: s(a.from), to: s(a.to).address, lamports: a.lamports })] }
    case "createAccount": {
      const lamports = rent(a.space) - (a.short ? 1n : 0n)
      return {
        payer: s(a.payer),
        instructions: [getCreateAccountInstruction({ payer: s(a.payer), newAccount: s(a.target), lamports, space: a.space, owner: a.owner })]
      }
    }
    case "createAta": {
      const owner = s(a.owner).address
      const mint = mintOf(a.mint)
      return { payer: s(a.payer), instructions: [getCreateAssociatedTokenInstruction({ payer: s(a.payer), ata: ata(owner, mint), owner, mint, idempotent: a.idempotent })] }
    }
    case "mintTo": {
      const mint = mintOf(a.mint)
      return {
        payer: s(a.authority),
        instructions: [getMintToInstruction({ mint, destination: ata(s(a.owner).address, mint), authority: s(a.authority), amount: a.amount })]
      }
    }
    case "tokenTransfer": {
      const mint = mintOf(a.mint)
      const source = ata(s(a.owner).address, mint)
      const destination = ata(s(a.to).address, mint)
      const ix =
        a.checked === undefined
          ? getTokenTransferInstruction({ source, destination, authority: s(a.owner), amount: a.amount })
          : getTokenTransferCheckedInstruction({ source, mint, destination, authority: s(a.owner), amount: a.amount, decimals: a.checked })
      return { payer: s(a.payer), instructions: [ix] }
    }
    case "burn": {
      const mint = mintOf(a.mint)
      return { payer: s(a.payer), instructions: [getBurnInstruction({ account: ata(s(a.owner).address, mint), mint, authority: s(a.owner), amount: a.amount })] }
    }
    case "close": {
      const mint = mintOf(a.mint)
      return {
        payer: s(a.payer),
        instructions: [getCloseAccountInstruction({ account: ata(s(a.owner).address, mint), destination: s(a.to).address, authority: s(a.owner) })]
      }
    }
    case "wrap": {
      const owner = s(a.owner)
      const account = ata(owner.address, WSOL_MINT_ADDRESS)
      return {
        payer: owner,
        instructions: [
          getCreateAssociatedTokenInstruction({ payer: owner, ata: account, owner: owner.address, mint: WSOL_MINT_ADDRESS, idempotent: true }),
          getTransferSolInstruction({ from: owner, to: account, lamports: a.lamports }),
          getSyncNativeInstruction({ account })
        ]
      }
    }
    case "sync":
      return { payer: s(a.payer), instructions: [getSyncNativeInstruction({ account: ata(s(a.owner).address, mintOf(a.mint)) })] }
  }
}

const describeStep = (i: number, a: Action, o: SendOptions): string =>
  `step ${i}: ${JSON.stringify({ ...a, options: o }, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))}`

describe("random transaction sequences, against the real SVM", () => {
  it(`agree after every transaction (${RUNS} sequences of up to ${MAX_STEPS})`, async () => {
    const seed = process.env["FIDELITY_SEED"] === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env["FIDELITY_SEED"])
    console.log(`solanaFidelity.property seed=${seed} (replay: FIDELITY_SEED=${seed})`)
    const tally = new Map<string, number>()
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: MAX_STEPS }), async (steps) => {
        const w = await createWorld()
        for (const [i, { action: a, also, options: o }] of steps.entries()) {
          const first = build(w, a)
          const second = also === undefined ? null : build(w, also)
          const built = first === null ? null : { payer: first.payer, instructions: [...first.instructions, ...(second?.instructions ?? [])] }
          if (built === null) {
            w.twin.ledger.advanceSlot()
            continue
          }
          const sendOptions: SendOptions = {
            version: o.version,
            ...(o.computeUnitLimit === undefined ? {} : { computeUnitLimit: o.computeUnitLimit }),
            ...(o.computeUnitPriceMicroLamports === undefined ? {} : { computeUnitPriceMicroLamports: o.computeUnitPriceMicroLamports })
          }
          const label = `${describeStep(i, a, sendOptions)}${second === null ? "" : ` + ${describeStep(i, also!, {})}`} tamper=${o.tamper}`
          let c: Comparison
          if (o.tamper === "blockhash") {
            const { wireBytes } = await buildAndSignTransaction({
              feePayer: built.payer,
              lifetime: { blockhash: UNKNOWN_BLOCKHASH, lastValidBlockHeight: 0n },
              instructions: built.instructions,
              ...sendOptions
            })
            c = w.twin.withBlockhashCheck(() => w.twin.expectSame(wireBytes, label))
          } else {
            const wire = await w.twin.sign(built.payer, built.instructions, sendOptions)
            if (o.tamper === "signature") wire[1]! ^= 0xff
            c = w.twin.expectSame(wire, label)
          }
          const outcome = c.ours.status === "refused" ? "refused" : c.ours.err === null ? `${a.kind} ok` : "failed"
          tally.set(outcome, (tally.get(outcome) ?? 0) + 1)
        }
      }),
      { numRuns: RUNS, seed }
    )
    console.log(`solanaFidelity.property outcomes: ${JSON.stringify(Object.fromEntries(tally))}`)
    // Not vacuous: many transactions of many kinds succeeded, many failed (both compared whole).
    const succeeded = [...tally].filter(([k]) => k.endsWith(" ok"))
    expect(succeeded.reduce((n, [, v]) => n + v, 0)).toBeGreaterThan(RUNS / 2)
    expect(succeeded.length).toBeGreaterThanOrEqual(6)
    expect(tally.get("failed") ?? 0).toBeGreaterThan(RUNS / 2)
    expect(tally.get("refused") ?? 0).toBeGreaterThan(0)
  }, Math.max(60_000, RUNS * 600))
})
