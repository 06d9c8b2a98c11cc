/**
 * The SPL Memo program (v2) at its real id: it checks that the instruction's data is UTF-8 and that
 * every account it names signed the transaction, logs the memo and changes no account. The rails
 * put a memo on their transactions so two requests with the same content in one blockhash are two
 * transactions (a validator drops a byte-identical second one as already processed).
 * Failures as on a validator: data that is not UTF-8 is `InvalidInstructionData`, an account that
 * did not sign `MissingRequiredSignature`.
 */
import { MEMO_PROGRAM_ADDRESS } from "@solana-program/memo"
import { address } from "@solana/kit"
import { fail, type Program } from "../internal/runtime.js"

const utf8 = new TextDecoder("utf-8", { fatal: true })

export const MemoProgram: Program = {
  programId: address(MEMO_PROGRAM_ADDRESS),
  name: "memo",
  baseComputeUnits: 1_000,
  process(ctx) {
    for (const a of ctx.accounts) if (!a.isSigner) fail("MissingRequiredSignature", `memo: ${a.address} did not sign`)
    let text: string
    try {
      text = utf8.decode(ctx.data)
    } catch {
      fail("InvalidInstructionData", "memo: the data is not UTF-8")
    }
    // Agave's memo program charges by length too; a short memo costs about a unit per byte on top.
    ctx.consumeUnits(ctx.data.length)
    ctx.log(`Memo (len ${ctx.data.length}): ${JSON.stringify(text)}`)
  }
}
