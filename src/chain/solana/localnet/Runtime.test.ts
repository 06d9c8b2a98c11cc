/**
 * The runtime's account rules, against deliberately misbehaving programs: each rule a validator
 * enforces after an invocation must turn the bad write into the validator's error.
 */
import { type Address, generateKeyPairSigner } from "@solana/kit"
import { describe, expect, it } from "vitest"
import { SVC_CURVE_PROGRAM_ID, SYSTEM_PROGRAM_ID } from "../program/ProgramIds.js"
import { type InvokeContext, LogCollector, type MutableAccount, type Program, TransactionRuntime } from "./internal/runtime.js"
import { SystemProgram } from "./programs/SystemProgram.js"
import { u64Data } from "./programs/support.js"

const BAD_PROGRAM = SVC_CURVE_PROGRAM_ID

const run = async (body: (ctx: InvokeContext) => void, ownerOfFirst: Address = BAD_PROGRAM, firstWritable = true) => {
  const [a, b] = [(await generateKeyPairSigner()).address, (await generateKeyPairSigner()).address]
  const accounts = new Map<string, MutableAccount>([
    [a, { lamports: 1_000n, owner: ownerOfFirst, data: new Uint8Array(4), executable: false }],
    [b, { lamports: 1_000n, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false }],
    [SYSTEM_PROGRAM_ID, { lamports: 1n, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: true }]
  ])
  const keyIndex = new Map([[a, 0], [b, 1], [SYSTEM_PROGRAM_ID, 2]] as Array<[string, number]>)
  const program: Program = { programId: BAD_PROGRAM, name: "bad", baseComputeUnits: 100, process: body }
  const programs = new Map<string, Program>([[BAD_PROGRAM, program], [SYSTEM_PROGRAM_ID, SystemProgram]])
  const logs = new LogCollector(10_000)
  const runtime = new TransactionRuntime(programs, accounts, keyIndex, logs, 1n, 1_000)
  const error = runtime.executeTopLevel(BAD_PROGRAM, [
    { address: a, isSigner: false, isWritable: firstWritable },
    { address: b, isSigner: false, isWritable: true },
    { address: SYSTEM_PROGRAM_ID, isSigner: false, isWritable: false }
  ], new Uint8Array(0))
  return { error, logs: logs.messages, accounts, a, b }
}

describe("runtime account rules", () => {
  it("lets an owner debit its account and credit another", async () => {
    const r = await run((ctx) => {
      ctx.accounts[0]!.account.lamports -= 10n
      ctx.accounts[1]!.account.lamports += 10n
      ctx.accounts[0]!.account.data[0] = 7
    })
    expect(r.error).toBeUndefined()
    expect(r.logs.at(-1)).toBe(`Program ${BAD_PROGRAM} success`)
  })

  it("refuses debiting an account the program does not own", async () => {
    const r = await run((ctx) => {
      ctx.accounts[1]!.account.lamports -= 10n
      ctx.accounts[0]!.account.lamports += 10n
    })
    expect(r.error).toBe("ExternalAccountLamportSpend")
  })

  it("refuses writing data of an account the program does not own", async () => {
    expect((await run((ctx) => void (ctx.accounts[0]!.account.data[0] = 1), SYSTEM_PROGRAM_ID)).error).toBe("ExternalAccountDataModified")
  })

  it("refuses touching a read-only account", async () => {
    expect((await run((ctx) => void (ctx.accounts[0]!.account.data[0] = 1), BAD_PROGRAM, false)).error).toBe("ReadonlyDataModified")
  })

  it("refuses creating or destroying lamports", async () => {
    expect((await run((ctx) => void (ctx.accounts[1]!.account.lamports += 1n))).error).toBe("UnbalancedInstruction")
  })

  it("refuses reassigning an account the program does not own", async () => {
    expect((await run((ctx) => void (ctx.accounts[1]!.account.owner = BAD_PROGRAM))).error).toBe("ModifiedProgramId")
  })

  it("refuses a CPI that escalates a signer privilege or signs with foreign seeds", async () => {
    const escalate = await run((ctx) =>
      ctx.invoke({
        programId: SYSTEM_PROGRAM_ID,
        accounts: [
          { address: ctx.accounts[1]!.address, isSigner: true, isWritable: true },
          { address: ctx.accounts[0]!.address, isSigner: false, isWritable: true }
        ],
        data: u64Data(2, 4, 1n)
      })
    )
    expect(escalate.error).toBe("PrivilegeEscalation")
    expect(escalate.accounts.get(escalate.b)!.lamports).toBe(1_000n)
    const seeds = await run((ctx) =>
      ctx.invoke(
        {
          programId: SYSTEM_PROGRAM_ID,
          accounts: [
            { address: ctx.accounts[1]!.address, isSigner: true, isWritable: true },
            { address: ctx.accounts[0]!.address, isSigner: false, isWritable: true }
          ],
          data: u64Data(2, 4, 1n)
        },
        [[new Uint8Array(40)]]
      )
    )
    expect(seeds.error).toBe("InvalidSeeds")
  })

  it("turns a thrown bug into ProgramFailedToComplete, and caps compute units", async () => {
    const panic = await run(() => {
      throw new TypeError("oops")
    })
    expect(panic.error).toBe("ProgramFailedToComplete")
    expect(panic.logs).toContain("Program log: panicked: TypeError: oops")
    expect((await run((ctx) => ctx.consumeUnits(2_000))).error).toBe("ComputationalBudgetExceeded")
  })

  it("truncates logs past the limit", () => {
    const logs = new LogCollector(100)
    for (let i = 0; i < 10; i++) logs.push("x".repeat(30))
    expect(logs.messages).toEqual(["x".repeat(30), "x".repeat(30), "x".repeat(30), "Log truncated"])
  })
})
