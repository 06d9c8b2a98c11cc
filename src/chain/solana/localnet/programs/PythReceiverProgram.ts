/**
 * The Pyth Solana Receiver at its real id, as far as a localnet needs it: it owns the
 * `PriceUpdateV2` accounts written at genesis and accepts one instruction, `localnet_post_price`,
 * signed by the localnet's Pyth publisher (`DevKeys.PYTH_PUBLISHER_ADDRESS`): mainnet's receiver
 * verifies a Wormhole-signed update instead, which no localnet can produce. The post keeps the
 * account's feed id and write authority, stamps the Clock sysvar's time as `publish_time` (never
 * earlier than the previous one) and the slot as `posted_slot`. Any price is accepted, as a
 * publisher's would be: judging it (sign, confidence, age) is the reader's job.
 * Failures: a wrong signer `MissingRequiredSignature`, an account it does not own
 * `IncorrectProgramId`, data it does not know `InvalidInstructionData`.
 */
import { decodePostPrice, decodePriceUpdate, encodePriceUpdate, PYTH_RECEIVER_PROGRAM_ID } from "../../program/accounts/PythPriceUpdate.js"
import { PYTH_PUBLISHER_ADDRESS } from "../DevKeys.js"
import { fail, type Program } from "../internal/runtime.js"
import { accountAt, requireOwner, requireSigner, requireWritable } from "./support.js"

export const PythReceiverProgram: Program = {
  programId: PYTH_RECEIVER_PROGRAM_ID,
  name: "pyth-receiver",
  baseComputeUnits: 5_000,
  process(ctx) {
    const post = decodePostPrice(ctx.data)
    if (post === undefined) fail("InvalidInstructionData", "pyth-receiver: unknown instruction")
    const publisher = accountAt(ctx, 0)
    const target = accountAt(ctx, 1)
    requireSigner(publisher)
    if (publisher.address !== PYTH_PUBLISHER_ADDRESS) fail("MissingRequiredSignature", `pyth-receiver: ${publisher.address} is not the publisher`)
    requireWritable(target)
    requireOwner(target, PYTH_RECEIVER_PROGRAM_ID)
    const current = decodePriceUpdate(target.account.data)
    if (current === undefined) fail("InvalidAccountData", `pyth-receiver: ${target.address} is not a price update account`)
    const publishTimeSec = ctx.unixTimestampSec > current.publishTimeSec ? ctx.unixTimestampSec : current.publishTimeSec
    target.account.data = encodePriceUpdate({
      ...current,
      verificationLevel: { kind: "full" },
      price: post.price,
      conf: post.conf,
      exponent: post.exponent,
      publishTimeSec,
      prevPublishTimeSec: current.publishTimeSec,
      emaPrice: post.price,
      emaConf: post.conf,
      postedSlot: ctx.slot
    })
    ctx.log(`pyth-receiver: posted ${post.price}e${post.exponent} ± ${post.conf}`)
  }
}
