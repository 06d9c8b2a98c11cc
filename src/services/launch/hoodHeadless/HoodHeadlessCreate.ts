/**
 * `createCurve` of a headless Hood launch (spec 2.5, 3.1): the pre-chain gates (configuration,
 * rule 8's linked EVM wallet, the owner's delegated embedded EVM wallet), the predicted curve,
 * the signed transaction recorded on the ledger row (`sent`: hash and predicted curve) BEFORE it
 * is broadcast, and its receipt waited for (a timeout keeps the row in flight).
 */
import { Effect, Option } from "effect"
import { type Address, getAddress, type Hash, type Hex } from "viem"
import { curveFactoryAbi } from "../../../chain/hood/abi.generated.js"
import { predictCurveAddress } from "../../../chain/hood/client/HoodClient.js"
import { createCurveCall, curveCreatedIn } from "../../../chain/hood/launch/HeadlessCalls.js"
import { USDG_ADDRESS } from "../../../domain/QuotePairs.js"
import type { HoodLaunchInput } from "../HoodHeadlessLaunch.js"
import type { HoodHeadlessChain } from "./HoodHeadlessChain.js"
import type { HoodHeadlessContext } from "./HoodHeadlessContext.js"
import { hoodLaunchReason } from "../LaunchError.js"
import { FACTORY_URI_MAX_BYTES, fromWalletProvider, type HoodLaunchError, refuse } from "./HoodLaunchError.js"
import { createInput, tokenOfCurve } from "./HoodHeadlessRules.js"

export type HoodHeadlessCreate = ReturnType<typeof makeHoodHeadlessCreate>

export const makeHoodHeadlessCreate = (ctx: HoodHeadlessContext, chain: HoodHeadlessChain) => {
  const { config, o, ledger, provider, wallets, pc } = ctx
  const usdg = config.usdg ?? (USDG_ADDRESS as Address)

  const failDefinitively = (input: HoodLaunchInput, error: HoodLaunchError) =>
    Effect.zipRight(
      ledger.fail(input.attempt, hoodLaunchReason[error.reason], input.also === undefined ? {} : { also: input.also }),
      Effect.fail(error)
    )

  /** Pre-chain gates: configuration, rule 8, the owner's delegated embedded EVM wallet (rule 10). */
  const gates = (input: HoodLaunchInput) =>
    Effect.gen(function* () {
      if (pc === undefined || config.factory === undefined || config.bondingCurveBytecode === undefined) {
        return yield* refuse("hood_unavailable", "Hood launches are not configured on this server (RPC, factory or curve bytecode missing)")
      }
      if (input.request.chain !== "hood" || input.request.dexVersion === null) return yield* refuse("not_hood", "not a Hood launch request")
      if (Buffer.byteLength(input.metadataUri, "utf8") > FACTORY_URI_MAX_BYTES) {
        return yield* refuse("metadata_too_long", `the metadata URI is over ${FACTORY_URI_MAX_BYTES} bytes`)
      }
      const listed = yield* wallets.list(input.principal)
      if (!listed.wallets.some((w) => w.chain === "evm")) {
        return yield* refuse("no_linked_evm_wallet", "a Hood launch needs a linked EVM wallet on the account")
      }
      const embedded = yield* provider.resolveDelegation(input.attempt.accountId, "evm").pipe(
        Effect.catchTag("WalletProviderError", (e) => Effect.fail(fromWalletProvider(e)))
      )
      return { wallet: getAddress(embedded.address), factory: config.factory, bytecode: config.bondingCurveBytecode }
    })

  const predicted = (factory: Address, creator: Address, bytecode: Hex, input: HoodLaunchInput, salt: Hex) =>
    Effect.gen(function* () {
      const [feeSplitter, feeBps] = yield* chain.rpc("factory read", (c) =>
        Promise.all([
          c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "feeSplitter" }),
          c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "curveFeeBps" })
        ])
      )
      return predictCurveAddress({ factory, creator, feeSplitter, feeBps, bondingCurveBytecode: bytecode, input: createInput(input, salt, usdg) })
    })

  /** Signs createCurve, records hash and predicted curve, THEN broadcasts. */
  const sendCreate = (input: HoodLaunchInput, wallet: Address, factory: Address, salt: Hex, curve: Address) =>
    Effect.gen(function* () {
      const signed = yield* chain.signCall(input.attempt.accountId, wallet, createCurveCall(factory, createInput(input, salt, usdg)), "createCurve")
      yield* ledger.sent(input.attempt, { pool: curve, signature: signed.hash }, input.onSend?.(tokenOfCurve(curve)))
      yield* chain.broadcast(signed.raw)
      return signed.hash
    })

  /** The CurveCreated of a curve already on chain (recovery: the receipt of whichever hash created it). */
  const createdLog = (factory: Address, curve: Address) =>
    chain.rpc("CurveCreated lookup", (c) =>
      c.getContractEvents({ address: factory, abi: curveFactoryAbi, eventName: "CurveCreated", args: { curve }, fromBlock: 0n, strict: true })
    ).pipe(Effect.map((logs) => logs[0]))

  /** Waits for createCurve's receipt; a timeout keeps the row in flight. */
  const confirmCreate = (input: HoodLaunchInput, factory: Address, hash: Hash) =>
    Effect.gen(function* () {
      const receipt = yield* chain.awaitReceipt(hash, o.confirmTimeoutMs)
      if (Option.isNone(receipt)) {
        yield* ledger.timedOut(input.attempt)
        return yield* refuse("confirm_timeout", `createCurve ${hash} has no receipt after ${o.confirmTimeoutMs} ms; it may still land`, { txHash: hash })
      }
      const created = receipt.value.status === "success" ? curveCreatedIn(factory, receipt.value) : undefined
      if (created === undefined) return yield* failDefinitively(input, refuse("reverted", `createCurve ${hash} reverted on chain`, { txHash: hash }))
      return created
    })

  return { failDefinitively, gates, predicted, sendCreate, createdLog, confirmCreate }
}
