/**
 * Our Solana localnet against the real SVM (LiteSVM: Agave's runtime with the real System, Compute
 * Budget, SPL Token and Associated Token programs). Every case signs transactions with kit, as the
 * engine does, sends the same wire bytes to our `Ledger` and to LiteSVM from the same starting
 * accounts, and asserts the same outcome, fee, accounts (lamports, owner, data) and token balances
 * (`SvmTwin.expectSame`). docs/solana-program.md "Fidelity" says what this holds and what it does not.
 */
import { AccountRole, type Instruction } from "@solana/kit"
import { describe, expect, it } from "vitest"
import {
  getBurnInstruction,
  getCloseAccountInstruction,
  getCreateAccountInstruction,
  getCreateAssociatedTokenInstruction,
  getInitializeAccount3Instruction,
  getInitializeMint2Instruction,
  getMintToInstruction,
  getSyncNativeInstruction,
  getTokenTransferCheckedInstruction,
  getTokenTransferInstruction,
  getTransferSolInstruction
} from "../../src/chain/solana/client/SplInstructions.js"
import { buildAndSignTransaction } from "../../src/chain/solana/client/Transactions.js"
import { SPL_MINT_SIZE } from "../../src/chain/solana/program/accounts/SplMint.js"
import { SPL_TOKEN_ACCOUNT_SIZE } from "../../src/chain/solana/program/accounts/SplTokenAccount.js"
import { SVC_MINT_ADDRESS, TOKEN_PROGRAM_ID, USDC_MINT_ADDRESS, WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { LAMPORTS_PER_SOL, minimumBalanceForRentExemption } from "../../src/chain/solana/localnet/Ledger.js"
import { ata, createWorld, MINT_DECIMALS } from "../support/svmTwinWorld.js"

const rent = minimumBalanceForRentExemption

/** `ix` with one account's role replaced (to build privilege violations kit would not compile). */
const withRole = (ix: Instruction, index: number, role: AccountRole): Instruction => ({
  ...ix,
  accounts: (ix.accounts ?? []).map((m, i) => {
    if (i !== index) return m
    const signs = role === AccountRole.READONLY_SIGNER || role === AccountRole.WRITABLE_SIGNER
    return signs ? { ...m, role } : { address: m.address, role }
  })
})

describe("System program and fees, against the real SVM", () => {
  it("SOL transfers in v0 and legacy messages: to a funded wallet, to a new account, below rent", async () => {
    const { twin, wallets, fresh } = await createWorld()
    const [a, b] = wallets
    for (const version of [0, "legacy"] as const) {
      twin.expectSame(await twin.sign(a!, [getTransferSolInstruction({ from: a!, to: b!.address, lamports: 1_234_567n })], { version }), `transfer ${version}`)
    }
    twin.expectSame(await twin.sign(a!, [getTransferSolInstruction({ from: a!, to: fresh[0]!.address, lamports: rent(0) })]), "to a new account, exactly rent")
    const below = twin.expectSame(await twin.sign(a!, [getTransferSolInstruction({ from: a!, to: fresh[1]!.address, lamports: rent(0) - 1n })]), "below rent")
    expect(below.ours.err).toEqual({ InsufficientFundsForRent: { account_index: 1 } })
    const tooMuch = twin.expectSame(await twin.sign(b!, [getTransferSolInstruction({ from: b!, to: a!.address, lamports: 1_000n * LAMPORTS_PER_SOL })]), "more than held")
    expect(tooMuch.ours.err).toEqual({ InstructionError: [0, { Custom: 1 }] })
    // Emptying a wallet to zero closes it (the fee payer pays the fee, a second signer sends all).
    const c = wallets[2]!
    const all = twin.oursAccount(c.address)!.lamports
    twin.expectSame(await twin.sign(a!, [getTransferSolInstruction({ from: c, to: b!.address, lamports: all })]), "empty a wallet")
  })

  it("create-account: a mint and a token account, then again at a used address", async () => {
    const { twin, wallets, fresh } = await createWorld()
    const [a] = wallets
    const mint = fresh[0]!
    const account = fresh[1]!
    twin.expectSame(
      await twin.sign(a!, [
        getCreateAccountInstruction({ payer: a!, newAccount: mint, lamports: rent(SPL_MINT_SIZE), space: SPL_MINT_SIZE, owner: TOKEN_PROGRAM_ID }),
        getInitializeMint2Instruction({ mint: mint.address, decimals: 9, mintAuthority: a!.address })
      ]),
      "create + initialize mint"
    )
    twin.expectSame(
      await twin.sign(a!, [
        getCreateAccountInstruction({ payer: a!, newAccount: account, lamports: rent(SPL_TOKEN_ACCOUNT_SIZE), space: SPL_TOKEN_ACCOUNT_SIZE, owner: TOKEN_PROGRAM_ID }),
        getInitializeAccount3Instruction({ account: account.address, mint: mint.address, owner: a!.address })
      ]),
      "create + initialize token account"
    )
    const again = twin.expectSame(
      await twin.sign(a!, [getCreateAccountInstruction({ payer: a!, newAccount: account, lamports: rent(0), space: 0, owner: TOKEN_PROGRAM_ID })]),
      "account already in use"
    )
    expect(again.ours.err).toEqual({ InstructionError: [0, { Custom: 0 }] })
    const short = twin.expectSame(
      await twin.sign(a!, [getCreateAccountInstruction({ payer: a!, newAccount: fresh[2]!, lamports: rent(10) - 1n, space: 10, owner: TOKEN_PROGRAM_ID })]),
      "create-account below rent"
    )
    expect(short.ours.err).toEqual({ InsufficientFundsForRent: { account_index: 1 } })
    twin.expectSame(
      await twin.sign(a!, [getCreateAccountInstruction({ payer: a!, newAccount: fresh[3]!, lamports: rent(0), space: 0, owner: a!.address })]),
      "create-account owned by a wallet address"
    )
  })

  it("compute budget: limit and price, price alone (the default limit), a limit too small", async () => {
    const { twin, wallets } = await createWorld()
    const [a, b] = wallets
    const transfer = (lamports: bigint) => [getTransferSolInstruction({ from: a!, to: b!.address, lamports })]
    const priced = twin.expectSame(await twin.sign(a!, transfer(1n), { computeUnitLimit: 50_000, computeUnitPriceMicroLamports: 1_000_003n }), "limit + price")
    expect(priced.ours.fee).toBe(5_000n + 50_001n)
    twin.expectSame(await twin.sign(a!, transfer(2n), { computeUnitPriceMicroLamports: 7_777n }), "price, default limit")
    twin.expectSame(await twin.sign(a!, transfer(3n), { computeUnitPriceMicroLamports: 1_000_000n, version: "legacy" }), "price, default limit, legacy")
    twin.expectSame(await twin.sign(a!, transfer(4n), { computeUnitLimit: 1_400_000 }), "maximum limit")
    const exhausted = twin.expectSame(await twin.sign(a!, transfer(6n), { computeUnitLimit: 100 }), "compute exhaustion")
    expect(exhausted.ours.err).toEqual({ InstructionError: [0, "ComputationalBudgetExceeded"] })
    // A BPF program out of units (the real meter stops it at a BPF instruction: ProgramFailedToComplete).
    const createAta = getCreateAssociatedTokenInstruction({ payer: a!, ata: ata(b!.address, WSOL_MINT_ADDRESS), owner: b!.address, mint: WSOL_MINT_ADDRESS })
    const bpf = twin.expectSame(await twin.sign(a!, [createAta], { computeUnitLimit: 10, computeUnitPriceMicroLamports: 3n }), "ATA out of units")
    expect(bpf.svm.logs.at(-1)).toMatch(/exceeded CUs meter at BPF instruction$/)
  })

  it("multiple signers: a fee payer and a second signer who sends", async () => {
    const { twin, wallets } = await createWorld()
    const [a, b, c] = wallets
    const two = twin.expectSame(
      await twin.sign(a!, [getTransferSolInstruction({ from: b!, to: c!.address, lamports: 42n }), getTransferSolInstruction({ from: a!, to: c!.address, lamports: 43n })]),
      "two signers"
    )
    expect(two.ours.fee).toBe(10_000n)
  })
})

describe("the ledger's own faucet transactions, against the real SVM", () => {
  it("an airdrop and a test-token mint (legacy, faucet-signed, with a unit limit) replay identically", async () => {
    const { twin, fresh } = await createWorld()
    const who = fresh[0]!.address
    twin.expectSameAsLanded(twin.ledger.requestAirdrop(who, 2n * LAMPORTS_PER_SOL), "airdrop to a new account")
    twin.expectSameAsLanded(twin.ledger.requestAirdrop(who, 1n), "airdrop of 1 lamport")
    twin.expectSameAsLanded(twin.ledger.mintTestTokens(USDC_MINT_ADDRESS, who, 5_000_000n), "test USDC, creating the ATA")
    twin.expectSameAsLanded(twin.ledger.mintTestTokens(SVC_MINT_ADDRESS, who, 7n), "test svc, creating the ATA")
  })
})

describe("refusals, against the real SVM", () => {
  it("a bad signature, an unknown or expired blockhash, a duplicate", async () => {
    const { twin, wallets } = await createWorld()
    const [a, b] = wallets
    const wire = await twin.sign(a!, [getTransferSolInstruction({ from: a!, to: b!.address, lamports: 10n })])
    const bad = wire.slice()
    bad[1]! ^= 0xff
    expect(twin.expectSame(bad, "bad signature").ours).toMatchObject({ status: "refused", err: "SignatureFailure" })
    twin.expectSame(wire, "the original")
    expect(twin.expectSame(wire, "duplicate").ours).toMatchObject({ status: "refused", err: "AlreadyProcessed" })
    // A failed transaction is recorded too: resending it is a duplicate, not a second fee.
    const failing = await twin.sign(b!, [getTransferSolInstruction({ from: b!, to: a!.address, lamports: 10_000n * LAMPORTS_PER_SOL })])
    twin.expectSame(failing, "failing")
    expect(twin.expectSame(failing, "failing again").ours).toMatchObject({ status: "refused", err: "AlreadyProcessed" })

    const current = await twin.sign(a!, [getTransferSolInstruction({ from: a!, to: b!.address, lamports: 11n })])
    const stranger = (
      await buildAndSignTransaction({
        feePayer: a!,
        lifetime: { blockhash: "4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM", lastValidBlockHeight: 0n },
        instructions: [getTransferSolInstruction({ from: a!, to: b!.address, lamports: 12n })]
      })
    ).wireBytes
    expect(twin.withBlockhashCheck(() => twin.expectSame(stranger, "unknown blockhash")).ours).toMatchObject({ status: "refused", err: "BlockhashNotFound" })
    // Expired: 151 slots later our ledger has forgotten the blockhash; LiteSVM moves its own on.
    twin.ledger.advanceSlots(151)
    twin.svm.expireBlockhash()
    expect(twin.withBlockhashCheck(() => twin.expectSame(current, "expired blockhash")).ours).toMatchObject({ status: "refused", err: "BlockhashNotFound" })
  })

  it("insufficient funds for the fee, for rent after the fee, an unknown fee payer, a fee payer the System program does not own", async () => {
    const { twin, wallets, fresh } = await createWorld()
    const [a, b] = wallets
    const transfer = [getTransferSolInstruction({ from: a!, to: b!.address, lamports: 1n })]
    const fee = twin.expectSame(await twin.sign(a!, transfer, { computeUnitLimit: 1_000_000, computeUnitPriceMicroLamports: 200n * 1_000_000n * 1_000_000n }), "fee above balance")
    expect(fee.ours).toMatchObject({ status: "refused", err: "InsufficientFundsForFee" })
    // A wallet holding rent + 4,000: the 5,000 fee leaves it below rent exemption.
    const thin = fresh[0]!
    twin.expectSame(await twin.sign(a!, [getTransferSolInstruction({ from: a!, to: thin.address, lamports: rent(0) + 4_000n })]), "fund a thin wallet")
    const forRent = twin.expectSame(await twin.sign(thin, [getTransferSolInstruction({ from: thin, to: b!.address, lamports: 1n })]), "fee leaves payer below rent")
    expect(forRent.ours).toMatchObject({ status: "refused", err: { InsufficientFundsForRent: { account_index: 0 } } })
    const ghost = fresh[1]!
    expect(twin.expectSame(await twin.sign(ghost, [getTransferSolInstruction({ from: ghost, to: b!.address, lamports: 1n })]), "unknown fee payer").ours).toMatchObject({
      status: "refused",
      err: "AccountNotFound"
    })
    // A key whose account the Token program owns (create-account assigned it) cannot pay fees.
    const assigned = fresh[2]!
    twin.expectSame(
      await twin.sign(a!, [getCreateAccountInstruction({ payer: a!, newAccount: assigned, lamports: LAMPORTS_PER_SOL, space: 0, owner: TOKEN_PROGRAM_ID })]),
      "an account owned by the Token program"
    )
    expect(twin.expectSame(await twin.sign(assigned, [getTransferSolInstruction({ from: a!, to: b!.address, lamports: 1n })]), "it pays the fee").ours).toMatchObject({
      status: "refused",
      err: "InvalidAccountForFee"
    })
  })

  it("an instruction for a program that does not exist, or for an account that is not a program", async () => {
    const { twin, wallets, fresh } = await createWorld()
    const [a, b, c] = wallets
    for (const [label, programAddress] of [
      ["no such program", fresh[0]!.address],
      ["a wallet as program", c!.address]
    ] as const) {
      const ix: Instruction = { programAddress, accounts: [], data: new Uint8Array(1) }
      const compared = twin.expectSame(await twin.sign(a!, [getTransferSolInstruction({ from: a!, to: b!.address, lamports: 1n }), ix]), label)
      expect(compared.ours).toMatchObject({ status: "refused", err: "InvalidProgramForExecution" })
    }
  })

  it("instructions with too few accounts", async () => {
    const { twin, wallets, mint } = await createWorld()
    const [a, b] = wallets
    const short = (ix: Instruction, keep: number): Instruction => ({ ...ix, accounts: (ix.accounts ?? []).slice(0, keep) })
    const cases: Array<[string, Instruction, number]> = [
      ["System transfer", getTransferSolInstruction({ from: a!, to: b!.address, lamports: 1n }), 1],
      ["System create-account", getCreateAccountInstruction({ payer: a!, newAccount: b!, lamports: 1n, space: 0, owner: TOKEN_PROGRAM_ID }), 1],
      ["Token transfer", getTokenTransferInstruction({ source: ata(a!.address, mint), destination: ata(b!.address, mint), authority: a!, amount: 1n }), 2],
      ["Token sync-native", getSyncNativeInstruction({ account: ata(a!.address, mint) }), 0],
      ["ATA create", getCreateAssociatedTokenInstruction({ payer: a!, ata: ata(b!.address, mint), owner: b!.address, mint }), 4]
    ]
    for (const [label, ix, keep] of cases) twin.expectSame(await twin.sign(a!, [short(ix, keep)]), label)
  })

  it("writable and signer privilege violations", async () => {
    const { twin, wallets } = await createWorld()
    const [a, b, c] = wallets
    const transfer = getTransferSolInstruction({ from: b!, to: c!.address, lamports: 5n })
    const notSigner = twin.expectSame(await twin.sign(a!, [withRole(transfer, 0, AccountRole.WRITABLE)]), "sender did not sign")
    expect(notSigner.ours.err).toEqual({ InstructionError: [0, "MissingRequiredSignature"] })
    twin.expectSame(await twin.sign(a!, [withRole(transfer, 1, AccountRole.READONLY)]), "credit a read-only account")
    twin.expectSame(await twin.sign(a!, [withRole(transfer, 0, AccountRole.READONLY_SIGNER)]), "debit a read-only signer")
    const nothing = getTransferSolInstruction({ from: b!, to: c!.address, lamports: 0n })
    twin.expectSame(await twin.sign(a!, [withRole(nothing, 1, AccountRole.READONLY)]), "0 lamports to a read-only account")
    twin.expectSame(await twin.sign(a!, [withRole(nothing, 0, AccountRole.READONLY_SIGNER)]), "0 lamports from a read-only signer")
    twin.expectSame(await twin.sign(a!, [nothing]), "0 lamports")
  })

  it("a System transfer from an account another program owns", async () => {
    const { twin, wallets, fresh } = await createWorld()
    const [a, b] = wallets
    const owned = fresh[0]!
    twin.expectSame(
      await twin.sign(a!, [getCreateAccountInstruction({ payer: a!, newAccount: owned, lamports: LAMPORTS_PER_SOL, space: 0, owner: TOKEN_PROGRAM_ID })]),
      "an account the Token program owns"
    )
    for (const lamports of [1n, 0n]) {
      twin.expectSame(await twin.sign(a!, [getTransferSolInstruction({ from: owned, to: b!.address, lamports })]), `transfer ${lamports} from it`)
    }
  })
})

describe("SPL Token and Associated Token Account, against the real SVM", () => {
  it("ATA create and create-idempotent, mint, transfer, transfer-checked, burn, close", async () => {
    const { twin, wallets, mint } = await createWorld()
    const [a, b, c] = wallets
    const ataA = ata(a!.address, mint)
    const ataB = ata(b!.address, mint)
    const create = (owner: typeof b, idempotent: boolean) =>
      getCreateAssociatedTokenInstruction({ payer: a!, ata: ata(owner!.address, mint), owner: owner!.address, mint, idempotent })
    twin.expectSame(await twin.sign(a!, [create(a, false)]), "create ATA")
    twin.expectSame(await twin.sign(a!, [create(b, true)]), "create-idempotent ATA (new)")
    twin.expectSame(await twin.sign(a!, [create(b, true), getTransferSolInstruction({ from: a!, to: b!.address, lamports: 1n })]), "create-idempotent ATA (exists)")
    twin.expectSame(await twin.sign(a!, [create(b, false)]), "create ATA (exists)")
    const wrongSeeds = getCreateAssociatedTokenInstruction({ payer: a!, ata: ata(c!.address, mint), owner: b!.address, mint })
    twin.expectSame(await twin.sign(a!, [wrongSeeds]), "ATA address of another owner")

    twin.expectSame(await twin.sign(a!, [getMintToInstruction({ mint, destination: ataA, authority: a!, amount: 1_000_000_000n })]), "mint")
    twin.expectSame(await twin.sign(b!, [getMintToInstruction({ mint, destination: ataB, authority: b!, amount: 1n })]), "mint, wrong authority")
    twin.expectSame(await twin.sign(a!, [getTokenTransferInstruction({ source: ataA, destination: ataB, authority: a!, amount: 250_000_000n })]), "transfer")
    twin.expectSame(await twin.sign(a!, [getTokenTransferInstruction({ source: ataA, destination: ataB, authority: a!, amount: 10_000_000_000n })]), "transfer more than held")
    twin.expectSame(await twin.sign(b!, [getTokenTransferInstruction({ source: ataA, destination: ataB, authority: b!, amount: 1n })]), "transfer, not the owner")
    twin.expectSame(
      await twin.sign(b!, [getTokenTransferCheckedInstruction({ source: ataB, mint, destination: ataA, authority: b!, amount: 5n, decimals: MINT_DECIMALS })]),
      "transfer-checked"
    )
    twin.expectSame(
      await twin.sign(b!, [getTokenTransferCheckedInstruction({ source: ataB, mint, destination: ataA, authority: b!, amount: 5n, decimals: 9 })]),
      "transfer-checked, wrong decimals"
    )
    twin.expectSame(await twin.sign(a!, [getTokenTransferInstruction({ source: ataA, destination: ataA, authority: a!, amount: 7n })]), "transfer to itself")
    twin.expectSame(await twin.sign(b!, [getBurnInstruction({ account: ataB, mint, authority: b!, amount: 49_999_995n })]), "burn")
    twin.expectSame(await twin.sign(b!, [getCloseAccountInstruction({ account: ataB, destination: b!.address, authority: b! })]), "close with a balance")
    twin.expectSame(await twin.sign(b!, [getBurnInstruction({ account: ataB, mint, authority: b!, amount: 200_000_000n })]), "burn the rest")
    twin.expectSame(await twin.sign(b!, [getCloseAccountInstruction({ account: ataB, destination: c!.address, authority: b! })]), "close")
    twin.expectSame(await twin.sign(a!, [getTokenTransferInstruction({ source: ataA, destination: ataB, authority: a!, amount: 1n })]), "transfer to a closed account")
  })

  it("wrap SOL (transfer + sync-native), spend it, unwrap (close)", async () => {
    const { twin, wallets } = await createWorld()
    const [a, b] = wallets
    const wA = ata(a!.address, WSOL_MINT_ADDRESS)
    const wB = ata(b!.address, WSOL_MINT_ADDRESS)
    twin.expectSame(
      await twin.sign(a!, [
        getCreateAssociatedTokenInstruction({ payer: a!, ata: wA, owner: a!.address, mint: WSOL_MINT_ADDRESS, idempotent: true }),
        getTransferSolInstruction({ from: a!, to: wA, lamports: 3n * LAMPORTS_PER_SOL }),
        getSyncNativeInstruction({ account: wA })
      ]),
      "wrap"
    )
    twin.expectSame(
      await twin.sign(a!, [
        getCreateAssociatedTokenInstruction({ payer: a!, ata: wB, owner: b!.address, mint: WSOL_MINT_ADDRESS }),
        getTokenTransferCheckedInstruction({ source: wA, mint: WSOL_MINT_ADDRESS, destination: wB, authority: a!, amount: LAMPORTS_PER_SOL, decimals: 9 })
      ]),
      "transfer wrapped SOL"
    )
    twin.expectSame(await twin.sign(a!, [getMintToInstruction({ mint: WSOL_MINT_ADDRESS, destination: wA, authority: a!, amount: 1n })]), "mint native")
    twin.expectSame(await twin.sign(b!, [getBurnInstruction({ account: wB, mint: WSOL_MINT_ADDRESS, authority: b!, amount: 1n })]), "burn native")
    twin.expectSame(await twin.sign(a!, [getTransferSolInstruction({ from: a!, to: wA, lamports: 5n }), getSyncNativeInstruction({ account: wA })]), "top up + sync")
    twin.expectSame(await twin.sign(a!, [getSyncNativeInstruction({ account: ata(a!.address, WSOL_MINT_ADDRESS) })], { version: "legacy" }), "sync, nothing new")
    twin.expectSame(
      await twin.sign(b!, [
        getCloseAccountInstruction({ account: wB, destination: b!.address, authority: b! }),
        getBurnInstruction({ account: wB, mint: WSOL_MINT_ADDRESS, authority: b!, amount: 0n })
      ]),
      "unwrap, then use the closed account in the same transaction"
    )
    twin.expectSame(await twin.sign(b!, [getCloseAccountInstruction({ account: wB, destination: b!.address, authority: b! })]), "unwrap")
    twin.expectSame(await twin.sign(a!, [getCloseAccountInstruction({ account: wA, destination: a!.address, authority: a! })]), "unwrap the rest")
  })
})
