/**
 * One path for a fresh headless Hood attempt and a resumed one (spec 3.1): a row already
 * `confirming` is read from the chain before anything is sent again (a curve at the predicted
 * address is this attempt's; a known transaction is waited for; only when the chain shows neither
 * is `createCurve` sent again, same salt), then the dev buy, then the ledger's `confirm`.
 */
import { Effect } from "effect"
import { type Address, getAddress, type Hash } from "viem"
import { curveFactoryAbi } from "../../../chain/hood/abi.generated.js"
import { headlessSalt } from "../../../chain/hood/launch/HeadlessCalls.js"
import type { DevBuyReport, HoodLaunchInput } from "../HoodHeadlessLaunch.js"
import { hoodLaunchResult } from "../internal/LaunchRecords.js"
import { LaunchLedgerError } from "../LaunchLedger.js"
import type { StoredResult } from "../LaunchLedgerMachine.js"
import type { HoodHeadlessChain, SentTx } from "./HoodHeadlessChain.js"
import type { HoodHeadlessContext } from "./HoodHeadlessContext.js"
import type { HoodHeadlessCreate } from "./HoodHeadlessCreate.js"
import type { HoodHeadlessDevBuys } from "./HoodHeadlessDevBuys.js"
import { devBuyJson, wantsDevBuy } from "./HoodHeadlessRules.js"
import { refuse } from "./HoodLaunchError.js"

export const makeHoodHeadlessDrive = (ctx: HoodHeadlessContext, chain: HoodHeadlessChain, create: HoodHeadlessCreate, devBuys: HoodHeadlessDevBuys) => {
  const { config, ledger } = ctx
  const { failDefinitively, gates, predicted, sendCreate, createdLog, confirmCreate } = create
  const { devBuy, recoveredDevBuy } = devBuys

  const resultOf = (input: HoodLaunchInput, curve: Address, token: Address, hash: Hash, d: DevBuyReport | null): StoredResult =>
    hoodLaunchResult({ baseUrl: config.baseUrl, explorerUrl: config.explorerUrl }, input.request, { curve, token, txHash: hash }, d === null ? null : devBuyJson(d))

  const finish = (
    input: HoodLaunchInput,
    created: { curve: Address; token: Address; creator: Address; txHash: Hash; blockNumber: bigint },
    d: { report: DevBuyReport; watch: SentTx | undefined; wallet: Address } | null
  ) =>
    Effect.gen(function* () {
      const result = resultOf(input, created.curve, created.token, created.txHash, d?.report ?? null)
      const record = yield* ledger.confirm(input.attempt, result, { mint: created.token, pool: created.curve, signature: created.txHash }, input.also)
      if (d !== null) yield* devBuys.track(input.attempt, d, created.curve)
      return { result, ...created, devBuy: d?.report ?? null, record }
    })

  /**
   * One path for a fresh attempt and a resumed one: a row already `confirming` is read from
   * the chain before anything is sent again.
   */
  const drive = (input: HoodLaunchInput) =>
    Effect.gen(function* () {
      const row = yield* ledger.get(input.attempt)
      if (row === undefined || row.attempt !== input.attempt.attempt || (row.state !== "submitted" && row.state !== "confirming")) {
        const reason = row === undefined ? "not_found" : row.attempt !== input.attempt.attempt ? "stale_attempt" : "not_in_flight"
        return yield* new LaunchLedgerError({ reason, message: `launch ${input.attempt.clientLaunchId} attempt ${input.attempt.attempt}: ${reason}`, retryable: false })
      }
      const g = yield* gates(input).pipe(Effect.catchTag("HoodLaunchError", (e) => (row.state === "submitted" ? failDefinitively(input, e) : Effect.fail(e))))
      const salt = headlessSalt(input.attempt.accountId, input.attempt.clientLaunchId, input.attempt.attempt)
      const curve = yield* predicted(g.factory, g.wallet, g.bytecode, input, salt)
      let hash: Hash
      if (row.state === "confirming" && row.signature !== null) {
        const onChain = yield* chain.rpc("factory read", (c) => c.readContract({ address: g.factory, abi: curveFactoryAbi, functionName: "isCurve", args: [curve] }))
        if (onChain) {
          const log = yield* createdLog(g.factory, curve)
          if (log === undefined) return yield* refuse("chain_read_failed", `curve ${curve} exists but its CurveCreated log was not found`)
          const created = {
            curve,
            token: getAddress(log.args.token),
            creator: getAddress(log.args.creator),
            txHash: log.transactionHash,
            blockNumber: log.blockNumber
          }
          const d = wantsDevBuy(input) ? { report: yield* recoveredDevBuy(input, g.wallet, g.factory, curve), watch: undefined, wallet: g.wallet } : null
          return yield* finish(input, created, d)
        }
        const known = yield* chain.rpc("transaction read", (c) => c.getTransaction({ hash: row.signature as Hash })).pipe(
          Effect.as(true),
          Effect.catchAll(() => Effect.succeed(false))
        )
        // Known to the node (pending or mined): wait for it. Unknown and no curve: it never got out; send again, same salt.
        hash = known ? (row.signature as Hash) : yield* sendCreate(input, g.wallet, g.factory, salt, curve)
      } else {
        // Every failure here comes before the broadcast: nothing can land, so it is definitive.
        hash = yield* sendCreate(input, g.wallet, g.factory, salt, curve).pipe(
          Effect.catchTag("HoodLaunchError", (e) => failDefinitively(input, e))
        )
      }
      const created = yield* confirmCreate(input, g.factory, hash)
      const d = wantsDevBuy(input)
        ? { ...(yield* devBuy(input, g.wallet, g.factory, created.curve, created.blockNumber)), wallet: g.wallet }
        : null
      return yield* finish(input, created, d)
    })

  return { drive }
}
