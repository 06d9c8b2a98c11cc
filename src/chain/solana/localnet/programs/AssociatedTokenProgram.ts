/**
 * The Associated Token Account program at its real id: Create (data empty or [0]) and
 * CreateIdempotent ([1]), accounts [payer (s,w), ata (w), wallet, mint, system program, token
 * program]. The ATA is the PDA of [wallet, token program, mint] under this program (derived with
 * the same derivation as kit's `getProgramDerivedAddress`); a mismatch is InvalidSeeds. The account
 * is created through CPIs (System CreateAccount signed with the PDA seeds, or transfer + allocate +
 * assign when it already holds lamports, then Token InitializeAccount3), as the real program does.
 * CreateIdempotent on an existing ATA checks its owner (InvalidOwner = Custom 0) and succeeds; Create
 * on an account the System program does not own fails with IllegalOwner, as the real program's.
 */
import { ByteWriter } from "../../program/internal/bytes.js"
import { decodeSplTokenAccount, SPL_TOKEN_ACCOUNT_SIZE } from "../../program/accounts/SplTokenAccount.js"
import { findProgramAddressSync, Seeds } from "../../program/Pda.js"
import { ASSOCIATED_TOKEN_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../../program/ProgramIds.js"
import { fail, failCustom, type Program } from "../internal/runtime.js"
import { SystemInstruction } from "./SystemProgram.js"
import { TokenInstruction } from "./TokenProgram.js"
import { accountAt, requireOwner, requireSigner, u64Data } from "./support.js"

export const AssociatedTokenInstruction = { Create: 0, CreateIdempotent: 1 } as const
export const AssociatedTokenError = { InvalidOwner: 0 } as const

export const AssociatedTokenProgram: Program = {
  programId: ASSOCIATED_TOKEN_PROGRAM_ID,
  name: "associated-token-account",
  baseComputeUnits: 3_000,
  process(ctx) {
    const tag = ctx.data.length === 0 ? AssociatedTokenInstruction.Create : ctx.data[0]
    if (ctx.data.length > 1 || (tag !== AssociatedTokenInstruction.Create && tag !== AssociatedTokenInstruction.CreateIdempotent)) {
      fail("InvalidInstructionData")
    }
    const idempotent = tag === AssociatedTokenInstruction.CreateIdempotent
    ctx.log(idempotent ? "CreateIdempotent" : "Create")
    const payer = accountAt(ctx, 0)
    const ata = accountAt(ctx, 1)
    const wallet = accountAt(ctx, 2)
    const mint = accountAt(ctx, 3)
    accountAt(ctx, 4)
    const tokenProgram = accountAt(ctx, 5)
    if (tokenProgram.address !== TOKEN_PROGRAM_ID) fail("IncorrectProgramId")
    const seeds = Seeds.associatedToken(wallet.address, mint.address)
    const { address, bump } = findProgramAddressSync(seeds, ASSOCIATED_TOKEN_PROGRAM_ID)
    if (address !== ata.address) {
      ctx.log("Error: Associated address does not match seed derivation")
      fail("InvalidSeeds")
    }
    if (idempotent && ata.account.owner === TOKEN_PROGRAM_ID) {
      const existing = decodeSplTokenAccount(ata.account.data)
      if (existing === undefined) fail("InvalidAccountData")
      if (existing.owner !== wallet.address) {
        ctx.log("Error: owner does not match")
        failCustom(AssociatedTokenError.InvalidOwner)
      }
      return
    }
    // The real program refuses any account the System program does not own (IllegalOwner); a
    // system account with data fails inside its Allocate CPI (AccountAlreadyInUse).
    if (ata.account.owner !== SYSTEM_PROGRAM_ID) fail("IllegalOwner")
    if (ata.account.data.length > 0) {
      ctx.log(`Allocate: account Address { address: ${ata.address}, base: None } already in use`)
      failCustom(0)
    }
    requireOwner(mint, TOKEN_PROGRAM_ID)
    requireSigner(payer)
    const signer = [[...seeds, Uint8Array.of(bump)]]
    const rent = ctx.rentMinimum(SPL_TOKEN_ACCOUNT_SIZE)
    const system = (data: Uint8Array, accounts: Array<{ address: typeof ata.address; isSigner: boolean; isWritable: boolean }>) =>
      ctx.invoke({ programId: SYSTEM_PROGRAM_ID, accounts, data }, signer)
    if (ata.account.lamports > 0n) {
      const shortfall = rent - ata.account.lamports
      if (shortfall > 0n) {
        system(u64Data(SystemInstruction.Transfer, 4, shortfall), [
          { address: payer.address, isSigner: true, isWritable: true },
          { address: ata.address, isSigner: false, isWritable: true }
        ])
      }
      system(u64Data(SystemInstruction.Allocate, 4, BigInt(SPL_TOKEN_ACCOUNT_SIZE)), [
        { address: ata.address, isSigner: true, isWritable: true }
      ])
      system(new ByteWriter(36).u32(SystemInstruction.Assign).address(TOKEN_PROGRAM_ID).done(), [
        { address: ata.address, isSigner: true, isWritable: true }
      ])
    } else {
      system(
        new ByteWriter(52)
          .u32(SystemInstruction.CreateAccount)
          .u64(rent)
          .u64(BigInt(SPL_TOKEN_ACCOUNT_SIZE))
          .address(TOKEN_PROGRAM_ID)
          .done(),
        [
          { address: payer.address, isSigner: true, isWritable: true },
          { address: ata.address, isSigner: true, isWritable: true }
        ]
      )
    }
    ctx.invoke({
      programId: TOKEN_PROGRAM_ID,
      accounts: [
        { address: ata.address, isSigner: false, isWritable: true },
        { address: mint.address, isSigner: false, isWritable: false }
      ],
      data: new ByteWriter(33).u8(TokenInstruction.InitializeAccount3).address(wallet.address).done()
    })
  }
}
