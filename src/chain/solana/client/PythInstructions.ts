/** The localnet Pyth receiver's price post (`program/accounts/PythPriceUpdate.ts`), as a kit instruction. */
import type { Address, Instruction } from "@solana/kit"
import { encodePostPrice, type PostPrice, PYTH_RECEIVER_PROGRAM_ID } from "../program/accounts/PythPriceUpdate.js"
import { type SignerInput, signerMeta, writable } from "./Accounts.js"

export const getLocalnetPostPriceInstruction = (i: { publisher: SignerInput; priceAccount: Address } & PostPrice): Instruction => ({
  programAddress: PYTH_RECEIVER_PROGRAM_ID,
  accounts: [signerMeta(i.publisher, true), writable(i.priceAccount)],
  data: encodePostPrice(i)
})
