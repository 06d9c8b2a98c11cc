import { describe, expect, it } from "vitest"
import { classifySimulationError, transactionErrorText } from "./LaunchFailure.js"
import type { LaunchInstructionRole } from "./LaunchTransaction.js"

const roles: ReadonlyArray<LaunchInstructionRole> = ["create_curve", "create_payer_token_account", "dev_buy", "create_treasury_account", "platform_fee", "compute_budget"]

describe("classifySimulationError", () => {
  it.each([
    ["the fee payer cannot pay the network fee", "InsufficientFundsForFee", "native", "insufficient_owner_balance"],
    ["the fee payer does not exist", "AccountNotFound", "native", "insufficient_owner_balance"],
    ["the fee payer left below its rent reserve", { InsufficientFundsForRent: { account_index: 0 } }, "native", "insufficient_owner_balance"],
    ["another account below its rent reserve", { InsufficientFundsForRent: { account_index: 3 } }, "native", "other"],
    ["System: lamports short in create_curve's CPI (kit's bigints)", { InstructionError: [0n, { Custom: 1n }] }, "native", "insufficient_owner_balance"],
    ["Token: insufficient funds in the dev buy", { InstructionError: [2, { Custom: 1 }] }, "spl", "insufficient_owner_balance"],
    ["Token: insufficient funds in the fee leg", { InstructionError: [4, { Custom: 1 }] }, "spl", "insufficient_owner_balance"],
    ["the named InsufficientFunds", { InstructionError: [2, "InsufficientFunds"] }, "native", "insufficient_owner_balance"],
    ["a svc-curve refusal (SlippageExceeded)", { InstructionError: [2, { Custom: 6000 }] }, "native", "other"],
    ["Custom 1 at a compute-budget instruction", { InstructionError: [5, { Custom: 1 }] }, "native", "other"],
    ["an index past the message", { InstructionError: [9, { Custom: 1 }] }, "native", "other"],
    ["SPL pair: the payer's quote account missing at the buy", { InstructionError: [2, "IncorrectProgramId"] }, "spl", "quote_account_suspect"],
    ["SPL pair: not a token account at the fee leg", { InstructionError: [4, "InvalidAccountData"] }, "spl", "quote_account_suspect"],
    ["SOL pair: the same shape is not about a token account", { InstructionError: [2, "IncorrectProgramId"] }, "native", "other"],
    ["SPL pair: the same shape at create_curve", { InstructionError: [0, "InvalidAccountData"] }, "spl", "other"],
    ["the blockhash", "BlockhashNotFound", "native", "other"],
    ["no error shape at all", 42, "native", "other"]
  ] as const)("%s", (_, err, quoteKind, verdict) => {
    expect(classifySimulationError(err, roles, quoteKind)).toBe(verdict)
  })

  it("writes kit's bigints as JSON numbers", () => {
    expect(transactionErrorText({ InstructionError: [2n, { Custom: 6000n }] })).toBe('{"InstructionError":[2,{"Custom":6000}]}')
  })
})
